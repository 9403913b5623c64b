// Fixed-window rate limiting over all /v1 requests, with the X-RateLimit-* headers on every
// response. The meaning of X-RateLimit-Reset is configurable because vendors differ.

import {RateLimitOptions} from './types';

export interface RateDecision {
  allowed: boolean;
  headers: Record<string, string>;
}

export class RateLimiter {
  private windowStart = Number.NEGATIVE_INFINITY;
  private used = 0;

  constructor(private readonly options: RateLimitOptions) {
    if (!(options.limit >= 1) || !(options.windowMs >= 1)) {
      throw new Error('rateLimit needs limit >= 1 and windowMs >= 1');
    }
  }

  /** Counts one request at `now` (epoch ms). */
  hit(now: number): RateDecision {
    const {limit, windowMs} = this.options;
    // A window opens with the first request after the previous one ended (not aligned to the
    // epoch), so a burst of requests never straddles a boundary by accident.
    if (now >= this.windowStart + windowMs) {
      this.windowStart = now;
      this.used = 0;
    }
    const start = this.windowStart;
    this.used++;
    const resetAt = start + windowMs;
    const allowed = this.used <= limit;
    const waitSeconds = Math.max(1, Math.ceil((resetAt - now) / 1000));
    let reset: string;
    switch (this.options.resetFormat ?? 'seconds') {
      case 'epoch-seconds':
        reset = String(Math.ceil(resetAt / 1000));
        break;
      case 'epoch-ms':
        reset = String(resetAt);
        break;
      default:
        reset = String(waitSeconds);
    }
    const headers: Record<string, string> = {
      'X-RateLimit-Limit': String(limit),
      'X-RateLimit-Remaining': String(Math.max(0, limit - this.used)),
      'X-RateLimit-Reset': reset,
    };
    if (!allowed && this.options.retryAfter) headers['Retry-After'] = String(waitSeconds);
    return {allowed, headers};
  }
}
