// Adaptive windows end to end: bin/main against the simulator, with windows split on failure, a sync
// stopped midway and resumed, and random row timelines with random faults.

import {
  committed,
  records,
  RecordMessage,
  runConnector,
  RunResult,
  startConnector,
  stateFile,
  states,
  tempDir,
  writeJson,
} from '../helpers/connector';
import {prng} from '../helpers/fake-api';
import {simCatalog, simConfig, streamOf} from '../helpers/fixtures';
import {AirbyteMessageJson} from '../helpers/protocol';
import {FaultOptions, Simulator, startSimulator} from '../../simulator';

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
  expect({quest: questId, duplicates: ids.filter((id, i) => ids.indexOf(id) !== i)}).toEqual({
    quest: questId,
    duplicates: [],
  });
  expect([...ids].sort()).toEqual(rows.map((r) => r[0]).sort());
  for (const r of delivered) {
    const created = Date.parse(String(r.record.data.created));
    expect(created).toBeGreaterThan(Date.parse(String(r.record.data._questback_window_start)));
    expect(created).toBeLessThanOrEqual(Date.parse(String(r.record.data._questback_window_end)));
  }
  const cursors = states(all)
    .filter((s) => s.state.stream.stream_descriptor.name === streamOf(questId))
    .map((s) => Date.parse(s.state.stream.stream_state.cursor));
  for (let i = 1; i < cursors.length; i++) expect(cursors[i]).toBeGreaterThanOrEqual(cursors[i - 1]);
}

async function readUntilDone(
  sim: Simulator,
  dir: string,
  config: Record<string, unknown>,
  questIds: string[],
  attempts: number
): Promise<{delivered: RecordMessage[]; all: AirbyteMessageJson[]; runs: RunResult[]}> {
  const configFile = writeJson(dir, 'config.json', config);
  const catalog = writeJson(dir, 'catalog.json', simCatalog(sim, questIds, 'incremental'));
  let state: ReturnType<typeof stateFile> = [];
  const delivered: RecordMessage[] = [];
  const all: AirbyteMessageJson[] = [];
  const runs: RunResult[] = [];
  for (let i = 0; i < attempts; i++) {
    const args = ['read', '--config', configFile, '--catalog', catalog];
    if (state.length) args.push('--state', writeJson(dir, `state-${i}.json`, state));
    const run = await runConnector(args);
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
      const sim = await startSimulator({
        seed: 61,
        exportDurationMs: 30,
        quests: [{id, rows: 3000, columns: 4, firstCreatedAt: new Date(Date.now() - 300 * DAY).toISOString()}],
        faults: {maxExportRows: 700},
      });
      try {
        const config = simConfig(sim, {start_date: new Date(Date.now() - 365 * DAY).toISOString()});
        const {delivered, all, runs} = await readUntilDone(sim, tempDir(), config, [id], 1);
        expect(runs[0].code).toBe(0);
        expect(runs[0].stdout).toMatch(/splitting \(/);
        const exports = sim.exports();
        expect(exports.some((e) => e.outcome === 'error')).toBe(true);
        expect(exports.filter((e) => e.outcome === 'ok').every((e) => e.rows <= 700)).toBe(true);
        expectExactlyOnce(sim, id, delivered, all);
      } finally {
        await sim.close();
      }
    },
    // A hang guard: about 10 s with other work on the machine.
    120_000
  );

  test.concurrent(
    'a sync stopped in the middle of an adaptive backfill resumes from its last STATE: nothing lost, nothing twice',
    async () => {
      const id = 'adad0000-0000-4000-8000-000000000002';
      const sim = await startSimulator({
        seed: 62,
        exportDurationMs: 150,
        quests: [{id, rows: 20_000, columns: 4, firstCreatedAt: new Date(Date.now() - 360 * DAY).toISOString()}],
      });
      try {
        const dir = tempDir();
        const config = writeJson(
          dir,
          'config.json',
          simConfig(sim, {start_date: new Date(Date.now() - 365 * DAY).toISOString(), target_rows_per_export: 2000})
        );
        const catalog = writeJson(dir, 'catalog.json', simCatalog(sim, [id], 'incremental'));
        // Bounds that only ask whether it hung: the 3rd STATE comes after about 5 s idle, 15-30 s with
        // other work on the machine. Waiting for the STATE itself (or the exit) is what matters.
        const first = startConnector(['read', '--config', config, '--catalog', catalog], {killAfterMs: 150_000});
        let seen = 0;
        const third = await first.waitForLine((m) => m.type === 'STATE' && ++seen === 3, 120_000);
        expect(third).toBeDefined();
        first.child.kill('SIGTERM');
        const stopped = await first.done;
        expect(stopped.code).not.toBe(0);
        const state = stateFile(stopped.messages);
        expect(Date.parse(state[0].stream.stream_state.cursor)).toBeLessThan(Date.now() - 30 * DAY);
        const resumed = await runConnector([
          'read',
          '--config',
          config,
          '--catalog',
          catalog,
          '--state',
          writeJson(dir, 'state.json', state),
        ]);
        expect(resumed.code).toBe(0);
        const delivered = [...committed(stopped.messages), ...records(resumed.messages)];
        expectExactlyOnce(sim, id, delivered, [...stopped.messages, ...resumed.messages]);
      } finally {
        await sim.close();
      }
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
        const sim = await startSimulator({
          seed,
          exportDurationMs: 20,
          quests: [{id, columns: 3, createdAt: [...times].sort((a, b) => a - b)}],
          faults,
        });
        try {
          const config = simConfig(sim, {
            start_date: new Date(start).toISOString(),
            target_rows_per_export: 100 + Math.floor(random() * 900),
          });
          const {delivered, all, runs} = await readUntilDone(sim, tempDir(), config, [id], 4);
          expect({seed, faults, exit: runs[runs.length - 1].code}).toEqual({seed, faults, exit: 0});
          expectExactlyOnce(sim, id, delivered, all);
        } finally {
          await sim.close();
        }
      };
      // Each seed has its own simulator: they run side by side.
      await Promise.all([1, 2, 3].map(one));
    },
    // A hang guard: 20 s with other work on the machine.
    240_000
  );
});
