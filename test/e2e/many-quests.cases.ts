// check of hundreds of quests against a simulator that answers every request in 1.3 s: it keeps within
// its deadline (a check that does not fails as "too slow"), checks quests side by side, tells the
// quests that fail alike once, and raises no Node warning. The real HTTP stack runs, in-process, on a
// virtual clock shared with the simulator: the answers' latency takes no real time, and the only time
// bound is the check's own deadline, on that clock.

import {LIMITS} from '../../src/core/limits';
import {startWorld, World} from '../helpers/fixtures';
import {QuestConfig, Simulator} from '../../simulator';

// Hundreds of quests: more than the check's 32 at a time, rounds enough to show the deadline holds. The bench checks 500.
const QUESTS = 300;
const LATENCY_MS = 1300;

const questIds = (prefix: string): string[] =>
  Array.from({length: QUESTS}, (_, i) => `${prefix}-0000-4000-8000-${String(i).padStart(12, '0')}`);

/** A simulator of QUESTS quests of two rows each; `forbidden` of them answer 403. */
function slowWorld(ids: readonly string[], forbidden: readonly string[] = []): Promise<World> {
  const quests: QuestConfig[] = ids.map((id) => ({id, rows: 2, ...(forbidden.includes(id) ? {forbidden: true} : {})}));
  return startWorld({seed: 17, quests, faults: {latencyMs: LATENCY_MS}});
}

/** The most access checks that arrived within less than one answer's time of each other. */
function mostAtOnce(sim: Simulator): number {
  const arrivals = sim
    .requests()
    .filter((r) => r.path.endsWith('/invitations'))
    .map((r) => r.at)
    .sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < arrivals.length; i++) {
    while (arrivals[i] - arrivals[j] >= LATENCY_MS) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

async function check(world: World, ids: readonly string[]) {
  const result = await world.run(['check', '--config', world.config({quest_ids: ids})]);
  expect(result.invalid).toEqual([]);
  const status = result.messages.find((m) => m.type === 'CONNECTION_STATUS') as
    {connectionStatus: {status: string; message?: string}} | undefined;
  return {...result, status: status?.connectionStatus};
}

describe(`check of ${QUESTS} quests on a service answering in ${LATENCY_MS / 1000} s`, () => {
  test.concurrent(
    'passes within its deadline, with quests checked side by side and nothing on stderr',
    async () => {
      const ids = questIds('c4ec0001');
      const world = await slowWorld(ids);
      const {sim} = world;
      try {
        const result = await check(world, ids);
        expect(result.status).toEqual({status: 'SUCCEEDED'});
        expect(result.code).toBe(0);
        expect(result.stderr).toBe('');
        expect(sim.requests().filter((r) => r.path.endsWith('/invitations'))).toHaveLength(QUESTS);
        // A request cannot arrive before an answer frees its place: never more than the limit at once.
        expect(mostAtOnce(sim)).toBeLessThanOrEqual(LIMITS.check.concurrency);
        expect(mostAtOnce(sim)).toBeGreaterThan(4);
      } finally {
        await world.close();
      }
    },
    3 * LIMITS.check.deadlineMs
  );

  test.concurrent(
    '3 forbidden quests among them: one message names the three, in quest_ids order',
    async () => {
      const ids = questIds('c4ec0002');
      const forbidden = [ids[QUESTS - 1], ids[7], ids[250]];
      const world = await slowWorld(ids, forbidden);
      try {
        const result = await check(world, ids);
        expect(result.status?.status).toBe('FAILED');
        expect(result.stderr).toBe('');
        const inOrder = [ids[7], ids[250], ids[QUESTS - 1]];
        expect(result.status?.message).toMatch(
          new RegExp(
            `^3 of ${QUESTS} quest\\(s\\) cannot be read: Checking access for 3 quests \\(${inOrder.join(', ')}\\) failed: HTTP 403 - .*no permission for this quest.*\\(quest ${inOrder[0]}: traceId \\S+`
          )
        );
        expect(result.status?.message?.split('HTTP 403')).toHaveLength(2);
      } finally {
        await world.close();
      }
    },
    3 * LIMITS.check.deadlineMs
  );
});
