// Exactly once whatever order the service lists rows in, counts that add up, and the wrong verdicts
// of the third hostile pass that belong to the sync core: the connector in-process against a hostile
// service of its own per case, judged on exit code, failure type, exact rows, STATE counts and secrets.

import {AirbyteMessageJson} from '../helpers/protocol';
import {streamOf} from '../helpers/fixtures';
import {
  catalogOf,
  DAY_MS,
  expectOutcome,
  HostileRun,
  logs,
  Row,
  rowsAt,
  runHostile,
  withServer,
} from '../helpers/hostile';
import {csvText} from '../../simulator';

const Q = '1b4e28ba-2fa1-41d2-883f-0016d3cca427';
const Q2 = '2c5f39cb-3ab2-42e3-994f-1127d4ddb538';

/** A length-delimited answer whose connection closes after `cut` bytes of the body: a cut-off download. */
function cutAt(body: string, cut: number): Buffer {
  const bytes = Buffer.from(body, 'utf8');
  return Buffer.concat([
    Buffer.from(`HTTP/1.1 200 OK\r\nContent-Type: text/csv\r\nContent-Length: ${bytes.length}\r\n\r\n`, 'latin1'),
    bytes.subarray(0, cut),
  ]);
}

/** The export's CSV with its rows in another order: the rows at the given positions. */
function reorder(header: string[], rows: Row[], order: number[]): string {
  return csvText(
    header,
    order.map((i) => rows[i])
  );
}

/** Every STATE's count must equal the records of its stream since that stream's previous STATE. */
function countProblems(messages: AirbyteMessageJson[]): string[] {
  const problems: string[] = [];
  const since = new Map<string, number>();
  for (const m of messages) {
    const msg = m as unknown as {
      type: string;
      record?: {stream: string};
      state?: {stream: {stream_descriptor: {name: string}}; sourceStats?: {recordCount?: number}};
    };
    if (msg.type === 'RECORD' && msg.record) since.set(msg.record.stream, (since.get(msg.record.stream) ?? 0) + 1);
    if (msg.type === 'STATE' && msg.state) {
      const name = msg.state.stream.stream_descriptor.name;
      const count = msg.state.sourceStats?.recordCount;
      if (count !== (since.get(name) ?? 0))
        problems.push(`STATE of ${name} counts ${count}, ${since.get(name) ?? 0} records came before it`);
      since.set(name, 0);
    }
  }
  return problems;
}

const FOUR = rowsAt([
  [2.5, 'A'],
  [2, 'B'],
  [1.5, 'C'],
  [1, 'D'],
]);

describe('exactly once whatever order the rows come in', () => {
  test.concurrent(
    'a download cut after A,B,C and a re-download listing A,D,C,B: each row once, counts add up',
    async () => {
      await withServer({quests: [{id: Q, rows: FOUR}]}, async (server) => {
        server.on('download', (ctx) => {
          const rows = ctx.rows();
          if (ctx.n === 1) {
            const csv = ctx.csv();
            ctx.raw(cutAt(csv, Buffer.byteLength(csv) - 3), true);
          } else ctx.send(200, reorder(ctx.header(), rows, [0, 3, 2, 1]), {'Content-Type': 'text/csv'});
        });
        const run = await runHostile(server, 'read', {killAfterMs: 40_000});
        expectOutcome(run, server, {code: 0, maxSeconds: 35, ok: [Q]});
        expect(server.requests('download').length).toBe(2);
        expect(countProblems(run.messages)).toEqual([]);
      });
    },
    60_000
  );

  test.concurrent(
    'a cut-off, then a gone file (410), then a new export listing the rows in another order: each row once',
    async () => {
      await withServer({quests: [{id: Q, rows: FOUR}]}, async (server) => {
        server.on('download', (ctx) => {
          const rows = ctx.rows();
          if (ctx.n === 1) {
            const csv = ctx.csv();
            ctx.raw(cutAt(csv, Buffer.byteLength(csv) - 3), true);
          } else if (ctx.n === 2) ctx.problem(410, 'The export file has expired.');
          else ctx.send(200, reorder(ctx.header(), rows, [3, 1, 2, 0]), {'Content-Type': 'text/csv'});
        });
        const run = await runHostile(server, 'read', {killAfterMs: 40_000});
        expectOutcome(run, server, {code: 0, maxSeconds: 35, ok: [Q]});
        expect(server.exports().length).toBe(2);
        expect(countProblems(run.messages)).toEqual([]);
      });
    },
    60_000
  );

  test.concurrent(
    'a window cut off three times after a few rows is split, and its halves list same-millisecond ties in another order: each row once',
    async () => {
      // 40 responses at four instants: ties the service may list in any order.
      const base = Date.now() - 2 * DAY_MS;
      const rows: Row[] = Array.from({length: 40}, (_, i) => [
        `R-${7001 + i}`,
        new Date(base + (i % 4) * 3_600_000).toISOString(),
        `tie ${i}`,
        String((i % 5) + 1),
      ]);
      await withServer({quests: [{id: Q, rows}]}, async (server) => {
        server.on('download', (ctx) => {
          const mine = ctx.rows();
          if (ctx.job?.seq === 1) {
            // The whole window's export: always cut after its first rows.
            const csv = ctx.csv();
            return ctx.raw(cutAt(csv, Math.floor(Buffer.byteLength(csv) / 4)), true);
          }
          const order = mine.map((_, i) => mine.length - 1 - i);
          return ctx.send(200, reorder(ctx.header(), mine, order), {'Content-Type': 'text/csv'});
        });
        const run = await runHostile(server, 'read', {killAfterMs: 60_000});
        expectOutcome(run, server, {code: 0, maxSeconds: 55, ok: [Q]});
        expect(server.exports().length).toBeGreaterThanOrEqual(3);
        expect(countProblems(run.messages)).toEqual([]);
      });
    },
    90_000
  );

  test.concurrent(
    'STATE counts add up over many windows and an export far above the target',
    async () => {
      const rows = rowsAt(
        Array.from({length: 1500}, (_, i): [number, string] => [2.9 - (i * 2.8) / 1500, `answer ${i}`])
      );
      await withServer(
        {
          quests: [
            {id: Q, rows},
            {id: Q2, rows: rowsAt([[1, 'x']])},
          ],
        },
        async (server) => {
          const run = await runHostile(server, 'read', {config: {target_rows_per_export: 100}, killAfterMs: 50_000});
          expectOutcome(run, server, {code: 0, maxSeconds: 45, ok: [Q, Q2]});
          expect(countProblems(run.messages)).toEqual([]);
          expect(run.messages.filter((m) => m.type === 'STATE').length).toBeGreaterThan(3);
        }
      );
    },
    60_000
  );
});

describe('wrong verdicts of the sync core', () => {
  test.concurrent(
    'an export without the Response ID column, which the catalog has as primary key: the stream fails naming it, no record',
    async () => {
      const header = ['Created', 'Q1 Comment', 'Q2 Rating'];
      const rows = rowsAt([[1, 'a']]).map((r) => r.slice(1));
      await withServer({quests: [{id: Q}]}, async (server) => {
        const catalog = catalogOf(server) as {streams: Record<string, unknown>[]};
        for (const s of catalog.streams) s.primary_key = [['response_id']];
        server.on('download', (ctx) => ctx.send(200, csvText(header, rows), {'Content-Type': 'text/csv'}));
        const run = await runHostile(server, 'read', {catalog, killAfterMs: 30_000});
        expectOutcome(run, server, {
          code: 1,
          maxSeconds: 25,
          failure: {
            type: 'config_error',
            message: /first line of the export of .* has no Response ID column/,
            questId: Q,
          },
        });
        expect(run.messages.filter((m) => m.type === 'RECORD')).toEqual([]);
      });
    },
    60_000
  );

  test.concurrent(
    'every quest inaccessible with skip_inaccessible_quests on: config_error naming the cause, exit 1',
    async () => {
      await withServer({quests: [{id: Q}, {id: Q2}]}, async (server) => {
        server.on('create', (ctx) => ctx.problem(403, 'The API user has no access to this quest.'));
        const run = await runHostile(server, 'read', {config: {skip_inaccessible_quests: true}, killAfterMs: 30_000});
        expectOutcome(run, server, {
          code: 1,
          maxSeconds: 25,
          failure: {type: 'config_error', message: /None of the 2 configured quest\(s\) could be read.*access/},
          failed: [Q, Q2],
        });
      });
    },
    60_000
  );

  test.concurrent(
    'a column that first appears in a later window: a warning naming it and the schema refresh',
    async () => {
      await withServer({quests: [{id: Q, rows: FOUR}]}, async (server) => {
        const edited = Date.now() - 1.7 * DAY_MS;
        server.on('download', (ctx) => {
          if (!ctx.job || Date.parse(String(ctx.job.until)) <= edited) return ctx.next();
          const header = [...ctx.header(), 'Q3 New question'];
          return ctx.send(
            200,
            csvText(
              header,
              ctx.rows().map((r) => [...r, 'new answer'])
            ),
            {'Content-Type': 'text/csv'}
          );
        });
        const run = await runHostile(server, 'read', {config: {window_days: 1}, killAfterMs: 40_000});
        expectOutcome(run, server, {code: 0, maxSeconds: 35});
        const warnings = logs(run)
          .filter((l) => l.level === 'WARN')
          .map((l) => l.message);
        expect(warnings).toEqual(
          expect.arrayContaining([expect.stringMatching(/later window.*"q3_new_question".*refresh source schema/i)])
        );
      });
    },
    60_000
  );

  test.concurrent.each([
    [
      'a GLOBAL state',
      {type: 'GLOBAL', global: {shared_state: {cursor: '2030-01-01T00:00:00.000Z'}, stream_states: []}},
      /GLOBAL state/,
    ],
    [
      'a state of another connector',
      [{type: 'STREAM', stream: {stream_descriptor: {name: 'issues'}, stream_state: {updated_at: 5}}}],
      /"issues"/,
    ],
  ])(
    '%s is ignored with a warning naming it, and everything is read',
    async (_name, state, named) => {
      await withServer({quests: [{id: Q}]}, async (server) => {
        const run: HostileRun = await runHostile(server, 'read', {state, killAfterMs: 30_000});
        expectOutcome(run, server, {code: 0, maxSeconds: 25, ok: [Q]});
        const warnings = logs(run)
          .filter((l) => l.level === 'WARN')
          .map((l) => l.message);
        expect(warnings).toEqual(expect.arrayContaining([expect.stringMatching(named)]));
        expect(run.messages.some((m) => m.type === 'STATE' && JSON.stringify(m).includes(streamOf(Q)))).toBe(true);
      });
    },
    60_000
  );
});
