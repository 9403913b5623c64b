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

/** What a read of the list asks beside the paging: a key makes the pages overlap. */
interface ReadOptions {
  take?: number;
  since?: number;
  until?: number;
  keyed?: boolean;
}

/** A simulator with one quest, and its list read through a connection on the simulator's clock. */
async function setUp(seed: number, invitations: number) {
  const clock = new TestClock(seed);
  const sim = await startSimulator({
    clock,
    seed,
    quests: [{id: QUEST, rows: 5, invitations, firstCreatedAt: new Date(clock.now() - 10 * 86_400_000).toISOString()}],
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
  const gaps: PageReport[] = [];
  const read = async ({keyed, ...options}: ReadOptions = {}) => {
    const pages: Item[][] = [];
    for await (const page of api.questList(QUEST, 'invitations', {
      ...options,
      item: asItem,
      onPage: (p) => reports.push(p),
      ...(keyed ? {key: (item: Item) => item.invitationId, onGap: (p: PageReport) => gaps.push(p)} : {}),
    }))
      pages.push(page);
    return pages;
  };
  return {sim, clock, read, reports, gaps};
}

/** Runs `fn` on a fresh simulator's list (setUp), the simulator closed afterwards. */
async function withList(
  seed: number,
  fn: (list: Awaited<ReturnType<typeof setUp>>) => Promise<void>,
  invitations = 7
): Promise<void> {
  const list = await setUp(seed, invitations);
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

/** The items of a read, each id once (the first time it came), as a caller that drops repeats keeps them. */
const once = (pages: Item[][]): Item[] => [...new Map(pages.flat().map((i) => [i.invitationId, i] as const)).values()];

/** Answers every list request but a read's first (skip 0) from `list`, the service's list as it is by then. */
function serveAfterFirst(sim: Simulator, list: Item[]): void {
  sim.on('invitations', (ctx) => {
    const skip = Number(ctx.url.searchParams.get('skip'));
    if (skip === 0) return ctx.next();
    return ctx.json(200, list.slice(skip, skip + Number(ctx.url.searchParams.get('take'))));
  });
}

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

  test.each([
    [1000, [0, 1000], [0, 950]],
    [1001, [0, 1000, 1001], [0, 950, 951]],
    [2500, [0, 1000, 2000, 2500], [0, 950, 1900, 2450]],
  ])(
    'with a key each request re-reads the last 50 items of the page before, and a page with nothing beyond them ends the list: %i items take the same requests',
    (count, plain, keyed) =>
      withList(
        7,
        async ({sim, read, reports, gaps}) => {
          const all = wholeList(sim);
          expect(all).toHaveLength(count);
          expect((await read()).flat()).toEqual(all);
          expect(asked(sim).map(([skip]) => skip)).toEqual(plain);
          const before = asked(sim).length;
          const pages = await read({keyed: true});
          expect(once(pages)).toEqual(all);
          expect(
            asked(sim)
              .slice(before)
              .map(([skip]) => skip)
          ).toEqual(keyed);
          expect(reports.slice(-keyed.length).map((r) => r.overlap)).toEqual([0, ...keyed.slice(1).map(() => 50)]);
          expect(gaps).toEqual([]);
        },
        count
      )
  );

  test('with a key, a list that moves left by less than the overlap between two requests loses nothing; by more, the page is reported as a gap', () =>
    withList(
      8,
      async ({sim, read, gaps}) => {
        const all = wholeList(sim);
        // Pages of 100 re-read 25 items (a quarter of the page). Items of the first page move to the list's end.
        const movedBy = (k: number) => [...all.slice(0, 40), ...all.slice(40 + k), ...all.slice(40, 40 + k)];
        serveAfterFirst(sim, movedBy(24));
        expect(once(await read({take: 100, keyed: true}))).toHaveLength(all.length);
        expect(gaps).toEqual([]);
        serveAfterFirst(sim, movedBy(26));
        const lost = await read({take: 100, keyed: true});
        expect(once(lost)).toHaveLength(all.length - 1);
        expect(gaps).toEqual([expect.objectContaining({index: 1, skip: 75, overlap: 25})]);
        // Items added at the front move the list right: pages repeat items, nothing is passed over, no gap.
        const added = Array.from({length: 60}, (_, i) => ({...all[i], invitationId: `new-${i}`}));
        serveAfterFirst(sim, [...added, ...all]);
        const pages = await read({take: 100, keyed: true});
        expect(once(pages).filter((i) => !i.invitationId.startsWith('new-'))).toEqual(all);
        expect(gaps).toHaveLength(1);
      },
      300
    ));

  test('with a key, pages in another order than the page before are reported; a list that shrank under the overlap too', () =>
    withList(
      9,
      async ({sim, read, gaps}) => {
        const all = wholeList(sim);
        // The order turned round after the first page: the second page does not go on from it (the third does).
        serveAfterFirst(sim, [...all].reverse());
        await read({take: 100, keyed: true});
        expect(gaps).toEqual([expect.objectContaining({index: 1, skip: 75, overlap: 25})]);
        gaps.length = 0;
        serveAfterFirst(sim, all.slice(0, 50));
        expect(once(await read({take: 100, keyed: true}))).toEqual(all.slice(0, 100));
        expect(gaps).toEqual([expect.objectContaining({index: 1, skip: 75, count: 0})]);
      },
      300
    ));

  test('with a key, a service that ignores skip is still an error', () =>
    withList(10, async ({sim, read}) => {
      const all = wholeList(sim);
      sim.on('invitations', (ctx) => ctx.json(200, all.slice(0, 2)));
      await expect(read({take: 2, keyed: true})).rejects.toThrow(
        /the service answered the same 2 items at skip 1 as at the page before, so it ignores skip/
      );
    }));

  test('with a key, a service whose pages are smaller than the overlap re-reads a quarter of its page, moves on and ends', () =>
    withList(
      11,
      async ({sim, read, gaps}) => {
        const all = wholeList(sim);
        sim.setInvitationList({maxTake: 30});
        let from = asked(sim).length;
        expect(once(await read({keyed: true}))).toEqual(all);
        // 30 items a page, 8 of them re-read: 22 new a request; the page at 88 brings 4 beyond its 8, the one at 92 none.
        expect(
          asked(sim)
            .slice(from)
            .map(([skip]) => skip)
        ).toEqual([0, 22, 44, 66, 88, 92]);
        // One item a page: nothing to re-read, and the empty page ends the list.
        sim.setInvitationList({maxTake: 1});
        from = asked(sim).length;
        expect(once(await read({keyed: true}))).toEqual(all);
        expect(
          asked(sim)
            .slice(from)
            .map(([skip]) => skip)
        ).toEqual([...all.keys(), all.length]);
        expect(gaps).toEqual([]);
      },
      100
    ));
});
