// Contract tests of the bundled Questback API simulator (simulator/): the connector's tests,
// the benchmark and the demo rely on this behaviour.

import * as fs from 'fs';
import * as http from 'http';
import * as os from 'os';
import * as path from 'path';
import {gunzipSync} from 'zlib';
import {parse} from 'csv-parse/sync';
import {
  createEngine,
  ExportSettings,
  FileEncoding,
  INVITATIONS_PERMISSION,
  QuestConfig,
  Simulator,
  startSimulator,
} from '../simulator';
import {DEFAULT_PORT, parseArgs, runCli} from '../simulator/cli-app';
import {cellEncoder} from '../simulator/csv';

interface Resp {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  text: string;
  /** Set when the connection ended before the promised body arrived. */
  error?: Error;
}

function request(
  url: string,
  options: {method?: string; headers?: Record<string, string>; body?: string} = {}
): Promise<Resp> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, {method: options.method ?? 'GET', headers: options.headers}, (res) => {
      const chunks: Buffer[] = [];
      const done = (error?: Error): void => {
        const body = Buffer.concat(chunks);
        resolve({status: res.statusCode ?? 0, headers: res.headers, body, text: body.toString('utf8'), error});
      };
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => done());
      res.on('error', (err) => done(err));
      res.on('aborted', () => done(new Error('aborted')));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

const json = <T = Record<string, unknown>>(r: Resp): T => JSON.parse(r.text) as T;

const form = (fields: Record<string, string>): string => new URLSearchParams(fields).toString();
const FORM = {'Content-Type': 'application/x-www-form-urlencoded'};

async function getToken(sim: Pick<Simulator, 'authUrl' | 'clientId' | 'clientSecret' | 'projectId'>): Promise<string> {
  const r = await request(`${sim.authUrl}/oauth/v2/token`, {
    method: 'POST',
    headers: FORM,
    body: form({
      grant_type: 'client_credentials',
      client_id: sim.clientId,
      client_secret: sim.clientSecret,
      scope: `urn:zitadel:iam:org:project:id:${sim.projectId}:aud`,
    }),
  });
  expect(r.status).toBe(200);
  return json<{access_token: string}>(r).access_token;
}

class Client {
  constructor(
    readonly sim: Simulator,
    readonly token: string
  ) {}

  get(path: string, headers: Record<string, string> = {}): Promise<Resp> {
    return request(this.sim.apiUrl + path, {headers: {Authorization: `Bearer ${this.token}`, ...headers}});
  }

  post(path: string, body: unknown): Promise<Resp> {
    return request(this.sim.apiUrl + path, {
      method: 'POST',
      headers: {Authorization: `Bearer ${this.token}`, 'Content-Type': 'application/json'},
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  }

  async createExport(
    questId: string,
    settings: ExportSettings = {},
    filter: {since?: string; until?: string} = {}
  ): Promise<string> {
    const r = await this.post(`/v1/quests/${questId}/exports`, {settings, filter});
    expect(r.status).toBe(202);
    return json<{exportId: string}>(r).exportId;
  }

  /** Polls until the status endpoint stops answering 200; returns that final response. */
  async waitForExport(questId: string, exportId: string): Promise<Resp> {
    for (;;) {
      const r = await this.get(`/v1/quests/${questId}/exports/${exportId}/status`);
      if (r.status !== 200 || json(r).status === 'ERROR') return r;
      await new Promise((res) => setTimeout(res, 10));
    }
  }

  async exportCsv(
    questId: string,
    settings: ExportSettings = {},
    filter: {since?: string; until?: string} = {}
  ): Promise<Resp> {
    const id = await this.createExport(questId, settings, filter);
    const done = await this.waitForExport(questId, id);
    expect(done.status).toBe(302);
    return this.get(done.headers.location as string);
  }
}

const SEPARATOR: Record<string, string> = {PIPE: '|', COMMA: ',', SEMICOLON: ';', TAB: '\t'};
const parseCsv = (text: string, separator = 'PIPE', recordDelimiter = '\r\n'): string[][] =>
  parse(text, {bom: true, delimiter: SEPARATOR[separator], record_delimiter: recordDelimiter}) as string[][];

function expectProblem(r: Resp, status: number): Record<string, unknown> {
  expect(r.status).toBe(status);
  expect(r.headers['content-type']).toBe('application/problem+json');
  const body = json(r);
  expect(body).toMatchObject({status, type: expect.any(String), title: expect.any(String)});
  expect(body.traceId).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
  expect(typeof body.requestId).toBe('string');
  return body;
}

describe('simulator', () => {
  let sim: Simulator;
  let api: Client;
  let quest: string;
  let quest2: string;
  const FORBIDDEN = '00000000-0000-4000-8000-000000000403';

  beforeAll(async () => {
    sim = await startSimulator({
      exportDurationMs: 30,
      quests: [
        {id: '11111111-1111-4111-8111-111111111111', rows: 30, columns: 9, languages: ['en', 'no']},
        {id: '22222222-2222-4222-8222-222222222222', rows: 12},
        {id: FORBIDDEN, rows: 3, forbidden: true},
      ],
    });
    quest = sim.quests[0].id;
    quest2 = sim.quests[1].id;
    api = new Client(sim, await getToken(sim));
  });
  afterAll(() => sim.close());

  describe('token endpoint', () => {
    const good = (): Record<string, string> => ({
      grant_type: 'client_credentials',
      client_id: sim.clientId,
      client_secret: sim.clientSecret,
      scope: `urn:zitadel:iam:org:project:id:${sim.projectId}:aud`,
    });
    const tokenRequest = (fields: Record<string, string>, headers = FORM): Promise<Resp> =>
      request(`${sim.authUrl}/oauth/v2/token`, {method: 'POST', headers, body: form(fields)});

    it('issues ES256 JWT-shaped bearer tokens', async () => {
      const r = await tokenRequest(good());
      expect(r.status).toBe(200);
      const body = json<{access_token: string; token_type: string; expires_in: number}>(r);
      expect(body.token_type).toBe('Bearer');
      expect(body.expires_in).toBe(3600);
      const parts = body.access_token.split('.');
      expect(parts).toHaveLength(3);
      const header = JSON.parse(Buffer.from(parts[0], 'base64url').toString()) as Record<string, unknown>;
      const payload = JSON.parse(Buffer.from(parts[1], 'base64url').toString()) as Record<string, number | string>;
      expect(header).toMatchObject({alg: 'ES256', typ: 'JWT'});
      expect((payload.exp as number) - (payload.iat as number)).toBe(3600);
      expect(payload.sub).toBe(sim.clientId);
      expect(sim.issuedTokens()).toContain(body.access_token);
      const again = json<{access_token: string}>(await tokenRequest(good())).access_token;
      expect(again).not.toBe(body.access_token);
    });

    it('rejects bad requests with problem+json and OAuth error members', async () => {
      const json400 = await request(`${sim.authUrl}/oauth/v2/token`, {
        method: 'POST',
        headers: {'Content-Type': 'application/json'},
        body: JSON.stringify(good()),
      });
      expect(expectProblem(json400, 400).error).toBe('invalid_request');
      expect(expectProblem(await tokenRequest({...good(), grant_type: 'password'}), 400).error).toBe(
        'unsupported_grant_type'
      );
      expect(expectProblem(await tokenRequest({...good(), scope: 'openid'}), 400).error).toBe('invalid_scope');
      const bad = expectProblem(await tokenRequest({...good(), client_secret: 'nope'}), 401);
      expect(bad).toMatchObject({
        error: 'invalid_client',
        error_description: expect.any(String),
        detail: expect.any(String),
      });
    });

    it('lets tokens expire', async () => {
      const short = await startSimulator({tokenLifetimeSeconds: 1});
      try {
        const c = new Client(short, await getToken(short));
        expect((await c.get(`/v1/quests/${short.quests[0].id}/invitations?take=0`)).status).toBe(200);
        await new Promise((res) => setTimeout(res, 1100));
        const r = await c.get(`/v1/quests/${short.quests[0].id}/invitations?take=0`);
        expect(expectProblem(r, 401).detail).toMatch(/expired/);
      } finally {
        await short.close();
      }
    });
  });

  describe('errors', () => {
    it('401 without a valid token names method and path', async () => {
      const path = `/v1/quests/${quest}/exports/abc/status`;
      const attempts: Record<string, string>[] = [{}, {Authorization: 'Bearer not.a.token'}];
      for (const headers of attempts) {
        const r = await request(sim.apiUrl + path, {headers});
        const body = expectProblem(r, 401);
        expect(body.instance).toBe(path);
        expect(body.detail).toContain(`GET ${path}`);
      }
      const last = sim.requests().slice(-1)[0];
      expect(last).toMatchObject({method: 'GET', path, status: 401, authorized: false});
    });

    it('403 for a forbidden quest names the quest', async () => {
      const body = expectProblem(await api.get(`/v1/quests/${FORBIDDEN}/invitations?take=0`), 403);
      expect(body.detail).toContain(FORBIDDEN);
      expectProblem(await api.post(`/v1/quests/${FORBIDDEN}/exports`, {settings: {}, filter: {}}), 403);
    });

    it('404 for unknown quest, export and route', async () => {
      const unknown = '99999999-9999-4999-8999-999999999999';
      const q = expectProblem(await api.post(`/v1/quests/${unknown}/exports`, {}), 404);
      expect(q.detail).toContain(`POST /v1/quests/${unknown}/exports`);
      expectProblem(await api.get(`/v1/quests/${quest}/exports/${unknown}/status`), 404);
      expectProblem(await api.get(`/v1/quests/${quest}/exports/${unknown}/download`), 404);
      expectProblem(await api.get('/v1/nothing-here'), 404);
      expectProblem(await api.get(`/v1/quests/${quest}/exports`), 404); // wrong method
    });

    it('400 validation problems carry an errors map keyed by field', async () => {
      const path = `/v1/quests/${quest}/exports`;
      expect(expectProblem(await api.post(path, '{"settings": '), 400).errors).toBeDefined();
      const future = new Date(Date.now() + 3_600_000).toISOString();
      const r = await api.post(path, {
        settings: {exportType: 'PDF', valueType: 'X', fieldSeparator: 'STAR', language: 'xx', showOtherAsText: 'yes'},
        filter: {since: future, until: 'yesterday'},
      });
      const errors = expectProblem(r, 400).errors as Record<string, string[]>;
      expect(errors['settings.language']).toEqual(["Language 'xx' is not defined on the quest"]);
      expect(errors['filter.since']).toEqual(['since must not lie in the future']);
      expect(Object.keys(errors).sort()).toEqual(
        [
          'filter.since',
          'filter.until',
          'settings.exportType',
          'settings.fieldSeparator',
          'settings.language',
          'settings.showOtherAsText',
          'settings.valueType',
        ].sort()
      );
      const order = await api.post(path, {filter: {since: '2024-02-01T00:00:00.000Z', until: '2024-01-01T00:00:00Z'}});
      expect(Object.keys(expectProblem(order, 400).errors as object)).toEqual(['filter.since']);
      expect((await api.post(path, {settings: {language: 'no'}, filter: {}})).status).toBe(202);
    });
  });

  describe('invitations', () => {
    type Item = Record<string, unknown> & {invitationId: string; addedAt: string};
    const INV_QUEST = '33333333-3333-4333-8333-333333333333';
    const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
    const page = async (c: Client, query: string): Promise<Item[]> => {
      const r = await c.get(`/v1/quests/${INV_QUEST}/invitations?${query}`);
      expect(r.status).toBe(200);
      return json<Item[]>(r);
    };
    const withInvitations = async (
      quest: Partial<QuestConfig>,
      run: (s: Simulator, c: Client) => Promise<void>,
      options: Parameters<typeof startSimulator>[0] = {}
    ): Promise<void> => {
      const s = await startSimulator({...options, quests: [{id: INV_QUEST, rows: 5, ...quest}]});
      try {
        await run(s, new Client(s, await getToken(s)));
      } finally {
        await s.close();
      }
    };

    it('serve the documented model, paged by skip/take, since exclusive and until inclusive', () =>
      withInvitations({invitations: 2500, hiddenIdentity: false}, async (s, c) => {
        expect(await page(c, 'skip=0&take=0')).toEqual([]);
        const all = [...(await page(c, 'take=1000')), ...(await page(c, 'skip=1000&take=1000'))];
        all.push(...(await page(c, 'skip=2000&take=1000')));
        expect(all).toHaveLength(2500);
        expect(all).toEqual(s.invitations(INV_QUEST));
        expect(await page(c, 'skip=3000&take=1000')).toEqual([]);
        expect(await page(c, 'take=3')).toEqual(all.slice(0, 3)); // the same seeded answer again
        expect(await page(c, '')).toHaveLength(100); // take defaults to 100
        const required = ['invitationId', 'questId', 'addedAt', 'distributionEnabled', 'languageCode', 'optedOut'];
        required.push('origin', 'replied', 'sent');
        expect(all.filter((i) => required.some((k) => !(k in i)))).toEqual([]);
        expect(all.filter((i) => i.questId !== INV_QUEST || !ISO_MS.test(i.addedAt))).toEqual([]);
        expect(all.filter((i) => (i.sent === true) !== (typeof i.sentAt === 'string'))).toEqual([]);
        expect(new Set(all.map((i) => i.invitationId)).size).toBe(2500);
        const channels = new Set(all.map((i) => i.distributionChannel));
        for (const ch of ['EMAIL', 'SMS', 'LINK', undefined]) expect(channels).toContain(ch);
        expect(new Set(all.map((i) => i.replied))).toEqual(new Set([true, false]));
        expect(all.some((i) => i.respondentIdent === undefined)).toBe(true);
        const mid = all[1200].addedAt;
        const after = await page(c, `since=${mid}&take=1000`);
        expect(after[0]).toEqual(all.find((i) => i.addedAt > mid));
        const upTo = await page(c, `until=${mid}&take=1000&skip=1000`);
        expect(upTo[upTo.length - 1].addedAt).toBe(mid);
      }));

    it('refuse negative, oversized, malformed and future parameters with validation problems', () =>
      withInvitations({}, async (s, c) => {
        const base = `/v1/quests/${INV_QUEST}/invitations`;
        const keys = async (q: string): Promise<string[]> =>
          Object.keys(expectProblem(await c.get(`${base}?${q}`), 400).errors as object);
        expect(await keys('skip=-1')).toEqual(['skip']);
        expect(await keys('take=-1')).toEqual(['take']);
        expect(await keys('take=1001')).toEqual(['take']);
        expect(await keys('since=yesterday')).toEqual(['since']);
        const future = new Date(s.clock.now() + 60_000).toISOString();
        expect(await keys(`until=${future}`)).toEqual(['until']);
        expect(await keys(`since=${future}`)).toEqual(['since']);
      }));

    it('switches: a wrapper object, a cap below take, no useful order, newest first', async () => {
      await withInvitations(
        {invitations: 30},
        async (s, c) => {
          const body = json<{items: Item[]; totalCount: number}>(
            await c.get(`/v1/quests/${INV_QUEST}/invitations?take=1000`)
          );
          expect(body.totalCount).toBe(30);
          expect(body.items.slice(0, 7)).toHaveLength(7); // capped at 7 per page
          expect(body.items).toHaveLength(7);
          const rest = json<{items: Item[]}>(await c.get(`/v1/quests/${INV_QUEST}/invitations?take=1000&skip=7`));
          expect(rest.items).toEqual(s.invitations(INV_QUEST).slice(7, 14));
        },
        {invitationList: {wrapper: 'items', maxTake: 7}}
      );
      await withInvitations(
        {invitations: 50},
        async (s, c) => {
          const truth = s.invitations(INV_QUEST);
          const shuffled = [...(await page(c, 'take=20')), ...(await page(c, 'skip=20&take=1000'))];
          expect(shuffled.map((i) => i.invitationId).sort()).toEqual(truth.map((i) => i.invitationId).sort());
          expect(shuffled).not.toEqual(truth);
          expect(shuffled.slice(0, 20)).toEqual(await page(c, 'take=20')); // stable between requests
          s.setInvitationList({order: 'newest-first'});
          expect(await page(c, 'take=1000')).toEqual([...truth].reverse());
        },
        {invitationList: {order: 'shuffled'}}
      );
    });

    it('switches: many invitations with one addedAt, added ones (queued), statuses that change, extra fields', async () => {
      await withInvitations({invitations: 1500, invitationBurst: 1200}, async (s, c) => {
        const first = await page(c, 'take=1000');
        expect(new Set(first.map((i) => i.addedAt)).size).toBe(1);
        expect(s.invitations(INV_QUEST).filter((i) => i.addedAt === first[0].addedAt)).toHaveLength(1200);
      });
      await withInvitations(
        {invitations: 10},
        async (s, c) => {
          s.addInvitations(INV_QUEST, 3);
          expect(await page(c, 'take=1000')).toHaveLength(10); // queued
          await new Promise((res) => setTimeout(res, 80));
          const now = await page(c, 'take=1000');
          expect(now).toHaveLength(13);
          expect(now[12]).toMatchObject({sent: false, reminderCount: 0, tags: {batch: expect.any(String)}});
        },
        {invitationList: {queueMs: 50, extraFields: true}}
      );
      // Statuses follow the clock: replies and sends come days after an invitation is added.
      let now = Date.now();
      const clock = {now: () => now, sleep: (ms: number) => new Promise<void>((res) => setTimeout(res, ms))};
      await withInvitations(
        {invitations: 400},
        async (s, first) => {
          let c = first;
          const before = await page(c, 'take=1000');
          now += 20 * 86_400_000;
          c = new Client(s, await getToken(s)); // the first token has expired
          const later = await page(c, 'take=1000');
          expect(later.map((i) => i.invitationId)).toEqual(before.map((i) => i.invitationId));
          const changed = later.filter((i, n) => i.replied !== before[n].replied || i.sent !== before[n].sent);
          expect(changed.length).toBeGreaterThan(0);
          expect(later.filter((i) => i.replied).length).toBeGreaterThan(before.filter((i) => i.replied).length);
          s.setInvitationList({filterOn: 'changed', order: 'changed'});
          const since = new Date(now - 10 * 86_400_000).toISOString();
          const recent = await page(c, `since=${since}&take=1000`);
          expect(recent.length).toBeGreaterThan(0);
          expect(recent.every((i) => i.addedAt <= since)).toBe(true); // changed lately, added a month ago
        },
        {clock}
      );
    });

    it('a login without invitation permission gets 403 naming it, and still creates exports', () =>
      withInvitations(
        {},
        async (_, c) => {
          const body = expectProblem(await c.get(`/v1/quests/${INV_QUEST}/invitations?take=0`), 403);
          expect(body.detail).toContain(INVITATIONS_PERMISSION);
          expect((await c.post(`/v1/quests/${INV_QUEST}/exports`, {settings: {}, filter: {}})).status).toBe(202);
        },
        {invitationList: {denied: true}}
      ));
  });

  describe('export workflow', () => {
    it('reports PENDING/INPROGRESS records, then 302 to the relative download path', async () => {
      const slow = await startSimulator({exportDurationMs: 900});
      try {
        const c = new Client(slow, await getToken(slow));
        const q = slow.quests[0].id;
        const id = await c.createExport(q);
        const first = await c.get(`/v1/quests/${q}/exports/${id}/status`);
        expect(first.status).toBe(200);
        expect(json(first)).toEqual({
          exportId: id,
          questId: q,
          status: 'PENDING',
          lastChangedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        });
        expectProblem(await c.get(`/v1/quests/${q}/exports/${id}/download`), 409);
        await new Promise((res) => setTimeout(res, 350));
        expect(json(await c.get(`/v1/quests/${q}/exports/${id}/status`)).status).toBe('INPROGRESS');
        const done = await c.waitForExport(q, id);
        expect(done.status).toBe(302);
        expect(done.headers.location).toBe(`/v1/quests/${q}/exports/${id}/download`);
        expect(done.text).toBe('');
        const file = await c.get(done.headers.location as string);
        expect(file.status).toBe(200);
        expect(file.headers['content-type']).toBe('text/csv; charset=utf-8');
        expect(Number(file.headers['content-length'])).toBe(file.body.length);
        expect(file.text.startsWith('\uFEFF')).toBe(true);
        expect(slow.stats()).toMatchObject({exportsCreated: 1, downloads: 2, tokens: 1});
      } finally {
        await slow.close();
      }
    });

    const variants: ExportSettings[] = [
      {},
      {exportType: 'CSV', valueType: 'ORDER_NUMBER', fieldSeparator: 'PIPE'},
      {valueType: 'TEXT', fieldSeparator: 'COMMA', expandMultipleChoiceToColumns: true},
      {fieldSeparator: 'SEMICOLON', includeRespondentInformation: true, showOtherAsText: true},
      {fieldSeparator: 'TAB', valueType: 'TEXT', showOtherAsText: true, expandMultipleChoiceToColumns: true},
    ];
    it.each(variants)('download parses to exactly groundTruth for %j', async (settings) => {
      const r = await api.exportCsv(quest, settings);
      expect(r.text.includes('\r\n')).toBe(true);
      const truth = sim.groundTruth(quest, settings);
      expect(parseCsv(r.text, settings.fieldSeparator)).toEqual([truth.header, ...truth.rows]);
      expect(truth.rows).toHaveLength(30);
    });

    it('has hard-to-parse data and the documented columns', () => {
      const truth = sim.groundTruth(quest, {includeRespondentInformation: true, expandMultipleChoiceToColumns: true});
      expect(truth.header.slice(0, 4)).toEqual(['Response ID', 'Created', 'E-mail', 'Phone']);
      expect(truth.header).toContain('Q1. How satisfied are you? (1-5)');
      expect(truth.header).toContain('Q2 | Comments, "free text"');
      expect(truth.header).toContain('Q3 Favourite colours: Red');
      expect(truth.header).toContain('Q5 Other');
      const cells = sim.groundTruth(quest).rows.flat();
      expect(cells.some((c) => c.includes('\n'))).toBe(true);
      expect(cells.some((c) => c.includes('"'))).toBe(true);
      expect(cells.some((c) => c.includes('|'))).toBe(true);
      expect(cells.filter((c) => c === '').length).toBeGreaterThan(30);
      expect(new Set(sim.groundTruth(quest).rows.map((r) => r[0])).size).toBe(30);
      const created = sim.groundTruth(quest).rows.map((r) => Date.parse(r[1]));
      expect(created.every((t, i) => i === 0 || t > created[i - 1])).toBe(true);
      expect(created[created.length - 1]).toBeLessThanOrEqual(Date.now() - 60_000);
    });

    it('filters since exclusive and until inclusive at millisecond precision', async () => {
      const rows = sim.groundTruth(quest2).rows;
      const t = rows[5][1]; // Created of the sixth row
      const ms = Date.parse(t);
      const ids = async (filter: {since?: string; until?: string}): Promise<string[]> =>
        parseCsv((await api.exportCsv(quest2, {}, filter)).text)
          .slice(1)
          .map((r) => r[0]);
      const all = rows.map((r) => r[0]);
      expect(await ids({since: t})).toEqual(all.slice(6));
      expect(await ids({since: new Date(ms - 1).toISOString()})).toEqual(all.slice(5));
      expect(await ids({until: t})).toEqual(all.slice(0, 6));
      expect(await ids({until: new Date(ms - 1).toISOString()})).toEqual(all.slice(0, 5));
      expect(await ids({since: t, until: t})).toEqual([]);
      // Extra fractional digits are accepted and compared exactly.
      expect(await ids({since: t.replace('Z', '0000Z'), until: t.replace(/\.(\d{3})Z$/, '.$19999Z')})).toEqual([]);
      expect(await ids({since: new Date(ms - 1).toISOString().replace('Z', '9999Z'), until: t})).toEqual([all[5]]);
    });

    it('adds responses created now and exports them incrementally', async () => {
      const before = sim.groundTruth(quest2).rows;
      const lastCreated = before[before.length - 1][1];
      sim.addResponses(quest2, 3);
      await new Promise((res) => setTimeout(res, 5));
      const after = sim.groundTruth(quest2).rows;
      expect(after).toHaveLength(before.length + 3);
      expect(after.slice(0, before.length)).toEqual(before);
      const added = after.slice(before.length);
      expect(Date.parse(added[0][1])).toBeGreaterThan(Date.parse(lastCreated));
      const inc = parseCsv((await api.exportCsv(quest2, {}, {since: lastCreated})).text);
      expect(inc.slice(1)).toEqual(added);
    });

    it('answers 410 for an expired export, on download and status', async () => {
      const id = await api.createExport(quest2);
      expect((await api.waitForExport(quest2, id)).status).toBe(302);
      sim.expireExport(id);
      expectProblem(await api.get(`/v1/quests/${quest2}/exports/${id}/download`), 410);
      expectProblem(await api.get(`/v1/quests/${quest2}/exports/${id}/status`), 410);
    });
  });

  it('is deterministic per seed', async () => {
    const a = await startSimulator({seed: 7});
    const b = await startSimulator({seed: 7});
    const c = await startSimulator({seed: 8});
    try {
      const q = a.quests[0].id;
      const settings: ExportSettings = {includeRespondentInformation: true};
      const strip = (s: Simulator): string[][] => s.groundTruth(q, settings).rows.map((r) => [r[0], ...r.slice(2)]);
      expect(strip(a)).toEqual(strip(b));
      expect(strip(a)).not.toEqual(strip(c));
      const ca = new Client(a, await getToken(a));
      const cb = new Client(b, await getToken(b));
      expect(await ca.createExport(q)).toBe(await cb.createExport(q));
    } finally {
      await Promise.all([a.close(), b.close(), c.close()]);
    }
  });

  describe('faults', () => {
    it('rate limits with X-RateLimit-* headers and Retry-After', async () => {
      const rl = await startSimulator({faults: {rateLimit: {limit: 3, windowMs: 60_000, retryAfter: true}}});
      try {
        const c = new Client(rl, await getToken(rl));
        const path = `/v1/quests/${rl.quests[0].id}/invitations?take=0`;
        const seen: Resp[] = [];
        for (let i = 0; i < 4; i++) seen.push(await c.get(path));
        expect(seen.map((r) => r.status)).toEqual([200, 200, 200, 429]);
        expect(seen.map((r) => r.headers['x-ratelimit-remaining'])).toEqual(['2', '1', '0', '0']);
        expect(seen[0].headers['x-ratelimit-limit']).toBe('3');
        const reset = Number(seen[3].headers['x-ratelimit-reset']);
        expect(reset).toBeGreaterThanOrEqual(1);
        expect(reset).toBeLessThanOrEqual(60);
        expect(Number(seen[3].headers['retry-after'])).toBe(reset);
        expectProblem(seen[3], 429);
        expect(rl.stats().rateLimited).toBe(1);

        rl.setFaults({rateLimit: {limit: 1, windowMs: 60_000, resetFormat: 'epoch-ms'}});
        const ms = Number((await c.get(path)).headers['x-ratelimit-reset']);
        expect(ms).toBeGreaterThan(Date.now());
        expect(ms).toBeLessThanOrEqual(Date.now() + 60_000);
        const limited = await c.get(path);
        expect(limited.status).toBe(429);
        expect(limited.headers['retry-after']).toBeUndefined();
        rl.setFaults({rateLimit: {limit: 1, windowMs: 60_000, resetFormat: 'epoch-seconds'}});
        const s = Number((await c.get(path)).headers['x-ratelimit-reset']);
        expect(Math.abs(s - Date.now() / 1000)).toBeLessThanOrEqual(61);
      } finally {
        await rl.close();
      }
    });

    it('injects 5xx, failed and truncated exports, and 410 Gone', async () => {
      const f = await startSimulator({exportDurationMs: 20, faults: {serverErrorRate: 1}});
      try {
        const c = new Client(f, await getToken(f));
        const q = f.quests[1].id;
        const kinds = new Set<string>();
        for (let i = 0; i < 12; i++) {
          const r = await c.get(`/v1/quests/${q}/invitations?take=0`);
          expect([500, 502, 503]).toContain(r.status);
          kinds.add(r.headers['content-type'] as string);
          if (r.status === 500) expect(expectProblem(r, 500).type).toBe('InternalServerError');
          else expect(r.text).toContain('<html>');
        }
        expect(kinds).toEqual(new Set(['application/problem+json', 'text/html']));
        expect(f.stats().serverErrors).toBe(12);

        f.setFaults({exportErrorRate: 1});
        const failed = await c.createExport(q);
        const st = await c.waitForExport(q, failed);
        expect(json(st)).toMatchObject({status: 'ERROR', exportId: failed});

        f.setFaults({truncatedDownloadRate: 1});
        const id = await c.createExport(q);
        const loc = (await c.waitForExport(q, id)).headers.location as string;
        const cut = await c.get(loc);
        expect(cut.status).toBe(200);
        expect(cut.error).toBeDefined();
        expect(cut.body.length).toBeLessThan(Number(cut.headers['content-length']));

        f.setFaults({goneRate: 1});
        expectProblem(await c.get(loc), 410);
        f.setFaults({});
        expectProblem(await c.get(loc), 410);
      } finally {
        await f.close();
      }
    });

    it('cutFirstDownloadAt cuts the first download of each export at that fraction, and only the first', async () => {
      const f = await startSimulator({exportDurationMs: 10, faults: {cutFirstDownloadAt: 0.9}});
      try {
        const c = new Client(f, await getToken(f));
        const q = f.quests[1].id;
        for (let i = 0; i < 2; i++) {
          const loc = (await c.waitForExport(q, await c.createExport(q))).headers.location as string;
          const cut = await c.get(loc);
          const size = Number(cut.headers['content-length']);
          expect({error: cut.error !== undefined, bytes: cut.body.length}).toEqual({
            error: true,
            bytes: Math.floor(size * 0.9),
          });
          const whole = await c.get(loc);
          expect({error: whole.error, bytes: whole.body.length}).toEqual({error: undefined, bytes: size});
        }
        expect(() => f.setFaults({cutFirstDownloadAt: 1.5})).toThrow(/cutFirstDownloadAt must lie in \[0, 1\]/);
      } finally {
        await f.close();
      }
    });

    it('keeps stuck exports INPROGRESS', async () => {
      const s = await startSimulator({exportDurationMs: 10, faults: {stuckExportRate: 1}});
      try {
        const c = new Client(s, await getToken(s));
        const q = s.quests[0].id;
        const id = await c.createExport(q);
        await new Promise((res) => setTimeout(res, 60));
        expect(json(await c.get(`/v1/quests/${q}/exports/${id}/status`)).status).toBe('INPROGRESS');
      } finally {
        await s.close();
      }
    });
  });

  describe('quest options', () => {
    let odd: Simulator;
    let c: Client;
    beforeAll(async () => {
      odd = await startSimulator({
        exportDurationMs: 10,
        quests: [
          {id: 'ragged', rows: 10, corruption: 'ragged-row'},
          {id: 'dup', rows: 4, corruption: 'duplicate-header'},
          {id: 'nohead', rows: 4, corruption: 'no-header'},
          {id: 'open', rows: 4, corruption: 'unterminated-quote'},
          {id: 'html', rows: 4, corruption: 'html-body'},
          {id: 'empty', rows: 4, corruption: 'empty-body'},
          {id: 'none', rows: 0},
          {id: 'none-no-header', rows: 0, headerOnEmpty: false},
        ],
      });
      c = new Client(odd, await getToken(odd));
    });
    afterAll(() => odd.close());

    it('corrupts downloads as configured', async () => {
      const ragged = (await c.exportCsv('ragged')).text;
      expect(() => parseCsv(ragged)).toThrow(/column|record/i);
      const open = (await c.exportCsv('open')).text;
      expect(() => parseCsv(open)).toThrow(/quote/i);
      const dup = parseCsv((await c.exportCsv('dup')).text);
      expect(dup[0].filter((h) => h === 'Comment')).toHaveLength(2);
      expect(dup).toEqual([odd.groundTruth('dup').header, ...odd.groundTruth('dup').rows]);
      expect(parseCsv((await c.exportCsv('nohead')).text)).toEqual(odd.groundTruth('nohead').rows);
      const html = await c.exportCsv('html');
      expect(html.status).toBe(200);
      expect(html.headers['content-type']).toMatch(/^text\/html/);
      const empty = await c.exportCsv('empty');
      expect([empty.status, empty.body.length]).toEqual([200, 0]);
    });

    it('writes a header-only or an empty file for an empty export', async () => {
      expect(parseCsv((await c.exportCsv('none')).text)).toEqual([odd.groundTruth('none').header]);
      const none = await c.exportCsv('none-no-header');
      expect(none.body.length).toBe(0);
      expect(odd.groundTruth('none-no-header')).toEqual({header: [], rows: []});
    });
  });
});

/** Starts a simulator with a token-holding client; `run` gets both, and the simulator is closed after. */
async function withSim(
  options: Parameters<typeof startSimulator>[0],
  run: (sim: Simulator, c: Client) => Promise<void>
): Promise<void> {
  const sim = await startSimulator(options);
  try {
    await run(sim, new Client(sim, await getToken(sim)));
  } finally {
    await sim.close();
  }
}

/** The 302 Location of a completed export of `questId`. */
async function completedLocation(c: Client, questId: string, settings: ExportSettings = {}): Promise<string> {
  const id = await c.createExport(questId, settings);
  const done = await c.waitForExport(questId, id);
  expect(done.status).toBe(302);
  return done.headers.location as string;
}

/** A file as the simulator writes it for groundTruth content: UTF-8 text, BOM, CRLF, PIPE. */
function serialize(truth: {header: string[]; rows: string[][]}): string {
  const encode = cellEncoder('|');
  return '\uFEFF' + [truth.header, ...truth.rows].map((r) => r.map(encode).join('|') + '\r\n').join('');
}

describe('simulator quest options: data', () => {
  it('takes explicit creation times (ISO or epoch ms, any order) that define the rows', async () => {
    const now = Date.now();
    const times = [now - 3_600_000, new Date(now - 7_200_000).toISOString(), now - 120_000, '2024-02-29T12:00:00.123Z'];
    const sorted = times.map((t) => (typeof t === 'number' ? t : Date.parse(t))).sort((a, b) => a - b);
    await withSim({exportDurationMs: 10, quests: [{id: 'times', createdAt: times}]}, async (sim, c) => {
      expect(sim.quests[0].rows).toBe(4);
      expect(sim.quests[0].firstCreatedAt).toBe('2024-02-29T12:00:00.123Z');
      const truth = sim.groundTruth('times');
      expect(truth.rows.map((r) => Date.parse(r[1]))).toEqual(sorted);
      const since = new Date(sorted[1]).toISOString();
      expect(parseCsv((await c.exportCsv('times', {}, {since})).text).slice(1)).toEqual(truth.rows.slice(2));
    });
    const late = {id: 'late', createdAt: [now - 1000]};
    await expect(startSimulator({quests: [late]})).rejects.toThrow(/60 s before/);
    await expect(startSimulator({quests: [{id: 'dup', createdAt: [1000, '1970-01-01T00:00:01Z']}]})).rejects.toThrow(
      /twice/
    );
    await expect(startSimulator({quests: [{id: 'rows', rows: 3, createdAt: [1000, 2000]}]})).rejects.toThrow(
      /disagrees/
    );
    await expect(startSimulator({quests: [{id: 'zone', createdAt: ['2024-01-01T00:00:00']}]})).rejects.toThrow(/zone/);
  });

  it('responseIds uuid: distinct version-4-shaped UUIDs, the same for the same seed, in the export as in groundTruth', async () => {
    const quests: QuestConfig[] = [
      {id: 'uuids', rows: 2000, responseIds: 'uuid'},
      {id: 'numbers', rows: 3},
    ];
    await withSim({exportDurationMs: 10, quests}, async (sim, c) => {
      const ids = sim.groundTruth('uuids').rows.map((r) => r[0]);
      expect(
        ids.filter((id) => !/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(id))
      ).toEqual([]);
      expect(new Set(ids).size).toBe(ids.length);
      expect(sim.groundTruth('numbers').rows.map((r) => r[0])).toEqual(
        expect.arrayContaining([expect.stringMatching(/^\d{9}$/)])
      );
      expect(parseCsv((await c.exportCsv('uuids')).text).slice(1)).toEqual(sim.groundTruth('uuids').rows);
      const again = await startSimulator({quests});
      try {
        expect(again.groundTruth('uuids').rows.map((r) => r[0])).toEqual(ids);
      } finally {
        await again.close();
      }
    });
    await expect(startSimulator({quests: [{id: 'x', rows: 1, responseIds: 'guid' as never}]})).rejects.toThrow(
      /responseIds must be one of numeric, uuid/
    );
  });
  describe('question titles', () => {
    let sim: Simulator;
    let c: Client;
    const TITLES = ['Rate us', 'Comment', 'Pick some', 'Pick one', 'Other'];
    beforeAll(async () => {
      sim = await startSimulator({
        exportDurationMs: 10,
        quests: [
          {id: 'no', rows: 30, columns: 7, titles: 'norwegian'},
          {id: 'de', rows: 10, columns: 20, titles: 'german'},
          {id: 'long', rows: 10, columns: 20, titles: 'long'},
          {id: 'own', rows: 10, questionTitles: TITLES},
        ],
      });
      c = new Client(sim, await getToken(sim));
    });
    afterAll(() => sim.close());
    const expanded: ExportSettings = {valueType: 'TEXT', expandMultipleChoiceToColumns: true, fieldSeparator: 'COMMA'};

    it('norwegian: titles and choices with æ/ø/å, exported as groundTruth says', async () => {
      const truth = sim.groundTruth('no', expanded);
      expect(truth.header).toContain('Hvor fornøyd er du med kundeservicen? (1-5)');
      expect(truth.header).toContain('Hvilke områder bør kommunen prioritere?: Økonomi');
      expect(truth.rows.flat()).toContain('Både og');
      expect(parseCsv((await c.exportCsv('no', expanded)).text, 'COMMA')).toEqual([truth.header, ...truth.rows]);
    });

    it('german: titles with ä/ö/ü/ß, unique even where templates repeat', async () => {
      const header = sim.groundTruth('de').header;
      expect(header).toContain('Wie zufrieden sind Sie mit unserem Kundenservice?');
      expect(header).toContain('Größe des Unternehmens');
      expect(new Set(header).size).toBe(header.length);
      const truth = sim.groundTruth('de', expanded);
      expect(parseCsv((await c.exportCsv('de', expanded)).text, 'COMMA')).toEqual([truth.header, ...truth.rows]);
    });

    it('long: 80-150 characters, unique in full, colliding once cut at 63', async () => {
      const titles = sim.groundTruth('long').header.slice(2);
      for (const t of titles) expect(t.length).toBeGreaterThanOrEqual(80);
      for (const t of titles) expect(t.length).toBeLessThanOrEqual(150);
      expect(new Set(titles).size).toBe(titles.length);
      expect(new Set(titles.map((t) => t.slice(0, 63))).size).toBeLessThan(titles.length);
      const header = sim.groundTruth('long', expanded).header;
      expect(new Set(header).size).toBe(header.length);
      const multi = header.filter((h) => h.endsWith(': Phone') || h.endsWith(': Chat'));
      expect(multi.length).toBeGreaterThanOrEqual(2);
      expect(new Set(multi.map((h) => h.slice(0, 63))).size).toBe(1);
      expect(parseCsv((await c.exportCsv('long', expanded)).text, 'COMMA')[0]).toEqual(header);
    });

    it('questionTitles: the given titles in column order, kinds unchanged', async () => {
      expect(sim.groundTruth('own').header).toEqual(['Response ID', 'Created', ...TITLES]);
      const header = parseCsv((await c.exportCsv('own', expanded)).text, 'COMMA')[0];
      expect(header.slice(2, 4)).toEqual(['Rate us', 'Comment']);
      expect(header[4]).toBe('Pick some: Red');
      expect(header.filter((h) => h.startsWith('Pick some: '))).toHaveLength(5);
      expect(header.slice(-2)).toEqual(['Pick one', 'Other']);
      await expect(startSimulator({quests: [{id: 'x', rows: 1, columns: 3, questionTitles: ['a']}]})).rejects.toThrow(
        /one title per column/
      );
    });
  });

  describe('encodings and line ends', () => {
    let sim: Simulator;
    let c: Client;
    const ENCODED: FileEncoding[] = ['utf8-bom', 'utf8', 'double-bom', 'utf16le-bom', 'utf16be-bom', 'latin1'];
    beforeAll(async () => {
      sim = await startSimulator({
        exportDurationMs: 10,
        quests: [
          ...ENCODED.map((encoding): QuestConfig => ({id: encoding, rows: 12, titles: 'norwegian', encoding})),
          {id: 'lf', rows: 12, lineEnding: 'lf'},
        ],
      });
      c = new Client(sim, await getToken(sim));
    });
    afterAll(() => sim.close());

    const download = async (questId: string): Promise<Buffer> =>
      (await c.get(await completedLocation(c, questId))).body;
    const expectTruth = (questId: string, text: string): void => {
      const truth = sim.groundTruth(questId);
      expect(parseCsv(text)).toEqual([truth.header, ...truth.rows]);
    };

    it('utf8-bom (default), utf8 and double-bom', async () => {
      const bom = await download('utf8-bom');
      expect([...bom.subarray(0, 4)]).toEqual([0xef, 0xbb, 0xbf, 0x52]);
      expectTruth('utf8-bom', bom.toString('utf8'));
      const plain = await download('utf8');
      expect(plain.subarray(0, 11).toString()).toBe('Response ID');
      expectTruth('utf8', plain.toString('utf8'));
      const twice = await download('double-bom');
      expect([...twice.subarray(0, 7)]).toEqual([0xef, 0xbb, 0xbf, 0xef, 0xbb, 0xbf, 0x52]);
      expect(parseCsv(twice.toString('utf8'))[0][0]).toBe('\uFEFFResponse ID');
      expectTruth('double-bom', twice.toString('utf8').slice(1));
    });

    it('utf16le-bom and utf16be-bom', async () => {
      const le = await download('utf16le-bom');
      expect([...le.subarray(0, 4)]).toEqual([0xff, 0xfe, 0x52, 0x00]);
      expectTruth('utf16le-bom', le.toString('utf16le'));
      const be = await download('utf16be-bom');
      expect([...be.subarray(0, 4)]).toEqual([0xfe, 0xff, 0x00, 0x52]);
      expectTruth('utf16be-bom', Buffer.from(be).swap16().toString('utf16le'));
    });

    it('latin1: ISO-8859-1 bytes, "?" for what Latin-1 lacks, and groundTruth as a latin1 decoder reads it', async () => {
      const bytes = await download('latin1');
      expect(bytes.subarray(0, 11).toString()).toBe('Response ID');
      expect(bytes.includes(0xf8)).toBe(true); // ø
      expect(() => new TextDecoder('utf-8', {fatal: true}).decode(bytes)).toThrow();
      expectTruth('latin1', bytes.toString('latin1'));
      const truth = sim.groundTruth('latin1');
      expect(truth.header).toContain('Hvor fornøyd er du med kundeservicen? (1-5)');
      const cells = truth.rows.flat().join('');
      expect(cells).toContain('?');
      expect([...cells].every((ch) => ch.charCodeAt(0) <= 0xff)).toBe(true);
      // The same rows in UTF-8 hold the characters that became '?'.
      const utf8 = sim.groundTruth('utf8').rows.flat().join('');
      expect([...utf8].some((ch) => ch.charCodeAt(0) > 0xff)).toBe(true);
    });

    it('lf: rows end in LF (free text keeps its own CRLF)', async () => {
      const text = (await download('lf')).toString('utf8');
      const firstLine = text.slice(0, text.indexOf('\n') + 1);
      expect(firstLine.endsWith('|Q6 Date of last visit (yyyy-mm-dd)\n')).toBe(true);
      expect(() => expectTruth('lf', text)).toThrow(); // CRLF as row end finds no rows
      const truth = sim.groundTruth('lf');
      expect(parseCsv(text, 'PIPE', '\n')).toEqual([truth.header, ...truth.rows]);
    });
  });

  describe('more corruptions', () => {
    let sim: Simulator;
    let c: Client;
    beforeAll(async () => {
      sim = await startSimulator({
        exportDurationMs: 10,
        quests: [
          {id: 'stray', rows: 9, corruption: 'stray-quote'},
          {id: 'octet', rows: 4, corruption: 'html-octet-stream'},
          {id: 'nofinal', rows: 5, corruption: 'no-final-newline'},
          {id: 'cut', rows: 5, columns: 2, corruption: 'cut-last-cell'},
        ],
      });
      c = new Client(sim, await getToken(sim));
    });
    afterAll(() => sim.close());

    it('stray-quote: a bare quote inside an unquoted cell of the middle row', async () => {
      const text = (await c.exportCsv('stray')).text;
      expect(text).toContain('|24" screen|');
      expect(() => parseCsv(text)).toThrow(/quote/i);
      const truth = sim.groundTruth('stray');
      expect(truth.rows[4]).toContain('24" screen');
      const relaxed = parse(text, {bom: true, delimiter: '|', record_delimiter: '\r\n', relax_quotes: true});
      expect(relaxed).toEqual([truth.header, ...truth.rows]);
    });

    it('html-octet-stream: a 200 HTML error page typed application/octet-stream', async () => {
      const r = await c.exportCsv('octet');
      expect(r.status).toBe(200);
      expect(r.headers['content-type']).toBe('application/octet-stream');
      expect(r.text).toMatch(/^<!DOCTYPE html>/);
      expect(r.text).toContain('An error occurred while processing your request.');
    });

    it('no-final-newline: the last row has no line end, and the file is otherwise whole', async () => {
      const text = (await c.exportCsv('nofinal')).text;
      expect(text.endsWith('\n')).toBe(false);
      const truth = sim.groundTruth('nofinal');
      expect(parseCsv(text)).toEqual([truth.header, ...truth.rows]);
      expect(text + '\r\n').toBe(serialize(truth));
    });

    it('cut-last-cell: a close-delimited body that ends inside the last cell, every time', async () => {
      const loc = await completedLocation(c, 'cut');
      const r = await c.get(loc);
      expect(r.status).toBe(200);
      expect(r.error).toBeUndefined(); // nothing tells the client the body is short
      expect(r.headers['content-length']).toBeUndefined();
      expect(r.headers['transfer-encoding']).toBeUndefined();
      expect(r.headers.connection).toBe('close');
      const truth = sim.groundTruth('cut');
      const full = serialize(truth);
      const lastCell = cellEncoder('|')(truth.rows[truth.rows.length - 1].slice(-1)[0]);
      expect(lastCell.length).toBeGreaterThanOrEqual(2);
      expect(full.startsWith(r.text)).toBe(true);
      const missing = full.slice(r.text.length, -2);
      expect(missing.length).toBeGreaterThan(0);
      expect(missing.length).toBeLessThan(lastCell.length);
      expect(lastCell.endsWith(missing)).toBe(true);
      const file = sim.exports().find((e) => e.questId === 'cut');
      expect(file?.bytes).toBe(Buffer.byteLength(full)); // the file on disk is whole
      expect((await c.get(loc)).body).toEqual(r.body);
    });
  });
});

describe('simulator faults: downloads', () => {
  const settings: ExportSettings = {fieldSeparator: 'SEMICOLON'};
  const expectWhole = (sim: Simulator, text: string): void => {
    const truth = sim.groundTruth(sim.quests[0].id, settings);
    expect(parseCsv(text, 'SEMICOLON')).toEqual([truth.header, ...truth.rows]);
  };

  it('compression gzip: Content-Encoding gzip and the compressed size as Content-Length', async () => {
    await withSim({exportDurationMs: 10, faults: {compression: 'gzip'}}, async (sim, c) => {
      const q = sim.quests[0].id;
      const r = await c.get(await completedLocation(c, q, settings));
      expect(r.headers['content-encoding']).toBe('gzip');
      expect(Number(r.headers['content-length'])).toBe(r.body.length);
      const plain = gunzipSync(r.body);
      expect(plain.length).toBe(sim.exports()[0].bytes);
      expect(r.body.length).toBeLessThan(plain.length);
      expectWhole(sim, plain.toString('utf8'));
      sim.setFaults({compression: 'gzip', framing: 'chunked'});
      const chunked = await c.get(await completedLocation(c, q, settings));
      expect(chunked.headers['transfer-encoding']).toBe('chunked');
      expectWhole(sim, gunzipSync(chunked.body).toString('utf8'));
    });
  });

  it('framing chunked and close', async () => {
    await withSim({exportDurationMs: 10, faults: {framing: 'chunked'}}, async (sim, c) => {
      const q = sim.quests[0].id;
      const chunked = await c.get(await completedLocation(c, q, settings));
      expect(chunked.headers['transfer-encoding']).toBe('chunked');
      expect(chunked.headers['content-length']).toBeUndefined();
      expectWhole(sim, chunked.text);
      sim.setFaults({framing: 'close'});
      const closed = await c.get(await completedLocation(c, q, settings));
      expect(closed.headers['transfer-encoding']).toBeUndefined();
      expect(closed.headers['content-length']).toBeUndefined();
      expect(closed.headers.connection).toBe('close');
      expect(closed.error).toBeUndefined();
      expectWhole(sim, closed.text);
      sim.setFaults({framing: 'length'});
      expect(Number((await c.get(await completedLocation(c, q))).headers['content-length'])).toBeGreaterThan(0);
    });
  });

  it('downloadBytesPerSecond sends the whole body that many bytes a second of its clock', async () => {
    // The waits on the simulator's clock, counted (and not waited): exact whatever the machine's load.
    const waits: number[] = [];
    const clock = {now: () => Date.now(), sleep: async (ms: number) => void waits.push(ms)};
    await withSim({clock, exportDurationMs: 10, faults: {downloadBytesPerSecond: 500}}, async (sim, c) => {
      const location = await completedLocation(c, sim.quests[0].id, settings);
      waits.length = 0;
      const r = await c.get(location);
      expect(Number(r.headers['content-length'])).toBe(r.body.length);
      expectWhole(sim, r.text);
      // The first part goes at once, each of the others a second later.
      expect(waits).toEqual(Array(Math.ceil(r.body.length / 500) - 1).fill(1000));
      expect(() => sim.setFaults({downloadBytesPerSecond: 0})).toThrow(/downloadBytesPerSecond/);
      expect(() => sim.setFaults({downloadBytesPerSecond: 2.5})).toThrow(/downloadBytesPerSecond/);
    });
  });

  it('stalls downloads after a fraction of the body; close() does not hang on them', async () => {
    const sim = await startSimulator({exportDurationMs: 10, faults: {stallDownloadRate: 1, stallAfterFraction: 0.25}});
    let req: http.ClientRequest | undefined;
    try {
      const c = new Client(sim, await getToken(sim));
      const url = sim.apiUrl + (await completedLocation(c, sim.quests[0].id));
      const seen = await new Promise<{status: number; length: number; received: number; ended: boolean}>(
        (resolve, reject) => {
          req = http.get(url, {headers: {Authorization: `Bearer ${c.token}`}}, (res) => {
            let received = 0;
            let ended = false;
            res.on('data', (chunk: Buffer) => (received += chunk.length));
            res.on('end', () => (ended = true));
            res.on('error', () => undefined);
            const length = Number(res.headers['content-length']);
            setTimeout(() => resolve({status: res.statusCode ?? 0, length, received, ended}), 300);
          });
          req.on('error', reject);
        }
      );
      expect(seen.status).toBe(200);
      expect(seen.length).toBe(sim.exports()[0].bytes);
      expect(seen.received).toBe(Math.floor(seen.length * 0.25));
      expect(seen.ended).toBe(false);
    } finally {
      req?.on('error', () => undefined);
      // Only whether it hangs: the stalled answer is ended, not waited for (a loaded machine is slow).
      const started = Date.now();
      await sim.close();
      expect(Date.now() - started).toBeLessThan(30_000);
      req?.destroy();
    }
  });
});

describe('simulator faults: service behaviour', () => {
  it('latencyMs delays every /v1 answer and the token endpoint', async () => {
    // The waits on the simulator's clock, counted: exact whatever the machine's load.
    const waits: number[] = [];
    const clock = {now: () => Date.now(), sleep: async (ms: number) => void waits.push(ms)};
    await withSim({clock, faults: {latencyMs: 150}}, async (sim, c) => {
      expect(waits).toEqual([150]); // withSim's own token
      await getToken(sim);
      expect(waits).toEqual([150, 150]);
      expect((await c.get(`/v1/quests/${sim.quests[0].id}/invitations?take=0`)).status).toBe(200);
      expect(waits).toEqual([150, 150, 150]);
      sim.setFaults({});
      await c.get(`/v1/quests/${sim.quests[0].id}/invitations?take=0`);
      expect(waits).toEqual([150, 150, 150]);
    });
  });

  it('oneExportPerQuest answers 409 while the quest has an export running', async () => {
    await withSim({exportDurationMs: 400, faults: {oneExportPerQuest: true}}, async (sim, c) => {
      const [q, other] = sim.quests.map((x) => x.id);
      const first = await c.createExport(q);
      const busy = expectProblem(await c.post(`/v1/quests/${q}/exports`, {settings: {}, filter: {}}), 409);
      expect(busy.detail).toBe(`An export for quest '${q}' is already being generated`);
      await c.createExport(other); // other quests are not affected
      expect(sim.stats().conflicts).toBe(1);
      expect((await c.waitForExport(q, first)).status).toBe(302);
      await c.createExport(q);
      expect(sim.stats()).toMatchObject({conflicts: 1, exportsCreated: 3});
    });
  });

  it('maxExportRows ends exports of more rows than that in ERROR, smaller ones complete', async () => {
    await withSim({exportDurationMs: 30, faults: {maxExportRows: 10}}, async (sim, c) => {
      const q = sim.quests[0].id;
      const rows = sim.groundTruth(q).rows;
      const big = await c.createExport(q);
      const small = await c.createExport(q, {}, {since: rows[rows.length - 5][1]});
      expect(json(await c.waitForExport(q, big)).status).toBe('ERROR');
      expect((await c.waitForExport(q, small)).status).toBe(302);
      expect(sim.exports().map((e) => [e.rows, e.outcome])).toEqual([
        [rows.length, 'error'],
        [4, 'ok'],
      ]);
    });
  });

  it('vanishRate deletes fresh exports: their status answers 404', async () => {
    await withSim({faults: {vanishRate: 1}}, async (sim, c) => {
      const q = sim.quests[0].id;
      const id = await c.createExport(q);
      const body = expectProblem(await c.get(`/v1/quests/${q}/exports/${id}/status`), 404);
      expect(body.detail).toContain(`export '${id}' does not exist`);
      expect(sim.exports()).toEqual([expect.objectContaining({exportId: id, outcome: 'vanished', bytes: 0})]);
    });
  });

  it('exportMsPerThousandRows makes generation time grow with the export size', async () => {
    // On a clock the test moves: generation times are exact whatever the machine's load.
    let now = Date.now();
    const clock = {now: () => now, sleep: async (ms: number) => void (now += ms)};
    const options = {
      clock,
      // Files made at once: the time to COMPLETED is the generation time alone.
      files: 'memory' as const,
      exportDurationMs: 0,
      exportMsPerThousandRows: 500,
      quests: [
        {id: 'big', rows: 4000, columns: 2, firstCreatedAt: new Date(now - 86_400_000).toISOString()},
        {id: 'quick', rows: 4000, columns: 2, exportMsPerThousandRows: 0},
      ],
    };
    await withSim(options, async (sim, c) => {
      /** How long after its creation the export is COMPLETED (its file written meanwhile). */
      const generation = async (questId: string, filter: {since?: string} = {}): Promise<number> => {
        const id = await c.createExport(questId, {}, filter);
        const created = now;
        for (;;) {
          const status = await c.get(`/v1/quests/${questId}/exports/${id}/status`);
          if (status.status === 302) return now - created;
          now += 10;
        }
      };
      expect(await generation('big')).toBe(2000);
      const rows = sim.groundTruth('big').rows;
      expect(await generation('big', {since: rows[rows.length - 20][1]})).toBe(10);
      expect(await generation('quick')).toBe(0);
      expect(sim.exports().map((e) => e.rows)).toEqual([4000, 19, 4000]);
    });
  });
});

describe('simulator options: URLs', () => {
  it('pathPrefix serves the whole API under a prefix', async () => {
    await withSim({exportDurationMs: 10, pathPrefix: '/gateway/questback/'}, async (sim, c) => {
      expect(sim.apiUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/gateway\/questback$/);
      expect(sim.authUrl).toBe(sim.apiUrl);
      const q = sim.quests[0].id;
      const loc = await completedLocation(c, q);
      expect(loc).toMatch(new RegExp(`^/gateway/questback/v1/quests/${q}/exports/[^/]+/download$`));
      const file = await request(new URL(loc, sim.apiUrl).href, {headers: {Authorization: `Bearer ${c.token}`}});
      expect(file.status).toBe(200);
      expect(parseCsv(file.text).slice(1)).toEqual(sim.groundTruth(q).rows);
      const bare = new URL(sim.apiUrl).origin;
      const outside = await request(`${bare}/v1/quests/${q}/invitations`, {
        headers: {Authorization: `Bearer ${c.token}`},
      });
      expectProblem(outside, 404);
      const token = await request(`${bare}/oauth/v2/token`, {method: 'POST', headers: FORM, body: ''});
      expect(token.status).toBe(404);
      expect(sim.requests().slice(-1)[0].path).toBe('/oauth/v2/token');
      expect(sim.requests().some((r) => r.path === `/gateway/questback/v1/quests/${q}/exports`)).toBe(true);
    });
  });

  it('relativeLocation answers the 302 with Location: download', async () => {
    await withSim({exportDurationMs: 10, relativeLocation: true}, async (sim, c) => {
      const q = sim.quests[0].id;
      const id = await c.createExport(q);
      const statusUrl = `${sim.apiUrl}/v1/quests/${q}/exports/${id}/status`;
      const done = await c.waitForExport(q, id);
      expect(done.status).toBe(302);
      expect(done.headers.location).toBe('download');
      const target = new URL('download', statusUrl).href;
      expect(target).toBe(`${sim.apiUrl}/v1/quests/${q}/exports/${id}/download`);
      const file = await request(target, {headers: {Authorization: `Bearer ${c.token}`}});
      expect(parseCsv(file.text).slice(1)).toEqual(sim.groundTruth(q).rows);
    });
  });
});

it('exports() lists every created export with its window, rows, bytes and outcome', async () => {
  await withSim({exportDurationMs: 10}, async (sim, c) => {
    const q = sim.quests[1].id;
    const created = sim.groundTruth(q).rows.map((r) => r[1]);
    const windows = [{until: created[9]}, {since: created[9], until: created[29]}, {since: created[29]}];
    const sizes: number[] = [];
    for (const w of windows) {
      const r = await c.exportCsv(q, {}, w);
      sizes.push(r.body.length);
    }
    sim.setFaults({exportErrorRate: 1});
    await c.createExport(sim.quests[0].id);
    const list = sim.exports();
    expect(list).toHaveLength(4);
    expect(list.slice(0, 3).map((e) => [e.questId, e.since, e.until, e.rows, e.bytes, e.outcome])).toEqual([
      [q, undefined, created[9], 10, sizes[0], 'ok'],
      [q, created[9], created[29], 20, sizes[1], 'ok'],
      [q, created[29], undefined, 10, sizes[2], 'ok'],
    ]);
    expect(list[3]).toMatchObject({questId: sim.quests[0].id, outcome: 'error', rows: 25, bytes: 0});
    expect(list.every((e, i) => i === 0 || e.createdAt >= list[i - 1].createdAt)).toBe(true);
    expect(new Set(list.map((e) => e.exportId)).size).toBe(4);
    expect(Object.keys(list[2]).sort()).toEqual([
      'bytes',
      'createdAt',
      'downloads',
      'exportId',
      'outcome',
      'polls',
      'questId',
      'rows',
      'seq',
      'since',
    ]);
    expect(list.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    // Each window's export was polled until done and downloaded once; the failed one never asked for.
    expect(list.slice(0, 3).every((e) => e.polls >= 1 && e.downloads === 1)).toBe(true);
    expect(list[3]).toMatchObject({polls: 0, downloads: 0});
  });
});

describe('quests as tables, answers on demand, the clock, the engine', () => {
  const Q = '7ab1e000-0000-4000-8000-000000000001';
  const HEADER = ['Response ID', 'Created', 'Comment'];
  const at = (daysAgo: number): string => new Date(Date.now() - daysAgo * 86_400_000).toISOString();
  // Out of order, a tie, a cell that needs quoting.
  const TABLE = [
    ['R-3', at(1), 'third | "quoted"'],
    ['R-1', at(3), 'first'],
    ['R-2', at(2), 'tie A'],
    ['R-2b', at(2).replace(/\.\d{3}Z$/, '.000Z'), 'tie B'],
  ];

  it('a table quest serves its rows as given, by creation time, filtered by the window', async () => {
    await withSim(
      {exportDurationMs: 10, files: 'memory', quests: [{id: Q, table: {header: HEADER, rows: TABLE}}]},
      async (sim, c) => {
        const truth = sim.groundTruth(Q);
        expect(truth.header).toEqual(HEADER);
        expect([...truth.rows].map((r) => r[0]).sort()).toEqual(['R-1', 'R-2', 'R-2b', 'R-3']);
        expect(truth.rows.map((r) => Date.parse(r[1]))).toEqual(
          truth.rows.map((r) => Date.parse(r[1])).sort((a, b) => a - b)
        );
        const whole = await c.exportCsv(Q);
        expect(parseCsv(whole.text.replace(/^\uFEFF/, ''))).toEqual([HEADER, ...truth.rows]);
        const recent = await c.exportCsv(Q, {}, {since: at(1.5)});
        expect(parseCsv(recent.text.replace(/^\uFEFF/, ''))).toEqual([HEADER, TABLE[0]]);
        expect(() => sim.addResponses(Q, 1)).toThrow(/table/);
      }
    );
    await expect(startSimulator({quests: [{id: Q, rows: 3, table: {header: HEADER, rows: TABLE}}]})).rejects.toThrow(
      /a table quest takes no rows/
    );
    await expect(startSimulator({quests: [{id: Q, table: {header: ['Response ID'], rows: []}}]})).rejects.toThrow(
      /needs a column named Created/
    );
  });

  it('on(route) answers on demand, next() as the service would; requests() records route, body and headers', async () => {
    await withSim(
      {exportDurationMs: 10, files: 'memory', quests: [{id: Q, table: {header: HEADER, rows: TABLE}}]},
      async (sim, c) => {
        sim.on('create', (ctx) => (ctx.n === 1 ? ctx.problem(409, 'busy', {'Retry-After': 1}) : ctx.next()));
        sim.on('download', (ctx) => ctx.send(200, ctx.csv({separator: ';', bom: ''}), {'Content-Type': 'text/csv'}));
        sim.decorate((request, status) => (status === 202 ? {'X-Seen': String(request.seq)} : undefined));
        const busy = await c.post(`/v1/quests/${Q}/exports`, {settings: {}, filter: {}});
        expect(busy.status).toBe(409);
        expect(busy.headers['retry-after']).toBe('1');
        expect(json(busy)).toMatchObject({status: 409, detail: 'busy', traceId: expect.any(String)});
        const id = await c.createExport(Q);
        const created = sim.requests('create');
        expect(created.map((r) => r.status)).toEqual([409, 202]);
        expect(JSON.parse(created[1].body)).toEqual({settings: {}, filter: {}});
        expect(created[1].headers['content-type']).toBe('application/json');
        const done = await c.waitForExport(Q, id);
        const file = await c.get(done.headers.location as string);
        expect(file.text.split('\r\n')[0]).toBe(HEADER.join(';'));
        expect(sim.exports()).toMatchObject([{exportId: id, seq: 1, downloads: 1}]);
        expect(sim.exports()[0].polls).toBeGreaterThanOrEqual(1);
        expect(sim.requests('download')[0]).toMatchObject({questId: Q, exportId: id, route: 'download'});
      }
    );
  });

  it('runs on the clock it is given, and holds it while it works', async () => {
    let now = Date.parse('2030-01-01T00:00:00Z');
    let held = 0;
    let most = 0;
    const clock = {
      now: () => now,
      sleep: async (ms: number) => void (now += ms),
      hold: () => {
        most = Math.max(most, ++held);
        return () => void held--;
      },
    };
    await withSim({clock, exportDurationMs: 60_000, quests: [{id: Q, rows: 5}]}, async (sim, c) => {
      expect(Date.parse(sim.groundTruth(Q).rows[4][1])).toBe(Date.parse('2030-01-01T00:00:00Z') - 60_000);
      const id = await c.createExport(Q);
      expect(json(await c.get(`/v1/quests/${Q}/exports/${id}/status`)).status).toBe('PENDING');
      now += 60_000;
      const done = await c.waitForExport(Q, id);
      expect(done.status).toBe(302);
      expect(sim.exports()[0].createdAt).toBe('2030-01-01T00:00:00.000Z');
    });
    expect(most).toBeGreaterThan(0);
    expect(held).toBe(0);
  });

  it('createEngine drives the same service without HTTP', () => {
    let now = Date.parse('2030-01-01T00:00:00Z');
    const engine = createEngine({
      clock: {now: () => now, sleep: async () => undefined},
      exportDurationMs: 1000,
      quests: [
        {
          id: Q,
          table: {
            header: HEADER,
            rows: TABLE.map((r, i) => [r[0], new Date(now - (i + 2) * 3600_000).toISOString(), r[2]]),
          },
        },
      ],
    });
    const all = engine.createExport(Q, {});
    const stuck = engine.createExport(Q, {since: now - 3 * 3600_000}, 'stuck');
    expect([all.rows, stuck.rows]).toEqual([4, 1]);
    expect(engine.exportState(all.exportId)).toBe('PENDING');
    now += 1000;
    expect([engine.exportState(all.exportId), engine.exportState(stuck.exportId)]).toEqual(['COMPLETED', 'INPROGRESS']);
    const text = engine.exportFile(all.exportId).toString('utf8');
    expect(text.split('\r\n').length).toBe(6);
    expect(engine.exportRows(Q, {since: now - 3 * 3600_000 - 1000, until: now})).toHaveLength(1);
    engine.expireExport(all.exportId);
    expect(engine.exportState(all.exportId)).toBe('GONE');
    expect(engine.exports().map((e) => e.outcome)).toEqual(['ok', 'stuck']);
  });
});

describe('simulator CLI', () => {
  it('defaults to port 8717; --port 0 picks a random one', () => {
    expect(DEFAULT_PORT).toBe(8717);
    expect(parseArgs([]).port).toBe(8717);
    expect(parseArgs(['--port', '0', '--write-config=a.json'])).toMatchObject({port: 0, writeConfig: 'a.json'});
    expect(() => parseArgs(['--nope'])).toThrow(/unknown argument/);
  });

  it('writes a ready connector config and prints how to use it', async () => {
    const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'sim-cli-'));
    const lines: string[] = [];
    const sim = await runCli(
      ['--port', '0', '--write-config', 'cfg/config.json'],
      (l) => lines.push(l),
      () => undefined,
      dir
    );
    try {
      const file = path.join(dir, 'cfg', 'config.json');
      const info = JSON.parse(lines[0]) as Record<string, unknown>;
      expect(info).toMatchObject({apiUrl: sim.apiUrl, authUrl: sim.authUrl, questIds: sim.quests.map((q) => q.id)});
      const config = JSON.parse(await fs.promises.readFile(file, 'utf8')) as Record<string, unknown>;
      expect(Object.keys(config).sort()).toEqual(
        [
          'api_url',
          'auth_url',
          'client_id',
          'client_secret',
          'project_id',
          'quest_ids',
          'settle_seconds',
          'start_date',
        ].sort()
      );
      expect(config.start_date).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      const back = (Date.now() - Date.parse(config.start_date as string)) / 86_400_000;
      expect(Math.round(back)).toBe(90);
      expect(config.settle_seconds).toBe(0);
      // The config works against the running simulator.
      const bearer = await getToken({
        authUrl: config.auth_url as string,
        clientId: config.client_id as string,
        clientSecret: config.client_secret as string,
        projectId: config.project_id as string,
      });
      const quest = (config.quest_ids as string[])[0];
      const r = await request(`${config.api_url as string}/v1/quests/${quest}/invitations?take=0`, {
        headers: {Authorization: `Bearer ${bearer}`},
      });
      expect(r.status).toBe(200);
      const text = lines.slice(1).join('\n');
      expect(text).toContain(`listening on ${sim.apiUrl}`);
      expect(text).toContain(`written to ${file}`);
      expect(text).toContain(`bin/main check --config ${file}`);
      expect(text).toContain(`bin/main discover --config ${file}`);
      expect(text).toContain('npm run demo');
    } finally {
      await sim.close();
      await fs.promises.rm(dir, {recursive: true, force: true});
    }
  });
});

describe('renameColumn', () => {
  test('every file written from then on has the new text where the old was; the cells stay; an unknown or taken text is refused', async () => {
    const sim = await startSimulator({
      files: 'memory',
      quests: [
        {
          id: 'renamed',
          table: {header: ['Response ID', 'Created', 'E-mail'], rows: [['1', '2026-01-01T00:00:00.000Z', 'a@b.no']]},
        },
      ],
    });
    try {
      sim.renameColumn('renamed', 'E-mail', 'E-mail address');
      expect(sim.groundTruth('renamed')).toEqual({
        header: ['Response ID', 'Created', 'E-mail address'],
        rows: [['1', '2026-01-01T00:00:00.000Z', 'a@b.no']],
      });
      expect(() => sim.renameColumn('renamed', 'E-mail', 'Mail')).toThrow(/has no column "E-mail"/);
      expect(() => sim.renameColumn('renamed', 'Created', 'E-mail address')).toThrow(/must be new/);
    } finally {
      await sim.close();
    }
  });
});
