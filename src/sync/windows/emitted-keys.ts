import {randomFillSync} from 'crypto';

import {SpillFile} from '../../core/spill-file';

/**
 * The identities a window has emitted, in memory that does not grow with the window (see
 * resume.ts for what they are for). While a file is read for the first time, each key only goes to
 * a spill file: 16 bytes for most keys, appended through a 64 KiB buffer. After a setback, when a
 * file of the window is read again, its keys are first compared with the spilled ones in the order
 * they were emitted, read back a block at a time: a file downloaded again after a cut-off lists
 * its rows as before, and is matched so with no more memory than the block. At the first key out of
 * that order, the keys not met yet are loaded into a table of 16-byte entries (16 bytes a key, plus
 * about one more per eight keys for the index) that says, exactly, which of the file's keys were
 * emitted before it began. The next setback starts over, with that file's own keys added.
 *
 * Exact, never probable: a key is stored in one of four forms, chosen by the key's own bytes, so
 * the same key always takes the same form and keys of two forms are never compared.
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
  private readonly entryWords = new Uint32Array(4);
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

  /** Records the key bytes[start, end) as emitted. */
  add(bytes: Uint8Array, start: number, end: number): void {
    this.count++;
    const form = writeEntry(bytes, start, end, this.entry, 0);
    if (form === LONG) {
      this.long ??= new LongForm(this.spill(), this.hash);
      this.long.add(bytes, start, end);
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

  /** Whether the key was added before this file began and is not yet met in it; meets it. */
  take(bytes: Uint8Array, start: number, end: number): boolean {
    const form = writeEntry(bytes, start, end, this.entry, 0);
    if (form === LONG) return this.long?.take(bytes, start, end) ?? false;
    return this.exact[form]?.take(this.entryWords) ?? false;
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

const LOWER_UUID = 0;
const UPPER_UUID = 1;
const SHORT = 2;
const LONG = 3;
/** The longest key stored as its own bytes (the entry's first byte holds its length). */
const SHORT_MAX = 15;

/**
 * Per-process random keys: the order of a table (and the hash of a long key) cannot be steered by
 * the data, so no file can pile its keys into one bucket of the index.
 */
const SECRET = randomFillSync(new Uint32Array(10));

/** Per byte: its value as a hex digit, or 16 for none. */
const HEX_VALUE = new Uint8Array(256).fill(16);
/** Per byte: 0 for a decimal digit, 1 for a-f, 2 for A-F, 4 for anything else. */
const HEX_CASE = new Uint8Array(256).fill(4);
for (let c = 0; c < 256; c++) {
  const ch = String.fromCharCode(c);
  if (/[0-9]/.test(ch)) [HEX_VALUE[c], HEX_CASE[c]] = [c - 48, 0];
  else if (/[a-f]/.test(ch)) [HEX_VALUE[c], HEX_CASE[c]] = [c - 87, 1];
  else if (/[A-F]/.test(ch)) [HEX_VALUE[c], HEX_CASE[c]] = [c - 55, 2];
}
/** Where each byte's two hex digits lie in a canonical UUID (8-4-4-4-12). */
const UUID_DIGITS = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];

/**
 * Writes the 16-byte entry of the key b[s, e) at out[at]; returns its form. A canonical UUID is
 * its 16 bytes (in the form of its case), a key of up to 15 bytes its length and bytes; a longer
 * key is LONG and writes nothing.
 */
function writeEntry(b: Uint8Array, s: number, e: number, out: Uint8Array, at: number): number {
  const len = e - s;
  if (len === 36 && b[s + 8] === 45 && b[s + 13] === 45 && b[s + 18] === 45 && b[s + 23] === 45) {
    let cases = 0;
    for (let j = 0; j < 16; j++) {
      const p = s + UUID_DIGITS[j];
      const hi = b[p];
      const lo = b[p + 1];
      cases |= HEX_CASE[hi] | HEX_CASE[lo];
      out[at + j] = (HEX_VALUE[hi] << 4) | HEX_VALUE[lo];
    }
    if (cases < 3) return cases === 2 ? UPPER_UUID : LOWER_UUID;
  }
  if (len > SHORT_MAX) return LONG;
  out[at] = len;
  for (let i = 0; i < SHORT_MAX; i++) out[at + 1 + i] = i < len ? b[s + i] : 0;
  return SHORT;
}

/** Murmur3's finaliser: every bit of x moves every bit of the result. */
function mix32(x: number): number {
  let h = x >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * A keyed bijection of the entry's four words, in place: entries spread evenly over the index
 * whatever the keys look like (sequential ids, time-ordered UUIDs), and equal entries stay equal
 * and unequal ones unequal.
 */
function scramble(w: Uint32Array, i: number): void {
  let a = w[i];
  let b = w[i + 1];
  let c = w[i + 2];
  let d = w[i + 3];
  for (let r = 0; r < 8; r += 4) {
    a = (a ^ mix32(d ^ SECRET[r])) >>> 0;
    b = (b ^ mix32(a ^ SECRET[r + 1])) >>> 0;
    c = (c ^ mix32(b ^ SECRET[r + 2])) >>> 0;
    d = (d ^ mix32(c ^ SECRET[r + 3])) >>> 0;
  }
  w[i] = a;
  w[i + 1] = b;
  w[i + 2] = c;
  w[i + 3] = d;
}

/**
 * Entries of four 32-bit words, partitioned in place into buckets by the top bits of their first
 * word (about eight entries a bucket), and which of them a file has met. Built after a setback only.
 */
class Table {
  readonly index: Uint32Array;
  private readonly shift: number;
  private readonly taken: Uint8Array;

  constructor(
    readonly words: Uint32Array,
    readonly n: number
  ) {
    const bits = Math.min(24, Math.max(1, Math.ceil(Math.log2(Math.max(2, n / 8)))));
    this.shift = 32 - bits;
    this.taken = new Uint8Array((n + 7) >>> 3);
    this.index = partition(words, n, this.shift, 1 << bits);
  }

  get bytes(): number {
    return this.words.byteLength + this.index.byteLength + this.taken.byteLength;
  }

  /**
   * The first entry not yet met whose words equal `probe` (all four, or the first two with
   * `verify` deciding), which is then met; -1 when there is none.
   */
  meet(probe: Uint32Array, compare: 2 | 4, verify?: (entry: number) => boolean): number {
    const w = this.words;
    const bucket = probe[0] >>> this.shift;
    for (let i = this.index[bucket], end = this.index[bucket + 1]; i < end; i++) {
      const k = i * 4;
      if (w[k] !== probe[0] || w[k + 1] !== probe[1]) continue;
      if (compare === 4 && (w[k + 2] !== probe[2] || w[k + 3] !== probe[3])) continue;
      if (this.taken[i >>> 3] & (1 << (i & 7))) continue;
      if (verify && !verify(k)) continue;
      this.taken[i >>> 3] |= 1 << (i & 7);
      return i;
    }
    return -1;
  }
}

/** American flag sort on the top bits of each entry's first word: no second copy of the entries. */
function partition(w: Uint32Array, n: number, shift: number, buckets: number): Uint32Array {
  const index = new Uint32Array(buckets + 1);
  for (let i = 0; i < n; i++) index[(w[i * 4] >>> shift) + 1]++;
  for (let b = 0; b < buckets; b++) index[b + 1] += index[b];
  const next = index.slice(0, buckets);
  for (let b = 0; b < buckets; b++) {
    const end = index[b + 1];
    let i = next[b];
    while (i < end) {
      const t = w[i * 4] >>> shift;
      if (t === b) {
        i++;
        continue;
      }
      const j = next[t]++ * 4;
      const k = i * 4;
      for (let x = 0; x < 4; x++) {
        const v = w[k + x];
        w[k + x] = w[j + x];
        w[j + x] = v;
      }
    }
  }
  return index;
}

/** Spilled bytes are read back this many at a time. */
const BLOCK_BYTES = 64 * 1024;

/** Reads spilled bytes back a block at a time, for keys met in the order they were spilled. */
class SpillReader {
  private block = new Uint8Array(BLOCK_BYTES);
  private from = 0;
  private to = 0;

  constructor(private readonly spill: SpillFile) {}

  /** The block, holding the spilled bytes [offset, offset + length); where they begin in it. */
  at(offset: number, length: number): {block: Uint8Array; at: number} {
    if (offset < this.from || offset + length > this.to) {
      if (length > this.block.length) this.block = new Uint8Array(length);
      this.from = offset;
      this.to = offset + Math.min(this.spill.size - offset, this.block.length);
      this.spill.read(this.block, 0, this.to - this.from, offset);
    }
    return {block: this.block, at: offset - this.from};
  }
}

/**
 * Keys of one exact form: 16-byte entries in a spill file. After a restart, entries [0, pending)
 * are to be met: in spill order through `next` while the file keeps that order, else in the table
 * of those not met yet.
 */
class ExactForm {
  private count = 0;
  private pending = 0;
  private next = 0;
  private table: Table | undefined;
  private reader: SpillReader | undefined;

  constructor(private readonly spill: SpillFile) {}

  get tableBytes(): number {
    return this.table?.bytes ?? 0;
  }

  add(entry: Uint8Array): void {
    this.spill.append(entry, 0, 16);
    this.count++;
  }

  restart(): void {
    this.table = undefined;
    this.pending = this.count;
    this.next = 0;
  }

  /** Meets the entry (its words may be scrambled in place). */
  take(entry: Uint32Array): boolean {
    if (!this.table) {
      if (this.next >= this.pending) return false;
      this.reader ??= new SpillReader(this.spill);
      const {block, at} = this.reader.at(this.next * 16, 16);
      const bytes = new Uint8Array(entry.buffer, entry.byteOffset, 16);
      let same = true;
      for (let i = 0; i < 16 && same; i++) same = block[at + i] === bytes[i];
      if (same) {
        this.next++;
        return true;
      }
      this.load();
    }
    scramble(entry, 0);
    return (this.table as Table).meet(entry, 4) >= 0;
  }

  close(): void {
    this.table = undefined;
    this.reader = undefined;
    this.spill.close();
  }

  /** The table of the entries not met yet: [next, pending). */
  private load(): void {
    const n = this.pending - this.next;
    const words = new Uint32Array(n * 4);
    this.spill.read(new Uint8Array(words.buffer), 0, n * 16, this.next * 16);
    for (let i = 0; i < n * 4; i += 4) scramble(words, i);
    this.table = new Table(words, n);
  }
}

/**
 * Keys longer than 15 bytes: each as its length (4 bytes) and bytes in a spill file, met in spill
 * order while the file keeps it; else from a table of (64-bit hash, offset of the key) entries,
 * where a hash match is confirmed by comparing the key's bytes with those read back from the file.
 */
class LongForm {
  private count = 0;
  private pending = 0;
  /** The next record in spill order, its index and offset. */
  private next = 0;
  private nextAt = 0;
  private table: Table | undefined;
  private reader: SpillReader | undefined;
  private readonly probe = new Uint32Array(4);
  private scratch = new Uint8Array(256);
  private readonly length = new Uint8Array(4);

  constructor(
    private readonly spill: SpillFile,
    private readonly hash: Hash64
  ) {}

  get tableBytes(): number {
    return this.table?.bytes ?? 0;
  }

  add(b: Uint8Array, s: number, e: number): void {
    const len = e - s;
    this.length[0] = len & 255;
    this.length[1] = (len >>> 8) & 255;
    this.length[2] = (len >>> 16) & 255;
    this.length[3] = len >>> 24;
    this.spill.append(this.length);
    this.spill.append(b, s, e);
    this.count++;
  }

  restart(): void {
    this.table = undefined;
    this.pending = this.count;
    this.next = 0;
    this.nextAt = 0;
  }

  take(b: Uint8Array, s: number, e: number): boolean {
    if (!this.table) {
      if (this.next >= this.pending) return false;
      this.reader ??= new SpillReader(this.spill);
      const len = lengthAt(this.reader.at(this.nextAt, 4).block, this.reader.at(this.nextAt, 4).at);
      if (len === e - s) {
        const {block, at} = this.reader.at(this.nextAt, 4 + len);
        let same = true;
        for (let i = 0; i < len && same; i++) same = block[at + 4 + i] === b[s + i];
        if (same) {
          this.next++;
          this.nextAt += 4 + len;
          return true;
        }
      }
      this.load();
    }
    const table = this.table as Table;
    this.hash(b, s, e, this.probe);
    const len = e - s;
    if (this.scratch.length < 4 + len) this.scratch = new Uint8Array(4 + len);
    const verify = (k: number): boolean => {
      const offset = table.words[k + 2] + table.words[k + 3] * 0x100000000;
      if (offset + 4 + len > this.spill.size) return false;
      this.spill.read(this.scratch, 0, 4 + len, offset);
      if (lengthAt(this.scratch, 0) !== len) return false;
      for (let i = 0; i < len; i++) if (this.scratch[4 + i] !== b[s + i]) return false;
      return true;
    };
    return table.meet(this.probe, 2, verify) >= 0;
  }

  close(): void {
    this.table = undefined;
    this.reader = undefined;
    this.spill.close();
  }

  /** The table of the records not met yet: from `next` on, up to `pending`. */
  private load(): void {
    const n = this.pending - this.next;
    const words = new Uint32Array(n * 4);
    const reader = new SpillReader(this.spill);
    let offset = this.nextAt;
    for (let i = 0; i < n; i++) {
      const len = lengthAt(reader.at(offset, 4).block, reader.at(offset, 4).at);
      const {block, at} = reader.at(offset, 4 + len);
      this.hash(block, at + 4, at + 4 + len, this.probe);
      const k = i * 4;
      words[k] = this.probe[0];
      words[k + 1] = this.probe[1];
      words[k + 2] = offset % 0x100000000;
      words[k + 3] = Math.floor(offset / 0x100000000);
      offset += 4 + len;
    }
    this.table = new Table(words, n);
  }
}

function lengthAt(b: Uint8Array, at: number): number {
  return (b[at] | (b[at + 1] << 8) | (b[at + 2] << 16) | (b[at + 3] << 24)) >>> 0;
}

/** A 64-bit hash of b[s, e) into out[0] and out[1]. */
export type Hash64 = (b: Uint8Array, s: number, e: number, out: Uint32Array) => void;

/** A 64-bit hash of b[s, e) into out[0], out[1]: two multiplicative lanes, keyed, then mixed. */
function hash64(b: Uint8Array, s: number, e: number, out: Uint32Array): void {
  let h1 = SECRET[8] ^ (e - s);
  let h2 = SECRET[9];
  for (let i = s; i < e; i++) {
    const c = b[i];
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x5bd1e995);
    h2 ^= h2 >>> 15;
  }
  out[0] = mix32(h1 ^ mix32(h2));
  out[1] = mix32(h2 ^ SECRET[8]);
}
