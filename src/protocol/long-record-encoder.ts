import {CellCut, QUOTE, RowBatch} from '../csv/rows';
import {cellNumber, RecordField, RecordShape} from '../sync/output-port';
import {copy, jsonKey, writeText} from './json-bytes';
import {
  CellHasher,
  Encoder,
  encodeRows,
  END,
  HASH_BYTES,
  RecordEncoder,
  RowCuts,
  RowPart,
  rowLines,
} from './record-encoder';

const NULL = Buffer.from('null');

/**
 * Whether the cell's text bytes[i, e) is a number `value_number` takes (cellNumber in output-port.ts):
 * a plain decimal number, and when it has more than 15 digits, one whose value a double holds (up to
 * 15 significant digits always read back the same: DBL_DIG).
 */
function plainNumber(bytes: Uint8Array, i: number, e: number): boolean {
  const start = i;
  if (i < e && bytes[i] === 45) i++; // -
  const digits = i;
  while (i < e && bytes[i] >= 48 && bytes[i] <= 57) i++;
  if (i === digits || (i - digits > 1 && bytes[digits] === 48)) return false;
  let count = i - digits;
  if (i < e) {
    if (bytes[i] !== 46) return false; // .
    const fraction = ++i;
    while (i < e && bytes[i] >= 48 && bytes[i] <= 57) i++;
    if (i === fraction || i !== e) return false;
    count += i - fraction;
  }
  return (
    count <= 15 ||
    cellNumber(Buffer.from(bytes.buffer, bytes.byteOffset + start, e - start).toString('latin1')) !== null
  );
}

/**
 * The literal bytes a long shape writes around each answer (RecordField 'answer'), joined so that a
 * record costs few copies: the row's part, the column's `open`, the value, then `nullEnd` alone, or
 * `numberKey`, the digits and `tailEnd`. A record with changes (meta.changes) ends with `tail` and
 * the encoder's end instead.
 */
interface AnswerPart {
  /** Per answer cell: its index in the row, whether it is hashed. */
  cells: Int32Array;
  hash: Uint8Array;
  /** Per answer cell: its constants and the value's key, up to the value's opening quote. */
  open: Buffer[];
  /** The value's closing quote and the number's key. */
  numberKey: Buffer;
  /** The constants after the answer and the close of `data`. */
  tail: Buffer;
  /** The tail and the end of a record without changes. */
  tailEnd: Buffer;
  /** numberKey, null and tailEnd: the rest of a record without changes whose value is no number. */
  nullEnd: Buffer;
  /** The most bytes of one answer's record beside the row's part and its cell's text. */
  fixedBytes: number;
}

/** The bytes a long shape writes around each answer (RecordField 'answer'); only constants may follow it. */
function answerPart(fields: readonly RecordField[], at: number, endBytes: number): AnswerPart {
  const field = fields[at];
  if (field.kind !== 'answer') throw new Error('answerPart: not an answer field');
  const first = at === 0;
  const noConstants = field.cells.every((c) => c.constants.length === 0);
  const valueKey = jsonKey(field.value, first && noConstants);
  const open = field.cells.map((c) =>
    Buffer.from(
      c.constants.map((k, i) => jsonKey(k.name, first && i === 0) + JSON.stringify(k.value)).join('') + valueKey
    )
  );
  let tail = '';
  for (const after of fields.slice(at + 1)) {
    if (after.kind !== 'constant') throw new Error(`a long shape has only constants after its answer (${after.kind})`);
    tail += jsonKey(after.name, false) + JSON.stringify(after.value);
  }
  const numberKey = Buffer.from(`"${jsonKey(field.number, false)}`);
  const close = Buffer.from(`${tail}}`);
  const tailEnd = Buffer.concat([close, END]);
  const most = Math.max(0, ...open.map((c) => c.length));
  return {
    cells: Int32Array.from(field.cells.map((c) => c.index)),
    hash: Uint8Array.from(field.cells.map((c) => (c.hash ? 1 : 0))),
    open,
    numberKey,
    tail: close,
    tailEnd,
    nullEnd: Buffer.concat([numberKey, NULL, tailEnd]),
    // The value's opening quote, its hash (a text's bytes are counted by the caller), the number's key and null.
    fixedBytes: most + 1 + HASH_BYTES + numberKey.length + NULL.length + close.length + endBytes,
  };
}

/**
 * A long shape's encoder (an `answer` field): it writes the row's fields before the answer once per
 * row (with a wide encoder of those fields, through RowPart), and copies them into the record of
 * each non-empty answer cell, with the answer as text and, where the cell is a number
 * `value_number` takes, as a number. A record costs three or four copies of literals (AnswerPart)
 * and one pass over the cell's bytes: the hot path of a layout that writes several times the bytes
 * per cell of the wide one (docs/benchmarks.md, the long layout's cost per cell).
 */
class LongRecordEncoder implements Encoder {
  private readonly part: RowPart;
  private readonly answer: AnswerPart;
  private readonly hasher: CellHasher;
  /** The row part (head and the fields before the answer), written once per row. */
  private rowPart = new Uint8Array(1024);

  constructor(
    readonly shape: RecordShape,
    at: number
  ) {
    this.part = new RecordEncoder(shape);
    this.answer = answerPart(shape.fields, at, this.part.endBytes);
    this.hasher = new CellHasher(shape.hashSalt ?? '');
  }

  head(emittedAt: number): Buffer {
    return this.part.head(emittedAt);
  }

  /** The most bytes row r of the batch can take as its lines. */
  most(batch: RowBatch, r: number): number {
    const k = r * (batch.width + 1);
    const {cells, width} = batch;
    const answer = this.answer;
    const part = this.part.fieldsMost(batch, k);
    let most = 0;
    for (let a = 0; a < answer.cells.length; a++) {
      const i = answer.cells[a];
      if (i >= width) continue;
      const length = cells[k + i + 1] - 1 - cells[k + i];
      // The row's part, the answer's fixed bytes, its text escaped and its number as it is (or its hash).
      if (length > 0) most += part + answer.fixedBytes + 7 * length;
    }
    return most;
  }

  /** A long shape's records of the row whose cells begin at cells[k]: one per non-empty answer cell. */
  row(batch: RowBatch, k: number, head: Buffer, buf: Uint8Array, at: number, cuts: RowCuts): number {
    const {answer, part: fields} = this;
    const {bytes, cells, width} = batch;
    const most = fields.fieldsMost(batch, k);
    if (most > this.rowPart.length) this.rowPart = new Uint8Array(Math.max(most, 2 * this.rowPart.length));
    const part = this.rowPart.subarray(0, fields.fields(batch, k, copy(head, this.rowPart, 0), this.rowPart));
    // Most rows have no change to tell: their records end with literals alone.
    const plain = fields.unchanged && cuts.count === 0;
    let o = at;
    for (let a = 0; a < answer.cells.length; a++) {
      const index = answer.cells[a];
      if (index >= width) continue;
      const start = cells[k + index];
      const end = cells[k + index + 1] - 1;
      const quoted = bytes[start] === QUOTE && end > start;
      if (end - start === (quoted ? 2 : 0)) continue;
      // The cell's text: a quoted cell's lies inside its quotes.
      const from = quoted ? start + 1 : start;
      const to = quoted ? end - 1 : end;
      o = copy(answer.open[a], buf, copy(part, buf, o));
      const hashed = answer.hash[a] === 1;
      o = hashed ? this.hasher.write(bytes, start, end, buf, o) : writeText(bytes, from, to, quoted, buf, o);
      const number = !hashed && plainNumber(bytes, from, to);
      if (plain && !number) {
        o = copy(answer.nullEnd, buf, o);
        continue;
      }
      o = copy(answer.numberKey, buf, o);
      if (number) {
        // The number digit for digit, as the cell has it.
        for (let i = from; i < to; i++) buf[o++] = bytes[i];
      } else o = copy(NULL, buf, o);
      if (plain) {
        o = copy(answer.tailEnd, buf, o);
        continue;
      }
      let cut: CellCut | undefined;
      for (let c = cuts.from; c < cuts.from + cuts.count; c++) if (cuts.cuts[c].cell === index) cut = cuts.cuts[c];
      o = fields.end(buf, copy(answer.tail, buf, o), cuts, cut);
    }
    return o;
  }

  encode(batch: RowBatch, emittedAt: number, batchBytes: number): Uint8Array[] {
    return encodeRows(this, batch, emittedAt, batchBytes);
  }

  lines(batch: RowBatch, emittedAt: number, bufferFor: (need: number) => Uint8Array): Generator<Uint8Array> {
    return rowLines(this, batch, emittedAt, bufferFor);
  }
}

/** The encoder of a shape: a long one (with an `answer` field) or a wide one. */
export function recordEncoder(shape: RecordShape): Encoder {
  const at = shape.fields.findIndex((f) => f.kind === 'answer');
  return at < 0 ? new RecordEncoder(shape) : new LongRecordEncoder(shape, at);
}
