import {LIMITS} from '../core/limits';

/** What the service's throttling headers say, interpreted. */
interface RateLimitInfo {
  limit?: number;
  remaining?: number;
  /** Epoch ms at which the current window resets, when the reading is sane. */
  resetAt?: number;
  /** The raw X-RateLimit-Reset when it pointed further ahead than any sane window (then resetAt is undefined). */
  absurdReset?: string;
}

type Headers = Record<string, unknown>;

/** Header lookup by lower-case name, whatever case the headers object uses. */
function header(headers: Headers, name: string): string | undefined {
  let value = headers[name];
  if (value === undefined) {
    const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
    value = key === undefined ? undefined : headers[key];
  }
  if (Array.isArray(value)) return value.length ? String(value[0]) : undefined;
  return value === undefined || value === null ? undefined : String(value);
}

function num(value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const n = Number(value);
  return Number.isFinite(n) ? n : undefined;
}

/**
 * X-RateLimit-Reset is not specified: vendors send seconds to wait, an epoch in seconds or in
 * milliseconds. Tell them apart by magnitude (1e9 s is 2001; no window is 31 years long).
 */
export function resetToEpochMs(value: number, nowMs: number): number {
  const meaning = resetMeaning(value);
  if (meaning === 'epoch-ms') return value;
  if (meaning === 'epoch-seconds') return value * 1000;
  return nowMs + value * 1000;
}

/** What an X-RateLimit-Reset of this size is taken to count. */
export function resetMeaning(value: number): 'epoch-ms' | 'epoch-seconds' | 'seconds' {
  if (value >= 1e12) return 'epoch-ms';
  if (value >= 1e9) return 'epoch-seconds';
  return 'seconds';
}

/** Retry-After: delay in seconds, or an HTTP date. Returns ms to wait. */
export function retryAfterMs(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined;
  const seconds = num(value);
  if (seconds !== undefined) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}

export function hasRateLimitHeaders(headers: Headers): boolean {
  return ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after'].some(
    (name) => header(headers, name) !== undefined
  );
}

/** The headers read, with a reset further ahead than LIMITS.http.resetHorizonMs set aside as absurd. */
export function parseRateLimit(headers: Headers, nowMs: number): RateLimitInfo {
  const raw = header(headers, 'x-ratelimit-reset');
  const reset = num(raw);
  const resetAt = reset === undefined ? undefined : resetToEpochMs(reset, nowMs);
  const sane = resetAt !== undefined && resetAt - nowMs <= LIMITS.http.resetHorizonMs;
  return {
    limit: num(header(headers, 'x-ratelimit-limit')),
    remaining: num(header(headers, 'x-ratelimit-remaining')),
    resetAt: sane ? resetAt : undefined,
    absurdReset: resetAt !== undefined && !sane ? raw : undefined,
  };
}

interface ThrottleDelay {
  waitMs: number;
  /** Why this long: the header it came from, or the fallback backoff. */
  basis: 'Retry-After' | 'X-RateLimit-Reset' | 'backoff';
  /** A header value that was not believed (further ahead than any sane window). */
  ignored?: string;
}

/**
 * How long to wait after a 429: Retry-After wins, then the reset header, then the fallback; capped.
 * A value further ahead than any sane window is ignored (and named, so that it is logged).
 */
export function throttleDelay(headers: Headers, nowMs: number, fallbackMs: number, capMs: number): ThrottleDelay {
  const rawAfter = header(headers, 'retry-after');
  const after = retryAfterMs(rawAfter, nowMs);
  if (after !== undefined && after <= LIMITS.http.resetHorizonMs) {
    return {waitMs: Math.min(after, capMs), basis: 'Retry-After'};
  }
  const ignoredAfter = after !== undefined ? `Retry-After ${rawAfter}` : undefined;
  const {resetAt, absurdReset} = parseRateLimit(headers, nowMs);
  const ignored = absurdReset !== undefined ? `X-RateLimit-Reset ${absurdReset}` : ignoredAfter;
  if (resetAt !== undefined && resetAt > nowMs) {
    return {waitMs: Math.min(resetAt - nowMs, capMs), basis: 'X-RateLimit-Reset', ignored};
  }
  return {waitMs: Math.min(fallbackMs, capMs), basis: 'backoff', ignored};
}

/**
 * Shared by all requests of a sync: remembers the last throttling headers and tells how long to
 * hold the next request when the remaining budget runs low, so we slow down before a 429. A
 * reading lasts until its reset, at most LIMITS.rateLimitGate.readingMaxAgeMs; an answer without
 * rate-limit headers clears it, and an absurd reset never closes the gate.
 */
export class RateLimitGate {
  private info: RateLimitInfo = {};
  private readAt = 0;

  /** Reads the headers of an answer; returns the absurd reset value it set aside, if any. */
  update(headers: Headers, nowMs: number): string | undefined {
    if (!hasRateLimitHeaders(headers)) {
      this.info = {};
      return undefined;
    }
    this.info = parseRateLimit(headers, nowMs);
    this.readAt = nowMs;
    return this.info.absurdReset === undefined ? undefined : `X-RateLimit-Reset ${this.info.absurdReset}`;
  }

  /** Ms to wait before the next request; 0 when there is budget left or nothing sane is known. */
  delayMs(nowMs: number): number {
    const {limit, remaining, resetAt} = this.info;
    if (remaining === undefined || resetAt === undefined || resetAt <= nowMs) return 0;
    if (nowMs - this.readAt > LIMITS.rateLimitGate.readingMaxAgeMs) return 0;
    const lowWater = Math.max(1, Math.floor((limit ?? 0) * LIMITS.rateLimitGate.lowWaterFraction));
    if (remaining >= lowWater) return 0;
    return Math.min(resetAt - nowMs, LIMITS.http.throttleWaitMaxMs);
  }

  /** A request was sent: count it against the budget until fresh headers arrive. */
  consume(): void {
    if (this.info.remaining !== undefined) this.info.remaining = Math.max(0, this.info.remaining - 1);
  }
}
