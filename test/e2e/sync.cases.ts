import Ajv from 'ajv';
import addFormats from 'ajv-formats';

import {configuredCatalog, DEFAULT_EXPORT_SETTINGS, startWorld, streamOf, World} from '../helpers/fixtures';
import {records, stateFile, states, statusesByStream, RunResult, RecordMessage} from '../helpers/connector';
import {warehouseNames} from '../../src/sync/streams/column-names';
import {Simulator} from '../../simulator';
import {isResponseStream} from '../helpers/streams';

/** The ground truth of a quest as the records should carry it: header name -> cell, empty -> null. */
function expectedRows(sim: Simulator, questId: string): Map<string, Record<string, string | null>> {
  const {header, rows} = sim.groundTruth(questId, DEFAULT_EXPORT_SETTINGS);
  const idIndex = header.indexOf('Response ID');
  return new Map(
    rows.map((row) => [
      row[idIndex],
      Object.fromEntries(warehouseNames(header).map((h, i) => [h, row[i] === '' ? null : row[i]])),
    ])
  );
}

function dataColumns(record: RecordMessage): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record.record.data).filter(([k]) => !k.startsWith('_questback_')));
}

/** The stream that lists every column of every quest (its own cursor and primary key). */
const COLUMNS = 'columns';
const INVITATIONS = 'invitations';
const isQuestRecord = (r: RecordMessage): boolean => isResponseStream(r.record.stream);
const isColumnRecord = (r: RecordMessage): boolean => r.record.stream === COLUMNS;

function expectValid(result: RunResult): void {
  expect(result.invalid).toEqual([]);
}

describe('a full sync against the simulator, through the command line', () => {
  let world: World;
  let sim: Simulator;
  let configFile: string;
  const runConnector = (args: string[]): Promise<RunResult> => world.run(args);

  beforeAll(async () => {
    world = await startWorld({
      seed: 7,
      exportDurationMs: 150,
      quests: [
        {
          id: '11111111-2222-4333-8444-555555555555',
          rows: 30,
          firstCreatedAt: new Date(Date.now() - 35 * 86_400_000).toISOString(),
        },
        {
          id: '66666666-7777-4888-9999-000000000000',
          rows: 45,
          columns: 10,
          firstCreatedAt: new Date(Date.now() - 20 * 86_400_000).toISOString(),
        },
      ],
    });
    sim = world.sim;
    configFile = world.config();
  });
  afterAll(() => world.close());

  test('spec, check, discover, full refresh and three incremental reads deliver every row exactly once', async () => {
    const spec = await runConnector(['spec']);
    expectValid(spec);
    expect(spec.code).toBe(0);
    expect(spec.messages.map((m) => m.type)).toEqual(['SPEC']);

    const check = await runConnector(['check', '--config', configFile]);
    expectValid(check);
    expect(check.messages.filter((m) => m.type === 'CONNECTION_STATUS')).toEqual([
      {type: 'CONNECTION_STATUS', connectionStatus: {status: 'SUCCEEDED'}},
    ]);

    const discover = await runConnector(['discover', '--config', configFile]);
    expectValid(discover);
    expect(discover.code).toBe(0);
    const catalog = discover.messages.find((m) => m.type === 'CATALOG') as unknown as {
      catalog: {streams: {name: string; json_schema: object; source_defined_primary_key?: string[][]}[]};
    };
    const names = catalog.catalog.streams.map((s) => s.name);
    // A stream per quest, keyed by response id, then the streams every layout has (columns, invitations, ...).
    expect(names.filter(isResponseStream)).toEqual(sim.quests.map((q) => streamOf(q.id)));
    expect(names.slice(0, sim.quests.length).every(isResponseStream)).toBe(true);
    const keys: Record<string, string[][]> = {
      [COLUMNS]: [['quest_id'], ['column']],
      [INVITATIONS]: [['invitation_id']],
    };
    for (const s of catalog.catalog.streams) {
      expect(s.name).toMatch(/^[a-z][a-z0-9_]*$/);
      if (isResponseStream(s.name)) expect(s.source_defined_primary_key).toEqual([['response_id']]);
      else if (keys[s.name]) expect(s.source_defined_primary_key).toEqual(keys[s.name]);
    }
    expect(names).toEqual(expect.arrayContaining(Object.keys(keys)));
    // One columns record per column of every quest, in every read, full or incremental.
    const columnCount = sim.quests.reduce(
      (n, q) => n + sim.groundTruth(q.id, DEFAULT_EXPORT_SETTINGS).header.length,
      0
    );
    const ajv = new Ajv({strict: false});
    addFormats(ajv);
    const validators = new Map(catalog.catalog.streams.map((s) => [s.name, ajv.compile(s.json_schema)]));
    const checkRecords = (result: RunResult): void => {
      for (const r of records(result.messages)) {
        const validate = validators.get(r.record.stream);
        expect(validate).toBeDefined();
        expect({stream: r.record.stream, valid: validate?.(r.record.data), errors: validate?.errors ?? null}).toEqual({
          stream: r.record.stream,
          valid: true,
          errors: null,
        });
      }
    };

    // Full refresh: every row of every quest.
    const full = await runConnector([
      'read',
      '--config',
      configFile,
      '--catalog',
      world.file(configuredCatalog(discover.messages, 'full_refresh')),
    ]);
    expectValid(full);
    expect(full.code).toBe(0);
    checkRecords(full);
    for (const quest of sim.quests) {
      const stream = streamOf(quest.id);
      const got = records(full.messages).filter((r) => r.record.stream === stream);
      const expected = expectedRows(sim, quest.id);
      expect(got.length).toBe(expected.size);
      expect(new Map(got.map((r) => [r.record.data.response_id, dataColumns(r)]))).toEqual(expected);
      expect(statusesByStream(full.messages)[stream]).toEqual(['STARTED', 'RUNNING', 'COMPLETE']);
    }
    expect(records(full.messages).filter(isColumnRecord)).toHaveLength(columnCount);
    expect(statusesByStream(full.messages)[COLUMNS]).toEqual(['STARTED', 'RUNNING', 'COMPLETE']);

    // Incremental: first read, then new responses, twice.
    const incCatalog = world.file(configuredCatalog(discover.messages, 'incremental'));
    const seen = new Map<string, number>();
    let state: ReturnType<typeof stateFile> = [];
    const cursors = new Map<string, string>();
    for (let round = 0; round < 3; round++) {
      if (round > 0) {
        sim.addResponses(sim.quests[0].id, 3 + round);
        sim.addResponses(sim.quests[1].id, 2);
        // A sync reads up to the whole second before it starts (windows end on whole seconds): the new rows lie before it.
        await world.clock.sleep(1_050);
      }
      const args = ['read', '--config', configFile, '--catalog', incCatalog];
      if (round > 0) args.push('--state', world.file(state));
      const inc = await runConnector(args);
      expectValid(inc);
      expect(inc.code).toBe(0);
      checkRecords(inc);
      for (const r of records(inc.messages).filter(isQuestRecord)) {
        const key = `${r.record.stream}/${r.record.data.response_id}`;
        seen.set(key, (seen.get(key) ?? 0) + 1);
        const previous = cursors.get(r.record.stream);
        if (previous)
          expect(Date.parse(r.record.data._questback_window_end as string)).toBeGreaterThan(Date.parse(previous));
      }
      // The columns stream reports every column again, seen at or after its state's cursor.
      const columns = records(inc.messages).filter(isColumnRecord);
      expect(columns).toHaveLength(columnCount);
      const previousColumns = cursors.get(COLUMNS);
      if (previousColumns)
        for (const r of columns)
          expect(Date.parse(r.record.data.seen_at as string)).toBeGreaterThanOrEqual(Date.parse(previousColumns));
      for (const s of states(inc.messages)) {
        const name = s.state.stream.stream_descriptor.name;
        const previous = cursors.get(name);
        if (previous)
          expect(Date.parse(s.state.stream.stream_state.cursor)).toBeGreaterThanOrEqual(Date.parse(previous));
        cursors.set(name, s.state.stream.stream_state.cursor);
        expect(typeof s.state.sourceStats.recordCount).toBe('number');
      }
      state = stateFile(inc.messages, state);
      // A state for every stream of the catalog: each quest's, columns', invitations'.
      expect(state.map((s) => s.stream.stream_descriptor.name).sort()).toEqual([...names].sort());
    }
    for (const quest of sim.quests) {
      const stream = streamOf(quest.id);
      const expected = expectedRows(sim, quest.id);
      const delivered = [...seen.entries()].filter(([k]) => k.startsWith(`${stream}/`));
      expect(delivered.length).toBe(expected.size);
      expect(delivered.every(([, n]) => n === 1)).toBe(true);
    }
  }, 240_000); // A hang guard.

  test('a state in the future yields no records and a state message per stream, its cursor moved back', async () => {
    const discover = await runConnector(['discover', '--config', configFile]);
    const future = [...sim.quests.map((q) => streamOf(q.id)), COLUMNS].map((name) => ({
      type: 'STREAM',
      stream: {stream_descriptor: {name}, stream_state: {cursor: '2999-01-01T00:00:00.000Z'}},
    }));
    const result = await runConnector([
      'read',
      '--config',
      configFile,
      '--catalog',
      // The streams a future state applies to: those that read incrementally (not invitations).
      world.file(incrementalOnly(configuredCatalog(discover.messages, 'incremental'))),
      '--state',
      world.file(future),
    ]);
    expectValid(result);
    expect(result.code).toBe(0);
    expect(records(result.messages)).toHaveLength(0);
    // Not kept: each stream moves its cursor back to the sync's time at the latest (e2e/future-cursor).
    const cursors = states(result.messages).map((s) => ({
      name: s.state.stream.stream_descriptor.name,
      at: Date.parse(s.state.stream.stream_state.cursor),
    }));
    expect(cursors.map((c) => c.name).sort()).toEqual(future.map((f) => f.stream.stream_descriptor.name).sort());
    for (const {at} of cursors) expect(at).toBeLessThanOrEqual(world.runtime.now());
  });
  test('columns added since discover (respondent information switched on) are emitted, and the log says Airbyte drops them until a schema refresh', async () => {
    const discover = await runConnector(['discover', '--config', configFile]);
    const wider = world.config({include_respondent_information: true});
    const result = await runConnector([
      'read',
      '--config',
      wider,
      '--catalog',
      world.file(configuredCatalog(discover.messages, 'full_refresh')),
    ]);
    expectValid(result);
    expect(result.code).toBe(0);
    const quest = sim.quests[0];
    const truth = sim.groundTruth(quest.id, {...DEFAULT_EXPORT_SETTINGS, includeRespondentInformation: true});
    const before = sim.groundTruth(quest.id, DEFAULT_EXPORT_SETTINGS).header;
    const added = warehouseNames(truth.header).filter((_h, i) => !before.includes(truth.header[i]));
    expect(added.length).toBeGreaterThan(0);
    const got = records(result.messages).filter((r) => r.record.stream === streamOf(quest.id));
    expect(got).toHaveLength(truth.rows.length);
    for (const column of added) expect(got.every((r) => column in r.record.data)).toBe(true);
    expect(result.stdout).toMatch(
      /column\(s\) of the export are not in the configured schema .*Airbyte drops them\. If they are new, refresh the source schema in Airbyte/
    );
  });
});

/** A configured catalog's streams that read incrementally. */
function incrementalOnly(catalog: Record<string, unknown>): Record<string, unknown> {
  const streams = catalog.streams as {sync_mode: string}[];
  return {...catalog, streams: streams.filter((s) => s.sync_mode === 'incremental')};
}
