import {ByteDecoder, EncodingBasis, TextEncoding} from './decoder';
import {CsvParserOptions, CsvRowParser, LineEnds} from './parser';

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
export interface CsvSink {
  /** The header row as the file has it. Returning false stops the reading after the rows that came with it. */
  header(cells: string[]): boolean | void;
  /** Complete rows in file order; a returned promise means: wait before pushing more. */
  rows(batch: string[][]): Promise<void> | undefined;
  /** Bytes taken so far, after every chunk. */
  progress?(bytes: number): void;
}

export interface CsvSummary {
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
 * The one CSV reader of a download, for discover's header sample and for read: bytes to text (BOM,
 * encoding), text to rows, the header to the sink first, then the rows in batches. Errors of the
 * bytes' transport and of the CSV itself propagate to the caller unchanged.
 */
export async function readCsv(
  chunks: AsyncIterable<Buffer>,
  options: CsvReadOptions,
  sink: CsvSink
): Promise<CsvSummary> {
  const decoder = new ByteDecoder();
  const parser = new CsvRowParser(options.separator, options);
  const rows: string[][] = [];
  let headerSeen = false;
  let stopped = false;
  let count = 0;
  let bytes = 0;

  /** Hands over what the parser produced; returns false when the sink wants no more. */
  const deliver = async (): Promise<boolean> => {
    let batch = rows.splice(0, rows.length);
    let more = true;
    if (!headerSeen && batch.length) {
      headerSeen = true;
      more = sink.header(batch[0]) !== false;
      batch = batch.slice(1);
    }
    if (batch.length) {
      count += batch.length;
      const wait = sink.rows(batch);
      if (wait) await wait;
    }
    return more;
  };

  for await (const chunk of chunks) {
    bytes += chunk.length;
    parser.push(decoder.write(chunk), rows);
    if (options.maxInvalidSequences !== undefined && decoder.invalidSequences > options.maxInvalidSequences) {
      throw new CsvEncodingError(decoder.encoding, decoder.invalidSequences, options.maxInvalidSequences);
    }
    if (rows.length && !(await deliver())) {
      stopped = true;
      break;
    }
    sink.progress?.(bytes);
  }
  let withheldLastRow = false;
  if (!stopped) {
    parser.push(decoder.end(), rows);
    // A last row without its line end may have been cut anywhere, even mid-cell: not parsed, withheld.
    if (options.withholdUnterminatedRow && !parser.terminated) withheldLastRow = true;
    else parser.end(rows);
    if (rows.length && !(await deliver())) stopped = true;
  }
  return {
    rows: count,
    headerSeen,
    terminated: parser.terminated,
    stopped,
    withheldLastRow,
    encoding: decoder.encoding,
    encodingBasis: decoder.basis,
    invalidSequences: decoder.invalidSequences,
    nulChars: decoder.nulChars,
    lineEnds: {...parser.lineEnds},
    quotedCells: parser.quotedCells,
  };
}
