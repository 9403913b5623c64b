// Messages and reports shared by the benchmark and its child processes.

import type {Row} from './report';
import type {ExportRecord, FaultOptions, QuestConfig, RequestRecord, SimulatorStats} from '../../simulator';

/** What sim-process.ts is started with (JSON in BENCH_SIM_OPTIONS). */
export interface SimProcessOptions {
  quests: QuestConfig[];
  exportDurationMs?: number;
  exportMsPerThousandRows?: number;
  tokenLifetimeSeconds?: number;
  faults?: FaultOptions;
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
  /** Quest id -> the header of its exports (default settings), for configured catalogs without a discover. */
  headers: Record<string, string[]>;
}

/** Parent -> simulator process. */
export type SimCommand =
  | {type: 'stats'}
  | {type: 'exports'}
  | {type: 'addResponses'; questId: string; count: number}
  | {type: 'setFaults'; faults: FaultOptions}
  | {type: 'close'};

/** Simulator process -> parent. */
export type SimReply =
  | {type: 'ready'; info: SimInfo}
  | {type: 'stats'; stats: SimulatorStats; requests: RequestRecord[]}
  | {type: 'exports'; exports: ExportRecord[]}
  | {type: 'done'; command: SimCommand['type']}
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
  /** STATE lines. */
  states: number;
  /** sourceStats.recordCount of each STATE line, in order. */
  stateRecordCounts: number[];
  /** Stream name -> the `state` of its last STATE line (a per-stream state message, as --state takes it). */
  lastStates: Record<string, unknown>;
  /** STREAM_STATUS traces: stream name, status, when the consumer saw it. */
  statuses: {stream: string; status: string; at: number}[];
  /** The other non-RECORD lines (logs, traces), capped, each truncated. */
  others: string[];
  othersDropped: number;
  /** The consumer's own CPU time, user + sys, s: what it took from the machine the producer runs on. */
  cpuS: number;
}

/** What every section is run with. */
export interface BenchContext {
  /** Scratch space for configs, states and the simulators' files; removed when the benchmark ends. */
  tmpDir: string;
  progress: (message: string) => void;
  /** A smoke run (--quick): every section at a small scale, in a few minutes; its figures are no measurement. */
  quick: boolean;
  /** Rows of the throughput export. */
  rows: number;
  /** Throughput runs per pipeline, alternating; the best is reported. */
  repeat: number;
  /** Cases of the economy section to run. */
  cases: ReadonlySet<string>;
}

/** One section of the benchmark: its heading, how it measures (for docs/benchmarks.md) and its run. */
export interface Section {
  /** Its name for --only. */
  key: string;
  title: string;
  method(ctx: BenchContext): string;
  run(ctx: BenchContext, rows: Row[], notes: string[]): Promise<void>;
}
