import {keyedHash} from '../core/keyed-hash';
import {RecordShape} from '../sync/output-port';

const QUOTE = 34;
const BACKSLASH = 92;
const HEX = Buffer.from('0123456789abcdef');
const NULL = Buffer.from('null');
/** The letter JSON escapes a control character with (`\n`), by code; 0 for those written as `\u00XX`. */
const SHORT_ESCAPE = new Uint8Array(32);
for (const [code, letter] of [
  [8, 'b'],
  [9, 't'],
  [10, 'n'],
  [12, 'f'],
  [13, 'r'],
] as const)
  SHORT_ESCAPE[code] = letter.charCodeAt(0);

/**
 * Rows as one string holding every cell, and the cells' lengths (per row: its number of cells, then
 * each cell's length). Cheap to build, and to hand to a worker thread: two objects, not a string per cell.
 */
export interface PackedRows {
  text: string;
  lengths: Int32Array;
  rows: number;
}

export function packRows(rows: readonly (readonly string[])[]): PackedRows {
  let count = rows.length;
  for (const row of rows) count += row.length;
  const lengths = new Int32Array(count);
  // Appending makes a rope that is copied once, when posted: cheaper than joining row by row.
  let text = '';
  let k = 0;
  for (const row of rows) {
    lengths[k++] = row.length;
    for (const cell of row) {
      lengths[k++] = cell.length;
      text += cell;
    }
  }
  return {text, lengths, rows: rows.length};
}

/**
 * Writes text[from, to) at `pos` as a JSON string, UTF-8, byte for byte as JSON.stringify and
 * Buffer.write would make it (a lone surrogate escaped as `\udxxx`); returns where it ends. One
 * pass in JS: for cells of a few characters, a call into the runtime (a slice, a test, a write)
 * costs more than the loop. Writes at most 2 + 6 bytes a UTF-16 unit.
 */
function writeJsonString(text: string, from: number, to: number, buf: Buffer, pos: number): number {
  let at = pos;
  buf[at++] = QUOTE;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) {
      if (c >= 0x20 && c !== QUOTE && c !== BACKSLASH) {
        buf[at++] = c;
        continue;
      }
      buf[at++] = BACKSLASH;
      if (c >= 0x20) {
        buf[at++] = c;
      } else if (SHORT_ESCAPE[c] !== 0) {
        buf[at++] = SHORT_ESCAPE[c];
      } else {
        buf[at++] = 117; // u
        buf[at++] = 48;
        buf[at++] = 48;
        buf[at++] = HEX[c >> 4];
        buf[at++] = HEX[c & 15];
      }
    } else if (c < 0x800) {
      buf[at++] = 0xc0 | (c >> 6);
      buf[at++] = 0x80 | (c & 63);
    } else if (c < 0xd800 || c > 0xdfff) {
      buf[at++] = 0xe0 | (c >> 12);
      buf[at++] = 0x80 | ((c >> 6) & 63);
      buf[at++] = 0x80 | (c & 63);
    } else {
      const d = i + 1 < to ? text.charCodeAt(i + 1) : 0;
      if (c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff) {
        const point = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        buf[at++] = 0xf0 | (point >> 18);
        buf[at++] = 0x80 | ((point >> 12) & 63);
        buf[at++] = 0x80 | ((point >> 6) & 63);
        buf[at++] = 0x80 | (point & 63);
        i++;
      } else {
        buf[at++] = BACKSLASH;
        buf[at++] = 117; // u
        buf[at++] = HEX[c >> 12];
        buf[at++] = HEX[(c >> 8) & 15];
        buf[at++] = HEX[(c >> 4) & 15];
        buf[at++] = HEX[c & 15];
      }
    }
  }
  buf[at++] = QUOTE;
  return at;
}

/** A step of writing one record: bytes that are the same in every record, or cells of the row under their keys. */
type Step =
  | {kind: 'literal'; bytes: Buffer}
  /** The cells from index `from` on, each as `key` + its JSON string, or as `nullKey` when empty or missing. */
  | {kind: 'cells'; from: number; keys: Buffer[]; nullKeys: Buffer[]}
  /** One cell as `key` + its JSON string, also when empty ("" then); `nullKey` when the row lacks it. */
  | {kind: 'text'; index: number; key: Buffer; nullKey: Buffer}
  /** One cell as `key` + its keyed hash, or as `nullKey` when empty or missing. */
  | {kind: 'hash'; index: number; key: Buffer; nullKey: Buffer};

/** Steps and what bounds the bytes they write for a row. */
interface Steps {
  steps: Step[];
  /** Bytes of a record without its cells' text; values it holds (each at most two quotes). */
  fixedBytes: number;
  slots: number;
  /** Some step writes a cell's text (else the steps write only fixed bytes). */
  text: boolean;
}

/** A cell of a long shape's records: the bytes of its column's constants, and whether it is hashed. */
interface AnswerStep {
  index: number;
  constants: Buffer;
  hash: boolean;
}

interface Compiled extends Steps {
  /** The steps after the answer's fields, with the record's end; the answers (long shapes only). */
  answer?: {cells: AnswerStep[]; value: Buffer; number: Buffer; after: Steps};
  /** The most times one cell is written in a record. */
  repeats: number;
  /** Some step starts at a cell other than the first: each row's cell offsets are needed. */
  offsets: boolean;
}

/** HMAC-SHA-256 in hex and its quotes. */
const HASH_BYTES = 66;

function bounded(steps: Step[]): Steps {
  let fixedBytes = 0;
  let slots = 0;
  for (const step of steps) {
    if (step.kind === 'literal') fixedBytes += step.bytes.length;
    else if (step.kind === 'text') {
      fixedBytes += step.nullKey.length;
      slots++;
    } else if (step.kind === 'hash') fixedBytes += step.nullKey.length + HASH_BYTES;
    else {
      fixedBytes += step.nullKeys.reduce((sum, k) => sum + k.length, 0);
      slots += step.keys.length;
    }
  }
  return {steps, fixedBytes, slots, text: steps.some((step) => step.kind === 'cells' || step.kind === 'text')};
}

/**
 * A shape compiled into steps: keys escaped once, the constants and braces merged into literals, and
 * fields of consecutive cells merged into one run (a quest stream's row is one run and one literal).
 * A long shape's fields before its answer are one list of steps, those after it another.
 */
function compile(shape: RecordShape): Compiled {
  let steps: Step[] = [];
  let literal = '';
  let run: {from: number; keys: string[]} | undefined;
  let first = true;
  let answer: {cells: AnswerStep[]; value: Buffer; number: Buffer; before: Step[]} | undefined;
  const flush = (): void => {
    if (run) {
      const keys = run.keys.map((k) => Buffer.from(k));
      steps.push({kind: 'cells', from: run.from, keys, nullKeys: keys.map((k) => Buffer.concat([k, NULL]))});
    } else if (literal) steps.push({kind: 'literal', bytes: Buffer.from(literal)});
    run = undefined;
    literal = '';
  };
  const cell = (index: number, key: string): void => {
    if (literal || (run && run.from + run.keys.length !== index)) flush();
    run ??= {from: index, keys: []};
    run.keys.push(key);
  };
  const key = (name: string): string => {
    const head = `${first ? '' : ','}${JSON.stringify(name)}:`;
    first = false;
    return head;
  };
  const uses = new Map<number, number>();
  const use = (index: number): void => void uses.set(index, (uses.get(index) ?? 0) + 1);
  const single = (kind: 'text' | 'hash', index: number, head: string): void => {
    flush();
    use(index);
    steps.push({kind, index, key: Buffer.from(head), nullKey: Buffer.from(`${head}null`)});
  };
  for (const field of shape.fields) {
    // A run of cells ends at any other field; constants and braces gather into one literal.
    if (run && (field.kind !== 'cell' || field.hash)) flush();
    if (field.kind === 'answer') {
      if (answer) continue; // one per shape, as shapeRecords reads it
      flush();
      const cells = field.cells.map((c) => {
        const saved = first;
        const constants = c.constants.map((k) => key(k.name) + JSON.stringify(k.value)).join('');
        first = saved;
        use(c.index);
        return {index: c.index, constants: Buffer.from(constants), hash: c.hash === true};
      });
      // Every cell's constants have the same names; after them no key is the first.
      first = first && !field.cells.some((c) => c.constants.length > 0);
      answer = {cells, value: Buffer.from(key(field.value)), number: Buffer.from(key(field.number)), before: steps};
      steps = [];
    } else if (field.kind === 'constant') {
      literal += key(field.name) + JSON.stringify(field.value);
    } else if (field.kind === 'text') {
      single('text', field.index, key(field.name));
    } else if (field.kind === 'cell') {
      if (field.hash) single('hash', field.index, key(field.name));
      else {
        use(field.index);
        cell(field.index, key(field.name));
      }
    } else {
      literal += `${key(field.name)}{`;
      first = true;
      for (const c of field.cells) {
        if (c.hash) single('hash', c.index, key(c.key));
        else {
          use(c.index);
          cell(c.index, key(c.key));
        }
      }
      flush();
      first = false;
      literal += '}';
    }
  }
  if (run) flush();
  literal += '}}}\n';
  flush();
  const repeats = Math.max(1, ...uses.values());
  const all = [...(answer?.before ?? []), ...steps];
  const offsets =
    answer !== undefined ||
    all.some((s) => s.kind === 'text' || s.kind === 'hash' || (s.kind === 'cells' && s.from > 0));
  if (!answer) return {...bounded(steps), repeats, offsets};
  const {cells, value, number, before} = answer;
  return {...bounded(before), answer: {cells, value, number, after: bounded(steps)}, repeats, offsets};
}

/** Whether text[from, to) is a plain decimal number (PLAIN_NUMBER), checked without a slice. */
function isPlainNumber(text: string, from: number, to: number): boolean {
  let i = from;
  if (text.charCodeAt(i) === 45) i++; // -
  const digits = (): number => {
    const start = i;
    while (i < to && text.charCodeAt(i) >= 48 && text.charCodeAt(i) <= 57) i++;
    return i - start;
  };
  const first = text.charCodeAt(i);
  const whole = digits();
  if (whole === 0 || (whole > 1 && first === 48)) return false;
  if (i === to) return true;
  if (text.charCodeAt(i) !== 46) return false; // .
  i++;
  return digits() > 0 && i === to;
}

/**
 * Serialises rows of one stream as Airbyte RECORD lines, as their record shape says (see RecordShape),
 * encoded as UTF-8 straight into output buffers. The parts that are the same for every record
 * (stream name and namespace, escaped keys, constants) are encoded once, and each cell is escaped and
 * encoded in one pass: a row costs a copy per part instead of a JSON string per cell, a concatenated
 * line and a second encoding pass over it. A long shape writes a row's fields before its answer once,
 * and copies them into the record of each of its answers.
 */
export class RecordEncoder {
  private readonly compiled: Compiled;
  private readonly prefix: string;
  private readonly salt: string;
  /** Where each cell of the row being written starts in the packed text (when a step needs it). */
  private starts = new Int32Array(64);
  /** A long shape's row: its record's start, written once per row. */
  private rowHead = Buffer.allocUnsafeSlow(1024);

  constructor(readonly shape: RecordShape) {
    const {stream} = shape;
    const namespace = stream.namespace ? `"namespace":${JSON.stringify(stream.namespace)},` : '';
    this.prefix = `{"type":"RECORD","record":{${namespace}"stream":${JSON.stringify(stream.name)},"emitted_at":`;
    this.compiled = compile(shape);
    this.salt = shape.hashSalt ?? '';
  }

  /**
   * The rows as lines, in buffers of `batchBytes` (the last one partly filled; a line larger than a
   * batch gets a buffer of its own). Each buffer owns its memory, so it can be transferred.
   */
  encode(packed: PackedRows, emittedAt: number, batchBytes: number): Uint8Array[] {
    const {text, lengths} = packed;
    const {repeats, offsets, answer} = this.compiled;
    // The head's time stamp has at most 16 digits until the year 2286; `,"data":{` is 9 bytes.
    const headBytes = Buffer.byteLength(this.prefix) + 16 + 9;
    const head = Buffer.from(`${this.prefix}${emittedAt},"data":{`);
    const out: Uint8Array[] = [];
    let buf = Buffer.allocUnsafeSlow(batchBytes);
    let at = 0;
    const room = (most: number): void => {
      if (at + most <= buf.length) return;
      if (at > 0) out.push(buf.subarray(0, at));
      buf = Buffer.allocUnsafeSlow(Math.max(batchBytes, most));
      at = 0;
    };
    let k = 0;
    let pos = 0;
    for (let r = 0; r < packed.rows; r++) {
      const cells = lengths[k];
      if (offsets && cells > this.starts.length) this.starts = new Int32Array(Math.max(cells, 2 * this.starts.length));
      const starts = this.starts;
      let chars = 0;
      for (let i = 0; i < cells; i++) {
        if (offsets) starts[i] = pos + chars;
        chars += lengths[k + 1 + i];
      }
      const row: Row = {text, lengths, k, cells, pos};
      // A UTF-16 unit is at most 3 bytes of UTF-8, or 6 when JSON escapes it (\u001f).
      const most = (steps: Steps): number =>
        steps.fixedBytes + 2 * steps.slots + (steps.text ? 6 * repeats * chars : 0);
      if (!answer) {
        room(headBytes + most(this.compiled));
        buf.set(head, at);
        at = this.write(this.compiled.steps, row, buf, at + head.length);
      } else {
        const headMost = headBytes + most(this.compiled);
        if (headMost > this.rowHead.length)
          this.rowHead = Buffer.allocUnsafeSlow(Math.max(headMost, 2 * this.rowHead.length));
        head.copy(this.rowHead, 0);
        const headLength = this.write(this.compiled.steps, row, this.rowHead, head.length);
        const afterMost = most(answer.after);
        for (const cell of answer.cells) {
          const len = cell.index < cells ? lengths[k + 1 + cell.index] : 0;
          if (len === 0) continue;
          const from = starts[cell.index];
          room(
            headLength +
              cell.constants.length +
              answer.value.length +
              answer.number.length +
              6 * len +
              HASH_BYTES +
              len +
              4 +
              afterMost
          );
          this.rowHead.copy(buf, at, 0, headLength);
          at += headLength;
          buf.set(cell.constants, at);
          at += cell.constants.length;
          buf.set(answer.value, at);
          at += answer.value.length;
          at = cell.hash
            ? this.writeHash(text, from, from + len, buf, at)
            : writeJsonString(text, from, from + len, buf, at);
          buf.set(answer.number, at);
          at += answer.number.length;
          if (!cell.hash && isPlainNumber(text, from, from + len))
            at += buf.write(text.slice(from, from + len), at, 'latin1');
          else {
            buf.set(NULL, at);
            at += NULL.length;
          }
          at = this.write(answer.after.steps, row, buf, at);
        }
      }
      pos += chars;
      k += cells + 1;
    }
    if (at > 0) out.push(buf.subarray(0, at));
    return out;
  }

  /** The row's part of a record, as the steps say, at `at`; returns where it ends. */
  private write(steps: readonly Step[], row: Row, buf: Buffer, at: number): number {
    const {text, lengths, k, cells, pos} = row;
    const starts = this.starts;
    for (let s = 0; s < steps.length; s++) {
      const step = steps[s];
      if (step.kind === 'literal') {
        buf.set(step.bytes, at);
        at += step.bytes.length;
      } else if (step.kind === 'cells') {
        const {from, keys, nullKeys} = step;
        let p = from === 0 ? pos : starts[from];
        for (let j = 0; j < keys.length; j++) {
          const i = from + j;
          const len = i < cells ? lengths[k + 1 + i] : 0;
          if (len === 0) {
            const key = nullKeys[j];
            buf.set(key, at);
            at += key.length;
            continue;
          }
          const key = keys[j];
          buf.set(key, at);
          at = writeJsonString(text, p, p + len, buf, at + key.length);
          p += len;
        }
      } else {
        const len = step.index < cells ? lengths[k + 1 + step.index] : 0;
        if (step.index >= cells || (step.kind === 'hash' && len === 0)) {
          buf.set(step.nullKey, at);
          at += step.nullKey.length;
          continue;
        }
        buf.set(step.key, at);
        const from = starts[step.index];
        at =
          step.kind === 'hash'
            ? this.writeHash(text, from, from + len, buf, at + step.key.length)
            : writeJsonString(text, from, from + len, buf, at + step.key.length);
      }
    }
    return at;
  }

  private writeHash(text: string, from: number, to: number, buf: Buffer, at: number): number {
    buf[at] = QUOTE;
    at += 1 + buf.write(keyedHash(this.salt, text.slice(from, to)), at + 1, 'latin1');
    buf[at] = QUOTE;
    return at + 1;
  }
}

/** The row being written: the packed text and lengths, where its lengths and its text start. */
interface Row {
  text: string;
  lengths: Int32Array;
  k: number;
  cells: number;
  pos: number;
}
