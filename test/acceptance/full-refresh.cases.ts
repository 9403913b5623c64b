// CAT "full_refresh" group, replicated on the built bin/main: two full reads in a row.

import {simConfig, startWorld, streamOf, World} from '../helpers/fixtures';
import {RecordMessage, records, RunResult, writeJson} from '../helpers/connector';
import {Simulator} from '../../simulator';
import {
  AirbyteStreamJson,
  catalogOf,
  COLUMNS_CURSOR,
  COLUMNS_STREAM,
  INVITATIONS_STREAM,
  configuredCatalogOf,
  daysAgo,
  PRIMARY_KEY,
  summary,
} from './support';
import {isResponseStream} from '../helpers/streams';

const QUEST_A = '9a9a9a9a-0b0b-4c1c-8d2d-3e3e3e3e3e3e';
const QUEST_B = 'a0a0a0a0-1b1b-4c2c-9d3d-4e4e4e4e4e4e';

/** The primary key of a record, from the stream's source_defined_primary_key. */
function keyOf(record: RecordMessage, stream: AirbyteStreamJson): string {
  return JSON.stringify(
    (stream.source_defined_primary_key ?? []).map((p) =>
      p.reduce<unknown>((v, k) => (v as Record<string, unknown>)?.[k], record.record.data)
    )
  );
}

/**
 * The fields a sync sets from its own time: a quest record's window, and when the columns stream saw
 * a column (a full refresh has no state, so first seen is this sync too).
 */
function withoutSyncTime(stream: string, data: Record<string, unknown>): Record<string, unknown> {
  const dropped = (k: string): boolean =>
    stream === COLUMNS_STREAM ? k === 'first_seen_at' || k === COLUMNS_CURSOR : k.startsWith('_questback_window_');
  return Object.fromEntries(Object.entries(data).filter(([k]) => !dropped(k)));
}

describe('full refresh', () => {
  let world: World;
  let sim: Simulator;
  let dir: string;
  let streams: AirbyteStreamJson[];
  let first: RunResult;
  let second: RunResult;

  beforeAll(async () => {
    world = await startWorld({
      seed: 17,
      exportDurationMs: 20,
      quests: [
        {id: QUEST_A, rows: 30, firstCreatedAt: daysAgo(25)},
        {id: QUEST_B, rows: 12, columns: 10, firstCreatedAt: daysAgo(9)},
      ],
    });
    ({sim, dir} = world);
    const configFile = writeJson(
      dir,
      'config.json',
      simConfig(sim, {start_date: daysAgo(26), window_days: 10, max_concurrent_exports: 16})
    );
    streams = catalogOf(await world.run(['discover', '--config', configFile]));
    const catalogFile = writeJson(dir, 'full.json', configuredCatalogOf(streams, 'full_refresh'));
    first = await world.run(['read', '--config', configFile, '--catalog', catalogFile]);
    second = await world.run(['read', '--config', configFile, '--catalog', catalogFile]);
  });
  afterAll(async () => {
    await world.close();
  });

  const KEYS: Record<string, string[][]> = {
    [COLUMNS_STREAM]: [['quest_id'], ['column']],
    [INVITATIONS_STREAM]: [['invitation_id']],
  };

  test('both reads succeed with records of every stream', () => {
    for (const run of [first, second]) {
      expect(run.invalid).toEqual([]);
      expect({code: run.code, summary: run.code === 0 ? '' : summary(run)}).toEqual({code: 0, summary: ''});
      expect(records(run.messages).filter((r) => r.record.stream === streamOf(QUEST_A))).toHaveLength(30);
      expect(records(run.messages).filter((r) => r.record.stream === streamOf(QUEST_B))).toHaveLength(12);
    }
    // The response streams are keyed by response id; the streams every layout has, by their own keys.
    for (const s of streams.filter((s) => isResponseStream(s.name) || KEYS[s.name]))
      expect({stream: s.name, key: s.source_defined_primary_key}).toEqual({
        stream: s.name,
        key: KEYS[s.name] ?? [[PRIMARY_KEY]],
      });
    expect(streams.map((s) => s.name)).toEqual(expect.arrayContaining(Object.keys(KEYS)));
  });

  test('every record of read 1 appears in read 2 by primary key', () => {
    for (const stream of streams) {
      const keys1 = records(first.messages)
        .filter((r) => r.record.stream === stream.name)
        .map((r) => keyOf(r, stream));
      const keys2 = new Set(
        records(second.messages)
          .filter((r) => r.record.stream === stream.name)
          .map((r) => keyOf(r, stream))
      );
      expect(keys1.length).toBeGreaterThan(0);
      expect({stream: stream.name, missing: keys1.filter((k) => !keys2.has(k))}).toEqual({
        stream: stream.name,
        missing: [],
      });
    }
  });

  test('emitted_at increases on subsequent runs', () => {
    const first1 = records(first.messages).map((r) => r.record.emitted_at);
    const second2 = records(second.messages).map((r) => r.record.emitted_at);
    expect(first1.length).toBeGreaterThan(0);
    expect(second2.length).toBeGreaterThan(0);
    expect([...first1, ...second2].every((t) => Number.isInteger(t))).toBe(true);
    expect(Math.max(...first1)).toBeLessThan(Math.min(...second2));
  });

  test('primary keys are present and unique within a read', () => {
    for (const stream of streams) {
      for (const run of [first, second]) {
        const keys = records(run.messages)
          .filter((r) => r.record.stream === stream.name)
          .map((r) => keyOf(r, stream));
        expect(keys.every((k) => k !== '[null]' && k !== '[undefined]' && k !== '[]')).toBe(true);
        expect(new Set(keys).size).toBe(keys.length);
      }
    }
  });

  test('records of read 1 are unchanged in read 2 apart from the fields set from the sync time', () => {
    for (const stream of streams) {
      const byKey = new Map(
        records(second.messages)
          .filter((r) => r.record.stream === stream.name)
          .map((r) => [keyOf(r, stream), withoutSyncTime(stream.name, r.record.data)])
      );
      for (const r of records(first.messages).filter((x) => x.record.stream === stream.name)) {
        expect(byKey.get(keyOf(r, stream))).toEqual(withoutSyncTime(stream.name, r.record.data));
      }
    }
  });
});
