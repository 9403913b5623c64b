import {parseRateLimit, RateLimitGate, resetToEpochMs, retryAfterMs, throttleDelay} from '../../src/api/rate-limit';

const NOW = Date.parse('2026-11-25T12:00:00.000Z');

describe('rate-limit headers', () => {
  test.each([
    ['seconds to wait', 30, NOW + 30_000],
    ['epoch seconds', NOW / 1000 + 45, NOW + 45_000],
    ['epoch milliseconds', NOW + 12_345, NOW + 12_345],
  ])('X-RateLimit-Reset as %s', (_kind, value, expected) => {
    expect(resetToEpochMs(value, NOW)).toBe(expected);
  });

  test('Retry-After in seconds or as an HTTP date', () => {
    expect(retryAfterMs('7', NOW)).toBe(7000);
    expect(retryAfterMs(new Date(NOW + 9000).toUTCString(), NOW)).toBe(9000);
    expect(retryAfterMs('soon', NOW)).toBeUndefined();
    expect(retryAfterMs(undefined, NOW)).toBeUndefined();
  });

  test('Retry-After wins over the reset header; the wait is capped; a fallback applies without headers', () => {
    expect(throttleDelay({'retry-after': '3', 'x-ratelimit-reset': '60'}, NOW, 1000, 600_000).waitMs).toBe(3000);
    expect(throttleDelay({'x-ratelimit-reset': '60'}, NOW, 1000, 600_000).waitMs).toBe(60_000);
    expect(throttleDelay({'x-ratelimit-reset': String(NOW + 1_800_000)}, NOW, 1000, 300_000).waitMs).toBe(300_000);
    expect(throttleDelay({}, NOW, 1500, 300_000)).toEqual({waitMs: 1500, basis: 'backoff'});
  });

  test('headers are read case-insensitively as axios gives them', () => {
    expect(
      parseRateLimit({'x-ratelimit-limit': '100', 'x-ratelimit-remaining': '4', 'x-ratelimit-reset': '10'}, NOW)
    ).toEqual({limit: 100, remaining: 4, resetAt: NOW + 10_000, absurdReset: undefined});
    expect(parseRateLimit({'X-RateLimit-Remaining': '0'}, NOW).remaining).toBe(0);
  });

  test('the gate holds requests until the reset only when the remaining budget runs low', () => {
    const gate = new RateLimitGate();
    expect(gate.delayMs(NOW)).toBe(0);
    gate.update({'x-ratelimit-limit': '100', 'x-ratelimit-remaining': '50', 'x-ratelimit-reset': '20'}, NOW);
    expect(gate.delayMs(NOW)).toBe(0);
    gate.update({'x-ratelimit-limit': '100', 'x-ratelimit-remaining': '5', 'x-ratelimit-reset': '20'}, NOW);
    expect(gate.delayMs(NOW)).toBe(0);
    gate.consume();
    expect(gate.delayMs(NOW)).toBe(20_000);
    expect(gate.delayMs(NOW + 25_000)).toBe(0);
  });

  test('a reset further ahead than any sane window is set aside and named, never waited for', () => {
    const absurd = throttleDelay(
      {'x-ratelimit-reset': '999999999999', 'x-ratelimit-remaining': '0'},
      NOW,
      2000,
      300_000
    );
    expect(absurd).toEqual({waitMs: 2000, basis: 'backoff', ignored: 'X-RateLimit-Reset 999999999999'});
    const in2065 = String(Date.parse('2065-01-01T00:00:00Z') / 1000);
    expect(throttleDelay({'retry-after': '86400'}, NOW, 2000, 300_000).ignored).toBe('Retry-After 86400');
    const gate = new RateLimitGate();
    expect(
      gate.update({'x-ratelimit-limit': '100', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': in2065}, NOW)
    ).toBe(`X-RateLimit-Reset ${in2065}`);
    expect(gate.delayMs(NOW)).toBe(0);
  });

  test('an answer without rate-limit headers clears an old "Remaining 0"; a reading also expires', () => {
    const gate = new RateLimitGate();
    gate.update({'x-ratelimit-limit': '100', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '600'}, NOW);
    expect(gate.delayMs(NOW)).toBe(300_000);
    gate.update({'content-type': 'application/json'}, NOW + 1000);
    expect(gate.delayMs(NOW + 1000)).toBe(0);
    gate.update({'x-ratelimit-limit': '100', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '3000'}, NOW);
    expect(gate.delayMs(NOW + 10 * 60_000)).toBe(0);
  });
});
