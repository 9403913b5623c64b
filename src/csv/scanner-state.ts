import {LIMITS} from '../core/limits';
import {QUOTE} from './rows';

export const LF = 10;
export const CR = 13;

/** How the rows of a file ended (blank lines included): what a probe of the service's dialect reports. */
export interface LineEnds {
  crlf: number;
  lf: number;
  cr: number;
}

export const enum Mode {
  /** At the first byte of a cell: a quote makes it a quoted cell. */
  CellStart,
  Unquoted,
  Quoted,
  /** A quote inside a quoted cell: the next byte says whether it closes the cell or is doubled. */
  AfterQuote,
}

export interface CsvParserOptions {
  /** Accept a quote inside an unquoted cell as text (csv-parse calls this relax_quotes). */
  acceptStrayQuotes?: boolean;
  /** The longest cell, in characters (UTF-16 units); LIMITS.csv.maxCellChars by default. */
  maxCellChars?: number;
  /** The longest row, in characters, separators included; LIMITS.csv.maxRowChars by default. */
  maxRowChars?: number;
}

/** Bytes the buffer holds at first; it grows for a row that needs more. */
export const INITIAL_BYTES = 512 * 1024;
export const INITIAL_CELLS = 64 * 1024;

/**
 * What a scan holds between chunks: the bytes of the rows not taken yet and where their cells lie,
 * where the scan is in them, and the counts so far. The scanner's state machine (parser.ts) and the
 * cutting of cells and rows over their bound (bound-cuts.ts) work on it.
 */
export abstract class ScannerState {
  protected buf: Uint8Array = new Uint8Array(INITIAL_BYTES);
  /** Bytes in buf; buf[len] is a sentinel that stops every inner loop. */
  protected len = 0;
  protected pos = 0;
  protected mode = Mode.CellStart;
  /** Cell starts, and each row's end + 1 after its cells (the layout of RowBatch). */
  protected cells: Int32Array = new Int32Array(INITIAL_CELLS);
  protected k = 0;
  /** Where the row being read begins in buf and cells: where the complete rows not taken yet end. */
  protected rowStart = 0;
  protected rowK = 0;
  /** Complete rows (after the header) not taken yet. */
  protected doneRows = 0;
  protected width = -1;
  protected afterCr = false;
  protected line = 1;
  /** Line feeds inside the quoted cells of the current row, finished ones, and the one being read. */
  protected rowLines = 0;
  protected cellLines = 0;
  protected readonly sep: number;
  protected readonly maxCell: number;
  protected readonly maxRow: number;
  /** Per byte: 0 goes on in an unquoted cell; otherwise a separator, line end or (stray) quote stops it. */
  protected readonly stops = new Uint8Array(256);
  /** The header row as text, once scanned. */
  header: string[] | undefined;
  /** Whether the input seen so far ends where a row ends (after a line end, or nothing at all). */
  terminated = true;
  readonly lineEnds: LineEnds = {crlf: 0, lf: 0, cr: 0};
  /** Cells written in quotes. */
  quotedCells = 0;

  constructor(separator: string, options: CsvParserOptions = {}) {
    if (separator.length !== 1 || separator === '"' || separator === '\n' || separator === '\r') {
      throw new RangeError(`unsupported CSV separator ${JSON.stringify(separator)}`);
    }
    this.sep = separator.charCodeAt(0);
    if (this.sep > 127) throw new RangeError(`unsupported CSV separator ${JSON.stringify(separator)}`);
    this.maxCell = options.maxCellChars ?? LIMITS.csv.maxCellChars;
    this.maxRow = options.maxRowChars ?? LIMITS.csv.maxRowChars;
    this.stops[this.sep] = 1;
    this.stops[LF] = 1;
    this.stops[CR] = 1;
    if (options.acceptStrayQuotes !== true) this.stops[QUOTE] = 1;
  }

  /** Doubles the room for cell entries (k of them in use); returns the new array. */
  protected grow(k: number): Int32Array {
    const grown = new Int32Array(this.cells.length * 2);
    grown.set(this.cells.subarray(0, k));
    this.cells = grown;
    return grown;
  }

  /** A cell begins at `at`. */
  protected cell(at: number): void {
    if (this.k + 2 > this.cells.length) this.grow(this.k);
    this.cells[this.k++] = at;
  }
}
