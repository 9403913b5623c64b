import {StreamRef} from '../sync/output-port';

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

/** What a RecordEncoder is made from; plain data, so that a worker thread can build the same one. */
export interface EncoderSpec {
  stream: StreamRef;
  columns: readonly string[];
  constants: Readonly<Record<string, string>>;
}

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

/**
 * Serialises rows of one stream as Airbyte RECORD lines, encoded as UTF-8 straight into output
 * buffers. The parts that are the same for every record (stream name and namespace, escaped column
 * names, the connector's own fields) are encoded once, and each cell is escaped and encoded in one
 * pass: a row costs a copy per part instead of a JSON string per cell, a concatenated line and a
 * second encoding pass over it. Empty cells become null: the CSV cannot tell an empty answer from none.
 */
export class RecordEncoder {
  /** `,"name":` per column (no comma before the first), and the same followed by `null` for an empty cell. */
  private readonly keys: Buffer[];
  private readonly nullKeys: Buffer[];
  private readonly prefix: string;
  /** The end of a line: the connector's fields, the closing braces and the newline. */
  private readonly tail: Buffer;
  private readonly fixedBytes: number;

  constructor(readonly spec: EncoderSpec) {
    const {stream, columns, constants} = spec;
    this.keys = columns.map((name, i) => Buffer.from(`${i === 0 ? '' : ','}${JSON.stringify(name)}:`));
    this.nullKeys = this.keys.map((key) => Buffer.concat([key, Buffer.from('null')]));
    const namespace = stream.namespace ? `"namespace":${JSON.stringify(stream.namespace)},` : '';
    this.prefix = `{"type":"RECORD","record":{${namespace}"stream":${JSON.stringify(stream.name)},"emitted_at":`;
    const extra = JSON.stringify(constants).slice(1, -1);
    this.tail = Buffer.from(`${columns.length && extra ? ',' : ''}${extra}}}}\n`);
    // The head's time stamp has at most 16 digits until the year 2286; `,"data":{` is 9 bytes.
    this.fixedBytes =
      Buffer.byteLength(this.prefix) + 16 + 9 + this.nullKeys.reduce((sum, k) => sum + k.length, 0) + this.tail.length;
  }

  /**
   * The rows as lines, in buffers of `batchBytes` (the last one partly filled; a line larger than a
   * batch gets a buffer of its own). Each buffer owns its memory, so it can be transferred.
   */
  encode(packed: PackedRows, emittedAt: number, batchBytes: number): Uint8Array[] {
    const {text, lengths} = packed;
    const {keys, nullKeys, tail} = this;
    const head = Buffer.from(`${this.prefix}${emittedAt},"data":{`);
    const out: Uint8Array[] = [];
    let buf = Buffer.allocUnsafeSlow(batchBytes);
    let at = 0;
    let k = 0;
    let pos = 0;
    for (let r = 0; r < packed.rows; r++) {
      const cells = lengths[k];
      // A UTF-16 unit is at most 3 bytes of UTF-8, or 6 when JSON escapes it (\u001f).
      let most = this.fixedBytes + 2 * keys.length;
      for (let i = 1; i <= cells; i++) most += 6 * lengths[k + i];
      if (at + most > buf.length) {
        if (at > 0) out.push(buf.subarray(0, at));
        buf = Buffer.allocUnsafeSlow(Math.max(batchBytes, most));
        at = 0;
      }
      buf.set(head, at);
      at += head.length;
      for (let i = 0; i < keys.length; i++) {
        const len = i < cells ? lengths[k + 1 + i] : 0;
        const from = pos;
        pos += len;
        if (len === 0) {
          const key = nullKeys[i];
          buf.set(key, at);
          at += key.length;
          continue;
        }
        const key = keys[i];
        buf.set(key, at);
        at = writeJsonString(text, from, pos, buf, at + key.length);
      }
      // Cells beyond the columns are not written.
      for (let i = keys.length; i < cells; i++) pos += lengths[k + 1 + i];
      k += cells + 1;
      buf.set(tail, at);
      at += tail.length;
    }
    if (at > 0) out.push(buf.subarray(0, at));
    return out;
  }
}
