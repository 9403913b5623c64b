import {EmittedKeys} from './emitted-keys';

/**
 * Resume within a window, by identity. The API documents no row order, and a re-generated or
 * re-downloaded file of the same window may list its rows in another order (responses created in
 * the same millisecond have none at all). So a file read after a cut-off, a gone file or a split
 * skips exactly the rows whose identity this window has emitted already, wherever they stand, and
 * emits every other row: nothing twice, nothing skipped by position.
 *
 * A row's identity is its Response ID when the export has that column (the stream's primary key),
 * else the whole row, counted by occurrence (two identical rows stay two rows).
 */
export interface ResumeStrategy {
  /** The rows of a batch not emitted yet in this window; they count as emitted from now on. */
  fresh(batch: readonly string[][]): string[][];
  /** Rows emitted in this window so far. */
  readonly emitted: number;
  /** Rows skipped because this window had emitted them already. */
  readonly skipped: number;
}

/** Resume by identity: see the module comment. One per planned window, carried across all its files. */
export class IdentityResume implements ResumeStrategy {
  private readonly keys: EmittedKeys;
  private skippedRows = 0;
  private reading = false;
  private scratch = Buffer.allocUnsafe(256);

  /**
   * @param keyIndex the Response ID cell of each row, or -1 when the export has none (the whole row
   *   is then its identity).
   * @param onMemory told once if the keys cannot be spilled to a temporary file (they are then kept in memory).
   */
  constructor(
    private readonly keyIndex: number,
    onMemory?: (reason: string) => void
  ) {
    this.keys = new EmittedKeys({onMemory});
  }

  get emitted(): number {
    return this.keys.size;
  }

  get skipped(): number {
    return this.skippedRows;
  }

  /** A new file of the window begins: every identity emitted so far is to be skipped once in it. */
  startFile(): void {
    this.reading = this.keys.size > 0;
    if (this.reading) this.keys.restart();
  }

  fresh(batch: readonly string[][]): string[][] {
    const out: string[][] = [];
    for (const row of batch) {
      const key = this.keyIndex >= 0 ? (row[this.keyIndex] ?? '') : rowKey(row);
      const end = this.keyBytes(key);
      if (this.reading && this.keys.take(this.scratch, 0, end)) {
        this.skippedRows++;
        continue;
      }
      this.keys.add(this.scratch, 0, end);
      out.push(row);
    }
    return out;
  }

  /** The window is done with: its spill files go. */
  close(): void {
    this.keys.close();
  }

  /**
   * The key's bytes in `scratch`, one sequence per distinct string: UTF-8, or for a string with
   * surrogates (which UTF-8 cannot keep when unpaired) 0xFF and its UTF-16 units, a byte UTF-8 never has.
   */
  private keyBytes(key: string): number {
    const most = key.length * 3 + 1;
    if (this.scratch.length < most) this.scratch = Buffer.allocUnsafe(most);
    if (!/[\ud800-\udfff]/.test(key)) return this.scratch.write(key, 0, 'utf8');
    this.scratch[0] = 0xff;
    return 1 + this.scratch.write(key, 1, 'utf16le');
  }
}

/** A whole row as one key: the cells, each prefixed by its length, so no two different rows share a key. */
function rowKey(row: readonly string[]): string {
  let key = '';
  for (const cell of row) key += `${cell.length}:${cell}`;
  return key;
}
