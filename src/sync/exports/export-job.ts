import {AirbyteLogger} from 'faros-airbyte-cdk/lib/logger';

import {ExportApi} from '../../api/client';
import {connectorError} from '../../core/errors';
import {LIMITS} from '../../core/limits';
import {Runtime} from '../../core/runtime';
import {describeWindow, formatDuration, TimeWindow} from '../../core/time';
import {Setback} from './export-policy';

/** How one export job ended: its file is ready, or a setback the policy decides about. */
export type JobResult =
  /** generationMs: from creation (or, for an export of an earlier attempt, from the first poll) to its file. */
  | {kind: 'ready'; exportId: string; downloadUrl: string; generationMs: number}
  | Extract<Setback, {kind: 'failed' | 'timeout' | 'vanished' | 'unusable'}>;

export interface JobContext {
  api: ExportApi;
  runtime: Runtime;
  logger: AirbyteLogger;
  /** export_timeout_minutes: the longest wait for one export to be generated. */
  timeoutMs: number;
  /** The service takes one export of this quest at a time (it answered 409). */
  onConflict?: () => void;
}

/** An export known by its id: created by this job, or by an earlier attempt and found in the state. */
export interface ExportHandle {
  questId: string;
  exportId: string;
  window: TimeWindow;
}

/** One export job from creation to a terminal status (discover's samples; reads create and wait in two steps). */
export async function runExportJob(
  ctx: JobContext,
  questId: string,
  window: TimeWindow,
  signal: AbortSignal
): Promise<JobResult> {
  return awaitExport(ctx, await createExport(ctx, questId, window, signal), signal);
}

/**
 * Waits for an export to reach a terminal status, polling with capped exponential backoff until its
 * file is ready, it fails, it vanishes or export_timeout_minutes pass. The wait is visible: every
 * status change, and a line at most every 30 s (LIMITS.poll.logEveryMs) while nothing changes.
 */
export async function awaitExport(ctx: JobContext, handle: ExportHandle, signal: AbortSignal): Promise<JobResult> {
  const {api, runtime, logger, timeoutMs} = ctx;
  const {questId, exportId} = handle;
  const createdAt = runtime.now();
  let delay: number = LIMITS.poll.initialMs;
  let last = '';
  let lastLog = createdAt;
  for (;;) {
    const status = await api.exportStatus(questId, exportId, signal);
    const elapsed = runtime.now() - createdAt;
    if (status.kind === 'completed') {
      logger.info(`Quest ${questId}: export ${exportId} completed after ${formatDuration(elapsed)}`);
      return {kind: 'ready', exportId, downloadUrl: status.downloadUrl, generationMs: elapsed};
    }
    if (status.kind === 'failed') return {kind: 'failed', exportId, status: status.status};
    if (status.kind === 'vanished') return {kind: 'vanished', exportId, httpStatus: status.httpStatus};
    if (status.status !== last) {
      if (status.known)
        logger.info(`Quest ${questId}: export ${exportId} is ${status.status} (${formatDuration(elapsed)})`);
      else {
        logger.warn(
          `Quest ${questId}: export ${exportId} has status ${status.status}, which the API does not document; it is treated as still being generated (for at most export_timeout_minutes).`
        );
      }
      last = status.status;
      lastLog = runtime.now();
    } else if (runtime.now() - lastLog + delay > LIMITS.poll.logEveryMs) {
      logger.info(
        `Quest ${questId}: export ${exportId} is still ${status.status} after ${formatDuration(elapsed)}; waiting up to ${formatDuration(timeoutMs)} in all`
      );
      lastLog = runtime.now();
    }
    if (elapsed + delay > timeoutMs)
      return {kind: 'timeout', exportId, status: status.status, waitedMs: elapsed, timeoutMs};
    await runtime.sleep(delay, signal);
    delay = Math.min(LIMITS.poll.maxMs, delay * LIMITS.poll.factor);
  }
}

/** Creates the export; a 409 (another export of the quest is being generated) is waited out, within the timeout. */
export async function createExport(
  ctx: JobContext,
  questId: string,
  window: TimeWindow,
  signal: AbortSignal
): Promise<ExportHandle> {
  const {api, runtime, logger, timeoutMs} = ctx;
  const startedAt = runtime.now();
  let wait: number = LIMITS.conflict.initialMs;
  for (;;) {
    const created = await api.createExport(questId, window, signal);
    if (created.kind === 'created') {
      logger.info(`Quest ${questId}: created export ${created.exportId} for window ${describeWindow(window)}`);
      return {questId, exportId: created.exportId, window};
    }
    ctx.onConflict?.();
    const waited = runtime.now() - startedAt;
    if (waited + wait > timeoutMs) {
      throw connectorError(
        'transient_error',
        `Quest ${questId}: the service kept answering 409 (${created.explanation}) for ${formatDuration(waited)} when asked for an export of window ${describeWindow(window)}; export_timeout_minutes is ${timeoutMs / 60_000}. Another client may be exporting this quest; the next sync tries again.`,
        {questId, window: describeWindow(window), status: 409}
      );
    }
    logger.info(
      `Quest ${questId}: the service is generating another export of this quest (409: ${created.explanation}); asking again in ${formatDuration(wait)}`
    );
    await runtime.sleep(wait, signal);
    wait = Math.min(LIMITS.conflict.maxMs, wait * 2);
  }
}
