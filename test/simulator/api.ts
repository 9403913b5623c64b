// Handlers of the /v1 operations. They run after rate limiting, fault injection, authentication
// and quest lookup (see server.ts), so they only deal with their own operation.

import * as fs from 'fs';
import {pipeline} from 'stream';
import {Ctx, readBody} from './http-util';
import {QuestEntry, State} from './state';
import {FieldErrors} from './settings';
import {checkExportRequest, checkPaging, checkWindow} from './validation';
import {ExportJob} from './exports';

function validationProblem(ctx: Ctx, errors: FieldErrors): void {
  ctx.problem({status: 400, errors, detail: 'See the errors property for details.', instance: ctx.path});
}

export async function createExport(ctx: Ctx, state: State, quest: QuestEntry): Promise<void> {
  const mediaType = (ctx.req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (mediaType !== '' && mediaType !== 'application/json' && !mediaType.endsWith('+json')) {
    ctx.problem({status: 415, detail: `Content-Type '${mediaType}' is not supported; use application/json`});
    return;
  }
  const raw = await readBody(ctx.req);
  if (raw === undefined) {
    ctx.problem({status: 413, detail: 'The request body is larger than 10 MB'});
    return;
  }
  if (raw.trim() === '') {
    validationProblem(ctx, {$: ['A non-empty request body is required.']});
    return;
  }
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch (err) {
    validationProblem(ctx, {$: [`The JSON value could not be parsed: ${(err as Error).message}`]});
    return;
  }
  const now = Date.now();
  const checked = checkExportRequest(body, quest.data.config.languages, now);
  if ('errors' in checked) {
    validationProblem(ctx, checked.errors);
    return;
  }
  const duration = quest.data.config.exportDurationMs ?? state.exportDurationMs;
  const job = state.exports.create(quest.data, checked.request, now, duration, state.faults.exportOutcome());
  state.stats.exportsCreated++;
  ctx.json(202, {exportId: job.id, message: 'The export has been scheduled and will be processed shortly.'});
}

function gone(ctx: Ctx, job: ExportJob): void {
  ctx.problem({status: 410, detail: `Export '${job.id}' of quest '${job.questId}' has been deleted or has expired`});
}

export function exportStatus(ctx: Ctx, state: State, job: ExportJob): void {
  state.stats.statusPolls++;
  const view = state.exports.view(job, Date.now());
  if (view.state === 'GONE') {
    gone(ctx, job);
  } else if (view.state === 'COMPLETED') {
    const location = `/v1/quests/${encodeURIComponent(job.questId)}/exports/${encodeURIComponent(job.id)}/download`;
    ctx.send(302, undefined, '', {Location: location});
  } else {
    ctx.json(200, {
      exportId: job.id,
      questId: job.questId,
      status: view.state,
      lastChangedAt: new Date(view.lastChangedMs).toISOString(),
    });
  }
}

export async function downloadExport(ctx: Ctx, state: State, quest: QuestEntry, job: ExportJob): Promise<void> {
  state.stats.downloads++;
  const view = state.exports.view(job, Date.now());
  if (view.state === 'GONE') return gone(ctx, job);
  if (view.state !== 'COMPLETED') {
    ctx.problem({status: 409, detail: `Export '${job.id}' is not available for download: its status is ${view.state}`});
    return;
  }
  if (state.faults.gone()) {
    state.exports.markGone(job);
    return gone(ctx, job);
  }
  // Opening first keeps the bytes readable even if the export is deleted meanwhile.
  let handle: fs.promises.FileHandle;
  try {
    handle = await fs.promises.open(job.file, 'r');
  } catch {
    return gone(ctx, job);
  }
  const size = (await handle.stat()).size;
  const cut = state.faults.truncateAt(size);
  // The html-body corruption imitates a proxy or login page answering instead of the API.
  const isHtml = quest.data.config.corruption === 'html-body';
  ctx.head(200, {
    'Content-Type': isHtml ? 'text/html; charset=utf-8' : 'text/csv; charset=utf-8',
    'Content-Length': size,
    'Content-Disposition': `attachment; filename="export-${job.id}.csv"`,
  });
  if (size === 0) {
    await handle.close();
    ctx.res.end();
    return;
  }
  const stream = handle.createReadStream(cut === undefined ? {} : {start: 0, end: cut - 1});
  if (cut === undefined) {
    pipeline(stream, ctx.res, () => undefined);
    return;
  }
  // Send part of the body, then end the connection although Content-Length promised more.
  stream.pipe(ctx.res, {end: false});
  stream.on('end', () => ctx.res.socket?.end());
  stream.on('error', () => ctx.res.destroy());
  ctx.res.on('close', () => stream.destroy());
}

export function listInvitations(ctx: Ctx, quest: QuestEntry, query: URLSearchParams): void {
  const errors: FieldErrors = {};
  const {skip, take} = checkPaging(query.get('skip'), query.get('take'), errors);
  const window = checkWindow(query.get('since') ?? undefined, query.get('until') ?? undefined, Date.now(), '', errors);
  if (Object.keys(errors).length > 0) return validationProblem(ctx, errors);
  ctx.json(200, quest.invitations.list(window.since, window.until, skip, take));
}
