import {AirbyteLogger} from 'faros-airbyte-cdk/lib/logger';

import {ExportApi} from '../../api/client';
import {DownloadCutOff} from '../../api/download';
import {connectorError} from '../../core/errors';
import {CsvFormatError} from '../../csv/csv-error';
import {CsvEncodingError, CsvReadOptions, readCsv} from '../../csv/reader';
import {RowBatch} from '../../csv/rows';
import {TimeWindow} from '../../core/time';
import {isCreatedHeader, missingHeaderColumns} from '../../csv/header';
import {EmittedRows} from '../state/checkpoints';
import {CreatedTally, emptyTally, rowsInWindow} from './created-filter';
import {DownloadProgress} from './download-progress';
import {quote} from '../../core/outside-text';
import {plural} from '../../core/quantities';
import {FingerprintKey, IdentityResume} from './resume';

/** More bytes than this that are not valid in the file's encoding fail the window instead of a warning. */
const MAX_INVALID_SEQUENCES = 100;

/**
 * What this sync has read of a planned window, carried from file to file of it: when a download is
 * cut off and the export is downloaded again, its file is gone and the export is created again, or
 * the window is split, the next files skip exactly the rows the window emitted already (by identity,
 * see resume/), in whatever order they list them.
 */
export interface WindowFiles {
  /** The header of the window's first file; every later file must repeat it. */
  header?: string[];
  resume?: IdentityResume;
  /** What the rows' Created cells showed (created-filter.ts). */
  created?: CreatedTally;
  /** Cells cut to a size bound (csv/bound-cuts.ts), and the first of them, for the window's warning. */
  cuts?: {cells: number; column: string; chars: number; kept: number; byRow: boolean};
}

/** The warning a window's cut cells call for, if any: naming a column and sizes, never a value. */
export function cutWarning(questId: string, where: string, files: WindowFiles): string | undefined {
  const cuts = files.cuts;
  if (!cuts) return undefined;
  const bound = cuts.byRow ? 'the most one row may hold' : 'the most one cell may hold';
  return `Quest ${questId}: ${cuts.cells} cell(s) of ${where} were longer than the connector takes and were truncated (e.g. column ${quote(cuts.column)}: ${cuts.chars} characters, cut to ${cuts.kept}, ${bound}); each record says so in meta.changes (TRUNCATED). The sync went on; ask Questback support about the response if the full text matters.`;
}

/** Where the rows of a window go. */
interface WindowSink {
  /** The header of the window's files, once, before any row; returns the index of the rows' identity (-1: none). */
  begin(header: string[]): number;
  rows(rows: RowBatch): Promise<void> | undefined;
  /** The file's size is known: its row count, estimated from its announced length and its first rows. */
  estimate?(rows: number): void;
}

type ReadOutcome =
  | {
      kind: 'complete';
      /** Rows emitted from this file. */
      emitted: number;
      /** Rows in this file. */
      rows: number;
      bytes: number;
      /** Rows of this file the window had emitted already. */
      skipped: number;
    }
  /** stalledMs: how long the file went without a row new to the window before it was cut off. */
  | {kind: 'cut-off'; reason: string; stalledMs: number}
  | {kind: 'gone'; httpStatus: number};

interface FileRef extends FileOrigin {
  url: string;
  /** The window the export asked for. */
  window: TimeWindow;
}

interface FileContext {
  api: ExportApi;
  logger: AirbyteLogger;
  csv: CsvReadOptions;
  signal: AbortSignal;
  now(): number;
  /** Rows of the quest an earlier read emitted past its cursor: skipped wherever they are met. */
  emitted?: EmittedRows;
  /** The digest of the export settings (part of a row fingerprint's file digest, resume/). */
  settings: string;
  /** What the resume identities a STATE lists are keyed with. */
  resumeKey: FingerprintKey;
}

function sameRow(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  return !!a && !!b && a.length === b.length && a.every((cell, i) => cell === b[i]);
}

/**
 * When the file's rows came: the time each count of complete rows was first reached (the reader says so
 * after every chunk), kept until the rows are handed over.
 */
class RowArrivals {
  private readonly counts: number[] = [];
  private readonly times: number[] = [];
  private head = 0;

  reached(rows: number, at: number): void {
    const last = this.counts.length > this.head ? this.counts[this.counts.length - 1] : -1;
    if (rows > last) {
      this.counts.push(rows);
      this.times.push(at);
    }
  }

  /** When the first `rows` rows were all complete (`now` if the reader has not said yet); earlier counts are forgotten. */
  of(rows: number, now: number): number {
    while (this.head < this.counts.length && this.counts[this.head] < rows) this.head++;
    const at = this.head < this.counts.length ? this.times[this.head] : now;
    if (this.head > 1024) {
      this.counts.splice(0, this.head);
      this.times.splice(0, this.head);
      this.head = 0;
    }
    return at;
  }
}

/**
 * Downloads one export file and pushes the rows its window has not emitted yet to the sink. A
 * cut-off comes back as a typed outcome; a file whose header differs from the window's is an error.
 */
export async function readExportFile(
  ctx: FileContext,
  file: FileRef,
  files: WindowFiles,
  sink: WindowSink
): Promise<ReadOutcome> {
  const {questId, exportId, where} = file;
  const opened = await ctx.api.openDownload(questId, exportId, file.url, ctx.signal);
  if (opened.kind === 'gone') return opened;
  const download = opened.download;
  const progress = new DownloadProgress({...file, totalBytes: download.contentLength}, ctx.logger, () => ctx.now());
  let lastNew = ctx.now();
  const arrivals = new RowArrivals();
  let position = 0;
  let emitted = 0;
  let estimated = false;
  let resume: IdentityResume | undefined;
  /** The Created cell of each row, or -1. */
  let created = -1;
  const skippedBefore = files.resume?.skipped ?? 0;

  let summary;
  try {
    summary = await readCsv(
      download.chunks(),
      {...ctx.csv, maxInvalidSequences: MAX_INVALID_SEQUENCES, withholdUnterminatedRow: download.framing === 'close'},
      {
        header: (cells) => {
          assertHeader(cells, file);
          if (files.header === undefined) {
            // The window's header only once the stream took it: a file of the window read after a
            // refusal (an earlier attempt's export, exported anew) is refused again, not read as taken.
            const keyIndex = sink.begin(cells);
            files.header = cells;
            files.resume = windowResume(ctx, file, keyIndex, cells);
          } else if (!sameRow(files.header, cells)) {
            throw connectorError(
              'transient_error',
              `Quest ${questId}: export ${exportId} of ${where} has another header than the earlier export of this window (the survey was edited meanwhile?); nothing more of it is emitted, and the window is read again by the next sync.`,
              {questId, exportId, window: where}
            );
          }
          resume = files.resume;
          resume?.startFile();
          created = cells.findIndex(isCreatedHeader);
        },
        rows: (batch) => {
          position += batch.rows;
          for (const cut of batch.cuts ?? []) {
            files.cuts ??= {
              cells: 0,
              column: files.header?.[cut.cell] ?? '',
              chars: cut.chars,
              kept: cut.kept,
              byRow: cut.byRow,
            };
            files.cuts.cells++;
          }
          const inWindow =
            created < 0 ? batch : rowsInWindow(batch, created, file.window, (files.created ??= emptyTally()));
          const fresh = resume ? resume.fresh(inWindow) : inWindow;
          if (!estimated && download.contentLength !== undefined && download.receivedBytes > 0) {
            estimated = true;
            sink.estimate?.(Math.round((position * download.contentLength) / download.receivedBytes));
          }
          // Dated by the arrival of the batch's last row, not by its handing over: a cut-off hands over the
          // rows that came before it only then, and the stretch since they came counts against the stall budget.
          const arrived = arrivals.of(position, ctx.now());
          if (fresh.rows === 0) return undefined;
          emitted += fresh.rows;
          lastNew = arrived;
          return sink.rows(fresh);
        },
        progress: (_bytes, rows) => {
          arrivals.reached(rows, ctx.now());
          progress.update(rows, download.receivedBytes);
        },
      }
    );
  } catch (err) {
    download.close();
    if (err instanceof DownloadCutOff) return {kind: 'cut-off', reason: err.message, stalledMs: ctx.now() - lastNew};
    throw fileError(err, file);
  }
  if (summary.withheldLastRow) {
    return {
      kind: 'cut-off',
      reason: 'the server closed the connection to end a body of unknown length, and its last row had no line end',
      stalledMs: ctx.now() - lastNew,
    };
  }
  if (!summary.terminated && summary.rows > 0) {
    // Length-delimited: the declared length arrived whole and nothing followed it (the download checks both).
    ctx.logger.warn(
      `Quest ${questId}: export ${exportId} of ${where} ends without a line end after its last row; the body matched its declared length and nothing followed it, so the row is taken as whole.`
    );
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
  const skipped = (files.resume?.skipped ?? 0) - skippedBefore;
  return {kind: 'complete', emitted, rows: position, bytes: download.receivedBytes, skipped};
}

/**
 * The resume of a window whose files have `header`, with the rows an earlier read emitted; says so
 * when their fingerprints are of another file digest (matched by Response ID alone, see resume/).
 */
function windowResume(ctx: FileContext, file: FileRef, keyIndex: number, header: string[]): IdentityResume {
  const {questId, where} = file;
  const digest = ctx.resumeKey.file(ctx.settings, header);
  const before = ctx.emitted?.wholeRows === keyIndex < 0 ? ctx.emitted : undefined;
  if (before?.fingerprints && before.header !== digest) {
    ctx.logger.warn(
      `Quest ${questId}: the state lists ${plural(before.keys.length, 'row')} an earlier sync emitted past the cursor, fingerprinted from a file of other export settings or another header, or under another hash_salt (or client_secret, without a hash_salt); ${where} skips them by Response ID alone. Only if the service lists two rows under one Response ID may one of those be sent twice and the other not at all.`
    );
  }
  return new IdentityResume(keyIndex, ctx.resumeKey, {
    onMemory: (reason) =>
      ctx.logger.warn(
        `Quest ${questId}: the identities of the rows emitted from ${where} are kept in memory, not in a temporary file: ${reason}. Memory grows with the window's rows; give the connector a writable TMPDIR.`
      ),
    ...(before ? {before} : {}),
    file: digest,
  });
}

/** Where a file's first line came from, for the error that says it is not a header. */
interface FileOrigin {
  questId: string;
  exportId: string;
  /** The window, as said in messages. */
  where: string;
}

/**
 * Fails a file whose first line is not a header (csv/header.ts) before any text of it is used: it
 * may be a respondent's answers, so no text of it becomes a name, a log line, a trace or a state
 * entry, and the error quotes none of it. Neither column: the file has no header row, which the next
 * sync may not meet again; one of them: the export lacks a column every layout needs.
 */
export function assertHeader(cells: readonly string[], {questId, exportId, where}: FileOrigin): void {
  const missing = missingHeaderColumns(cells);
  if (!missing.length) return;
  const context = {questId, exportId, window: where};
  if (missing.length > 1) {
    throw connectorError(
      'transient_error',
      `Quest ${questId}: the export of ${where} has no header row: its first line has neither a Response ID nor a Created column, so it is taken as a respondent's answers, which are not quoted here. Nothing of the file was used; the next sync tries again. If it persists, report the quest id and export ${exportId} to Questback support.`,
      context
    );
  }
  const [column] = missing;
  const role = column === 'Created' ? "each row's creation time" : "each row's identity and key";
  throw connectorError(
    'config_error',
    `Quest ${questId}: the first line of the export of ${where} has no ${column} column (${role}), which every header holds, so it is not taken as a header; its texts are not quoted here, as they may be a respondent's answers. Nothing of the file was used. Tell Questback support (quest ${questId}, export ${exportId}) that the export has no ${column} column, or remove the quest from quest_ids.`,
    {...context, column}
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
  if (err instanceof CsvFormatError && (err.problem === 'cell-too-large' || err.problem === 'row-too-large')) {
    return connectorError(
      'system_error',
      `The export of quest ${questId} for ${where} has ${err.problem === 'cell-too-large' ? 'a header cell' : 'a header row'} longer than ${err.limit} characters (line ${err.line}), far beyond any survey question: the file is not a sound export, and reading it would exhaust memory. Nothing of this window past the last checkpoint is kept; report the quest id and export ${exportId} to Questback support.`,
      {questId, exportId, window: where, line: err.line},
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
