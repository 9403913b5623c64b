import {RowBatch} from '../csv/rows';

/**
 * What a sync hands to the protocol layer. The sync layer decides what to emit and when; the
 * protocol layer (src/protocol) decides how it is written. Kept here so that imports run one way.
 */
export interface StreamRef {
  name: string;
  namespace?: string;
}

export type StreamStatus = 'STARTED' | 'RUNNING' | 'COMPLETE' | 'INCOMPLETE';

/** Writes the rows of one export window as records of its stream. */
export interface RowWriter {
  /** The batch's memory goes with it (it may move to another thread). A returned promise means: wait before writing more. */
  write(rows: RowBatch): Promise<void> | undefined;
}

/**
 * A field of a record made from a CSV row, in the order of the record: a cell's text (null when
 * empty, unless `keepEmpty`), a fixed value, or an object of such fields.
 */
export type RecordField =
  | {name: string; cell: number; keepEmpty?: boolean}
  | {name: string; value: string | null}
  | {name: string; fields: readonly RecordField[]};

export interface SyncOutput {
  status(stream: StreamRef, status: StreamStatus): void;
  /** The stream waits for the service's rate limit until this epoch ms. */
  rateLimited(stream: StreamRef, until: number): void;
  /** Each row is written as a record of `fields`. */
  rowWriter(stream: StreamRef, fields: readonly RecordField[]): RowWriter;
  /** Records of a small stream whose data the sync builds itself (typed values, not CSV cells). */
  records(stream: StreamRef, data: readonly object[]): Promise<void>;
  /** A checkpoint: written out at once. */
  state(stream: StreamRef, state: object, recordCount: number): Promise<void>;
  /** A failure, of a stream or (without one) of the whole sync. */
  error(err: Error, stream?: StreamRef): Promise<void>;
}
