import fs from 'fs';
import os from 'os';
import path from 'path';

import {fileProblem} from './errors';

/** Bytes gathered in memory before they go to the file: also all a small spill ever uses. */
const BUFFER_BYTES = 64 * 1024;

/**
 * An append-only scratch file, for what a read must keep but not hold in memory. Appends gather in
 * a small buffer that goes to a file in the system's temp dir when full; the file is unlinked as
 * soon as it is made, so it is gone when closed or when the process ends, however it ends. Where no
 * temp file can be made, full buffers stay in memory (and `onMemory` says so once): slower to
 * bound, never lost. Reads take any range, in the file or still in the buffer.
 */
export class SpillFile {
  private buffer = Buffer.allocUnsafe(BUFFER_BYTES);
  private used = 0;
  /** Bytes in the file (or in `chunks`), before the buffer's. */
  private stored = 0;
  private fd: number | undefined;
  /** Buffers kept in memory where the temp dir cannot take them, and the offset each begins at. */
  private chunks: Buffer[] | undefined;
  private chunkStarts: number[] = [];
  private closed = false;

  /**
   * @param onMemory told when no temporary file can be made (the bytes then stay in memory).
   * @param dir where the file goes: the system's temp dir (TMPDIR) unless a test says otherwise.
   */
  constructor(
    private readonly onMemory?: (reason: string) => void,
    private readonly dir = os.tmpdir()
  ) {}

  /** Bytes appended so far. */
  get size(): number {
    return this.stored + this.used;
  }

  /** Bytes held on disk, and in memory (the buffer, and what the temp dir could not take). */
  get footprint(): {fileBytes: number; memoryBytes: number} {
    const kept = this.chunks?.reduce((sum, chunk) => sum + chunk.length, 0) ?? 0;
    return {fileBytes: this.fd === undefined ? 0 : this.stored, memoryBytes: this.buffer.length + kept};
  }

  /** Appends bytes[start, end); returns the offset they begin at. */
  append(bytes: Uint8Array, start = 0, end = bytes.length): number {
    const at = this.size;
    if (end - start <= 64 && this.used + end - start <= BUFFER_BYTES) {
      // A few bytes (a key's entry): a loop costs less than a view and a copy.
      const buffer = this.buffer;
      let used = this.used;
      for (let i = start; i < end; i++) buffer[used++] = bytes[i];
      this.used = used;
      return at;
    }
    let from = start;
    while (from < end) {
      if (this.used === BUFFER_BYTES) this.store();
      const n = Math.min(end - from, BUFFER_BYTES - this.used);
      this.buffer.set(bytes.subarray(from, from + n), this.used);
      this.used += n;
      from += n;
    }
    return at;
  }

  /** Reads `length` bytes at `offset` into `into` at `at`; the range must lie within what was appended. */
  read(into: Uint8Array, at: number, length: number, offset: number): void {
    let done = 0;
    while (done < length) {
      const pos = offset + done;
      let n: number;
      if (pos >= this.stored) {
        n = length - done;
        into.set(this.buffer.subarray(pos - this.stored, pos - this.stored + n), at + done);
      } else if (this.chunks) {
        // The last chunk that begins at or before pos.
        let lo = 0;
        let hi = this.chunkStarts.length - 1;
        while (lo < hi) {
          const mid = (lo + hi + 1) >>> 1;
          if (this.chunkStarts[mid] <= pos) lo = mid;
          else hi = mid - 1;
        }
        const k = lo;
        const chunk = this.chunks[k];
        const inChunk = pos - this.chunkStarts[k];
        n = Math.min(length - done, chunk.length - inChunk);
        into.set(chunk.subarray(inChunk, inChunk + n), at + done);
      } else {
        n = Math.min(length - done, this.stored - pos);
        n = fs.readSync(this.fd as number, into, at + done, n, pos);
        if (n === 0) throw new Error(`spill file: nothing to read at ${pos} of ${this.stored}`);
      }
      done += n;
    }
  }

  /** Forgets everything and frees the file. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
    this.chunks = undefined;
    this.used = 0;
    this.stored = 0;
  }

  private store(): void {
    if (this.closed) throw new Error('spill file: appended after close');
    if (this.fd === undefined && !this.chunks) this.open();
    if (this.chunks) {
      this.chunks.push(this.buffer.subarray(0, this.used));
      this.chunkStarts.push(this.stored);
      this.buffer = Buffer.allocUnsafe(BUFFER_BYTES);
    } else {
      let written = 0;
      while (written < this.used) {
        written += fs.writeSync(this.fd as number, this.buffer, written, this.used - written, this.stored + written);
      }
    }
    this.stored += this.used;
    this.used = 0;
  }

  private open(): void {
    const dir = this.dir;
    const file = path.join(dir, `questback-spill-${process.pid}-${Math.random().toString(36).slice(2)}`);
    try {
      this.fd = fs.openSync(file, 'wx+', 0o600);
      fs.unlinkSync(file);
    } catch (err) {
      if (this.fd !== undefined) fs.closeSync(this.fd);
      this.fd = undefined;
      this.chunks = [];
      this.onMemory?.(`cannot make a temporary file in ${dir} (${fileProblem(err, 'folder')})`);
    }
  }
}
