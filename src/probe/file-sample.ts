import {DownloadCutOff, ExportFile, Framing} from '../api/download';
import {errorMessage} from '../core/errors';
import {TimeWindow} from '../core/time';
import {encodeWtf8, EncodingBasis, TextEncoding, Utf8Transcoder} from '../csv/decoder';
import {isCreatedHeader, isResponseIdHeader} from '../csv/header';
import {CsvFormatError, CsvProblem} from '../csv/csv-error';
import {CsvScanner} from '../csv/parser';
import {LineEnds} from '../csv/scanner-state';
import {readCsv} from '../csv/reader';
import {rowStrings, rowText} from '../csv/rows';
import {placeInWindow, ReadTime, readTime, timeShape} from '../core/time-text';

/** Separators a file may use instead of the configured one (the SOAP API's default was ¤). */
const CANDIDATE_SEPARATORS = ['|', ',', ';', '\t', '¤'];
/** Bytes of the file's start kept to tell its encoding and to try each separator on. */
const HEAD_BYTES = 64 * 1024;

/** How the start of a file reads with one separator: the header's width, and whether the rows after it agree. */
export interface SeparatorFit {
  separator: string;
  columns: number;
  /** Rows read whole from the start, the header included. */
  rows: number;
  /** Every row read had the header's width (and the quoting made sense). */
  consistent: boolean;
}

/** Where a Created time lies against the window it was exported for. */
interface WindowFit {
  inside: number;
  before: number;
  after: number;
  /** How far the farthest row lay outside, ms. */
  maxBeforeMs: number;
  maxAfterMs: number;
}

/** What one export file showed: shapes and counts only; the Created times only as numbers, in memory. */
export interface FileSample {
  contentEncoding?: string;
  framing: Framing;
  contentLength?: number;
  receivedBytes: number;
  /** Read to its end: a declared length was checked against the bytes received. */
  complete: boolean;
  /** The probe stopped reading after its row limit. */
  stoppedEarly: boolean;
  /** Why the body could not be read to its end (a cut-off, an HTML page, a coding not known). */
  readProblem?: string;
  encoding?: TextEncoding;
  encodingBasis?: EncodingBasis;
  header?: {
    columns: number;
    responseId: boolean;
    created: boolean;
  };
  /** The configured separator first, then the others a file may use. */
  separators: SeparatorFit[];
  rows: number;
  lineEnds?: LineEnds;
  quotedCells?: number;
  /** The file ended with a line end (or held nothing). */
  terminated?: boolean;
  csvError?: {problem: CsvProblem; line: number};
  createdShapes: Map<string, number>;
  /** Created values read as times, with where they lie against the window. */
  createdTimes: ReadTime[];
  fit: WindowFit;
}

/**
 * Reads an export file as the connector's CSV reader does (strictly: a stray quote is a finding), and
 * keeps what the probe's verdicts need. Stops after `maxRows` rows; never keeps a cell.
 */
export async function sampleFile(
  file: ExportFile & {contentEncoding?: string},
  opts: {separator: string; window: TimeWindow; maxRows: number}
): Promise<FileSample> {
  const sample: FileSample = {
    contentEncoding: file.contentEncoding,
    framing: file.framing,
    contentLength: file.contentLength,
    receivedBytes: 0,
    complete: false,
    stoppedEarly: false,
    rows: 0,
    separators: [],
    createdShapes: new Map(),
    createdTimes: [],
    fit: {inside: 0, before: 0, after: 0, maxBeforeMs: 0, maxAfterMs: 0},
  };
  let head = Buffer.alloc(0);
  async function* chunks(): AsyncGenerator<Buffer> {
    for await (const chunk of file.chunks()) {
      if (head.length < HEAD_BYTES) head = Buffer.concat([head, chunk.subarray(0, HEAD_BYTES - head.length)]);
      yield chunk;
    }
  }
  let createdAt = -1;
  const fit = sample.fit;
  const readHeader = (cells: string[]): void => {
    sample.header = {
      columns: cells.length,
      responseId: cells.some(isResponseIdHeader),
      created: cells.some(isCreatedHeader),
    };
  };
  try {
    const summary = await readCsv(
      chunks(),
      {separator: opts.separator},
      {
        header: (cells) => {
          createdAt = cells.findIndex(isCreatedHeader);
          readHeader(cells);
        },
        rows: (batch) => {
          for (let r = 0; r < batch.rows; r++) {
            if (sample.rows >= opts.maxRows) {
              sample.stoppedEarly = true;
              file.close();
              return undefined;
            }
            sample.rows++;
            if (createdAt === -1) continue;
            // Only the Created cell is read as text.
            const [cell] = rowText(batch.bytes, batch.cells, r * (batch.width + 1) + createdAt, 1);
            const shape = timeShape(cell);
            sample.createdShapes.set(shape, (sample.createdShapes.get(shape) ?? 0) + 1);
            const time = readTime(cell);
            if (!time) continue;
            sample.createdTimes.push(time);
            const place = placeInWindow(time, opts.window);
            if (place === 0) fit.inside++;
            else if (place < 0) {
              fit.before++;
              fit.maxBeforeMs = Math.max(fit.maxBeforeMs, opts.window.since - time.ms);
            } else {
              fit.after++;
              fit.maxAfterMs = Math.max(fit.maxAfterMs, time.ms - opts.window.until);
            }
          }
          return undefined;
        },
      }
    );
    sample.complete = !sample.stoppedEarly;
    sample.lineEnds = summary.lineEnds;
    sample.quotedCells = summary.quotedCells;
    sample.terminated = summary.terminated;
  } catch (err) {
    if (err instanceof CsvFormatError) sample.csvError = {problem: err.problem, line: err.line};
    else if (!sample.stoppedEarly) sample.readProblem = err instanceof DownloadCutOff ? err.reason : errorMessage(err);
  } finally {
    file.close();
    sample.receivedBytes = file.receivedBytes;
  }
  if (head.length) {
    const transcoder = new Utf8Transcoder();
    const text = Buffer.concat([transcoder.write(head), transcoder.end()]).toString('utf8');
    sample.encoding = transcoder.encoding;
    sample.encodingBasis = transcoder.basis;
    sample.separators = [opts.separator, ...CANDIDATE_SEPARATORS.filter((s) => s !== opts.separator)].map((s) =>
      fitSeparator(text, s)
    );
    // A bad row in the header's chunk stops the reader before the header reached the sink: read it from the start.
    const header = firstRows(text, opts.separator).rows[0];
    if (!sample.header && sample.csvError && header) readHeader(header);
  }
  return sample;
}

/** The rows complete in a file's start, up to the first that does not parse. */
function firstRows(text: string, separator: string): {rows: string[][]; error: boolean} {
  // The scanner takes one-byte separators: a wider one (¤) is tried as a control character the text lacks.
  const wide = separator.charCodeAt(0) > 127 ? '\u001f' : undefined;
  const scanner = new CsvScanner(wide ?? separator, {acceptStrayQuotes: true});
  let error = false;
  try {
    scanner.push(encodeWtf8(wide ? text.replaceAll(wide, ' ').replaceAll(separator, wide) : text));
  } catch (err) {
    if (!(err instanceof CsvFormatError)) throw err;
    error = true;
  }
  const batch = scanner.take();
  const rows = scanner.header ? [scanner.header, ...(batch ? rowStrings(batch) : [])] : [];
  return {rows, error};
}

function fitSeparator(text: string, separator: string): SeparatorFit {
  const {rows, error} = firstRows(text, separator);
  return {separator, columns: rows[0]?.length ?? 0, rows: rows.length, consistent: !error};
}
