// Public types of the simulator. index.ts re-exports them; the other modules import them from here
// so that index.ts stays the only place that wires the parts together.

export type ExportSettings = {
  exportType?: string;
  valueType?: string;
  expandMultipleChoiceToColumns?: boolean;
  includeRespondentInformation?: boolean;
  fieldSeparator?: string;
  showOtherAsText?: boolean;
};

export type Corruption =
  | 'unterminated-quote'
  | 'ragged-row'
  | 'no-header'
  | 'duplicate-header'
  | 'html-body'
  | 'empty-body'
  | 'stray-quote'
  | 'html-octet-stream'
  | 'no-final-newline'
  | 'cut-last-cell';

/** Question-title presets; 'english' is the default. */
export type TitlePreset = 'english' | 'norwegian' | 'german' | 'long';

/** Byte encodings of the export file; 'utf8-bom' is the default. */
export type FileEncoding = 'utf8-bom' | 'utf8' | 'double-bom' | 'utf16le-bom' | 'utf16be-bom' | 'latin1';

export type LineEnding = 'crlf' | 'lf';

export interface QuestConfig {
  id: string;
  /** Responses at start; optional only when `createdAt` is given (it must then agree). */
  rows?: number;
  columns?: number;
  languages?: string[];
  firstCreatedAt?: string;
  /** Explicit creation times (ISO 8601 with a zone, or epoch ms); they define the rows. */
  createdAt?: (string | number)[];
  exportDurationMs?: number;
  exportMsPerThousandRows?: number;
  corruption?: Corruption;
  forbidden?: boolean;
  headerOnEmpty?: boolean;
  titles?: TitlePreset;
  /** Question titles in column order; the kinds stay as the layout decides. */
  questionTitles?: string[];
  encoding?: FileEncoding;
  lineEnding?: LineEnding;
}

/** A question inserted into a running quest (Simulator.insertQuestion). */
export interface InsertedQuestion {
  kind: 'rating' | 'text' | 'multi' | 'single' | 'date' | 'number';
  title: string;
  /** The choices of a multi or single question; a rating takes the preset's labels. */
  options?: readonly string[];
}

export interface RateLimitOptions {
  limit: number;
  windowMs: number;
  resetFormat?: 'seconds' | 'epoch-seconds' | 'epoch-ms';
  retryAfter?: boolean;
}

export interface FaultOptions {
  serverErrorRate?: number;
  exportErrorRate?: number;
  stuckExportRate?: number;
  truncatedDownloadRate?: number;
  goneRate?: number;
  rateLimit?: RateLimitOptions;
  compression?: 'gzip';
  framing?: 'length' | 'chunked' | 'close';
  stallDownloadRate?: number;
  stallAfterFraction?: number;
  latencyMs?: number;
  oneExportPerQuest?: boolean;
  vanishRate?: number;
  /** Exports of more rows than this end in ERROR: a service that chokes on large exports. */
  maxExportRows?: number;
  /** The service cuts an export's `until` (or both bounds) down to whole seconds before it selects rows. */
  wholeSecondBounds?: 'until' | 'both';
}

export interface SimulatorOptions {
  seed?: number;
  port?: number;
  clientId?: string;
  clientSecret?: string;
  projectId?: string;
  tokenLifetimeSeconds?: number;
  exportDurationMs?: number;
  exportMsPerThousandRows?: number;
  quests?: QuestConfig[];
  faults?: FaultOptions;
  dataDir?: string;
  log?: (line: string) => void;
  pathPrefix?: string;
  relativeLocation?: boolean;
}

export interface RequestRecord {
  method: string;
  /** Path without the query string. */
  path: string;
  status: number;
  authorized: boolean;
  at: number;
  /** Extension: the raw query string without '?', '' when there was none. */
  query?: string;
}

export interface SimulatorStats {
  tokens: number;
  exportsCreated: number;
  statusPolls: number;
  downloads: number;
  rateLimited: number;
  serverErrors: number;
  requests: number;
  /** 409 answers to a create while the quest had an export running (oneExportPerQuest). */
  conflicts: number;
}

/** What becomes of an export job: decided by the faults when it is created. */
export type ExportOutcome = 'ok' | 'error' | 'stuck' | 'vanished';

/** One created export, as exports() reports it. */
export interface ExportRecord {
  questId: string;
  exportId: string;
  /** The filter bounds, normalised to ISO 8601 with milliseconds; absent when not given. */
  since?: string;
  until?: string;
  /** Rows in the export's snapshot (known at creation, also for exports that never get a file). */
  rows: number;
  /** Size of the file on disk once fully written; 0 before that and for exports without a file. */
  bytes: number;
  outcome: ExportOutcome;
  /** Creation time, ISO 8601 with milliseconds. */
  createdAt: string;
}

export interface Simulator {
  apiUrl: string;
  authUrl: string;
  clientId: string;
  clientSecret: string;
  projectId: string;
  quests: Required<Pick<QuestConfig, 'id' | 'rows'>>[] & QuestConfig[];
  groundTruth(questId: string, settings?: ExportSettings): {header: string[]; rows: string[][]};
  addResponses(questId: string, count: number): void;
  /**
   * Inserts a question before question `at` (0-based, among the question columns): responses
   * created from now on answer it, earlier ones have an empty cell, and every other cell stays.
   */
  insertQuestion(questId: string, at: number, question: InsertedQuestion): void;
  issuedTokens(): string[];
  requests(): RequestRecord[];
  stats(): SimulatorStats;
  exports(): ExportRecord[];
  setFaults(faults: FaultOptions): void;
  expireExport(exportId: string): void;
  close(): Promise<void>;
}

/** A quest config with every default filled in. */
export interface ResolvedQuest extends QuestConfig {
  id: string;
  rows: number;
  columns: number;
  languages: string[];
  firstCreatedAt: string;
  headerOnEmpty: boolean;
  titles: TitlePreset;
  encoding: FileEncoding;
  lineEnding: LineEnding;
  /** Sorted epoch ms, when createdAt was given. */
  createdAt?: number[];
}
