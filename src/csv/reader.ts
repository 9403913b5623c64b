import {EncodingBasis, TextEncoding, Utf8Transcoder} from './decoder';
import {CsvScanner} from './parser';
import {CsvParserOptions, LineEnds} from './scanner-state';
import {RowBatch} from './rows';

/** Complete rows are handed on once their bytes reach this (or the file ends): a few hundred rows a batch. */
const BATCH_BYTES = 256 * 1024;

export interface CsvReadOptions extends CsvParserOptions {
  separator: string;
  /** More bytes than this that are invalid in the file's encoding stop the reading. */
  maxInvalidSequences?: number;
  /**
   * The body's end cannot be told from a cut (the server just closed the connection): a last row
   * without a line end is then withheld rather than delivered, since it may have been cut mid-cell.
   */
  withholdUnterminatedRow?: boolean;
}

/** Too many bytes of the file are not valid in its encoding: it is not the text it claims to be. */
export class CsvEncodingError extends Error {
  constructor(
    readonly encoding: TextEncoding,
    readonly invalidSequences: number,
    readonly limit: number
  ) {
    super(`more than ${limit} byte sequences are not valid ${encoding.toUpperCase()} (${invalidSequences} so far)`);
    this.name = 'CsvEncodingError';
  }
}

/** What the reader of a file does with it. */
interface CsvSink {
  /** The header row as the file has it. Returning false stops the reading after the rows that came with it. */
  header(cells: string[]): boolean | void;
  /**
   * Complete rows in file order, as bytes and cell offsets (the batch's memory is the sink's from
   * now on); a returned promise means: wait before pushing more.
   */
  rows(batch: RowBatch): Promise<void> | undefined;
  /** Bytes taken so far, and the rows complete in them (handed over or not yet), after every chunk. */
  progress?(bytes: number, rows: number): void;
}

interface CsvSummary {
  /** Rows after the header. */
  rows: number;
  headerSeen: boolean;
  /** The file ended with a line end (or was empty): its last row cannot have been cut mid-cell. */
  terminated: boolean;
  /** The sink asked to stop after the header. */
  stopped: boolean;
  /** The last row lacked its line end and was withheld (see withholdUnterminatedRow). */
  withheldLastRow: boolean;
  encoding: TextEncoding;
  encodingBasis: EncodingBasis;
  invalidSequences: number;
  nulChars: number;
  lineEnds: LineEnds;
  quotedCells: number;
}

/**
 * The one CSV reader of a download, for discover's header sample and for read: bytes to UTF-8
 * (BOM, encoding), UTF-8 to rows (no string per cell), the header to the sink first, then the rows
 * in batches. Errors of the bytes' transport and of the CSV itself propagate to the caller unchanged.
 */
export async function readCsv(
  chunks: AsyncIterable<Buffer>,
  options: CsvReadOptions,
  sink: CsvSink
): Promise<CsvSummary> {
  const transcoder = new Utf8Transcoder();
  const scanner = new CsvScanner(options.separator, options);
  let headerSeen = false;
  let stopped = false;
  let count = 0;
  let bytes = 0;

  /** Hands over what the scanner found (rows once enough have come, or `all`); returns false when the sink wants no more. */
  const deliver = async (all: boolean): Promise<boolean> => {
    let more = true;
    if (!headerSeen && scanner.header) {
      headerSeen = true;
      more = sink.header(scanner.header) !== false;
    }
    if (scanner.readyRows > 0 && (all || !more || scanner.readyBytes >= BATCH_BYTES)) {
      const batch = scanner.take() as RowBatch;
      count += batch.rows;
      const wait = sink.rows(batch);
      if (wait) await wait;
    }
    return more;
  };

  const source = chunks[Symbol.asyncIterator]();
  for (;;) {
    let next: IteratorResult<Buffer>;
    try {
      next = await source.next();
    } catch (err) {
      // The download failed (a cut-off): the rows that came whole before it are delivered first.
      await deliver(true);
      throw err;
    }
    if (next.done) break;
    const chunk = next.value;
    bytes += chunk.length;
    scanner.push(transcoder.write(chunk));
    if (options.maxInvalidSequences !== undefined && transcoder.invalidSequences > options.maxInvalidSequences) {
      throw new CsvEncodingError(transcoder.encoding, transcoder.invalidSequences, options.maxInvalidSequences);
    }
    if (!(await deliver(false))) {
      stopped = true;
      await source.return?.();
      break;
    }
    sink.progress?.(bytes, count + scanner.readyRows);
  }
  let withheldLastRow = false;
  if (!stopped) {
    scanner.push(transcoder.end());
    // A last row without its line end may have been cut anywhere, even mid-cell: not parsed, withheld.
    if (options.withholdUnterminatedRow && !scanner.terminated) withheldLastRow = true;
    else scanner.end();
    if (!(await deliver(true))) stopped = true;
  }
  return {
    rows: count,
    headerSeen,
    terminated: scanner.terminated,
    stopped,
    withheldLastRow,
    encoding: transcoder.encoding,
    encodingBasis: transcoder.basis,
    invalidSequences: transcoder.invalidSequences,
    nulChars: transcoder.nulChars,
    lineEnds: {...scanner.lineEnds},
    quotedCells: scanner.quotedCells,
  };
}
