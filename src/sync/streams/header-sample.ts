import {AirbyteLogger} from 'faros-airbyte-cdk/lib/logger';

import {findQuestInaccessible} from '../../api/api-error';
import {ExportApi} from '../../api/client';
import {runExportJob} from '../../api/export-job';
import {DownloadCutOff} from '../../api/download';
import {QuestbackConfig, SEPARATORS} from '../../core/config';
import {connectorError, errorMessage, failureTypeOf} from '../../core/errors';
import {LIMITS} from '../../core/limits';
import {Runtime} from '../../core/runtime';
import {DAY_MS, describeWindow, formatDuration, sinceForStartDate, TimeWindow} from '../../core/time';
import {readCsv} from '../../csv/reader';
import {rowStrings} from '../../csv/rows';
import {conflictsError, SyncJob, syncJobContext} from '../exports/export-job';
import {assertHeader} from '../windows/file-reader';
import {describeSetback} from '../exports/export-policy';
import {plural} from '../../core/quantities';

/** Sample windows, widened in turn until an export has a header: a day, a month, then everything since start_date. */
const SAMPLE_SPANS_MS = [DAY_MS, 30 * DAY_MS, Infinity];
/** Rows of a sample read beside the header, to recognise timestamp columns. */
const SAMPLE_ROWS = 20;

interface ProbeContext {
  config: QuestbackConfig;
  api: ExportApi;
  runtime: Runtime;
  logger: AirbyteLogger;
  /** The newest moment a sample may cover (the sync's end). */
  end: number;
  signal?: AbortSignal;
  /** With skip_inaccessible_quests, a quest that cannot be read is reported here (and gives no header). */
  onInaccessible?(why: string): void;
}

/** What a header probe learned of a quest: its export's header and a few rows (none when it has no responses). */
interface Sample {
  header?: string[];
  rows: string[][];
  /** The sample window that showed the header. */
  window?: TimeWindow;
}

/**
 * The header of a quest's export, learned from a small export: a recent day first, widened when the
 * service sends an empty file for an empty export. Only the header and a few rows are read; the
 * download stops there. A service error fails naming the quest; a quest with no responses at all
 * gives a sample without a header, and a warning, never silently. With skip_inaccessible_quests,
 * a quest that cannot be read gives one too.
 */
export async function probeHeader(ctx: ProbeContext, questId: string): Promise<Sample> {
  const {config, logger, end} = ctx;
  const startSince = sinceForStartDate(Date.parse(config.start_date));
  for (const spanMs of SAMPLE_SPANS_MS) {
    const window = {since: Math.max(startSince, end - spanMs), until: end};
    if (window.since >= window.until) break;
    let sample: Sample;
    try {
      sample = await sampleExport(ctx, questId, window);
    } catch (err) {
      if (config.skip_inaccessible_quests && findQuestInaccessible(err)) {
        ctx.onInaccessible?.(errorMessage(err));
        logger.warn(
          `Quest ${questId} is listed with the connector's fields only: ${errorMessage(err)} (skip_inaccessible_quests is on; refresh the source schema once the quest is readable).`
        );
        return {rows: []};
      }
      throw connectorError(
        failureTypeOf(err),
        `Could not learn the columns of quest ${questId}: ${errorMessage(err)}`,
        {questId},
        err instanceof Error ? err : undefined
      );
    }
    if (sample.header) {
      logger.info(
        `Quest ${questId}: learned ${plural(sample.header.length, 'column')} from an export of ${formatDuration(window.until - window.since)}`
      );
      return {...sample, window};
    }
    if (window.since === startSince) break;
    logger.info(
      `Quest ${questId}: the sample export of ${describeWindow(window)} had no header; trying a wider window.`
    );
  }
  logger.warn(
    `Quest ${questId} has no responses since start_date (${config.start_date}), so its columns cannot be learned yet: its stream lists only the connector's fields, and Airbyte would drop every answer column. Once responses arrive, refresh the source schema in Airbyte (connection → Schema → Refresh source schema) before syncing.`
  );
  return {rows: []};
}

/**
 * The header and the first rows of one export of the window, through the export lifecycle every read
 * uses (api/export-job.ts); what goes wrong is described by the export policy and tried again.
 */
async function sampleExport(ctx: ProbeContext, questId: string, window: TimeWindow): Promise<Sample> {
  const {api, runtime, logger, config} = ctx;
  const signal = ctx.signal ?? new AbortController().signal;
  const job: SyncJob = {api, runtime, logger, questId, timeoutMs: config.export_timeout_minutes * 60_000};
  let last = '';
  for (let attempt = 1; attempt <= LIMITS.sampleAttempts; attempt++) {
    const end = await runExportJob(syncJobContext(job, window), questId, window, signal);
    if (end.kind === 'conflicts') throw conflictsError(job, window, end);
    if (end.kind === 'gone') {
      last = describeSetback(end);
      continue;
    }
    if (end.kind !== 'file') {
      last = describeSetback(end);
      logger.warn(`Quest ${questId}: sample ${last}; trying again (${attempt} of ${LIMITS.sampleAttempts}).`);
      continue;
    }
    const sample: Sample = {rows: []};
    try {
      await readCsv(
        end.download.chunks(),
        {separator: SEPARATORS[config.field_separator], acceptStrayQuotes: true},
        {
          header: (cells) => {
            assertHeader(cells, {
              questId,
              exportId: end.exportId,
              where: `window ${describeWindow(window)}, sampled for its columns`,
            });
            sample.header = cells;
            return false;
          },
          rows: (rows) => {
            sample.rows.push(...rowStrings(rows).slice(0, SAMPLE_ROWS - sample.rows.length));
            return undefined;
          },
        }
      );
    } catch (err) {
      // What comes after the header does not matter here; a download cut before it is tried again.
      if (!sample.header && err instanceof DownloadCutOff) {
        last = describeSetback({kind: 'cut-off', exportId: end.exportId, reason: err.message});
        continue;
      }
      if (!sample.header) throw err;
    } finally {
      end.download.close();
    }
    return sample;
  }
  throw connectorError('transient_error', `${LIMITS.sampleAttempts} sample exports failed (the last: ${last}).`, {
    questId,
  });
}
