// check of hundreds of quests through bin/main against a simulator that answers every request in 1.3 s: it
// keeps within its deadline (a check that does not fails as "too slow"), checks quests side by side,
// tells the quests that fail alike once, and prints no Node warning. The timing model (rounds of
// LIMITS.check.concurrency answers) is proved on a virtual clock in test/unit/check.test.ts; here the
// real HTTP stack runs, so the only time bound is the check's own deadline.

import {LIMITS} from '../../src/core/limits';
import {runConnector, tempDir, writeJson} from '../helpers/connector';
import {simConfig} from '../helpers/fixtures';
import {QuestConfig, Simulator, startSimulator} from '../../simulator';

// Hundreds of quests: more than the check's 32 at a time, rounds enough to show the deadline holds. The bench checks 500.
const QUESTS = 300;
const LATENCY_MS = 1300;

const questIds = (prefix: string): string[] =>
  Array.from({length: QUESTS}, (_, i) => `${prefix}-0000-4000-8000-${String(i).padStart(12, '0')}`);

/** A simulator of QUESTS quests of two rows each; `forbidden` of them answer 403. */
function slowSimulator(ids: readonly string[], forbidden: readonly string[] = []): Promise<Simulator> {
  const quests: QuestConfig[] = ids.map((id) => ({id, rows: 2, ...(forbidden.includes(id) ? {forbidden: true} : {})}));
  return startSimulator({seed: 17, quests, faults: {latencyMs: LATENCY_MS}});
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

async function check(sim: Simulator, ids: readonly string[]) {
  const config = writeJson(tempDir('questback-many-'), 'config.json', simConfig(sim, {quest_ids: ids}));
  const result = await runConnector(['check', '--config', config]);
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
      const sim = await slowSimulator(ids);
      try {
        const result = await check(sim, ids);
        expect(result.status).toEqual({status: 'SUCCEEDED'});
        expect(result.code).toBe(0);
        expect(result.stderr).toBe('');
        expect(sim.requests().filter((r) => r.path.endsWith('/invitations'))).toHaveLength(QUESTS);
        // A request cannot arrive before an answer frees its place: never more than the limit at once.
        expect(mostAtOnce(sim)).toBeLessThanOrEqual(LIMITS.check.concurrency);
        expect(mostAtOnce(sim)).toBeGreaterThan(4);
      } finally {
        await sim.close();
      }
    },
    3 * LIMITS.check.deadlineMs
  );

  test.concurrent(
    '3 forbidden quests among them: one message names the three, in quest_ids order',
    async () => {
      const ids = questIds('c4ec0002');
      const forbidden = [ids[QUESTS - 1], ids[7], ids[250]];
      const sim = await slowSimulator(ids, forbidden);
      try {
        const result = await check(sim, ids);
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
        await sim.close();
      }
    },
    3 * LIMITS.check.deadlineMs
  );
});
