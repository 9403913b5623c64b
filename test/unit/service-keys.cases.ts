// Keys the service chooses (problem details' errors, header names) never reach an object's prototype.
import {describeProblem, parseProblemDetails} from '../../src/api/problem-details';
import {hasRateLimitHeaders, parseRateLimit, RateLimitGate} from '../../src/api/rate-limit';

/** The keys that mean something to a plain object; JSON.parse makes them own keys, as a service's body would. */
const KEYS = ['__proto__', 'constructor', 'prototype'];
const untouched = Object.getOwnPropertyNames(Object.prototype).sort();

afterEach(() => {
  expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(untouched);
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
});

test("problem details' validation errors keep a field named __proto__, constructor or prototype", () => {
  const body = `{"title": "Invalid.", "errors": {${KEYS.map((k) => `"${k}": ["${k} is wrong", {"polluted": 1}]`).join(', ')}}}`;
  const problem = parseProblemDetails(body);
  expect(Object.keys(problem?.errors ?? {})).toEqual(KEYS);
  for (const key of KEYS) expect(problem?.errors?.[key]).toEqual([`${key} is wrong`, '[object Object]']);
  expect(describeProblem(problem)).toBe(
    `Invalid. - validation errors: ${KEYS.map((k) => `${k}: ${k} is wrong; [object Object]`).join(' | ')}`
  );
});

test('header names __proto__, constructor and prototype beside rate-limit headers change no reading', () => {
  const headers = JSON.parse(
    `{${KEYS.map((k) => `"${k}": {"polluted": 1}`).join(', ')}, "x-ratelimit-limit": "10", "x-ratelimit-remaining": "0", "x-ratelimit-reset": "30"}`
  ) as Record<string, unknown>;
  expect(hasRateLimitHeaders(headers)).toBe(true);
  expect(parseRateLimit(headers, 1_000)).toEqual({limit: 10, remaining: 0, resetAt: 31_000});
  const gate = new RateLimitGate();
  gate.update(headers, 1_000);
  expect(gate.delayMs(1_000)).toBe(30_000);
});
