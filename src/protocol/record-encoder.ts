import {RecordShape} from '../sync/output-port';

const QUOTE = 34;
const BACKSLASH = 92;
const HEX = Buffer.from('0123456789abcdef');
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
  /** Cells by index, each as `key` + its JSON string, or as `nullKey` when empty or missing. */
  | {kind: 'cells'; indexes: Int32Array; keys: Buffer[]; nullKeys: Buffer[]}
  /** One cell as `key` + its JSON string, also when empty ("" then); `nullKey` when the row lacks it. */
  | {kind: 'text'; index: number; key: Buffer; nullKey: Buffer};

/** A shape compiled into steps: keys escaped once, the constants and braces merged into literals. */
function compile(shape: RecordShape): {steps: Step[]; fixedBytes: number; slots: number; repeats: number} {
  const steps: Step[] = [];
  let literal = '';
  const flush = (): void => {
    if (literal) steps.push({kind: 'literal', bytes: Buffer.from(literal)});
    literal = '';
  };
  const key = (name: string, first: boolean): string => `${first ? '' : ','}${JSON.stringify(name)}:`;
  const uses = new Map<number, number>();
  const use = (index: number): void => void uses.set(index, (uses.get(index) ?? 0) + 1);
  shape.fields.forEach((field, f) => {
    const head = key(field.name, f === 0);
    if (field.kind === 'constant') {
      literal += head + JSON.stringify(field.value);
      return;
    }
    if (field.kind === 'cells') literal += `${head}{`;
    flush();
    if (field.kind === 'text') {
      use(field.index);
      steps.push({kind: 'text', index: field.index, key: Buffer.from(head), nullKey: Buffer.from(`${head}null`)});
      return;
    }
    const names = field.kind === 'cell' ? [head] : field.keys.map((k, i) => key(k, i === 0));
    const indexes = field.kind === 'cell' ? [field.index] : field.keys.map((_, i) => i);
    indexes.forEach(use);
    const keys = names.map((name) => Buffer.from(name));
    const nullKeys = keys.map((k) => Buffer.concat([k, Buffer.from('null')]));
    steps.push({kind: 'cells', indexes: Int32Array.from(indexes), keys, nullKeys});
    if (field.kind === 'cells') literal += '}';
  });
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
  return {steps, fixedBytes, slots, repeats: Math.max(1, ...uses.values())};
}

/**
 * Serialises rows of one stream as Airbyte RECORD lines, as their record shape says (see RecordShape),
 * encoded as UTF-8 straight into output buffers. The parts that are the same for every record
 * (stream name and namespace, escaped keys, constants) are encoded once, and each cell is escaped and
 * encoded in one pass: a row costs a copy per part instead of a JSON string per cell, a concatenated
 * line and a second encoding pass over it.
 */
export class RecordEncoder {
  private readonly steps: readonly Step[];
  private readonly prefix: string;
  private readonly fixedBytes: number;
  /** Values a record holds (each at most two quotes), and the most times one cell is written in it. */
  private readonly slots: number;
  private readonly repeats: number;
  /** Where each cell of the row being written starts in the packed text. */
  private starts = new Int32Array(64);

  constructor(readonly shape: RecordShape) {
    const {stream} = shape;
    const namespace = stream.namespace ? `"namespace":${JSON.stringify(stream.namespace)},` : '';
    this.prefix = `{"type":"RECORD","record":{${namespace}"stream":${JSON.stringify(stream.name)},"emitted_at":`;
    const compiled = compile(shape);
    this.steps = compiled.steps;
    this.slots = compiled.slots;
    this.repeats = compiled.repeats;
    // The head's time stamp has at most 16 digits until the year 2286; `,"data":{` is 9 bytes.
    this.fixedBytes = Buffer.byteLength(this.prefix) + 16 + 9 + compiled.fixedBytes;
  }

  /**
   * The rows as lines, in buffers of `batchBytes` (the last one partly filled; a line larger than a
   * batch gets a buffer of its own). Each buffer owns its memory, so it can be transferred.
   */
  encode(packed: PackedRows, emittedAt: number, batchBytes: number): Uint8Array[] {
    const {text, lengths} = packed;
    const steps = this.steps;
    const head = Buffer.from(`${this.prefix}${emittedAt},"data":{`);
    const out: Uint8Array[] = [];
    let buf = Buffer.allocUnsafeSlow(batchBytes);
    let at = 0;
    let k = 0;
    let pos = 0;
    for (let r = 0; r < packed.rows; r++) {
      const cells = lengths[k];
      if (cells > this.starts.length) this.starts = new Int32Array(Math.max(cells, 2 * this.starts.length));
      const starts = this.starts;
      let chars = 0;
      for (let i = 0; i < cells; i++) {
        starts[i] = pos + chars;
        chars += lengths[k + 1 + i];
      }
      // A UTF-16 unit is at most 3 bytes of UTF-8, or 6 when JSON escapes it (\u001f).
      const most = this.fixedBytes + 2 * this.slots + 6 * this.repeats * chars;
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
          const {indexes, keys, nullKeys} = step;
          for (let j = 0; j < indexes.length; j++) {
            const i = indexes[j];
            const len = i < cells ? lengths[k + 1 + i] : 0;
            if (len === 0) {
              const key = nullKeys[j];
              buf.set(key, at);
              at += key.length;
              continue;
            }
            const key = keys[j];
            buf.set(key, at);
            at = writeJsonString(text, starts[i], starts[i] + len, buf, at + key.length);
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
