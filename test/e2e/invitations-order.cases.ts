// The invitations list in an order that moves while it is read: by the last change of status
// ('changed': an invitation sent meanwhile moves to the end, and every one after its old place one to
// the left), or another order in every request ('unstable'). Every invitation once, or a warning that
// says some may be missing from this sync.

import {errorTraces, logLines, RunResult, warnings} from '../helpers/connector';
import {withWorld, World} from '../helpers/fixtures';
import {invitationRecords, listRequests, Q1, quests, sync} from '../helpers/invitations';

const MINUTE = 60_000;
/** Invitations added just before the read: 64% are sent 1 to 30 minutes after they were added. */
const ADDED = 2200;

/**
 * A quest whose ADDED invitations were all added at one moment, read in 'changed' order while the
 * list request of each `pauses` entry (1-based among the read's list requests) waits until that
 * long after the moment. Resolves to the run and, for each pause, how many invitations of the first
 * page (those added first: nothing changed before the read began) changed while it waited.
 */
async function readWhileSent(world: World, pauses: Map<number, number>): Promise<{run: RunResult; moved: number[]}> {
  world.sim.setInvitationList({order: 'changed'});
  const addedAt = world.clock.now();
  world.sim.addInvitations(Q1, ADDED);
  // Every invitation visible (they are added 1 ms apart), none sent yet.
  await world.clock.sleep(10_000);
  const firstPage = () => world.sim.invitations(Q1).slice(0, 1000);
  const moved: number[] = [];
  let n = 0;
  world.sim.on('invitations', async (ctx) => {
    const until = pauses.get(++n);
    if (until !== undefined) {
      const before = firstPage();
      await ctx.pause(addedAt + until - ctx.now());
      moved.push(firstPage().filter((item, i) => item.sent !== before[i].sent).length);
    }
    return ctx.next();
  });
  return {run: await sync(world), moved};
}

/** The read emitted each invitation the quest has once (their statuses are those each had when it was read). */
function expectEachOnce(world: World, run: RunResult): void {
  expect(errorTraces(run.messages)).toEqual([]);
  expect(run.code).toBe(0);
  const ids = invitationRecords(run).map((r) => r.invitation_id as string);
  expect(ids.length - new Set(ids).size).toBe(0);
  expect([...ids].sort()).toEqual(
    world.sim
      .invitations(Q1)
      .map((i) => i.invitationId)
      .sort()
  );
}

const passLogs = (run: RunResult) =>
  logLines(run.messages).filter((l) => /reading the list once more \(pass 2 of 2\)/.test(l.message));

describe('the invitations list in an order that moves while it is read', () => {
  test.concurrent(
    "order 'changed', invitations sent between requests move to the end: the pages' overlap passes over none",
    () =>
      withWorld(quests([0]), async (world) => {
        // The second and third requests wait until 100 s and 140 s after the invitations were added.
        const {run, moved} = await readWhileSent(
          world,
          new Map([
            [2, 100_000],
            [3, 140_000],
          ])
        );
        // Some of the first page moved left of the second page's start, fewer than the overlap (50).
        expect(moved[0]).toBeGreaterThan(0);
        expect(moved[0]).toBeLessThan(50);
        expectEachOnce(world, run);
        expect(passLogs(run)).toEqual([]);
        expect(warnings(run.messages)).toEqual([]);
      })
  );

  test.concurrent(
    "order 'changed', more invitations sent between two requests than the overlap: a second read of the list finds the rest",
    () =>
      withWorld(quests([0]), async (world) => {
        // The second request waits until every invitation sent without a schedule is sent.
        const {run, moved} = await readWhileSent(world, new Map([[2, 31 * MINUTE]]));
        expect(moved[0]).toBeGreaterThan(300);
        expectEachOnce(world, run);
        expect(passLogs(run)).toEqual([expect.objectContaining({level: 'INFO'})]);
        expect(passLogs(run)[0].message).toMatch(new RegExp(`quest ${Q1}: the list's order moved while it was read`));
        expect(warnings(run.messages)).toEqual([]);
        // Two reads of the list: 4 requests each (pages at skip 0, 950, 1900 and the tail's 50).
        expect(listRequests(world)).toHaveLength(8);
      })
  );

  test.concurrent(
    "order 'unstable' (another order in every request): two reads, no invitation twice, and a warning with what it means",
    () =>
      withWorld(quests([ADDED], {invitationList: {order: 'unstable'}}), async (world) => {
        const run = await sync(world);
        // The sync succeeds with what it could read: a failure would keep every invitation out.
        expect(errorTraces(run.messages)).toEqual([]);
        expect(run.code).toBe(0);
        const ids = invitationRecords(run).map((r) => r.invitation_id as string);
        expect(ids.length - new Set(ids).size).toBe(0);
        expect(passLogs(run)).toHaveLength(1);
        expect(warnings(run.messages)).toEqual([
          expect.stringMatching(
            new RegExp(
              `^Stream invitations: quest ${Q1}: the service's order of the invitations list moved while it was read, in each of 2 reads .* some of the quest's invitations may be missing from this sync: ${ids.length.toLocaleString('en-US')} invitations read, .* the next sync reads them again`
            )
          ),
        ]);
        expect(listRequests(world)).toHaveLength(8);
      })
  );
});
