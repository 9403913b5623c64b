import {AirbyteMessage} from 'faros-airbyte-cdk/lib/protocol';

import {LIMITS} from '../core/limits';
import {toJsonLine} from './messages';
import {BrokenListener, OutputSink, StreamSink, WorkerSink} from './output-sinks';
import {RowBatch} from '../csv/rows';
import {Encoder} from './record-encoder';

/**
 * Writes protocol messages to stdout as JSON lines, in batches, with backpressure by construction:
 * the kit's console.log-per-message path queues unboundedly on a slow consumer (gigabytes on a
 * large export), here a write returns a promise whenever the output's bounded queue is full (see
 * OutputSink). A batch is written when it is full, when a STATE is written (a checkpoint must not
 * wait), and at the latest a second after its first line. Records may be encoded, and everything
 * written, by a worker thread (`encodeInWorker`); every line still goes out in the order it was written.
 */
export class MessageWriter {
  private buffer: Buffer;
  private used = 0;
  private timer: NodeJS.Timeout | undefined;
  private timerDue = 0;
  private readonly stream: StreamSink;
  private sink: OutputSink;
  private written = false;
  private brokenListener: BrokenListener | undefined;

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
    this.stream = new StreamSink(out, batchBytes);
    this.sink = this.stream;
  }

  /**
   * Calls `listener` once if the output fails (its reader went away: EPIPE); from then on nothing
   * is written and nothing waits for it.
   */
  onBroken(listener: (err: NodeJS.ErrnoException) => void): void {
    this.brokenListener = listener;
    this.stream.onBroken(listener);
    if (this.sink instanceof WorkerSink) this.sink.onBroken(listener);
  }

  /**
   * From now on a worker thread encodes the records and writes everything to the output's file
   * descriptor itself, where one can start: the output must have one (stdout does), and nothing
   * may have been written to it yet (the worker's bytes must not overtake the stream's). True if it did.
   */
  encodeInWorker(): boolean {
    if (this.sink instanceof WorkerSink) return true;
    const fd = (this.out as {fd?: unknown}).fd;
    if (this.written || typeof fd !== 'number') return false;
    const worker = WorkerSink.start(fd);
    if (!worker) return false;
    if (this.brokenListener) worker.onBroken(this.brokenListener);
    this.sink = worker;
    return true;
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

  /** Writes one message and everything before it now (a checkpoint), and waits until the output has taken it. */
  async writeNow(message: AirbyteMessage): Promise<void> {
    this.write(message);
    await this.flush();
  }

  /** Queues an already serialised line. */
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
    return wait;
  }

  /**
   * Queues rows as records (the hot path); returns a promise when the caller should wait: the
   * output's queue is full, and the promise resolves when it has room again.
   */
  writeRecords(rows: RowBatch, encoder: Encoder, emittedAt: number): Promise<void> | undefined {
    // Lines queued before these records go first.
    const before = this.drainBuffer();
    this.written = true;
    return this.sink.records(rows, encoder, emittedAt) ?? before;
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
    if (this.used === 0) return undefined;
    const chunk = this.buffer.subarray(0, this.used);
    // The output may keep the chunk until it is written: the next batch gets a buffer of its own.
    this.buffer = Buffer.allocUnsafe(this.batchBytes);
    this.used = 0;
    return this.send(chunk);
  }

  private send(chunk: Uint8Array): Promise<void> | undefined {
    this.written = true;
    return this.sink.bytes(chunk);
  }

  /** Writes everything queued and waits until the output has taken it. */
  async flush(): Promise<void> {
    await this.drainBuffer();
    await this.sink.drained();
  }

  /** Stops the worker thread, if any (what is queued is lost: flush first). */
  close(): void {
    this.sink.close();
    this.sink = this.stream;
  }
}
