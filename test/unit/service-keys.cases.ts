// Keys the service chooses (problem details' errors, header names) never reach an object's prototype,
// and texts it chooses (a status word, an export id) reach a message only bounded.
import http from 'http';
import {AddressInfo} from 'net';

import {QuestbackApi} from '../../src/api/client';
import {classifyStatus} from '../../src/api/export-status';
import {createHttpClient, retryPolicy} from '../../src/api/http';
import {failureTypeOf} from '../../src/core/errors';
import {QUOTE_MAX} from '../../src/core/outside-text';
import {quietLogger, virtualRuntime} from '../helpers/fake-api';
import {DEFAULT_EXPORT_SETTINGS} from '../helpers/fixtures';
import {invitationRecord} from '../../src/sync/streams/invitations-stream';
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

// Texts the service chooses: quoted bounded, whatever their size or depth.
describe('service texts in messages', () => {
  test('a status word of 4 MB, or nested 100,000 deep, is classified and kept to a quotation', () => {
    const long = classifyStatus('Q'.repeat(4_000_000));
    expect(long).toMatchObject({kind: 'running', known: false});
    expect((long as {status: string}).status.length).toBeLessThanOrEqual(QUOTE_MAX + 1);
    const deep = classifyStatus(JSON.parse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`));
    expect((deep as {status: string}).status).toBe(`${'['.repeat(QUOTE_MAX)}…`);
  });

  test('an exportId longer than a quotation is no usable id: a transient_error that quotes none of it', async () => {
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(201, {'content-type': 'application/json'});
        res.end(JSON.stringify({exportId: 'e'.repeat(1_000_000)}));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const runtime = virtualRuntime();
    const client = createHttpClient({baseURL: url, runtime, logger: quietLogger(), policy: retryPolicy('sync', 2000)});
    const api = new QuestbackApi(client, url, DEFAULT_EXPORT_SETTINGS, 2000, runtime);
    const window = {since: Date.parse('2026-01-01T00:00:00Z'), until: Date.parse('2026-01-02T00:00:00Z')};
    const err = await api.createExport('q', window).catch((e: Error) => e);
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    expect((err as Error).message).toBe('Creating an export for quest q returned no usable exportId.');
    expect(failureTypeOf(err)).toBe('transient_error');
  });
});

test("an invitation's fields named __proto__, constructor or prototype are kept under extra_fields", () => {
  const item = JSON.parse(
    `{"invitationId": "i1", ${KEYS.map((k) => `"${k}": {"polluted": "${k}"}`).join(', ')}}`
  ) as Record<string, unknown>;
  const record = invitationRecord(item, 'q', new Map(), undefined);
  const extra = record.extra_fields as Record<string, unknown>;
  expect(Object.keys(extra)).toEqual(KEYS);
  for (const key of KEYS) expect(Object.getOwnPropertyDescriptor(extra, key)?.value).toEqual({polluted: key});
});
