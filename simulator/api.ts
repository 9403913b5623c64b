// Handlers of the /v1 operations. They run after rate limiting, fault injection, authentication
// and quest lookup (see server.ts), so they only deal with their own operation.

import {pipeline, Readable} from 'stream';
import {Ctx} from './http-util';
import {QuestEntry, State} from './state';
import {FieldErrors} from './settings';
import {checkExportRequest, checkPaging, checkWindow} from './validation';
import {ExportJob, FileBody} from './exports';
import {Framing} from './faults';
import {startExport} from './engine';
import {INVITATIONS_PERMISSION} from './invitations';

const CSV_TYPE = 'text/csv; charset=utf-8';
// The HTML corruptions imitate a proxy or login page (text/html) or a failing backend whose error
// page goes out with the download's generic type.
const CONTENT_TYPES: Readonly<Record<string, string>> = {
  'html-body': 'text/html; charset=utf-8',
  'html-octet-stream': 'application/octet-stream',
};

function validationProblem(ctx: Ctx, errors: FieldErrors): void {
  ctx.problem({status: 400, errors, detail: 'See the errors property for details.', instance: ctx.path});
}

export async function createExport(ctx: Ctx, state: State, quest: QuestEntry): Promise<void> {
  const mediaType = (ctx.req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (mediaType !== '' && mediaType !== 'application/json' && !mediaType.endsWith('+json')) {
    ctx.problem({status: 415, detail: `Content-Type '${mediaType}' is not supported; use application/json`});
    return;
  }
  const raw = ctx.body;
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
  const refused = state.faults.refusedCreate;
  if (refused !== undefined) {
    ctx.problem({status: refused, detail: `Exports of quest '${quest.data.config.id}' cannot be created`});
    return;
  }
  const now = state.clock.now();
  const checked = checkExportRequest(body, quest.data.config.languages, now);
  if ('errors' in checked) {
    validationProblem(ctx, checked.errors);
    return;
  }
  // Checked after validation: a bad body is a 400 whatever else is running.
  const job = startExport(state, quest, checked.request, now);
  if (job === 'conflict') {
    ctx.problem({status: 409, detail: `An export for quest '${quest.data.config.id}' is already being generated`});
    return;
  }
  const answer = state.dialect.createAnswer(job.id, `${ctx.path}/${encodeURIComponent(job.id)}/status`);
  ctx.json(answer.status, answer.body, answer.headers);
}

function gone(ctx: Ctx, job: ExportJob): void {
  ctx.problem({status: 410, detail: `Export '${job.id}' of quest '${job.questId}' has been deleted or has expired`});
}

export function exportStatus(ctx: Ctx, state: State, job: ExportJob): void {
  state.stats.statusPolls++;
  const unreadable = state.faults.unreadableStatus();
  if (unreadable !== undefined) return ctx.send(200, 'application/json', unreadable);
  const view = state.exports.view(job, state.clock.now());
  if (view.state === 'GONE') {
    gone(ctx, job);
  } else if (view.state === 'COMPLETED' && state.dialect.options.completed !== 'record') {
    // 'download' resolves against .../exports/<id>/status to .../exports/<id>/download.
    const path = `${state.pathPrefix}/v1/quests/${encodeURIComponent(job.questId)}/exports/${encodeURIComponent(job.id)}/download`;
    ctx.send(302, undefined, '', {Location: state.dialect.location(path, job.id, state.relativeLocation)});
  } else {
    ctx.json(200, {
      exportId: job.id,
      questId: job.questId,
      status: state.dialect.word(view.state),
      lastChangedAt: state.dialect.lastChangedAt(view.lastChangedMs),
    });
  }
}

export async function downloadExport(ctx: Ctx, state: State, quest: QuestEntry, job: ExportJob): Promise<void> {
  state.stats.downloads++;
  const view = state.exports.view(job, state.clock.now());
  if (view.state === 'GONE') return gone(ctx, job);
  if (view.state !== 'COMPLETED') {
    ctx.problem({status: 409, detail: `Export '${job.id}' is not available for download: its status is ${view.state}`});
    return;
  }
  if (state.faults.gone()) {
    state.exports.markGone(job);
    return gone(ctx, job);
  }
  const {corruption} = quest.data.config;
  // cut-last-cell: every download ends at the same byte inside the last cell, and only a
  // close-delimited body lets that end look like a normal one.
  const end = corruption === 'cut-last-cell' ? job.cutAt : undefined;
  const framing: Framing = corruption === 'cut-last-cell' ? 'close' : state.faults.framing;
  const gzip = state.faults.gzip;
  // Opening first keeps the bytes readable even if the export is deleted meanwhile.
  let body: FileBody;
  try {
    // repeatedIds: each download lists repeated pairs in the other order than the one before it (an
    // export's first download, than the first of the export numbered before it).
    body = await state.exports.body(job, end, gzip, (job.seq + job.downloads) % 2 === 1);
  } catch {
    return gone(ctx, job);
  }
  const {size} = body;
  // The server counted this download already (server.ts).
  const cut = state.faults.truncateAt(size, job.downloads);
  const stall = cut === undefined ? state.faults.stallAt(size) : undefined;
  const {fileType, fileEncodingLabel} = state.dialect.options;
  const headers: Record<string, string | number> = {
    'Content-Type': CONTENT_TYPES[corruption ?? ''] ?? fileType ?? CSV_TYPE,
    'Content-Disposition': `attachment; filename="export-${job.id}.csv"`,
  };
  if (gzip || fileEncodingLabel) headers['Content-Encoding'] = fileEncodingLabel ?? 'gzip';
  if (framing === 'length') headers['Content-Length'] = size;
  if (framing === 'close') {
    // Neither a length nor chunks: the body ends where the connection does.
    headers.Connection = 'close';
    ctx.res.useChunkedEncodingByDefault = false;
  }
  ctx.head(200, headers);
  const stop = cut ?? stall ?? size;
  if (stop === 0) {
    await body.close();
    if (stall === undefined) ctx.res.end();
    else stalled(ctx); // stalled before the first byte: headers only, then silence
    return;
  }
  const stream = body.read(stop);
  if (cut === undefined && stall === undefined) {
    const rate = state.faults.downloadBytesPerSecond;
    if (rate === undefined) pipeline(stream, ctx.res, () => undefined);
    else await paced(ctx, stream, rate);
    return;
  }
  // Send part of the body; then either end the connection although the framing promised more
  // (truncated), or send nothing more and keep it open (stalled) until the client gives up.
  stream.pipe(ctx.res, {end: false});
  if (cut !== undefined) stream.on('end', () => ctx.res.socket?.end());
  else stream.on('end', () => stalled(ctx));
  stream.on('error', () => ctx.res.destroy());
  ctx.res.on('close', () => stream.destroy());
}

/**
 * Sends the body `rate` bytes at a time, one part a second on the clock: a slow network or service.
 * Parts are small, so the socket's buffer is not waited on; a client that goes away ends it.
 */
async function paced(ctx: Ctx, body: Readable, rate: number): Promise<void> {
  let pending = Buffer.alloc(0);
  let first = true;
  const send = async (part: Buffer): Promise<boolean> => {
    if (!first && !(await ctx.pause(1000))) return false;
    first = false;
    ctx.res.write(part);
    return true;
  };
  try {
    for await (const chunk of body) {
      pending = Buffer.concat([pending, chunk as Buffer]);
      for (; pending.length >= rate; pending = pending.subarray(rate))
        if (!(await send(pending.subarray(0, rate)))) return;
    }
    if (pending.length && !(await send(pending))) return;
    ctx.res.end();
  } catch {
    ctx.res.destroy();
  } finally {
    body.destroy();
  }
}

/** A stalled answer is silent on purpose: the simulator is not working on it. */
function stalled(ctx: Ctx): void {
  ctx.res.flushHeaders();
  ctx.idle();
}

export function listInvitations(ctx: Ctx, state: State, quest: QuestEntry, query: URLSearchParams): void {
  const options = state.invitationList;
  if (options.denied) {
    ctx.problem({
      status: 403,
      detail: `The API login may not read invitations (it lacks the permission '${INVITATIONS_PERMISSION}'); quest '${quest.data.config.id}'`,
    });
    return;
  }
  const errors: FieldErrors = {};
  const {skip, take} = checkPaging(query.get('skip'), query.get('take'), errors);
  const now = state.clock.now();
  const window = checkWindow(query.get('since') ?? undefined, query.get('until') ?? undefined, now, '', errors);
  if (Object.keys(errors).length > 0) return validationProblem(ctx, errors);
  const items = quest.invitations.list(window, skip, take, now, options);
  const {wrapper} = options;
  if (wrapper === undefined) return ctx.json(200, items);
  const [outer, ...inner] = wrapper.split('.');
  const nested = inner.reduceRight<unknown>((held, name) => ({[name]: held}), items);
  ctx.json(200, {[outer]: nested, totalCount: quest.invitations.total});
}
