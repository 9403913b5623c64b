// The worker thread that encodes records (see RecordWorker in output.ts): rows arrive packed, lines
// go back as transferred buffers, one answer per request, in order.

import {parentPort} from 'worker_threads';

import {RecordShape} from '../sync/output-port';
import {PackedRows, RecordEncoder} from './record-encoder';

/** What the record worker is asked: to make an encoder, to forget one, or to encode rows with one. */
export type WorkerRequest =
  | {kind: 'encoder'; id: number; shape: RecordShape}
  | {kind: 'drop'; id: number}
  | {kind: 'rows'; id: number; packed: PackedRows; emittedAt: number; batchBytes: number};

const encoders = new Map<number, RecordEncoder>();
const port = parentPort;
if (!port) throw new Error('record-worker runs as a worker thread');

port.on('message', (m: WorkerRequest) => {
  if (m.kind === 'encoder') {
    encoders.set(m.id, new RecordEncoder(m.shape));
  } else if (m.kind === 'drop') {
    encoders.delete(m.id);
  } else {
    const encoder = encoders.get(m.id);
    if (!encoder) throw new Error(`record-worker: no encoder ${m.id}`);
    const chunks = encoder.encode(m.packed, m.emittedAt, m.batchBytes);
    port.postMessage(
      chunks,
      chunks.map((c) => c.buffer as ArrayBuffer)
    );
  }
});
