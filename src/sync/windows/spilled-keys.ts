import {SpillFile} from '../../core/spill-file';
import {Hash64, scramble} from './key-forms';
import {Table} from './key-table';

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

/** Keys of one exact form: 16-byte entries. */
export class ExactForm extends SpilledForm {
  add(entry: Uint8Array): void {
    this.spill.append(entry, 0, 16);
    this.count++;
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
export class LongForm extends SpilledForm {
  /** Where the next record in spill order begins. */
  private nextAt = 0;
  private readonly probe = new Uint32Array(4);
  private scratch = new Uint8Array(256);
  private readonly length = new Uint8Array(4);

  constructor(
    spill: SpillFile,
    private readonly hash: Hash64
  ) {
    super(spill);
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

  override restart(): void {
    super.restart();
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
