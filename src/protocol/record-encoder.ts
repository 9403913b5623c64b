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
  | {kind: 'text'; index: number; key: Buffer; nullKey: Buffer};

interface Compiled {
  steps: Step[];
  /** Bytes of a record without its cells' text; values it holds (each at most two quotes). */
  fixedBytes: number;
  slots: number;
  /** The most times one cell is written in a record. */
  repeats: number;
  /** Some step starts at a cell other than the first: each row's cell offsets are needed. */
  offsets: boolean;
}

/**
 * A shape compiled into steps: keys escaped once, the constants and braces merged into literals, and
 * fields of consecutive cells merged into one run (a quest stream's row is one run and one literal).
 */
function compile(shape: RecordShape): Compiled {
  const steps: Step[] = [];
  let literal = '';
  let run: {from: number; keys: string[]} | undefined;
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
  const key = (name: string, first: boolean): string => `${first ? '' : ','}${JSON.stringify(name)}:`;
  const uses = new Map<number, number>();
  const use = (index: number): void => void uses.set(index, (uses.get(index) ?? 0) + 1);
  shape.fields.forEach((field, f) => {
    const head = key(field.name, f === 0);
    // A run of cells ends at any other field; constants and braces gather into one literal.
    if (run && field.kind !== 'cell') flush();
    if (field.kind === 'constant') {
      literal += head + JSON.stringify(field.value);
    } else if (field.kind === 'text') {
      flush();
      use(field.index);
      steps.push({kind: 'text', index: field.index, key: Buffer.from(head), nullKey: Buffer.from(`${head}null`)});
    } else if (field.kind === 'cell') {
      use(field.index);
      cell(field.index, head);
    } else {
      literal += `${head}{`;
      field.keys.forEach((k, i) => (use(i), cell(i, key(k, i === 0))));
      flush();
      literal += '}';
    }
  });
  if (run) flush();
  literal += '}}}\n';
  flush();
  let fixedBytes = 0;
  let slots = 0;
  for (const step of steps) {
    if (step.kind === 'literal') fixedBytes += step.bytes.length;
    else if (step.kind === 'text') {
      fixedBytes += step.nullKey.length;
      slots++;
    } else {
      fixedBytes += step.nullKeys.reduce((sum, k) => sum + k.length, 0);
      slots += step.keys.length;
    }
  }
  const offsets = steps.some((step) => step.kind === 'text' || (step.kind === 'cells' && step.from > 0));
  return {steps, fixedBytes, slots, repeats: Math.max(1, ...uses.values()), offsets};
}

/**
 * Serialises rows of one stream as Airbyte RECORD lines, as their record shape says (see RecordShape),
 * encoded as UTF-8 straight into output buffers. The parts that are the same for every record
 * (stream name and namespace, escaped keys, constants) are encoded once, and each cell is escaped and
 * encoded in one pass: a row costs a copy per part instead of a JSON string per cell, a concatenated
 * line and a second encoding pass over it.
 */
export class RecordEncoder {
  private readonly compiled: Compiled;
  private readonly prefix: string;
  /** Where each cell of the row being written starts in the packed text (when a step needs it). */
  private starts = new Int32Array(64);

  constructor(readonly shape: RecordShape) {
    const {stream} = shape;
    const namespace = stream.namespace ? `"namespace":${JSON.stringify(stream.namespace)},` : '';
    this.prefix = `{"type":"RECORD","record":{${namespace}"stream":${JSON.stringify(stream.name)},"emitted_at":`;
    this.compiled = compile(shape);
  }

  /**
   * The rows as lines, in buffers of `batchBytes` (the last one partly filled; a line larger than a
   * batch gets a buffer of its own). Each buffer owns its memory, so it can be transferred.
   */
  encode(packed: PackedRows, emittedAt: number, batchBytes: number): Uint8Array[] {
    const {text, lengths} = packed;
    const {steps, slots, repeats, offsets} = this.compiled;
    // The head's time stamp has at most 16 digits until the year 2286; `,"data":{` is 9 bytes.
    const fixedBytes = Buffer.byteLength(this.prefix) + 16 + 9 + this.compiled.fixedBytes;
    const head = Buffer.from(`${this.prefix}${emittedAt},"data":{`);
    const out: Uint8Array[] = [];
    let buf = Buffer.allocUnsafeSlow(batchBytes);
    let at = 0;
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
      // A UTF-16 unit is at most 3 bytes of UTF-8, or 6 when JSON escapes it (\u001f).
      const most = fixedBytes + 2 * slots + 6 * repeats * chars;
      if (at + most > buf.length) {
        if (at > 0) out.push(buf.subarray(0, at));
        buf = Buffer.allocUnsafeSlow(Math.max(batchBytes, most));
        at = 0;
      }
      buf.set(head, at);
      at += head.length;
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
        } else if (step.index < cells) {
          buf.set(step.key, at);
          const from = starts[step.index];
          at = writeJsonString(text, from, from + lengths[k + 1 + step.index], buf, at + step.key.length);
        } else {
          buf.set(step.nullKey, at);
          at += step.nullKey.length;
        }
      }
      pos += chars;
      k += cells + 1;
    }
    if (at > 0) out.push(buf.subarray(0, at));
    return out;
  }
}
