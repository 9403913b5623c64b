// The seed's paging rules, read once (src/api/paged-list.ts): against the simulator's list endpoint
// (a quest's invitations), through the connection every request of the connector goes through.

import {openConnection} from '../../src/api/connection';
import {retryPolicy} from '../../src/api/http';
import {PageReport} from '../../src/api/paged-list';
import {parseConfig} from '../../src/core/config';
import {Simulator, startSimulator} from '../../simulator';
import {TestClock} from '../helpers/clock';
import {quietLogger} from '../helpers/fake-api';
import {simConfig} from '../helpers/fixtures';

const QUEST = 'a9e10000-0000-4000-8000-000000000001';

/** What these cases keep of an invitation: its id, and the time since/until filter on. */
interface Item {
  invitationId: string;
  addedAt: string;
}

const asItem = (raw: unknown): Item => {
  const {invitationId, addedAt} = raw as Item;
  if (typeof invitationId !== 'string' || typeof addedAt !== 'string')
    throw new Error(`not an invitation: ${JSON.stringify(raw)}`);
  return {invitationId, addedAt};
};

/** A simulator with one quest, and its list read through a connection on the simulator's clock. */
async function setUp(seed: number) {
  const clock = new TestClock(seed);
  const sim = await startSimulator({
    clock,
    seed,
    quests: [
      {id: QUEST, rows: 5, invitations: 7, firstCreatedAt: new Date(clock.now() - 10 * 86_400_000).toISOString()},
    ],
  });
  const {config} = parseConfig(simConfig(sim), clock.now());
  const {api} = openConnection(config, {
    runtime: clock,
    logger: quietLogger(),
    onSecret: () => undefined,
    policy: retryPolicy('sync', 10_000),
    idleTimeoutMs: 10_000,
  });
  const reports: PageReport[] = [];
  const read = async (options: {take?: number; since?: number; until?: number} = {}) => {
    const pages: Item[][] = [];
    for await (const page of api.questList(QUEST, 'invitations', {
      ...options,
      item: asItem,
      onPage: (p) => reports.push(p),
    }))
      pages.push(page);
    return pages;
  };
  return {sim, clock, read, reports};
}

/** Runs `fn` on a fresh simulator's list (setUp), the simulator closed afterwards. */
async function withList(seed: number, fn: (list: Awaited<ReturnType<typeof setUp>>) => Promise<void>): Promise<void> {
  const list = await setUp(seed);
  try {
    await fn(list);
  } finally {
    await list.sim.close();
  }
}

/** The whole list as the simulator has it (its ground truth). */
function wholeList(sim: Simulator): Item[] {
  return sim.invitations(QUEST).map(asItem);
}

/** The skip and take of each list request the simulator saw. */
const asked = (sim: Simulator) =>
  sim.requests('invitations').map((r) => {
    const q = new URLSearchParams(r.query ?? '');
    return [q.get('skip'), q.get('take')].map(Number);
  });

describe('a list read page by page (paged-list)', () => {
  test('pages of exactly take items are followed by another request; the list ends with an empty page; each page is reported', () =>
    withList(1, async ({sim, read, reports}) => {
      const pages = await read({take: 2});
      const all = wholeList(sim);
      expect(all.length).toBeGreaterThanOrEqual(3);
      expect(pages.flat()).toEqual(all);
      expect(pages.every((p) => p.length <= 2)).toBe(true);
      // skip moves on by the items received; the request after the last item gets the empty page.
      const skips = [...Array(Math.ceil(all.length / 2)).keys()].map((k) => k * 2).concat(all.length);
      expect(asked(sim)).toEqual(skips.map((skip) => [skip, 2]));
      expect(reports.map((r) => r.count)).toEqual(skips.map((skip) => Math.max(0, Math.min(2, all.length - skip))));
      expect(reports.map((r) => r.index)).toEqual(skips.map((_, i) => i));
    }));

  test('take is at most 1000 by default; since is exclusive and until inclusive, sent with milliseconds', () =>
    withList(2, async ({sim, read}) => {
      await read();
      const all = wholeList(sim);
      expect(asked(sim)[0]).toEqual([0, 1000]);
      const since = Date.parse(all[0].addedAt);
      const until = Date.parse(all[2].addedAt);
      const pages = await read({since, until});
      expect(pages.flat()).toEqual(all.slice(1, 3));
      const last = new URLSearchParams(sim.requests('invitations').at(-1)?.query ?? '');
      expect([last.get('since'), last.get('until')]).toEqual([all[0].addedAt, all[2].addedAt]);
    }));

  test('a page shorter than take is not taken as the end: a service that caps its pages below take is read whole', () =>
    withList(3, async ({sim, read}) => {
      const all = wholeList(sim);
      // The service answers at most 2 items, whatever take asks for.
      sim.setInvitationList({maxTake: 2});
      const before = asked(sim).length;
      const pages = await read({take: 5});
      expect(pages.flat()).toEqual(all);
      expect(
        asked(sim)
          .slice(before)
          .map(([skip]) => skip)
      ).toEqual([...[...Array(Math.ceil(all.length / 2)).keys()].map((k) => k * 2), all.length]);
    }));

  test('a list wrapped in an object reads; a service that ignores skip is an error, not a list without end', () =>
    withList(4, async ({sim, read}) => {
      const all = wholeList(sim);
      sim.setInvitationList({wrapper: 'items'});
      expect((await read({take: 2})).flat()).toEqual(all);
      sim.on('invitations', (ctx) => ctx.json(200, {items: all.slice(0, 2), total: all.length}));
      await expect(read({take: 2})).rejects.toThrow(
        /Listing the invitations for quest .* the service answered the same 2 items at skip 2 as at the page before, so it ignores skip/
      );
      sim.on('invitations', (ctx) => ctx.json(200, {detail: 'fine'}));
      await expect(read({take: 2})).rejects.toThrow(/came without a list of items \(no list in the answer\)/);
    }));

  test('a bound in the future is refused by the service and said as a clock difference; a negative or too large take is refused before any request', () =>
    withList(5, async ({sim, clock, read}) => {
      await expect(read({until: clock.now() + 86_400_000})).rejects.toThrow(
        /Listing the invitations for quest .* failed: the service rejected until .* as in the future/
      );
      const before = sim.requests('invitations').length;
      await expect(read({take: 1001})).rejects.toThrow(RangeError);
      await expect(read({take: -1})).rejects.toThrow(RangeError);
      await expect(read({take: 0})).rejects.toThrow(/at least one item per page/);
      await expect(read({since: 2000, until: 1000})).rejects.toThrow(/since .* lies after its until/);
      expect(sim.requests('invitations')).toHaveLength(before);
    }));

  test("the rate limit is waited out by the connection (the request path's own), and the read goes on", () =>
    withList(6, async ({sim, clock, read}) => {
      const all = wholeList(sim);
      sim.setFaults({rateLimit: {limit: 2, windowMs: 60_000, retryAfter: true}});
      const started = clock.now();
      const pages = await read({take: 1});
      expect(pages.flat()).toEqual(all);
      // One more request than items, two a minute: the read waited for the windows on the clock.
      expect(clock.now() - started).toBeGreaterThanOrEqual(Math.floor(all.length / 2) * 60_000);
    }));
});
