import {AirbyteMessage} from 'faros-airbyte-cdk';

import {LIMITS} from '../core/limits';
import {toJsonLine} from './messages';

/**
 * Writes protocol messages to stdout as JSON lines, in batches, honouring backpressure. The kit's
 * console.log-per-message path queues unboundedly on a slow consumer (gigabytes on a large export).
 * A batch is written when it is full, when a STATE is written (a checkpoint must not wait), and at
 * the latest a second after its first line.
 */
export class MessageWriter {
  private buffer: Buffer;
  private used = 0;
  private pending: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private timerDue = 0;

  constructor(
    private readonly out: NodeJS.WritableStream = process.stdout,
    /** Applied to every non-record line just before it is written (secret redaction). */
    private readonly scrub: (line: string) => string = (line) => line,
    /**
     * Lines are encoded straight into a byte buffer of this size, written out when full: no joined
     * string per batch, and one encoding pass per line.
     */
    private readonly batchBytes = 64 * 1024
  ) {
    this.buffer = Buffer.allocUnsafe(batchBytes);
  }

  /**
   * Queues one message; returns a promise only when the caller should wait for the consumer. A log
   * line or a status goes out within a tenth of a second: it says what the connector is doing now.
   */
  write(message: AirbyteMessage): Promise<void> | undefined {
    const wait = this.writeLine(this.scrub(toJsonLine(message)));
    this.flushWithin(LIMITS.messageFlushMs);
    return wait;
  }

  /** Writes one message and everything before it now (a checkpoint), waiting for the consumer. */
  async writeNow(message: AirbyteMessage): Promise<void> {
    this.write(message);
    await this.flush();
  }

  /** Queues an already serialised line (records, on the hot path). */
  writeLine(line: string): Promise<void> | undefined {
    // UTF-8 takes at most 3 bytes for each UTF-16 unit: flush first when the line might not fit.
    const most = line.length * 3 + 1;
    let wait = this.used + most > this.batchBytes ? this.drainBuffer() : undefined;
    if (most > this.batchBytes) {
      // A line longer than a batch (a huge cell) goes out on its own.
      wait = this.send(Buffer.from(`${line}\n`, 'utf8'));
    } else {
      this.used += this.buffer.write(line, this.used, 'utf8');
      this.buffer[this.used++] = 10;
      if (!this.timer) this.flushWithin(LIMITS.flushEveryMs);
    }
    return wait ?? this.pending;
  }

  /** Makes sure what is queued is written within `ms`. */
  private flushWithin(ms: number): void {
    const due = Date.now() + ms;
    if (this.timer && this.timerDue <= due) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerDue = due;
    this.timer = setTimeout(() => void this.drainBuffer(), ms);
    this.timer.unref();
  }

  private drainBuffer(): Promise<void> | undefined {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.used === 0) return this.pending;
    const chunk = this.buffer.subarray(0, this.used);
    // The stream may keep the chunk until it is written: the next batch gets a buffer of its own.
    this.buffer = Buffer.allocUnsafe(this.batchBytes);
    this.used = 0;
    return this.send(chunk);
  }

  private send(chunk: Buffer): Promise<void> | undefined {
    const ok = this.out.write(chunk);
    if (!ok && !this.pending) {
      this.pending = new Promise((resolve) => {
        this.out.once('drain', () => {
          this.pending = undefined;
          resolve();
        });
      });
    }
    return this.pending;
  }

  /** Writes everything queued and waits until the consumer has taken it. */
  async flush(): Promise<void> {
    await this.drainBuffer();
    await this.pending;
  }
}
