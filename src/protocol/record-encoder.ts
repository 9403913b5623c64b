import {keyedHash} from '../core/keyed-hash';
import {writeRfc3339} from '../core/time-text';
import {CellCut, cellText, decodeWtf8, QUOTE, RowBatch} from '../csv/rows';
import {RecordShape, truncatedCell, unreadableTime} from '../sync/output-port';
import {copy, jsonKey, writeText} from './json-bytes';

/** How a cell is written: as text (empty is null), as text kept when empty, as a time (RFC 3339), or as its keyed hash. */
const CELL = 0;
const TEXT = 1;
const TIME = 2;
const HASH = 3;
/** A hashed cell: HMAC-SHA-256 in hex, 64 bytes between its quotes. */
export const HASH_BYTES = 64;
/** The change of a long record whose answer was cut, to its row's bound or to the cell's. */
const ANSWER_CUT_BY_ROW = Buffer.from(JSON.stringify(truncatedCell('value', true)));
const ANSWER_CUT_BY_CELL = Buffer.from(JSON.stringify(truncatedCell('value', false)));
const ANSWER_CUT_LONGEST = Math.max(ANSWER_CUT_BY_ROW.length, ANSWER_CUT_BY_CELL.length);

/** The end of a record, and of one with changes (`meta.changes`, between the two). */
export const END = Buffer.from('}}\n');
const META_OPEN = Buffer.from(',"meta":{"changes":[');
const META_CLOSE = Buffer.from(']}}}\n');

/** The cuts (csv/bound-cuts.ts) of the row being written: `count` of `cuts` from index `from`. */
export interface RowCuts {
  cuts: readonly CellCut[];
  from: number;
  count: number;
}

/** An encoder of a shape's rows as RECORD lines: what the output sinks use. */
export interface Encoder {
  readonly shape: RecordShape;
  /** The rows as lines, in buffers of `batchBytes` (a line larger than that gets a buffer of its own). */
  encode(batch: RowBatch, emittedAt: number, batchBytes: number): Uint8Array[];
  /** The rows as lines, a buffer at a time, each `bufferFor(need)`. */
  lines(batch: RowBatch, emittedAt: number, bufferFor: (need: number) => Uint8Array): Generator<Uint8Array>;
}

/** How an encoder writes one row: what the shared loop over a batch (fill, rowLines) asks of it. */
interface RowWriter {
  head(emittedAt: number): Buffer;
  /** The most bytes row r of the batch can take as its lines. */
  most(batch: RowBatch, r: number): number;
  /** The lines of the row whose cells begin at cells[k], at o; returns where they end. */
  row(batch: RowBatch, k: number, head: Buffer, buf: Uint8Array, o: number, cuts: RowCuts): number;
}

/**
 * What a long shape's encoder takes from the wide encoder of its row part (the fields before the
 * answer): the part is written once per row and copied into each answer's record.
 */
export interface RowPart {
  head(emittedAt: number): Buffer;
  /** The most bytes the head and fields of the row whose cells begin at cells[k] take. */
  fieldsMost(batch: RowBatch, k: number): number;
  /** Writes the row's fields after the head at `at`, counting their changes; returns where they end. */
  fields(batch: RowBatch, k: number, at: number, buf: Uint8Array): number;
  /** Whether no field of the row written last changed. */
  readonly unchanged: boolean;
  /** A record's end, with the changes of the row written last, its cuts and the answer's cut. */
  end(buf: Uint8Array, at: number, cuts: RowCuts, answerCut?: CellCut): number;
  /** The most bytes a record's end takes. */
  readonly endBytes: number;
}

/**
 * Serialises rows of one stream as Airbyte RECORD lines, encoded as UTF-8 straight from the CSV's
 * bytes into output buffers. The record's fields are compiled once into literal bytes around the
 * cells (keys, fixed values, braces), so a row costs a copy per cell of a literal and one pass
 * over each cell's bytes: no string, no JSON.stringify. Empty cells become null (the CSV cannot
 * tell an empty answer from none), unless their field keeps them. A time field's cell is written
 * as RFC 3339 in UTC; one that is not a time is null, and the record says so in `meta.changes`. A
 * hashed cell is the one cell made a string: its keyed hash is written instead. A long shape (an
 * `answer` field) is written by LongRecordEncoder (long-record-encoder.ts), which writes the fields
 * before its answer with one of these (RowPart); `recordEncoder` picks.
 */
export class RecordEncoder implements Encoder, RowPart {
  /** Before the emitted_at time stamp, and after it up to the first cell. */
  private readonly prefix: string;
  private readonly lead: string;
  /** Per cell written: its index in the row, and how it is written (CELL, TEXT, TIME, HASH). */
  private readonly cells: Int32Array;
  private readonly kinds: Uint8Array;
  /** Per cell written: the bytes that follow it (its closing quote, or null, then the literal up to the next). */
  private readonly close: Buffer[];
  private readonly nullClose: Buffer[];
  private readonly emptyClose: Buffer[];
  /** Per cell written: its entry of meta.changes when it is nulled (a time that is not one). */
  private readonly nulled: Buffer[];
  /** Per cell written: its entry of meta.changes when it was cut to its bound, or to its row's. */
  private readonly cutByCell: Buffer[];
  private readonly cutByRow: Buffer[];
  /** The cells of the row being written that changed, and how many. */
  private readonly changed: Int32Array;
  private changes = 0;
  private readonly fixedBytes: number;
  readonly endBytes: number;
  /** The most times one cell is written in a record: each costs up to 6 bytes a byte of the cell. */
  private readonly repeats: number;
  private readonly hasher: CellHasher;

  constructor(readonly shape: RecordShape) {
    const {stream, fields} = shape;
    this.hasher = new CellHasher(shape.hashSalt ?? '');
    const namespace = stream.namespace ? `"namespace":${JSON.stringify(stream.namespace)},` : '';
    this.prefix = `{"type":"RECORD","record":{${namespace}"stream":${JSON.stringify(stream.name)},"emitted_at":`;
    const literals: string[] = [];
    const cells: number[] = [];
    const kinds: number[] = [];
    const names: string[] = [];
    let literal = ',"data":{';
    const cell = (index: number, kind: number, name: string): void => {
      literals.push(literal);
      cells.push(index);
      kinds.push(kind);
      names.push(name);
      literal = '';
    };
    const at = fields.findIndex((f) => f.kind === 'answer');
    // Keys go out in the shape's order, each escaped by JSON.stringify: any header text is a key.
    (at < 0 ? fields : fields.slice(0, at)).forEach((field, f) => {
      if (field.kind === 'answer') return;
      literal += jsonKey(field.name, f === 0);
      if (field.kind === 'constant') literal += JSON.stringify(field.value);
      else if (field.kind === 'cell') cell(field.index, field.hash ? HASH : CELL, field.name);
      else if (field.kind === 'text') cell(field.index, TEXT, field.name);
      else if (field.kind === 'time') cell(field.index, TIME, field.name);
      else {
        literal += '{';
        field.cells.forEach((c, i) => {
          literal += jsonKey(c.key, i === 0);
          cell(c.index, c.hash ? HASH : CELL, `${field.name}.${c.key}`);
        });
        literal += '}';
      }
    });
    // A long shape's row part ends where its answers' records go on.
    literals.push(at < 0 ? `${literal}}` : literal);
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
    // At most two changes a cell written: cut (by a row's bound: the longer entry), and nulled; and the answer's cut.
    const changes = names.reduce((sum, _, j) => sum + this.nulled[j].length + this.cutByRow[j].length + 2, 0);
    this.endBytes = META_OPEN.length + changes + ANSWER_CUT_LONGEST + 1 + META_CLOSE.length;
    // The time stamp has at most 16 digits until the year 2286; a cell's opening quote is 1 byte.
    this.fixedBytes =
      Buffer.byteLength(this.prefix) +
      16 +
      Buffer.byteLength(this.lead) +
      after.reduce(
        (sum, _, j) =>
          sum + Math.max(this.close[j].length + 1 + (kinds[j] === HASH ? HASH_BYTES : 0), this.nullClose[j].length),
        0
      ) +
      this.endBytes;
  }

  /** The start of every line of a batch: up to the first cell, with the batch's time stamp. */
  head(emittedAt: number): Buffer {
    return Buffer.from(`${this.prefix}${emittedAt}${this.lead}`);
  }

  /** The most bytes row r of the batch can take as its line. */
  most(batch: RowBatch, r: number): number {
    const k = r * (batch.width + 1);
    return this.fixedBytes + 6 * this.repeats * (batch.cells[k + batch.width] - batch.cells[k]);
  }

  /** The most bytes the head and fields of the row whose cells begin at cells[k] take: from its own cells. */
  fieldsMost(batch: RowBatch, k: number): number {
    let bytes = 0;
    for (let j = 0; j < this.cells.length; j++) {
      const i = this.cells[j];
      if (i < batch.width) bytes += batch.cells[k + i + 1] - batch.cells[k + i];
    }
    return this.fixedBytes + 6 * this.repeats * bytes;
  }

  /** The line of the row whose cells begin at cells[k], at o; returns where it ends. */
  row(batch: RowBatch, k: number, head: Buffer, buf: Uint8Array, o: number, cuts: RowCuts): number {
    return this.end(buf, this.fields(batch, k, copy(head, buf, o), buf), cuts);
  }

  /** Whether no field of the row written last changed (a time nulled). */
  get unchanged(): boolean {
    return this.changes === 0;
  }

  /** The row's fields after the head at o, its changes counted; returns where they end. */
  fields(batch: RowBatch, k: number, at: number, buf: Uint8Array): number {
    const {bytes, cells, width} = batch;
    const refs = this.cells;
    const {kinds, close, nullClose, emptyClose, changed} = this;
    let o = at;
    let changes = 0;
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
      o =
        kinds[j] === HASH
          ? this.hasher.write(bytes, cells[c], cells[c + 1] - 1, buf, o)
          : writeText(bytes, i, e, quoted, buf, o);
      o = copy(close[j], buf, o);
    }
    this.changes = changes;
    return o;
  }

  /**
   * The end of a record: with the changes of the row's fields (meta.changes), if any: times nulled,
   * cells cut to a bound (and for a long record, its answer cut: `answerCut`).
   */
  end(buf: Uint8Array, at: number, {cuts, from, count}: RowCuts, answerCut?: CellCut): number {
    const refs = this.cells;
    if (this.changes === 0 && count === 0) return copy(END, buf, at);
    let o = copy(META_OPEN, buf, at);
    let entries = 0;
    for (let n = 0; n < this.changes; n++) {
      if (entries++ > 0) buf[o++] = 44; // ,
      o = copy(this.nulled[this.changed[n]], buf, o);
    }
    for (let c = from; c < from + count; c++) {
      const cut = cuts[c];
      for (let j = 0; j < refs.length; j++) {
        if (refs[j] !== cut.cell) continue;
        if (entries++ > 0) buf[o++] = 44;
        o = copy(cut.byRow ? this.cutByRow[j] : this.cutByCell[j], buf, o);
      }
    }
    if (answerCut) {
      if (entries++ > 0) buf[o++] = 44;
      o = copy(answerCut.byRow ? ANSWER_CUT_BY_ROW : ANSWER_CUT_BY_CELL, buf, o);
    }
    // Nothing to say after all (cuts of cells no field writes): no meta.
    if (entries === 0) return copy(END, buf, at);
    return copy(META_CLOSE, buf, o);
  }

  encode(batch: RowBatch, emittedAt: number, batchBytes: number): Uint8Array[] {
    return encodeRows(this, batch, emittedAt, batchBytes);
  }

  lines(batch: RowBatch, emittedAt: number, bufferFor: (need: number) => Uint8Array): Generator<Uint8Array> {
    return rowLines(this, batch, emittedAt, bufferFor);
  }
}

/** A keyed hash of cells: HMAC-SHA-256 under the salt, written as hex. */
export class CellHasher {
  /** A hashed cell's text. */
  private text = new Uint8Array(256);

  constructor(private readonly salt: string) {}

  /** The keyed hash of the raw cell bytes[start, end) as `"<hex>` (the caller closes it); returns where it ends. */
  write(bytes: Uint8Array, start: number, end: number, buf: Uint8Array, at: number): number {
    if (this.text.length < end - start) this.text = new Uint8Array(Math.max(end - start, 2 * this.text.length));
    const value = decodeWtf8(this.text, 0, cellText(bytes, start, end, this.text, 0));
    const hex = keyedHash(this.salt, value);
    buf[at] = QUOTE;
    for (let i = 0; i < hex.length; i++) buf[at + 1 + i] = hex.charCodeAt(i);
    return at + 1 + hex.length;
  }
}

/**
 * Writes rows from `from` on as lines into buf at `at`, as many as surely fit; returns the next row
 * to write and where the bytes end. None fits when the first row needs more than the room left.
 */
function fill(
  rows: RowWriter,
  batch: RowBatch,
  from: number,
  head: Buffer,
  buf: Uint8Array,
  at: number
): {next: number; end: number} {
  const stride = batch.width + 1;
  // One object for every row of the call (the hot path allocates nothing a row).
  const cuts: RowCuts = {cuts: batch.cuts ?? [], from: 0, count: 0};
  let nextCut = 0;
  while (nextCut < cuts.cuts.length && cuts.cuts[nextCut].row < from) nextCut++;
  let o = at;
  let r = from;
  for (; r < batch.rows; r++, nextCut += cuts.count) {
    let cutsOfRow = 0;
    while (nextCut + cutsOfRow < cuts.cuts.length && cuts.cuts[nextCut + cutsOfRow].row === r) cutsOfRow++;
    cuts.from = nextCut;
    cuts.count = cutsOfRow;
    if (o + rows.most(batch, r) > buf.length) break;
    o = rows.row(batch, r * stride, head, buf, o, cuts);
  }
  return {next: r, end: o};
}

/**
 * The rows as lines, a buffer at a time: each buffer is `bufferFor(need)` (at least `need` bytes,
 * the next line's most), filled as far as it goes, and given before the next one is asked for.
 */
export function* rowLines(
  rows: RowWriter,
  batch: RowBatch,
  emittedAt: number,
  bufferFor: (need: number) => Uint8Array
): Generator<Uint8Array> {
  const head = rows.head(emittedAt);
  for (let r = 0; r < batch.rows;) {
    const buf = bufferFor(rows.most(batch, r));
    const {next, end} = fill(rows, batch, r, head, buf, 0);
    yield buf.subarray(0, end);
    r = next;
  }
}

/**
 * The rows as lines, in buffers of `batchBytes` (the last one partly filled; a line larger than a
 * batch gets a buffer of its own). Each buffer owns its memory, so it can be transferred.
 */
export function encodeRows(rows: RowWriter, batch: RowBatch, emittedAt: number, batchBytes: number): Uint8Array[] {
  return [...rowLines(rows, batch, emittedAt, (need) => Buffer.allocUnsafeSlow(Math.max(batchBytes, need)))];
}
