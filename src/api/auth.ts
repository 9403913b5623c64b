import {AxiosInstance} from 'axios';
import {AirbyteLogger} from 'faros-airbyte-cdk/lib/logger';
import VError from 'verror';

import {scopeFor} from '../core/config';
import {AuthFailure, failureTypeOf} from '../core/errors';
import {Runtime} from '../core/runtime';
import {apiError, RequestContext, supportIds} from './api-error';
import {TokenSource} from './http';
import {looksLikeHtml} from './problem-details';

interface Credentials {
  authUrl: string;
  apiUrl: string;
  clientId: string;
  clientSecret: string;
  projectId: string;
}

interface CachedToken {
  value: string;
  expiresAt: number;
}

/** The one token request under way, and how many callers wait for it. */
interface Flight {
  promise: Promise<CachedToken>;
  stop: AbortController;
  waiters: number;
}

/** Longest margin before expiry at which a token is renewed; short-lived tokens renew at 80 % of their life. */
const RENEW_MARGIN_MS = 60_000;

/**
 * OAuth 2 client-credentials tokens for the API: fetched once, shared by all requests, renewed
 * shortly before `expires_in` (seconds, per OAuth 2) runs out, and after a 401. There is no refresh
 * token. Every token is handed to `onToken` so that it is redacted from all output. Every failure is
 * an AuthFailure: it concerns the whole sync, not one quest.
 */
export class TokenProvider implements TokenSource {
  readonly origin: string;
  private cached: CachedToken | undefined;
  private inFlight: Flight | undefined;

  constructor(
    private readonly credentials: Credentials,
    private readonly http: AxiosInstance,
    private readonly runtime: Runtime,
    private readonly logger: AirbyteLogger,
    private readonly onToken: (token: string) => void
  ) {
    this.origin = new URL(credentials.apiUrl).origin;
  }

  /**
   * A valid token. A caller whose signal aborts stops waiting at once; the request itself (and its
   * retry waits) is stopped when no caller waits for it any more, as on a SIGTERM.
   */
  async token(signal?: AbortSignal): Promise<string> {
    const now = this.runtime.now();
    if (this.cached && now < this.cached.expiresAt) return this.cached.value;
    signal?.throwIfAborted();
    // One request for everyone waiting: concurrent exports must not stampede the token service.
    if (!this.inFlight) {
      const stop = new AbortController();
      const promise = this.fetchToken(stop.signal).finally(() => {
        if (this.inFlight?.promise === promise) this.inFlight = undefined;
      });
      // Callers that stopped waiting no longer listen for its outcome.
      promise.catch(() => undefined);
      this.inFlight = {promise, stop, waiters: 0};
    }
    const flight = this.inFlight;
    flight.waiters++;
    try {
      this.cached = await untilAborted(flight.promise, signal);
    } finally {
      flight.waiters--;
      if (flight.waiters === 0 && signal?.aborted) flight.stop.abort(signal.reason);
    }
    return this.cached.value;
  }

  invalidate(token: string): void {
    if (this.cached?.value === token) this.cached = undefined;
  }

  private async fetchToken(signal: AbortSignal): Promise<CachedToken> {
    const {clientId, clientSecret, projectId, authUrl} = this.credentials;
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: clientSecret,
      scope: scopeFor(projectId),
    });
    const context: RequestContext = {operation: 'Getting an access token', setting: 'auth_url', baseUrl: authUrl};
    const requestedAt = this.runtime.now();
    let data: unknown;
    try {
      const response = await this.http.post(`${authUrl}/oauth/v2/token`, form.toString(), {
        context,
        signal,
        headers: {'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json'},
      });
      if (response.status !== 200) {
        throw new AuthFailure(
          'transient_error',
          `The token service at auth_url (${authUrl}) answered HTTP ${response.status} instead of a token; check auth_url.`,
          {operation: 'token', status: response.status}
        );
      }
      data =
        typeof response.data === 'string' && !looksLikeHtml(response.data) ? safeJson(response.data) : response.data;
    } catch (err) {
      if (err instanceof AuthFailure) throw err;
      // Stopped: not a failure of the credentials, nothing to report.
      if (signal.aborted) throw signal.reason;
      const cause = apiError(err, context);
      const {status, explanation, traceId, requestId} = VError.info(cause);
      if (status === 400 || status === 401) {
        const ids = supportIds(traceId, requestId);
        throw new AuthFailure(
          'config_error',
          `Questback's token service rejected the API login (HTTP ${status}${explanation ? ` - ${explanation}` : ''}). Check client_id and client_secret, and that project_id (${projectId}) is the project of this API login.${ids ? ` (${ids})` : ''}`,
          {operation: 'token', status, traceId, requestId},
          cause
        );
      }
      throw new AuthFailure(failureTypeOf(cause), cause.message, {operation: 'token', status}, cause);
    }
    const body = data as {access_token?: unknown; expires_in?: unknown} | undefined;
    if (typeof body?.access_token !== 'string' || body.access_token === '') {
      throw new AuthFailure(
        'transient_error',
        `The token service at auth_url (${authUrl}) answered without an access_token; check auth_url, or try again later.`,
        {operation: 'token'}
      );
    }
    this.onToken(body.access_token);
    const lifetimeMs = (typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : 3600) * 1000;
    const margin = Math.min(RENEW_MARGIN_MS, lifetimeMs * 0.2);
    this.logger.debug(`Got an access token valid for ${Math.round(lifetimeMs / 1000)} s`);
    return {value: body.access_token, expiresAt: requestedAt + lifetimeMs - margin};
  }
}

/** The promise, or the signal's reason as soon as it aborts. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, {once: true});
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
