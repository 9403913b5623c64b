// A small, programmable, hostile stand-in for the Questback export API and its token service.
//
// By default it behaves correctly (tokens, create, status PENDING once then 302, download of a
// small in-memory CSV filtered by since < Created <= until, invitations `[]`). A test replaces any
// endpoint's behaviour with `server.on(route, handler)`; the handler answers through `ctx` and can
// fall back to the correct behaviour with `ctx.next()`. Every request is recorded, and every access
// token issued, so a test can judge what the connector did and what it must never print.

import {warehouseNames} from '../../src/sync/streams/column-names';
import crypto from 'crypto';
import http from 'http';
import net from 'net';
import zlib from 'zlib';

import {AirbyteMessageJson} from '../helpers/protocol';
import {errorTraces, records, states, LiveRun, startConnector, tempDir, writeJson} from '../helpers/connector';

export const HEADER = ['Response ID', 'Created', 'Q1 Comment', 'Q2 Rating'];
const CREATED = 1;
export const BOM = '\uFEFF';
export const DAY_MS = 86_400_000;
export const CURSOR_FIELD = '_questback_window_end';

export const CLIENT_ID = '312345678901234567@questback';
export const CLIENT_SECRET = 's3cr3t/with+special=chars&more ø%';
export const PROJECT_ID = '314876184947078893';

/** The endpoints the server knows; `other` is every request that matches none of them. */
export type Route = 'token' | 'create' | 'status' | 'download' | 'invitations' | 'other';

/** One CSV row, cells in the order of the quest's header. */
export type Row = string[];

export interface QuestData {
  id: string;
  header: string[];
  rows: Row[];
}

export interface RecordedRequest {
  /** 1-based, in order of arrival over the whole server. */
  seq: number;
  route: Route;
  method: string;
  /** The full path as received (with any prefix), without the query. */
  path: string;
  query: Record<string, string>;
  headers: http.IncomingHttpHeaders;
  /** Date.now() when the request arrived. */
  time: number;
  /** The request body as text; filled in once it has been read. */
  body: string;
  questId?: string;
  exportId?: string;
}

export interface ExportJob {
  id: string;
  questId: string;
  /** 1-based, in order of creation over the whole server. */
  seq: number;
  since: string;
  until: string;
  sinceMs: number;
  untilMs: number;
  createdAt: number;
  /** Status requests for this job so far, including the current one. */
  polls: number;
  /** Download requests for this job so far, including the current one. */
  downloads: number;
}

export interface CsvOptions {
  /** Leading byte order mark(s); default one. */
  bom?: string;
  /** `rfc`: RFC 4180 quoting where needed (default); `never`: cells written as they are. */
  quote?: 'rfc' | 'never';
  separator?: string;
}

/** Writes a CSV file the way the service does: BOM, pipe-separated, CRLF, RFC 4180 quoting. */
export function buildCsv(header: string[], rows: Row[], options: CsvOptions = {}): string {
  const sep = options.separator ?? '|';
  const quote = options.quote ?? 'rfc';
  const cell = (v: string): string =>
    quote === 'rfc' && (v.includes(sep) || /["\r\n]/.test(v)) ? `"${v.replace(/"/g, '""')}"` : v;
  const line = (cells: string[]): string => cells.map(cell).join(sep) + '\r\n';
  return (options.bom ?? BOM) + line(header) + rows.map(line).join('');
}

/**
 * A quest's default data: a handful of rows over the last few days (one of them 4 days old, before
 * the tests' usual start_date), with cells that need quoting and non-ASCII text.
 */
export function defaultRows(questIndex: number, now = Date.now()): Row[] {
  const at = (daysAgo: number): string => new Date(now - daysAgo * DAY_MS).toISOString();
  const id = (i: number): string => `R-${questIndex + 1}${String(i).padStart(3, '0')}`;
  return [
    [id(1), at(4), 'Older than the start date', '1'],
    [id(2), at(2.6), 'Great, "really" | great', '5'],
    [id(3), at(1.9), 'Line one\r\nline two', '4'],
    [id(4), at(1.2), 'Blåbær og ø på Ærø', '3'],
    [id(5), at(0.6), 'Quick and friendly', '5'],
    [id(6), at(0.1), 'Could be better', '2'],
  ];
}

/** A JWT-looking token, unique per call. */
function jwtLike(clientId: string): string {
  const b64 = (v: unknown): string => Buffer.from(JSON.stringify(v)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  return [
    b64({alg: 'RS256', typ: 'JWT', kid: crypto.randomBytes(4).toString('hex')}),
    b64({sub: clientId, iat: now, exp: now + 3600, jti: crypto.randomUUID()}),
    crypto.randomBytes(32).toString('base64url'),
  ].join('.');
}

export interface HostileOptions {
  /** Quests served: an id (default data) or full data. Default: one quest. */
  quests?: (string | (Partial<QuestData> & {id: string}))[];
  /** Path prefix of the whole service, e.g. `/gw/qb`; requests outside it get 404. */
  prefix?: string;
  clientId?: string;
  clientSecret?: string;
  projectId?: string;
}

export type Handler = (ctx: Ctx) => void | Promise<void>;
export type HeaderDecorator = (ctx: Ctx, status: number) => Record<string, string> | undefined;

/** What a handler gets: the request, the job it names, and ways to answer. */
export interface Ctx {
  req: http.IncomingMessage;
  res: http.ServerResponse;
  socket: net.Socket;
  server: HostileServer;
  route: Route;
  /** The request path without the server's prefix. */
  path: string;
  url: URL;
  body: string;
  request: RecordedRequest;
  questId?: string;
  exportId?: string;
  /** The export job the path names, if it exists. */
  job?: ExportJob;
  /** 1-based number of this request among the requests of its route. */
  n: number;
  /** Answers the way the correct service would. */
  next(): Promise<void>;
  send(status: number, body?: string | Buffer, headers?: Record<string, string | number>): void;
  json(status: number, body: unknown, headers?: Record<string, string | number>): void;
  problem(status: number, detail: string, headers?: Record<string, string | number>): void;
  redirect(location: string, status?: number): void;
  /** 200 with the job record in the given state (PENDING by default). */
  jobStatus(status?: string): void;
  /** 302 to the job's documented download path, as the service answers a COMPLETED export. */
  completed(): void;
  /** The rows of this request's export (since < Created <= until). */
  rows(): Row[];
  /** The CSV text of this request's export. */
  csv(options?: CsvOptions): string;
  /** Writes status, headers and `part` of a body, then never another byte; the socket stays open. */
  stall(status: number, headers: Record<string, string | number>, part: Buffer | string): void;
  /** Writes bytes straight to the socket (a hand-made HTTP answer) and ends the socket if `close`. */
  raw(bytes: Buffer | string, close?: boolean): void;
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  410: 'Gone',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
};

export class HostileServer {
  readonly clientId: string;
  readonly clientSecret: string;
  readonly projectId: string;
  readonly prefix: string;
  readonly quests: QuestData[];
  /** Every request, in order of arrival. */
  readonly requests: RecordedRequest[] = [];
  /** Every access token the token endpoint issued. */
  readonly tokens: string[] = [];
  /** Every export job created, in order. */
  readonly jobs: ExportJob[] = [];
  private readonly handlers = new Map<Route, Handler>();
  private readonly decorators: HeaderDecorator[] = [];
  private readonly sockets = new Set<net.Socket>();
  private readonly counts = new Map<Route, number>();
  private readonly http: http.Server;
  private port = 0;

  constructor(options: HostileOptions = {}) {
    this.clientId = options.clientId ?? CLIENT_ID;
    this.clientSecret = options.clientSecret ?? CLIENT_SECRET;
    this.projectId = options.projectId ?? PROJECT_ID;
    this.prefix = (options.prefix ?? '').replace(/\/+$/, '');
    const now = Date.now();
    this.quests = (options.quests ?? ['1b4e28ba-2fa1-41d2-883f-0016d3cca427']).map((q, i) => {
      const given = typeof q === 'string' ? {id: q} : q;
      return {id: given.id, header: given.header ?? HEADER, rows: given.rows ?? defaultRows(i, now)};
    });
    this.http = http.createServer((req, res) => void this.handle(req, res));
    this.http.keepAliveTimeout = 60_000;
    this.http.on('connection', (socket: net.Socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  async listen(): Promise<this> {
    await new Promise<void>((resolve) => this.http.listen(0, '127.0.0.1', resolve));
    this.port = (this.http.address() as net.AddressInfo).port;
    return this;
  }

  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }
  get apiUrl(): string {
    return this.origin + this.prefix;
  }
  get authUrl(): string {
    return this.origin + this.prefix;
  }

  /** Replaces the behaviour of one endpoint; `ctx.next()` inside the handler is the correct answer. */
  on(route: Route, handler: Handler): this {
    this.handlers.set(route, handler);
    return this;
  }

  /** Adds headers to every answer for which `decorate` returns some (answers made with `ctx.raw` excepted). */
  decorate(decorate: HeaderDecorator): this {
    this.decorators.push(decorate);
    return this;
  }

  quest(id: string): QuestData {
    const quest = this.quests.find((q) => q.id === id);
    if (!quest) throw new Error(`no quest ${id} on the hostile server`);
    return quest;
  }

  /** Rows of a quest with since < Created <= until (epoch ms). */
  rowsBetween(questId: string, sinceMs: number, untilMs: number): Row[] {
    return this.quest(questId).rows.filter((r) => {
      const at = Date.parse(r[CREATED]);
      return at > sinceMs && at <= untilMs;
    });
  }

  requestsOf(route: Route): RecordedRequest[] {
    return this.requests.filter((r) => r.route === route);
  }

  /** Stops listening and destroys every open socket, so no stalled answer keeps the test process alive. */
  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    this.http.closeAllConnections();
    await new Promise<void>((resolve) => this.http.close(() => resolve()));
  }

  private classify(method: string, path: string): {route: Route; questId?: string; exportId?: string} {
    if (this.prefix) {
      if (path !== this.prefix && !path.startsWith(this.prefix + '/')) return {route: 'other'};
      path = path.slice(this.prefix.length);
    }
    if (method === 'POST' && path === '/oauth/v2/token') return {route: 'token'};
    let m = /^\/v1\/quests\/([^/]+)\/exports$/.exec(path);
    if (m && method === 'POST') return {route: 'create', questId: decodeURIComponent(m[1])};
    m = /^\/v1\/quests\/([^/]+)\/exports\/([^/]+)\/(status|download)$/.exec(path);
    if (m && method === 'GET') {
      return {
        route: m[3] as 'status' | 'download',
        questId: decodeURIComponent(m[1]),
        exportId: decodeURIComponent(m[2]),
      };
    }
    m = /^\/v1\/quests\/([^/]+)\/invitations$/.exec(path);
    if (m && method === 'GET') return {route: 'invitations', questId: decodeURIComponent(m[1])};
    return {route: 'other'};
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.origin);
    const method = req.method ?? 'GET';
    const {route, questId, exportId} = this.classify(method, url.pathname);
    const request: RecordedRequest = {
      seq: this.requests.length + 1,
      route,
      method,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: req.headers,
      time: Date.now(),
      body: '',
      questId,
      exportId,
    };
    this.requests.push(request);
    const n = (this.counts.get(route) ?? 0) + 1;
    this.counts.set(route, n);
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of req) chunks.push(chunk as Buffer);
    } catch {
      return; // the client went away
    }
    request.body = Buffer.concat(chunks).toString('utf8');
    const job = exportId ? this.jobs.find((j) => j.id === exportId && j.questId === questId) : undefined;
    if (job && route === 'status') job.polls++;
    if (job && route === 'download') job.downloads++;
    const ctx = this.context(req, res, route, url, request, n, job);
    const decorators = this.decorators;
    const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => http.ServerResponse;
    (res as unknown as {writeHead: (...args: unknown[]) => http.ServerResponse}).writeHead = (...args: unknown[]) => {
      for (const decorate of decorators) {
        for (const [k, v] of Object.entries(decorate(ctx, args[0] as number) ?? {})) res.setHeader(k, v);
      }
      return writeHead(...args);
    };
    try {
      const handler = this.handlers.get(route);
      await (handler ? handler(ctx) : ctx.next());
    } catch (err) {
      if (!res.headersSent && !res.destroyed) ctx.problem(500, `hostile server handler failed: ${String(err)}`);
    }
  }

  private context(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    route: Route,
    url: URL,
    request: RecordedRequest,
    n: number,
    job: ExportJob | undefined
  ): Ctx {
    const path =
      this.prefix && url.pathname.startsWith(this.prefix) ? url.pathname.slice(this.prefix.length) : url.pathname;
    const ctx: Ctx = {
      req,
      res,
      socket: req.socket,
      server: this,
      route,
      path,
      url,
      body: request.body,
      request,
      questId: request.questId,
      exportId: request.exportId,
      job,
      n,
      next: () => this.answer(ctx),
      send(status, body, headers = {}) {
        const buf = body === undefined ? Buffer.alloc(0) : Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
        res.writeHead(status, status === 204 || status === 304 ? headers : {'Content-Length': buf.length, ...headers});
        res.end(buf);
      },
      json(status, body, headers = {}) {
        ctx.send(status, JSON.stringify(body), {'Content-Type': 'application/json; charset=utf-8', ...headers});
      },
      problem(status, detail, headers = {}) {
        ctx.send(
          status,
          JSON.stringify({
            type: `https://tools.ietf.org/html/rfc9110#section-15.${status >= 500 ? 6 : 5}`,
            title: TITLES[status] ?? 'Error',
            status,
            detail,
            instance: url.pathname,
            traceId: `00-${crypto.randomBytes(16).toString('hex')}-${crypto.randomBytes(8).toString('hex')}-00`,
          }),
          {'Content-Type': 'application/problem+json; charset=utf-8', ...headers}
        );
      },
      redirect(location, status = 302) {
        ctx.send(status, undefined, {Location: location});
      },
      jobStatus(status = 'PENDING') {
        if (!job) return ctx.problem(404, `Export ${request.exportId} not found`);
        ctx.json(200, {
          exportId: job.id,
          questId: job.questId,
          status,
          lastChangedAt: new Date(job.createdAt).toISOString(),
        });
      },
      completed: () => {
        ctx.redirect(`${this.prefix}/v1/quests/${request.questId}/exports/${request.exportId}/download`);
      },
      rows: () => {
        if (!job) throw new Error('this request names no export job');
        return this.rowsBetween(job.questId, job.sinceMs, job.untilMs);
      },
      csv: (options) => {
        if (!job) throw new Error('this request names no export job');
        return buildCsv(this.quest(job.questId).header, ctx.rows(), options);
      },
      stall(status, headers, part) {
        res.writeHead(status, headers);
        res.write(part);
      },
      raw(bytes, close = true) {
        req.socket.write(bytes);
        if (close) req.socket.end();
      },
    };
    return ctx;
  }

  private authorized(ctx: Ctx): boolean {
    const auth = String(ctx.req.headers.authorization ?? '');
    const m = /^Bearer (.+)$/.exec(auth);
    if (m && this.tokens.includes(m[1])) return true;
    ctx.problem(401, `${ctx.req.method} ${ctx.url.pathname} requires a valid bearer token`);
    return false;
  }

  /** The correct service. */
  async answer(ctx: Ctx): Promise<void> {
    const {route, job} = ctx;
    if (route === 'token') {
      const form = new URLSearchParams(ctx.body);
      if (form.get('grant_type') !== 'client_credentials') return ctx.json(400, {error: 'unsupported_grant_type'});
      if (form.get('client_id') !== this.clientId || form.get('client_secret') !== this.clientSecret) {
        return ctx.json(401, {error: 'invalid_client', error_description: 'client authentication failed'});
      }
      if (!String(form.get('scope') ?? '').includes(`:project:id:${this.projectId}:aud`)) {
        return ctx.json(400, {error: 'invalid_scope'});
      }
      const token = jwtLike(this.clientId);
      this.tokens.push(token);
      return ctx.json(200, {access_token: token, token_type: 'Bearer', expires_in: 3600});
    }
    if (route === 'other') return ctx.problem(404, `${ctx.req.method} ${ctx.url.pathname} does not exist`);
    if (!this.authorized(ctx)) return;
    const questId = ctx.questId as string;
    if (!this.quests.some((q) => q.id === questId)) return ctx.problem(403, `No access to quest '${questId}'`);
    if (route === 'invitations') return ctx.json(200, []);
    if (route === 'create') {
      let body: {filter?: {since?: unknown; until?: unknown}; settings?: unknown};
      try {
        body = JSON.parse(ctx.body);
      } catch {
        return ctx.problem(400, 'The request body is not valid JSON');
      }
      const since = String(body.filter?.since ?? '');
      const until = String(body.filter?.until ?? '');
      const sinceMs = Date.parse(since);
      const untilMs = Date.parse(until);
      if (!body.settings || Number.isNaN(sinceMs) || Number.isNaN(untilMs) || sinceMs >= untilMs) {
        return ctx.problem(400, `Invalid export request: filter ${JSON.stringify(body.filter)}`);
      }
      if (untilMs > Date.now() + 2000) return ctx.problem(400, 'until must not lie in the future');
      const created: ExportJob = {
        id: crypto.randomUUID(),
        questId,
        seq: this.jobs.length + 1,
        since,
        until,
        sinceMs,
        untilMs,
        createdAt: Date.now(),
        polls: 0,
        downloads: 0,
      };
      this.jobs.push(created);
      return ctx.json(202, {exportId: created.id, message: `Export for quest '${questId}' has been scheduled`});
    }
    if (!job) return ctx.problem(404, `Export ${ctx.exportId} of quest '${questId}' not found`);
    if (route === 'status') {
      return job.polls === 1 ? ctx.jobStatus('PENDING') : ctx.completed();
    }
    // download
    return ctx.send(200, ctx.csv(), {'Content-Type': 'text/csv'});
  }
}

export async function startHostile(options: HostileOptions = {}): Promise<HostileServer> {
  return new HostileServer(options).listen();
}

/** Runs `fn` with its own server, always closed afterwards. */
export async function withServer(options: HostileOptions, fn: (server: HostileServer) => Promise<void>): Promise<void> {
  const server = await startHostile(options);
  try {
    await fn(server);
  } finally {
    await server.close();
  }
}

/** Rows `R-9001`, `R-9002`, ... created the given numbers of days ago, with the given comments. */
export function rowsAt(cells: [number, string][]): Row[] {
  const now = Date.now();
  return cells.map(([daysAgo, comment], i) => [
    `R-${9001 + i}`,
    new Date(now - daysAgo * DAY_MS).toISOString(),
    comment,
    String((i % 5) + 1),
  ]);
}

// ---------------------------------------------------------------------------------------------
// Running the connector against the server, and judging what it did.

/** The connector config every hostile test starts from. */
export function hostileConfig(server: HostileServer, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    client_id: server.clientId,
    client_secret: server.clientSecret,
    project_id: server.projectId,
    api_url: server.apiUrl,
    auth_url: server.authUrl,
    quest_ids: server.quests.map((q) => q.id),
    start_date: new Date(Date.now() - 3 * DAY_MS).toISOString(),
    settle_seconds: 0,
    request_timeout_seconds: 2,
    ...overrides,
  };
}

export const streamOf = (questId: string): string => `quest_${questId.replace(/-/g, '_')}`;

/** A configured catalog, incremental, of the given quests (each listed once unless repeated). */
export function catalogOf(
  server: HostileServer,
  questIds: string[] = server.quests.map((q) => q.id),
  options: {properties?: boolean; names?: 'warehouse' | 'survey'} = {}
): Record<string, unknown> {
  return {
    streams: questIds.map((id) => {
      const properties: Record<string, unknown> = {};
      if (options.properties !== false) {
        const header = server.quest(id).header;
        const names = options.names === 'survey' ? header : warehouseNames(header);
        names.forEach((name, i) => (properties[name] = {type: ['null', 'string'], title: header[i]}));
        properties._questback_quest_id = {type: 'string'};
        properties._questback_window_start = {type: 'string', format: 'date-time'};
        properties[CURSOR_FIELD] = {type: 'string', format: 'date-time'};
      }
      return {
        stream: {
          name: streamOf(id),
          json_schema: {type: 'object', additionalProperties: true, properties},
          supported_sync_modes: ['full_refresh', 'incremental'],
          source_defined_cursor: true,
          default_cursor_field: [CURSOR_FIELD],
        },
        sync_mode: 'incremental',
        cursor_field: [CURSOR_FIELD],
        destination_sync_mode: 'append',
      };
    }),
  };
}

export interface HostileRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  messages: AirbyteMessageJson[];
  invalid: string[];
  /** Wall time from spawn to exit, in seconds. */
  seconds: number;
  startedAt: number;
  exitedAt: number;
  /** Killed by the test after `killAfterMs`: the connector did not finish in time. */
  killed: boolean;
  config: Record<string, unknown>;
  /** start_date in epoch ms. */
  startMs: number;
}

export interface RunOptions {
  config?: Record<string, unknown>;
  catalog?: Record<string, unknown>;
  state?: unknown;
  /** The test kills the connector after this long (default 60 s) so that a hang fails the test, not jest. */
  killAfterMs?: number;
}

/** Starts `check` or `read` against the server; the live run can be watched line by line. */
export function launch(
  server: HostileServer,
  command: 'check' | 'read',
  options: RunOptions = {}
): {live: LiveRun; done: Promise<HostileRun>} {
  const dir = tempDir('questback-hostile-');
  const config = hostileConfig(server, options.config);
  const args = [command, '--config', writeJson(dir, 'config.json', config)];
  if (command === 'read') args.push('--catalog', writeJson(dir, 'catalog.json', options.catalog ?? catalogOf(server)));
  if (options.state !== undefined) args.push('--state', writeJson(dir, 'state.json', options.state));
  const live = startConnector(args, {killAfterMs: options.killAfterMs ?? 60_000});
  const done = live.done.then((r) => ({
    ...r,
    seconds: (r.exitedAt - live.startedAt) / 1000,
    startedAt: live.startedAt,
    config,
    startMs: Date.parse(String(config.start_date)),
  }));
  return {live, done};
}

export function runHostile(server: HostileServer, command: 'check' | 'read', options: RunOptions = {}) {
  return launch(server, command, options).done;
}

/** Every form in which a secret could leak: raw, URL- and form-encoded, JSON-escaped, base64. */
export function secretForms(server: HostileServer): Record<string, string> {
  const secret = server.clientSecret;
  const forms: Record<string, string> = {
    raw: secret,
    encodeURIComponent: encodeURIComponent(secret),
    form: new URLSearchParams({s: secret}).toString().slice(2),
    json: JSON.stringify(secret).slice(1, -1),
    base64: Buffer.from(secret, 'utf8').toString('base64'),
    basicAuth: Buffer.from(`${server.clientId}:${secret}`, 'utf8').toString('base64'),
  };
  server.tokens.forEach((token, i) => (forms[`token#${i + 1}`] = token));
  return forms;
}

/** Names of the secret forms found in the run's stdout or stderr. */
export function leaks(run: Pick<HostileRun, 'stdout' | 'stderr'>, server: HostileServer): string[] {
  const output = run.stdout + '\n' + run.stderr;
  return Object.entries(secretForms(server))
    .filter(([, value]) => output.includes(value))
    .map(([name]) => name);
}

export const stateMessages = (run: HostileRun, questId: string) =>
  states(run.messages).filter((s) => s.state.stream.stream_descriptor.name === streamOf(questId));
export const recordsOf = (run: HostileRun, questId: string) =>
  records(run.messages).filter((r) => r.record.stream === streamOf(questId));

/**
 * What is wrong with a stream that should have succeeded: its records must be exactly the server's
 * rows after the start (start_date, or a later state cursor) up to its last STATE, each once, with
 * every cell as served; every STATE must only follow records covering it; and the last STATE must
 * cover every row the server has after the start.
 */
export function streamDataProblems(run: HostileRun, server: HostileServer, questId: string, fromMs?: number): string[] {
  const problems: string[] = [];
  const quest = server.quest(questId);
  const stream = streamOf(questId);
  const startMs = fromMs ?? run.startMs;
  const idIndex = quest.header.indexOf('Response ID');
  // Records carry the warehouse-safe names (the connector's default column_names), or the header's.
  const names = run.config.column_names === 'survey' ? quest.header : warehouseNames(quest.header);
  const idName = names[idIndex];
  const byId = new Map(quest.rows.map((r) => [r[idIndex], r]));
  const seen = new Map<string, number>();
  let lastCursor: number | undefined;
  for (const m of run.messages) {
    if (m.type === 'RECORD') {
      const rec = (m as unknown as {record: {stream: string; data: Record<string, unknown>}}).record;
      if (rec.stream !== stream) continue;
      const id = String(rec.data[idName]);
      seen.set(id, (seen.get(id) ?? 0) + 1);
      const row = byId.get(id);
      if (!row) {
        problems.push(`record with unknown Response ID ${JSON.stringify(rec.data[idName])}`);
        continue;
      }
      if (Date.parse(row[CREATED]) <= startMs) problems.push(`record ${id} was created before the start`);
      names.forEach((column, i) => {
        const want = row[i] === '' ? null : row[i];
        if (rec.data[column] !== want) {
          problems.push(
            `record ${id}: ${column} is ${JSON.stringify(rec.data[column])}, served ${JSON.stringify(want)}`
          );
        }
      });
    } else if (m.type === 'STATE') {
      const st = (
        m as unknown as {state: {stream?: {stream_descriptor: {name: string}; stream_state: {cursor?: string}}}}
      ).state;
      if (st.stream?.stream_descriptor.name !== stream) continue;
      const cursor = Date.parse(String(st.stream.stream_state?.cursor));
      if (Number.isNaN(cursor)) {
        problems.push(`STATE without a parsable cursor: ${JSON.stringify(st.stream.stream_state)}`);
        continue;
      }
      lastCursor = cursor;
      const missing = server
        .rowsBetween(questId, startMs, cursor)
        .map((r) => r[idIndex])
        .filter((id) => !seen.has(id));
      if (missing.length) {
        problems.push(
          `STATE at ${st.stream.stream_state.cursor} before the records ${missing.join(', ')} were emitted`
        );
      }
    }
  }
  for (const [id, n] of seen) if (n !== 1) problems.push(`record ${id} emitted ${n} times`);
  if (lastCursor === undefined) problems.push('no STATE');
  const expected = server.rowsBetween(questId, startMs, Date.now()).map((r) => r[idIndex]);
  const missing = expected.filter((id) => !seen.has(id));
  if (missing.length) problems.push(`rows never emitted: ${missing.join(', ')}`);
  return problems;
}

export interface Outcome {
  /** The exit code, or 'nonzero' for any number but 0. */
  code: number | 'nonzero';
  maxSeconds: number;
  /** The error TRACE expected (one, or the first of several). */
  failure?: {type: string | RegExp; message: RegExp; questId?: string};
  /** Quests whose records must equal the server's data, each once. */
  ok?: string[];
  /**
   * Quests that must claim no progress: no STATE moves their cursor past where the read started (a
   * STATE that only records a created export, for a later attempt to re-use, is allowed).
   */
  failed?: string[];
  /** Start of the expected data when not start_date (e.g. a state cursor). */
  fromMs?: number;
}

/** The whole judgement of one read: exit code, time, failure, records and states, no secret. */
export function judge(run: HostileRun, server: HostileServer, outcome: Outcome) {
  const errors = errorTraces(run.messages).map((t) => t.trace.error);
  const failure = errors[0];
  return {
    code: run.code,
    exitedNonZero: typeof run.code === 'number' && run.code !== 0,
    killedByTest: run.killed,
    withinTime: run.seconds < outcome.maxSeconds ? true : `${run.seconds.toFixed(1)} s`,
    invalidLines: run.invalid,
    failureType: failure?.failure_type,
    failureMessage: failure?.message,
    failureStream: failure?.stream_descriptor?.name,
    data: Object.fromEntries((outcome.ok ?? []).map((q) => [q, streamDataProblems(run, server, q, outcome.fromMs)])),
    statesOfFailed: Object.fromEntries(
      (outcome.failed ?? []).map((q) => [
        q,
        stateMessages(run, q).filter((s) => movedCursor(s, outcome.fromMs ?? run.startMs)).length,
      ])
    ),
    leaks: leaks(run, server),
  };
}

/** Whether a STATE's cursor lies past `fromMs`, the start of the read (start_date, or the given state's cursor). */
function movedCursor(s: ReturnType<typeof stateMessages>[number], fromMs: number): boolean {
  const cursor = Date.parse(String((s.state.stream.stream_state as {cursor?: string}).cursor));
  // start_date is inclusive: the state of a read that moved nothing says start_date less 1 ms.
  return cursor >= fromMs;
}

/** The judgement `judge` must return for the outcome (use with toMatchObject / toEqual). */
export function wanted(outcome: Outcome) {
  return {
    ...(outcome.code === 'nonzero' ? {exitedNonZero: true} : {code: outcome.code}),
    killedByTest: false,
    withinTime: true,
    invalidLines: [],
    ...(outcome.failure
      ? {
          failureType:
            outcome.failure.type instanceof RegExp ? expect.stringMatching(outcome.failure.type) : outcome.failure.type,
          failureMessage: expect.stringMatching(outcome.failure.message),
          ...(outcome.failure.questId ? {failureStream: streamOf(outcome.failure.questId)} : {}),
        }
      : {failureType: undefined, failureMessage: undefined}),
    data: Object.fromEntries((outcome.ok ?? []).map((q) => [q, []])),
    statesOfFailed: Object.fromEntries((outcome.failed ?? []).map((q) => [q, 0])),
    leaks: [],
  };
}

/** Asserts the outcome of a read in one comparison, so a failure shows everything that went wrong. */
export function expectOutcome(run: HostileRun, server: HostileServer, outcome: Outcome): void {
  expect(judge(run, server, outcome)).toMatchObject(wanted(outcome));
}

/** Log messages of a run, with their level. */
export function logs(run: HostileRun): {level: string; message: string}[] {
  return run.messages
    .filter((m) => m.type === 'LOG')
    .map((m) => (m as unknown as {log: {level: string; message: string}}).log);
}

/** The CONNECTION_STATUS messages of a check. */
export function connectionStatuses(run: HostileRun): {status: string; message?: string}[] {
  return run.messages
    .filter((m) => m.type === 'CONNECTION_STATUS')
    .map((m) => (m as unknown as {connectionStatus: {status: string; message?: string}}).connectionStatus);
}

/** Encodes text as UTF-8 and turns each U+FFFD into one invalid byte (0xFF). */
export function utf8WithInvalidBytes(text: string): Buffer {
  const buf = Buffer.from(text, 'utf8');
  const out: number[] = [];
  for (let i = 0; i < buf.length; i++) {
    if (buf[i] === 0xef && buf[i + 1] === 0xbf && buf[i + 2] === 0xbd) {
      out.push(0xff);
      i += 2;
    } else out.push(buf[i]);
  }
  return Buffer.from(out);
}

export const gzip = (text: string | Buffer): Buffer => zlib.gzipSync(text);
