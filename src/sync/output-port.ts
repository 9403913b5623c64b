import {QUOTE, RowBatch} from '../csv/rows';

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
 * A cell marked `hash` is written as its keyed hash (core/keyed-hash.ts, under the shape's `hashSalt`).
 */
export type RecordField =
  /** The row's cell at `index`. */
  | {kind: 'cell'; name: string; index: number; hash?: boolean}
  /** The row's cell at `index` as text, also when empty (a key is never null); null if the row lacks it. */
  | {kind: 'text'; name: string; index: number}
  /**
   * The row's cell at `index` read as a time (core/time-text.ts) and written as RFC 3339 in UTC with
   * the precision written; one that is not a time is null, and the record says so (unreadableTime).
   */
  | {kind: 'time'; name: string; index: number}
  /** The same value in every record. */
  | {kind: 'constant'; name: string; value: string | null}
  /** An object of the row's cells, each under its key. */
  | {kind: 'cells'; name: string; cells: readonly ObjectCell[]}
  /**
   * One record per non-empty cell of `cells` (none for a row without answers): the fields before this
   * one, then the cell's constants, the cell as text under `value` and, when it is a plain decimal
   * number, as a JSON number under `number` (else null), then the fields after it, which are constants.
   * At most one per shape.
   */
  | {kind: 'answer'; cells: readonly AnswerCell[]; value: string; number: string};

export interface ObjectCell {
  key: string;
  index: number;
  hash?: boolean;
}

/** A cell that makes records of its own, and what they say of its column. */
export interface AnswerCell {
  index: number;
  constants: readonly {name: string; value: string | null}[];
  /** The value is hashed (and `number` is then null). */
  hash?: boolean;
}

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
  /** The key of the hashed cells (config hash_salt); present when a field hashes. */
  hashSalt?: string;
}

/** A plain decimal number, as JSON writes it: no sign but '-', no leading zero, no exponent. */
const PLAIN_NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?$/;

/** A decimal text's value as its significant digits and the power of ten before them ("-0.0120" -> "12e-1"; zero -> "0"). */
function decimalOf(text: string): string {
  const [, int = '', fraction = '', exponent = '0'] = /^-?(\d*)(?:\.(\d*))?(?:e([+-]?\d+))?$/i.exec(text) ?? [];
  const digits = int + fraction;
  const lead = digits.length - digits.replace(/^0+/, '').length;
  const significant = digits.slice(lead).replace(/0+$/, '');
  if (!significant) return '0';
  return `${text.startsWith('-') ? '-' : ''}${significant}e${int.length - lead + Number(exponent)}`;
}

/**
 * The cell's text as `value_number`: a plain decimal number (PLAIN_NUMBER) whose value a double holds,
 * that is, the double's shortest text is the same decimal (`1.50` is 1.5 and `0.1` is 0.1, but
 * `9007199254740993` reads back as …992 and 400 digits as Infinity: null, the text stays in `value`).
 * `-0` is zero. An exponent, a leading `+`, a leading zero or white space is text, not a number.
 */
export function cellNumber(text: string): number | null {
  if (!PLAIN_NUMBER.test(text)) return null;
  const n = Number(text);
  return decimalOf(String(n)) === decimalOf(text) ? n : null;
}

/**
 * How many records a shape makes of rows: one a row, or for a shape with an `answer` field one per
 * non-empty answer cell (counted without making them). STATE counts use it.
 */
export function recordCounter(shape: RecordShape): (rows: RowBatch) => number {
  const answer = shape.fields.find((f) => f.kind === 'answer');
  if (!answer) return (batch) => batch.rows;
  const indexes = answer.cells.map((c) => c.index);
  return ({bytes, cells, rows, width}) => {
    let count = 0;
    for (let r = 0, k = 0; r < rows; r++, k += width + 1) {
      for (const i of indexes) {
        if (i >= width) continue;
        // The raw cell (see RowBatch): empty when it has no bytes, or is a quoted empty text.
        const start = cells[k + i];
        const length = cells[k + i + 1] - 1 - start;
        if (length > 0 && !(length === 2 && bytes[start] === QUOTE)) count++;
      }
    }
    return count;
  };
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
