/**
 * Resume within a window, by identity. The API documents no row order, and a re-generated or
 * re-downloaded file of the same window may list its rows in another order (responses created in
 * the same millisecond have none at all). So a file read after a cut-off, a gone file or a split
 * skips exactly the rows whose identity this window has emitted already, wherever they stand, and
 * emits every other row: nothing twice, nothing skipped by position.
 *
 * A row's identity is its Response ID when the export has that column (the stream's primary key),
 * else the whole row, counted by occurrence (two identical rows stay two rows).
 *
 * Rows an earlier, failed read emitted and a STATE committed (EmittedRows in the state) count as
 * emitted before every file of every window, until the cursor passes them.
 */
export interface ResumeStrategy {
  /** The rows of a batch not emitted yet in this window; they count as emitted from now on. */
  fresh(batch: readonly string[][]): string[][];
  /** Rows emitted in this window so far. */
  readonly emitted: number;
  /** Rows skipped because this window had emitted them already. */
  readonly skipped: number;
}

/**
 * The identities emitted in a window, kept compactly: their UTF-8 bytes in one growing buffer (a
 * Set of a million short strings costs tens of MB; this costs their bytes), expanded into a
 * multiset only when a file has to be matched against them, which happens only after a setback.
 */
class EmittedKeys {
  private bytes = Buffer.allocUnsafe(64 * 1024);
  private used = 0;
  /** Where each key's bytes end: 4 bytes a key (a JS array of numbers takes 8 and more). */
  private ends = new Uint32Array(4096);
  private count = 0;
  /** Identity -> occurrences emitted before the file being read began and not yet met in it. */
  private pending = new Map<string, number>();

  get size(): number {
    return this.count;
  }

  add(key: string): void {
    const most = key.length * 3;
    if (this.used + most > this.bytes.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.used + most));
      this.bytes.copy(grown, 0, 0, this.used);
      this.bytes = grown;
    }
    this.used += this.bytes.write(key, this.used, 'utf8');
    if (this.count === this.ends.length) {
      const grown = new Uint32Array(this.ends.length * 2);
      grown.set(this.ends);
      this.ends = grown;
    }
    this.ends[this.count++] = this.used;
  }

  /** Every key, in the order added. */
  list(): string[] {
    const keys: string[] = [];
    let start = 0;
    for (const end of this.ends.subarray(0, this.count)) {
      keys.push(this.bytes.toString('utf8', start, end));
      start = end;
    }
    return keys;
  }

  /**
   * A new file of the window begins: every key emitted so far (and every one of `before`) is to be
   * met once in it. Keys added while it is read are that file's own, never skipped in it.
   */
  restart(before: readonly string[]): void {
    this.pending = new Map();
    for (const key of [...before, ...this.list()]) this.pending.set(key, (this.pending.get(key) ?? 0) + 1);
  }

  /** Whether the key was emitted before this file began and is not yet met in it; meets it. */
  take(key: string): boolean {
    const left = this.pending.get(key);
    if (!left) return false;
    if (left === 1) this.pending.delete(key);
    else this.pending.set(key, left - 1);
    return true;
  }
}

/** Resume by identity: see the module comment. One per planned window, carried across all its files. */
export class IdentityResume implements ResumeStrategy {
  private readonly keys = new EmittedKeys();
  private skippedRows = 0;
  private reading = false;

  /**
   * @param keyIndex the Response ID cell of each row, or -1 when the export has none (the whole row
   *   is then its identity).
   * @param before identities of rows an earlier read emitted (see the module comment), of the same kind.
   */
  constructor(
    private readonly keyIndex: number,
    private readonly before: readonly string[] = []
  ) {}

  get emitted(): number {
    return this.keys.size;
  }

  /** Identities are whole rows (the export has no Response ID column). */
  get wholeRows(): boolean {
    return this.keyIndex < 0;
  }

  /** The identities this window emitted, one per row. */
  emittedKeys(): string[] {
    return this.keys.list();
  }

  get skipped(): number {
    return this.skippedRows;
  }

  /** A new file of the window begins: every identity emitted so far is to be skipped once in it. */
  startFile(): void {
    this.reading = this.keys.size > 0 || this.before.length > 0;
    if (this.reading) this.keys.restart(this.before);
  }

  fresh(batch: readonly string[][]): string[][] {
    const out: string[][] = [];
    for (const row of batch) {
      const key = this.keyIndex >= 0 ? (row[this.keyIndex] ?? '') : rowKey(row);
      if (this.reading && this.keys.take(key)) {
        this.skippedRows++;
        continue;
      }
      this.keys.add(key);
      out.push(row);
    }
    return out;
  }
}

/** A whole row as one key: the cells, each prefixed by its length, so no two different rows share a key. */
function rowKey(row: readonly string[]): string {
  let key = '';
  for (const cell of row) key += `${cell.length}:${cell}`;
  return key;
}
