// Wrong answers at the API layer (issue 19), the connector in-process against the hostile service: unknown
// terminal statuses, a 200 with a Location, a stop during the token's retries, credentials in the
// URL settings, a 409 on a download, a clock behind, a trickling body, a Content-Length in characters.

import {records} from '../helpers/connector';
import {
  connectionStatuses,
  expectOutcome,
  launch,
  leaks,
  logs,
  PATIENT,
  rowsAt,
  rowsBetween,
  runHostile,
  withServer,
} from '../helpers/hostile';
import {csvText, RouteHandler, Simulator} from '../../simulator';
import {TestClock} from '../helpers/clock';

const Q = '1b4e28ba-2fa1-41d2-883f-0016d3cca427';
const ROWS = rowsAt([
  [2, 'Første svar'],
  [1.5, 'Second answer'],
  [0.5, 'blåbærsyltetøy nummer 4'],
]);

/** The CSV of the export the file path names, served outside the documented download path. */
const serveFile =
  (server: Simulator): RouteHandler =>
  (ctx) => {
    const id = /^\/files\/([^/]+)\.csv$/.exec(ctx.path)?.[1];
    const job = server.exports().find((e) => e.exportId === id);
    if (!job) return ctx.problem(404, 'no such file');
    const rows = rowsBetween(server, job.questId, Date.parse(String(job.since)), Date.parse(String(job.until)));
    ctx.send(200, csvText(server.groundTruth(job.questId).header, rows), {'Content-Type': 'text/csv'});
  };

describe('hostile API answers', () => {
  test.concurrent.each(['SUCCEEDED', 'COMPLETED'])(
    'a 200 saying %s with a Location is followed there (the documented path serves nothing)',
    async (word) => {
      await withServer({quests: [{id: Q, rows: ROWS}]}, async (server) => {
        server.on('status', (ctx) =>
          ctx.json(200, {exportId: ctx.exportId, status: word}, {Location: `/files/${ctx.exportId}.csv`})
        );
        server.on('download', (ctx) => ctx.problem(404, 'not here'));
        server.on('other', serveFile(server));
        const run = await runHostile(server, 'read', {killAfterMs: 33_000});
        expectOutcome(run, server, {code: 0, maxSeconds: 30, ok: [Q]});
      });
    },
    60_000
  );

  test.concurrent(
    'TIMED_OUT is a failure at once, not a wait for export_timeout_minutes',
    async () => {
      await withServer({quests: [{id: Q, rows: ROWS}]}, async (server) => {
        server.on('status', (ctx) => ctx.jobStatus('TIMED_OUT'));
        const run = await runHostile(server, 'read', {config: {export_timeout_minutes: 60}, killAfterMs: 43_000});
        expectOutcome(run, server, {
          code: 1,
          maxSeconds: 40,
          failure: {type: 'transient_error', message: /TIMED_OUT/, questId: Q},
          failed: [Q],
        });
      });
    },
    60_000
  );

  test.concurrent(
    'SIGTERM during the token request retries stops the read at once, with the stopped trace',
    async () => {
      await withServer({quests: [{id: Q, rows: ROWS}]}, async (server) => {
        server.on('token', (ctx) => ctx.problem(503, 'token service down'));
        const clock = server.clock as TestClock;
        const {live, done} = launch(server, 'read', {killAfterMs: 40_000});
        const retrying = await live.waitForLine(
          (m) => m.type === 'LOG' && /oauth\/v2\/token failed \(HTTP 503\): retry/.test(JSON.stringify(m)),
          20_000
        );
        expect(retrying).toBeDefined();
        const [waitsEnded, tokenRequests] = [clock.waitsEnded, server.requests('token').length];
        live.kill('SIGTERM');
        const run = await done;
        expect(run.code).toBe(143);
        // At once: the wait for the next retry ends with the signal (none runs its time out), and no
        // request follows but one already on its way.
        expect(clock.waitsEnded).toBe(waitsEnded);
        expect(server.requests('token').length).toBeLessThanOrEqual(tokenRequests + 1);
        expect(run.stdout).toMatch(/The sync was stopped \(SIGTERM\)/);
        expect(leaks(run, server)).toEqual([]);
      });
    },
    60_000
  );

  test.concurrent(
    'credentials in api_url or auth_url, or the secret pasted there, never reach the output, in check or read',
    async () => {
      await withServer({quests: [{id: Q, rows: ROWS}]}, async (server) => {
        const secret = server.clientSecret;
        const cases: Record<string, string>[] = [
          {api_url: `http://user:${secret}@example.com`},
          {api_url: `http://user:${encodeURIComponent(secret)}@127.0.0.1:1`},
          {auth_url: secret},
          {auth_url: `ftp://example.com/${secret}`},
          {api_url: 'http://someone:pa55word@example.com'},
        ];
        for (const config of cases) {
          for (const command of ['check', 'read'] as const) {
            const run = await runHostile(server, command, {config, killAfterMs: 20_000});
            const key = Object.keys(config)[0];
            const said =
              command === 'check'
                ? connectionStatuses(run)[0]?.message
                : JSON.stringify(run.messages.filter((m) => m.type === 'TRACE'));
            expect({command, config: key, said}).toMatchObject({said: expect.stringContaining(key)});
            expect({command, key, leaks: leaks(run, server)}).toEqual({command, key, leaks: []});
            expect(run.stdout + run.stderr).not.toMatch(/pa55word|user:|someone:/);
          }
        }
      });
    },
    120_000
  );

  test.concurrent(
    'one 409 on a download is retried: every row once, exit 0',
    async () => {
      await withServer({quests: [{id: Q, rows: ROWS}]}, async (server) => {
        server.on('download', (ctx) => (ctx.n === 1 ? ctx.problem(409, 'the file is being moved') : ctx.next()));
        const run = await runHostile(server, 'read', {config: PATIENT, killAfterMs: 33_000});
        expectOutcome(run, server, {code: 0, maxSeconds: 30, ok: [Q]});
        expect(server.exports()).toHaveLength(1);
      });
    },
    60_000
  );

  test.concurrent(
    'a service clock behind: until rejected as in the future is said so, naming settle_seconds',
    async () => {
      await withServer({quests: [{id: Q, rows: ROWS}]}, async (server) => {
        server.on('create', (ctx) =>
          ctx.json(
            400,
            {
              type: 'https://tools.ietf.org/html/rfc9110#section-15.5.1',
              title: 'One or more validation errors occurred.',
              status: 400,
              errors: {'filter.until': ['until must not lie in the future']},
              traceId: '00-abc-def-00',
            },
            {'Content-Type': 'application/problem+json'}
          )
        );
        const run = await runHostile(server, 'read', {killAfterMs: 33_000});
        expectOutcome(run, server, {
          code: 1,
          maxSeconds: 30,
          failure: {type: 'config_error', message: /rejected until .* as in the future.*settle_seconds/s, questId: Q},
          failed: [Q],
        });
      });
    },
    60_000
  );

  /** A hand-made answer whose Content-Length counts characters, not bytes. */
  const charCounted = (csv: string): Buffer =>
    Buffer.concat([
      Buffer.from(`HTTP/1.1 200 OK\r\nContent-Type: text/csv\r\nContent-Length: ${csv.length}\r\n\r\n`, 'latin1'),
      Buffer.from(csv, 'utf8'),
    ]);

  test.concurrent(
    'a Content-Length counted in characters is not trusted: downloaded again, every row whole, exit 0',
    async () => {
      await withServer({quests: [{id: Q, rows: ROWS}]}, async (server) => {
        server.on('download', (ctx) => (ctx.n === 1 ? ctx.raw(charCounted(ctx.csv())) : ctx.next()));
        const run = await runHostile(server, 'read', {killAfterMs: 33_000});
        expectOutcome(run, server, {code: 0, maxSeconds: 30, ok: [Q]});
        expect(logs(run).some((l) => /more bytes than the body's declared end/.test(l.message))).toBe(true);
      });
    },
    60_000
  );

  test.concurrent(
    'a Content-Length counted in characters on every download fails the stream, with no truncated row',
    async () => {
      await withServer({quests: [{id: Q, rows: ROWS}]}, async (server) => {
        server.on('download', (ctx) => ctx.raw(charCounted(ctx.csv())));
        const run = await runHostile(server, 'read', {killAfterMs: 53_000});
        expectOutcome(run, server, {
          code: 1,
          maxSeconds: 50,
          failure: {type: 'transient_error', message: /./, questId: Q},
          failed: [Q],
        });
        expect(records(run.messages).filter((r) => JSON.stringify(r).includes('blåbærsylt'))).toEqual([]);
      });
    },
    60_000
  );

  test.concurrent(
    'a trickling download (a byte a second) is cut off by the progress floor and downloaded again',
    async () => {
      await withServer({quests: [{id: Q, rows: ROWS}]}, async (server) => {
        // The drip, the idle timeout and the floor all run on the service's virtual clock: a busy machine
        // changes none of their order.
        server.on('download', async (ctx) => {
          if (ctx.n > 1) return ctx.next();
          const body = Buffer.from(ctx.csv(), 'utf8');
          ctx.res.writeHead(200, {'Content-Type': 'text/csv', 'Content-Length': body.length});
          for (let at = 0; at < body.length; at++) {
            if (!(await ctx.pause(1000))) return;
            ctx.res.write(body.subarray(at, at + 1));
          }
          ctx.res.end();
        });
        // request_timeout_seconds 10: the idle timeout is 10 s, ten drips away; the floor's span 20 s.
        const run = await runHostile(server, 'read', {config: {request_timeout_seconds: 10}, killAfterMs: 50_000});
        expectOutcome(run, server, {code: 0, maxSeconds: 45, ok: [Q]});
        // The floor cut it once its whole span was waited, not before. How much later is not asserted:
        // the virtual clock also runs with real time, and a busy machine runs the cut a little late.
        const waited = logs(run)
          .map((l) =>
            /slowed to a trickle: \d+ bytes in ([\d.]+) s of waiting, under the floor of \d+ bytes per 20\.0 s/.exec(
              l.message
            )
          )
          .filter((m) => m !== null)
          .map((m) => Number(m[1]));
        expect(waited.length).toBeGreaterThan(0);
        expect(waited.filter((s) => s < 20)).toEqual([]);
        expect(logs(run).some((l) => /stalled/.test(l.message))).toBe(false);
      });
    },
    60_000
  );
});
