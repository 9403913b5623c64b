// Public types of the simulator. index.ts re-exports them; the other modules import them from here
// so that index.ts stays the only place that wires the parts together.

import type {IncomingMessage, ServerResponse} from 'http';

import type {DialectOptions} from './dialect';
import type {InvitationItem, InvitationListOptions} from './invitations';

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

/** How Response IDs look: 9-digit numbers (the default) or UUIDs. */
export type ResponseIdFormat = 'numeric' | 'uuid';
/** A quest's responses given as a table: the header and its rows, as the export files hold them. */
export interface QuestTable {
  /** Must hold a column named `Created` (ISO 8601 with a zone): exports filter on it. */
  header: string[];
  /** Rows in any order (exports list them by creation time; ties keep this order), each a cell per column. */
  rows: string[][];
}

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
  /**
   * The row (0-based, in creation order) that ragged-row and stray-quote corrupt in every export
   * that holds it, so that a quest fails at the same row every time; by default each export's middle row.
   */
  corruptRow?: number;
  forbidden?: boolean;
  headerOnEmpty?: boolean;
  titles?: TitlePreset;
  /** Question titles in column order; the kinds stay as the layout decides. */
  questionTitles?: string[];
  encoding?: FileEncoding;
  lineEnding?: LineEnding;
  responseIds?: ResponseIdFormat;
  /**
   * A service bug: this fraction (0 to 1) of the row pairs (rows 0 and 1, 2 and 3, …) list the
   * second row under the first one's Response ID (the answers stay its own), seeded, the same in
   * every export; and every other download lists each such pair of its export in the other order.
   */
  repeatedIds?: number;
  /**
   * The responses exactly as given, instead of seeded ones: every export is this table's rows of
   * its window (export settings other than the separator do not apply). Excludes rows, createdAt,
   * columns, titles and questionTitles.
   */
  table?: QuestTable;
  /** Invitations at start (default: a seeded 3 to 8), spread over the same span as the responses. */
  invitations?: number;
  /** The first this many invitations share one addedAt: a bulk import in one millisecond. */
  invitationBurst?: number;
  /** The quest hides respondents' identities: invitations' `replied` is null. */
  hiddenIdentity?: boolean;
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
  /** The first download of each export ends after this fraction of its body; later ones are whole. */
  cutFirstDownloadAt?: number;
  goneRate?: number;
  rateLimit?: RateLimitOptions;
  compression?: 'gzip';
  framing?: 'length' | 'chunked' | 'close';
  stallDownloadRate?: number;
  stallAfterFraction?: number;
  latencyMs?: number;
  /** Every whole download's body comes this many bytes a second on the clock, one part a second: a slow download. */
  downloadBytesPerSecond?: number;
  oneExportPerQuest?: boolean;
  vanishRate?: number;
  /** Exports of more rows than this end in ERROR: a service that chokes on large exports. */
  maxExportRows?: number;
  /** The next this many status answers are 200 with an empty body (odd ones) or JSON cut short (even ones). */
  badStatusAnswers?: number;
  /** Every export create is refused with this status (400: a service that rejects every request for an export). */
  refuseCreates?: number;
  /**
   * A service that quotes the credentials it was sent in its errors: with `'client-secret'` the token
   * endpoint refuses every request with 400, with `'token'` the API every request that carries a valid
   * token; the problem's detail quotes the client secret, or the Authorization header's token, after
   * `at` characters of other text, in `encoding` (default `'raw'`).
   */
  echoCredentials?: {what: 'client-secret' | 'token'; at: number; encoding?: EchoEncoding};
}

/** How an echoed credential is written: as sent, JSON-escaped, percent-encoded (upper- or lower-case hex), form-encoded, base64 (standard, URL-safe), or as HTTP Basic credentials with the client id. */
export type EchoEncoding = 'raw' | 'json' | 'url' | 'url-lower' | 'form' | 'base64' | 'base64url' | 'basic';

/**
 * The simulator's time: export generation, token lifetimes, rate-limit windows, latency and row
 * creation all follow it. A test shares a virtual clock between the simulator and the connector so
 * that waits take no real time.
 */
export interface SimulatorClock {
  now(): number;
  /** Waits `ms`; rejects with the signal's reason as soon as it aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /**
   * Called when the simulator starts work that takes real time (answering a request, writing an
   * export file); the work is done when the returned function is called. A virtual clock does not
   * jump ahead while work is under way.
   */
  hold?(): () => void;
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
  /** Default: the system clock. */
  clock?: SimulatorClock;
  /**
   * Where export files are kept: 'disk' (default, `dataDir`) or 'memory' (written at once when the
   * export is created; for small exports in tests that read many).
   */
  files?: 'disk' | 'memory';
  /** Where the service may differ from the spec's reading (dialect.ts); the defaults follow the spec. */
  dialect?: DialectOptions;
  /** How the invitations list answers where the vendor's docs leave it open (invitations.ts). */
  invitationList?: InvitationListOptions;
}

/** The endpoints of the API; `other` is every request that matches none of them. */
export type Route = 'token' | 'create' | 'status' | 'download' | 'invitations' | 'other';

export interface RequestRecord {
  /** 1-based, in order of arrival. */
  seq: number;
  route: Route;
  method: string;
  /** Path without the query string. */
  path: string;
  status: number;
  authorized: boolean;
  /** Arrival, on the simulator's clock. */
  at: number;
  /** Extension: the raw query string without '?', '' when there was none. */
  query?: string;
  headers: Record<string, string | string[] | undefined>;
  /** The request body as text ('' when there was none). */
  body: string;
  /** The quest and export the path names, if it names them. */
  questId?: string;
  exportId?: string;
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
  /** 1-based, in order of creation. */
  seq: number;
  /** Status and download requests for this export so far. */
  polls: number;
  downloads: number;
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
  /**
   * Renames a column of the survey (a question edited, say `E-mail` to `E-mail address`): every
   * export file written from now on has the header text `to` where it had `from`; the cells stay.
   */
  renameColumn(questId: string, from: string, to: string): void;
  /** Adds `count` invitations to the quest at the clock's now (1 ms apart). */
  addInvitations(questId: string, count: number): void;
  /** Every invitation of the quest visible now, in addedAt order, with its current statuses. */
  invitations(questId: string): InvitationItem[];
  /** Replaces the invitations list's switches at run time. */
  setInvitationList(options: InvitationListOptions): void;
  issuedTokens(): string[];
  /** Every request so far, or those of one route. */
  requests(route?: Route): RequestRecord[];
  stats(): SimulatorStats;
  exports(): ExportRecord[];
  setFaults(faults: FaultOptions): void;
  expireExport(exportId: string): void;
  /**
   * Answers the route's requests with `handler` from now on (answers on demand): it may answer
   * anyhow, or as the service would with `ctx.next()`.
   */
  on(route: Route, handler: RouteHandler): void;
  /** Adds headers to every answer for which `decorate` returns some (answers written raw excepted). */
  decorate(decorate: HeaderDecorator): void;
  /** The clock the simulator runs on. */
  readonly clock: SimulatorClock;
  /** The origin the server listens on (`apiUrl` without the path prefix). */
  readonly origin: string;
  close(): Promise<void>;
}

/** Options of `ctx.csv()`: the export's CSV written otherwise than the service does. */
export interface CsvOptions {
  /** Leading byte order mark(s); default one. */
  bom?: string;
  /** `rfc`: RFC 4180 quoting where needed (default); `never`: cells written as they are. */
  quote?: 'rfc' | 'never';
  separator?: string;
}

export type RouteHandler = (ctx: RouteContext) => void | Promise<void>;
export type HeaderDecorator = (request: RequestRecord, status: number) => Record<string, string> | undefined;

/** What an on-demand answer gets: the request, the export it names, and ways to answer. */
export interface RouteContext {
  req: IncomingMessage;
  res: ServerResponse;
  route: Route;
  /** The request path below the path prefix. */
  path: string;
  url: URL;
  body: string;
  request: RequestRecord;
  questId?: string;
  exportId?: string;
  /** The export the path names, if it exists (counts include this request). */
  job?: ExportRecord;
  /** 1-based number of this request among the requests of its route. */
  n: number;
  /** The simulator's clock time. */
  now(): number;
  /**
   * Waits `ms` on the simulator's clock, not working on the request meanwhile (a virtual clock may jump):
   * true then, false as soon as the client went away. A slow answer paced on the clock, whatever the machine's load.
   */
  pause(ms: number): Promise<boolean>;
  /** Answers as the service would. */
  next(): Promise<void>;
  send(status: number, body?: string | Buffer, headers?: Record<string, string | number>): void;
  json(status: number, body: unknown, headers?: Record<string, string | number>): void;
  problem(status: number, detail: string, headers?: Record<string, string | number>): void;
  redirect(location: string, status?: number): void;
  /** 200 with the export's status record in the given state (PENDING by default). */
  jobStatus(status?: string): void;
  /** 302 to the export's documented download path, as for a COMPLETED export. */
  completed(): void;
  /** The rows of this request's export, as its file holds them. */
  rows(): string[][];
  /** The header of this request's export. */
  header(): string[];
  /** The CSV text of this request's export. */
  csv(options?: CsvOptions): string;
  /** Writes status, headers and `part` of a body, then never another byte; the socket stays open. */
  stall(status: number, headers: Record<string, string | number>, part: Buffer | string): void;
  /** Writes bytes straight to the socket (a hand-made HTTP answer), and ends the socket if `close`. */
  raw(bytes: Buffer | string, close?: boolean): void;
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
  responseIds: ResponseIdFormat;
  /** Sorted epoch ms, when createdAt was given. */
  createdAt?: number[];
}
