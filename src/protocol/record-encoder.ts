import {keyedHash} from '../core/keyed-hash';
import {cellText, decodeWtf8, QUOTE, RowBatch} from '../csv/rows';
import {RecordField, RecordShape} from '../sync/output-port';

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

/** A cell hashed: HMAC-SHA-256 in hex, 64 bytes between its quotes. */
const HASH_BYTES = 64;
const NULL = Buffer.from('null');

/**
 * Whether the raw cell bytes[start, end) is a plain decimal number (PLAIN_NUMBER in output-port.ts):
 * its bytes, without the quotes of a quoted cell, as its text; else undefined.
 */
function plainNumber(bytes: Uint8Array, start: number, end: number): [number, number] | undefined {
  let i = start;
  let e = end;
  if (e - i >= 2 && bytes[i] === QUOTE) {
    i++;
    e--;
  }
  const from = i;
  if (bytes[i] === 45) i++; // -
  const digits = i;
  while (i < e && bytes[i] >= 48 && bytes[i] <= 57) i++;
  if (i === digits || (i - digits > 1 && bytes[digits] === 48)) return undefined;
  if (i < e) {
    if (bytes[i] !== 46) return undefined; // .
    const fraction = ++i;
    while (i < e && bytes[i] >= 48 && bytes[i] <= 57) i++;
    if (i === fraction || i < e) return undefined;
  }
  return [from, e];
}

/** The fields a long shape writes around each answer: the answer field, and the constants after it. */
interface AnswerPart {
  /** Per answer cell: its index in the row, its constants' bytes, whether it is hashed. */
  cells: Int32Array;
  constants: Buffer[];
  hash: Uint8Array;
  value: Buffer;
  number: Buffer;
  /** The constants after the answer and the record's end. */
  tail: Buffer;
  /** Bytes of one answer's record beside its cell and the row's part: the most of constants, keys and tail. */
  fixedBytes: number;
}

/**
 * Serialises rows of one stream as Airbyte RECORD lines, encoded as UTF-8 straight from the CSV's
 * bytes into output buffers. The record's fields are compiled once into literal bytes around the
 * cells (keys, fixed values, braces), so a row costs a copy per cell of a literal and one pass
 * over each cell's bytes: no string, no JSON.stringify. Empty cells become null (the CSV cannot
 * tell an empty answer from none), unless their field keeps them. A hashed cell is the one place a
 * cell becomes a string: its keyed hash is written instead. A long shape (an `answer` field) writes
 * the row's fields before the answer once per row, and copies them into the record of each
 * non-empty answer cell.
 */
export class RecordEncoder {
  /** Before the emitted_at time stamp, and after it up to the first cell. */
  private readonly prefix: string;
  private readonly lead: string;
  /** Per cell written: its index in the row, whether an empty one is "" rather than null, whether it is hashed. */
  private readonly cells: Int32Array;
  private readonly keepEmpty: Uint8Array;
  private readonly hash: Uint8Array;
  /** Per cell written: the bytes that follow it (its closing quote, or null, then the literal up to the next). */
  private readonly close: Buffer[];
  private readonly nullClose: Buffer[];
  private readonly emptyClose: Buffer[];
  private readonly fixedBytes: number;
  private readonly salt: string;
  private readonly answer?: AnswerPart;
  /** A long shape's row part (head and the fields before the answer), written once per row. */
  private rowPart = new Uint8Array(1024);
  /** A hashed cell's text. */
  private text = new Uint8Array(256);

  constructor(readonly shape: RecordShape) {
    const {stream, fields} = shape;
    this.salt = shape.hashSalt ?? '';
    const namespace = stream.namespace ? `"namespace":${JSON.stringify(stream.namespace)},` : '';
    this.prefix = `{"type":"RECORD","record":{${namespace}"stream":${JSON.stringify(stream.name)},"emitted_at":`;
    const literals: string[] = [];
    const cells: number[] = [];
    const keep: number[] = [];
    const hash: number[] = [];
    let literal = ',"data":{';
    const key = (name: string, first: boolean): string => `${first ? '' : ','}${JSON.stringify(name)}:`;
    const cell = (index: number, keepEmpty: boolean, hashed?: boolean): void => {
      literals.push(literal);
      cells.push(index);
      keep.push(keepEmpty ? 1 : 0);
      hash.push(hashed ? 1 : 0);
      literal = '';
    };
    const at = fields.findIndex((f) => f.kind === 'answer');
    const before = at < 0 ? fields : fields.slice(0, at);
    // Keys go out in the shape's order, each escaped by JSON.stringify: any header text is a key.
    before.forEach((field, f) => {
      if (field.kind === 'answer') return;
      literal += key(field.name, f === 0);
      if (field.kind === 'constant') literal += JSON.stringify(field.value);
      else if (field.kind === 'cell' || field.kind === 'text')
        cell(field.index, field.kind === 'text', field.kind === 'cell' && field.hash);
      else {
        literal += '{';
        field.cells.forEach((c, i) => {
          literal += key(c.key, i === 0);
          cell(c.index, false, c.hash);
        });
        literal += '}';
      }
    });
    if (at < 0) literals.push(`${literal}}}}\n`);
    else {
      literals.push(literal);
      this.answer = answerPart(fields, at, key);
    }
    this.lead = literals[0];
    this.cells = Int32Array.from(cells);
    this.keepEmpty = Uint8Array.from(keep);
    this.hash = Uint8Array.from(hash);
    const after = literals.slice(1);
    this.close = after.map((l) => Buffer.from(`"${l}`));
    this.nullClose = after.map((l) => Buffer.from(`null${l}`));
    this.emptyClose = after.map((l) => Buffer.from(`""${l}`));
    // The time stamp has at most 16 digits until the year 2286; a cell's opening quote is 1 byte.
    this.fixedBytes =
      Buffer.byteLength(this.prefix) +
      16 +
      Buffer.byteLength(this.lead) +
      after.reduce(
        (sum, _, j) => sum + Math.max(this.close[j].length + 1 + this.hash[j] * HASH_BYTES, this.nullClose[j].length),
        0
      );
  }

  /** The start of every line of a batch: up to the first cell, with the batch's time stamp. */
  head(emittedAt: number): Buffer {
    return Buffer.from(`${this.prefix}${emittedAt}${this.lead}`);
  }

  /** The most bytes row r of the batch can take as its line (or, for a long shape, its lines). */
  most(batch: RowBatch, r: number): number {
    const k = r * (batch.width + 1);
    const {cells, width} = batch;
    const answer = this.answer;
    if (!answer) return this.fixedBytes + 6 * (cells[k + width] - cells[k]);
    const rowMost = this.partMost(batch, k);
    let most = 0;
    for (let a = 0; a < answer.cells.length; a++) {
      const i = answer.cells[a];
      if (i >= width) continue;
      const length = cells[k + i + 1] - 1 - cells[k + i];
      // The row's part, the answer's fixed bytes, the value escaped, the number as it is (or its hash).
      if (length > 0) most += rowMost + answer.fixedBytes + 7 * length;
    }
    return most;
  }

  /**
   * Writes rows from `from` on as lines into buf at `at`, as many as surely fit; returns the next
   * row to write and where the bytes end. None fits when the first row needs more than the room left.
   */
  fill(batch: RowBatch, from: number, head: Buffer, buf: Uint8Array, at: number): {next: number; end: number} {
    const stride = batch.width + 1;
    let o = at;
    let r = from;
    for (; r < batch.rows; r++) {
      if (this.answer) {
        if (o + this.most(batch, r) > buf.length) break;
        o = this.answers(batch, r * stride, head, buf, o);
        continue;
      }
      const k = r * stride;
      if (o + this.fixedBytes + 6 * (batch.cells[k + batch.width] - batch.cells[k]) > buf.length) break;
      o = this.fields(batch, k, copy(head, buf, o), buf);
    }
    return {next: r, end: o};
  }

  /** The row's fields (from the head on) at o; returns where they end. */
  private fields(batch: RowBatch, k: number, at: number, buf: Uint8Array): number {
    const {bytes, cells, width} = batch;
    const refs = this.cells;
    const {keepEmpty, hash, close, nullClose, emptyClose} = this;
    let o = at;
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
        o = copy(keepEmpty[j] ? emptyClose[j] : nullClose[j], buf, o);
        continue;
      }
      o = hash[j] ? this.writeHash(bytes, cells[c], cells[c + 1] - 1, buf, o) : writeText(bytes, i, e, quoted, buf, o);
      o = copy(close[j], buf, o);
    }
    return o;
  }

  /** The most bytes a long shape's row part (head and the fields before the answer) takes: from its own cells only. */
  private partMost(batch: RowBatch, k: number): number {
    let chars = 0;
    for (let j = 0; j < this.cells.length; j++) {
      const i = this.cells[j];
      if (i < batch.width) chars += batch.cells[k + i + 1] - batch.cells[k + i];
    }
    return this.fixedBytes + 6 * chars;
  }

  /** A long shape's records of the row whose cells begin at cells[k]: one per non-empty answer cell. */
  private answers(batch: RowBatch, k: number, head: Buffer, buf: Uint8Array, at: number): number {
    const answer = this.answer as AnswerPart;
    const {bytes, cells, width} = batch;
    const partMost = this.partMost(batch, k);
    if (partMost > this.rowPart.length) this.rowPart = new Uint8Array(Math.max(partMost, 2 * this.rowPart.length));
    const part = this.rowPart;
    const partEnd = this.fields(batch, k, copy(head, part, 0), part);
    let o = at;
    for (let a = 0; a < answer.cells.length; a++) {
      const index = answer.cells[a];
      if (index >= width) continue;
      const start = cells[k + index];
      const end = cells[k + index + 1] - 1;
      const quoted = bytes[start] === QUOTE && end > start;
      if (end - start === (quoted ? 2 : 0)) continue;
      buf.set(part.subarray(0, partEnd), o);
      o += partEnd;
      o = copy(answer.constants[a], buf, o);
      o = copy(answer.value, buf, o);
      const number = answer.hash[a] ? undefined : plainNumber(bytes, start, end);
      if (answer.hash[a]) o = this.writeHash(bytes, start, end, buf, o);
      else {
        o = writeText(bytes, quoted ? start + 1 : start, quoted ? end - 1 : end, quoted, buf, o);
      }
      buf[o++] = QUOTE;
      o = copy(answer.number, buf, o);
      if (number) {
        buf.set(bytes.subarray(number[0], number[1]), o);
        o += number[1] - number[0];
      } else o = copy(NULL, buf, o);
      o = copy(answer.tail, buf, o);
    }
    return o;
  }

  /** The keyed hash of the raw cell bytes[start, end) as `"<hex>` (the caller closes it); returns where it ends. */
  private writeHash(bytes: Uint8Array, start: number, end: number, buf: Uint8Array, at: number): number {
    if (this.text.length < end - start) this.text = new Uint8Array(Math.max(end - start, 2 * this.text.length));
    const value = decodeWtf8(this.text, 0, cellText(bytes, start, end, this.text, 0));
    buf[at] = QUOTE;
    return (
      at +
      1 +
      Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength).write(keyedHash(this.salt, value), at + 1, 'latin1')
    );
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

/** `"` and the text of a cell, bytes[i, e), escaped for JSON (a quoted cell's doubled quotes once); returns where it ends. */
function writeText(bytes: Uint8Array, start: number, e: number, quoted: boolean, buf: Uint8Array, at: number): number {
  let o = at;
  buf[o++] = QUOTE;
  for (let i = start; i < e; i++) {
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
  return o;
}

/** The bytes a long shape writes around each answer (see RecordField 'answer'); only constants may follow it. */
function answerPart(
  fields: readonly RecordField[],
  at: number,
  key: (name: string, first: boolean) => string
): AnswerPart {
  const field = fields[at];
  if (field.kind !== 'answer') throw new Error('answerPart: not an answer field');
  const first = at === 0;
  const constants = field.cells.map((c) =>
    Buffer.from(c.constants.map((k, i) => key(k.name, first && i === 0) + JSON.stringify(k.value)).join(''))
  );
  const noConstants = field.cells.every((c) => c.constants.length === 0);
  let tail = '';
  for (const after of fields.slice(at + 1)) {
    if (after.kind !== 'constant') throw new Error(`a long shape has only constants after its answer (${after.kind})`);
    tail += key(after.name, false) + JSON.stringify(after.value);
  }
  const value = Buffer.from(key(field.value, first && noConstants));
  const number = Buffer.from(key(field.number, false));
  const end = Buffer.from(`${tail}}}}\n`);
  const most = Math.max(0, ...constants.map((c) => c.length));
  return {
    cells: Int32Array.from(field.cells.map((c) => c.index)),
    constants,
    hash: Uint8Array.from(field.cells.map((c) => (c.hash ? 1 : 0))),
    value,
    number,
    tail: end,
    fixedBytes: most + value.length + 2 + HASH_BYTES + number.length + NULL.length + end.length,
  };
}
