// Messages and reports shared by the benchmark and its child processes.

import type {QuestConfig, RequestRecord, SimulatorStats} from '../../test/simulator';

/** What sim-process.ts is started with (JSON in BENCH_SIM_OPTIONS). */
export interface SimProcessOptions {
  quests: QuestConfig[];
  exportDurationMs?: number;
  seed?: number;
  /** Where the simulator writes export files: inside the benchmark's temp dir, so cleanup finds them. */
  dataDir: string;
}

export interface SimInfo {
  apiUrl: string;
  authUrl: string;
  clientId: string;
  clientSecret: string;
  projectId: string;
  questIds: string[];
}

/** Parent -> simulator process. */
export type SimCommand = {type: 'stats'} | {type: 'close'};

/** Simulator process -> parent. */
export type SimReply =
  | {type: 'ready'; info: SimInfo}
  | {type: 'stats'; stats: SimulatorStats; requests: RequestRecord[]}
  | {type: 'error'; message: string};

/** What consumer.ts prints (one JSON line) once its stdin ends. Times are epoch ms. */
export interface ConsumerReport {
  bytes: number;
  lines: number;
  records: number;
  /** Bytes of RECORD lines only (newline included). */
  recordBytes: number;
  firstByteAt?: number;
  firstRecordAt?: number;
  endAt: number;
  /** The non-RECORD lines (logs, states, traces), capped, each truncated. */
  others: string[];
  othersDropped: number;
}
