// Issue 24, against the simulator in-process: one quest failing mid-window among others in the
// combined layout, and a service that cuts window bounds to whole seconds. Each case with the exact
// rows of every attempt, the exit code and the message.

import fs from 'fs';

import {errorTraces, LiveRun, logLines, records, RunResult, stateFile, states} from '../helpers/connector';
import {questEntries, responses} from '../helpers/combined';
import {answerRecords} from '../helpers/long';
import {simCatalog, simConfig, streamOf, withWorld} from '../helpers/fixtures';
import {exportSettings} from '../../src/api/client';
import {parseConfig} from '../../src/core/config';
import {sinceForStartDate} from '../../src/core/time';
import {exportFingerprint, exportSeal} from '../../src/sync/state/stream-state';
import {discovered, isResponseStream} from '../helpers/streams';

const DAY = 86_400_000;
const QUESTS = ['b3e70000-0000-4000-8000-00000000000a', 'b3e70000-0000-4000-8000-00000000000b'];
const [A, B] = QUESTS;
const C = 'b3e70000-0000-4000-8000-00000000000c';
const D = 'b3e70000-0000-4000-8000-00000000000d';

const logs = (run: RunResult): string[] => logLines(run.messages).map((l) => l.message);

test('combined: a quest whose file breaks mid-way fails; the STATEs after it list the rows it emitted, and the next attempt sends exactly the rest', async () => {
  const first = Date.now() - 5 * DAY;
  await withWorld(
    {
      seed: 24,
      exportDurationMs: 30,
      // One rating column: no cell holds a line break, so the file's lines are its rows.
      quests: [A, B, C, D].map((id, i) =>
        id === B
          ? // Rows are handed on in batches of 256 KiB: B's first window holds several.
            {id, columns: 1, createdAt: Array.from({length: 9_000}, (_, r) => first + r * 5_000)}
          : {id, rows: 30 + i, columns: 1, firstCreatedAt: new Date(first).toISOString()}
      ),
    },
    async (world) => {
      const {sim} = world;
      const config = world.config({
        stream_layout: 'combined',
        start_date: new Date(first - 3_600_000).toISOString(),
        window_days: 1,
      });
      const catalog = await world.discoveredCatalog(config, 'incremental');
      let broken = false;
      // B's first download: 8,000 good rows, then (once some of them reached the output) a row with a cell too many.
      let fileRows: string[] = [];
      sim.on('download', async (ctx) => {
        if (ctx.questId !== B || broken) return ctx.next();
        broken = true;
        const lines = ctx.csv().split('\r\n');
        fileRows = ctx.rows().map((r) => r[0]);
        ctx.res.writeHead(200, {'Content-Type': 'text/csv; charset=utf-8'});
        ctx.res.write(`${lines.slice(0, 8_001).join('\r\n')}\r\n`);
        // Not before a batch of B's rows is out: the break then surely comes after emitted rows.
        await live.waitForLine((m) => m.type === 'RECORD' && responses([m as never])[0]?.quest_id === B, 120_000);
        ctx.res.end(`${lines[8_001]}|a cell too many\r\n`);
      });
      const args = ['read', '--config', config, '--catalog', catalog];
      const live: LiveRun = world.start(args);
      const one = await live.done;
      expect(one.code).toBe(1);
      const trace = errorTraces(one.messages).map((t) => t.trace.error);
      expect(trace).toEqual([
        expect.objectContaining({
          failure_type: 'transient_error',
          message: expect.stringMatching(
            new RegExp(
              `^Stream responses: 1 of 4 quest\\(s\\) failed \\(${B}: The export of quest ${B} for window .* is not valid CSV: Wrong number of cells`
            )
          ),
        }),
      ]);
      // The rows of the 256 KiB batches before the broken row: a prefix of the file's 8,000 good rows. All
      // of them when the connector read them all before the broken row came (a busy machine: the break is
      // sent once the test saw B's first row, and the connector goes on meanwhile); the rest then come in
      // the next attempt all the same.
      const sentB = responses(one)
        .filter((r) => r.quest_id === B)
        .map((r) => r.response_id);
      expect(sentB.length).toBeGreaterThan(0);
      expect(sentB).toEqual(fileRows.slice(0, sentB.length));
      expect(sentB.length).toBeLessThanOrEqual(8_000);
      expect(logs(one)).toContainEqual(
        expect.stringMatching(
          new RegExp(
            `^Stream responses: quest ${B} failed after emitting ${sentB.length} rows of window .* that no STATE has committed yet; the stream's next STATE lists their ids, so the next sync skips them and sends the rest of the window\\.$`
          )
        )
      );
      // The others went on: every STATE after B's rows lists them (and commits them).
      const all = one.messages.filter((m) => m.type === 'RECORD' || m.type === 'STATE');
      const afterB = all.slice(all.findIndex((m) => m.type === 'RECORD' && responses([m as never])[0]?.quest_id === B));
      const later = states(afterB).filter((s) => s.state.stream.stream_descriptor.name === 'responses');
      expect(later.length).toBeGreaterThan(0);
      for (const s of later) {
        const entry = (s.state.stream.stream_state as unknown as {quests: Record<string, {emitted?: {keys: string[]}}>})
          .quests[B];
        expect(entry.emitted?.keys).toEqual(sentB);
      }
      for (const q of [A, C, D]) {
        expect(
          responses(one)
            .filter((r) => r.quest_id === q)
            .map((r) => r.response_id)
        ).toEqual(sim.groundTruth(q).rows.map((r) => r[0]));
      }

      const two = await world.run([...args, '--state', world.file(stateFile(one.messages))]);
      expect(two.code).toBe(0);
      const sentOnce = new Set(sentB);
      expect(responses(two).map((r) => [r.quest_id, r.response_id])).toEqual(
        sim
          .groundTruth(B)
          .rows.map((r) => [B, r[0]])
          .filter(([, id]) => !sentOnce.has(id))
      );
      expect(questEntries(stateFile(two.messages))[B]).not.toHaveProperty('emitted');
    }
  );
});

test.each([['until'], ['both']] as const)(
  'a service that cuts the filter to whole seconds (%s): responses 500 ms around window ends are each emitted once',
  async (filterSeconds) => {
    const start = Math.floor((Date.now() - 5 * DAY) / 1000) * 1000;
    // The connector's windows end on whole seconds: since0 = start - 1 ms, the first window ends at
    // start + 1 day - 1 s. Before the fix they ended at start + k days - 1 ms.
    const end1 = start + DAY - 1000;
    const createdAt = [
      start + 3_600_000,
      end1 - 500,
      end1,
      end1 + 500,
      start + DAY - 501,
      start + DAY - 1,
      start + 2 * DAY - 1500,
      start + 2 * DAY - 501,
      start + 3 * DAY - 2,
    ].sort((a, b) => a - b);
    await withWorld(
      {seed: 25, exportDurationMs: 30, dialect: {filterSeconds}, quests: [{id: A, createdAt, columns: 2}]},
      async (world) => {
        const {sim} = world;
        const config = world.config({start_date: new Date(start).toISOString(), window_days: 1, quest_ids: [A]});
        const catalog = await world.discoveredCatalog(config, 'incremental');
        const run = await world.run(['read', '--config', config, '--catalog', catalog]);
        expect(run.code).toBe(0);
        const got = records(run.messages)
          .filter((r) => r.record.stream === streamOf(A))
          .map((r) => r.record.data.response_id as string);
        expect(got).toEqual(sim.groundTruth(A).rows.map((r) => r[0]));
        expect(got).toHaveLength(createdAt.length);
        // Every window the connector asked for ends on a whole second.
        const untils = sim.requests('create').map((r) => JSON.parse(r.body).filter.until as string);
        expect(untils.filter((u) => !u.endsWith(':00.000Z') && !/\.000Z$/.test(u))).toEqual([]);
      }
    );
  }
);

describe('exports recorded by an earlier attempt', () => {
  const start = Date.now() - 6 * DAY;
  const world24 = (dialect = {}) => ({
    seed: 26,
    exportDurationMs: 30,
    dialect,
    quests: [A, B].map((id, i) => ({
      id,
      rows: 20 + i,
      columns: 2,
      firstCreatedAt: new Date(start + DAY).toISOString(),
    })),
  });
  type Recorded = {export_id: string; since: string; until: string; settings: string};
  const exportsOf = (state: ReturnType<typeof stateFile>, q: string): Recorded[] =>
    (
      (state.find((s) => s.stream.stream_descriptor.name === streamOf(q))?.stream.stream_state ?? {}) as {
        exports?: Recorded[];
      }
    ).exports ?? [];
  const ids = (run: RunResult, q: string): string[] =>
    records(run.messages)
      .filter((r) => r.record.stream === streamOf(q))
      .map((r) => String(r.record.data.response_id));

  /** A first attempt whose downloads answer 500 for good: it fails, and its state records an export per quest. */
  async function failedFirst(world: Awaited<ReturnType<typeof import('../helpers/fixtures').startWorld>>, extra = {}) {
    const config = world.config({start_date: new Date(start).toISOString(), ...extra});
    // The quests' streams only: the columns stream's header samples would blur the count of exports.
    const discovered = JSON.parse(fs.readFileSync(await world.discoveredCatalog(config, 'incremental'), 'utf8'));
    const catalog = world.file({
      streams: discovered.streams.filter((s: {stream: {name: string}}) => s.stream.name !== 'columns'),
    });
    world.sim.on('download', (ctx) => ctx.problem(500, 'The file store is down.'));
    const args = ['read', '--config', config, '--catalog', catalog];
    const one = await world.run(args);
    expect(one.code).toBe(1);
    world.sim.on('download', (ctx) => ctx.next());
    const state = stateFile(one.messages);
    for (const q of [A, B]) expect(exportsOf(state, q)).toHaveLength(1);
    return {args, state, one};
  }

  test('two quests whose recorded export ids were swapped by hand re-use neither: each stream gets its own rows, exactly once', async () => {
    // The service resolves an export id under any quest's path: only the connector can tell them apart.
    await withWorld(world24({exportsUnderAnyQuest: true}), async (world) => {
      const {sim} = world;
      const {args, state, one} = await failedFirst(world);
      expect(ids(one, A)).toEqual([]);
      const [ofA, ofB] = [exportsOf(state, A), exportsOf(state, B)];
      const stateOf = (q: string) =>
        state.find((s) => s.stream.stream_descriptor.name === streamOf(q))?.stream.stream_state as unknown as {
          exports: Recorded[];
        };
      [stateOf(A).exports, stateOf(B).exports] = [ofB, ofA];
      const two = await world.run([...args, '--state', world.file(state)]);
      expect(two.code).toBe(0);
      for (const q of [A, B]) expect(ids(two, q)).toEqual(sim.groundTruth(q).rows.map((r) => r[0]));
      const crossed = sim
        .requests()
        .filter(
          (r) =>
            (r.questId === A && r.exportId === ofB[0].export_id) || (r.questId === B && r.exportId === ofA[0].export_id)
        );
      expect(crossed).toEqual([]);
    });
  });

  test.each([
    ['403 for good', 403, Infinity],
    ['404 for good', 404, Infinity],
    ['500 for good', 500, Infinity],
    ['a 500 blip of 2 answers', 500, 2],
  ])(
    'one whose status answers %s, skip_inaccessible_quests on: dropped with a warning and exported anew (a blip: re-used)',
    async (_what, status, times) => {
      await withWorld(world24(), async (world) => {
        const {sim} = world;
        const {args, state} = await failedFirst(world, {skip_inaccessible_quests: true});
        const old = new Set([A, B].map((q) => exportsOf(state, q)[0].export_id));
        const before = sim.exports().length;
        let answered = 0;
        sim.on('status', (ctx) =>
          ctx.exportId && old.has(ctx.exportId) && answered++ < times * 2
            ? ctx.problem(status, status === 403 ? 'The client has no access to this export.' : 'Failed.')
            : ctx.next()
        );
        const two = await world.run([...args, '--state', world.file(state)]);
        expect(two.code).toBe(0);
        for (const q of [A, B]) expect(ids(two, q)).toEqual(sim.groundTruth(q).rows.map((r) => r[0]));
        const warnings = logs(two).filter((l) => l.includes('the export of an earlier attempt is not re-used'));
        if (times === Infinity) {
          expect([...warnings].sort()).toEqual(
            [A, B].map((q) =>
              expect.stringMatching(
                new RegExp(
                  `^Quest ${q}: export ${exportsOf(state, q)[0].export_id} ${status === 404 ? 'vanished while it was generated \\(HTTP 404 on its status\\)' : `cannot be had: .*${status}.*`}; the export of an earlier attempt is not re-used, its window is exported anew\\.$`
                )
              )
            )
          );
        }
        // New exports of the recorded windows (the rest of the span, past them, is a new window either way).
        const recordedSince = new Set([A, B].map((q) => exportsOf(state, q)[0].since));
        const again = sim
          .exports()
          .slice(before)
          .filter((e) => e.since !== undefined && recordedSince.has(e.since));
        expect(again).toHaveLength(times === Infinity ? 2 : 0);
        if (times !== Infinity) expect(warnings).toEqual([]);
        for (const q of [A, B]) expect(exportsOf(stateFile(two.messages), q)).toEqual([]);
      });
    }
  );
});

test('a state listing 10,000 recorded exports (edited by hand, all unknown to the service) costs max_concurrent_exports polls and small STATEs', async () => {
  const start = Math.floor((Date.now() - 6 * DAY) / 1000) * 1000;
  await withWorld(
    {
      seed: 27,
      exportDurationMs: 30,
      quests: [{id: A, rows: 40, columns: 2, firstCreatedAt: new Date(start + DAY).toISOString()}],
    },
    async (world) => {
      const {sim} = world;
      const raw = {...simConfig(sim), start_date: new Date(start).toISOString(), quest_ids: [A]};
      const config = world.file(raw);
      const parsed = parseConfig(raw, Date.now()).config;
      const digest = exportFingerprint(parsed.api_url, exportSettings(parsed));
      const cursor = sinceForStartDate(start);
      const exports = Array.from({length: 10_000}, (_, i) => {
        const id = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
        return {
          export_id: id,
          since: new Date(cursor + i * 60_000).toISOString(),
          until: new Date(cursor + (i + 1) * 60_000).toISOString(),
          settings: exportSeal(digest, A, id),
        };
      });
      const state = [
        {
          type: 'STREAM',
          stream: {
            stream_descriptor: {name: streamOf(A)},
            stream_state: {cursor: new Date(cursor).toISOString(), cursor_field: ['_questback_window_end'], exports},
          },
        },
      ];
      const catalog = world.file(simCatalog(sim, [A], 'incremental'));
      const run = await world.run(['read', '--config', config, '--catalog', catalog, '--state', world.file(state)]);
      expect(run.code).toBe(0);
      expect(records(run.messages).map((r) => String(r.record.data.response_id))).toEqual(
        sim.groundTruth(A).rows.map((r) => r[0])
      );
      expect(logs(run)).toContainEqual(
        `Stream ${streamOf(A)}: the state lists 10000 exports of earlier attempts, more than max_concurrent_exports (8) allows this connector to record (was the state edited?); the first 8 are re-used where they still serve, the others are ignored.`
      );
      const polled = new Set(sim.requests('status').map((r) => r.exportId));
      expect(exports.filter((e) => polled.has(e.export_id))).toHaveLength(8);
      const stateBytes = states(run.messages).map((s) => JSON.stringify(s).length);
      expect(Math.max(...stateBytes)).toBeLessThan(4096);
      // The 8 windows exported anew (one each) and the rest of the span in one.
      expect(sim.exports().length).toBe(9);
    }
  );
});

test.each([
  [2, 0],
  [40, 1],
])(
  '%i status answers in a row that are 200 with an empty body or cut JSON: retried as transient (exit %i)',
  async (bad, code) => {
    await withWorld({seed: 28, exportDurationMs: 30, quests: [{id: A, rows: 12, columns: 2}]}, async (world) => {
      const {sim} = world;
      const config = world.config({quest_ids: [A]});
      const catalog = world.file(simCatalog(sim, [A], 'incremental'));
      sim.setFaults({badStatusAnswers: bad});
      const run = await world.run(['read', '--config', config, '--catalog', catalog]);
      expect(run.code).toBe(code);
      const retries = logs(run).filter((l) => l.includes(' failed (HTTP 200 with an'));
      expect(retries.slice(0, 2)).toEqual([
        expect.stringMatching(/ failed \(HTTP 200 with an empty body\): retry 1\/6 in /),
        expect.stringMatching(/ failed \(HTTP 200 with an unreadable body\): retry 2\/6 in /),
      ]);
      const got = records(run.messages).map((r) => String(r.record.data.response_id));
      if (code === 0) {
        expect(retries).toHaveLength(2);
        expect(got).toEqual(sim.groundTruth(A).rows.map((r) => r[0]));
      } else {
        expect(retries).toHaveLength(6);
        expect(got).toEqual([]);
        expect(errorTraces(run.messages).map((t) => [t.trace.error?.failure_type, t.trace.error?.message])).toEqual([
          [
            'transient_error',
            expect.stringMatching(
              /^Checking export status for quest .* failed: HTTP 200 came with an? .* instead of JSON\. This is usually a gateway problem\./
            ),
          ],
        ]);
      }
    });
  }
);

test('combined: a question added while the sync runs is in the columns stream, beside every column of the first header', async () => {
  const start = Date.now() - 5 * DAY;
  await withWorld(
    {
      seed: 29,
      exportDurationMs: 30,
      quests: [{id: A, rows: 30, columns: 3, firstCreatedAt: new Date(start + 3_600_000).toISOString()}],
    },
    async (world) => {
      const {sim} = world;
      const config = world.config({
        stream_layout: 'combined',
        quest_ids: [A],
        start_date: new Date(start).toISOString(),
        window_days: 1,
      });
      const catalog = await world.discoveredCatalog(config, 'incremental');
      const before = sim.groundTruth(A).header;
      const added = 'Q9 How did you hear of us? (added during the sync)';
      // Once the first window's export exists, the survey gains a question: later exports have its column.
      sim.on('create', (ctx) => {
        if (ctx.n === 2) sim.insertQuestion(A, 1, {kind: 'text', title: added});
        return ctx.next();
      });
      const run = await world.run(['read', '--config', config, '--catalog', catalog]);
      expect(run.code).toBe(0);
      const after = sim.groundTruth(A).header;
      expect(after).toEqual([...before.slice(0, 3), added, ...before.slice(3)]);
      expect(responses(run).some((r) => added in r.answers)).toBe(true);
      const columns = records(run.messages)
        .filter((r) => r.record.stream === 'columns')
        .map((r) => r.record.data as {column: string; header: string; position: number});
      expect(columns.map((c) => [c.header, c.position]).sort()).toEqual(after.map((h, i) => [h, i + 1]).sort());
    }
  );
});

test('names never move: discover saw "Q1", the survey gains "q1"; the configured q1 keeps Q1\'s answers, the newcomer gets a name of its own, and the sync says what a refresh would do', async () => {
  await withWorld(
    {seed: 30, exportDurationMs: 30, quests: [{id: A, rows: 10, questionTitles: ['Q1', 'Q2 Comment']}]},
    async (world) => {
      const {sim} = world;
      const config = world.config({quest_ids: [A]});
      const catalog = await world.discoveredCatalog(config, 'incremental');
      const fields = (
        JSON.parse(fs.readFileSync(catalog, 'utf8')) as {
          streams: {stream: {name: string; json_schema: {properties: object}}}[];
        }
      ).streams.find((s) => s.stream.name === streamOf(A))?.stream.json_schema.properties;
      expect(fields).toHaveProperty('q1', {type: ['null', 'string'], title: 'Q1'});
      sim.insertQuestion(A, 2, {kind: 'rating', title: 'q1'});
      sim.addResponses(A, 3);
      await world.clock.sleep(1_010);
      const run = await world.run(['read', '--config', config, '--catalog', catalog]);
      expect(run.code).toBe(0);
      const {header, rows} = sim.groundTruth(A);
      const [q1, newcomer] = [header.indexOf('Q1'), header.indexOf('q1')];
      const got = records(run.messages)
        .filter((r) => r.record.stream === streamOf(A))
        .map((r) => r.record.data);
      const newName = Object.keys(got[0]).find((k) => k.startsWith('q1_')) as string;
      expect(newName).toMatch(/^q1_[0-9a-f]{8}$/);
      expect(got.map((d) => [d.response_id, d.q1, d[newName]])).toEqual(
        rows.map((r) => [r[0], r[q1] === '' ? null : r[q1], r[newcomer] === '' ? null : r[newcomer]])
      );
      expect(rows.some((r) => r[newcomer] !== '')).toBe(true);
      // The columns stream maps each name to the question whose answers it carries, as the records name them.
      const columns = records(run.messages)
        .filter((r) => r.record.stream === 'columns')
        .map((r) => r.record.data as {column: string; header: string});
      expect(columns.filter((c) => c.header === 'Q1' || c.header === 'q1').map((c) => [c.column, c.header])).toEqual(
        expect.arrayContaining([
          ['q1', 'Q1'],
          [newName, 'q1'],
        ])
      );
      expect(logs(run)).toContainEqual(
        expect.stringMatching(
          new RegExp(
            `^Stream ${streamOf(A)}: column "q1" \\(header "Q1"\\) keeps its name and its answers, but the survey now has a question whose name collides with it \\("q1", read as "${newName}"\\)\\. A refresh of the source schema would rename it to "q1_[0-9a-f]{8}": after a refresh, its answers go to that new column and "q1" gets no more\\.`
          )
        )
      );
    }
  );
});

test('long layout: when the survey gains "q1" beside "Q1", Q1\'s later answers carry the rule\'s new name (no schema keeps one), under the same header and question', async () => {
  await withWorld(
    {seed: 32, exportDurationMs: 30, quests: [{id: A, rows: 6, questionTitles: ['Q1', 'Q2 Comment']}]},
    async (world) => {
      const {sim} = world;
      const config = world.config({quest_ids: [A], stream_layout: 'long'});
      const catalog = await world.discoveredCatalog(config, 'incremental');
      const args = ['read', '--config', config, '--catalog', catalog];
      const one = await world.run(args);
      expect(one.code).toBe(0);
      const q1Of = (run: RunResult) => answerRecords(run).filter((a) => a.header === 'Q1');
      expect(q1Of(one).length).toBeGreaterThan(0);
      expect(new Set(q1Of(one).map((a) => [a.column, a.question].join()))).toEqual(new Set(['q1,Q1']));
      sim.insertQuestion(A, 2, {kind: 'rating', title: 'q1'});
      sim.addResponses(A, 6);
      await world.clock.sleep(1_010);
      const two = await world.run([...args, '--state', world.file(stateFile(one.messages))]);
      expect(two.code).toBe(0);
      const moved = q1Of(two);
      expect(moved.length).toBeGreaterThan(0);
      expect(new Set(moved.map((a) => a.question))).toEqual(new Set(['Q1']));
      const [name] = new Set(moved.map((a) => a.column));
      expect(name).toMatch(/^q1_[0-9a-f]{8}$/);
      const twin = answerRecords(two).filter((a) => a.header === 'q1');
      expect(twin.length).toBeGreaterThan(0);
      expect(twin.every((a) => /^q1_[0-9a-f]{8}$/.test(a.column) && a.column !== name)).toBe(true);
    }
  );
});

test('discover warns when the catalog exceeds the 20,000 fields Airbyte accepts (7 quests of 3,000 questions)', async () => {
  const ids = Array.from({length: 7}, (_, i) => `b3e70000-0000-4000-8000-00000000010${i}`);
  await withWorld(
    {seed: 31, exportDurationMs: 30, quests: ids.map((id) => ({id, rows: 2, columns: 3_000}))},
    async (world) => {
      const found = await world.run(['discover', '--config', world.config({quest_ids: ids})]);
      expect(found.code).toBe(0);
      // 7 × 3,005 fields of the quests' streams, and those of the streams every layout has.
      const widths = (discovered(found.messages) as {name: string; json_schema: {properties: object}}[]).map((s) => ({
        name: s.name,
        fields: Object.keys(s.json_schema.properties).length,
      }));
      expect(widths.filter((w) => isResponseStream(w.name)).map((w) => w.fields)).toEqual(Array(7).fill(3005));
      const fields = widths.reduce((n, w) => n + w.fields, 0);
      expect(logs(found)).toContainEqual(
        expect.stringMatching(
          new RegExp(
            `^The catalog has ${fields} fields in ${widths.length} streams, more than the 20000 Airbyte accepts in one connection, so Airbyte will refuse to save it \\(the widest stream, quest_b3e70000_0000_4000_8000_00000000010\\d, has 3005\\)\\. Set stream_layout to combined`
          )
        )
      );
      const fewer = await world.run(['discover', '--config', world.config({quest_ids: ids.slice(0, 1)})]);
      expect(logs(fewer).filter((l) => l.includes('Airbyte accepts'))).toEqual([]);
    }
  );
});
