// Exports that survive a failed attempt: bin/main against the simulator, SIGKILLed once its exports
// exist (only a process can be), then a second attempt, in-process, from the last STATE that reached
// stdout. The second attempt polls and reads the recorded exports instead of creating them again,
// unless they expired (410): then it creates new ones, and the data is still exact. Both layouts.
// The simulator's TestClock keeps real time while the first attempt runs (nothing in this process
// waits on it), and the second attempt's waits take none.

import {committed, records, stateFile, states} from '../helpers/connector';
import {expectQuestExact, responses} from '../helpers/combined';
import {simCatalog, stopThenResume, streamOf, withWorld, World} from '../helpers/fixtures';
import {AirbyteMessageJson} from '../helpers/protocol';
import {Simulator} from '../../simulator';

const DAY = 86_400_000;

interface RecordedExportState {
  export_id: string;
  since: string;
  until: string;
}

const recordedExports = (state: ReturnType<typeof stateFile>): RecordedExportState[] =>
  state.flatMap((s) => (s.stream.stream_state as {exports?: RecordedExportState[]}).exports ?? []);

const idsOf = (messages: {record: {data: Record<string, unknown>}}[]): string[] =>
  messages.map((r) => String(r.record.data.response_id));

type StateLine = {state: ReturnType<typeof stateFile>[number]};

/** A STATE that records at least `n` exports. */
const recording =
  (n: number) =>
  (m: AirbyteMessageJson): boolean =>
    m.type === 'STATE' && recordedExports([(m as unknown as StateLine).state]).length >= n;

/** A first attempt killed (SIGKILL: no goodbye) at the first STATE that `killAt` picks; then a second from its state. */
async function killedThenResumed(
  world: World,
  questId: string,
  overrides: Record<string, unknown>,
  killAt: (m: AirbyteMessageJson) => boolean,
  between?: (state: ReturnType<typeof stateFile>) => void
) {
  const {first, state, second, createdByFirst} = await stopThenResume(world, {
    config: world.config(overrides),
    catalog: world.file(simCatalog(world.sim, [questId], 'incremental')),
    stopAt: killAt,
    signal: 'SIGKILL',
    between,
  });
  return {killed: first, state, second, createdBySecond: world.sim.exports().slice(createdByFirst)};
}

/** The union of what the first attempt committed and the second emitted is the truth; neither has a row twice. */
function expectExactUnion(sim: Simulator, questId: string, first: AirbyteMessageJson[], second: AirbyteMessageJson[]) {
  const a = idsOf(committed(first));
  const b = idsOf(records(second));
  expect(a.length).toBe(new Set(a).size);
  expect(b.length).toBe(new Set(b).size);
  expect([...new Set([...a, ...b])].sort()).toEqual(
    sim
      .groundTruth(questId)
      .rows.map((r) => r[0])
      .sort()
  );
}

describe('exports re-used across attempts', () => {
  // Ten windows of 200 rows: the windows and their exports are the point, not the rows in them.
  const quest = (id: string) => ({
    id,
    rows: 2000,
    columns: 4,
    firstCreatedAt: new Date(Date.now() - 100 * DAY).toISOString(),
  });
  const overrides = {
    start_date: new Date(Date.now() - 101 * DAY).toISOString(),
    target_rows_per_export: 1000,
    // Fixed windows are generated side by side: several exports exist before the first is read whole.
    window_days: 10,
    max_concurrent_exports: 4,
  };

  test.concurrent(
    'a second attempt after a SIGKILL creates no export for a window the first one recorded, and the union is exact',
    async () => {
      const id = 'a77e0000-0000-4000-8000-000000000001';
      await withWorld({seed: 7, exportDurationMs: 1500, quests: [quest(id)]}, async (world) => {
        const {sim} = world;
        const {killed, state, second, createdBySecond} = await killedThenResumed(world, id, overrides, recording(3));
        expect(second.code).toBe(0);
        const recorded = recordedExports(state);
        expect(recorded.length).toBeGreaterThanOrEqual(3);
        const windowOf = (e: {since?: string; until?: string}) => `${e.since}..${e.until}`;
        const recreated = createdBySecond.filter((e) => recorded.some((r) => windowOf(r) === windowOf(e)));
        expect(recreated).toEqual([]);
        // The recorded exports were polled and downloaded by the second attempt.
        const downloaded = new Set(
          sim
            .requests()
            .filter((r) => /\/download$/.test(r.path))
            .map((r) => r.path)
        );
        for (const r of recorded) expect([...downloaded].some((p) => p.includes(r.export_id))).toBe(true);
        expectExactUnion(sim, id, killed.messages, second.messages);
        expect(
          stateFile(second.messages).every(
            (s) => s.stream.stream_descriptor.name === streamOf(id) && !recordedExports([s]).length
          )
        ).toBe(true);
      });
    },
    90_000
  );

  test.concurrent(
    'when the recorded exports expired (410), the second attempt creates them anew and the union is still exact',
    async () => {
      const id = 'a77e0000-0000-4000-8000-000000000002';
      await withWorld({seed: 8, exportDurationMs: 1500, quests: [quest(id)]}, async (world) => {
        const {sim} = world;
        const {killed, state, second, createdBySecond} = await killedThenResumed(
          world,
          id,
          overrides,
          recording(3),
          (s) => {
            for (const e of sim.exports()) sim.expireExport(e.exportId);
            expect(recordedExports(s).length).toBeGreaterThanOrEqual(3);
          }
        );
        expect(second.code).toBe(0);
        expect(createdBySecond.length).toBeGreaterThanOrEqual(recordedExports(state).length);
        expectExactUnion(sim, id, killed.messages, second.messages);
      });
    },
    90_000
  );

  test.concurrent(
    'an over-large window: the resumed attempt re-uses its export and creates none above 4x the target',
    async () => {
      const id = 'a77e0000-0000-4000-8000-000000000003';
      const target = 1000;
      // 20,000 rows, all in the last month of six years: the empty first probe grows the next window over them all.
      const options = {
        seed: 9,
        exportDurationMs: 300,
        exportMsPerThousandRows: 150,
        quests: [{id, rows: 20_000, columns: 3, firstCreatedAt: new Date(Date.now() - 30 * DAY).toISOString()}],
      };
      await withWorld(options, async (world) => {
        const {sim} = world;
        const start = {start_date: new Date(Date.now() - 6 * 365 * DAY).toISOString(), target_rows_per_export: target};
        // Killed once the STATE carrying the large export's density is out, before its rows are read whole.
        const dense = (m: AirbyteMessageJson): boolean => {
          const state = m.type === 'STATE' ? (m as unknown as StateLine).state.stream.stream_state : undefined;
          return ((state as {density?: {rows_per_day?: number}} | undefined)?.density?.rows_per_day ?? 0) > 0;
        };
        const {killed, second, createdBySecond: created} = await killedThenResumed(world, id, start, dense);
        expect(second.code).toBe(0);
        expect(Math.max(0, ...created.map((e) => e.rows))).toBeLessThanOrEqual(4 * target);
        expectExactUnion(sim, id, killed.messages, second.messages);
      });
    },
    90_000
  );
});

describe('the combined layout', () => {
  const A = 'c0b10000-0000-4000-8000-00000000000a';
  const B = 'c0b10000-0000-4000-8000-00000000000b';
  const EMPTY = 'c0b10000-0000-4000-8000-0000000000ee';

  test.concurrent(
    'a read SIGKILLed midway resumes from its last STATE exactly: nothing lost, nothing twice',
    async () => {
      const options = {
        seed: 23,
        exportDurationMs: 300,
        quests: [
          {id: A, rows: 3000, columns: 4, firstCreatedAt: new Date(Date.now() - 50 * DAY).toISOString()},
          {id: B, rows: 2000, columns: 6, firstCreatedAt: new Date(Date.now() - 50 * DAY).toISOString()},
          {id: EMPTY, rows: 0, columns: 4},
        ],
      };
      await withWorld(options, async (world) => {
        const config = world.config({
          stream_layout: 'combined',
          start_date: new Date(Date.now() - 60 * DAY).toISOString(),
          target_rows_per_export: 300,
        });
        let seen = 0;
        const {first, second} = await stopThenResume(world, {
          config,
          catalog: await world.discoveredCatalog(config, 'incremental'),
          stopAt: (m) => m.type === 'STATE' && JSON.stringify(m).includes('"responses"') && ++seen === 5,
          signal: 'SIGKILL',
        });
        expect(second.code).toBe(0);
        const all = [...responses(committed(first.messages)), ...responses(second)];
        for (const q of [A, B, EMPTY]) expectQuestExact(world.sim, q, all);
        expect(states(second.messages).length).toBeGreaterThan(0);
      });
    },
    150_000
  );
});
