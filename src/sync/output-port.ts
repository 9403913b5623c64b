import {rfc3339} from '../core/time-text';
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

/**
 * One field of the records a shape makes, in record order. Cells are the row's CSV cells by
 * position; an empty cell, or one the row lacks, is null (the CSV cannot tell an empty answer from none).
 */
export type RecordField =
  /** The row's cell at `index`. */
  | {kind: 'cell'; name: string; index: number}
  /** The row's cell at `index` as text, also when empty (a key is never null); null if the row lacks it. */
  | {kind: 'text'; name: string; index: number}
  /**
   * The row's cell at `index` read as a time (core/time-text.ts) and written as RFC 3339 in UTC with
   * the precision written; one that is not a time is null, and the record says so (unreadableTime).
   */
  | {kind: 'time'; name: string; index: number}
  /** The same value in every record. */
  | {kind: 'constant'; name: string; value: string | null}
  /** An object of the row's cells, the first `keys.length` of them, each under its key. */
  | {kind: 'cells'; name: string; keys: readonly string[]};

/** A value the source changed on its way to the record: an entry of Airbyte's `meta.changes`. */
export interface RecordChange {
  field: string;
  change: 'NULLED' | 'TRUNCATED';
  reason: 'SOURCE_SERIALIZATION_ERROR' | 'SOURCE_FIELD_SIZE_LIMITATION' | 'SOURCE_RECORD_SIZE_LIMITATION';
}

/** A time field whose cell is not a time: null, said in meta.changes rather than passed on as text. */
export function unreadableTime(field: string): RecordChange {
  return {field, change: 'NULLED', reason: 'SOURCE_SERIALIZATION_ERROR'};
}

/** A cell cut to the size bound of a cell, or of its row (csv/bound-cuts.ts). */
export function truncatedCell(field: string, byRow: boolean): RecordChange {
  return {field, change: 'TRUNCATED', reason: byRow ? 'SOURCE_RECORD_SIZE_LIMITATION' : 'SOURCE_FIELD_SIZE_LIMITATION'};
}

/**
 * How the rows of one window become records of a stream: plain data, so that the output layer can
 * execute it where it likes (on a worker thread) from the cells it is given. The stream definition
 * makes it; the sync core hands it over without knowing what it says.
 */
export interface RecordShape {
  stream: StreamRef;
  fields: readonly RecordField[];
}

function cellValue(row: readonly string[], index: number): string | null {
  const cell = row[index];
  return cell === undefined || cell === '' ? null : cell;
}

/**
 * The record a shape makes of a row, as an object: the meaning of a shape. The protocol layer's
 * encoder writes the same JSON value (a test holds it to that), its keys in the shape's order
 * (JSON.stringify of this object would put integer-like keys first).
 */
export function shapeRecord(shape: RecordShape, row: readonly string[]): Record<string, unknown> {
  const data: Record<string, unknown> = Object.create(null);
  for (const field of shape.fields) {
    if (field.kind === 'cell') data[field.name] = cellValue(row, field.index);
    else if (field.kind === 'text') data[field.name] = row[field.index] ?? null;
    else if (field.kind === 'time') data[field.name] = timeOf(row, field.index);
    else if (field.kind === 'constant') data[field.name] = field.value;
    else {
      // A null prototype: a header text such as "__proto__" is a key like any other.
      const cells: Record<string, string | null> = Object.create(null);
      field.keys.forEach((key, i) => (cells[key] = cellValue(row, i)));
      data[field.name] = cells;
    }
  }
  return data;
}

function timeOf(row: readonly string[], index: number): string | null {
  const cell = cellValue(row, index);
  return cell === null ? null : (rfc3339(cell) ?? null);
}

/** The changes the record a shape makes of a row carries in its `meta.changes`, in field order. */
export function shapeChanges(shape: RecordShape, row: readonly string[]): RecordChange[] {
  return shape.fields
    .filter(
      (field) => field.kind === 'time' && cellValue(row, field.index) !== null && timeOf(row, field.index) === null
    )
    .map((field) => unreadableTime(field.name));
}

/** Writes the rows of one export window as records of its stream. */
export interface RowWriter {
  /** The batch's memory goes with it (it may move to another thread). A returned promise means: wait before writing more. */
  write(rows: RowBatch): Promise<void> | undefined;
}

export interface SyncOutput {
  status(stream: StreamRef, status: StreamStatus): void;
  /** The stream waits for the service's rate limit until this epoch ms. */
  rateLimited(stream: StreamRef, until: number): void;
  /** Rows written as the records `shape` makes of them. */
  rowWriter(shape: RecordShape): RowWriter;
  /** Records of a small stream whose data the sync builds itself (typed values, not CSV cells). */
  records(stream: StreamRef, data: readonly object[]): Promise<void>;
  /** A checkpoint: written out at once. */
  state(stream: StreamRef, state: object, recordCount: number): Promise<void>;
  /** A failure, of a stream or (without one) of the whole sync. */
  error(err: Error, stream?: StreamRef): Promise<void>;
}
