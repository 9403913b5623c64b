import fs from 'fs';
import path from 'path';
import {Worker} from 'worker_threads';

import {reuseBuffers, RowBatch} from '../csv/rows';
import {Encoder} from './record-encoder';
import type {WorkerReply, WorkerRequest} from './record-worker';

/**
 * Where the writer's bytes go, in the order given. Backpressure by construction: a call returns a
 * promise when the bytes not yet taken by the output have reached the sink's bound, and that
 * promise resolves only once there is room again; whoever writes waits on it.
 */
export interface OutputSink {
  bytes(chunk: Uint8Array): Promise<void> | undefined;
  /** Rows as records (the hot path); the batch's memory goes with it. */
  records(rows: RowBatch, encoder: Encoder, emittedAt: number): Promise<void> | undefined;
  /** Resolves once everything given so far has been taken by the output; rejects with a failure to encode. */
  drained(): Promise<void>;
  close(): void;
}

/** The output failed (its reader went away: EPIPE); from then on nothing is written and nothing waits. */
export type BrokenListener = (err: NodeJS.ErrnoException) => void;

/**
 * Encodes on this thread and writes to a Node stream, waiting for 'drain' whenever the stream says
 * its buffer is full: at most one call's bytes lie beyond the stream's high-water mark.
 */
export class StreamSink implements OutputSink {
  private pending: Promise<void> | undefined;
  private broken = false;

  constructor(
    private readonly out: NodeJS.WritableStream,
    private readonly batchBytes: number
  ) {}

  onBroken(listener: BrokenListener): void {
    this.out.on('error', (err: NodeJS.ErrnoException) => {
      if (this.broken) return;
      this.broken = true;
      this.pending = undefined;
      listener(err);
    });
  }

  bytes(chunk: Uint8Array): Promise<void> | undefined {
    if (this.broken) return undefined;
    if (!this.out.write(chunk) && !this.pending && !this.broken) {
      this.pending = new Promise((resolve) => {
        this.out.once('drain', () => {
          this.pending = undefined;
          resolve();
        });
      });
    }
    return this.pending;
  }

  records(rows: RowBatch, encoder: Encoder, emittedAt: number): Promise<void> | undefined {
    let wait: Promise<void> | undefined;
    for (const chunk of encoder.encode(rows, emittedAt, this.batchBytes)) wait = this.bytes(chunk);
    return wait;
  }

  async drained(): Promise<void> {
    await this.pending;
  }

  close(): void {}
}

/** Encoders the worker keeps; the oldest is dropped (and made again should it be used again). */
const WORKER_ENCODERS = 64;
const WORKER_YOUNG_MB = 4;
/**
 * Bytes given to the worker and not yet taken by the output (a batch of rows counts the memory of
 * its bytes and cells) before a write waits: memory is this bound plus the worker's two output buffers.
 */
export const WORKER_QUEUE_BYTES = 4 * 1024 * 1024;

/**
 * A worker thread that encodes records and writes everything to the output's file descriptor
 * itself, so that parsing (on the main thread) and encoding and writing run on two cores. Lines and
 * rows go in the order given; each is acknowledged once the output has taken its bytes.
 */
export class WorkerSink implements OutputSink {
  private readonly ids = new WeakMap<Encoder, number>();
  /** Encoders the worker holds, oldest first. */
  private readonly live: number[] = [];
  private nextId = 1;
  private seq = 0;
  /** Bytes of each item not yet acknowledged, by sequence number. */
  private readonly costs = new Map<number, number>();
  private queued = 0;
  private room: Deferred | undefined;
  private idle: Deferred | undefined;
  private failure: Error | undefined;
  private broken = false;
  private brokenListener: BrokenListener | undefined;

  private constructor(private readonly worker: Worker) {
    worker.unref();
    worker.on('message', (reply: WorkerReply) => this.reply(reply));
    worker.on('error', (err) => this.fail(err));
    worker.on('exit', (code) => this.fail(new Error(`the record worker exited (code ${code})`)));
  }

  /** A worker writing to `fd`, or undefined where its compiled file is missing (the sources run under jest, compiled per file). */
  static start(fd: number): WorkerSink | undefined {
    const file = path.join(__dirname, 'record-worker.js');
    if (!fs.existsSync(file)) return undefined;
    // A small young generation: the worker's garbage is short-lived, and memory is bounded (peak RSS).
    const sink = new WorkerSink(new Worker(file, {resourceLimits: {maxYoungGenerationSizeMb: WORKER_YOUNG_MB}}));
    sink.post({kind: 'open', fd});
    return sink;
  }

  onBroken(listener: BrokenListener): void {
    this.brokenListener = listener;
  }

  bytes(chunk: Uint8Array): Promise<void> | undefined {
    if (this.failure) throw this.failure;
    if (this.broken) return undefined;
    // The chunk's memory moves to the worker: a chunk sharing its buffer is copied first.
    const own = chunk.byteOffset === 0 && chunk.buffer.byteLength === chunk.length ? chunk : chunk.slice();
    return this.send({kind: 'bytes', seq: this.seq + 1, data: own}, own.length, [own.buffer as ArrayBuffer]);
  }

  records(rows: RowBatch, encoder: Encoder, emittedAt: number): Promise<void> | undefined {
    if (this.failure) throw this.failure;
    if (this.broken) return undefined;
    let id = this.ids.get(encoder);
    if (id === undefined || !this.live.includes(id)) {
      id = this.nextId++;
      this.ids.set(encoder, id);
      this.live.push(id);
      this.post({kind: 'encoder', id, shape: encoder.shape});
      if (this.live.length > WORKER_ENCODERS) this.post({kind: 'drop', id: this.live.shift() as number});
    }
    const {bytes, cells} = rows;
    const cost = bytes.buffer.byteLength + cells.buffer.byteLength;
    return this.send({kind: 'rows', seq: this.seq + 1, id, batch: rows, emittedAt}, cost, [
      bytes.buffer as ArrayBuffer,
      cells.buffer as ArrayBuffer,
    ]);
  }

  drained(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.costs.size === 0 || this.broken) return Promise.resolve();
    this.idle ??= deferred();
    return this.idle.promise;
  }

  close(): void {
    void this.worker.terminate();
  }

  private send(
    request: WorkerRequest & {seq: number},
    cost: number,
    transfer: ArrayBuffer[]
  ): Promise<void> | undefined {
    this.seq = request.seq;
    this.costs.set(request.seq, cost);
    this.queued += cost;
    this.post(request, transfer);
    this.worker.ref();
    if (this.queued < WORKER_QUEUE_BYTES) return undefined;
    this.room ??= deferred();
    return this.room.promise;
  }

  private post(request: WorkerRequest, transfer: ArrayBuffer[] = []): void {
    this.worker.postMessage(request, transfer);
  }

  private reply(reply: WorkerReply): void {
    if (reply.kind === 'taken') {
      if (reply.buffers) reuseBuffers(reply.buffers);
      this.queued -= this.costs.get(reply.seq) ?? 0;
      this.costs.delete(reply.seq);
      if (this.queued < WORKER_QUEUE_BYTES) this.release('room');
      if (this.costs.size === 0) {
        this.worker.unref();
        this.release('idle');
      }
      return;
    }
    // The output failed: nothing more is written, and nobody waits for it.
    if (this.broken) return;
    this.broken = true;
    this.costs.clear();
    this.queued = 0;
    this.worker.unref();
    this.release('room');
    this.release('idle');
    const err: NodeJS.ErrnoException = new Error(reply.message);
    err.code = reply.code;
    this.brokenListener?.(err);
  }

  private release(which: 'room' | 'idle'): void {
    const waiting = this[which];
    this[which] = undefined;
    waiting?.resolve();
  }

  private fail(err: Error): void {
    this.failure ??= err;
    this.worker.unref();
    const idle = this.idle;
    this.idle = undefined;
    idle?.reject(this.failure);
    this.release('room');
  }
}

interface Deferred {
  promise: Promise<void>;
  resolve(): void;
  reject(err: Error): void;
}

function deferred(): Deferred {
  const d = {} as Deferred;
  d.promise = new Promise<void>((resolve, reject) => Object.assign(d, {resolve, reject}));
  // A rejection nobody awaits yet must not count as unhandled.
  d.promise.catch(() => undefined);
  return d;
}
