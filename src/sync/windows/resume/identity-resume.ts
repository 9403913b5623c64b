import {LIMITS} from '../../../core/limits';
import {cellText, QUOTE, RowBatch, selectRows} from '../../../csv/rows';
import {identityBytes, ListedRows} from '../../state/checkpoints';
import {EmittedKeys} from './emitted-keys';
import {FingerprintKey} from './fingerprint-key';
import {rowPrint} from './key-forms';

/** What a keyed fingerprint takes in a STATE (FingerprintKey.print): its length is all that counts. */
const PRINT_TEXT = 'x'.repeat(11);

/**
 * Resume within a window, by identity. The API documents no row order, and a re-generated or
 * re-downloaded file of the same window may list its rows in another order (responses created in
 * the same millisecond have none at all). So a file read after a cut-off, a gone file or a split
 * skips exactly the rows whose identity this window has emitted already, wherever they stand, and
 * emits every other row: nothing twice, nothing skipped by position.
 *
 * A row's identity is its Response ID and a fingerprint of the row's bytes (rowPrint) when the
 * export has that column (the stream's primary key), else the whole row; identities are counted by
 * occurrence (two identical rows stay two rows). The fingerprint tells apart two rows a service
 * lists under one Response ID: after a cut-off the next file may list them in the other order, and
 * each is still emitted once. (A response changed between two exports of one window is thereby
 * another row: both versions are emitted.)
 *
 * Rows an earlier, failed read emitted and a STATE committed (EmittedRows in the state: Response
 * IDs with their fingerprints, or whole rows, each as a keyed hash, see FingerprintKey: a dropped or
 * hashed cell is in the bytes fingerprinted, and nobody without the secret may test candidates for
 * it against a state) count as emitted before every file of every window, until the cursor passes
 * them. An id listed without a fingerprint (a state written before there were any) stands for any
 * one row of that id, as it did then; so does an id whose fingerprint was taken from a file of other
 * settings, another header or under another secret (FingerprintKey.file): a survey edited between a
 * failed sync and the next changes every row's bytes, a rotated secret every keyed hash. The window
 * lists its own identities the same way, the first emitted first, as many as fit in what a STATE
 * may carry (LIMITS.state.emittedKeyBytes), for the STATE that follows a failure; it counts the rest.
 */
interface ResumeStrategy {
  /** The rows of a batch not emitted yet in this window; they count as emitted from now on. */
  fresh(batch: RowBatch): RowBatch;
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
  private scratch = new Uint8Array(256);
  /**
   * The identities emitted, as a STATE lists them, while they fit: keys as texts, and beside a
   * Response ID the row's fingerprint as two words (keyed only when listed, see FingerprintKey).
   */
  private readonly listed: {keys: string[]; prints: number[]} = {keys: [], prints: []};
  private listedBytes = 0;
  /** The identities emitted past what a STATE may list. */
  private unlistedRows = 0;
  /**
   * Identities of rows an earlier read emitted (see the module comment), by key then keyed
   * fingerprint ('': any row of the key), counted; and those not met yet in this file.
   */
  private readonly before = new Map<string, Map<string, number>>();
  private beforeLeft = new Map<string, Map<string, number>>();
  /** The fingerprint of the row at hand (rowPrint). */
  private readonly print = new Uint32Array(2);
  private readonly file: string;

  /**
   * @param keyIndex the Response ID cell of each row, or -1 when the export has none (the whole row
   *   is then its identity).
   * @param secret what the identities a STATE lists are keyed with (FingerprintKey).
   * @param options.onMemory told once if the keys cannot be spilled to a temporary file (they are then kept in memory).
   * @param options.before rows an earlier read emitted, with identities of this kind (see the module comment).
   * @param options.file the FingerprintKey.file digest of the window's files: fingerprints of
   *   `before` count only if taken from the same (under the same secret).
   */
  constructor(
    private readonly keyIndex: number,
    private readonly secret: FingerprintKey,
    options: {onMemory?: (reason: string) => void; before?: ListedRows; file?: string} = {}
  ) {
    const {before} = options;
    this.file = options.file ?? '';
    this.keys = new EmittedKeys({onMemory: options.onMemory});
    const fingerprints = before?.header === this.file ? before.fingerprints : undefined;
    before?.keys.forEach((key, i) => {
      const prints = this.before.get(key) ?? new Map<string, number>();
      const print = fingerprints?.[i] ?? '';
      prints.set(print, (prints.get(print) ?? 0) + 1);
      this.before.set(key, prints);
    });
  }

  /** Identities are whole rows (the export has no Response ID column). */
  get wholeRows(): boolean {
    return this.keyIndex < 0;
  }

  /**
   * The identities this window emitted, one per row, as a STATE lists them (keyed fingerprints only
   * with Response IDs), as many as fit in what a STATE may carry, the first emitted first; and how
   * many more were emitted (`unlisted`).
   */
  emittedKeys(): {listed: ListedRows; unlisted: number} {
    const keys = [...this.listed.keys];
    const {prints} = this.listed;
    const fingerprints = keys.map((_, i) => this.secret.print(prints[2 * i], prints[2 * i + 1]));
    return {listed: this.wholeRows ? {keys} : {keys, fingerprints, header: this.file}, unlisted: this.unlistedRows};
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
    this.beforeLeft = new Map([...this.before].map(([key, prints]) => [key, new Map(prints)]));
  }

  fresh(batch: RowBatch): RowBatch {
    const {bytes, cells, rows, width} = batch;
    const stride = width + 1;
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    let keep: Uint8Array | undefined;
    for (let r = 0; r < rows; r++) {
      const k = r * stride;
      let key = bytes;
      let start: number;
      let end: number;
      if (this.keyIndex >= 0) {
        rowPrint(bytes, view, cells[k], cells[k + width] - 1, this.print);
        start = cells[k + this.keyIndex];
        end = cells[k + this.keyIndex + 1] - 1;
        if (end > start && bytes[start] === QUOTE) {
          // A quoted key: its text, as an unquoted one would have it.
          key = this.room(end - start);
          end = cellText(bytes, start, end, key, 0);
          start = 0;
        }
      } else {
        key = this.room(cells[k + width] - cells[k] + 4 * width);
        [start, end] = [0, this.rowKey(batch, k, key)];
      }
      // The row's identity as text only while a STATE may list it or an earlier read's list is matched.
      const listing = this.unlistedRows === 0;
      const text = listing || this.before.size > 0 ? this.text(key, start, end) : '';
      if ((this.reading && this.keys.take(key, start, end, this.print)) || this.takeBefore(text)) {
        this.skippedRows++;
        keep ??= new Uint8Array(rows).fill(1);
        keep[r] = 0;
        continue;
      }
      this.keys.add(key, start, end, this.print);
      if (listing) this.list(text);
      else this.unlistedRows++;
    }
    return keep ? selectRows(batch, keep) : batch;
  }

  /** An identity as a STATE lists it: a Response ID as its text, a whole row as its keyed hash (FingerprintKey). */
  private text(key: Uint8Array, start: number, end: number): string {
    if (this.wholeRows) return this.secret.wholeRow(key, start, end);
    return Buffer.from(key.buffer, key.byteOffset + start, end - start).toString('utf8');
  }

  /**
   * Whether the row is one an earlier read emitted and this file has not met yet, by its key and
   * keyed fingerprint, else by its key alone where the state listed it without one; meets it.
   */
  private takeBefore(text: string): boolean {
    const prints = this.beforeLeft.get(text);
    if (!prints) return false;
    const candidates = this.wholeRows ? [''] : [this.secret.print(this.print[0], this.print[1]), ''];
    for (const p of candidates) {
      const left = prints.get(p);
      if (!left) continue;
      prints.set(p, left - 1);
      return true;
    }
    return false;
  }

  /** Lists the identity of the row at hand, if it fits in what a STATE may carry; else counts it unlisted. */
  private list(text: string): void {
    this.listedBytes += identityBytes(text, this.wholeRows ? '' : PRINT_TEXT);
    if (this.listedBytes > LIMITS.state.emittedKeyBytes) {
      this.unlistedRows++;
      return;
    }
    this.listed.keys.push(text);
    if (!this.wholeRows) this.listed.prints.push(this.print[0], this.print[1]);
  }

  /** The window is done with: its spill files go. */
  close(): void {
    this.keys.close();
  }

  /** The scratch buffer, with room for `n` bytes. */
  private room(n: number): Uint8Array {
    if (this.scratch.length < n) this.scratch = new Uint8Array(Math.max(n, this.scratch.length * 2));
    return this.scratch;
  }

  /**
   * A whole row as one key, in `out`: each cell's text after its length (4 bytes), so no two
   * different rows share a key, however they are quoted. Returns the key's length.
   */
  private rowKey(batch: RowBatch, k: number, out: Uint8Array): number {
    let at = 0;
    for (let c = 0; c < batch.width; c++) {
      const end = cellText(batch.bytes, batch.cells[k + c], batch.cells[k + c + 1] - 1, out, at + 4);
      const len = end - at - 4;
      out[at] = len & 255;
      out[at + 1] = (len >>> 8) & 255;
      out[at + 2] = (len >>> 16) & 255;
      out[at + 3] = len >>> 24;
      at = end;
    }
    return at;
  }
}
