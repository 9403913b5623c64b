import {AirbyteLogger, AirbyteStreamBase, SyncMode} from 'faros-airbyte-cdk';
import {StringDecoder} from 'string_decoder';
import {Dictionary} from 'ts-essentials';

import {csvError, CsvFormatError, CsvRowParser} from './csv-parser';
import {columnsFromHeader} from './csv-records';
import {connectorError} from './errors';
import {ExportJobs, isGone, ReadyExport} from './export-job';
import {ExportScheduler} from './export-scheduler';
import {
  CONNECTOR_FIELDS,
  CURSOR_FIELD,
  JsonSchema,
  QUEST_ID_FIELD,
  questSchema,
  responseIdColumn,
  streamNameFor,
  WINDOW_START_FIELD,
} from './schema';
import {cursorOf} from './state';
import {
  describeWindow,
  formatUtcTimestamp,
  parseUtcTimestamp,
  planWindows,
  sinceForStartDate,
  TimeWindow,
} from './windows';

export interface QuestStreamOptions {
  startMs: number;
  windowMs: number;
  separator: string;
  /** How many times a window's download is retried after a cut-off or a 410. */
  maxDownloadAttempts: number;
}

/** What the reader of a window does with its rows. */
export interface WindowSink {
  /** The file's header, made unique; called once per window before any rows. */
  begin(columns: string[]): void;
  /** Complete rows in file order; a returned promise means: wait before pushing more. */
  rows(rows: string[][]): Promise<void> | undefined;
  /** Bytes of the current file received so far, for progress. */
  progress?(bytes: number, total: number | undefined): void;
}

function isCutOff(err: unknown): boolean {
  const code = (err as {code?: string})?.code;
  return (
    code === 'ECONNRESET' ||
    code === 'ERR_STREAM_PREMATURE_CLOSE' ||
    code === 'EPIPE' ||
    code === 'ECONNABORTED' ||
    code === 'ETIMEDOUT' ||
    (err instanceof Error && /aborted|socket hang up|terminated|premature/i.test(err.message))
  );
}

function sameRow(a: readonly string[] | undefined, b: readonly string[]): boolean {
  return !!a && a.length === b.length && a.every((cell, i) => cell === b[i]);
}

class CutOff extends Error {}

/**
 * One quest as one Airbyte stream. Its slices are the export time windows from the state's cursor
 * (or start_date) up to the sync's end; each window is one export job whose CSV rows become records.
 */
export class QuestStream extends AirbyteStreamBase {
  constructor(
    logger: AirbyteLogger,
    readonly questId: string,
    /** Column names known from discovery or the configured catalog; empty if none are known. */
    readonly knownColumns: readonly string[],
    private readonly options: QuestStreamOptions,
    private readonly exports?: ExportJobs,
    private readonly scheduler?: ExportScheduler
  ) {
    super(logger);
  }

  override get name(): string {
    return streamNameFor(this.questId);
  }

  get primaryKey(): string | undefined {
    return responseIdColumn(this.knownColumns);
  }

  override get cursorField(): string[] {
    return [CURSOR_FIELD];
  }

  getJsonSchema(): JsonSchema {
    return questSchema(this.knownColumns);
  }

  /** The windows a sync ending at endMs reads: after the state's cursor, else from start_date. */
  windows(syncMode: SyncMode, streamState: unknown, endMs: number): TimeWindow[] {
    return planWindows(this.startCursor(syncMode, streamState), endMs, this.options.windowMs);
  }

  /** Where a sync starts (exclusive): the state's cursor in incremental mode, else just before start_date. */
  startCursor(syncMode: SyncMode, streamState: unknown): number {
    const cursor = syncMode === SyncMode.INCREMENTAL ? cursorOf(streamState, this.name) : undefined;
    return cursor ?? sinceForStartDate(this.options.startMs);
  }

  /**
   * The kit's per-record interface, one object per row of the slice's window, pulled one parsed
   * batch at a time so memory stays flat. The source's read uses readWindow directly, which avoids
   * an object and an await per row.
   */
  async *readRecords(
    _syncMode: SyncMode,
    _cursorField?: string[],
    slice?: Dictionary<string>
  ): AsyncGenerator<Dictionary<unknown>> {
    const since = slice?.since ? parseUtcTimestamp(slice.since) : undefined;
    const until = slice?.until ? parseUtcTimestamp(slice.until) : undefined;
    if (since === undefined || until === undefined)
      throw new Error(`slice without a time window: ${JSON.stringify(slice)}`);
    const window = {since, until};
    let columns: string[] = [];
    let batch: string[][] | undefined;
    let taken: (() => void) | undefined;
    let arrived: (() => void) | undefined;
    let finished = false;
    let failure: unknown;
    const reading = this.readWindow(window, {
      begin: (c) => (columns = c),
      rows: (rows) => {
        batch = rows;
        arrived?.();
        return new Promise<void>((resolve) => (taken = resolve));
      },
    });
    reading
      .then(
        () => (finished = true),
        (err) => ((failure = err), (finished = true))
      )
      .finally(() => arrived?.());
    for (;;) {
      if (batch) {
        const rows = batch;
        batch = undefined;
        for (const row of rows) yield this.toRecord(columns, row, window);
        taken?.();
        continue;
      }
      if (finished) {
        if (failure) throw failure;
        return;
      }
      await new Promise<void>((resolve) => (arrived = resolve));
    }
  }

  toRecord(columns: readonly string[], row: readonly string[], window: TimeWindow): Dictionary<unknown> {
    const record: Dictionary<unknown> = {};
    columns.forEach((name, i) => (record[name] = row[i] === '' ? null : row[i]));
    return {...record, ...this.connectorFields(window)};
  }

  connectorFields(window: TimeWindow): Record<string, string> {
    return {
      [QUEST_ID_FIELD]: this.questId,
      [WINDOW_START_FIELD]: formatUtcTimestamp(window.since),
      [CURSOR_FIELD]: formatUtcTimestamp(window.until),
    };
  }

  /**
   * Downloads and parses the window's export, pushing its rows to the sink. A download cut off
   * midway is fetched again and the rows already pushed are skipped (the file is the same; the
   * last one pushed is compared to be sure), a 410 creates the export again. Returns the row count.
   */
  async readWindow(window: TimeWindow, sink: WindowSink): Promise<number> {
    if (!this.exports || !this.scheduler) throw new Error('QuestStream was built without an export client');
    const where = `window ${describeWindow(window)}`;
    let pushed = 0;
    let lastPushed: string[] | undefined;
    let header: string[] | undefined;
    let ready: ReadyExport | undefined;
    for (let attempt = 1; ; attempt++) {
      try {
        ready ??= await this.scheduler.ready(this.questId, window);
        const result = await this.readFile(ready, pushed, lastPushed, header, sink, where);
        header ??= result.header;
        pushed += result.pushed;
        lastPushed = result.last ?? lastPushed;
        if (!result.cutOff) break;
        this.logger.warn(
          `Quest ${this.questId}: the download of export ${ready.exportId} was cut off after ${pushed} rows; downloading it again (attempt ${attempt + 1}).`
        );
      } catch (err) {
        if (!isGone(err) || !ready) throw err;
        this.logger.warn(
          `Quest ${this.questId}: export ${ready.exportId} is gone (410); creating the export of ${where} again.`
        );
        ready = await this.scheduler.recreate(this.questId, window);
      }
      if (attempt >= this.options.maxDownloadAttempts) {
        throw connectorError(
          'transient_error',
          `Quest ${this.questId}: the export of ${where} could not be downloaded whole in ${attempt} attempts. The next sync retries from the last checkpoint.`,
          {questId: this.questId, window: describeWindow(window)}
        );
      }
    }
    this.scheduler.release(this.questId, window);
    return pushed;
  }

  private async readFile(
    ready: ReadyExport,
    skip: number,
    lastPushed: string[] | undefined,
    expectedHeader: string[] | undefined,
    sink: WindowSink,
    where: string
  ): Promise<{pushed: number; last?: string[]; header?: string[]; cutOff: boolean}> {
    const exports = this.exports as ExportJobs;
    const download = await exports.download(ready);
    const parser = new CsvRowParser(this.options.separator);
    const decoder = new StringDecoder('utf8');
    let header = expectedHeader;
    let seen = 0;
    let pushed = 0;
    let bytes = 0;
    let last: string[] | undefined;
    const rows: string[][] = [];

    let fileHeaderSeen = false;
    const differs = (): Error =>
      connectorError(
        'transient_error',
        `Quest ${this.questId}: export ${ready.exportId} of ${where} differs from the earlier download of it; the window is read again by the next sync.`,
        {questId: this.questId}
      );

    const deliver = async (): Promise<void> => {
      const batch = rows.splice(0, rows.length);
      let from = 0;
      if (!fileHeaderSeen) {
        fileHeaderSeen = true;
        if (header === undefined) {
          this.checkHeader(batch[0], where);
          header = batch[0];
          sink.begin(columnsFromHeader(header, CONNECTOR_FIELDS).names);
        } else if (!sameRow(header, batch[0])) {
          throw differs();
        }
        from = 1;
      }
      if (seen < skip) {
        const n = Math.min(skip - seen, batch.length - from);
        seen += n;
        from += n;
        if (n > 0 && seen === skip && !sameRow(lastPushed, batch[from - 1])) throw differs();
      }
      const fresh = from === 0 ? batch : batch.slice(from);
      if (!fresh.length) return;
      seen += fresh.length;
      pushed += fresh.length;
      last = fresh[fresh.length - 1];
      const wait = sink.rows(fresh);
      if (wait) await wait;
    };

    try {
      for await (const chunk of download.body as AsyncIterable<Buffer>) {
        bytes += chunk.length;
        parser.push(decoder.write(chunk), rows);
        if (rows.length) await deliver();
        sink.progress?.(bytes, download.contentLength);
      }
      if (download.contentLength !== undefined && bytes < download.contentLength) throw new CutOff('short body');
      parser.push(decoder.end(), rows);
      parser.end(rows);
      if (rows.length) await deliver();
    } catch (err) {
      download.body.destroy();
      if (err instanceof CsvFormatError) throw csvError(err, this.questId, where);
      if (err instanceof CutOff || isCutOff(err)) return {pushed, last, header, cutOff: true};
      throw err;
    }
    if (!header) {
      this.logger.info(`Quest ${this.questId}: the export of ${where} is empty (no header, no rows).`);
    }
    return {pushed, last, header, cutOff: false};
  }

  /** A first line that shares no name with the known columns is data, not a header. */
  private checkHeader(header: readonly string[], where: string): void {
    if (!this.knownColumns.length || header.some((name) => this.knownColumns.includes(name))) return;
    throw connectorError(
      'transient_error',
      `Quest ${this.questId}: the export of ${where} has no header row (its first line shares no column name with the ${this.knownColumns.length} known columns, e.g. ${JSON.stringify(this.knownColumns[0])}). Nothing of it was emitted.`,
      {questId: this.questId}
    );
  }
}
