import {SpillFile} from '../../../core/spill-file';
import {ENTRY_WORDS, Hash64, PRINT, scramble} from './key-forms';
import {Table} from './key-table';

/** An exact entry's bytes: the key's 16, then the row's fingerprint (8). */
const ENTRY_BYTES = ENTRY_WORDS * 4;
/** A long key's record before its bytes: its length (4 bytes) and the row's fingerprint (8). */
const LONG_HEAD = 12;

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
 * Keys of one form in a spill file, in the order they were added. After a restart, keys [0, pending)
 * are to be met: in spill order through `next` while the file keeps that order, else in a table of
 * those not met yet, loaded at the first key out of order.
 */
abstract class SpilledForm {
  protected count = 0;
  protected pending = 0;
  /** The next key in spill order. */
  protected next = 0;
  protected table: Table | undefined;
  protected reader: SpillReader | undefined;

  constructor(protected readonly spill: SpillFile) {}

  get tableBytes(): number {
    return this.table?.bytes ?? 0;
  }

  restart(): void {
    this.table = undefined;
    this.pending = this.count;
    this.next = 0;
  }

  close(): void {
    this.table = undefined;
    this.reader = undefined;
    this.spill.close();
  }
}

/** Keys of one exact form: entries of ENTRY_BYTES (the key's 16 bytes and the row's fingerprint). */
export class ExactForm extends SpilledForm {
  add(entry: Uint8Array): void {
    this.spill.append(entry, 0, ENTRY_BYTES);
    this.count++;
  }

  /** Meets the entry (its words may be scrambled in place). */
  take(entry: Uint32Array): boolean {
    if (!this.table) {
      if (this.next >= this.pending) return false;
      this.reader ??= new SpillReader(this.spill);
      const {block, at} = this.reader.at(this.next * ENTRY_BYTES, ENTRY_BYTES);
      const bytes = new Uint8Array(entry.buffer, entry.byteOffset, ENTRY_BYTES);
      let same = true;
      for (let i = 0; i < ENTRY_BYTES && same; i++) same = block[at + i] === bytes[i];
      if (same) {
        this.next++;
        return true;
      }
      this.load();
    }
    scramble(entry, 0);
    return (this.table as Table).meet(entry) >= 0;
  }

  /** The table of the entries not met yet: [next, pending). */
  private load(): void {
    const n = this.pending - this.next;
    const words = new Uint32Array(n * ENTRY_WORDS);
    this.spill.read(new Uint8Array(words.buffer), 0, n * ENTRY_BYTES, this.next * ENTRY_BYTES);
    for (let i = 0; i < n * ENTRY_WORDS; i += ENTRY_WORDS) scramble(words, i);
    this.table = new Table(words, n);
  }
}

/**
 * Keys longer than 15 bytes: each as its length (4 bytes), the row's fingerprint (8) and its bytes
 * in a spill file, met in spill order while the file keeps it; else from a table of (64-bit hash,
 * offset of the record, fingerprint) entries, where a match is confirmed by comparing the key's
 * bytes with those read back from the file.
 */
export class LongForm extends SpilledForm {
  /** Where the next record in spill order begins. */
  private nextAt = 0;
  private readonly probe = new Uint32Array(ENTRY_WORDS);
  private scratch = new Uint8Array(256);
  private readonly head = new Uint8Array(LONG_HEAD);

  constructor(
    spill: SpillFile,
    private readonly hash: Hash64
  ) {
    super(spill);
  }

  /** Records the key b[s, e) of a row whose fingerprint is print[0], print[1]. */
  add(b: Uint8Array, s: number, e: number, print: Uint32Array): void {
    putWord(this.head, 0, e - s);
    putWord(this.head, 4, print[0]);
    putWord(this.head, 8, print[1]);
    this.spill.append(this.head);
    this.spill.append(b, s, e);
    this.count++;
  }

  override restart(): void {
    super.restart();
    this.nextAt = 0;
  }

  take(b: Uint8Array, s: number, e: number, print: Uint32Array): boolean {
    const len = e - s;
    if (!this.table) {
      if (this.next >= this.pending) return false;
      this.reader ??= new SpillReader(this.spill);
      const head = this.reader.at(this.nextAt, LONG_HEAD);
      if (wordAt(head.block, head.at) === len && sameWords(head.block, head.at + 4, print)) {
        const {block, at} = this.reader.at(this.nextAt, LONG_HEAD + len);
        let same = true;
        for (let i = 0; i < len && same; i++) same = block[at + LONG_HEAD + i] === b[s + i];
        if (same) {
          this.next++;
          this.nextAt += LONG_HEAD + len;
          return true;
        }
      }
      this.load();
    }
    const table = this.table as Table;
    this.hash(b, s, e, this.probe);
    this.probe[PRINT] = print[0];
    this.probe[PRINT + 1] = print[1];
    if (this.scratch.length < LONG_HEAD + len) this.scratch = new Uint8Array(LONG_HEAD + len);
    const verify = (k: number): boolean => {
      const offset = table.words[k + 2] + table.words[k + 3] * 0x100000000;
      if (offset + LONG_HEAD + len > this.spill.size) return false;
      this.spill.read(this.scratch, 0, LONG_HEAD + len, offset);
      if (wordAt(this.scratch, 0) !== len) return false;
      for (let i = 0; i < len; i++) if (this.scratch[LONG_HEAD + i] !== b[s + i]) return false;
      return true;
    };
    return table.meet(this.probe, verify) >= 0;
  }

  /** The table of the records not met yet: from `next` on, up to `pending`. */
  private load(): void {
    const n = this.pending - this.next;
    const words = new Uint32Array(n * ENTRY_WORDS);
    const reader = new SpillReader(this.spill);
    let offset = this.nextAt;
    for (let i = 0; i < n; i++) {
      const head = reader.at(offset, LONG_HEAD);
      const len = wordAt(head.block, head.at);
      const k = i * ENTRY_WORDS;
      words[k + PRINT] = wordAt(head.block, head.at + 4);
      words[k + PRINT + 1] = wordAt(head.block, head.at + 8);
      const {block, at} = reader.at(offset, LONG_HEAD + len);
      this.hash(block, at + LONG_HEAD, at + LONG_HEAD + len, this.probe);
      words[k] = this.probe[0];
      words[k + 1] = this.probe[1];
      words[k + 2] = offset % 0x100000000;
      words[k + 3] = Math.floor(offset / 0x100000000);
      offset += LONG_HEAD + len;
    }
    this.table = new Table(words, n);
  }
}

function sameWords(b: Uint8Array, at: number, print: Uint32Array): boolean {
  return wordAt(b, at) === print[0] && wordAt(b, at + 4) === print[1];
}

/** The little-endian 32-bit word at b[at]. */
function wordAt(b: Uint8Array, at: number): number {
  return (b[at] | (b[at + 1] << 8) | (b[at + 2] << 16) | (b[at + 3] << 24)) >>> 0;
}

function putWord(b: Uint8Array, at: number, v: number): void {
  b[at] = v & 255;
  b[at + 1] = (v >>> 8) & 255;
  b[at + 2] = (v >>> 16) & 255;
  b[at + 3] = v >>> 24;
}
