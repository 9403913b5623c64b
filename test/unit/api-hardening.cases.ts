// The API layer against wrong answers (issue 19): unknown terminal statuses, a 200 with a Location,
// a stop during the token's retries, address errors in a sync and in a check, a 409 on a download,
// a clock behind, a trickling body, a Content-Length shorter than the body, credentials in URLs.

import http from 'http';
import net, {AddressInfo} from 'net';
import {PassThrough} from 'stream';
import VError from 'verror';

import {TokenProvider} from '../../src/api/auth';
import {QuestbackApi} from '../../src/api/client';
import {Download, DownloadCutOff} from '../../src/api/download';
import {classifyStatus} from '../../src/api/export-status';
import {createHttpClient, retryPolicy} from '../../src/api/http';
import {parseConfig} from '../../src/core/config';
import {failureTypeOf} from '../../src/core/errors';
import {Runtime, systemRuntime} from '../../src/core/runtime';
import {secretForms} from '../../src/core/secrets';
import {TestClock} from '../helpers/clock';
import {quietLogger, virtualRuntime} from '../helpers/fake-api';
import {DEFAULT_EXPORT_SETTINGS} from '../helpers/fixtures';

type Answer = {status: number; headers?: Record<string, string>; body?: string};

/** A loopback server answering from a script, counting the requests of each path. */
async function server(script: (path: string, n: number, method: string) => Answer) {
  const counts = new Map<string, number>();
  const s = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    const n = (counts.get(path) ?? 0) + 1;
    counts.set(path, n);
    req.resume();
    req.on('end', () => {
      const answer = script(path, n, req.method ?? 'GET');
      res.writeHead(answer.status, {'content-type': 'application/json', ...(answer.headers ?? {})});
      res.end(answer.body ?? '');
    });
  });
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  return {
    url,
    counts,
    close: () => {
      s.closeAllConnections();
      return new Promise<void>((resolve) => s.close(() => resolve()));
    },
  };
}

function api(url: string, mode: 'sync' | 'check' = 'sync', runtime: Runtime = virtualRuntime()): QuestbackApi {
  const client = createHttpClient({baseURL: url, runtime, logger: quietLogger(), policy: retryPolicy(mode, 2000)});
  // A download's idle timeout on the real clock: the virtual runtime's waits end at once.
  return new QuestbackApi(client, url, DEFAULT_EXPORT_SETTINGS, 2000, systemRuntime);
}

const STATUS = '/v1/quests/q/exports/e/status';
const WINDOW = {since: Date.parse('2026-01-01T00:00:00Z'), until: Date.parse('2026-01-02T00:00:00Z')};

describe('export statuses', () => {
  test.each(['TIMED_OUT', 'TIMEOUT', 'FAILED', 'CANCELLED', 'ERROR', 'COMPLETED_WITH_ERRORS', 'expired', 'Aborted'])(
    '%s is a failure at once',
    (status) => expect(classifyStatus(status)).toMatchObject({kind: 'failed'})
  );
  test.each(['COMPLETED', 'COMPLETE', 'SUCCEEDED', 'SUCCESS', 'done', 'FINISHED', 'READY'])('%s is done', (status) =>
    expect(classifyStatus(status)).toEqual({kind: 'done'})
  );
  test.each(['PENDING', 'INPROGRESS', 'QUEUED', 'RUNNING'])('%s is still running', (status) =>
    expect(classifyStatus(status)).toMatchObject({kind: 'running'})
  );

  test('a 200 saying a success word follows its Location (relative to the status address), else the documented path', async () => {
    const s = await server((path) =>
      path === STATUS
        ? {status: 200, headers: {location: '../e/files/out.csv?sig=1'}, body: '{"status":"COMPLETED"}'}
        : {status: 200, body: '{"status":"SUCCEEDED"}'}
    );
    const client = api(s.url);
    await expect(client.exportStatus('q', 'e')).resolves.toEqual({
      kind: 'completed',
      downloadUrl: `${s.url}/v1/quests/q/exports/e/files/out.csv?sig=1`,
    });
    await expect(client.exportStatus('q', 'other')).resolves.toEqual({
      kind: 'completed',
      downloadUrl: `${s.url}/v1/quests/q/exports/other/download`,
    });
    await s.close();
  });
});

describe('retries and their failure types', () => {
  test('one 409 on a download is retried like other transient answers', async () => {
    const s = await server((_path, n) =>
      n === 1
        ? {status: 409, body: '{"detail":"busy"}'}
        : {status: 200, headers: {'content-type': 'text/csv'}, body: 'a\r\n'}
    );
    const opened = await api(s.url).openDownload('q', 'e', `${s.url}/file`);
    expect(opened.kind).toBe('file');
    expect(s.counts.get('/file')).toBe(2);
    if (opened.kind === 'file') opened.download.close();
    await s.close();
  });

  test('a 409 on a download that never ends still ends, as a transient error', async () => {
    const s = await server(() => ({status: 409, body: '{"detail":"busy"}'}));
    const err = await api(s.url)
      .openDownload('q', 'e', `${s.url}/file`)
      .catch((e: Error) => e);
    expect(failureTypeOf(err)).toBe('transient_error');
    expect(s.counts.get('/file')).toBe(retryPolicy('sync', 1).retries + 1);
    await s.close();
  });

  test('a refused connection is a transient_error in a sync and a config_error naming the setting in a check', async () => {
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const inSync = await api(url)
      .createExport('q', WINDOW)
      .catch((e: Error) => e);
    expect(failureTypeOf(inSync)).toBe('transient_error');
    expect((inSync as Error).message).toMatch(/ECONNREFUSED/);
    const inCheck = await api(url, 'check')
      .checkAccess('q')
      .catch((e: Error) => e);
    expect(failureTypeOf(inCheck)).toBe('config_error');
    expect((inCheck as Error).message).toMatch(/Check api_url/);
  });

  test('until rejected as in the future says so and names settle_seconds', async () => {
    const s = await server(() => ({
      status: 400,
      headers: {'content-type': 'application/problem+json', date: 'Mon, 25 Jan 2026 23:55:00 GMT'},
      body: JSON.stringify({
        title: 'One or more validation errors occurred.',
        status: 400,
        errors: {'filter.until': ['until must not lie in the future']},
        traceId: 't-1',
      }),
    }));
    const err = await api(s.url)
      .createExport('q', WINDOW)
      .catch((e: Error) => e);
    expect(failureTypeOf(err)).toBe('config_error');
    expect((err as Error).message).toMatch(/rejected until 2026-01-02T00:00:00.000Z as in the future/);
    expect((err as Error).message).toMatch(/settle_seconds/);
    expect((err as Error).message).toMatch(/clock said 2026-01-25T23:55:00.000Z/);
    expect(VError.info(err as Error).traceId).toBe('t-1');
    await s.close();
  });

  test('a stop during the token retry waits ends the wait at once, and the token request with it', async () => {
    const s = await server(() => ({status: 503, body: '{"detail":"down"}'}));
    // Waits that never end by themselves: only the abort can end them.
    let waits = 0;
    const runtime: Runtime = {
      now: () => Date.now(),
      random: () => 0.5,
      sleep: (_ms, signal) =>
        new Promise((_resolve, reject) => {
          waits++;
          signal?.addEventListener('abort', () => reject(signal.reason), {once: true});
        }),
    };
    const common = {runtime, logger: quietLogger(), policy: retryPolicy('sync', 2000)};
    const tokens = new TokenProvider(
      {authUrl: s.url, apiUrl: s.url, clientId: 'id', clientSecret: 'secret', projectId: '1'},
      createHttpClient({...common, baseURL: s.url}),
      runtime,
      quietLogger(),
      () => undefined
    );
    const stop = new AbortController();
    const first = tokens.token(stop.signal).catch((e: unknown) => e);
    const second = tokens.token(stop.signal).catch((e: unknown) => e);
    while (waits === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    stop.abort(new Error('stopped by the test'));
    expect(await first).toMatchObject({message: 'stopped by the test'});
    expect(await second).toMatchObject({message: 'stopped by the test'});
    // The token request's own retry wait ended too: no second attempt is ever made.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(s.counts.get('/oauth/v2/token')).toBe(1);
    await s.close();
  });
});

/** A body as Node's client gives it, made of a PassThrough the test writes to. */
function fakeBody(headers: Record<string, string>): PassThrough & {headers: Record<string, string>} {
  return Object.assign(new PassThrough(), {headers});
}

describe('downloads', () => {
  // The time rules run on a virtual clock: the body's pace and the consumer's are the clock's, whatever the machine's load.
  test('a body that trickles (one byte at a time) is cut off by the progress floor, with its progress', async () => {
    const clock = new TestClock();
    const body = fakeBody({'content-length': '1000'});
    const download = new Download(body as unknown as http.IncomingMessage, {
      questId: 'q',
      exportId: 'e',
      idleTimeoutMs: 10_000,
      progressFloor: {spanMs: 300, minBytes: 100},
      clock,
    });
    let dripping = true;
    const drip = (async () => {
      while (dripping && !body.destroyed) {
        await clock.sleep(10);
        body.write('x');
      }
    })();
    const err = await (async () => {
      for await (const chunk of download.chunks()) void chunk;
    })().catch((e: unknown) => e);
    dripping = false;
    await drip;
    expect(err).toBeInstanceOf(DownloadCutOff);
    const cut = err as DownloadCutOff;
    expect(cut.reason).toMatch(/slowed to a trickle: \d+ bytes in .* under the floor of 100 bytes per/);
    // Bytes came, fewer than the floor asks for in its span, and the cut came long before the idle timeout's 10 s.
    expect(cut.progress?.receivedBytes).toBeGreaterThan(0);
    expect(cut.progress?.receivedBytes).toBeLessThan(100);
    expect(cut.progress?.silentMs).toBeLessThan(10_000);
  });

  test('a trickle that then falls silent is cut off by the floor when its span runs out, not later by the idle timeout', async () => {
    const clock = new TestClock();
    const body = fakeBody({'content-length': '1000'});
    const download = new Download(body as unknown as http.IncomingMessage, {
      questId: 'q',
      exportId: 'e',
      idleTimeoutMs: 10_000,
      progressFloor: {spanMs: 300, minBytes: 100},
      clock,
    });
    void (async () => {
      for (let sent = 0; sent < 5 && !body.destroyed; sent++) {
        await clock.sleep(50);
        body.write('x');
      }
    })();
    const start = clock.now();
    const err = await (async () => {
      for await (const chunk of download.chunks()) void chunk;
    })().catch((e: unknown) => e);
    expect((err as DownloadCutOff).reason).toMatch(
      /slowed to a trickle: 5 bytes in .* under the floor of 100 bytes per/
    );
    // The floor's span (300 ms of waiting) ran out in the silence, long before the idle timeout's 10 s.
    expect(clock.now() - start).toBeGreaterThanOrEqual(300);
    expect(clock.now() - start).toBeLessThan(10_000);
  });

  test.each([
    ['the floor', 10_000],
    ['the idle timeout', 100],
  ])('a body at a sound pace, and a consumer slower than %s, pass it', async (_rule, idleTimeoutMs) => {
    const clock = new TestClock();
    const body = fakeBody({'content-length': '4000'});
    const download = new Download(body as unknown as http.IncomingMessage, {
      questId: 'q',
      exportId: 'e',
      idleTimeoutMs,
      progressFloor: {spanMs: 200, minBytes: 100},
      clock,
    });
    void (async () => {
      for (let sent = 0; sent < 4; sent++) {
        await clock.sleep(5);
        body.write(Buffer.alloc(1000, 'y'));
      }
      body.end();
    })();
    let got = 0;
    const start = clock.now();
    for await (const chunk of download.chunks()) {
      got += chunk.length;
      // The consumer takes longer than the span: not the download's fault.
      await clock.sleep(250);
    }
    expect(got).toBe(4000);
    // The consumer spent longer than the floor's span.
    expect(clock.now() - start).toBeGreaterThan(200);
  });

  /** A hand-made answer: its Content-Length counts characters, as a broken server might. */
  async function rawServer(declared: (text: string, bytes: Buffer) => number, text: string) {
    const s = net.createServer((socket) => {
      socket.once('data', () => {
        const bytes = Buffer.from(text, 'utf8');
        socket.end(
          Buffer.concat([
            Buffer.from(
              `HTTP/1.1 200 OK\r\nContent-Type: text/csv\r\nContent-Length: ${declared(text, bytes)}\r\n\r\n`
            ),
            bytes,
          ])
        );
      });
    });
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
    return {url, close: () => new Promise<void>((resolve) => s.close(() => resolve()))};
  }

  const CSV = 'Response ID|Comment\r\nR-1|blåbærsyltetøy nummer 4\r\n';

  async function readAll(url: string): Promise<{text: string; download: Download; err?: unknown}> {
    const opened = await api(url).openDownload('q', 'e', `${url}/file`);
    if (opened.kind !== 'file') throw new Error('no file');
    const download = opened.download as Download;
    const parts: Buffer[] = [];
    try {
      for await (const chunk of download.chunks()) parts.push(chunk);
    } catch (err) {
      return {text: Buffer.concat(parts).toString('utf8'), download, err};
    }
    return {text: Buffer.concat(parts).toString('utf8'), download};
  }

  test('bytes beyond the declared Content-Length make the body untrusted: a cut-off, overran', async () => {
    const s = await rawServer((text) => text.length, CSV);
    const {err, download} = await readAll(s.url);
    expect(err).toBeInstanceOf(DownloadCutOff);
    expect((err as DownloadCutOff).reason).toMatch(
      /more bytes than the body's declared end \(Content-Length \d+; HPE_/
    );
    expect(download.overran).toBe(true);
    await s.close();
  });

  test('a Content-Length that counts bytes is read whole, not overran', async () => {
    const s = await rawServer((_text, bytes) => bytes.length, CSV);
    const {err, text, download} = await readAll(s.url);
    expect(err).toBeUndefined();
    expect(text).toBe(CSV);
    expect(download.overran).toBe(false);
    await s.close();
  });
});

describe('credentials in the URL settings', () => {
  const SECRET = 's3cr3t/with+special=chars&more ø%';
  const base = {
    client_id: '312345678901234567@questback',
    client_secret: SECRET,
    quest_ids: ['1b4e28ba-2fa1-41d2-883f-0016d3cca427'],
    start_date: '2026-01-01T00:00:00Z',
  };
  const message = (overrides: Record<string, unknown>): string => {
    try {
      parseConfig({...base, ...overrides}, Date.parse('2026-02-01T00:00:00Z'));
    } catch (err) {
      return (err as Error).message + '\n' + (err as Error).stack;
    }
    throw new Error('the config was accepted');
  };
  const leaked = (text: string): string[] => secretForms(SECRET, base.client_id).filter((f) => text.includes(f));

  test.each([
    ['api_url', 'http://user:pa55word@example.com'],
    ['auth_url', 'http://user:pa/55word@example.com'],
    ['api_url', `https://user:${encodeURIComponent(SECRET)}@example.com`],
    ['api_url', 'user:pa55word@example.com'],
    ['auth_url', `ftp://someone:pa55word@example.com`],
  ])('%s = %s: the message names the setting without its user info', (key, value) => {
    const text = message({[key]: value});
    expect(text).toContain(`'${key}'`);
    expect(text).not.toMatch(/pa55word|pa\/55word|user:/);
    expect(leaked(text)).toEqual([]);
  });

  test.each([
    ['api_url', SECRET],
    ['auth_url', `http://${SECRET}`],
    ['api_url', `ftp://example.com/${SECRET}`],
    ['project_id', SECRET],
  ])('the client secret pasted into %s appears in no form', (key, value) => {
    const text = message({[key]: value});
    expect(text).toContain(`'${key}'`);
    expect(leaked(text)).toEqual([]);
  });
});
