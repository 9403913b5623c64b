import {parseRateLimit, RateLimitGate, resetToEpochMs, retryAfterMs, throttleDelayMs} from '../../src/rate-limit';

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
    expect(throttleDelayMs({'retry-after': '3', 'x-ratelimit-reset': '60'}, NOW, 1000, 600_000)).toBe(3000);
    expect(throttleDelayMs({'x-ratelimit-reset': '60'}, NOW, 1000, 600_000)).toBe(60_000);
    expect(throttleDelayMs({'x-ratelimit-reset': String(NOW + 3_600_000)}, NOW, 1000, 300_000)).toBe(300_000);
    expect(throttleDelayMs({}, NOW, 1500, 300_000)).toBe(1500);
  });

  test('headers are read case-insensitively as axios gives them', () => {
    expect(
      parseRateLimit({'x-ratelimit-limit': '100', 'x-ratelimit-remaining': '4', 'x-ratelimit-reset': '10'}, NOW)
    ).toEqual({limit: 100, remaining: 4, resetAt: NOW + 10_000});
    expect(parseRateLimit({'X-RateLimit-Remaining': '0'}, NOW).remaining).toBe(0);
  });

  test('the gate holds requests until the reset only when the remaining budget runs low', () => {
    const gate = new RateLimitGate(0.05, 60_000);
    expect(gate.delayMs(NOW)).toBe(0);
    gate.update({'x-ratelimit-limit': '100', 'x-ratelimit-remaining': '50', 'x-ratelimit-reset': '20'}, NOW);
    expect(gate.delayMs(NOW)).toBe(0);
    gate.update({'x-ratelimit-limit': '100', 'x-ratelimit-remaining': '5', 'x-ratelimit-reset': '20'}, NOW);
    expect(gate.delayMs(NOW)).toBe(0);
    gate.consume();
    expect(gate.delayMs(NOW)).toBe(20_000);
    expect(gate.delayMs(NOW + 25_000)).toBe(0);
  });
});
