// The `invitations` stream against the simulator's invitations list and each of its switches: every
// invitation once, with its statuses as the service holds them at the end of the read, whatever the
// page size, order, wrapper, faults and additions during the read; sensitive_columns on its fields;
// a login that may not read invitations.

import {createHmac, randomUUID} from 'crypto';

import {errorTraces, records, RunResult, statusesByStream, warnings} from '../helpers/connector';
import {withWorld, World} from '../helpers/fixtures';
import {CatalogEntry, DAY, invitationRecords, listRequests, Q1, Q2, quests, sync} from '../helpers/invitations';
import {ConfiguredStream, docQuery, loadSync, startPostgres} from '../helpers/postgres';
import {IdSet} from '../../src/sync/streams/id-set';
import {InvitationItem, INVITATIONS_PERMISSION} from '../../simulator';

const FIELDS: [string, string][] = [
  ['invitation_id', 'invitationId'],
  ['added_at', 'addedAt'],
  ['sent_at', 'sentAt'],
  ['scheduled_send_at', 'scheduledSendAt'],
  ['sent', 'sent'],
  ['replied', 'replied'],
  ['opted_out', 'optedOut'],
  ['distribution_enabled', 'distributionEnabled'],
  ['distribution_channel', 'distributionChannel'],
  ['language_code', 'languageCode'],
  ['origin', 'origin'],
  ['respondent_ident', 'respondentIdent'],
];
const MODEL = new Set(['questId', ...FIELDS.map(([, from]) => from)]);

/** The record the stream owes for an invitation the service holds (times are the simulator's, already RFC 3339 UTC). */
function expected(item: InvitationItem): Record<string, unknown> {
  const record: Record<string, unknown> = {quest_id: item.questId};
  for (const [name, from] of FIELDS) record[name] = item[from] ?? null;
  const extra = Object.fromEntries(Object.entries(item).filter(([k]) => !MODEL.has(k)));
  record.extra_fields = Object.keys(extra).length ? extra : null;
  return record;
}

/** The read emitted every invitation the service holds now, each once, as the service holds it. */
function expectAll(world: World, run: RunResult, questIds: string[]): void {
  expect(errorTraces(run.messages)).toEqual([]);
  expect(run.code).toBe(0);
  const got = invitationRecords(run);
  const ids = got.map((r) => r.invitation_id as string);
  expect(ids.length - new Set(ids).size).toBe(0);
  const truth = questIds.flatMap((q) => world.sim.invitations(q).map(expected));
  const byId = (a: Record<string, unknown>, b: Record<string, unknown>) =>
    String(a.invitation_id).localeCompare(String(b.invitation_id));
  expect(got.length).toBe(truth.length);
  expect([...got].sort(byId)).toEqual([...truth].sort(byId));
}

describe('the invitations stream', () => {
  test.concurrent(
    'discover lists it (full refresh only, key invitation_id); a read gives every invitation once, snake_case, RFC 3339 UTC, a request per 1,000 plus one per quest',
    () =>
      withWorld(quests([2500, 7]), async (world) => {
        const config = world.config({stream_layout: 'per_quest'});
        const discover = await world.run(['discover', '--config', config]);
        const listed = (
          discover.messages.find((m) => m.type === 'CATALOG') as unknown as {catalog: {streams: {name: string}[]}}
        ).catalog.streams.find((s) => s.name === 'invitations');
        expect(listed).toMatchObject({
          supported_sync_modes: ['full_refresh'],
          source_defined_primary_key: [['invitation_id']],
          source_defined_cursor: false,
        });
        const run = await sync(world);
        expectAll(world, run, [Q1, Q2]);
        const sample = invitationRecords(run)[0];
        expect(Object.keys(sample).sort()).toEqual([...FIELDS.map(([n]) => n), 'quest_id', 'extra_fields'].sort());
        expect(sample.added_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
        // 2,500 invitations: pages at skip 0, 950 and 1900, and the last 50 again, which end the list (nothing
        // beyond them); 7: one page and its last 2 again.
        expect(listRequests(world)).toHaveLength(4 + 2);
      })
  );

  test.concurrent('times the service writes otherwise are RFC 3339 UTC; fields the model does not list are kept', () =>
    withWorld(quests([40], {invitationList: {times: 'offset', extraFields: true}}), async (world) => {
      const run = await sync(world);
      expect(run.code).toBe(0);
      const got = invitationRecords(run);
      const truth = new Map(world.sim.invitations(Q1).map((i) => [i.invitationId, i]));
      for (const record of got) {
        const item = truth.get(record.invitation_id as string) as InvitationItem;
        expect(String(item.addedAt)).toMatch(/\+02:00$/);
        expect(record.added_at).toBe(new Date(Date.parse(String(item.addedAt))).toISOString());
        expect(record.extra_fields).toEqual({reminderCount: item.reminderCount, tags: item.tags});
      }
    })
  );

  test.concurrent('pages shorter than take that are not the last: every invitation', () =>
    withWorld(quests([950, 30], {invitationList: {maxTake: 100}}), async (world) => {
      expectAll(world, await sync(world), [Q1, Q2]);
    })
  );

  test.concurrent('invitations added while the pages are read, newest first (pages shift): each once', () =>
    withWorld(quests([2200], {invitationList: {order: 'newest-first'}}), async (world) => {
      world.sim.on('invitations', (ctx) => {
        if (ctx.n === 2) world.sim.addInvitations(Q1, 37);
        return ctx.next();
      });
      const run = await sync(world);
      expect(run.code).toBe(0);
      const ids = invitationRecords(run).map((r) => r.invitation_id);
      expect(ids.length - new Set(ids).size).toBe(0);
      // Every invitation there was when the read began; the ones added during it may come or not.
      const all = new Set(ids);
      expect(
        world.sim
          .invitations(Q1)
          .slice(0, 2200)
          .filter((i) => !all.has(i.invitationId))
      ).toEqual([]);
    })
  );

  test.concurrent('more than 1,000 invitations with one addedAt, and pages in no useful order: each once', () =>
    withWorld(
      {
        ...quests([]),
        quests: [{id: Q1, rows: 3, invitations: 2300, invitationBurst: 1600}],
        invitationList: {order: 'shuffled'},
      },
      async (world) => {
        expectAll(world, await sync(world), [Q1]);
      }
    )
  );

  test.concurrent('the items inside an object are read; an answer with no list of items fails, naming it', () =>
    withWorld(quests([1200], {invitationList: {wrapper: 'items'}}), async (world) => {
      expectAll(world, await sync(world), [Q1]);
      world.sim.on('invitations', (ctx) => ctx.json(200, {result: {items: []}, totalCount: 1200}));
      const run = await sync(world);
      expect(run.code).not.toBe(0);
      expect(invitationRecords(run)).toEqual([]);
      expect(
        errorTraces(run.messages)
          .map((t) => t.trace.error?.message)
          .join('\n')
      ).toMatch(/without a list of items|no list/);
    })
  );

  test.concurrent('429 and 5xx in the middle of the list: resumed without loss or repeat', () =>
    withWorld(quests([3100]), async (world) => {
      world.sim.on('invitations', (ctx) => {
        if (ctx.n === 2) return ctx.problem(503, 'Service Unavailable');
        if (ctx.n === 4) return ctx.problem(429, 'Too many requests', {'Retry-After': '2'});
        if (ctx.n === 5) return ctx.problem(500, 'Object reference not set to an instance of an object.');
        return ctx.next();
      });
      expectAll(world, await sync(world), [Q1]);
    })
  );

  test.concurrent('statuses that change between syncs are current in each sync', () =>
    withWorld(quests([600]), async (world) => {
      const first = invitationRecords(await sync(world));
      await world.clock.sleep(12 * DAY);
      const run = await sync(world);
      expectAll(world, run, [Q1]);
      const before = new Map(first.map((r) => [r.invitation_id, r]));
      const changed = invitationRecords(run).filter((r) => {
        const was = before.get(r.invitation_id) as Record<string, unknown>;
        return was.replied !== r.replied || was.sent !== r.sent || was.opted_out !== r.opted_out;
      });
      expect(changed.length).toBeGreaterThan(0);
    })
  );

  test.concurrent(
    'sensitive_columns hashes or drops its fields by name, as for answers, and refuses to hash its key',
    () =>
      withWorld(quests([50]), async (world) => {
        const salt = 'k3Jq9-vT7w2-Lp0x';
        const hashed = await sync(world, {
          sensitive_columns: [
            {column: 'respondent_ident', action: 'hash'},
            {column: 'language_code', action: 'drop'},
          ],
          hash_salt: salt,
        });
        expect(hashed.code).toBe(0);
        const truth = new Map(world.sim.invitations(Q1).map((i) => [i.invitationId, i]));
        const got = invitationRecords(hashed);
        expect(got.length).toBe(50);
        for (const r of got) {
          const ident = truth.get(r.invitation_id as string)?.respondentIdent as string | undefined;
          expect(r.respondent_ident).toBe(
            ident === undefined ? null : createHmac('sha256', salt).update(ident, 'utf8').digest('hex')
          );
          expect('language_code' in r).toBe(false);
        }
        expect(hashed.stdout).not.toContain('@example.org');
        const refused = await world.run([
          'discover',
          '--config',
          world.config({sensitive_columns: [{column: 'invitation_id', action: 'hash'}], hash_salt: salt}),
        ]);
        expect(refused.code).not.toBe(0);
        expect(refused.stdout).toMatch(/sensitive_columns would hash invitation_id/);
      })
  );

  test.concurrent(
    'a login without invitation permission: this stream fails naming the permission, the responses stream syncs',
    () =>
      withWorld(quests([20, 20], {invitationList: {denied: true}}), async (world) => {
        const run = await sync(world, {}, true);
        const statuses = statusesByStream(run.messages);
        expect(statuses.responses).toContain('COMPLETE');
        expect(records(run.messages).filter((r) => r.record.stream === 'responses').length).toBe(12);
        expect(statuses.invitations).toContain('INCOMPLETE');
        const message = errorTraces(run.messages)
          .map((t) => t.trace.error?.message)
          .join('\n');
        expect(message).toContain(INVITATIONS_PERMISSION);
        expect(message).toMatch(/permission to read invitations/);
        // check passes (the responses are readable), warning that the invitations stream will fail.
        const check = await world.run(['check', '--config', world.config()]);
        expect(check.code).toBe(0);
        const status = check.messages.find((m) => m.type === 'CONNECTION_STATUS') as unknown as {
          connectionStatus: {status: string};
        };
        expect(status.connectionStatus.status).toBe('SUCCEEDED');
        expect(warnings(check.messages).filter((w) => w.includes(INVITATIONS_PERMISSION))).toHaveLength(1);
        // skip_inaccessible_quests: the quests' invitations are skipped with a warning, the read succeeds.
        const skipping = await sync(world, {skip_inaccessible_quests: true}, true);
        expect(errorTraces(skipping.messages)).toEqual([]);
        expect(skipping.code).toBe(0);
        expect(warnings(skipping.messages).filter((w) => w.includes(INVITATIONS_PERMISSION))).toHaveLength(2);
      })
  );

  test.concurrent(
    "docs/warehouse-sql.md's response rates per quest and per channel, run verbatim, are right after statuses changed",
    () =>
      withWorld(
        {
          ...quests([]),
          quests: [
            {id: Q1, rows: 4, invitations: 700, firstCreatedAt: new Date(Date.now() - 20 * DAY).toISOString()},
            {id: Q2, rows: 4, invitations: 300, hiddenIdentity: true},
          ],
        },
        async (world) => {
          const pg = startPostgres();
          try {
            const load = async () => {
              const run = await sync(world);
              expect(run.code).toBe(0);
              const catalog = discovered(run);
              await loadSync(pg, catalog, run.messages);
            };
            await load();
            expect(await rates(pg)).toEqual(truthRates(world));
            const before = truthRates(world);
            await world.clock.sleep(12 * DAY);
            await load();
            const after = truthRates(world);
            expect(after).not.toEqual(before);
            expect(await rates(pg)).toEqual(after);
          } finally {
            await pg.stop();
          }
        }
      )
  );
});

/** The invitations stream as discover listed it, loaded as "Full refresh | Overwrite + Deduped". */
function discovered(run: {streams: CatalogEntry[]}): {streams: ConfiguredStream[]} {
  const stream = run.streams.find((s) => s.name === 'invitations');
  const configured = {stream, sync_mode: 'full_refresh', destination_sync_mode: 'append_dedup'};
  return {streams: [configured as unknown as ConfiguredStream]};
}

type Rate = {
  quest_id: string;
  channel?: string;
  invitations: number;
  reached: number;
  replied: number;
  rate: string | null;
};

/** Both documented queries' rows, numbers as numbers. */
async function rates(pg: ReturnType<typeof startPostgres>): Promise<{quest: Rate[]; channel: Rate[]}> {
  const norm = (r: Record<string, unknown>): Rate => ({
    quest_id: String(r.quest_id),
    ...(r.channel !== undefined ? {channel: String(r.channel)} : {}),
    invitations: Number(r.invitations),
    reached: Number(r.reached),
    replied: Number(r.replied),
    rate: r.response_rate === null ? null : Number(r.response_rate).toFixed(4),
  });
  return {
    quest: (await docQuery(pg, 'invitations-response-rate-per-quest')).map(norm),
    channel: (await docQuery(pg, 'invitations-response-rate-per-channel')).map(norm),
  };
}

/** The same figures from the invitations the service holds now. */
function truthRates(world: World): {quest: Rate[]; channel: Rate[]} {
  const figures = (questId: string, items: InvitationItem[], channel?: string): Rate => {
    const reached = items.filter((i) => i.sent || !i.distributionEnabled);
    const known = reached.filter((i) => i.replied !== null);
    const replied = reached.filter((i) => i.replied === true).length;
    return {
      quest_id: questId,
      ...(channel !== undefined ? {channel} : {}),
      invitations: items.length,
      reached: reached.length,
      replied,
      rate: known.length ? (Math.round((replied / known.length) * 10_000) / 10_000).toFixed(4) : null,
    };
  };
  const quest: Rate[] = [];
  const channel: Rate[] = [];
  for (const q of [Q1, Q2].sort()) {
    const items = world.sim.invitations(q);
    quest.push(figures(q, items));
    const channels = [...new Set(items.map((i) => String(i.distributionChannel ?? '(none)')))].sort();
    for (const c of channels)
      channel.push(
        figures(
          q,
          items.filter((i) => String(i.distributionChannel ?? '(none)') === c),
          c
        )
      );
  }
  return {quest, channel};
}

test.concurrent('check: a quest the login may not read at all still fails, after the invitations refusal', () =>
  withWorld(
    {...quests([5]), quests: [{id: Q1, rows: 3, forbidden: true}], invitationList: {denied: true}},
    async (world) => {
      const check = await world.run(['check', '--config', world.config()]);
      const status = check.messages.find((m) => m.type === 'CONNECTION_STATUS') as unknown as {
        connectionStatus: {status: string; message: string};
      };
      expect(status.connectionStatus.status).toBe('FAILED');
      expect(status.connectionStatus.message).toMatch(/HTTP 403/);
    }
  )
);

test("the ids a read met: each once, through the table's growth, UUIDs and other ids alike", () => {
  const set = new IdSet();
  const ids = Array.from({length: 5000}, () => randomUUID());
  const others = ['42', 'ABC-not-a-uuid', '00000000-0000-0000-0000-000000000000', ids[0].toUpperCase()];
  for (const id of [...ids, ...others]) expect(set.add(id)).toBe(true);
  for (const id of [...ids, ...others]) expect(set.add(id)).toBe(false);
  expect(set.size).toBe(ids.length + others.length);
});
