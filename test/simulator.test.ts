// Contract tests of the bundled Questback API simulator (test/simulator): the connector's tests,
// the benchmark and the demo rely on this behaviour.

import * as http from 'http';
import {parse} from 'csv-parse/sync';
import {ExportSettings, Simulator, startSimulator} from './simulator';

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

async function getToken(sim: Simulator): Promise<string> {
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
const parseCsv = (text: string, separator = 'PIPE'): string[][] =>
  parse(text, {bom: true, delimiter: SEPARATOR[separator], record_delimiter: '\r\n'}) as string[][];

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

    it('invitations page with skip/take and validate them', async () => {
      const base = `/v1/quests/${quest}/invitations`;
      expect(json<unknown[]>(await api.get(`${base}?skip=0&take=0`))).toEqual([]);
      const all = json<{id: string; email: string; createdAt: string}[]>(await api.get(`${base}?take=1000`));
      expect(all.length).toBeGreaterThanOrEqual(3);
      expect(json<unknown[]>(await api.get(`${base}?skip=1&take=2`))).toEqual(all.slice(1, 3));
      expect(json<unknown[]>(await api.get(`${base}?skip=${all.length + 5}&take=10`))).toEqual([]);
      expect(json<unknown[]>(await api.get(`${base}?since=${all[0].createdAt}`))).toEqual(all.slice(1));
      expect(Object.keys(expectProblem(await api.get(`${base}?skip=-1`), 400).errors as object)).toEqual(['skip']);
      expect(Object.keys(expectProblem(await api.get(`${base}?take=1001`), 400).errors as object)).toEqual(['take']);
      expectProblem(await api.get(`${base}?take=-1`), 400);
    });
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
