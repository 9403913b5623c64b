import {keyedHash} from '../core/keyed-hash';
import {writeRfc3339} from '../core/time-text';
import {CellCut, cellText, decodeWtf8, QUOTE, RowBatch} from '../csv/rows';
import {RecordField, RecordShape, truncatedCell, unreadableTime} from '../sync/output-port';

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

/** How a cell is written: as text (empty is null), as text kept when empty, as a time (RFC 3339), or as its keyed hash. */
const CELL = 0;
const TEXT = 1;
const TIME = 2;
const HASH = 3;
/** A hashed cell: HMAC-SHA-256 in hex, 64 bytes between its quotes. */
const HASH_BYTES = 64;
const NULL = Buffer.from('null');
/** The change of a long record whose answer was cut (to its row's bound: the longer entry). */
const ANSWER_CUT = Buffer.from(JSON.stringify(truncatedCell('value', true)));

/** The end of a record, and of one with changes (`meta.changes`, between the two). */
const END = Buffer.from('}}\n');
const META_OPEN = Buffer.from(',"meta":{"changes":[');
const META_CLOSE = Buffer.from(']}}}\n');

/**
 * Whether the raw cell bytes[start, end) is a plain decimal number (PLAIN_NUMBER in output-port.ts):
 * where its text lies (inside the quotes of a quoted cell), else undefined.
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

/** What a long shape writes around each answer (RecordField 'answer'). */
interface AnswerPart {
  /** Per answer cell: its index in the row, its constants' bytes, whether it is hashed. */
  cells: Int32Array;
  constants: Buffer[];
  hash: Uint8Array;
  value: Buffer;
  number: Buffer;
  /** The constants after the answer and the close of `data`. */
  tail: Buffer;
  /** The most bytes of one answer's record beside the row's part and its cell's text. */
  fixedBytes: number;
}

/**
 * Serialises rows of one stream as Airbyte RECORD lines, encoded as UTF-8 straight from the CSV's
 * bytes into output buffers. The record's fields are compiled once into literal bytes around the
 * cells (keys, fixed values, braces), so a row costs a copy per cell of a literal and one pass
 * over each cell's bytes: no string, no JSON.stringify. Empty cells become null (the CSV cannot
 * tell an empty answer from none), unless their field keeps them. A time field's cell is written
 * as RFC 3339 in UTC; one that is not a time is null, and the record says so in `meta.changes`. A
 * hashed cell is the one cell made a string: its keyed hash is written instead. A long shape (an
 * `answer` field) writes the row's fields before the answer once per row, and copies them into the
 * record of each non-empty answer cell.
 */
export class RecordEncoder {
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
  /** The batch's cuts of the row being written: from this index of `cuts`, this many. */
  private cuts: readonly CellCut[] = [];
  private cutFrom = 0;
  private cutCount = 0;
  /** The cells of the row being written that changed, and how many. */
  private readonly changed: Int32Array;
  private changes = 0;
  private readonly fixedBytes: number;
  /** The most bytes a record's end takes (with its meta.changes). */
  private readonly endBytes: number;
  /** The most times one cell is written in a record: each costs up to 6 bytes a byte of the cell. */
  private readonly repeats: number;
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
    const kinds: number[] = [];
    const names: string[] = [];
    let literal = ',"data":{';
    const key = (name: string, first: boolean): string => `${first ? '' : ','}${JSON.stringify(name)}:`;
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
      literal += key(field.name, f === 0);
      if (field.kind === 'constant') literal += JSON.stringify(field.value);
      else if (field.kind === 'cell') cell(field.index, field.hash ? HASH : CELL, field.name);
      else if (field.kind === 'text') cell(field.index, TEXT, field.name);
      else if (field.kind === 'time') cell(field.index, TIME, field.name);
      else {
        literal += '{';
        field.cells.forEach((c, i) => {
          literal += key(c.key, i === 0);
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
    this.endBytes = META_OPEN.length + changes + ANSWER_CUT.length + 1 + META_CLOSE.length;
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
    if (at >= 0) this.answer = answerPart(fields, at, key, this.endBytes);
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
    if (!answer) return this.fixedBytes + 6 * this.repeats * (cells[k + width] - cells[k]);
    const part = this.partMost(batch, k);
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

  /**
   * Writes rows from `from` on as lines into buf at `at`, as many as surely fit; returns the next
   * row to write and where the bytes end. None fits when the first row needs more than the room left.
   */
  fill(batch: RowBatch, from: number, head: Buffer, buf: Uint8Array, at: number): {next: number; end: number} {
    const stride = batch.width + 1;
    const cuts = batch.cuts ?? [];
    let nextCut = 0;
    while (nextCut < cuts.length && cuts[nextCut].row < from) nextCut++;
    this.cuts = cuts;
    let o = at;
    let r = from;
    for (; r < batch.rows; r++, nextCut += this.cutCount) {
      const k = r * stride;
      let cutsOfRow = 0;
      while (nextCut + cutsOfRow < cuts.length && cuts[nextCut + cutsOfRow].row === r) cutsOfRow++;
      this.cutFrom = nextCut;
      this.cutCount = cutsOfRow;
      if (this.answer) {
        if (o + this.most(batch, r) > buf.length) break;
        o = this.answers(batch, k, head, buf, o);
        continue;
      }
      if (o + this.fixedBytes + 6 * this.repeats * (batch.cells[k + batch.width] - batch.cells[k]) > buf.length) break;
      o = this.end(buf, this.fields(batch, k, copy(head, buf, o), buf));
    }
    return {next: r, end: o};
  }

  /** The row's fields after the head at o, its changes counted; returns where they end. */
  private fields(batch: RowBatch, k: number, at: number, buf: Uint8Array): number {
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
          ? this.writeHash(bytes, cells[c], cells[c + 1] - 1, buf, o)
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
  private end(buf: Uint8Array, at: number, answerCut?: CellCut): number {
    const {cuts, cutFrom, cutCount, cells: refs} = this;
    if (this.changes === 0 && cutCount === 0) return copy(END, buf, at);
    let o = copy(META_OPEN, buf, at);
    let entries = 0;
    for (let n = 0; n < this.changes; n++) {
      if (entries++ > 0) buf[o++] = 44; // ,
      o = copy(this.nulled[this.changed[n]], buf, o);
    }
    for (let c = cutFrom; c < cutFrom + cutCount; c++) {
      const cut = cuts[c];
      for (let j = 0; j < refs.length; j++) {
        if (refs[j] !== cut.cell) continue;
        if (entries++ > 0) buf[o++] = 44;
        o = copy(cut.byRow ? this.cutByRow[j] : this.cutByCell[j], buf, o);
      }
    }
    if (answerCut) {
      if (entries++ > 0) buf[o++] = 44;
      o = copy(answerCut.byRow ? ANSWER_CUT : Buffer.from(JSON.stringify(truncatedCell('value', false))), buf, o);
    }
    // Nothing to say after all (cuts of cells no field writes): no meta.
    if (entries === 0) return copy(END, buf, at);
    return copy(META_CLOSE, buf, o);
  }

  /** The most bytes a long shape's row part (head and the fields before the answer) takes: from its own cells. */
  private partMost(batch: RowBatch, k: number): number {
    let bytes = 0;
    for (let j = 0; j < this.cells.length; j++) {
      const i = this.cells[j];
      if (i < batch.width) bytes += batch.cells[k + i + 1] - batch.cells[k + i];
    }
    return this.fixedBytes + 6 * this.repeats * bytes;
  }

  /** A long shape's records of the row whose cells begin at cells[k]: one per non-empty answer cell. */
  private answers(batch: RowBatch, k: number, head: Buffer, buf: Uint8Array, at: number): number {
    const answer = this.answer as AnswerPart;
    const {bytes, cells, width} = batch;
    const most = this.partMost(batch, k);
    if (most > this.rowPart.length) this.rowPart = new Uint8Array(Math.max(most, 2 * this.rowPart.length));
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
      o = copy(answer.constants[a], buf, o + partEnd);
      o = copy(answer.value, buf, o);
      const hashed = answer.hash[a] === 1;
      o = hashed
        ? this.writeHash(bytes, start, end, buf, o)
        : writeText(bytes, quoted ? start + 1 : start, quoted ? end - 1 : end, quoted, buf, o);
      buf[o++] = QUOTE;
      o = copy(answer.number, buf, o);
      const number = hashed ? undefined : plainNumber(bytes, start, end);
      if (number) {
        buf.set(bytes.subarray(number[0], number[1]), o);
        o += number[1] - number[0];
      } else o = copy(NULL, buf, o);
      let cut: CellCut | undefined;
      for (let c = this.cutFrom; c < this.cutFrom + this.cutCount; c++)
        if (this.cuts[c].cell === index) cut = this.cuts[c];
      o = this.end(buf, copy(answer.tail, buf, o), cut);
    }
    return o;
  }

  /** The keyed hash of the raw cell bytes[start, end) as `"<hex>` (the caller closes it); returns where it ends. */
  private writeHash(bytes: Uint8Array, start: number, end: number, buf: Uint8Array, at: number): number {
    if (this.text.length < end - start) this.text = new Uint8Array(Math.max(end - start, 2 * this.text.length));
    const value = decodeWtf8(this.text, 0, cellText(bytes, start, end, this.text, 0));
    const hex = keyedHash(this.salt, value);
    buf[at] = QUOTE;
    for (let i = 0; i < hex.length; i++) buf[at + 1 + i] = hex.charCodeAt(i);
    return at + 1 + hex.length;
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

/** `"` and the text bytes[start, e) escaped for JSON (a quoted cell's doubled quotes once); returns where it ends. */
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

/** The bytes a long shape writes around each answer (RecordField 'answer'); only constants may follow it. */
function answerPart(
  fields: readonly RecordField[],
  at: number,
  key: (name: string, first: boolean) => string,
  endBytes: number
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
  const end = Buffer.from(`${tail}}`);
  const most = Math.max(0, ...constants.map((c) => c.length));
  return {
    cells: Int32Array.from(field.cells.map((c) => c.index)),
    constants,
    hash: Uint8Array.from(field.cells.map((c) => (c.hash ? 1 : 0))),
    value,
    number,
    tail: end,
    fixedBytes: most + value.length + 2 + HASH_BYTES + number.length + NULL.length + end.length + endBytes,
  };
}
