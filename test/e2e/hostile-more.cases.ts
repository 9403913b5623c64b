// More hostile cases: bodies cut short, stray quotes, a state from 1970, stale and absurd
// rate-limit headers, exports left polling after a failure, odd redirects, a path prefix, a
// vanished export, a doubled BOM. Each case runs the connector in-process against a hostile service
// of its own and judges exit code, time, failure, data, state and secrets.

import {announcedWaits, records} from '../helpers/connector';
import {streamOf} from '../helpers/fixtures';
import {
  BOM,
  CURSOR_FIELD,
  catalogOf,
  expectOutcome,
  launch,
  logs,
  rowsAt,
  runHostile,
  withServer,
} from '../helpers/hostile';
import {csvText} from '../../simulator';

const Q = '1b4e28ba-2fa1-41d2-883f-0016d3cca427';

/**
 * Wall-time bounds here only ask whether the connector hung. The cases run side by side on virtual
 * clocks. What a case is about (no wait, stopped polling, no request after exit) is asserted on
 * events: the log's announced waits, the requests.
 */
const HANG_S = 60;
const KILL_MS = (HANG_S + 5) * 1000;
const TEST_MS = KILL_MS + 30_000;

/** An answer whose body ends when the socket closes: no Content-Length, no chunked encoding. */
const closeDelimited = (body: string): Buffer =>
  Buffer.concat([
    Buffer.from('HTTP/1.1 200 OK\r\nContent-Type: text/csv\r\nConnection: close\r\n\r\n', 'latin1'),
    Buffer.from(body, 'utf8'),
  ]);

describe('more hostile cases', () => {
  const CUT_ROWS = rowsAt([
    [2, 'A whole answer'],
    [1.5, 'Another whole answer'],
    [0.5, 'This answer was cut in the middle of a sentence'],
  ]);

  test.concurrent(
    'n. a close-delimited body cut inside the last cell of the last row, on every download, fails as transient and emits no truncated record',
    async () => {
      await withServer({quests: [{id: Q, rows: CUT_ROWS}]}, async (server) => {
        server.on('download', (ctx) => {
          const csv = ctx.csv();
          const cut = csv.indexOf('cut in the mid') + 'cut in the mid'.length;
          ctx.raw(closeDelimited(csv.slice(0, cut)));
        });
        const run = await runHostile(server, 'read', {killAfterMs: KILL_MS});
        expectOutcome(run, server, {
          code: 1,
          maxSeconds: HANG_S,
          failure: {type: 'transient_error', message: /cut|incomplete|line end/i, questId: Q},
          failed: [Q],
        });
        expect(records(run.messages).filter((r) => JSON.stringify(r).includes('cut in the mid'))).toEqual([]);
      });
    },
    TEST_MS
  );

  test.concurrent(
    'n. a close-delimited body that ends with a line end is read whole',
    async () => {
      await withServer({quests: [{id: Q, rows: CUT_ROWS}]}, async (server) => {
        server.on('download', (ctx) => ctx.raw(closeDelimited(ctx.csv())));
        const run = await runHostile(server, 'read', {killAfterMs: KILL_MS});
        expectOutcome(run, server, {code: 0, maxSeconds: HANG_S, ok: [Q]});
      });
    },
    TEST_MS
  );

  const STRAY_ROWS = rowsAt([
    [2, 'Nice shop'],
    [1, '24" screen'],
    [0.5, 'Fast delivery'],
  ]);

  test.concurrent(
    'o. a stray quote in an unquoted cell is a config_error naming accept_stray_quotes by default',
    async () => {
      await withServer({quests: [{id: Q, rows: STRAY_ROWS}]}, async (server) => {
        server.on('download', (ctx) => ctx.send(200, ctx.csv({quote: 'never'}), {'Content-Type': 'text/csv'}));
        const run = await runHostile(server, 'read', {killAfterMs: KILL_MS});
        expectOutcome(run, server, {
          code: 1,
          maxSeconds: HANG_S,
          failure: {type: 'config_error', message: /accept_stray_quotes/, questId: Q},
          failed: [Q],
        });
      });
    },
    TEST_MS
  );

  test.concurrent(
    'o. with accept_stray_quotes a stray quote in an unquoted cell is kept as it is (24" screen)',
    async () => {
      await withServer({quests: [{id: Q, rows: STRAY_ROWS}]}, async (server) => {
        server.on('download', (ctx) => ctx.send(200, ctx.csv({quote: 'never'}), {'Content-Type': 'text/csv'}));
        const run = await runHostile(server, 'read', {config: {accept_stray_quotes: true}, killAfterMs: KILL_MS});
        expectOutcome(run, server, {code: 0, maxSeconds: HANG_S, ok: [Q]});
        expect(records(run.messages).map((r) => r.record.data.q1_comment)).toContain('24" screen');
      });
    },
    TEST_MS
  );

  test.concurrent(
    'p. a state cursor of 1970 with a start_date 3 days back exports from start_date only',
    async () => {
      await withServer({quests: [Q]}, async (server) => {
        const state = [
          {
            type: 'STREAM',
            stream: {
              stream_descriptor: {name: streamOf(Q)},
              stream_state: {cursor: '1970-01-01T00:00:00.000Z', cursor_field: [CURSOR_FIELD]},
            },
          },
        ];
        const run = await runHostile(server, 'read', {state, killAfterMs: KILL_MS});
        expectOutcome(run, server, {code: 0, maxSeconds: HANG_S, ok: [Q]});
        const sinces = server.exports().map((e) => Date.parse(String(e.since)));
        expect(sinces.length).toBeGreaterThan(0);
        expect(sinces.filter((since) => since < run.startMs - 1).map((ms) => new Date(ms).toISOString())).toEqual([]);
        // The server holds a row older than start_date; it must not be exported.
        expect(server.groundTruth(Q).rows.some((r) => Date.parse(r[1]) <= run.startMs)).toBe(true);
      });
    },
    TEST_MS
  );

  test.concurrent(
    'q. one 429 with X-RateLimit-Reset 999999999999 and Remaining 0, then answers without rate-limit headers: no stale wait is announced',
    async () => {
      await withServer({quests: [Q]}, async (server) => {
        server.on('status', (ctx) =>
          ctx.n === 1
            ? ctx.problem(429, 'Too many requests', {
                'X-RateLimit-Remaining': '0',
                'X-RateLimit-Reset': '999999999999',
              })
            : ctx.next()
        );
        const run = await runHostile(server, 'read', {killAfterMs: KILL_MS});
        expectOutcome(run, server, {code: 0, maxSeconds: HANG_S, ok: [Q]});
        expect(server.requests('status').length).toBeGreaterThanOrEqual(2);
        // A backoff of a second or two, not a wait for the stale reset.
        expect(announcedWaits(run.messages).filter((w) => w.ms > 10_000)).toEqual([]);
      });
    },
    TEST_MS
  );

  test.concurrent(
    'r. every 200 saying Remaining 0 with a reset in 2065 does not make the connector wait (no rate-limit wait announced), the reading logged as not sane',
    async () => {
      await withServer({quests: [Q]}, async (server) => {
        const reset = String(Date.UTC(2065, 0, 1) / 1000);
        server.decorate((_ctx, status) =>
          status === 200
            ? {'X-RateLimit-Limit': '100', 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': reset}
            : undefined
        );
        const run = await runHostile(server, 'read', {killAfterMs: KILL_MS});
        expectOutcome(run, server, {code: 0, maxSeconds: HANG_S, ok: [Q]});
        // A retry after a request timeout on a busy machine is not what this case is about.
        expect(announcedWaits(run.messages).filter((w) => /rate limit|throttled/i.test(w.message))).toEqual([]);
        const said = logs(run).filter(
          (l) => /X-RateLimit/.test(l.message) && /ignor|not a sane|absurd/i.test(l.message)
        );
        expect(said.length).toBeGreaterThan(0);
      });
    },
    TEST_MS
  );

  test.concurrent(
    's. after a 403 on the first download the exports created ahead stop being polled: no export is polled twice after the 403, no request after exit',
    async () => {
      await withServer({quests: [Q]}, async (server) => {
        server.on('status', (ctx) => (ctx.job?.seq === 1 ? ctx.next() : ctx.jobStatus('PENDING')));
        server.on('download', (ctx) => ctx.problem(403, `No access to quest '${ctx.questId}'`));
        const {live, done} = launch(server, 'read', {config: {window_days: 1}, killAfterMs: KILL_MS});
        const trace = await live.waitForLine(
          (m) => m.type === 'TRACE' && (m as {trace?: {type?: string}}).trace?.type === 'ERROR',
          HANG_S * 1000
        );
        const run = await done;
        // Give a request still in flight at the end time to arrive (in a process it would die with it).
        await new Promise((resolve) => setTimeout(resolve, 1000));
        const settled = server.requests().length;
        // A minute on the clock: a read that went on polling after its end would poll again.
        await server.clock.sleep(60_000);
        const late = server
          .requests()
          .slice(settled)
          .map((r) => `${r.method} ${r.path}`);
        // Counted in requests after the 403, not in wall time: a poll already on its way may land,
        // a second poll of the same export means the polling went on.
        const forbiddenAt = server.requests('download')[0]?.seq ?? Infinity;
        const pollsAfter = new Map<string, number>();
        for (const r of server.requests('status').filter((r) => r.seq > forbiddenAt)) {
          pollsAfter.set(String(r.exportId), (pollsAfter.get(String(r.exportId)) ?? 0) + 1);
        }
        expect({
          errorTraceSeen: trace !== undefined,
          exportsPolledTwiceAfterThe403: [...pollsAfter].filter(([, n]) => n > 1),
          requestsAfterExit: late,
        }).toEqual({errorTraceSeen: true, exportsPolledTwiceAfterThe403: [], requestsAfterExit: []});
        expectOutcome(run, server, {
          code: 1,
          maxSeconds: HANG_S,
          failure: {type: 'config_error', message: /403|access|permission|forbidden/i, questId: Q},
          failed: [Q],
        });
      });
    },
    TEST_MS
  );

  test.concurrent(
    't. a relative Location "download" on the 302 is resolved against the status URL',
    async () => {
      await withServer({quests: [Q]}, async (server) => {
        server.on('status', (ctx) => (ctx.job?.polls === 1 ? ctx.jobStatus('PENDING') : ctx.redirect('download')));
        const run = await runHostile(server, 'read', {killAfterMs: KILL_MS});
        expectOutcome(run, server, {code: 0, maxSeconds: HANG_S, ok: [Q]});
        expect(server.requests('other').map((r) => `${r.method} ${r.path}`)).toEqual([]);
      });
    },
    TEST_MS
  );

  test.concurrent(
    'u. under an api_url path prefix, a COMPLETED status record (200 instead of 302) leads to the documented download path under the prefix',
    async () => {
      await withServer({quests: [Q], prefix: '/gw/qb'}, async (server) => {
        server.on('status', (ctx) => (ctx.job?.polls === 1 ? ctx.jobStatus('PENDING') : ctx.jobStatus('COMPLETED')));
        expect(server.apiUrl).toMatch(/\/gw\/qb$/);
        const run = await runHostile(server, 'read', {killAfterMs: KILL_MS});
        expectOutcome(run, server, {code: 0, maxSeconds: HANG_S, ok: [Q]});
        expect(
          server
            .requests()
            .filter((r) => !r.path.startsWith('/gw/qb/'))
            .map((r) => `${r.method} ${r.path}`)
        ).toEqual([]);
      });
    },
    TEST_MS
  );

  test.concurrent(
    'v. a 302 to plain http:// on a host that is not loopback is refused, naming https',
    async () => {
      await withServer({quests: [Q]}, async (server) => {
        server.on('status', (ctx) =>
          ctx.job?.polls === 1 ? ctx.jobStatus('PENDING') : ctx.redirect('http://downloads.example.com/file.csv')
        );
        const run = await runHostile(server, 'read', {killAfterMs: KILL_MS});
        expectOutcome(run, server, {
          code: 1,
          maxSeconds: HANG_S,
          failure: {type: /^(config_error|transient_error|system_error)$/, message: /https/, questId: Q},
          failed: [Q],
        });
      });
    },
    TEST_MS
  );

  test.concurrent(
    'w. a 404 on the status of the export just created (it vanished) makes the connector create it again: every row once',
    async () => {
      await withServer({quests: [Q]}, async (server) => {
        server.on('status', (ctx) =>
          ctx.job?.seq === 1 ? ctx.problem(404, `Export '${ctx.exportId}' was not found`) : ctx.next()
        );
        const run = await runHostile(server, 'read', {killAfterMs: KILL_MS});
        expectOutcome(run, server, {code: 0, maxSeconds: HANG_S, ok: [Q]});
        expect(server.requests('create').length).toBeGreaterThanOrEqual(2);
      });
    },
    TEST_MS
  );

  test.concurrent(
    'x. a UTF-8 BOM written twice leaves no U+FEFF in any record key or value, and the Response ID key is plain',
    async () => {
      await withServer({quests: [Q]}, async (server) => {
        server.on('download', (ctx) => ctx.send(200, ctx.csv({bom: BOM + BOM}), {'Content-Type': 'text/csv'}));
        expect(csvText(['a'], [], {bom: BOM + BOM}).startsWith('\uFEFF\uFEFFa')).toBe(true);
        // Header texts as the record keys (column_names survey), so that a BOM in them would show.
        const run = await runHostile(server, 'read', {
          killAfterMs: KILL_MS,
          config: {column_names: 'survey'},
          catalog: catalogOf(server, [Q], {names: 'survey'}),
        });
        expectOutcome(run, server, {code: 0, maxSeconds: HANG_S, ok: [Q]});
        const recs = records(run.messages);
        expect(recs.length).toBeGreaterThan(0);
        expect(recs.filter((r) => JSON.stringify(r.record.data).includes('\uFEFF'))).toEqual([]);
        expect(recs.every((r) => typeof r.record.data['Response ID'] === 'string')).toBe(true);
      });
    },
    TEST_MS
  );
});
