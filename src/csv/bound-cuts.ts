import {CsvFormatError} from './csv-error';
import {CellCut, QUOTE} from './rows';
import {LF, Mode, ScannerState} from './scanner-state';

/**
 * Cells and rows over their bound (LIMITS.csv), cut as they arrive: what the bound allows is kept,
 * the rest of the cell dropped as its bytes come in, and each cut is said in the batch
 * (RowBatch.cuts). The scanner (parser.ts) calls checkSize only where a cell's or row's bytes exceed
 * a bound, so rows within their bounds cost nothing here.
 */
export abstract class BoundCuts extends ScannerState {
  /** Exact sizes, counted only for a cell or row whose bytes exceed a bound (see checkSize). */
  protected countedK = -1;
  protected countedTo = 0;
  protected cellUnits = 0;
  protected rowCountedK = 0;
  protected rowUnits = 0;
  /** Cells cut to a bound and not taken yet: their cell entry (k), kept and counted characters. */
  protected cuts: {k: number; kept: number; chars: number; byRow: boolean}[] = [];
  /** The cell being read was cut (its entry), and its rest is being dropped as it arrives. */
  protected cutK = -1;
  protected skipping = false;

  /** The cuts of the rows being taken (the first rowK cell entries, `bytes` bytes); the others move down with their row. */
  protected takeCuts(bytes: number): CellCut[] | undefined {
    const done = this.rowK;
    let taken: CellCut[] | undefined;
    if (this.cuts.length) {
      const stride = this.width + 1;
      const open: typeof this.cuts = [];
      for (const c of this.cuts) {
        if (c.k >= done) open.push({...c, k: c.k - done});
        else
          (taken ??= []).push({
            row: Math.floor(c.k / stride),
            cell: c.k % stride,
            kept: c.kept,
            chars: c.chars,
            byRow: c.byRow,
          });
      }
      this.cuts = open;
    }
    if (this.cutK >= 0) this.cutK -= done;
    this.countedTo -= bytes;
    if (this.countedK >= 0) this.countedK -= done;
    this.rowCountedK = Math.max(0, this.rowCountedK - done);
    return taken;
  }

  /** A row ended (rowK is where the next begins): nothing of it is counted or cut any more. */
  protected rowCounted(): void {
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
  protected checkSize(end: number, textEnd: number, partial = false): number {
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
  protected skip(pos: number): number {
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
  protected endSkip(from: number, at: number): number {
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
