// Request pipeline: the path prefix and the injected latency, then the token endpoint, or for /v1
// requests rate limiting, injected 5xx faults, bearer authentication, routing, quest lookup
// (404/403), and finally the operation handler.

import {IncomingMessage, ServerResponse} from 'http';
import {createExport, downloadExport, exportStatus, listInvitations} from './api';
import {gatewayPage, SERVER_ERROR_DETAIL} from './faults';
import {Ctx, readBody} from './http-util';
import {QuestEntry, State} from './state';
import {routeContext} from './answers';
import {RequestRecord, Route as RouteName} from './types';

export const TOKEN_PATH = '/oauth/v2/token';

type Route =
  | {op: 'create'; questId: string}
  | {op: 'status' | 'download'; questId: string; exportId: string}
  | {op: 'invitations'; questId: string};

const ROUTES: {method: string; pattern: RegExp; build: (m: string[]) => Route}[] = [
  {method: 'POST', pattern: /^\/v1\/quests\/([^/]+)\/exports$/, build: (m) => ({op: 'create', questId: m[0]})},
  {
    method: 'GET',
    pattern: /^\/v1\/quests\/([^/]+)\/exports\/([^/]+)\/status$/,
    build: (m) => ({op: 'status', questId: m[0], exportId: m[1]}),
  },
  {
    method: 'GET',
    pattern: /^\/v1\/quests\/([^/]+)\/exports\/([^/]+)\/download$/,
    build: (m) => ({op: 'download', questId: m[0], exportId: m[1]}),
  },
  {method: 'GET', pattern: /^\/v1\/quests\/([^/]+)\/invitations$/, build: (m) => ({op: 'invitations', questId: m[0]})},
];

function matchRoute(method: string, path: string): Route | undefined {
  for (const r of ROUTES) {
    const m = r.method === method ? r.pattern.exec(path) : null;
    if (!m) continue;
    try {
      return r.build(m.slice(1).map((s) => decodeURIComponent(s)));
    } catch {
      return undefined; // malformed percent-encoding: treat as an unknown resource
    }
  }
  return undefined;
}

/** The route of a request, and the quest and export its path names. */
interface Target {
  route: RouteName;
  questId?: string;
  exportId?: string;
}

function classify(method: string, local: string | undefined): Target {
  if (local === undefined) return {route: 'other'};
  if (local === TOKEN_PATH) return {route: method === 'POST' ? 'token' : 'other'};
  const route = matchRoute(method, local);
  if (!route) return {route: 'other'};
  return {route: route.op, questId: route.questId, ...('exportId' in route ? {exportId: route.exportId} : {})};
}

export function createHandler(state: State): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const method = req.method ?? 'GET';
    const target = classify(method, underPrefix(url.pathname, state.pathPrefix));
    const record: RequestRecord = {
      seq: state.records.length + 1,
      ...target,
      method,
      path: url.pathname,
      status: 0,
      authorized: false,
      at: state.clock.now(),
      query: url.search.replace(/^\?/, ''),
      headers: {...req.headers},
      body: '',
    };
    state.records.push(record);
    state.stats.requests++;
    res.on('close', () => {
      if (record.status === 0) record.status = res.statusCode;
      state.log(`${record.method} ${record.path} -> ${record.status} (${state.clock.now() - record.at} ms)`);
    });
    const ctx = new Ctx(req, res, record, state.problems, state.clock, state.decorators);
    answer(ctx, state, url, target).catch((err: unknown) => {
      state.stats.serverErrors++;
      const message = err instanceof Error ? err.message : String(err);
      state.log(`internal error on ${record.method} ${record.path}: ${message}`);
      if (!res.headersSent && !res.destroyed) ctx.problem({status: 500, detail: message});
      else res.destroy();
    });
  };
}

/** Reads the body, counts the request against its export, then answers: on demand if asked to, else as the service. */
async function answer(ctx: Ctx, state: State, url: URL, target: Target): Promise<void> {
  ctx.body = await readBody(ctx.req);
  ctx.record.body = ctx.body ?? '';
  const {route, questId, exportId} = target;
  const job = questId !== undefined && exportId !== undefined ? state.exports.find(questId, exportId) : undefined;
  if (job && route === 'status') job.polls++;
  if (job && route === 'download') job.downloads++;
  const service = (): Promise<void> => handle(ctx, state, url);
  const handler = state.handlers.get(route);
  if (!handler) return service();
  const n = state.records.filter((r) => r.route === route && r.seq <= ctx.record.seq).length;
  await handler(routeContext(ctx, state, url, job, n, service));
}

/** `path` without the API's prefix, or undefined when it lies outside the prefix. */
function underPrefix(path: string, prefix: string): string | undefined {
  if (prefix === '') return path;
  if (path === prefix) return '/';
  return path.startsWith(`${prefix}/`) ? path.slice(prefix.length) : undefined;
}

async function handle(ctx: Ctx, state: State, url: URL): Promise<void> {
  // Messages name the path as the client sent it; routing uses the path below the prefix.
  const local = underPrefix(ctx.path, state.pathPrefix);
  const isV1 = local !== undefined && (local === '/v1' || local.startsWith('/v1/'));
  if (local !== TOKEN_PATH && !isV1) return ctx.notFound();
  const latency = state.faults.latencyMs;
  if (latency > 0 && !(await ctx.pause(latency))) return;
  if (local === TOKEN_PATH) return token(ctx, state);
  return v1(ctx, state, url, local as string);
}

async function token(ctx: Ctx, state: State): Promise<void> {
  if (ctx.method !== 'POST') {
    ctx.problem({status: 405, detail: `${ctx.method} is not allowed on ${ctx.path}; use POST`}, {Allow: 'POST'});
    return;
  }
  const raw = ctx.body;
  if (raw === undefined) {
    ctx.problem({status: 413, detail: 'The request body is larger than 10 MB'});
    return;
  }
  const secret = new URLSearchParams(raw).get('client_secret') ?? '';
  const echoed = state.faults.echo('client-secret', secret, state.tokens.clientId);
  if (echoed !== undefined) return ctx.problem({status: 400, detail: echoed});
  const result = state.tokens.handle(ctx.req.headers['content-type'], raw, state.clock.now());
  const noStore = {'Cache-Control': 'no-store', Pragma: 'no-cache'};
  if (!result.ok) {
    ctx.problem(result.problem, noStore);
    return;
  }
  ctx.record.authorized = true;
  state.stats.tokens++;
  ctx.json(200, result.body, noStore);
}

async function v1(ctx: Ctx, state: State, url: URL, local: string): Promise<void> {
  // Recorded up front so requests() shows whether a 429 or 5xx request carried a valid token.
  const authorization = ctx.req.headers.authorization;
  const authorized = state.tokens.check(authorization, state.clock.now());
  ctx.record.authorized = authorized;
  const limiter = state.faults.rateLimiter;
  if (limiter) {
    const now = state.clock.now();
    const decision = limiter.hit(now);
    for (const [name, value] of Object.entries(state.dialect.rateLimitHeaders(decision.headers, now)))
      ctx.res.setHeader(name, value);
    if (!decision.allowed) {
      state.stats.rateLimited++;
      ctx.problem({
        status: 429,
        detail: `Rate limit exceeded for ${ctx.method} ${ctx.path}; retry after the reset time`,
      });
      return;
    }
  }
  const fault = state.faults.serverError();
  if (fault) {
    state.stats.serverErrors++;
    if (fault.kind === 'problem') ctx.problem({status: 500, detail: SERVER_ERROR_DETAIL});
    else ctx.send(fault.status, 'text/html', gatewayPage(fault.status));
    return;
  }
  const route = matchRoute(ctx.method, local);
  // An 'other-host' link is signed: it needs no token, as a CDN's would not.
  const signed = route?.op === 'download' && state.dialect.signed(route.exportId, url.searchParams);
  if (!authorized && !signed) {
    const why = authorization ? 'the access token is invalid or has expired' : 'no access token was given';
    ctx.problem(
      {status: 401, detail: `Unauthorized request ${ctx.method} ${ctx.path}: ${why}`, instance: ctx.path},
      {'WWW-Authenticate': 'Bearer'}
    );
    return;
  }

  const echoed = state.faults.echo(
    'token',
    /^Bearer\s+(\S+)/i.exec(authorization ?? '')?.[1] ?? '',
    state.tokens.clientId
  );
  if (echoed !== undefined && authorized) return ctx.problem({status: 400, detail: echoed});
  if (!route) return ctx.notFound();
  const quest: QuestEntry | undefined = state.quests.get(route.questId);
  if (!quest) return ctx.notFound(`quest '${route.questId}' does not exist`);
  if (quest.data.config.forbidden) {
    ctx.problem({status: 403, detail: `The client has no access to quest '${route.questId}'`});
    return;
  }
  switch (route.op) {
    case 'create':
      return createExport(ctx, state, quest);
    case 'invitations':
      return listInvitations(ctx, state, quest, url.searchParams);
    case 'status':
    case 'download': {
      const owner = state.dialect.options.exportsUnderAnyQuest
        ? state.exports.byId(route.exportId)?.questId
        : undefined;
      const job = state.exports.find(owner ?? route.questId, route.exportId);
      const unknown = state.dialect.options.unknownExportStatus;
      if (!job && unknown !== undefined) return ctx.problem({status: unknown, detail: 'The export id is not valid'});
      if (!job) return ctx.notFound(`export '${route.exportId}' does not exist`);
      if (route.op === 'status') return exportStatus(ctx, state, job);
      return downloadExport(ctx, state, quest, job);
    }
  }
}
