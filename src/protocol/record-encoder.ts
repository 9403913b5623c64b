import {writeRfc3339} from '../core/time-text';
import {CellCut, QUOTE, RowBatch} from '../csv/rows';
import {RecordShape, truncatedCell, unreadableTime} from '../sync/output-port';

const BACKSLASH = 92;
const HEX = Buffer.from('0123456789abcdef');
/**
 * Per byte of a cell's UTF-8: 0 when JSON takes it as it is; else the letter JSON escapes a control
 * character with (`\n`), 1 for one written `\u00XX`, 2 for a quote or backslash, 3 for the first
 * byte of a lone surrogate's three (0xED, see decoder.ts encodeWtf8).
 */
const ESCAPE = new Uint8Array(256);
for (let c = 0; c < 32; c++) ESCAPE[c] = 1;
for (const [code, letter] of [
  [8, 'b'],
  [9, 't'],
  [10, 'n'],
  [12, 'f'],
  [13, 'r'],
] as const)
  ESCAPE[code] = letter.charCodeAt(0);
ESCAPE[QUOTE] = 2;
ESCAPE[BACKSLASH] = 2;
ESCAPE[0xed] = 3;

/**
 * Writes the JSON escape of the byte b[i] (one ESCAPE marks) at out[o]; returns where it ends. A
 * lone surrogate's three bytes (0xED then 0xA0 or more: never in valid UTF-8) become `\udxxx`; any
 * other 0xED starts an ordinary character and is written as it is.
 */
function writeEscape(b: Uint8Array, i: number, out: Uint8Array, o: number): number {
  const c = b[i];
  const kind = ESCAPE[c];
  if (kind === 2) {
    out[o] = BACKSLASH;
    out[o + 1] = c;
    return o + 2;
  }
  if (kind === 3) {
    if (b[i + 1] < 0xa0) {
      out[o] = c;
      return o + 1;
    }
    const unit = 0xd000 | ((b[i + 1] & 0x3f) << 6) | (b[i + 2] & 0x3f);
    out[o] = BACKSLASH;
    out[o + 1] = 117; // u
    out[o + 2] = HEX[unit >> 12];
    out[o + 3] = HEX[(unit >> 8) & 15];
    out[o + 4] = HEX[(unit >> 4) & 15];
    out[o + 5] = HEX[unit & 15];
    return o + 6;
  }
  out[o] = BACKSLASH;
  if (kind !== 1) {
    out[o + 1] = kind;
    return o + 2;
  }
  out[o + 1] = 117; // u
  out[o + 2] = 48;
  out[o + 3] = 48;
  out[o + 4] = HEX[c >> 4];
  out[o + 5] = HEX[c & 15];
  return o + 6;
}

function copy(from: Uint8Array, out: Uint8Array, o: number): number {
  out.set(from, o);
  return o + from.length;
}

/** How a cell is written: as text (empty is null), as text kept when empty, or as a time (RFC 3339). */
const CELL = 0;
const TEXT = 1;
const TIME = 2;

/** The end of a record, and of one with changes (`meta.changes`, between the two). */
const END = Buffer.from('}}\n');
const META_OPEN = Buffer.from(',"meta":{"changes":[');
const META_CLOSE = Buffer.from(']}}}\n');

/**
 * Serialises rows of one stream as Airbyte RECORD lines, encoded as UTF-8 straight from the CSV's
 * bytes into output buffers. The record's fields are compiled once into literal bytes around the
 * cells (keys, fixed values, braces), so a row costs a copy per cell of a literal and one pass
 * over each cell's bytes: no string, no JSON.stringify. Empty cells become null (the CSV cannot
 * tell an empty answer from none), unless their field keeps them. A time field's cell is written
 * as RFC 3339 in UTC; one that is not a time is null, and the record says so in `meta.changes`.
 */
export class RecordEncoder {
  /** Before the emitted_at time stamp, and after it up to the first cell. */
  private readonly prefix: string;
  private readonly lead: string;
  /** Per cell written: its index in the row, and how it is written (CELL, TEXT, TIME). */
  private readonly cells: Int32Array;
  private readonly kinds: Uint8Array;
  /** Per cell written: the bytes that follow it (its closing quote, or null, then the literal up to the next). */
  private readonly close: Buffer[];
  private readonly nullClose: Buffer[];
  private readonly emptyClose: Buffer[];
  /** Per cell written: its entry of meta.changes when it is nulled (a time that is not one), or cut to a bound. */
  private readonly nulled: Buffer[];
  private readonly cutByCell: Buffer[];
  private readonly cutByRow: Buffer[];
  /** The cells of the row being written that changed. */
  private readonly changed: Int32Array;
  private readonly fixedBytes: number;
  /** The most times one cell is written in a record: each costs up to 6 bytes a byte of the cell. */
  private readonly repeats: number;

  constructor(readonly shape: RecordShape) {
    const {stream, fields} = shape;
    const namespace = stream.namespace ? `"namespace":${JSON.stringify(stream.namespace)},` : '';
    this.prefix = `{"type":"RECORD","record":{${namespace}"stream":${JSON.stringify(stream.name)},"emitted_at":`;
    const literals: string[] = [];
    const cells: number[] = [];
    const kinds: number[] = [];
    const names: string[] = [];
    let literal = ',"data":{';
    const key = (name: string, first: boolean): string => `${first ? '' : ','}${JSON.stringify(name)}:`;
    // A cell inside an object is named by its path in meta.changes: `answers.Q1`.
    const cell = (index: number, kind: number, name: string): void => {
      literals.push(literal);
      cells.push(index);
      kinds.push(kind);
      names.push(name);
      literal = '';
    };
    // Keys go out in the shape's order, each escaped by JSON.stringify: any header text is a key.
    fields.forEach((field, f) => {
      literal += key(field.name, f === 0);
      if (field.kind === 'constant') literal += JSON.stringify(field.value);
      else if (field.kind === 'cell') cell(field.index, CELL, field.name);
      else if (field.kind === 'text') cell(field.index, TEXT, field.name);
      else if (field.kind === 'time') cell(field.index, TIME, field.name);
      else {
        literal += '{';
        field.keys.forEach((name, i) => {
          literal += key(name, i === 0);
          cell(i, CELL, `${field.name}.${name}`);
        });
        literal += '}';
      }
    });
    literals.push(`${literal}}`);
    this.lead = literals[0];
    this.cells = Int32Array.from(cells);
    this.kinds = Uint8Array.from(kinds);
    this.changed = new Int32Array(cells.length);
    const after = literals.slice(1);
    this.close = after.map((l) => Buffer.from(`"${l}`));
    this.nullClose = after.map((l) => Buffer.from(`null${l}`));
    this.emptyClose = after.map((l) => Buffer.from(`""${l}`));
    this.nulled = names.map((name) => Buffer.from(JSON.stringify(unreadableTime(name))));
    this.cutByCell = names.map((name) => Buffer.from(JSON.stringify(truncatedCell(name, false))));
    this.cutByRow = names.map((name) => Buffer.from(JSON.stringify(truncatedCell(name, true))));
    const uses = new Map<number, number>();
    for (const index of cells) uses.set(index, (uses.get(index) ?? 0) + 1);
    this.repeats = Math.max(1, ...uses.values());
    // At most two changes a cell written: cut (by a row's bound: the longer entry), and nulled.
    const changes = names.reduce((sum, _, j) => sum + this.nulled[j].length + this.cutByRow[j].length + 2, 0);
    // The time stamp has at most 16 digits until the year 2286; a cell's opening quote is 1 byte.
    this.fixedBytes =
      Buffer.byteLength(this.prefix) +
      16 +
      Buffer.byteLength(this.lead) +
      after.reduce((sum, _, j) => sum + Math.max(this.close[j].length + 1, this.nullClose[j].length), 0) +
      META_OPEN.length +
      changes +
      META_CLOSE.length;
  }

  /** The start of every line of a batch: up to the first cell, with the batch's time stamp. */
  head(emittedAt: number): Buffer {
    return Buffer.from(`${this.prefix}${emittedAt}${this.lead}`);
  }

  /** The most bytes row r of the batch can take as a line. */
  most(batch: RowBatch, r: number): number {
    const k = r * (batch.width + 1);
    return this.fixedBytes + 6 * this.repeats * (batch.cells[k + batch.width] - batch.cells[k]);
  }

  /**
   * Writes rows from `from` on as lines into buf at `at`, as many as surely fit; returns the next
   * row to write and where the bytes end. None fits when the first row needs more than the room left.
   */
  fill(batch: RowBatch, from: number, head: Buffer, buf: Uint8Array, at: number): {next: number; end: number} {
    const {bytes, cells, rows, width} = batch;
    const refs = this.cells;
    const {kinds, close, nullClose, emptyClose, changed, repeats} = this;
    const stride = width + 1;
    const cuts = batch.cuts;
    let nextCut = 0;
    if (cuts) while (nextCut < cuts.length && cuts[nextCut].row < from) nextCut++;
    let o = at;
    let r = from;
    for (; r < rows; r++) {
      const k = r * stride;
      if (o + this.fixedBytes + 6 * repeats * (cells[k + width] - cells[k]) > buf.length) break;
      o = copy(head, buf, o);
      let changes = 0;
      let cutsOfRow = 0;
      if (cuts) while (nextCut + cutsOfRow < cuts.length && cuts[nextCut + cutsOfRow].row === r) cutsOfRow++;
      for (let j = 0; j < refs.length; j++) {
        if (refs[j] >= width) {
          // A field of a cell the file's rows do not have.
          o = copy(nullClose[j], buf, o);
          continue;
        }
        const c = k + refs[j];
        let i = cells[c];
        let e = cells[c + 1] - 1;
        // The cell's text: a quoted cell's lies inside its quotes, with each quote in it doubled.
        const quoted = bytes[i] === QUOTE && e > i;
        if (quoted) {
          i++;
          e--;
        }
        if (i === e) {
          o = copy(kinds[j] === TEXT ? emptyClose[j] : nullClose[j], buf, o);
          continue;
        }
        if (kinds[j] === TIME) {
          // A time has no quote, so a quoted one's text is its bytes inside the quotes.
          const end = writeRfc3339(bytes, i, e, buf, o + 1);
          if (end < 0) {
            o = copy(nullClose[j], buf, o);
            changed[changes++] = j;
          } else {
            buf[o] = QUOTE;
            o = copy(close[j], buf, end);
          }
          continue;
        }
        buf[o++] = QUOTE;
        for (; i < e; i++) {
          const ch = bytes[i];
          if (ESCAPE[ch] === 0) {
            buf[o++] = ch;
            continue;
          }
          o = writeEscape(bytes, i, buf, o);
          if (ch === QUOTE) {
            if (quoted) i++;
          } else if (ch === 0xed && bytes[i + 1] >= 0xa0) {
            i += 2;
          }
        }
        o = copy(close[j], buf, o);
      }
      if (changes === 0 && cutsOfRow === 0) {
        o = copy(END, buf, o);
        continue;
      }
      o = copy(META_OPEN, buf, o);
      let entries = 0;
      for (let n = 0; n < changes; n++) {
        if (entries++ > 0) buf[o++] = 44; // ,
        o = copy(this.nulled[changed[n]], buf, o);
      }
      for (let c = nextCut; c < nextCut + cutsOfRow; c++) {
        const cut = (cuts as CellCut[])[c];
        for (let j = 0; j < refs.length; j++) {
          if (refs[j] !== cut.cell) continue;
          if (entries++ > 0) buf[o++] = 44;
          o = copy(cut.byRow ? this.cutByRow[j] : this.cutByCell[j], buf, o);
        }
      }
      nextCut += cutsOfRow;
      o = copy(META_CLOSE, buf, o);
    }
    return {next: r, end: o};
  }

  /**
   * The rows as lines, in buffers of `batchBytes` (the last one partly filled; a line larger than a
   * batch gets a buffer of its own). Each buffer owns its memory, so it can be transferred.
   */
  encode(batch: RowBatch, emittedAt: number, batchBytes: number): Uint8Array[] {
    const head = this.head(emittedAt);
    const out: Uint8Array[] = [];
    let r = 0;
    while (r < batch.rows) {
      const buf = Buffer.allocUnsafeSlow(Math.max(batchBytes, this.most(batch, r)));
      const {next, end} = this.fill(batch, r, head, buf, 0);
      out.push(buf.subarray(0, end));
      r = next;
    }
    return out;
  }
}
