import {AirbyteLogger} from 'faros-airbyte-cdk';

import {findQuestInaccessible} from '../api/api-error';
import {DownloadCutOff} from '../api/download';
import {mapLimited} from '../core/concurrency';
import {QuestbackConfig, SEPARATORS} from '../core/config';
import {connectorError, errorMessage, failureTypeOf} from '../core/errors';
import {LIMITS} from '../core/limits';
import {Runtime} from '../core/runtime';
import {DAY_MS, describeWindow, formatDuration, TimeWindow} from '../core/time';
import {readCsv} from '../csv/reader';
import {Connection} from './connection';
import {describeSetback} from './export-policy';
import {runExportJob} from './export-job';
import {Column, recordColumns, typeColumns} from './schema';
import {sinceForStartDate} from './windows';

/** Sample windows, widened in turn until an export has a header: a day, a month, then everything since start_date. */
const SAMPLE_SPANS_MS = [DAY_MS, 30 * DAY_MS, Infinity];
/** Rows of a sample read beside the header, to recognise timestamp columns. */
const SAMPLE_ROWS = 20;

export interface DiscoveredQuest {
  questId: string;
  columns: Column[];
}

export interface DiscoverContext {
  config: QuestbackConfig;
  connection: Connection;
  runtime: Runtime;
  logger: AirbyteLogger;
  end: number;
}

/** The columns of every configured quest, learned from the header of a small export of each. */
export async function discoverQuests(ctx: DiscoverContext): Promise<DiscoveredQuest[]> {
  const {config} = ctx;
  return mapLimited(config.quest_ids, config.max_concurrent_exports, async (questId) => ({
    questId,
    columns: await learnColumns(ctx, questId),
  }));
}

interface Sample {
  header?: string[];
  rows: string[][];
}

/**
 * Learns a quest's columns from an export that has a header: a recent day first, widened when the
 * service sends an empty file for an empty export. Only the header and a few rows are read; the
 * download stops there. A service error fails discover naming the quest; a quest with no responses
 * at all is listed with the connector's fields and a warning, never silently.
 */
async function learnColumns(ctx: DiscoverContext, questId: string): Promise<Column[]> {
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
        logger.warn(
          `Quest ${questId} is listed with the connector's fields only: ${errorMessage(err)} (skip_inaccessible_quests is on; refresh the source schema once the quest is readable).`
        );
        return [];
      }
      throw connectorError(
        failureTypeOf(err),
        `Discover could not learn the columns of quest ${questId}: ${errorMessage(err)}`,
        {questId},
        err instanceof Error ? err : undefined
      );
    }
    if (sample.header) {
      const columns = typeColumns(recordColumns(sample.header, config.column_names), sample.rows);
      const renamed = columns.filter((c) => c.name !== c.title).length;
      logger.info(
        `Quest ${questId}: discovered ${columns.length} columns from an export of ${formatDuration(window.until - window.since)}${renamed && config.column_names === 'warehouse' ? ` (${renamed} renamed to warehouse-safe names; the header texts are kept as titles)` : ''}`
      );
      return columns;
    }
    if (window.since === startSince) break;
    logger.info(
      `Quest ${questId}: the sample export of ${describeWindow(window)} had no header; trying a wider window.`
    );
  }
  logger.warn(
    `Quest ${questId} has no responses since start_date (${config.start_date}), so its columns cannot be learned yet: its stream lists only the connector's fields, and Airbyte would drop every answer column. Once responses arrive, refresh the source schema in Airbyte (connection → Schema → Refresh source schema) before syncing.`
  );
  return [];
}

/** The header and the first rows of one export of the window. */
async function sampleExport(ctx: DiscoverContext, questId: string, window: TimeWindow): Promise<Sample> {
  const {connection, runtime, logger, config} = ctx;
  const signal = new AbortController().signal;
  let last = '';
  for (let attempt = 1; attempt <= LIMITS.sampleAttempts; attempt++) {
    const job = await runExportJob(
      {api: connection.api, runtime, logger, timeoutMs: config.export_timeout_minutes * 60_000},
      questId,
      window,
      signal
    );
    if (job.kind !== 'ready') {
      last = describeSetback(job);
      logger.warn(`Quest ${questId}: sample ${last}; trying again (${attempt} of ${LIMITS.sampleAttempts}).`);
      continue;
    }
    const opened = await connection.api.openDownload(questId, job.exportId, job.downloadUrl, signal);
    if (opened.kind === 'gone') {
      last = `the file of export ${job.exportId} was gone (HTTP ${opened.httpStatus})`;
      continue;
    }
    const sample: Sample = {rows: []};
    try {
      await readCsv(
        opened.download.chunks(),
        {separator: SEPARATORS[config.field_separator], acceptStrayQuotes: true},
        {
          header: (cells) => {
            sample.header = cells;
            return false;
          },
          rows: (rows) => {
            sample.rows.push(...rows.slice(0, SAMPLE_ROWS - sample.rows.length));
            return undefined;
          },
        }
      );
    } catch (err) {
      // What comes after the header does not matter here; a download cut before it is tried again.
      if (!sample.header && err instanceof DownloadCutOff) {
        last = `the download of export ${job.exportId} was cut off (${err.message})`;
        continue;
      }
      if (!sample.header) throw err;
    } finally {
      opened.download.close();
    }
    return sample;
  }
  throw connectorError('transient_error', `${LIMITS.sampleAttempts} sample exports failed (the last: ${last}).`, {
    questId,
  });
}
