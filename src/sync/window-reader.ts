import {AirbyteLogger} from 'faros-airbyte-cdk';

import {ExportApi} from '../api/client';
import {DownloadCutOff} from '../api/download';
import {connectorError} from '../core/errors';
import {CsvFormatError} from '../csv/parser';
import {CsvEncodingError, CsvReadOptions, readCsv} from '../csv/reader';

/** More bytes than this that are not valid in the file's encoding fail the window instead of a warning. */
export const MAX_INVALID_SEQUENCES = 100;

/**
 * What this sync has emitted of a planned window, carried from file to file of it: when a download
 * is cut off and the export is downloaded again, or the window is split after some rows were
 * emitted, the new files start with rows already emitted. They are skipped by count, and the row
 * where skipping ends must be the last one emitted, so that nothing is emitted twice or lost.
 */
export interface ChainState {
  /** Rows at the start of the window's next file that were already emitted. */
  pendingSkip: number;
  /** The last row emitted. */
  last?: string[];
  /** The header of the window's first file; every later file must repeat it. */
  header?: string[];
}

/** Where the rows of a window go. */
export interface WindowSink {
  /** The header of the window's files, once, before any row. */
  begin(header: string[]): void;
  rows(rows: string[][]): Promise<void> | undefined;
  /** The file's size is known: its row count, estimated from its announced length and its first rows. */
  estimate?(rows: number): void;
}

export type ReadOutcome =
  | {
      kind: 'complete';
      /** Rows emitted from this file. */
      emitted: number;
      /** Rows in this file. */
      rows: number;
      bytes: number;
      /** Every row skipped was checked against the last one emitted. */
      verified: boolean;
    }
  | {kind: 'cut-off'; reason: string}
  | {kind: 'gone'; httpStatus: number};

export interface FileRef {
  questId: string;
  exportId: string;
  url: string;
  /** The window, for messages. */
  where: string;
}

export interface FileContext {
  api: ExportApi;
  logger: AirbyteLogger;
  csv: CsvReadOptions;
  /** Header texts the configured catalog knows: a first line sharing none of them is data, not a header. */
  knownTitles: ReadonlySet<string>;
  signal: AbortSignal;
}

function sameRow(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  return !!a && !!b && a.length === b.length && a.every((cell, i) => cell === b[i]);
}

/**
 * Downloads one export file and pushes its rows to the sink, skipping those the chain says were
 * emitted already. A cut-off comes back as a typed outcome (the chain then counts the rows this file
 * emitted, for the next file); a file that differs from the earlier download is an error.
 */
export async function readExportFile(
  ctx: FileContext,
  file: FileRef,
  chain: ChainState,
  sink: WindowSink
): Promise<ReadOutcome> {
  const {questId, exportId, where} = file;
  const opened = await ctx.api.openDownload(questId, exportId, file.url, ctx.signal);
  if (opened.kind === 'gone') return opened;
  const download = opened.download;
  const skipAtStart = chain.pendingSkip;
  let skipLeft = skipAtStart;
  let position = 0;
  let emitted = 0;
  let estimated = false;
  const differs = (what: string): Error =>
    connectorError(
      'transient_error',
      `Quest ${questId}: export ${exportId} of ${where} differs from the earlier download of this window (${what}); nothing more of it is emitted, and the window is read again by the next sync.`,
      {questId, exportId, window: where}
    );

  let summary;
  try {
    summary = await readCsv(
      download.chunks(),
      {...ctx.csv, maxInvalidSequences: MAX_INVALID_SEQUENCES, withholdUnterminatedRow: download.framing === 'close'},
      {
        header: (cells) => {
          if (chain.header === undefined) {
            checkHeader(ctx, file, cells);
            chain.header = cells;
            sink.begin(cells);
          } else if (!sameRow(chain.header, cells)) {
            throw differs('its header is not the same');
          }
        },
        rows: (batch) => {
          let from = 0;
          if (skipLeft > 0) {
            from = Math.min(skipLeft, batch.length);
            skipLeft -= from;
            position += from;
            if (skipLeft === 0 && !sameRow(chain.last, batch[from - 1]))
              throw differs(`row ${position} is not the last one emitted`);
            if (from === batch.length) return undefined;
          }
          const fresh = from === 0 ? batch : batch.slice(from);
          position += fresh.length;
          emitted += fresh.length;
          chain.last = fresh[fresh.length - 1];
          if (!estimated && download.contentLength !== undefined && download.receivedBytes > 0) {
            estimated = true;
            sink.estimate?.(Math.round((position * download.contentLength) / download.receivedBytes));
          }
          return sink.rows(fresh);
        },
      }
    );
  } catch (err) {
    download.close();
    if (err instanceof DownloadCutOff) {
      chain.pendingSkip = skipAtStart + emitted;
      return {kind: 'cut-off', reason: err.message};
    }
    throw fileError(err, file);
  }
  if (summary.withheldLastRow) {
    chain.pendingSkip = skipAtStart + emitted;
    return {
      kind: 'cut-off',
      reason: 'the server closed the connection to end a body of unknown length, and its last row had no line end',
    };
  }
  if (summary.encodingBasis === 'sniffed') {
    ctx.logger.warn(
      `Quest ${questId}: export ${exportId} has no byte-order mark and is not UTF-8; it was read as ${summary.encoding}.`
    );
  }
  if (summary.invalidSequences > 0) {
    ctx.logger.warn(
      `Quest ${questId}: export ${exportId} of ${where} held ${summary.invalidSequences} invalid ${summary.encoding.toUpperCase()} byte sequence(s); each became U+FFFD in the records.`
    );
  }
  if (summary.nulChars > 0) {
    ctx.logger.warn(
      `Quest ${questId}: export ${exportId} of ${where} held ${summary.nulChars} NUL character(s), emitted as they are.`
    );
  }
  chain.pendingSkip = skipLeft;
  return {kind: 'complete', emitted, rows: position, bytes: download.receivedBytes, verified: skipLeft === 0};
}

/** A first line that shares no name with the known columns is data, not a header. */
function checkHeader(ctx: FileContext, file: FileRef, header: readonly string[]): void {
  if (!ctx.knownTitles.size || header.some((name) => ctx.knownTitles.has(name))) return;
  const example = ctx.knownTitles.values().next().value;
  throw connectorError(
    'transient_error',
    `Quest ${file.questId}: the export of ${file.where} has no header row (its first line shares no column name with the ${ctx.knownTitles.size} known columns, e.g. ${JSON.stringify(example)}). Nothing of it was emitted.`,
    {questId: file.questId, exportId: file.exportId}
  );
}

/** A file that cannot be read as CSV, as an error a person can act on. */
function fileError(err: unknown, file: FileRef): Error {
  const {questId, exportId, where} = file;
  if (err instanceof CsvFormatError && err.problem === 'stray-quote') {
    return connectorError(
      'config_error',
      `The export of quest ${questId} for ${where} has a quote inside an unquoted cell (${err.message}), which CSV does not allow. To read such quotes as text, set accept_stray_quotes to true; or report the quest id to Questback support. No row of this window past the last checkpoint is kept.`,
      {questId, exportId, line: err.line},
      err
    );
  }
  if (err instanceof CsvFormatError) {
    return connectorError(
      'transient_error',
      `The export of quest ${questId} for ${where} is not valid CSV: ${err.message}. No row of it past the last checkpoint is kept; report this with the quest id to Questback support if it persists.`,
      {questId, exportId, line: err.line},
      err
    );
  }
  if (err instanceof CsvEncodingError) {
    return connectorError(
      'transient_error',
      `The export of quest ${questId} for ${where} is not valid ${err.encoding.toUpperCase()}: ${err.message}. Nothing of this window is saved; report it with the quest id to Questback support if it persists.`,
      {questId, exportId},
      err
    );
  }
  return err instanceof Error ? err : new Error(String(err));
}
