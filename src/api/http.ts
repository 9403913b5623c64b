import axios, {AxiosError, AxiosInstance, AxiosResponse, isCancel} from 'axios';
import axiosRetry, {isNetworkError} from 'axios-retry';
import {AirbyteLogger} from 'faros-airbyte-cdk/lib/logger';

import {LIMITS} from '../core/limits';
import {Runtime} from '../core/runtime';
import {formatDuration} from '../core/time';
import {isTlsError, Purpose, redactUrl, RequestContext} from './api-error';
import {RateLimitGate, throttleDelay} from './rate-limit';
import {nonBlank} from './problem-details';

interface Attempts {
  errors: number;
  throttles: number;
  throttledMs: number;
  unauthorized: number;
  startedAt: number;
  token?: string;
}

declare module 'axios' {
  interface AxiosRequestConfig {
    /** Names the quest and operation, for errors and logs. */
    context?: RequestContext;
    /** The retry bookkeeping of this request. */
    attempts?: Attempts;
    /** What the request serves, set by the client from its policy: a failure's type depends on it. */
    purpose?: Purpose;
    /** A 2xx answer must carry a JSON object: one that does not (empty, cut, HTML) is retried as transient. */
    expectJson?: boolean;
  }
}

/** The code of a 2xx answer whose body is not the JSON object its request expects (see expectJson). */
export const UNREADABLE_ANSWER = 'EQBUNREADABLE';

/** The JSON value a body holds (parsed already, or as text); undefined for a text that is not JSON. */
export function asJsonValue(data: unknown): unknown {
  if (typeof data !== 'string') return data;
  try {
    return JSON.parse(data);
  } catch {
    return undefined;
  }
}

/** The JSON object a body holds (parsed already, or as text), if it holds one. */
export function asJsonObject(data: unknown): Record<string, unknown> | undefined {
  const value = asJsonValue(data);
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** How hard to retry one request. Every figure is a bound: nothing waits or retries forever. */
export interface RetryPolicy {
  /** Retries of network errors, timeouts and 5xx answers. */
  retries: number;
  /** Retries after 429 answers, and the time all their waits may take. */
  throttleRetries: number;
  throttleTotalMs: number;
  /** Longest wait for an answer (the status line and headers). */
  requestTimeoutMs: number;
  /**
   * A check fails fast (refused connections and unknown hosts are not retried: a person waits) and
   * names the setting at fault as a config_error; a sync retries them and calls them transient.
   */
  purpose: Purpose;
}

/** The policy of a sync (patient: a sync runs unattended) or of a check (a person waits for it). */
export function retryPolicy(mode: 'sync' | 'check', requestTimeoutMs: number): RetryPolicy {
  return mode === 'sync'
    ? {
        retries: LIMITS.http.retries,
        throttleRetries: LIMITS.http.throttleRetries,
        throttleTotalMs: LIMITS.http.throttleTotalMaxMs,
        requestTimeoutMs,
        purpose: 'sync',
      }
    : {
        retries: LIMITS.check.retries,
        throttleRetries: 2,
        throttleTotalMs: LIMITS.check.deadlineMs / 2,
        requestTimeoutMs,
        purpose: 'check',
      };
}

/** Supplies bearer tokens; only requests to the API's own origin get one. */
export interface TokenSource {
  origin: string;
  /** A token; the wait for it ends at once when the signal aborts. */
  token(signal?: AbortSignal): Promise<string>;
  /** The service said 401 to this token: forget it so the next call gets a fresh one. */
  invalidate(token: string): void;
}

export type ThrottleListener = (ctx: RequestContext | undefined, waitMs: number, resetAt: number) => void;

interface HttpClientOptions {
  baseURL: string;
  runtime: Runtime;
  logger: AirbyteLogger;
  policy: RetryPolicy;
  gate?: RateLimitGate;
  tokens?: TokenSource;
  onThrottle?: ThrottleListener;
  /** Sees every answer as it arrives, before any retry (the probe records what the service sent). */
  onAnswer?: (response: AxiosResponse) => void;
}

/**
 * Answers that may heal on their own when a GET is asked again: a timeout, and a conflict or "too
 * early" (a download asked while the file is still being moved into place, say). A POST is not
 * retried on them: a 409 on create is the export job's to wait out.
 */
const TRANSIENT_GET_STATUSES = new Set([408, 409, 425]);

/** Network errors that say the address is wrong or down; a check does not wait for them to heal. */
const ADDRESS_ERRORS = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

function describe(config: {method?: string; url?: string} | undefined): string {
  return `${(config?.method ?? 'get').toUpperCase()} ${redactUrl(config?.url)}`;
}

function isTimeout(error: AxiosError): boolean {
  return error.code === 'ECONNABORTED' || error.code === 'ETIMEDOUT';
}

/** Exponential backoff with full jitter, so many clients retrying do not move in step. */
function backoffDelayMs(retry: number, random: () => number): number {
  const ceiling = Math.min(LIMITS.http.backoffMaxMs, LIMITS.http.backoffBaseMs * 2 ** Math.max(0, retry - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/**
 * An axios instance with the connector's retry policy: network errors, timeouts and 5xx are retried
 * with backoff (also for POST: a duplicate export job is harmless, a lost one is not); 429 waits as
 * the headers say, within bounds; a 401 renews the token once. Redirects are not followed: the
 * callers decide what a 3xx means. Every wait is logged when it starts, with the injected sleep.
 */
export function createHttpClient(opts: HttpClientOptions): AxiosInstance {
  const {runtime, logger, policy, gate, tokens} = opts;
  const http = axios.create({
    baseURL: opts.baseURL,
    timeout: policy.requestTimeoutMs,
    maxRedirects: 0,
    validateStatus: (status) => status >= 200 && status < 400,
    // The service may answer JSON or problem+json; parse it ourselves so an HTML body stays text.
    transitional: {silentJSONParsing: true, forcedJSONParsing: true, clarifyTimeoutError: true},
  });
  const ignoredResets = new Set<string>();
  const reportIgnored = (value: string | undefined): void => {
    if (value === undefined || ignoredResets.has(value)) return;
    ignoredResets.add(value);
    logger.warn(
      `The service sent ${value}, which is not a sane reset time (more than ${formatDuration(LIMITS.http.resetHorizonMs)} ahead); ignoring it and backing off instead.`
    );
  };

  http.interceptors.request.use(async (config) => {
    config.attempts ??= {errors: 0, throttles: 0, throttledMs: 0, unauthorized: 0, startedAt: runtime.now()};
    config.purpose = policy.purpose;
    const wait = gate?.delayMs(runtime.now()) ?? 0;
    if (wait > 0) {
      logger.info(`Rate limit almost used up: waiting ${formatDuration(wait)} before ${describe(config)}`);
      if (wait >= LIMITS.http.reportThrottleAfterMs) opts.onThrottle?.(config.context, wait, runtime.now() + wait);
      await runtime.sleep(wait, config.signal as AbortSignal | undefined);
    }
    gate?.consume();
    if (tokens) {
      const target = new URL(http.getUri(config));
      if (target.origin === tokens.origin) {
        const token = await tokens.token(config.signal as AbortSignal | undefined);
        config.attempts.token = token;
        config.headers.set('Authorization', `Bearer ${token}`);
      } else {
        config.headers.delete('Authorization');
      }
    }
    return config;
  });

  const observe = (response: AxiosResponse | undefined): void => {
    if (response) opts.onAnswer?.(response);
    if (response && gate) reportIgnored(gate.update(response.headers as Record<string, unknown>, runtime.now()));
  };
  http.interceptors.response.use(
    (response) => {
      observe(response);
      const started = response.config.attempts?.startedAt ?? runtime.now();
      logger.debug(`${describe(response.config)} -> ${response.status} (${runtime.now() - started} ms)`);
      if (response.config.expectJson && response.status < 300 && !asJsonObject(response.data)) {
        // An empty or unreadable answer is a blip of the service or a gateway: retried as a 5xx is.
        const what = nonBlank(response.data) ? 'an unreadable body' : 'an empty body';
        return Promise.reject(
          new AxiosError(
            `HTTP ${response.status} with ${what}`,
            UNREADABLE_ANSWER,
            response.config,
            response.request,
            response
          )
        );
      }
      return response;
    },
    (error: AxiosError) => {
      observe(error.response);
      return Promise.reject(error);
    }
  );

  axiosRetry(http, {
    retries: policy.retries + policy.throttleRetries + 1,
    shouldResetTimeout: true,
    retryDelay: () => 0,
    retryCondition: (error) => {
      const attempts = error.config?.attempts;
      if (!attempts || isCancel(error) || error.config?.signal?.aborted) return false;
      const status = error.response?.status;
      if (status === 401 && tokens && attempts.token && attempts.unauthorized === 0) {
        attempts.unauthorized++;
        tokens.invalidate(attempts.token);
        return true;
      }
      if (status === 429)
        return attempts.throttles < policy.throttleRetries && attempts.throttledMs < policy.throttleTotalMs;
      if (isTlsError(error.code)) return false;
      if (policy.purpose === 'check' && error.code !== undefined && ADDRESS_ERRORS.has(error.code)) return false;
      const transientGet =
        status !== undefined && TRANSIENT_GET_STATUSES.has(status) && (error.config?.method ?? 'get') === 'get';
      const retryable =
        isNetworkError(error) ||
        isTimeout(error) ||
        transientGet ||
        error.code === UNREADABLE_ANSWER ||
        (status !== undefined && status >= 500);
      return retryable && attempts.errors++ < policy.retries;
    },
    onRetry: async (retryCount, error, config) => {
      const status = error.response?.status;
      const attempts = config.attempts as Attempts;
      if (status === 401) {
        logger.info(`${describe(config)} -> 401: renewing the access token and retrying once`);
        return;
      }
      let wait: number;
      if (status === 429) {
        attempts.throttles++;
        const fallback = backoffDelayMs(attempts.throttles, runtime.random);
        const delay = throttleDelay(
          error.response?.headers as Record<string, unknown>,
          runtime.now(),
          fallback,
          LIMITS.http.throttleWaitMaxMs
        );
        reportIgnored(delay.ignored);
        wait = Math.min(delay.waitMs, Math.max(0, policy.throttleTotalMs - attempts.throttledMs));
        wait += Math.round(runtime.random() * Math.min(1000, wait * 0.1));
        attempts.throttledMs += wait;
        if (wait >= LIMITS.http.reportThrottleAfterMs) opts.onThrottle?.(config.context, wait, runtime.now() + wait);
        logger.warn(
          `${describe(config)} was throttled (429): waiting ${formatDuration(wait)} (${delay.basis === 'backoff' ? 'backoff' : `as ${delay.basis} says`}; wait ${attempts.throttles} of at most ${policy.throttleRetries})`
        );
      } else {
        wait = backoffDelayMs(attempts.errors || retryCount, runtime.random);
        const reason =
          error.code === UNREADABLE_ANSWER
            ? error.message
            : status
              ? `HTTP ${status}`
              : (error.code ?? 'network error');
        logger.warn(
          `${describe(config)} failed (${reason}): retry ${attempts.errors}/${policy.retries} in ${formatDuration(wait)}`
        );
      }
      await runtime.sleep(wait, config.signal as AbortSignal | undefined);
    },
  });
  return http;
}
