// The service misbehaves: stalls, floods of 429 with absurd headers, redirect loops, empty and
// wrongly-typed bodies, odd encodings, secrets echoed back. Each case runs the connector in-process
// against a hostile service of its own (the simulator answering on demand), on a virtual clock, and
// judges exit code, time, failure, data, state and secrets. Every config has request_timeout_seconds: 2.

import {announcedWaits, records} from '../helpers/connector';
import {
  CLIENT_ID,
  CLIENT_SECRET,
  HEADER,
  HostileRun,
  Row,
  catalogOf,
  rowsAt,
  connectionStatuses,
  expectOutcome,
  gzip,
  launch,
  leaks,
  logs,
  PATIENT,
  runHostile,
  withServer,
  utf8WithInvalidBytes,
} from '../helpers/hostile';
import {csvText, RouteContext, Simulator} from '../../simulator';

const Q = '1b4e28ba-2fa1-41d2-883f-0016d3cca427';

/**
 * Wall-time bounds here only ask whether the connector hung. The cases run side by side; waits on
 * the clock take no real time, idle timeouts of downloads do (request_timeout_seconds is real). What
 * a case is about (no wait, stopped polling, no request after exit) is asserted on events: the
 * log's announced waits, the requests.
 */
const HANG_S = 60;
const KILL_MS = (HANG_S + 5) * 1000;
const TEST_MS = KILL_MS + 30_000;

const HTML_PAGE =
  '<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>\n' +
  '<body><h1>Bad Gateway</h1><p>The upstream server did not answer. Please try again later.</p></body></html>\n';

/** The body of an export up to `chars` characters into the row with the given Response ID. */
function cutInsideRow(csv: string, responseId: string, chars = 6): Buffer {
  const at = csv.indexOf(responseId);
  if (at < 0) throw new Error(`row ${responseId} is not in this export`);
  return Buffer.from(csv.slice(0, at + responseId.length + chars), 'utf8');
}

const checkJudgement = (run: HostileRun, server: Simulator, maxSeconds: number) => {
  const statuses = connectionStatuses(run);
  return {
    code: run.code,
    killedByTest: run.killed,
    withinTime: run.seconds < maxSeconds ? true : `${run.seconds.toFixed(1)} s`,
    invalidLines: run.invalid,
    statuses: statuses.map((s) => s.status),
    message: statuses[0]?.message ?? '',
    leaks: leaks(run, server),
  };
};

/**
 * Announces the whole file, sends it up to the middle of a row and then nothing more, the connection
 * kept open. After splits a window may hold fewer rows: the cut is inside the third row, the last one, or the header.
 */
function stallMidRow(ctx: RouteContext): void {
  const csv = ctx.csv();
  const rows = ctx.rows();
  const part = rows.length ? cutInsideRow(csv, rows[Math.min(2, rows.length - 1)][0]) : csv.slice(0, csv.length >> 1);
  ctx.stall(200, {'Content-Type': 'text/csv', 'Content-Length': Buffer.byteLength(csv, 'utf8')}, part);
}

/**
 * No export was downloaded twice. An export may have no download at all: on a busy machine a create
 * can time out at the client after the server made it, and the connector creates another.
 */
function expectEachExportDownloadedOnce(server: Simulator): void {
  const downloads = server.exports().map((e) => e.downloads);
  expect(downloads.filter((n) => n > 1)).toEqual([]);
  expect(downloads).toContain(1);
}

describe('hostile service', () => {
  test.concurrent(
    'a. a download that stalls mid-row on every attempt (Content-Length announced, socket kept open) fails the stream as transient',
    async () => {
      await withServer({quests: [Q]}, async (server) => {
        server.on('download', stallMidRow);
        // The shortest idle timeout the config allows: the stream meets every setback of its budget.
        // All setbacks of a window take about 25 s idle: the hang bound is twice the others'.
        const run = await runHostile(server, 'read', {
          killAfterMs: KILL_MS + HANG_S * 1000,
          config: {request_timeout_seconds: 1},
        });
        expectOutcome(run, server, {
          code: 1,
          maxSeconds: 2 * HANG_S,
          failure: {type: 'transient_error', message: /stalled|no data for/i, questId: Q},
          failed: [Q],
        });
        expect(server.requests('download').length).toBeGreaterThan(0);
      });
    },
    TEST_MS + HANG_S * 1000
  );

  test.concurrent(
    'a. a window whose downloads send rows and then stall every time fails within the stall budget plus one idle timeout, its first stall counted',
    async () => {
      await withServer({quests: [Q]}, async (server) => {
        server.on('download', stallMidRow);
        // On the service's virtual clock: an idle timeout of 2 min, a stall budget of 5 min.
        const run = await runHostile(server, 'read', {killAfterMs: KILL_MS, config: {request_timeout_seconds: 120}});
        expectOutcome(run, server, {
          code: 1,
          maxSeconds: HANG_S,
          failure: {
            type: 'transient_error',
            message: /its downloads went \S+ min without a new row \(at most 5\.0 min are allowed\)/,
            questId: Q,
          },
          failed: [Q],
        });
        // The first stall, after the rows that came, is counted: 2 of the 5 minutes are gone after it.
        const again = logs(run).filter((l) => /downloading it again/.test(l.message));
        expect(again[0]?.message).toMatch(/\(3\.0 min of the 5\.0 min a window may go without new rows are left\)/);
        // Three stalls of 2 min, no split: within the budget plus one idle timeout of the first download.
        const downloads = server.requests('download');
        expect(downloads).toHaveLength(3);
        expect(run.exitedAt - downloads[0].at).toBeLessThanOrEqual(5 * 60_000 + 120_000);
      });
    },
    TEST_MS
  );

  test.concurrent(
    'a. when only the first download stalls mid-row and later ones are whole, every row arrives exactly once',
    async () => {
      await withServer({quests: [Q]}, async (server) => {
        server.on('download', (ctx) => (ctx.n > 1 ? ctx.next() : stallMidRow(ctx)));
        const run = await runHostile(server, 'read', {killAfterMs: KILL_MS});
        expectOutcome(run, server, {code: 0, maxSeconds: HANG_S, ok: [Q]});
        expect(server.requests('download').length).toBeGreaterThanOrEqual(2);
      });
    },
    TEST_MS
  );

  test.concurrent(
    'b. check fails on the request timeout (not the deadline of the whole check), naming auth_url and a timeout, when the token endpoint accepts the connection and never answers',
    async () => {
      await withServer({quests: [Q]}, async (server) => {
        server.on('token', () => {
          // Accept the request, never answer.
        });
        const run = await runHostile(server, 'check', {killAfterMs: KILL_MS});
        const judged = checkJudgement(run, server, HANG_S);
        expect(judged).toMatchObject({
          code: 0,
          killedByTest: false,
          withinTime: true,
          invalidLines: [],
          statuses: ['FAILED'],
          message: expect.stringMatching(/auth_url/),
          leaks: [],
        });
        expect(judged.message).toMatch(/time/i);
        // The request's own timeout ended it, not the check's deadline (LIMITS.check.deadlineMs).
        expect(judged.message).not.toMatch(/did not finish within/);
      });
    },
    TEST_MS
  );

  test.concurrent(
    'c. two 429 answers to create with an absurd X-RateLimit-Reset (999999999999) are retried soon (no announced wait over 10 s), the header is reported as ignored, and the read succeeds',
    async () => {
      await withServer({quests: [Q]}, async (server) => {
        server.on('create', (ctx) =>
          ctx.n <= 2
            ? ctx.problem(429, 'Too many requests', {
                'X-RateLimit-Limit': '0',
                'X-RateLimit-Remaining': '0',
                'X-RateLimit-Reset': '999999999999',
              })
            : ctx.next()
        );
        const run = await runHostile(server, 'read', {killAfterMs: KILL_MS});
        expectOutcome(run, server, {code: 0, maxSeconds: HANG_S, ok: [Q]});
        expect(server.requests('create').length).toBeGreaterThanOrEqual(3);
        const waits = announcedWaits(run.messages);
        expect(waits.length).toBeGreaterThanOrEqual(2);
        expect(waits.filter((w) => w.ms > 10_000)).toEqual([]);
        const said = logs(run).filter(
          (l) => /X-RateLimit-Reset/.test(l.message) && /ignor|not a sane|absurd/i.test(l.message)
        );
        expect(said.length).toBeGreaterThan(0);
      });
    },
    TEST_MS
  );

  test.concurrent(
    'd. log lines reach stdout while an export is still PENDING (for 5 s), not when the process ends',
    async () => {
      // Real time: the writer's flush within a tenth of a second is what this is about.
      await withServer({quests: [Q], clock: 'real'}, async (server) => {
        let completedAt: number | undefined;
        server.on('status', (ctx) => {
          if (ctx.job && ctx.now() - Date.parse(ctx.job.createdAt) < 5000) return ctx.jobStatus('PENDING');
          completedAt ??= ctx.now();
          return ctx.next();
        });
        const {live, done} = launch(server, 'read', {killAfterMs: KILL_MS});
        // Measured against the event (the export completing), not wall time, which load stretches.
        const pending = await live.waitForLine(
          (m) => m.type === 'LOG' && /export \S+ is PENDING/.test(JSON.stringify(m)),
          HANG_S * 1000
        );
        const run = await done;
        expect({
          seen: pending !== undefined,
          beforeTheExportCompleted: pending !== undefined && completedAt !== undefined && pending.at < completedAt,
        }).toEqual({seen: true, beforeTheExportCompleted: true});
        expectOutcome(run, server, {code: 0, maxSeconds: HANG_S, ok: [Q]});
      });
    },
    TEST_MS
  );

  test.concurrent(
    'e. a COMPLETED status redirecting into a 302 loop fails the stream as transient with a message about redirects',
    async () => {
      await withServer({quests: [Q]}, async (server) => {
        server.on('status', (ctx) => ctx.redirect(`/v1/quests/${ctx.questId}/exports/${ctx.exportId}/mirror`));
        server.on('other', (ctx) => (ctx.path.endsWith('/mirror') ? ctx.redirect(ctx.url.pathname) : ctx.next()));
        const run = await runHostile(server, 'read', {killAfterMs: KILL_MS});
        expectOutcome(run, server, {
          code: 1,
          maxSeconds: HANG_S,
          failure: {type: 'transient_error', message: /redirect/i, questId: Q},
          failed: [Q],
        });
      });
    },
    TEST_MS
  );

  test.concurrent(
    'f. a download answered with 204 No Content fails the stream as transient, naming the 204',
    async () => {
      await withServer({quests: [Q]}, async (server) => {
        server.on('download', (ctx) => ctx.send(204));
        const run = await runHostile(server, 'read', {killAfterMs: KILL_MS});
        expectOutcome(run, server, {
          code: 1,
          maxSeconds: HANG_S,
          failure: {type: 'transient_error', message: /204/, questId: Q},
          failed: [Q],
        });
      });
    },
    TEST_MS
  );

  test.concurrent(
    'g. an HTML error page served as application/octet-stream, with a catalog schema of no properties, is not read as CSV: transient failure naming HTML, no record',
    async () => {
      await withServer({quests: [Q]}, async (server) => {
        server.on('download', (ctx) => ctx.send(200, HTML_PAGE, {'Content-Type': 'application/octet-stream'}));
        const run = await runHostile(server, 'read', {
          catalog: catalogOf(server, [Q], {properties: false}),
          killAfterMs: KILL_MS,
        });
        expectOutcome(run, server, {
          code: 1,
          maxSeconds: HANG_S,
          failure: {type: 'transient_error', message: /HTML/i, questId: Q},
          failed: [Q],
        });
        expect(records(run.messages)).toEqual([]);
      });
    },
    TEST_MS
  );

  test.concurrent(
    'h. a gzip download whose Content-Length is the compressed size yields both rows once, with one download per export',
    async () => {
      const rows = rowsAt([
        [2, 'First, "gzipped" | row'],
        [1, 'Second row'],
      ]);
      await withServer({quests: [{id: Q, rows}]}, async (server) => {
        server.on('download', (ctx) =>
          ctx.send(200, gzip(ctx.csv()), {'Content-Type': 'text/csv', 'Content-Encoding': 'gzip'})
        );
        const run = await runHostile(server, 'read', {killAfterMs: KILL_MS});
        expectOutcome(run, server, {code: 0, maxSeconds: HANG_S, ok: [Q]});
        expect(records(run.messages)).toHaveLength(2);
        expectEachExportDownloadedOnce(server);
      });
    },
    TEST_MS
  );

  test.concurrent(
    'h. a gzip download of a header-only export yields no record, a STATE, and exactly one download per export',
    async () => {
      await withServer({quests: [{id: Q, rows: []}]}, async (server) => {
        server.on('download', (ctx) =>
          ctx.send(200, gzip(ctx.csv()), {'Content-Type': 'text/csv', 'Content-Encoding': 'gzip'})
        );
        const run = await runHostile(server, 'read', {config: PATIENT, killAfterMs: KILL_MS});
        expectOutcome(run, server, {code: 0, maxSeconds: HANG_S, ok: [Q]});
        expect(records(run.messages)).toHaveLength(0);
        expect(server.exports().length).toBeGreaterThan(0);
        expectEachExportDownloadedOnce(server);
        expect(server.requests('download')).toHaveLength(server.exports().length);
      });
    },
    TEST_MS
  );

  test.concurrent(
    'i. a UTF-16LE export with a BOM is decoded: the records equal the data and no value holds U+0000',
    async () => {
      await withServer({quests: [Q]}, async (server) => {
        server.on('download', (ctx) =>
          ctx.send(200, Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(ctx.csv({bom: ''}), 'utf16le')]), {
            'Content-Type': 'text/csv',
          })
        );
        const run = await runHostile(server, 'read', {killAfterMs: KILL_MS});
        expectOutcome(run, server, {code: 0, maxSeconds: HANG_S, ok: [Q]});
        expect(records(run.messages).length).toBeGreaterThan(0);
        expect(run.stdout.split('\n').filter((l) => l.includes('"RECORD"') && l.includes('\\u0000'))).toEqual([]);
      });
    },
    TEST_MS
  );

  test.concurrent(
    'i. an ISO-8859-1 export without BOM keeps ø and å and says in a WARN log which encoding it fell back to',
    async () => {
      const rows = rowsAt([
        [2, 'Blåbærsyltetøy'],
        [1, 'Søt og god, på ære'],
      ]);
      await withServer({quests: [{id: Q, rows}]}, async (server) => {
        server.on('download', (ctx) =>
          ctx.send(200, Buffer.from(ctx.csv({bom: ''}), 'latin1'), {'Content-Type': 'text/csv'})
        );
        const run = await runHostile(server, 'read', {killAfterMs: KILL_MS});
        expectOutcome(run, server, {code: 0, maxSeconds: HANG_S, ok: [Q]});
        expect(records(run.messages).map((r) => r.record.data.q1_comment)).toEqual([
          'Blåbærsyltetøy',
          'Søt og god, på ære',
        ]);
        expect(logs(run).filter((l) => l.level === 'WARN' && /windows-1252|latin/i.test(l.message))).not.toEqual([]);
      });
    },
    TEST_MS
  );

  /** 200 KB of valid UTF-8 (four long answers with non-ASCII text), then a row holding `bad` (U+FFFD become invalid bytes). */
  const afterValidUtf8 = (bad: string): Row[] =>
    rowsAt([
      [2.5, 'Ærlig talt: ' + 'ålreit svar, '.repeat(4000)],
      [2, 'Ærlig talt: ' + 'ålreit svar, '.repeat(4000)],
      [1.5, 'Ærlig talt: ' + 'ålreit svar, '.repeat(4000)],
      [1, 'Ærlig talt: ' + 'ålreit svar, '.repeat(4000)],
      [0.5, bad],
    ]);

  test.concurrent(
    'i. an export valid UTF-8 for 200 KB and then over 1000 invalid byte sequences fails as transient, naming UTF-8, with no STATE',
    async () => {
      const rows = afterValidUtf8(Array.from({length: 1200}, () => '\uFFFD').join('a'));
      const file = utf8WithInvalidBytes(csvText(HEADER, rows));
      expect(file.indexOf(0xff)).toBeGreaterThan(200 * 1024);
      expect(file.filter((b) => b === 0xff)).toHaveLength(1200);
      await withServer({quests: [{id: Q, rows}]}, async (server) => {
        server.on('download', (ctx) => ctx.send(200, utf8WithInvalidBytes(ctx.csv()), {'Content-Type': 'text/csv'}));
        const run = await runHostile(server, 'read', {killAfterMs: KILL_MS});
        expectOutcome(run, server, {
          code: 1,
          maxSeconds: HANG_S,
          failure: {type: 'transient_error', message: /UTF-8/, questId: Q},
          failed: [Q],
        });
      });
    },
    TEST_MS
  );

  test.concurrent(
    'i. an export valid UTF-8 for 200 KB and then exactly 1 invalid byte succeeds, warns of 1 invalid UTF-8 sequence, and the cell holds U+FFFD',
    async () => {
      const rows = afterValidUtf8('one bad \uFFFD byte');
      const file = utf8WithInvalidBytes(csvText(HEADER, rows));
      expect(file.indexOf(0xff)).toBeGreaterThan(200 * 1024);
      expect(file.filter((b) => b === 0xff)).toHaveLength(1);
      await withServer({quests: [{id: Q, rows}]}, async (server) => {
        server.on('download', (ctx) => ctx.send(200, utf8WithInvalidBytes(ctx.csv()), {'Content-Type': 'text/csv'}));
        const run = await runHostile(server, 'read', {killAfterMs: KILL_MS});
        expectOutcome(run, server, {code: 0, maxSeconds: HANG_S, ok: [Q]});
        expect(records(run.messages).map((r) => r.record.data.q1_comment)).toContain('one bad \uFFFD byte');
        expect(logs(run).filter((l) => l.level === 'WARN' && /1 invalid UTF-8/i.test(l.message))).not.toEqual([]);
      });
    },
    TEST_MS
  );

  /** A token endpoint that answers 400 and echoes the raw form body and base64 forms of the credentials. */
  const echoSecrets = (server: Simulator): void => {
    server.on('token', (ctx) =>
      ctx.problem(
        400,
        `could not parse request: ${ctx.body} (authorization Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}, secret ${Buffer.from(CLIENT_SECRET).toString('base64')})`
      )
    );
  };

  test.concurrent(
    'j. check reports FAILED without printing the secret in any form when the token endpoint echoes the request body and base64 credentials',
    async () => {
      await withServer({quests: [Q]}, async (server) => {
        echoSecrets(server);
        const run = await runHostile(server, 'check', {killAfterMs: KILL_MS});
        expect(server.requests('token').length).toBeGreaterThan(0);
        expect(server.requests('token')[0].body).toContain(new URLSearchParams({s: CLIENT_SECRET}).toString().slice(2));
        expect(checkJudgement(run, server, HANG_S)).toEqual({
          code: 0,
          killedByTest: false,
          withinTime: true,
          invalidLines: [],
          statuses: ['FAILED'],
          message: expect.any(String),
          leaks: [],
        });
      });
    },
    TEST_MS
  );

  test.concurrent(
    'j. read fails with a config_error without printing the secret in any form when the token endpoint echoes the request body and base64 credentials',
    async () => {
      await withServer({quests: [Q]}, async (server) => {
        echoSecrets(server);
        const run = await runHostile(server, 'read', {killAfterMs: KILL_MS});
        expectOutcome(run, server, {
          code: 1,
          maxSeconds: HANG_S,
          failure: {type: 'config_error', message: /token|client|credential/i},
          failed: [Q],
        });
      });
    },
    TEST_MS
  );

  test.concurrent(
    'k. check fails, mentioning the redirect, when the invitations endpoint answers 302 to a login page',
    async () => {
      await withServer({quests: [Q]}, async (server) => {
        server.on('invitations', (ctx) =>
          ctx.redirect(`${server.origin}/login?ReturnUrl=${encodeURIComponent(ctx.url.pathname)}`)
        );
        server.on('other', (ctx) =>
          ctx.path === '/login' ? ctx.send(200, HTML_PAGE, {'Content-Type': 'text/html; charset=utf-8'}) : ctx.next()
        );
        const run = await runHostile(server, 'check', {killAfterMs: KILL_MS});
        expect(checkJudgement(run, server, HANG_S)).toEqual({
          code: 0,
          killedByTest: false,
          withinTime: true,
          invalidLines: [],
          statuses: ['FAILED'],
          message: expect.stringMatching(/302|redirect/i),
          leaks: [],
        });
      });
    },
    TEST_MS
  );

  test.concurrent(
    'k. check fails, naming HTML, when the invitations endpoint answers 200 with an HTML page',
    async () => {
      await withServer({quests: [Q]}, async (server) => {
        server.on('invitations', (ctx) => ctx.send(200, HTML_PAGE, {'Content-Type': 'text/html; charset=utf-8'}));
        const run = await runHostile(server, 'check', {killAfterMs: KILL_MS});
        expect(checkJudgement(run, server, HANG_S)).toEqual({
          code: 0,
          killedByTest: false,
          withinTime: true,
          invalidLines: [],
          statuses: ['FAILED'],
          message: expect.stringMatching(/HTML/i),
          leaks: [],
        });
      });
    },
    TEST_MS
  );

  test.concurrent(
    'l. a configured catalog listing the same stream twice is a config_error before any request reaches the service',
    async () => {
      await withServer({quests: [Q]}, async (server) => {
        const run = await runHostile(server, 'read', {catalog: catalogOf(server, [Q, Q]), killAfterMs: KILL_MS});
        expectOutcome(run, server, {
          code: 1,
          maxSeconds: HANG_S,
          failure: {type: 'config_error', message: /twice|more than once|duplicate/i},
          failed: [Q],
        });
        expect(server.requests().map((r) => `${r.method} ${r.path}`)).toEqual([]);
      });
    },
    TEST_MS
  );

  const alreadyGenerating = (questId: string | undefined): string =>
    `An export for quest '${questId}' is already being generated`;

  test.concurrent(
    'm. two 409 "already being generated" answers to create are waited out: every row once, and the wait is logged',
    async () => {
      await withServer({quests: [Q]}, async (server) => {
        server.on('create', (ctx) => (ctx.n <= 2 ? ctx.problem(409, alreadyGenerating(ctx.questId)) : ctx.next()));
        const run = await runHostile(server, 'read', {killAfterMs: KILL_MS});
        expectOutcome(run, server, {code: 0, maxSeconds: HANG_S, ok: [Q]});
        expect(server.requests('create').length).toBeGreaterThanOrEqual(3);
        expect(logs(run).filter((l) => /409|already being generated/i.test(l.message))).not.toEqual([]);
      });
    },
    TEST_MS
  );

  test.concurrent(
    'm. 409 "already being generated" forever, with export_timeout_minutes 0.1, fails the stream as transient',
    async () => {
      await withServer({quests: [Q]}, async (server) => {
        server.on('create', (ctx) => ctx.problem(409, alreadyGenerating(ctx.questId)));
        const run = await runHostile(server, 'read', {config: {export_timeout_minutes: 0.1}, killAfterMs: KILL_MS});
        expectOutcome(run, server, {
          code: 1,
          maxSeconds: HANG_S,
          failure: {type: 'transient_error', message: /already being generated|409/i, questId: Q},
          failed: [Q],
        });
      });
    },
    TEST_MS
  );
});
