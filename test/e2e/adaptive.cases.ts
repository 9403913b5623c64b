// Adaptive windows end to end: the connector in-process against the simulator on a virtual clock, with
// windows split on failure, a sync stopped midway and resumed, and random row timelines with random faults.

import {committed, records, RecordMessage, repeated, RunResult, stateFile, states} from '../helpers/connector';
import {prng} from '../helpers/fake-api';
import {simCatalog, stopThenResume, streamOf, withWorld, World} from '../helpers/fixtures';
import {AirbyteMessageJson} from '../helpers/protocol';
import {FaultOptions, Simulator} from '../../simulator';

const DAY = 86_400_000;

/** Every row once, each inside the window it says it came from; checkpoints never go back and end at the sync's end. */
function expectExactlyOnce(
  sim: Simulator,
  questId: string,
  delivered: RecordMessage[],
  all: AirbyteMessageJson[]
): void {
  const {rows} = sim.groundTruth(questId);
  const ids = delivered.map((r) => String(r.record.data.response_id));
  expect({quest: questId, duplicates: repeated(ids)}).toEqual({quest: questId, duplicates: []});
  expect([...ids].sort()).toEqual(rows.map((r) => r[0]).sort());
  // One comparison for all (an expect per record costs more than the read).
  const outside = delivered.filter((r) => {
    const created = Date.parse(String(r.record.data.created));
    const {_questback_window_start: start, _questback_window_end: end} = r.record.data;
    return !(created > Date.parse(String(start)) && created <= Date.parse(String(end)));
  });
  expect(outside).toEqual([]);
  const cursors = states(all)
    .filter((s) => s.state.stream.stream_descriptor.name === streamOf(questId))
    .map((s) => Date.parse(s.state.stream.stream_state.cursor));
  expect(cursors.filter((cursor, i) => i > 0 && cursor < cursors[i - 1])).toEqual([]);
}

async function readUntilDone(
  world: World,
  overrides: Record<string, unknown>,
  questIds: string[],
  attempts: number
): Promise<{delivered: RecordMessage[]; all: AirbyteMessageJson[]; runs: RunResult[]}> {
  const configFile = world.config(overrides);
  const catalog = world.file(simCatalog(world.sim, questIds, 'incremental'));
  let state: ReturnType<typeof stateFile> = [];
  const delivered: RecordMessage[] = [];
  const all: AirbyteMessageJson[] = [];
  const runs: RunResult[] = [];
  for (let i = 0; i < attempts; i++) {
    const args = ['read', '--config', configFile, '--catalog', catalog];
    if (state.length) args.push('--state', world.file(state));
    const run = await world.run(args);
    runs.push(run);
    expect(run.invalid).toEqual([]);
    delivered.push(...committed(run.messages));
    all.push(...run.messages);
    state = stateFile(run.messages, state);
    if (run.code === 0) break;
  }
  return {delivered, all, runs};
}

describe('adaptive windows, end to end', () => {
  test.concurrent(
    'a window the service chokes on is split until its exports go through: every row exactly once',
    async () => {
      const id = 'adad0000-0000-4000-8000-000000000001';
      const options = {
        seed: 61,
        exportDurationMs: 30,
        quests: [{id, rows: 3000, columns: 4, firstCreatedAt: new Date(Date.now() - 300 * DAY).toISOString()}],
        faults: {maxExportRows: 700},
      };
      await withWorld(options, async (world) => {
        const {sim} = world;
        const start = {start_date: new Date(Date.now() - 365 * DAY).toISOString()};
        const {delivered, all, runs} = await readUntilDone(world, start, [id], 1);
        expect(runs[0].code).toBe(0);
        expect(runs[0].stdout).toMatch(/splitting \(/);
        const exports = sim.exports();
        expect(exports.some((e) => e.outcome === 'error')).toBe(true);
        expect(exports.filter((e) => e.outcome === 'ok').every((e) => e.rows <= 700)).toBe(true);
        expectExactlyOnce(sim, id, delivered, all);
      });
    },
    // A hang guard.
    120_000
  );

  test.concurrent(
    'a sync stopped in the middle of an adaptive backfill resumes from its last STATE: nothing lost, nothing twice',
    async () => {
      const id = 'adad0000-0000-4000-8000-000000000002';
      const options = {
        seed: 62,
        exportDurationMs: 150,
        // Ten exports' worth of rows (the stop is at the third STATE): the backfill's progress is the point, not its size.
        quests: [{id, rows: 5_000, columns: 4, firstCreatedAt: new Date(Date.now() - 360 * DAY).toISOString()}],
      };
      await withWorld(options, async (world) => {
        const {sim} = world;
        let seen = 0;
        const {first, state, second} = await stopThenResume(world, {
          config: world.config({
            start_date: new Date(Date.now() - 365 * DAY).toISOString(),
            target_rows_per_export: 500,
          }),
          catalog: world.file(simCatalog(sim, [id], 'incremental')),
          stopAt: (m) => m.type === 'STATE' && ++seen === 3,
          signal: 'SIGTERM',
        });
        expect(first.code).not.toBe(0);
        expect(Date.parse(state[0].stream.stream_state.cursor)).toBeLessThan(sim.clock.now() - 30 * DAY);
        expect(second.code).toBe(0);
        const delivered = [...committed(first.messages), ...records(second.messages)];
        expectExactlyOnce(sim, id, delivered, [...first.messages, ...second.messages]);
      });
    },
    240_000
  );

  test.concurrent(
    'property: random row timelines and random faults deliver the truth exactly once',
    async () => {
      const one = async (seed: number): Promise<void> => {
        const random = prng(seed * 104_729);
        const now = Date.now();
        const start = now - Math.floor((30 + random() * 1500) * DAY);
        const times = new Set<number>();
        for (let b = 1 + Math.floor(random() * 3); b > 0; b--) {
          const center = start + random() * (now - 120_000 - start);
          const width = (0.1 + random() * 40) * DAY;
          for (let n = Math.floor(random() * 1500); n > 0; n--) {
            times.add(Math.floor(Math.min(now - 61_000, Math.max(start + 1, center + (random() - 0.5) * width))));
          }
        }
        const faults: FaultOptions = {
          exportErrorRate: random() * 0.2,
          truncatedDownloadRate: random() * 0.3,
          goneRate: random() * 0.1,
          ...(random() < 0.5 ? {maxExportRows: 200 + Math.floor(random() * 1000)} : {}),
        };
        const id = `adad0000-0000-4000-8000-00000000010${seed}`;
        const options = {
          seed,
          exportDurationMs: 20,
          quests: [{id, columns: 3, createdAt: [...times].sort((a, b) => a - b)}],
          faults,
        };
        await withWorld(options, async (world) => {
          const overrides = {
            start_date: new Date(start).toISOString(),
            target_rows_per_export: 100 + Math.floor(random() * 900),
          };
          const {delivered, all, runs} = await readUntilDone(world, overrides, [id], 4);
          expect({seed, faults, exit: runs[runs.length - 1].code}).toEqual({seed, faults, exit: 0});
          expectExactlyOnce(world.sim, id, delivered, all);
        });
      };
      // Each seed has its own simulator: they run side by side.
      await Promise.all([1, 2, 3].map(one));
    },
    // A hang guard.
    240_000
  );
});
