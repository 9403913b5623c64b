import {LIMITS} from '../core/limits';
import {Runtime} from '../core/runtime';
import {TimeWindow} from '../core/time';
import {ExportApi} from './client';
import {ExportFile} from './download';
import {ExportStatus} from './export-status';

// The one lifecycle of an export: created (a 409 waited out), polled until its status ends (the 302 to
// the file is the completed status), its file opened. The sync, discover's header sample and the probe
// all run it; each says what happens in its own words through an ExportObserver.

/** How an export's generation ended: its file is ready, or why not. */
export type ExportEnd =
  /** generationMs: from the first poll's start (right after creation) to the file. */
  | {kind: 'ready'; exportId: string; downloadUrl: string; generationMs: number}
  /** The service ended the export in ERROR (or another failure status). */
  | {kind: 'failed'; exportId: string; status: string}
  /** Not generated within the time the job was given. */
  | {kind: 'timeout'; exportId: string; status: string; waitedMs: number; timeoutMs: number}
  /** The service no longer knew the export while it was generated (404 or 410 on its status). */
  | {kind: 'vanished'; exportId: string; httpStatus: number};

export type CreateEnd =
  | {kind: 'created'; exportId: string}
  /** The service kept answering 409 (another export of the quest is being generated) for the time given. */
  | {kind: 'conflicts'; explanation: string; waitedMs: number};

/** A poll of an export still being generated, as an observer hears of it. */
interface RunningPoll {
  exportId: string;
  status: Extract<ExportStatus, {kind: 'running'}>;
  elapsedMs: number;
  timeoutMs: number;
}

/** What the lifecycle tells while it runs, for each user to say (or record) its own way. */
interface ExportObserver {
  /** The service answered 409; the create is asked again after `waitMs`. */
  conflict(explanation: string, waitMs: number): void;
  /** The export exists: awaited before the first poll (the sync records it in a STATE first). */
  created?(exportId: string): Promise<void> | void;
  /** Every status answer, whatever it says. */
  polled?(status: ExportStatus): void;
  /** A status other than the one before (`news`), or the same one for LIMITS.poll.logEveryMs: the wait is said. */
  running(poll: RunningPoll, news: boolean): void;
  completed(exportId: string, elapsedMs: number): void;
}

export interface ExportJobContext {
  api: ExportApi;
  runtime: Pick<Runtime, 'now' | 'sleep'>;
  observer: ExportObserver;
  /** The longest wait for the export to be generated, and for 409s to end. */
  timeoutMs: number;
  /** A moment no wait may pass, whatever is left of timeoutMs (the probe's budget). */
  deadline?: number;
}

/** A wait starting now: its start, and the time it may take (timeoutMs, within the deadline if any). */
function startWait(ctx: ExportJobContext): {startedAt: number; timeoutMs: number} {
  const startedAt = ctx.runtime.now();
  return {startedAt, timeoutMs: Math.min(ctx.timeoutMs, (ctx.deadline ?? Infinity) - startedAt)};
}

/** Creates the export; a 409 (another export of the quest is being generated) is waited out, within the timeout. */
export async function createExport(
  ctx: ExportJobContext,
  questId: string,
  window: TimeWindow,
  signal: AbortSignal
): Promise<CreateEnd> {
  const {api, runtime, observer} = ctx;
  const {startedAt, timeoutMs} = startWait(ctx);
  for (let wait: number = LIMITS.conflict.initialMs; ; wait = Math.min(LIMITS.conflict.maxMs, wait * 2)) {
    const created = await api.createExport(questId, window, signal);
    if (created.kind === 'created') {
      await observer.created?.(created.exportId);
      return created;
    }
    const waitedMs = runtime.now() - startedAt;
    if (waitedMs + wait > timeoutMs) return {kind: 'conflicts', explanation: created.explanation, waitedMs};
    observer.conflict(created.explanation, wait);
    await runtime.sleep(wait, signal);
  }
}

/**
 * Waits for an export to reach a terminal status, polling with capped exponential backoff until its
 * file is ready, it fails, it vanishes or the timeout passes. The observer hears of every status
 * change, and of the same status at most every LIMITS.poll.logEveryMs, so the wait is visible.
 */
export async function awaitExport(
  ctx: ExportJobContext,
  questId: string,
  exportId: string,
  signal: AbortSignal
): Promise<ExportEnd> {
  const {api, runtime, observer} = ctx;
  const {startedAt: createdAt, timeoutMs} = startWait(ctx);
  let delay: number = LIMITS.poll.initialMs;
  let last = '';
  let lastSaid = createdAt;
  for (;;) {
    const status = await api.exportStatus(questId, exportId, signal);
    observer.polled?.(status);
    const elapsedMs = runtime.now() - createdAt;
    if (status.kind === 'completed') {
      observer.completed(exportId, elapsedMs);
      return {kind: 'ready', exportId, downloadUrl: status.downloadUrl, generationMs: elapsedMs};
    }
    if (status.kind === 'failed') return {kind: 'failed', exportId, status: status.status};
    if (status.kind === 'vanished') return {kind: 'vanished', exportId, httpStatus: status.httpStatus};
    const news = status.status !== last;
    if (news || runtime.now() - lastSaid + delay > LIMITS.poll.logEveryMs) {
      observer.running({exportId, status, elapsedMs, timeoutMs}, news);
      last = status.status;
      lastSaid = runtime.now();
    }
    if (elapsedMs + delay > timeoutMs)
      return {kind: 'timeout', exportId, status: status.status, waitedMs: elapsedMs, timeoutMs};
    await runtime.sleep(delay, signal);
    delay = Math.min(LIMITS.poll.maxMs, delay * LIMITS.poll.factor);
  }
}

/** An export's whole lifecycle: its file open to read, or where and why it stopped. */
export type ExportJobEnd =
  | {kind: 'file'; exportId: string; generationMs: number; download: ExportFile}
  | Exclude<ExportEnd, {kind: 'ready'}>
  | Extract<CreateEnd, {kind: 'conflicts'}>
  /** The file was gone when downloaded (404 or 410). */
  | {kind: 'gone'; exportId: string; httpStatus: number};

/** Creates an export of the window, waits for it, and opens its file (the header sample and the probe read one this way). */
export async function runExportJob(
  ctx: ExportJobContext,
  questId: string,
  window: TimeWindow,
  signal: AbortSignal
): Promise<ExportJobEnd> {
  const created = await createExport(ctx, questId, window, signal);
  if (created.kind !== 'created') return created;
  const end = await awaitExport(ctx, questId, created.exportId, signal);
  if (end.kind !== 'ready') return end;
  const opened = await ctx.api.openDownload(questId, end.exportId, end.downloadUrl, signal);
  if (opened.kind === 'gone') return {kind: 'gone', exportId: end.exportId, httpStatus: opened.httpStatus};
  return {kind: 'file', exportId: end.exportId, generationMs: end.generationMs, download: opened.download};
}
