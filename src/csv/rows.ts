/**
 * Complete rows of a CSV file as its UTF-8 bytes and where their cells lie, with no string per
 * cell: what the reader hands on, and what a worker thread can take over whole (both arrays own
 * their buffers, so they can be transferred rather than copied).
 *
 * Every row has `width` cells and takes `width + 1` entries of `cells`: row r's cell c is the raw
 * cell as the file has it, bytes[cells[r * (width + 1) + c], cells[r * (width + 1) + c + 1] - 1)
 * (the byte before the next entry is the separator, or for the last cell the row's end). A raw
 * cell that begins with a quote is quoted: its text lies between its first and last byte, with
 * each quote in it doubled. Any other cell is its text.
 */
export interface RowBatch {
  bytes: Uint8Array;
  cells: Int32Array;
  rows: number;
  width: number;
  /** Cells of these rows cut to a bound (parser.ts), in row order; rare, so absent when there are none. */
  cuts?: CellCut[];
}

/** A cell cut to its bound, or to what its row's bound left of it: `kept` of its `chars` characters remain. */
export interface CellCut {
  row: number;
  cell: number;
  kept: number;
  chars: number;
  /** Cut by the row's bound rather than the cell's. */
  byRow: boolean;
}

export const QUOTE = 34;

/** Copies the text of the raw cell bytes[start, end) to out[at]; returns where it ends there. */
export function cellText(bytes: Uint8Array, start: number, end: number, out: Uint8Array, at: number): number {
  let o = at;
  if (end > start && bytes[start] === QUOTE) {
    for (let i = start + 1; i < end - 1; i++) {
      out[o++] = bytes[i];
      if (bytes[i] === QUOTE) i++;
    }
  } else {
    for (let i = start; i < end; i++) out[o++] = bytes[i];
  }
  return o;
}

/** The text of `count` cells whose entries begin at cells[k] (see RowBatch). */
export function rowText(bytes: Uint8Array, cells: Int32Array, k: number, count: number): string[] {
  const scratch = new Uint8Array(cells[k + count] - cells[k]);
  const out: string[] = [];
  for (let c = 0; c < count; c++) {
    out.push(decodeWtf8(scratch, 0, cellText(bytes, cells[k + c], cells[k + c + 1] - 1, scratch, 0)));
  }
  return out;
}

/** The batch's rows as strings: for the few rows a header sample needs, and for tests. */
export function rowStrings(batch: RowBatch): string[][] {
  const out: string[][] = [];
  for (let r = 0; r < batch.rows; r++) out.push(rowText(batch.bytes, batch.cells, r * (batch.width + 1), batch.width));
  return out;
}

/** The rows of `batch` whose flag in `keep` is set, in order: the same bytes, cells of their own. */
export function selectRows(batch: RowBatch, keep: Uint8Array): RowBatch {
  const stride = batch.width + 1;
  let rows = 0;
  for (let r = 0; r < batch.rows; r++) rows += keep[r];
  const cells = new Int32Array(rows * stride);
  let k = 0;
  const at = new Int32Array(batch.rows);
  for (let r = 0; r < batch.rows; r++) {
    if (!keep[r]) continue;
    at[r] = k / stride;
    cells.set(batch.cells.subarray(r * stride, (r + 1) * stride), k);
    k += stride;
  }
  const cuts = batch.cuts?.filter((cut) => keep[cut.row]).map((cut) => ({...cut, row: at[cut.row]}));
  return {bytes: batch.bytes, cells, rows, width: batch.width, ...(cuts?.length ? {cuts} : {})};
}

/**
 * UTF-8 bytes to a string, where a three-byte sequence of a lone surrogate (which the reader writes
 * for a UTF-16 file that has one, see decoder.ts) becomes that surrogate again.
 */
export function decodeWtf8(bytes: Uint8Array, start: number, end: number): string {
  let lone = -1;
  for (let i = start; i < end - 2; i++) {
    if (bytes[i] === 0xed && bytes[i + 1] >= 0xa0) {
      lone = i;
      break;
    }
  }
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (lone < 0) return buffer.toString('utf8', start, end);
  const unit = 0xd000 | ((bytes[lone + 1] & 0x3f) << 6) | (bytes[lone + 2] & 0x3f);
  return buffer.toString('utf8', start, lone) + String.fromCharCode(unit) + decodeWtf8(bytes, lone + 3, end);
}

/** Buffers kept for reuse, at most this many. */
const SPARES = 8;
const spares: ArrayBuffer[] = [];

/**
 * A buffer of at least `bytes` bytes, reused from a batch whose rows were written where there is
 * one: a large export passes hundreds of MB through batches, and buffers dropped for the garbage
 * collector linger as memory until it runs.
 */
export function spareBuffer(bytes: number): ArrayBuffer {
  for (let i = spares.length - 1; i >= 0; i--) {
    if (spares[i].byteLength >= bytes) return spares.splice(i, 1)[0];
  }
  return new ArrayBuffer(bytes);
}

/** Gives the buffers of a batch that is written out (and that nothing refers to any more) for reuse. */
export function reuseBuffers(buffers: readonly ArrayBuffer[]): void {
  for (const buffer of buffers) if (spares.length < SPARES && buffer.byteLength > 0) spares.push(buffer);
}
