import {AirbyteLogger} from 'faros-airbyte-cdk/lib/logger';
import VError from 'verror';

import {ExportApi} from '../../api/client';
import {CreateEnd, createExport, ExportEnd, ExportJobContext} from '../../api/export-job';
import {connectorError} from '../../core/errors';
import {Runtime} from '../../core/runtime';
import {describeWindow, formatDuration, TimeWindow} from '../../core/time';
import {Setback} from './export-policy';

// The sync's words for the export lifecycle (api/export-job.ts): what its log says while an export is
// created and generated, and the error of 409s that outlast export_timeout_minutes.

/** How one export job of a read ended: its file is ready, or a setback the policy decides about. */
export type JobResult = ExportEnd | Extract<Setback, {kind: 'unusable'}>;

/** The exports of one quest, as a read or a header sample runs them. */
export interface SyncJob {
  api: ExportApi;
  runtime: Runtime;
  logger: AirbyteLogger;
  questId: string;
  /** export_timeout_minutes: the longest wait for one export to be generated, and for 409s to end. */
  timeoutMs: number;
  /** The service takes one export of this quest at a time (it answered 409). */
  onConflict?: () => void;
}

/** The lifecycle of an export of `window`, said in the sync's log; `created` hears of the export before its first poll. */
export function syncJobContext(
  job: SyncJob,
  window: TimeWindow,
  created?: (exportId: string) => Promise<void>
): ExportJobContext {
  const {questId, logger} = job;
  return {
    api: job.api,
    runtime: job.runtime,
    timeoutMs: job.timeoutMs,
    observer: {
      conflict: (explanation, waitMs) => {
        job.onConflict?.();
        logger.info(
          `Quest ${questId}: the service is generating another export of this quest (409: ${explanation}); asking again in ${formatDuration(waitMs)}`
        );
      },
      created: async (exportId) => {
        logger.info(`Quest ${questId}: created export ${exportId} for window ${describeWindow(window)}`);
        await created?.(exportId);
      },
      running: ({exportId, status, elapsedMs, timeoutMs}, news) => {
        if (!news) {
          logger.info(
            `Quest ${questId}: export ${exportId} is still ${status.status} after ${formatDuration(elapsedMs)}; waiting up to ${formatDuration(timeoutMs)} in all`
          );
        } else if (status.known) {
          logger.info(`Quest ${questId}: export ${exportId} is ${status.status} (${formatDuration(elapsedMs)})`);
        } else {
          logger.warn(
            `Quest ${questId}: export ${exportId} has status ${status.status}, which the API does not document; it is treated as still being generated (for at most export_timeout_minutes).`
          );
        }
      },
      completed: (exportId, elapsedMs) =>
        logger.info(`Quest ${questId}: export ${exportId} completed after ${formatDuration(elapsedMs)}`),
    },
  };
}

/** The service kept answering 409 for export_timeout_minutes: the sync fails the quest, and the next sync tries again. */
export function conflictsError(job: SyncJob, window: TimeWindow, end: Extract<CreateEnd, {kind: 'conflicts'}>): VError {
  const {questId, timeoutMs} = job;
  return connectorError(
    'transient_error',
    `Quest ${questId}: the service kept answering 409 (${end.explanation}) for ${formatDuration(end.waitedMs)} when asked for an export of window ${describeWindow(window)}; export_timeout_minutes is ${timeoutMs / 60_000}. Another client may be exporting this quest; the next sync tries again.`,
    {questId, window: describeWindow(window), status: 409}
  );
}

/** Creates the export of `window` (its 409s waited out); `created` hears of it before the caller polls. */
export async function createFor(
  job: SyncJob,
  window: TimeWindow,
  signal: AbortSignal,
  created?: (exportId: string) => Promise<void>
): Promise<string> {
  const end = await createExport(syncJobContext(job, window, created), job.questId, window, signal);
  if (end.kind === 'conflicts') throw conflictsError(job, window, end);
  return end.exportId;
}
