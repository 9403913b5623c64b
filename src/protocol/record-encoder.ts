import {StreamRef} from '../sync/output-port';

const QUOTE = 34;
const BACKSLASH = 92;
/** A cell JSON must escape: a quote, a backslash, a control character, or a surrogate (a lone one is escaped). */
// eslint-disable-next-line no-control-regex -- control characters are exactly what JSON escapes
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;
/**
 * Cells up to this long are copied by a loop here: a call into the runtime per cell (Buffer.write)
 * costs more than copying a short cell, and most cells (ids, dates, numbers, choices) are short.
 */
const SHORT_CELL = 32;

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
 * Writes text[from, to) as a JSON string at `pos` when it is printable ASCII without a quote or a
 * backslash (nothing to escape, one byte a character); returns where it ends, or -1 otherwise.
 */
function copyPlain(text: string, from: number, to: number, buf: Buffer, pos: number): number {
  buf[pos] = QUOTE;
  let at = pos + 1;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === QUOTE || c === BACKSLASH) return -1;
    buf[at++] = c;
  }
  buf[at] = QUOTE;
  return at + 1;
}

/**
 * Serialises rows of one stream as Airbyte RECORD lines, encoded as UTF-8 straight into output
 * buffers. The parts that are the same for every record (stream name and namespace, escaped column
 * names, the connector's own fields) are encoded once, and most cells need no escaping: a row costs
 * a copy per part instead of a JSON string per cell, a concatenated line and a second encoding pass
 * over it. Empty cells become null: the CSV cannot tell an empty answer from none.
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
        at += key.length;
        const end = len <= SHORT_CELL ? copyPlain(text, from, pos, buf, at) : -1;
        if (end !== -1) {
          at = end;
          continue;
        }
        const cell = text.slice(from, pos);
        if (NEEDS_ESCAPE.test(cell)) {
          at += buf.write(JSON.stringify(cell), at, 'utf8');
        } else {
          buf[at++] = QUOTE;
          at += buf.write(cell, at, 'utf8');
          buf[at++] = QUOTE;
        }
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
