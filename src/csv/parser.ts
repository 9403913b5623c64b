import {LIMITS} from '../core/limits';
import {CellCut, QUOTE, RowBatch, rowText, spareBuffer} from './rows';

const LF = 10;
const CR = 13;

/** How the rows of a file ended (blank lines included): what a probe of the service's dialect reports. */
export interface LineEnds {
  crlf: number;
  lf: number;
  cr: number;
}

export type CsvProblem = 'stray-quote' | 'open-quote' | 'after-quote' | 'width' | 'cell-too-large' | 'row-too-large';

/**
 * Thrown for a malformed file; `line` is the physical line (1-based) where the bad row starts. For
 * a cell or row over its bound, `limit` is that bound (characters).
 */
export class CsvFormatError extends Error {
  constructor(
    message: string,
    readonly line: number,
    readonly problem: CsvProblem,
    readonly limit?: number
  ) {
    super(`${message} on line ${line}`);
    this.name = 'CsvFormatError';
  }
}

const enum Mode {
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
const INITIAL_BYTES = 512 * 1024;
const INITIAL_CELLS = 64 * 1024;

/**
 * An incremental RFC 4180 scanner over UTF-8 bytes: push bytes in chunks of any size, take the
 * complete rows as batches (rows.ts) of the bytes and where each cell lies; no cell becomes a
 * string. Handles separators, quotes and CR/LF inside quoted cells, CRLF, LF or CR row ends, and
 * blank lines (skipped). Every row must have as many cells as the first (the header); an
 * unterminated quote or a stray quote is an error naming the line. Scanning goes on where the last
 * chunk ended, so the time is linear in the input whatever the cell sizes, and the bytes of a row
 * are copied once on their way in (a batch takes its buffer with it). Written for this connector:
 * it scans the 437 MB of a 1,000,000-row simulator export in about a second, where csv-parse, the
 * reference the tests compare it with, takes many times longer.
 */
export class CsvScanner {
  private buf: Uint8Array = new Uint8Array(INITIAL_BYTES);
  /** Bytes in buf; buf[len] is a sentinel that stops every inner loop. */
  private len = 0;
  private pos = 0;
  private mode = Mode.CellStart;
  /** Cell starts, and each row's end + 1 after its cells (the layout of RowBatch). */
  private cells: Int32Array = new Int32Array(INITIAL_CELLS);
  private k = 0;
  private rowStart = 0;
  private rowK = 0;
  /** Complete rows (after the header) not taken yet, and where they end in buf and cells. */
  private doneRows = 0;
  private doneBytes = 0;
  private doneK = 0;
  private width = -1;
  private afterCr = false;
  private line = 1;
  /** Line feeds inside the quoted cells of the current row, finished ones, and the one being read. */
  private rowLines = 0;
  private cellLines = 0;
  /** Exact sizes, counted only for a cell or row whose bytes exceed a bound (see checkSize). */
  private countedK = -1;
  private countedTo = 0;
  private cellUnits = 0;
  private rowCountedK = 0;
  private rowUnits = 0;
  /** Cells cut to a bound and not taken yet: their cell entry (k), kept and counted characters. */
  private cuts: {k: number; kept: number; chars: number; byRow: boolean}[] = [];
  /** The cell being read was cut (its entry), and its rest is being dropped as it arrives. */
  private cutK = -1;
  private skipping = false;
  private readonly sep: number;
  private readonly maxCell: number;
  private readonly maxRow: number;
  /** Per byte: 0 goes on in an unquoted cell; otherwise a separator, line end or (stray) quote stops it. */
  private readonly stops = new Uint8Array(256);
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

  /** Complete rows not taken yet, and their bytes. */
  get readyRows(): number {
    return this.doneRows;
  }

  get readyBytes(): number {
    return this.doneBytes;
  }

  /** Appends bytes and scans them, continuing where the previous chunk ended. */
  push(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    this.terminated = false;
    if (this.len + bytes.length + 1 > this.buf.length) {
      const grown = new Uint8Array(Math.max(this.buf.length * 2, this.len + bytes.length + 1));
      grown.set(this.buf.subarray(0, this.len));
      this.buf = grown;
    }
    this.buf.set(bytes, this.len);
    this.len += bytes.length;
    this.scan();
  }

  /** The input is complete: the last row may lack its line end (see `terminated`); an open quote is an error. */
  end(): void {
    if (this.mode === Mode.Quoted) {
      throw new CsvFormatError('Quote not closed: a quoted cell runs to the end of the file', this.line, 'open-quote');
    }
    this.skipping = false;
    if (this.len > this.rowStart) {
      if (this.k === this.rowK) this.cell(this.len);
      this.checkSize(this.len, this.mode === Mode.AfterQuote ? this.len - 1 : this.len);
      this.endRow(this.len);
      this.rowStart = this.len;
      this.doneBytes = this.len;
      this.terminated = false;
    }
  }

  /** The complete rows not taken yet (none: undefined), which take their memory with them. */
  take(): RowBatch | undefined {
    if (this.doneRows === 0) return undefined;
    const cut = this.doneBytes;
    const batch: RowBatch = {
      bytes: this.buf.subarray(0, cut),
      cells: this.cells.subarray(0, this.doneK),
      rows: this.doneRows,
      width: this.width,
    };
    if (this.cuts.length) {
      const stride = this.width + 1;
      const done = this.doneK;
      const taken: CellCut[] = [];
      const open: typeof this.cuts = [];
      for (const c of this.cuts) {
        if (c.k >= done) open.push({...c, k: c.k - done});
        else
          taken.push({row: Math.floor(c.k / stride), cell: c.k % stride, kept: c.kept, chars: c.chars, byRow: c.byRow});
      }
      this.cuts = open;
      if (taken.length) batch.cuts = taken;
    }
    if (this.cutK >= 0) this.cutK -= this.doneK;
    // What follows the batch (a row begun) starts the next buffer.
    const rest = this.len - cut;
    const buf = new Uint8Array(spareBuffer(Math.max(INITIAL_BYTES, rest * 2 + 1)));
    buf.set(this.buf.subarray(cut, this.len));
    const open = this.k - this.doneK;
    const cells = new Int32Array(spareBuffer(4 * Math.max(INITIAL_CELLS, open * 2)));
    for (let i = 0; i < open; i++) cells[i] = this.cells[this.doneK + i] - cut;
    this.buf = buf;
    this.cells = cells;
    this.len = rest;
    this.pos -= cut;
    this.rowStart -= cut;
    this.countedTo -= cut;
    if (this.countedK >= 0) this.countedK -= this.doneK;
    this.rowK -= this.doneK;
    this.rowCountedK = Math.max(0, this.rowCountedK - this.doneK);
    this.k = open;
    this.doneRows = 0;
    this.doneBytes = 0;
    this.doneK = 0;
    return batch;
  }

  private scan(): void {
    const b = this.buf;
    let n = this.len;
    const {sep, stops, maxCell, maxRow} = this;
    b[n] = LF;
    let pos = this.pos;
    if (this.afterCr) {
      this.afterCr = false;
      if (b[pos] === LF) {
        pos++;
        this.rowStart = pos;
        this.doneBytes = pos;
        // Counted as a CR when the chunk ended after it.
        this.lineEnds.cr--;
        this.lineEnds.crlf++;
      }
      if (pos === n) this.terminated = true;
    }
    if (this.skipping) {
      pos = this.skip(pos);
      n = this.len;
      if (this.skipping) {
        this.pos = pos;
        return;
      }
    }
    // The hot state lives in locals; the methods for row ends and the rare cases take it from fields.
    let mode = this.mode;
    let cells = this.cells;
    let k = this.k;
    let rowStart = this.rowStart;
    let cellStart = k > this.rowK ? cells[k - 1] : pos;
    while (pos < n) {
      if (mode === Mode.CellStart) {
        if (k === this.rowK) {
          if (k + 2 > cells.length) cells = this.grow(k);
          cells[k++] = pos;
          cellStart = pos;
        }
        if (b[pos] === QUOTE) {
          mode = Mode.Quoted;
          this.quotedCells++;
          pos++;
          continue;
        }
        mode = Mode.Unquoted;
      }
      let c: number;
      if (mode === Mode.Unquoted) {
        while (stops[b[pos]] === 0) pos++;
        if (pos >= n) break;
        c = b[pos];
        if (c === QUOTE) {
          throw new CsvFormatError(
            'Unexpected quote inside an unquoted cell',
            this.line + this.rowLines,
            'stray-quote'
          );
        }
        if (pos - cellStart > maxCell || pos - rowStart > maxRow) {
          this.k = k;
          pos = this.checkSize(pos, pos);
          n = this.len;
        }
      } else {
        if (mode === Mode.Quoted) {
          // The sentinel is a line feed: the loop stops at a quote, a line feed, or the end.
          c = b[pos];
          while (c !== QUOTE && c !== LF) c = b[++pos];
          if (pos >= n) break;
          pos++;
          if (c === LF) {
            this.cellLines++;
            continue;
          }
          mode = Mode.AfterQuote;
          if (pos >= n) break;
        }
        // Mode.AfterQuote
        c = b[pos];
        if (c === QUOTE) {
          mode = Mode.Quoted;
          pos++;
          continue;
        }
        if (c !== sep && c !== LF && c !== CR) {
          throw new CsvFormatError('Invalid character after a closing quote', this.line + this.rowLines, 'after-quote');
        }
        this.rowLines += this.cellLines;
        this.cellLines = 0;
        if (pos - cellStart > maxCell || pos - rowStart > maxRow) {
          this.k = k;
          pos = this.checkSize(pos, pos - 1);
          n = this.len;
        }
      }
      mode = Mode.CellStart;
      if (c === sep) {
        if (k + 2 > cells.length) cells = this.grow(k);
        cells[k++] = ++pos;
        cellStart = pos;
        continue;
      }
      this.k = k;
      pos = this.lineEnd(pos, c);
      cells = this.cells;
      k = this.k;
      rowStart = this.rowStart;
    }
    this.pos = pos;
    this.mode = mode;
    this.k = k;
    // The cell and row being read, as far as they go: over a bound they are cut now, not when they end,
    // and the rest of the cell is dropped as it arrives. (After a quote that may close the cell or
    // begin a doubled one, the quote is kept for the next chunk to tell.)
    if (this.len > this.rowStart && this.k > this.rowK) {
      this.pos = this.checkSize(this.len, mode === Mode.AfterQuote ? this.len - 1 : this.len, true);
    }
  }

  /** Doubles the room for cell entries (k of them in use); returns the new array. */
  private grow(k: number): Int32Array {
    const grown = new Int32Array(this.cells.length * 2);
    grown.set(this.cells.subarray(0, k));
    this.cells = grown;
    return grown;
  }

  /** A cell begins at `at`. */
  private cell(at: number): void {
    if (this.k + 2 > this.cells.length) this.grow(this.k);
    this.cells[this.k++] = at;
  }

  /** The row ends at the line end c at `pos`; returns where the next row begins. */
  private lineEnd(pos: number, c: number): number {
    this.endRow(pos);
    let next = pos + 1;
    if (c === CR) {
      if (next >= this.len) this.afterCr = true;
      else if (this.buf[next] === LF) next++;
      this.lineEnds[next === pos + 2 ? 'crlf' : 'cr']++;
    } else {
      this.lineEnds.lf++;
    }
    this.rowStart = next;
    this.doneBytes = next;
    if (next >= this.len) this.terminated = true;
    return next;
  }

  /** The current row ends at `end` (its line end, or the end of the input). */
  private endRow(end: number): void {
    const cells = this.k - this.rowK;
    this.cell(end + 1);
    const blank = cells === 1 && this.cells[this.rowK] === end;
    if (blank) {
      this.k = this.rowK;
    } else if (this.width === -1) {
      this.width = cells;
      this.header = rowText(this.buf, this.cells, this.rowK, this.k - this.rowK - 1);
      this.k = this.rowK;
    } else if (cells !== this.width) {
      throw new CsvFormatError(
        `Wrong number of cells: expected ${this.width} like the header, got ${cells}`,
        this.line,
        'width'
      );
    } else {
      this.doneRows++;
      this.doneK = this.k;
    }
    this.rowK = this.k;
    this.line += 1 + this.rowLines;
    this.rowLines = 0;
    this.rowCountedK = this.rowK;
    this.rowUnits = 0;
    this.countedK = -1;
    this.cutK = -1;
  }

  /**
   * Cuts the cell being read (begun at the last cell start, read up to `end`, its text up to
   * `textEnd`) when it or its row is over a bound; returns where `end` is then. Bytes are never
   * fewer than UTF-16 units, so only a cell or row whose bytes exceed a bound is counted exactly:
   * its characters (a quoted cell's quotes as the text has them), each byte once however many
   * chunks it takes to arrive. A cut keeps what the bound allows, whole characters, and a quoted
   * cell keeps its closing quote; the cut is recorded for the batch (RowBatch.cuts). `partial`: the
   * cell goes on in the next chunks, whose bytes of it are dropped (skip). The header is never cut:
   * a header over a bound is an error.
   */
  private checkSize(end: number, textEnd: number, partial = false): number {
    const cellK = this.k - 1;
    if (cellK === this.cutK) return end;
    const cellStart = this.cells[cellK];
    if (end - cellStart <= this.maxCell && end - this.rowStart <= this.maxRow) return end;
    const quoted = this.buf[cellStart] === QUOTE;
    if (this.countedK !== cellK) {
      this.countedK = cellK;
      this.countedTo = quoted ? cellStart + 1 : cellStart;
      this.cellUnits = 0;
    }
    const counted = countUnits(this.buf, this.countedTo, textEnd, quoted);
    this.cellUnits += counted.units;
    this.countedTo = counted.end;
    for (; this.rowCountedK < this.k - 1; this.rowCountedK++) {
      const start = this.cells[this.rowCountedK];
      const stop = this.cells[this.rowCountedK + 1] - 1;
      const q = this.buf[start] === QUOTE;
      this.rowUnits += countUnits(this.buf, q ? start + 1 : start, q ? stop - 1 : stop, q).units + 1;
    }
    const rowLeft = Math.max(0, this.maxRow - this.rowUnits);
    if (this.cellUnits <= this.maxCell && this.cellUnits <= rowLeft) return end;
    if (this.width === -1) {
      const cell = this.cellUnits > this.maxCell;
      throw new CsvFormatError(
        `A header ${cell ? 'cell' : 'row'} is longer than ${cell ? this.maxCell : this.maxRow} characters, the most one may hold`,
        this.line,
        cell ? 'cell-too-large' : 'row-too-large',
        cell ? this.maxCell : this.maxRow
      );
    }
    const kept = Math.min(this.maxCell, rowLeft);
    const from = quoted ? cellStart + 1 : cellStart;
    const cut = countUnits(this.buf, from, textEnd, quoted, kept).end;
    // Drop [cut, textEnd): what follows (a closing quote, the rest of the chunk) moves down.
    const dropped = textEnd - cut;
    this.buf.copyWithin(cut, textEnd, this.len);
    this.len -= dropped;
    this.buf[this.len] = LF;
    this.cuts.push({k: cellK, kept, chars: this.cellUnits, byRow: kept < this.maxCell});
    this.cutK = cellK;
    this.countedK = -1;
    if (partial) this.skipping = true;
    return end - dropped;
  }

  /**
   * Drops the bytes of a cut cell as they arrive from `pos` on, until the cell ends; returns where
   * scanning goes on (skipping stays set while the cell has not ended).
   */
  private skip(pos: number): number {
    const b = this.buf;
    const n = this.len;
    const last = this.cuts[this.cuts.length - 1];
    let i = pos;
    let ended = false;
    if (this.mode === Mode.Unquoted) {
      while (this.stops[b[i]] === 0) i++;
      if (i < n && b[i] === QUOTE) {
        throw new CsvFormatError('Unexpected quote inside an unquoted cell', this.line + this.rowLines, 'stray-quote');
      }
      ended = i < n;
      last.chars += countUnits(b, pos, i, false).units;
    } else {
      // A quote kept at pos - 1 (AfterQuote) closes the cell unless a quote follows it.
      let from = pos;
      if (this.mode === Mode.AfterQuote) {
        if (b[pos] !== QUOTE) return this.endSkip(pos, pos);
        from = pos - 1;
        i = pos + 1;
        last.chars++;
        this.mode = Mode.Quoted;
      }
      for (;;) {
        while (i < n && b[i] !== QUOTE) {
          if (b[i] === LF) this.cellLines++;
          if ((b[i] & 0xc0) !== 0x80) last.chars += b[i] >= 0xf0 ? 2 : 1;
          i++;
        }
        if (i >= n) break;
        if (i + 1 >= n) {
          // A quote at the end of the input: the next chunk tells whether it closes the cell.
          b[from] = QUOTE;
          this.len = from + 1;
          b[this.len] = LF;
          this.mode = Mode.AfterQuote;
          return this.len;
        }
        if (b[i + 1] !== QUOTE) {
          b.copyWithin(from, i, n);
          this.len = n - (i - from);
          b[this.len] = LF;
          this.mode = Mode.AfterQuote;
          this.skipping = false;
          return from + 1;
        }
        last.chars++;
        i += 2;
      }
      this.len = from;
      b[this.len] = LF;
      return from;
    }
    if (!ended) {
      this.len = pos;
      b[pos] = LF;
      return pos;
    }
    return this.endSkip(pos, i);
  }

  /** The cut cell ended at `at` (its separator or line end): the bytes [from, at) go, scanning goes on at `from`. */
  private endSkip(from: number, at: number): number {
    this.buf.copyWithin(from, at, this.len);
    this.len -= at - from;
    this.buf[this.len] = LF;
    this.skipping = false;
    return from;
  }
}

/**
 * UTF-16 units of the text in b[from, to) (in a quoted cell each doubled quote is one); and where
 * counting stopped: at `to`, before a quote that may be half of a doubled one, or before the
 * character that would take the count past `most`.
 */
function countUnits(
  b: Uint8Array,
  from: number,
  to: number,
  quoted: boolean,
  most = Infinity
): {units: number; end: number} {
  let units = 0;
  let i = from;
  for (; i < to; i++) {
    const c = b[i];
    if (quoted && c === QUOTE) {
      if (i + 1 >= to || units + 1 > most) break;
      i++;
      units++;
      continue;
    }
    if ((c & 0xc0) !== 0x80) {
      const u = c >= 0xf0 ? 2 : 1;
      if (units + u > most) break;
      units += u;
    }
  }
  return {units, end: i};
}
