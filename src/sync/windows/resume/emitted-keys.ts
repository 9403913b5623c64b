import {SpillFile} from '../../../core/spill-file';
import {ENTRY_WORDS, Hash64, hash64, LONG, PRINT, writeEntry} from './key-forms';
import {ExactForm, LongForm} from './spilled-keys';

/** The fingerprint of a key that stands for itself (a whole row): none. */
const NO_PRINT = new Uint32Array(2);

/**
 * The identities a window has emitted, in memory that does not grow with the window (see
 * identity-resume.ts for what they are for). An identity is a key and the fingerprint of the row's content
 * (8 bytes; see rowPrint), so two rows that share a key are two identities, and rows alike byte
 * for byte are counted. While a file is read for the first time, each identity only goes to a
 * spill file: 24 bytes for most keys, appended through a 64 KiB buffer. After a setback, when a
 * file of the window is read again, its keys are first compared with the spilled ones in the order
 * they were emitted, read back a block at a time: a file downloaded again after a cut-off lists
 * its rows as before, and is matched so with no more memory than the block. At the first key out of
 * that order, the identities not met yet are loaded into a table of 24-byte entries (24 bytes a key,
 * plus about one more per eight keys for the index) that says which of the file's identities were
 * emitted before it began. The next setback starts over, with that file's own keys added.
 *
 * Keys are exact, never probable (the fingerprint beside a key is a hash, see rowPrint): a key is
 * stored in one of four forms, chosen by the key's own bytes, so the same key always takes the
 * same form and keys of two forms are never compared.
 * - a UUID in canonical form (8-4-4-4-12 hex digits), lower or upper case: its 16 bytes (a form each);
 * - any other key of up to 15 bytes: its length and bytes;
 * - a longer key (or a whole row): a 64-bit hash and where the key's bytes lie in a second spill
 *   file. Two keys of the same hash are told apart by reading their bytes back, so a collision
 *   costs a read, never a row.
 * The first three are injective within their form: equal entries mean equal keys.
 */
export class EmittedKeys {
  private readonly exact: ExactForm[] = [];
  private long: LongForm | undefined;
  private count = 0;
  private readonly hash: Hash64;
  private readonly onMemory?: (reason: string) => void;
  private readonly tmpDir?: string;
  private inMemory = false;
  private readonly spills: SpillFile[] = [];
  /** The entry of the key at hand. */
  private readonly entryWords = new Uint32Array(ENTRY_WORDS);
  private readonly entry = new Uint8Array(this.entryWords.buffer);

  /**
   * @param options.onMemory told once when a spill cannot go to a temporary file and stays in memory.
   * @param options.hash the long form's hash: a test makes every key collide with a weak one.
   * @param options.tmpDir where spill files go (the system's temp dir by default).
   */
  constructor(options: {onMemory?: (reason: string) => void; hash?: Hash64; tmpDir?: string} = {}) {
    this.onMemory = options.onMemory;
    this.tmpDir = options.tmpDir;
    this.hash = options.hash ?? hash64;
  }

  get size(): number {
    return this.count;
  }

  /** Records the key bytes[start, end) of a row whose fingerprint is print[0], print[1] as emitted. */
  add(bytes: Uint8Array, start: number, end: number, print: Uint32Array = NO_PRINT): void {
    this.count++;
    const form = this.formOf(bytes, start, end, print);
    if (form === LONG) {
      this.long ??= new LongForm(this.spill(), this.hash);
      this.long.add(bytes, start, end, print);
      return;
    }
    (this.exact[form] ??= new ExactForm(this.spill())).add(this.entry);
  }

  /**
   * A new file of the window begins: every key added so far is to be met once in it. Keys added
   * while it is read are that file's own, never taken in it.
   */
  restart(): void {
    for (const form of this.exact) form?.restart();
    this.long?.restart();
  }

  /** Whether the key and fingerprint were added before this file began and are not yet met in it; meets them. */
  take(bytes: Uint8Array, start: number, end: number, print: Uint32Array = NO_PRINT): boolean {
    const form = this.formOf(bytes, start, end, print);
    if (form === LONG) return this.long?.take(bytes, start, end, print) ?? false;
    return this.exact[form]?.take(this.entryWords) ?? false;
  }

  /** The key's form, and for an exact one its entry, with the fingerprint, in `entry`. */
  private formOf(bytes: Uint8Array, start: number, end: number, print: Uint32Array): number {
    this.entryWords[PRINT] = print[0];
    this.entryWords[PRINT + 1] = print[1];
    return writeEntry(bytes, start, end, this.entry, 0);
  }

  /** Bytes the keys take on disk, and in memory (spill buffers, and the tables loaded after a setback). */
  get footprint(): {fileBytes: number; memoryBytes: number} {
    const sum = {fileBytes: 0, memoryBytes: 0};
    for (const spill of this.spills) {
      const {fileBytes, memoryBytes} = spill.footprint;
      sum.fileBytes += fileBytes;
      sum.memoryBytes += memoryBytes;
    }
    for (const form of [...this.exact, this.long]) sum.memoryBytes += form?.tableBytes ?? 0;
    return sum;
  }

  /** Frees the spill files and the table. */
  close(): void {
    for (const form of this.exact) form?.close();
    this.long?.close();
  }

  private spill(): SpillFile {
    const spill = new SpillFile((reason) => {
      if (!this.inMemory) this.onMemory?.(reason);
      this.inMemory = true;
    }, this.tmpDir);
    this.spills.push(spill);
    return spill;
  }
}
