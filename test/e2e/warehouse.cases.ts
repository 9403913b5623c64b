// What lands in the warehouse: the platform keeps only the configured schema's fields, so discover
// must see every column, read must refuse a schema without answers, and the options for late
// answers and inaccessible quests must behave as documented.

import {warehouseNames} from '../../src/sync/streams/column-names';
import {
  errorTraces,
  records,
  RecordMessage,
  RunResult,
  stateFile,
  states,
  statusesByStream,
  writeJson,
} from '../helpers/connector';
import {configuredCatalog, simCatalog, simConfig, startWorld, streamOf, World} from '../helpers/fixtures';
import {Simulator} from '../../simulator';

const DAY = 86_400_000;
const A = '5a5a5a5a-0000-4000-8000-000000000001';
const B = '5a5a5a5a-0000-4000-8000-000000000002';
const FORBIDDEN = '5a5a5a5a-0000-4000-8000-000000000003';
const QUIET = '5a5a5a5a-0000-4000-8000-000000000004';
const NORSK = '5a5a5a5a-0000-4000-8000-000000000005';

interface CatalogStream {
  stream: {
    name: string;
    namespace?: string;
    json_schema: {properties: Record<string, {title?: string; format?: string}>};
  };
}

/** Airbyte's FieldSelector: a record keeps only the top-level fields its configured stream's schema lists. */
function fieldSelection(record: RecordMessage, catalog: {streams: CatalogStream[]}): Record<string, unknown> {
  const stream = catalog.streams.find((s) => s.stream.name === record.record.stream);
  const listed = new Set(Object.keys(stream?.stream.json_schema.properties ?? {}));
  return Object.fromEntries(Object.entries(record.record.data).filter(([key]) => listed.has(key)));
}

let world: World;
let sim: Simulator;
let dir: string;
const runConnector = (args: string[]): Promise<RunResult> => world.run(args);

beforeAll(async () => {
  world = await startWorld({
    seed: 17,
    exportDurationMs: 60,
    quests: [
      // The real service may send an empty file, without a header, for an export without rows.
      {
        id: A,
        rows: 40,
        columns: 9,
        headerOnEmpty: false,
        firstCreatedAt: new Date(Date.now() - 20 * DAY).toISOString(),
      },
      {id: B, rows: 15, firstCreatedAt: new Date(Date.now() - 10 * DAY).toISOString()},
      {id: FORBIDDEN, rows: 5, forbidden: true},
      {id: QUIET, rows: 0, headerOnEmpty: false},
      {
        id: NORSK,
        rows: 12,
        columns: 8,
        titles: 'norwegian',
        firstCreatedAt: new Date(Date.now() - 5 * DAY).toISOString(),
      },
    ],
  });
  ({sim, dir} = world);
});
afterAll(() => world.close());

describe('what lands in the warehouse', () => {
  test.concurrent(
    'discover widens the sample until a header shows, so no quest with responses lacks its columns; a quest without any is listed with a warning',
    async () => {
      const discover = await runConnector([
        'discover',
        '--config',
        writeJson(dir, 'd.json', simConfig(sim, {quest_ids: [A, QUIET]})),
      ]);
      expect(discover.code).toBe(0);
      const catalog = discover.messages.find((m) => m.type === 'CATALOG') as unknown as {
        catalog: {streams: CatalogStream['stream'][]};
      };
      const [a, quiet] = catalog.catalog.streams;
      const header = sim.groundTruth(A).header;
      expect(
        Object.values(a.json_schema.properties)
          .map((p) => p.title)
          .filter(Boolean)
      ).toEqual(header);
      expect(a.json_schema.properties.created).toMatchObject({format: 'date-time', title: 'Created'});
      expect(Object.keys(quiet.json_schema.properties)).toEqual([
        '_questback_quest_id',
        '_questback_window_start',
        '_questback_window_end',
      ]);
      expect(discover.stdout).toMatch(/has no responses since start_date .* refresh the source schema in Airbyte/);
    }
  );

  test("applying the platform's field selection to a default read keeps every non-empty cell of the simulator's truth", async () => {
    const config = writeJson(dir, 'fs.json', simConfig(sim, {quest_ids: [A, B, NORSK]}));
    const discover = await runConnector(['discover', '--config', config]);
    const catalog = configuredCatalog(discover.messages, 'full_refresh') as unknown as {streams: CatalogStream[]};
    const read = await runConnector(['read', '--config', config, '--catalog', writeJson(dir, 'fs-cat.json', catalog)]);
    expect(read.code).toBe(0);
    for (const id of [A, B, NORSK]) {
      const {header, rows} = sim.groundTruth(id);
      const names = warehouseNames(header);
      const kept = records(read.messages)
        .filter((r) => r.record.stream === streamOf(id))
        .map((r) => fieldSelection(r, catalog));
      expect(kept).toHaveLength(rows.length);
      const byId = new Map(kept.map((k) => [k.response_id, k]));
      for (const row of rows) {
        const record = byId.get(row[0]) as Record<string, unknown>;
        row.forEach((cell, i) => {
          if (cell !== '')
            expect({column: header[i], value: record[names[i]]}).toEqual({column: header[i], value: cell});
        });
      }
    }
  });

  test.concurrent(
    'a configured schema without any answer column fails the stream with a config_error before any STATE of it',
    async () => {
      const config = writeJson(dir, 'empty-schema.json', simConfig(sim, {quest_ids: [A, B]}));
      const catalog = simCatalog(sim, [A, B], 'incremental') as {
        streams: {stream: {name: string; json_schema: {properties: object}}}[];
      };
      catalog.streams[0].stream.json_schema.properties = {
        _questback_quest_id: {type: 'string'},
        _questback_window_end: {type: 'string'},
      };
      const read = await runConnector([
        'read',
        '--config',
        config,
        '--catalog',
        writeJson(dir, 'empty-schema-cat.json', catalog),
      ]);
      expect(read.code).toBe(1);
      const errors = errorTraces(read.messages);
      expect(errors).toHaveLength(1);
      expect(errors[0].trace.error).toMatchObject({
        failure_type: 'config_error',
        stream_descriptor: {name: streamOf(A)},
        message: expect.stringMatching(/lists none of the \d+ columns .*Refresh the source schema in Airbyte/),
      });
      const statesOfA = states(read.messages).filter((s) => s.state.stream.stream_descriptor.name === streamOf(A));
      expect(statesOfA.every((s) => s.state.sourceStats.recordCount === 0)).toBe(true);
      expect(records(read.messages).filter((r) => r.record.stream === streamOf(B))).toHaveLength(15);
    }
  );

  test.concurrent('lookback_days re-reads the days before the cursor without moving the cursor back', async () => {
    const config = simConfig(sim, {quest_ids: [B]});
    const catalog = writeJson(dir, 'lb-cat.json', simCatalog(sim, [B], 'incremental'));
    const first = await runConnector(['read', '--config', writeJson(dir, 'lb0.json', config), '--catalog', catalog]);
    const state = stateFile(first.messages);
    const cursor = state[0].stream.stream_state.cursor;
    const again = await runConnector([
      'read',
      '--config',
      writeJson(dir, 'lb1.json', {...config, lookback_days: 4}),
      '--catalog',
      catalog,
      '--state',
      writeJson(dir, 'lb-state.json', state),
    ]);
    expect(again.code).toBe(0);
    const reread = records(again.messages);
    const created = reread.map((r) => Date.parse(String(r.record.data.created)));
    expect(reread.length).toBeGreaterThan(0);
    expect(created.every((t) => t > Date.parse(cursor) - 4 * DAY && t <= Date.parse(cursor))).toBe(true);
    for (const s of states(again.messages))
      expect(Date.parse(s.state.stream.stream_state.cursor)).toBeGreaterThanOrEqual(Date.parse(cursor));
  });

  test.concurrent(
    'skip_inaccessible_quests: a forbidden quest is skipped with a warning and INCOMPLETE, the others sync, and the sync succeeds',
    async () => {
      const config = writeJson(
        dir,
        'skip.json',
        simConfig(sim, {quest_ids: [B, FORBIDDEN], skip_inaccessible_quests: true})
      );
      const catalog = simCatalog(sim, [B], 'full_refresh') as {streams: {stream: {name: string}}[]};
      catalog.streams.push({...catalog.streams[0], stream: {...catalog.streams[0].stream, name: streamOf(FORBIDDEN)}});
      const read = await runConnector([
        'read',
        '--config',
        config,
        '--catalog',
        writeJson(dir, 'skip-cat.json', catalog),
      ]);
      expect(read.code).toBe(0);
      expect(errorTraces(read.messages)).toEqual([]);
      expect(statusesByStream(read.messages)[streamOf(FORBIDDEN)]).toEqual(['STARTED', 'RUNNING', 'INCOMPLETE']);
      expect(read.stdout).toMatch(
        new RegExp(
          `Stream ${streamOf(FORBIDDEN)}: quest ${FORBIDDEN} skipped: .*HTTP 403.*skip_inaccessible_quests is on`
        )
      );
      expect(records(read.messages).filter((r) => r.record.stream === streamOf(B))).toHaveLength(15);
    }
  );

  test.concurrent(
    'check and discover with skip_inaccessible_quests pass when some quests are readable, and name the one they skip',
    async () => {
      const config = (skip: boolean): string =>
        writeJson(
          dir,
          `check-skip-${skip}.json`,
          simConfig(sim, {quest_ids: [B, FORBIDDEN], skip_inaccessible_quests: skip})
        );
      const skipping = await runConnector(['check', '--config', config(true)]);
      expect(skipping.messages.find((m) => m.type === 'CONNECTION_STATUS')).toMatchObject({
        connectionStatus: {status: 'SUCCEEDED'},
      });
      expect(skipping.stdout).toMatch(new RegExp(`quest ${FORBIDDEN} failed: HTTP 403.*It will be skipped`));
      const strict = await runConnector(['check', '--config', config(false)]);
      expect(strict.messages.find((m) => m.type === 'CONNECTION_STATUS')).toMatchObject({
        connectionStatus: {status: 'FAILED'},
      });
    }
  );

  test.concurrent(
    'records carry the configured namespace, and no ESTIMATE replaces the progress of a stream window by window',
    async () => {
      const config = writeJson(dir, 'ns.json', simConfig(sim, {quest_ids: [B]}));
      const catalog = simCatalog(sim, [B], 'full_refresh') as {streams: {stream: Record<string, unknown>}[]};
      catalog.streams[0].stream.namespace = 'surveys';
      const read = await runConnector([
        'read',
        '--config',
        config,
        '--catalog',
        writeJson(dir, 'ns-cat.json', catalog),
      ]);
      expect(read.code).toBe(0);
      const got = records(read.messages) as unknown as {record: {namespace?: string}}[];
      expect(got.length).toBe(15);
      expect(got.every((r) => r.record.namespace === 'surveys')).toBe(true);
      expect(read.messages.filter((m) => JSON.stringify(m).includes('"ESTIMATE"'))).toEqual([]);
    }
  );
});
