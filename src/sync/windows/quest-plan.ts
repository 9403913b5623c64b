import {AirbyteLogger} from 'faros-airbyte-cdk/lib/logger';

import {ExportApi} from '../../api/client';
import {Runtime} from '../../core/runtime';
import {TimeWindow} from '../../core/time';
import {CsvReadOptions} from '../../csv/reader';
import {ExportSlots} from '../exports/export-slots';
import {RecordShape, StreamRef, SyncOutput} from '../output-port';
import {DensityHint} from '../state/checkpoints';
import {FingerprintKey} from './resume';
import {SizingOptions} from './window-sizer';

// What one quest's read (QuestSync) is given: the read's means, and the plan its stream made.

export interface QuestSyncContext {
  api: ExportApi;
  slots: ExportSlots;
  runtime: Runtime;
  logger: AirbyteLogger;
  output: SyncOutput;
  sizing: Omit<SizingOptions, 'exportTimeoutMs'>;
  exportTimeoutMs: number;
  /** The longest a window may go without a row new to it, summed over the downloads that were cut off. */
  stallBudgetMs: number;
  csv: CsvReadOptions;
  /** The digest of the export settings (stream-state.ts exportFingerprint), recorded with every export. */
  fingerprint: string;
  /** What the resume identities a STATE lists are keyed with (resume/FingerprintKey). */
  resumeKey: FingerprintKey;
  /** Every header of the quest's files, as they are met. */
  onHeader?(header: string[]): void;
}

/**
 * What the quest's stream makes of its files: the stream definition's part of a quest's read. The
 * read checks each window's header with it and writes the window's rows as the shape it gives,
 * without knowing the stream's layout.
 */
export interface QuestRecords {
  /**
   * The header of a window's files (a line known to be one: file-reader.ts assertHeader), before any of its rows: throws if the stream cannot take them.
   * Returns the index of the rows' identity for resume (-1: the whole row).
   */
  header(header: string[]): number;
  /** The field names its records give the header's columns, by position: what the `columns` stream lists. */
  names(header: readonly string[]): string[];
  /** How the rows of a window become records (after its header). */
  shape(window: TimeWindow): RecordShape;
}

/** One quest's part of a read, decided before any request. */
export interface QuestPlan {
  questId: string;
  stream: StreamRef;
  records: QuestRecords;
  /** Reading starts after this (exclusive): the state's cursor, less any lookback, or just before start_date. */
  from: number;
  /** Reading ends here (inclusive): the sync's end. */
  end: number;
  density?: DensityHint;
}
