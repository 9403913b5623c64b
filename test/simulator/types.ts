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
  'unterminated-quote' | 'ragged-row' | 'no-header' | 'duplicate-header' | 'html-body' | 'empty-body';

export interface QuestConfig {
  id: string;
  rows: number;
  columns?: number;
  languages?: string[];
  firstCreatedAt?: string;
  exportDurationMs?: number;
  corruption?: Corruption;
  forbidden?: boolean;
  headerOnEmpty?: boolean;
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
}

export interface SimulatorOptions {
  seed?: number;
  port?: number;
  clientId?: string;
  clientSecret?: string;
  projectId?: string;
  tokenLifetimeSeconds?: number;
  exportDurationMs?: number;
  quests?: QuestConfig[];
  faults?: FaultOptions;
  dataDir?: string;
  log?: (line: string) => void;
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
  issuedTokens(): string[];
  requests(): RequestRecord[];
  stats(): SimulatorStats;
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
}
