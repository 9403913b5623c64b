import {AirbyteLogLevel} from 'faros-airbyte-cdk/lib/protocol';
import http from 'http';
import {AddressInfo} from 'net';
import {PassThrough} from 'stream';

import {TokenProvider} from '../../src/api/auth';
import {createHttpClient, retryPolicy} from '../../src/api/http';
import {RateLimitGate} from '../../src/api/rate-limit';
import {Runtime} from '../../src/core/runtime';
import {ConnectorLogger} from '../../src/protocol/logger';
import {MessageWriter} from '../../src/protocol/output';

const DEFAULT_RETRY_POLICY = retryPolicy('sync', 120_000);

interface Seen {
  method: string;
  url: string;
  authorization?: string;
}

/** A loopback server answering from a script, recording what it was sent. */
async function scriptedServer(
  script: (req: http.IncomingMessage, n: number) => {status: number; headers?: Record<string, string>; body?: string}
) {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    seen.push({method: req.method ?? '', url: req.url ?? '', authorization: req.headers.authorization});
    req.resume();
    req.on('end', () => {
      const answer = script(req, seen.length);
      res.writeHead(answer.status, {'content-type': 'application/json', ...(answer.headers ?? {})});
      res.end(answer.body ?? '{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {url, seen, close: () => new Promise<void>((resolve) => server.close(() => resolve()))};
}

/** A clock that only moves when the code sleeps: waits are recorded, not spent. */
function fakeRuntime(): Runtime & {sleeps: number[]; clock: number} {
  const rt = {
    clock: Date.parse('2026-11-25T12:00:00.000Z'),
    sleeps: [] as number[],
    now: () => rt.clock,
    sleep: async (ms: number) => {
      rt.sleeps.push(ms);
      rt.clock += ms;
    },
    random: () => 0.5,
  };
  return rt;
}

function quietLogger(): ConnectorLogger {
  return new ConnectorLogger(new MessageWriter(new PassThrough()), AirbyteLogLevel.ERROR);
}

describe('the HTTP client and its retry policy', () => {
  test('429: waits as Retry-After says, reports a long wait, then succeeds', async () => {
    const server = await scriptedServer((_req, n) =>
      n === 1 ? {status: 429, headers: {'retry-after': '30'}} : {status: 200, body: '{"ok":true}'}
    );
    const rt = fakeRuntime();
    const throttles: number[] = [];
    const client = createHttpClient({
      baseURL: server.url,
      runtime: rt,
      logger: quietLogger(),
      policy: DEFAULT_RETRY_POLICY,
      onThrottle: (_ctx, wait) => throttles.push(wait),
    });
    const res = await client.get('/v1/x');
    expect(res.data).toEqual({ok: true});
    expect(rt.sleeps[0]).toBeGreaterThanOrEqual(30_000);
    expect(rt.sleeps[0]).toBeLessThanOrEqual(31_000);
    expect(throttles).toHaveLength(1);
    await server.close();
  });

  test('429 without Retry-After: X-RateLimit-Reset as epoch milliseconds is honoured', async () => {
    const rt = fakeRuntime();
    const server = await scriptedServer((_req, n) =>
      n === 1
        ? {status: 429, headers: {'x-ratelimit-reset': String(rt.clock + 4000), 'x-ratelimit-remaining': '0'}}
        : {status: 200}
    );
    const client = createHttpClient({
      baseURL: server.url,
      runtime: rt,
      logger: quietLogger(),
      policy: DEFAULT_RETRY_POLICY,
      gate: new RateLimitGate(),
    });
    await client.get('/v1/x');
    expect(rt.sleeps[0]).toBeGreaterThanOrEqual(4000);
    expect(rt.sleeps[0]).toBeLessThan(5000);
    await server.close();
  });

  test('a POST that meets 5xx is retried with growing backoff, and gives up after the bound', async () => {
    const server = await scriptedServer(() => ({
      status: 503,
      headers: {'content-type': 'text/html'},
      body: '<html><title>503</title></html>',
    }));
    const rt = fakeRuntime();
    const client = createHttpClient({
      baseURL: server.url,
      runtime: rt,
      logger: quietLogger(),
      policy: {...DEFAULT_RETRY_POLICY, retries: 3},
    });
    await expect(client.post('/v1/quests/q/exports', {})).rejects.toMatchObject({response: {status: 503}});
    expect(server.seen.filter((s) => s.method === 'POST')).toHaveLength(4);
    expect(rt.sleeps).toEqual([750, 1500, 3000]);
    await server.close();
  });

  test('a 4xx other than 401 and 429 is not retried', async () => {
    const server = await scriptedServer(() => ({status: 403, body: '{"detail":"no"}'}));
    const client = createHttpClient({
      baseURL: server.url,
      runtime: fakeRuntime(),
      logger: quietLogger(),
      policy: DEFAULT_RETRY_POLICY,
    });
    await expect(client.get('/v1/x')).rejects.toMatchObject({response: {status: 403}});
    expect(server.seen).toHaveLength(1);
    await server.close();
  });

  test('tokens: cached, renewed before expires_in, renewed once on a 401, and sent only to the API origin', async () => {
    let issued = 0;
    const auth = await scriptedServer(() => ({
      status: 200,
      body: JSON.stringify({access_token: `token-number-${++issued}`, token_type: 'Bearer', expires_in: 10}),
    }));
    let rejectNext = false;
    const api = await scriptedServer(() => {
      if (rejectNext) {
        rejectNext = false;
        return {status: 401, body: '{"detail":"expired"}'};
      }
      return {status: 200};
    });
    const other = await scriptedServer(() => ({status: 200}));
    const rt = fakeRuntime();
    const logger = quietLogger();
    const authHttp = createHttpClient({baseURL: auth.url, runtime: rt, logger, policy: DEFAULT_RETRY_POLICY});
    const registered: string[] = [];
    const tokens = new TokenProvider(
      {authUrl: auth.url, apiUrl: api.url, clientId: 'id', clientSecret: 'secret-value', projectId: '1'},
      authHttp,
      rt,
      logger,
      (t) => registered.push(t)
    );
    const client = createHttpClient({baseURL: api.url, runtime: rt, logger, policy: DEFAULT_RETRY_POLICY, tokens});

    await client.get('/v1/a');
    await client.get('/v1/b');
    expect(issued).toBe(1);
    rt.clock += 8_500; // past 80 % of a 10 s lifetime
    await client.get('/v1/c');
    expect(issued).toBe(2);
    rejectNext = true;
    await client.get('/v1/d', {context: {operation: 'test'}});
    expect(issued).toBe(3);
    expect(api.seen.map((s) => s.authorization)).toEqual([
      'Bearer token-number-1',
      'Bearer token-number-1',
      'Bearer token-number-2',
      'Bearer token-number-2',
      'Bearer token-number-3',
    ]);
    await client.get(`${other.url}/elsewhere`);
    expect(other.seen[0].authorization).toBeUndefined();
    expect(registered).toEqual(['token-number-1', 'token-number-2', 'token-number-3']);
    await Promise.all([auth.close(), api.close(), other.close()]);
  });

  test('a second 401 in a row is not retried again', async () => {
    const auth = await scriptedServer(() => ({
      status: 200,
      body: JSON.stringify({access_token: 'tok-abcdef', expires_in: 3600}),
    }));
    const api = await scriptedServer(() => ({status: 401, body: '{"detail":"no"}'}));
    const rt = fakeRuntime();
    const logger = quietLogger();
    const tokens = new TokenProvider(
      {authUrl: auth.url, apiUrl: api.url, clientId: 'id', clientSecret: 's', projectId: '1'},
      createHttpClient({baseURL: auth.url, runtime: rt, logger, policy: DEFAULT_RETRY_POLICY}),
      rt,
      logger,
      () => undefined
    );
    const client = createHttpClient({baseURL: api.url, runtime: rt, logger, policy: DEFAULT_RETRY_POLICY, tokens});
    await expect(client.get('/v1/x')).rejects.toMatchObject({response: {status: 401}});
    expect(api.seen).toHaveLength(2);
    await Promise.all([auth.close(), api.close()]);
  });

  test('a check does not retry a refused connection: it cannot heal in seconds', async () => {
    const server = await scriptedServer(() => ({status: 200}));
    await server.close();
    const rt = fakeRuntime();
    const client = createHttpClient({
      baseURL: server.url,
      runtime: rt,
      logger: quietLogger(),
      policy: retryPolicy('check', 1000),
    });
    await expect(client.get('/v1/x')).rejects.toMatchObject({code: 'ECONNREFUSED'});
    expect(rt.sleeps).toEqual([]);
  });

  test('429 without end: the waits of one request stay within their total bound', async () => {
    const server = await scriptedServer(() => ({status: 429, headers: {'retry-after': '600'}}));
    const rt = fakeRuntime();
    const client = createHttpClient({
      baseURL: server.url,
      runtime: rt,
      logger: quietLogger(),
      policy: DEFAULT_RETRY_POLICY,
    });
    await expect(client.get('/v1/x')).rejects.toMatchObject({response: {status: 429}});
    const total = rt.sleeps.reduce((a, b) => a + b, 0);
    expect(rt.sleeps.every((ms) => ms <= 5 * 60_000 + 1000)).toBe(true);
    expect(total).toBeLessThanOrEqual(15 * 60_000 + 3000);
    await server.close();
  });
});
