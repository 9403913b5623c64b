// The worker thread that encodes records and writes every line to the output itself (see
// WorkerSink in output-sinks.ts): requests are taken in order, one at a time, and each is
// acknowledged ('taken') once the output has accepted all its bytes, so the main thread's queue
// holds exactly what is not written yet.

import fs from 'fs';
import net from 'net';
import tty from 'tty';
import {parentPort} from 'worker_threads';

import {RowBatch} from '../csv/rows';
import {RecordShape} from '../sync/output-port';
import {Encoder} from './record-encoder';
import {recordEncoder} from './long-record-encoder';

/** What the record worker is asked, in order. */
export type WorkerRequest =
  | {kind: 'open'; fd: number}
  | {kind: 'encoder'; id: number; shape: RecordShape}
  | {kind: 'drop'; id: number}
  | {kind: 'rows'; seq: number; id: number; batch: RowBatch; emittedAt: number}
  | {kind: 'bytes'; seq: number; data: Uint8Array};

/**
 * What it answers: an item's bytes were all taken (a batch's buffers come back with it, for reuse),
 * or the output failed (and nothing more is written).
 */
export type WorkerReply =
  {kind: 'taken'; seq: number; buffers?: ArrayBuffer[]} | {kind: 'broken'; code?: string; message: string};

/** Records are encoded into two buffers of this size in turn: one is filled while the other is written. */
const OUTPUT_BYTES = 256 * 1024;
const buffers = [new Uint8Array(OUTPUT_BYTES), new Uint8Array(OUTPUT_BYTES)];

/** Writes a chunk; resolves once the output has taken it. */
type Output = (chunk: Uint8Array) => Promise<void>;

/** The descriptor as Node's own stdout would open it: a stream for a pipe, a socket or a terminal, plain writes for a file. */
function openOutput(fd: number): Output {
  let stream: NodeJS.WritableStream | undefined;
  if (tty.isatty(fd)) stream = new tty.WriteStream(fd);
  else {
    const stat = fs.fstatSync(fd);
    if (stat.isFIFO() || stat.isSocket()) stream = new net.Socket({fd, readable: false, writable: true});
  }
  if (!stream) {
    return async (chunk) => {
      for (let done = 0; done < chunk.length;) done += fs.writeSync(fd, chunk, done, chunk.length - done);
    };
  }
  const out = stream;
  // Failures come through each write's callback.
  out.on('error', () => undefined);
  return (chunk) => new Promise((resolve, reject) => out.write(chunk, (err) => (err ? reject(err) : resolve())));
}

const port = parentPort;
if (!port) throw new Error('record-worker runs as a worker thread');
const encoders = new Map<number, Encoder>();
const queue: WorkerRequest[] = [];
let output: Output | undefined;
let running = false;
let broken = false;

/** Writes the batch's rows as records, encoding the next buffer while the last one is written. */
async function writeRows(write: Output, encoder: Encoder, batch: RowBatch, emittedAt: number): Promise<void> {
  let written: Promise<void> | undefined;
  let turn = 0;
  // The two buffers take turns; a row larger than a buffer gets one of its own.
  const bufferFor = (need: number): Uint8Array => (need > OUTPUT_BYTES ? new Uint8Array(need) : buffers[(turn ^= 1)]);
  for (const chunk of encoder.lines(batch, emittedAt, bufferFor)) {
    await written;
    written = write(chunk);
  }
  await written;
}

async function handle(m: WorkerRequest): Promise<void> {
  if (m.kind === 'open') {
    output = openOutput(m.fd);
  } else if (m.kind === 'encoder') {
    encoders.set(m.id, recordEncoder(m.shape));
  } else if (m.kind === 'drop') {
    encoders.delete(m.id);
  } else {
    if (broken) return;
    const write = output;
    if (!write) throw new Error('record-worker: no output opened');
    try {
      if (m.kind === 'bytes') await write(m.data);
      else {
        const encoder = encoders.get(m.id);
        if (!encoder) throw new Error(`record-worker: no encoder ${m.id}`);
        await writeRows(write, encoder, m.batch, m.emittedAt);
      }
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      if (e.code === undefined) throw err;
      broken = true;
      port?.postMessage({kind: 'broken', code: e.code, message: e.message} satisfies WorkerReply);
      return;
    }
    if (m.kind === 'bytes') port?.postMessage({kind: 'taken', seq: m.seq} satisfies WorkerReply);
    else {
      const buffers = [m.batch.bytes.buffer as ArrayBuffer, m.batch.cells.buffer as ArrayBuffer];
      port?.postMessage({kind: 'taken', seq: m.seq, buffers} satisfies WorkerReply, buffers);
    }
  }
}

async function run(): Promise<void> {
  running = true;
  while (queue.length > 0) await handle(queue.shift() as WorkerRequest);
  running = false;
}

port.on('message', (m: WorkerRequest) => {
  queue.push(m);
  if (!running) {
    run().catch((err: unknown) => {
      // An encoding bug: the worker fails, and the main thread with it (WorkerSink.fail).
      setImmediate(() => {
        throw err;
      });
    });
  }
});
