// stream_layout "long" end to end: one stream `answers` for all quests, a record per non-empty answer
// cell. Discover makes no export; reads are exact against the simulator's truth, incremental, exact
// across a SIGKILL and a resume from the last STATE, and exact when a file is read again listing its
// rows in another order. The warehouse side is in warehouse-postgres.test.ts.

import {committed, records, stateFile, states} from '../helpers/connector';
import {configuredCatalog, stopThenResume, withWorld, World} from '../helpers/fixtures';
import {CURSOR_FIELD, rowsAt, runHostile, withServer} from '../helpers/hostile';
import {answerKey, answerRecords, expectLongExact} from '../helpers/long';
import {AirbyteMessageJson} from '../helpers/protocol';
import {csvText, ExportSettings} from '../../simulator';
import {isResponseStream} from '../helpers/streams';

const DAY = 86_400_000;
const A = 'c0b10000-0000-4000-8000-0000000001a0';
const B = 'c0b10000-0000-4000-8000-0000000001b0';
const EMPTY = 'c0b10000-0000-4000-8000-0000000001e0';
/** A configured catalog of the `answers` stream alone, incremental. */
const LONG_CATALOG = {
  streams: [
    {
      stream: {name: 'answers', json_schema: {type: 'object'}, supported_sync_modes: ['incremental']},
      sync_mode: 'incremental',
      cursor_field: [CURSOR_FIELD],
      destination_sync_mode: 'append',
    },
  ],
};
const SETTINGS: ExportSettings = {expandMultipleChoiceToColumns: true, includeRespondentInformation: true};

/** A long-layout config for the world's simulator, start_date 60 days back. */
const longConfig = (world: World, overrides: Record<string, unknown> = {}): string =>
  world.config({
    stream_layout: 'long',
    expand_multiple_choice_to_columns: true,
    include_respondent_information: true,
    start_date: new Date(Date.now() - 60 * DAY).toISOString(),
    ...overrides,
  });

const quests = (rowsA: number, rowsB: number) => ({
  seed: 26,
  exportDurationMs: 30,
  quests: [
    {id: A, rows: rowsA, columns: 8, firstCreatedAt: new Date(Date.now() - 50 * DAY).toISOString()},
    {
      id: B,
      rows: rowsB,
      columns: 9,
      titles: 'norwegian' as const,
      firstCreatedAt: new Date(Date.now() - 20 * DAY).toISOString(),
    },
    {id: EMPTY, rows: 0, columns: 4},
  ],
});

/** The STATEs whose sourceStats.recordCount is not the number of their stream's records since its previous STATE. */
function countProblems(messages: AirbyteMessageJson[]): string[] {
  const since = new Map<string, number>();
  const problems: string[] = [];
  for (const m of messages) {
    if (m.type === 'RECORD') {
      const {stream} = (m as unknown as {record: {stream: string}}).record;
      since.set(stream, (since.get(stream) ?? 0) + 1);
    } else if (m.type === 'STATE') {
      const {stream, sourceStats} = (m as unknown as StateLine).state;
      const name = stream.stream_descriptor.name;
      if (sourceStats?.recordCount !== (since.get(name) ?? 0))
        problems.push(`STATE of ${name} counts ${sourceStats?.recordCount}, after ${since.get(name) ?? 0} records`);
      since.set(name, 0);
    }
  }
  return problems;
}

type StateLine = {state: {stream: {stream_descriptor: {name: string}}; sourceStats?: {recordCount?: number}}};

describe('stream_layout long', () => {
  test.concurrent(
    'discover lists answers and columns with no export; a first read and an incremental one are exact; columns name every column as the answers do',
    async () => {
      await withWorld(quests(200, 90), async (world) => {
        const {sim} = world;
        const config = longConfig(world, {target_rows_per_export: 100});
        const found = await world.run(['discover', '--config', config]);
        expect(found.code).toBe(0);
        expect(sim.exports()).toEqual([]);
        const catalog = configuredCatalog(found.messages, 'incremental');
        const listed = catalog.streams as {
          stream: {name: string; source_defined_primary_key?: string[][]; default_cursor_field: string[]};
        }[];
        const keys = listed.map((s) => [s.stream.name, s.stream.source_defined_primary_key]);
        expect(keys.filter(([name]) => isResponseStream(name as string))).toEqual([
          ['answers', [['quest_id'], ['response_id'], ['column']]],
        ]);
        expect(keys).toEqual(
          expect.arrayContaining([
            ['columns', [['quest_id'], ['column']]],
            ['invitations', [['invitation_id']]],
          ])
        );
        expect(listed[0].stream.default_cursor_field).toEqual([CURSOR_FIELD]);
        const catalogFile = world.file(catalog);

        const first = await world.run(['read', '--config', config, '--catalog', catalogFile]);
        expect(first.code).toBe(0);
        for (const q of [A, B, EMPTY]) expectLongExact(sim, q, answerRecords(first), {settings: SETTINGS});
        // Every STATE counts the records (answers, not rows) of its stream since the one before.
        expect(countProblems(first.messages)).toEqual([]);
        // Numbers where the cell is one: ratings, and the expanded options' 1.
        expect(answerRecords(first).filter((a) => a.value_number !== null).length).toBeGreaterThan(200);
        // The columns stream names each column as the answers do, and splits it the same way.
        const columns = records(first.messages)
          .filter((r) => r.record.stream === 'columns')
          .map((r) => r.record.data as {quest_id: string; column: string; question: string; option: string | null});
        const described = new Map(columns.map((c) => [`${c.quest_id} ${c.column}`, [c.question, c.option]]));
        const unexplained = answerRecords(first).filter(
          (a) => JSON.stringify(described.get(`${a.quest_id} ${a.column}`)) !== JSON.stringify([a.question, a.option])
        );
        expect(unexplained.slice(0, 3)).toEqual([]);

        const before = new Map([A, B].map((q) => [q, new Set(sim.groundTruth(q).rows.map((r) => r[0]))]));
        sim.addResponses(A, 6);
        sim.addResponses(B, 4);
        // A sync reads up to the whole second before it starts (windows end on whole seconds): the new rows lie before it.
        await world.clock.sleep(1_020);
        const state = world.file(stateFile(first.messages));
        const second = await world.run(['read', '--config', config, '--catalog', catalogFile, '--state', state]);
        expect(second.code).toBe(0);
        expect(countProblems(second.messages)).toEqual([]);
        for (const q of [A, B]) {
          const fresh = new Set(
            sim
              .groundTruth(q)
              .rows.map((r) => r[0])
              .filter((id) => !before.get(q)?.has(id))
          );
          expect(fresh.size).toBeGreaterThan(0);
          expectLongExact(sim, q, answerRecords(second), {settings: SETTINGS, rowIds: fresh});
        }
      });
    },
    120_000
  );

  test.concurrent(
    'a read SIGKILLed midway resumes from its last STATE exactly: nothing lost, nothing twice',
    async () => {
      await withWorld({...quests(1200, 600), exportDurationMs: 200}, async (world) => {
        // One export at a time, each taking a while: the kill comes with most windows unread.
        const config = longConfig(world, {window_days: 4, max_concurrent_exports: 1});
        let seen = 0;
        const {first, second} = await stopThenResume(world, {
          config,
          catalog: await world.discoveredCatalog(config, 'incremental'),
          // The second STATE that commits records: some answers are committed, most are not.
          stopAt: (m) =>
            m.type === 'STATE' &&
            JSON.stringify(m).includes('"answers"') &&
            Number((m as {state?: {sourceStats?: {recordCount?: number}}}).state?.sourceStats?.recordCount) > 0 &&
            ++seen === 2,
          signal: 'SIGKILL',
        });
        expect(second.code).toBe(0);
        const kept = answerRecords(committed(first.messages));
        // The first attempt committed some of it, not all: the resume has work to do.
        expect(kept.length).toBeGreaterThan(0);
        expect(answerRecords(second).length).toBeGreaterThan(0);
        const all = [...kept, ...answerRecords(second)];
        for (const q of [A, B, EMPTY]) expectLongExact(world.sim, q, all, {settings: SETTINGS});
        expect(states(second.messages).length).toBeGreaterThan(0);
      });
    },
    150_000
  );

  test.concurrent(
    'a download cut off, then read again listing the rows in another order: each answer once',
    async () => {
      const Q = '1b4e28ba-2fa1-41d2-883f-0016d3cca427';
      const rows = rowsAt([
        [2.5, 'A'],
        [2, 'B'],
        [1.5, 'C'],
        [1, 'D'],
        [0.5, 'E'],
      ]);
      await withServer({quests: [{id: Q, rows}]}, async (server) => {
        server.on('download', (ctx) => {
          const mine = ctx.rows();
          if (ctx.n === 1) {
            const bytes = Buffer.from(ctx.csv(), 'utf8');
            const head = `HTTP/1.1 200 OK\r\nContent-Type: text/csv\r\nContent-Length: ${bytes.length}\r\n\r\n`;
            // Cut inside the last row: the rows before it were emitted.
            ctx.raw(Buffer.concat([Buffer.from(head, 'latin1'), bytes.subarray(0, bytes.length - 3)]), true);
          } else {
            const order = [4, 1, 3, 0, 2].filter((i) => i < mine.length);
            ctx.send(
              200,
              csvText(
                ctx.header(),
                order.map((i) => mine[i])
              ),
              {'Content-Type': 'text/csv'}
            );
          }
        });
        const run = await runHostile(server, 'read', {
          config: {stream_layout: 'long'},
          catalog: LONG_CATALOG,
          killAfterMs: 40_000,
        });
        expect(run.code).toBe(0);
        expect(server.requests('download').length).toBe(2);
        const got = answerRecords(run);
        // Every row of the export is after start_date: each of its two answer cells once.
        expect(got.length).toBe(2 * rows.length);
        expectLongExact(server, Q, got);
        expect(new Set(got.map(answerKey)).size).toBe(got.length);
      });
    },
    60_000
  );

  test('value_number only where the cell reads back as the same number from a double; the text stays in value', async () => {
    const cells: [string, number | null][] = [
      ['12', 12],
      ['-2.50', -2.5],
      ['1.0', 1],
      ['0.1', 0.1],
      ['-0', -0],
      ['9007199254740992', 9007199254740992],
      ['9007199254740993', null],
      ['1'.repeat(400), null],
      ['1234567890123456.7', null],
      ['1e3', null],
      ['+47', null],
      [' 4', null],
      ['007', null],
    ];
    const Q = 'c0b10000-0000-4000-8000-0000000006a0';
    const rows = rowsAt(cells.map(([text], i) => [1 + i / 100, text]));
    await withServer({quests: [{id: Q, rows}]}, async (server) => {
      const run = await runHostile(server, 'read', {config: {stream_layout: 'long'}, catalog: LONG_CATALOG});
      expect(run.code).toBe(0);
      const got = answerRecords(run)
        .filter((a) => a.header === 'Q1 Comment')
        .sort((a, b) => a.response_id.localeCompare(b.response_id));
      expect(got.map((a) => [a.value, a.value_number])).toEqual(cells);
      expectLongExact(server, Q, answerRecords(run));
    });
  });
});
