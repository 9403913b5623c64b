/** What the service's throttling headers say, interpreted. */
export interface RateLimitInfo {
  limit?: number;
  remaining?: number;
  /** Epoch ms at which the current window resets. */
  resetAt?: number;
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
  if (value >= 1e12) return value;
  if (value >= 1e9) return value * 1000;
  return nowMs + value * 1000;
}

/** Retry-After: delay in seconds, or an HTTP date. Returns ms to wait. */
export function retryAfterMs(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined;
  const seconds = num(value);
  if (seconds !== undefined) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}

export function parseRateLimit(headers: Headers, nowMs: number): RateLimitInfo {
  const reset = num(header(headers, 'x-ratelimit-reset'));
  return {
    limit: num(header(headers, 'x-ratelimit-limit')),
    remaining: num(header(headers, 'x-ratelimit-remaining')),
    resetAt: reset === undefined ? undefined : resetToEpochMs(reset, nowMs),
  };
}

/** How long to wait after a 429: Retry-After wins, then the reset header, then the fallback; capped. */
export function throttleDelayMs(headers: Headers, nowMs: number, fallbackMs: number, capMs: number): number {
  const after = retryAfterMs(header(headers, 'retry-after'), nowMs);
  if (after !== undefined) return Math.min(after, capMs);
  const {resetAt} = parseRateLimit(headers, nowMs);
  const untilReset = resetAt === undefined ? undefined : resetAt - nowMs;
  if (untilReset !== undefined && untilReset > 0) return Math.min(untilReset, capMs);
  return Math.min(fallbackMs, capMs);
}

/**
 * Shared by all requests of a sync: remembers the last throttling headers and tells how long to
 * hold the next request when the remaining budget runs low, so we slow down before a 429.
 */
export class RateLimitGate {
  private info: RateLimitInfo = {};

  constructor(
    private readonly lowWaterFraction = 0.05,
    private readonly capMs = 5 * 60_000
  ) {}

  update(headers: Headers, nowMs: number): void {
    const info = parseRateLimit(headers, nowMs);
    if (info.remaining !== undefined || info.resetAt !== undefined) this.info = info;
  }

  /** Ms to wait before the next request; 0 when there is budget left. */
  delayMs(nowMs: number): number {
    const {limit, remaining, resetAt} = this.info;
    if (remaining === undefined || resetAt === undefined || resetAt <= nowMs) return 0;
    const lowWater = Math.max(1, Math.floor((limit ?? 0) * this.lowWaterFraction));
    if (remaining >= lowWater) return 0;
    return Math.min(resetAt - nowMs, this.capMs);
  }

  /** A request was sent: count it against the budget until fresh headers arrive. */
  consume(): void {
    if (this.info.remaining !== undefined) this.info.remaining = Math.max(0, this.info.remaining - 1);
  }
}
