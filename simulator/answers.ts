// Answers on demand (Simulator.on): a test replaces how one route is answered, and may still answer
// as the service would with ctx.next(). The context offers the export the request names and the
// means of a hostile service: any status and body, a stall, bytes written raw to the socket.

import {csvText} from './csv';
import {exportRows} from './engine';
import {ExportJob} from './exports';
import {Ctx} from './http-util';
import {State} from './state';
import {RouteContext} from './types';

const NO_BODY = new Set([204, 304]);

export function routeContext(
  ctx: Ctx,
  state: State,
  url: URL,
  job: ExportJob | undefined,
  n: number,
  service: () => Promise<void>
): RouteContext {
  const {req, res, record} = ctx;
  const prefix = state.pathPrefix;
  const path = prefix && url.pathname.startsWith(prefix) ? url.pathname.slice(prefix.length) || '/' : url.pathname;
  const exportOf = (): {job: ExportJob; quest: NonNullable<ReturnType<State['quests']['get']>>} => {
    const quest = job && state.quests.get(job.questId);
    if (!job || !quest) throw new Error(`${record.method} ${record.path} names no export`);
    return {job, quest};
  };
  const rows = (): string[][] => {
    const {job: j, quest} = exportOf();
    return exportRows(quest, j.since, j.until ?? j.createdMs, j.settings);
  };
  const header = (): string[] => {
    const {job: j, quest} = exportOf();
    return quest.data.header(j.settings);
  };
  const rc: RouteContext = {
    req,
    res,
    route: record.route,
    path,
    url,
    body: record.body,
    request: record,
    questId: record.questId,
    exportId: record.exportId,
    job: job && state.exports.record(job),
    n,
    now: () => state.clock.now(),
    pause: (ms) => ctx.pause(ms),
    next: service,
    send(status, body, headers = {}) {
      const bytes = body === undefined ? Buffer.alloc(0) : Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
      ctx.head(status, NO_BODY.has(status) ? headers : {'Content-Length': bytes.length, ...headers});
      res.end(bytes);
    },
    json(status, body, headers = {}) {
      rc.send(status, JSON.stringify(body), {'Content-Type': 'application/json; charset=utf-8', ...headers});
    },
    problem(status, detail, headers = {}) {
      ctx.problem({status, detail, instance: url.pathname}, headers);
    },
    redirect(location, status = 302) {
      rc.send(status, undefined, {Location: location});
    },
    jobStatus(status = 'PENDING') {
      if (!job) return rc.problem(404, `Export ${record.exportId} not found`);
      rc.json(200, {
        exportId: job.id,
        questId: job.questId,
        status,
        lastChangedAt: new Date(job.createdMs).toISOString(),
      });
    },
    completed() {
      rc.redirect(`${prefix}/v1/quests/${record.questId}/exports/${record.exportId}/download`);
    },
    rows,
    header,
    csv: (options = {}) => csvText(header(), rows(), {separator: exportOf().job.settings.separator, ...options}),
    stall(status, headers, part) {
      ctx.head(status, headers);
      res.write(part);
      // Silent on purpose from here: the simulator is not working on it.
      ctx.idle();
    },
    raw(bytes, close = true) {
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(bytes.slice(0, 16).toString())?.[1];
      if (status) record.status = Number(status);
      req.socket.write(bytes);
      if (close) req.socket.end();
      else ctx.idle();
    },
  };
  return rc;
}
