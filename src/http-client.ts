import axios, {AxiosError, AxiosInstance, AxiosResponse, InternalAxiosRequestConfig} from 'axios';
import axiosRetry, {isNetworkError} from 'axios-retry';
import {AirbyteLogger} from 'faros-airbyte-cdk';

import {RequestContext} from './api-error';
import {RateLimitGate, throttleDelayMs} from './rate-limit';
import {Runtime} from './runtime';

/** How hard to retry. Every figure is a bound: nothing waits or retries forever. */
export interface RetryPolicy {
  /** Retries of network errors, timeouts and 5xx answers for one request. */
  maxRetries: number;
  /** Retries after 429 answers for one request. */
  maxThrottleRetries: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** Longest single wait on a 429 or a low remaining budget. */
  throttleCapMs: number;
  /** A throttle wait at least this long is reported as RATE_LIMITED. */
  reportThrottleAfterMs: number;
  requestTimeoutMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxRetries: 6,
  maxThrottleRetries: 20,
  baseDelayMs: 1000,
  maxDelayMs: 60_000,
  throttleCapMs: 5 * 60_000,
  reportThrottleAfterMs: 10_000,
  requestTimeoutMs: 5 * 60_000,
};

/** Supplies bearer tokens; only requests to the API's own origin get one. */
export interface TokenSource {
  origin: string;
  token(): Promise<string>;
  /** The service said 401 to this token: forget it so the next call gets a fresh one. */
  invalidate(token: string): void;
}

export interface HttpClientOptions {
  baseURL: string;
  runtime: Runtime;
  logger: AirbyteLogger;
  policy: RetryPolicy;
  gate?: RateLimitGate;
  tokens?: TokenSource;
  onThrottle?: (ctx: RequestContext | undefined, waitMs: number, resetAt: number) => void;
}

interface Attempts {
  errors: number;
  throttles: number;
  unauthorized: number;
  startedAt: number;
  token?: string;
}

/** Axios config with our own bookkeeping; `context` names the quest and operation for errors and logs. */
export type ApiRequestConfig = InternalAxiosRequestConfig & {context?: RequestContext; attempts?: Attempts};

function describe(config: ApiRequestConfig | undefined): string {
  return `${(config?.method ?? 'get').toUpperCase()} ${config?.url ?? ''}`;
}

function isTimeout(error: AxiosError): boolean {
  return error.code === 'ECONNABORTED' || error.code === 'ETIMEDOUT';
}

/** Exponential backoff with full jitter, so many clients retrying do not move in step. */
export function backoffDelayMs(retry: number, policy: RetryPolicy, random: () => number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, retry - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/**
 * An axios instance with the connector's retry policy: network errors, timeouts and 5xx are retried
 * with backoff (also for POST: a duplicate export job is harmless, a lost one is not); 429 waits as
 * the headers say; a 401 renews the token once. The waits use the injected sleep.
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

  http.interceptors.request.use(async (config: ApiRequestConfig) => {
    config.attempts ??= {errors: 0, throttles: 0, unauthorized: 0, startedAt: runtime.now()};
    const wait = gate?.delayMs(runtime.now()) ?? 0;
    if (wait > 0) {
      logger.info(`Rate limit almost used up: waiting ${(wait / 1000).toFixed(1)} s before ${describe(config)}`);
      if (wait >= policy.reportThrottleAfterMs) opts.onThrottle?.(config.context, wait, runtime.now() + wait);
      await runtime.sleep(wait);
    }
    gate?.consume();
    if (tokens) {
      const target = new URL(http.getUri(config));
      if (target.origin === tokens.origin) {
        const token = await tokens.token();
        config.attempts.token = token;
        config.headers.set('Authorization', `Bearer ${token}`);
      } else {
        config.headers.delete('Authorization');
      }
    }
    return config;
  });

  const observe = (response: AxiosResponse | undefined): void => {
    if (response) gate?.update(response.headers as Record<string, unknown>, runtime.now());
  };
  http.interceptors.response.use(
    (response) => {
      observe(response);
      const config = response.config as ApiRequestConfig;
      logger.debug(
        `${describe(config)} -> ${response.status} (${runtime.now() - (config.attempts?.startedAt ?? runtime.now())} ms)`
      );
      return response;
    },
    (error: AxiosError) => {
      observe(error.response);
      return Promise.reject(error);
    }
  );

  axiosRetry(http, {
    retries: policy.maxRetries + policy.maxThrottleRetries + 1,
    shouldResetTimeout: true,
    retryDelay: () => 0,
    retryCondition: (error) => {
      const config = error.config as ApiRequestConfig | undefined;
      const attempts = config?.attempts;
      if (!attempts) return false;
      const status = error.response?.status;
      if (status === 401 && tokens && attempts.token && attempts.unauthorized === 0) {
        attempts.unauthorized++;
        tokens.invalidate(attempts.token);
        return true;
      }
      if (status === 429) return attempts.throttles++ < policy.maxThrottleRetries;
      const retryable = isNetworkError(error) || isTimeout(error) || (status !== undefined && status >= 500);
      return retryable && attempts.errors++ < policy.maxRetries;
    },
    onRetry: async (retryCount, error, requestConfig) => {
      const config = requestConfig as ApiRequestConfig;
      const status = error.response?.status;
      const reason = status ? `HTTP ${status}` : (error.code ?? 'network error');
      if (status === 401) {
        logger.info(`${describe(config)} -> 401: renewing the access token and retrying once`);
        return;
      }
      let wait: number;
      if (status === 429) {
        const fallback = backoffDelayMs(config.attempts?.throttles ?? retryCount, policy, runtime.random);
        wait = throttleDelayMs(
          error.response?.headers as Record<string, unknown>,
          runtime.now(),
          fallback,
          policy.throttleCapMs
        );
        wait += Math.round(runtime.random() * Math.min(1000, wait * 0.1));
        if (wait >= policy.reportThrottleAfterMs) opts.onThrottle?.(config.context, wait, runtime.now() + wait);
        logger.warn(
          `${describe(config)} was throttled (429): waiting ${(wait / 1000).toFixed(1)} s as the rate-limit headers say`
        );
      } else {
        wait = backoffDelayMs(config.attempts?.errors ?? retryCount, policy, runtime.random);
        logger.warn(
          `${describe(config)} failed (${reason}): retry ${config.attempts?.errors}/${policy.maxRetries} in ${(wait / 1000).toFixed(1)} s`
        );
      }
      await runtime.sleep(wait);
    },
  });
  return http;
}
