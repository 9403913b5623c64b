import {AirbyteMessage} from 'faros-airbyte-cdk/lib/protocol';
import fs from 'fs';
import path from 'path';
import {Worker} from 'worker_threads';

import {LIMITS} from '../core/limits';
import {toJsonLine} from './messages';
import {packRows, RecordEncoder} from './record-encoder';
import type {WorkerRequest} from './record-worker';

/** Encoders the worker keeps; the oldest is dropped (and made again should it be used again). */
const WORKER_ENCODERS = 64;
/** Requests the worker may have unanswered before the writer of records waits. */
const WORKER_IN_FLIGHT = 4;
const WORKER_YOUNG_MB = 4;

/**
 * A worker thread that encodes records, so that parsing (on the main thread) and encoding run on
 * two cores. Rows go packed (one string and the cells' lengths), lines come back as transferred
 * buffers, answers in the order of the requests.
 */
class RecordWorker {
  private readonly ids = new WeakMap<RecordEncoder, number>();
  /** Encoders the worker holds, oldest first. */
  private readonly live: number[] = [];
  private nextId = 1;
  private readonly answers: {resolve: (chunks: Uint8Array[]) => void; reject: (err: Error) => void}[] = [];

  private constructor(private readonly worker: Worker) {
    worker.unref();
    worker.on('message', (chunks: Uint8Array[]) => {
      this.answers.shift()?.resolve(chunks);
      if (this.answers.length === 0) worker.unref();
    });
    worker.on('error', (err) => this.fail(err));
    worker.on('exit', (code) => this.fail(new Error(`the record worker exited (code ${code})`)));
  }

  /** The worker, or undefined where its compiled file is missing (the sources run under ts-jest). */
  static start(): RecordWorker | undefined {
    const file = path.join(__dirname, 'record-worker.js');
    // A small young generation: the worker's garbage is short-lived, and memory is bounded (peak RSS).
    const options = {resourceLimits: {maxYoungGenerationSizeMb: WORKER_YOUNG_MB}};
    return fs.existsSync(file) ? new RecordWorker(new Worker(file, options)) : undefined;
  }

  encode(encoder: RecordEncoder, rows: readonly (readonly string[])[], emittedAt: number, batchBytes: number) {
    let id = this.ids.get(encoder);
    if (id === undefined || !this.live.includes(id)) {
      id = this.nextId++;
      this.ids.set(encoder, id);
      this.live.push(id);
      this.post({kind: 'encoder', id, shape: encoder.shape});
      if (this.live.length > WORKER_ENCODERS) this.post({kind: 'drop', id: this.live.shift() as number});
    }
    const packed = packRows(rows);
    this.post({kind: 'rows', id, packed, emittedAt, batchBytes}, [packed.lengths.buffer as ArrayBuffer]);
    this.worker.ref();
    return new Promise<Uint8Array[]>((resolve, reject) => this.answers.push({resolve, reject}));
  }

  close(): void {
    void this.worker.terminate();
  }

  private post(request: WorkerRequest, transfer: ArrayBuffer[] = []): void {
    this.worker.postMessage(request, transfer);
  }

  private fail(err: Error): void {
    for (const answer of this.answers.splice(0)) answer.reject(err);
  }
}

/**
 * Writes protocol messages to stdout as JSON lines, in batches, honouring backpressure. The kit's
 * console.log-per-message path queues unboundedly on a slow consumer (gigabytes on a large export).
 * A batch is written when it is full, when a STATE is written (a checkpoint must not wait), and at
 * the latest a second after its first line. Records may be encoded on a worker thread
 * (`encodeInWorker`); every line still goes out in the order it was written.
 */
export class MessageWriter {
  private buffer: Buffer;
  private used = 0;
  private pending: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private timerDue = 0;
  private worker: RecordWorker | undefined;
  /** Writes waiting behind records the worker is encoding: the last one, and how many. */
  private behind: Promise<void> = Promise.resolve();
  private waiting = 0;
  /** Completion of each request to the worker not yet written out, oldest first. */
  private readonly inFlight: Promise<void>[] = [];
  private failure: Error | undefined;
  private broken = false;

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
   * Calls `listener` once if the stream fails (its reader went away: EPIPE); from then on nothing
   * is written and nothing waits for the stream.
   */
  onBroken(listener: (err: NodeJS.ErrnoException) => void): void {
    this.out.on('error', (err: NodeJS.ErrnoException) => {
      if (this.broken) return;
      this.broken = true;
      this.pending = undefined;
      listener(err);
    });
  }

  /** Encodes records on a worker thread from now on, where one can start; true if it did. */
  encodeInWorker(): boolean {
    this.worker ??= RecordWorker.start();
    return this.worker !== undefined;
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
    return wait ?? this.pending;
  }

  /** Queues rows as records (the hot path); returns a promise when the caller should wait. */
  writeRecords(
    rows: readonly (readonly string[])[],
    encoder: RecordEncoder,
    emittedAt: number
  ): Promise<void> | undefined {
    if (this.failure) throw this.failure;
    // Lines queued before these records go first.
    this.drainBuffer();
    if (!this.worker) {
      let wait: Promise<void> | undefined;
      for (const chunk of encoder.encode(packRows(rows), emittedAt, this.batchBytes)) wait = this.send(chunk);
      return wait;
    }
    const encoded = this.worker.encode(encoder, rows, emittedAt, this.batchBytes);
    const done = this.enqueue(encoded, (chunks) => chunks.forEach((chunk) => this.writeOut(chunk)));
    this.inFlight.push(done);
    void done.finally(() => this.inFlight.shift());
    return this.inFlight.length >= WORKER_IN_FLIGHT ? this.inFlight[0] : this.pending;
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

  /** Writes a chunk now, or after the records the worker is still encoding. */
  private send(chunk: Uint8Array): Promise<void> | undefined {
    if (this.waiting === 0) this.writeOut(chunk);
    else void this.enqueue(Promise.resolve(chunk), (ready) => this.writeOut(ready));
    return this.pending;
  }

  /** Writes what `ready` gives once it is there and everything queued before it is written. */
  private enqueue<T>(ready: Promise<T>, write: (value: T) => void): Promise<void> {
    this.waiting++;
    const done = Promise.all([this.behind, ready]).then(
      ([, value]) => write(value),
      (err: Error) => {
        this.failure ??= err;
      }
    );
    this.behind = done.finally(() => this.waiting--);
    return done;
  }

  private writeOut(chunk: Uint8Array): void {
    if (this.broken) return;
    const ok = this.out.write(chunk);
    if (!ok && !this.pending && !this.broken) {
      this.pending = new Promise((resolve) => {
        this.out.once('drain', () => {
          this.pending = undefined;
          resolve();
        });
      });
    }
  }

  /** Writes everything queued and waits until the consumer has taken it. */
  async flush(): Promise<void> {
    this.drainBuffer();
    await this.behind;
    if (this.failure) throw this.failure;
    await this.pending;
  }

  /** Stops the worker thread, if any (what is queued is lost: flush first). */
  close(): void {
    this.worker?.close();
    this.worker = undefined;
  }
}
