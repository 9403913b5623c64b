// stream_layout "combined" end to end: bin/main against the simulator. One stream `responses` for all
// quests, with the answers in one object keyed by header text; discover makes no export; reads are
// exact, incremental, backfill a quest added later alone, and resume exactly after a SIGKILL.

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
import {configuredCatalog, simConfig} from '../helpers/fixtures';
import {Simulator, startSimulator} from '../../simulator';

const DAY = 86_400_000;
const A = 'c0b10000-0000-4000-8000-00000000000a';
const B = 'c0b10000-0000-4000-8000-00000000000b';
const EMPTY = 'c0b10000-0000-4000-8000-0000000000ee';
const LATER = 'c0b10000-0000-4000-8000-0000000000f0';

interface ResponsesRecord {
  quest_id: string;
  response_id: string;
  created: string | null;
  answers: Record<string, string | null>;
  _questback_window_start: string;
  _questback_window_end: string;
}

const responses = (run: Pick<RunResult, 'messages'>): ResponsesRecord[] =>
  records(run.messages)
    .filter((r) => r.record.stream === 'responses')
    .map((r) => r.record.data as unknown as ResponsesRecord);

/** Every record of the quest is a row of the simulator's truth, cell for cell, keyed by header text; each once. */
function expectQuestExact(sim: Simulator, questId: string, got: ResponsesRecord[], expectedIds?: string[]): void {
  const {header, rows} = sim.groundTruth(questId);
  const mine = got.filter((r) => r.quest_id === questId);
  const ids = mine.map((r) => r.response_id);
  expect({questId, duplicates: ids.filter((id, i) => ids.indexOf(id) !== i)}).toEqual({questId, duplicates: []});
  expect([...ids].sort()).toEqual((expectedIds ?? rows.map((r) => r[0])).sort());
  const byId = new Map(rows.map((r) => [r[0], r]));
  for (const record of mine) {
    const row = byId.get(record.response_id) as string[];
    const want = Object.fromEntries(header.map((h, i) => [h, row[i] === '' ? null : row[i]]));
    expect(record.answers).toEqual(want);
    expect(record.created).toBe(row[header.indexOf('Created')]);
  }
}

async function withSim(quests: Parameters<typeof startSimulator>[0], fn: (sim: Simulator) => Promise<void>) {
  const sim = await startSimulator(quests);
  try {
    await fn(sim);
  } finally {
    await sim.close();
  }
}

function files(sim: Simulator, overrides: Record<string, unknown> = {}) {
  const dir = tempDir();
  const config = writeJson(
    dir,
    'config.json',
    simConfig(sim, {stream_layout: 'combined', start_date: new Date(Date.now() - 60 * DAY).toISOString(), ...overrides})
  );
  return {dir, config};
}

async function discover(config: string): Promise<RunResult> {
  const run = await runConnector(['discover', '--config', config]);
  expect(run.code).toBe(0);
  return run;
}

describe('stream_layout combined', () => {
  const quests = {
    seed: 17,
    exportDurationMs: 30,
    quests: [
      {id: A, rows: 300, columns: 5, firstCreatedAt: new Date(Date.now() - 50 * DAY).toISOString()},
      {
        id: B,
        rows: 120,
        columns: 9,
        titles: 'norwegian' as const,
        firstCreatedAt: new Date(Date.now() - 20 * DAY).toISOString(),
      },
      {id: EMPTY, rows: 0, columns: 4},
    ],
  };

  test.concurrent(
    'discover lists responses and columns with no export; a first read, an incremental one and a quest removed are exact',
    async () => {
      await withSim(quests, async (sim) => {
        const {dir, config} = files(sim, {target_rows_per_export: 100});
        const found = await discover(config);
        expect(sim.exports()).toEqual([]);
        expect(sim.requests().filter((r) => r.path.includes('/v1/'))).toEqual([]);
        const catalog = configuredCatalog(found.messages, 'incremental');
        const listed = catalog.streams as {stream: {name: string; is_resumable?: boolean}}[];
        expect(listed.map((s) => [s.stream.name, s.stream.is_resumable])).toEqual([
          ['responses', true],
          ['columns', true],
        ]);
        const catalogFile = writeJson(dir, 'catalog.json', catalog);

        const first = await runConnector(['read', '--config', config, '--catalog', catalogFile]);
        expect(first.code).toBe(0);
        for (const q of [A, B, EMPTY]) expectQuestExact(sim, q, responses(first));
        // Every quest's cursor and density in the one stream state.
        const state = stateFile(first.messages);
        const quest = (
          state.find((s) => s.stream.stream_descriptor.name === 'responses')?.stream.stream_state as unknown as {
            quests: Record<string, {cursor: string}>;
          }
        ).quests;
        expect(Object.keys(quest).sort()).toEqual([A, B, EMPTY].sort());

        const before = new Map([A, B].map((q) => [q, new Set(sim.groundTruth(q).rows.map((r) => r[0]))]));
        sim.addResponses(A, 7);
        sim.addResponses(B, 3);
        await new Promise((resolve) => setTimeout(resolve, 20));
        const second = await runConnector([
          'read',
          '--config',
          config,
          '--catalog',
          catalogFile,
          '--state',
          writeJson(dir, 'state1.json', state),
        ]);
        expect(second.code).toBe(0);
        for (const q of [A, B]) {
          const fresh = sim
            .groundTruth(q)
            .rows.map((r) => r[0])
            .filter((id) => !before.get(q)?.has(id));
          expectQuestExact(sim, q, responses(second), fresh);
        }
        expect(responses(second).filter((r) => r.quest_id === EMPTY)).toEqual([]);

        // A quest removed from quest_ids: the others read on from their cursors (nothing new), its entry stays.
        const third = await runConnector([
          'read',
          '--config',
          writeJson(
            dir,
            'config-removed.json',
            simConfig(sim, {
              stream_layout: 'combined',
              start_date: new Date(Date.now() - 60 * DAY).toISOString(),
              quest_ids: [A, EMPTY],
            })
          ),
          '--catalog',
          catalogFile,
          '--state',
          writeJson(dir, 'state2.json', stateFile(second.messages, state)),
        ]);
        expect(third.code).toBe(0);
        expect(responses(third)).toEqual([]);
        // The removed quest keeps its entry; re-adding it later would resume from its cursor.
        const kept = (
          stateFile(third.messages).find((s) => s.stream.stream_descriptor.name === 'responses')?.stream
            .stream_state as unknown as {quests: Record<string, unknown>}
        ).quests;
        expect(Object.keys(kept).sort()).toEqual([A, B, EMPTY].sort());
      });
    },
    120_000
  );

  test.concurrent(
    'a quest added to quest_ids later backfills from start_date alone',
    async () => {
      await withSim(
        {
          ...quests,
          quests: [
            ...quests.quests,
            {id: LATER, rows: 80, columns: 3, firstCreatedAt: new Date(Date.now() - 40 * DAY).toISOString()},
          ],
        },
        async (sim) => {
          const {dir} = files(sim);
          const without = writeJson(
            dir,
            'without.json',
            simConfig(sim, {
              stream_layout: 'combined',
              start_date: new Date(Date.now() - 60 * DAY).toISOString(),
              quest_ids: [A, B, EMPTY],
            })
          );
          const withLater = writeJson(
            dir,
            'with.json',
            simConfig(sim, {
              stream_layout: 'combined',
              start_date: new Date(Date.now() - 60 * DAY).toISOString(),
              quest_ids: [A, B, EMPTY, LATER],
            })
          );
          const catalogFile = writeJson(
            dir,
            'catalog.json',
            configuredCatalog((await discover(without)).messages, 'incremental')
          );
          const first = await runConnector(['read', '--config', without, '--catalog', catalogFile]);
          expect(first.code).toBe(0);
          const second = await runConnector([
            'read',
            '--config',
            withLater,
            '--catalog',
            catalogFile,
            '--state',
            writeJson(dir, 'state.json', stateFile(first.messages)),
          ]);
          expect(second.code).toBe(0);
          expectQuestExact(sim, LATER, responses(second));
          expect(responses(second).filter((r) => r.quest_id !== LATER)).toEqual([]);
        }
      );
    },
    120_000
  );

  test.concurrent(
    'a read SIGKILLed midway resumes from its last STATE exactly: nothing lost, nothing twice',
    async () => {
      await withSim(
        {
          seed: 23,
          exportDurationMs: 300,
          quests: [
            {id: A, rows: 3000, columns: 4, firstCreatedAt: new Date(Date.now() - 50 * DAY).toISOString()},
            {id: B, rows: 2000, columns: 6, firstCreatedAt: new Date(Date.now() - 50 * DAY).toISOString()},
            {id: EMPTY, rows: 0, columns: 4},
          ],
        },
        async (sim) => {
          const {dir, config} = files(sim, {target_rows_per_export: 300});
          const catalogFile = writeJson(
            dir,
            'catalog.json',
            configuredCatalog((await discover(config)).messages, 'incremental')
          );
          const first = startConnector(['read', '--config', config, '--catalog', catalogFile], {killAfterMs: 90_000});
          let seen = 0;
          const fifth = await first.waitForLine(
            (m) => m.type === 'STATE' && JSON.stringify(m).includes('"responses"') && ++seen === 5,
            80_000
          );
          expect(fifth).toBeDefined();
          first.child.kill('SIGKILL');
          const killed = await first.done;
          const second = await runConnector([
            'read',
            '--config',
            config,
            '--catalog',
            catalogFile,
            '--state',
            writeJson(dir, 'state.json', stateFile(killed.messages)),
          ]);
          expect(second.code).toBe(0);
          const kept = committed(killed.messages)
            .filter((r: RecordMessage) => r.record.stream === 'responses')
            .map((r) => r.record.data as unknown as ResponsesRecord);
          const all = [...kept, ...responses(second)];
          for (const q of [A, B, EMPTY]) expectQuestExact(sim, q, all);
          expect(states(second.messages).length).toBeGreaterThan(0);
        }
      );
    },
    150_000
  );
});
