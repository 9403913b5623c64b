// stream_layout "combined" end to end: the connector in-process against the simulator. One stream
// `responses` for all quests, with the answers in one object keyed by header text; discover makes no
// export; reads are exact, incremental, and backfill a quest added later alone (the resume after a
// SIGKILL is in attempts.cases.ts).

import {stateFile} from '../helpers/connector';
import {expectQuestExact, questEntries, responses} from '../helpers/combined';
import {configuredCatalog, withWorld, World} from '../helpers/fixtures';

const DAY = 86_400_000;
const A = 'c0b10000-0000-4000-8000-00000000000a';
const B = 'c0b10000-0000-4000-8000-00000000000b';
const EMPTY = 'c0b10000-0000-4000-8000-0000000000ee';
const LATER = 'c0b10000-0000-4000-8000-0000000000f0';

/** A combined-layout config for the world's simulator, start_date 60 days back. */
const combinedConfig = (world: World, overrides: Record<string, unknown> = {}): string =>
  world.config({stream_layout: 'combined', start_date: new Date(Date.now() - 60 * DAY).toISOString(), ...overrides});

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
      await withWorld(quests, async (world) => {
        const {sim} = world;
        const config = combinedConfig(world, {target_rows_per_export: 100});
        const found = await world.run(['discover', '--config', config]);
        expect(found.code).toBe(0);
        expect(sim.exports()).toEqual([]);
        expect(sim.requests().filter((r) => r.path.includes('/v1/'))).toEqual([]);
        // The streams of responses this test is about (the layout may list other kinds beside them).
        const listed = (
          configuredCatalog(found.messages, 'incremental').streams as {stream: {name: string; is_resumable?: boolean}}[]
        ).filter((s) => ['responses', 'columns'].includes(s.stream.name));
        expect(listed.map((s) => [s.stream.name, s.stream.is_resumable])).toEqual([
          ['responses', true],
          ['columns', true],
        ]);
        const catalogFile = world.file({streams: listed});

        const first = await world.run(['read', '--config', config, '--catalog', catalogFile]);
        expect(first.code).toBe(0);
        for (const q of [A, B, EMPTY]) expectQuestExact(sim, q, responses(first));
        // Every quest's cursor and density in the one stream state.
        const state = stateFile(first.messages);
        expect(Object.keys(questEntries(state)).sort()).toEqual([A, B, EMPTY].sort());

        const before = new Map([A, B].map((q) => [q, new Set(sim.groundTruth(q).rows.map((r) => r[0]))]));
        sim.addResponses(A, 7);
        sim.addResponses(B, 3);
        // A sync reads up to the whole second before it starts (windows end on whole seconds): the new rows lie before it.
        await world.clock.sleep(1_020);
        const second = await world.run([
          'read',
          '--config',
          config,
          '--catalog',
          catalogFile,
          '--state',
          world.file(state),
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
        const third = await world.run([
          'read',
          '--config',
          combinedConfig(world, {quest_ids: [A, EMPTY]}),
          '--catalog',
          catalogFile,
          '--state',
          world.file(stateFile(second.messages, state)),
        ]);
        expect(third.code).toBe(0);
        expect(responses(third)).toEqual([]);
        // The removed quest keeps its entry; re-adding it later would resume from its cursor.
        expect(Object.keys(questEntries(stateFile(third.messages))).sort()).toEqual([A, B, EMPTY].sort());
      });
    },
    120_000
  );

  test.concurrent(
    'a quest added to quest_ids later backfills from start_date alone',
    async () => {
      await withWorld(
        {
          ...quests,
          quests: [
            ...quests.quests,
            {id: LATER, rows: 80, columns: 3, firstCreatedAt: new Date(Date.now() - 40 * DAY).toISOString()},
          ],
        },
        async (world) => {
          const {sim} = world;
          const without = combinedConfig(world, {quest_ids: [A, B, EMPTY]});
          const withLater = combinedConfig(world, {quest_ids: [A, B, EMPTY, LATER]});
          const catalogFile = await world.discoveredCatalog(without, 'incremental');
          const first = await world.run(['read', '--config', without, '--catalog', catalogFile]);
          expect(first.code).toBe(0);
          const second = await world.run([
            'read',
            '--config',
            withLater,
            '--catalog',
            catalogFile,
            '--state',
            world.file(stateFile(first.messages)),
          ]);
          expect(second.code).toBe(0);
          expectQuestExact(sim, LATER, responses(second));
          expect(responses(second).filter((r) => r.quest_id !== LATER)).toEqual([]);
        }
      );
    },
    120_000
  );
});
