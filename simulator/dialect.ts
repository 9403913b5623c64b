// The service's dialect: how the simulator answers where the API spec leaves the real service open
// (the create status, status words, time formats, the completed answer, the file's type, coding and
// separator, column titles, the filter's boundaries and zone, the token's type and lifetime unit,
// rate-limit header names, error bodies). The defaults answer as the spec reads; each switch is one
// way the production service may differ, so that tests show the connector's probe telling each apart.

import {createHmac} from 'crypto';

import {ExportRequest} from './validation';

/**
 * How a timestamp is written: 'iso-ms' 2026-01-02T03:04:05.678Z (the spec's); 'iso-7' with seven
 * fractional digits (as a vendor example shows); 'offset' the same instant as local time at +02:00;
 * 'no-zone' local time at UTC+2 without a zone designator; 'month-first' 11/25/2026 04:15:00 (UTC,
 * as a US locale writes it: no reader can tell it from day-first for the first 12 days of a month).
 */
export type TimeFormat = 'iso-ms' | 'iso-7' | 'offset' | 'no-zone' | 'month-first';

export interface DialectOptions {
  /** Status of a created export (default 202). A 303 also carries a Location to the export's status. */
  createStatus?: number;
  /** 'batch': the create answer is the spec's 202 example, `{batchId, status: 'PENDING'}`, without exportId. */
  createBody?: 'export' | 'batch';
  /** How status records spell PENDING, INPROGRESS, COMPLETED and ERROR. */
  statusWords?: 'upper' | 'lower' | 'pascal';
  lastChangedAt?: TimeFormat;
  /** The Created cells of the export file. */
  created?: TimeFormat;
  /** 'record': a completed export's status answers 200 with its record (status COMPLETED), not a 302. */
  completed?: 'redirect' | 'record';
  /**
   * 'other-host': the 302 Location is an absolute URL on another host name (localhost, for the
   * simulator's 127.0.0.1) with a signature in its query, as a CDN's link would be; that URL serves
   * the file without a token.
   */
  downloadHost?: 'api' | 'other-host';
  /** Content-Type of export files (default `text/csv; charset=utf-8`). */
  fileType?: string;
  /** A Content-Encoding sent with a body that is not encoded: a coding the client cannot know. */
  fileEncodingLabel?: string;
  /** The separator files are written with, whatever `settings.fieldSeparator` asked for. */
  fileSeparator?: string;
  /** Titles of the two fixed columns (default `Response ID` and `Created`). */
  responseIdTitle?: string;
  createdTitle?: string;
  /** The filter takes a response created exactly at `since` (the spec: after it). */
  sinceInclusive?: boolean;
  /** The filter leaves out a response created exactly at `until` (the spec: at or before it). */
  untilExclusive?: boolean;
  /**
   * The filter cuts `until` ('until') or both bounds ('both') down to whole seconds before it
   * selects rows (the spec: milliseconds), so a response 500 ms before a millisecond `until` is not
   * in that export.
   */
  filterSeconds?: 'until' | 'both';
  /** The filter ignores since and until: every export holds all the quest's responses up to now. */
  ignoreWindow?: boolean;
  /** The filter reads since and until as local times this many minutes east of UTC. */
  filterOffsetMinutes?: number;
  /** `token_type` of the token answer (default Bearer). */
  tokenType?: string;
  /** 'milliseconds': `expires_in` counts milliseconds (the token's own exp claim keeps the true lifetime). */
  expiresIn?: 'seconds' | 'milliseconds';
  /** 'ietf': rate-limit headers named RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset. */
  rateLimitNames?: 'x-ratelimit' | 'ietf';
  /** 'epoch-us': the reset header as an epoch in microseconds (read by magnitude, it lies ages ahead). */
  rateLimitReset?: 'as-configured' | 'epoch-us';
  /** The status and download of an export answer under any quest's path (the spec: its own quest's only). */
  exportsUnderAnyQuest?: boolean;
  /** Status of the status or download of an export the service does not know (default 404). */
  unknownExportStatus?: number;
  /** 'text': error bodies are `text/plain` "<status> <title>" instead of problem details. */
  errorBodies?: 'problem' | 'text';
}

const OFFSET_MS = 2 * 3600_000;
const WORDS: Record<string, string> = {
  PENDING: 'Pending',
  INPROGRESS: 'InProgress',
  COMPLETED: 'Completed',
  ERROR: 'Error',
};

/** A timestamp in one of the formats. */
export function formatTime(ms: number, format: TimeFormat = 'iso-ms'): string {
  const iso = new Date(ms).toISOString();
  switch (format) {
    case 'iso-7':
      return iso.replace(/Z$/, '0000Z');
    case 'offset':
      return new Date(ms + OFFSET_MS).toISOString().replace(/Z$/, '+02:00');
    case 'no-zone':
      return new Date(ms + OFFSET_MS).toISOString().replace(/Z$/, '');
    case 'month-first':
      return `${iso.slice(5, 7)}/${iso.slice(8, 10)}/${iso.slice(0, 4)} ${iso.slice(11, 19)}`;
    default:
      return iso;
  }
}

export class Dialect {
  private readonly key = createHmac('sha256', 'questback-simulator').update('download-links').digest();

  constructor(
    readonly options: DialectOptions,
    /** Origin of the other host name that serves files for 'other-host' (known once the server listens). */
    private readonly otherOrigin: () => string
  ) {
    for (const [name, value] of Object.entries({
      createStatus: options.createStatus,
      unknownExportStatus: options.unknownExportStatus,
    })) {
      if (value !== undefined && !(Number.isInteger(value) && value >= 100 && value <= 599))
        throw new Error(`dialect.${name} must be an HTTP status`);
    }
  }

  /** Status, body and headers of the answer to a created export. */
  createAnswer(exportId: string, statusPath: string): {status: number; body: object; headers: Record<string, string>} {
    const status = this.options.createStatus ?? 202;
    const body =
      this.options.createBody === 'batch'
        ? {batchId: exportId, status: this.word('PENDING')}
        : {exportId, message: 'The export has been scheduled and will be processed shortly.'};
    return {status, body, headers: status === 303 ? {Location: statusPath} : {}};
  }

  word(state: string): string {
    if (this.options.statusWords === 'lower') return state.toLowerCase();
    if (this.options.statusWords === 'pascal') return WORDS[state] ?? state;
    return state;
  }

  lastChangedAt(ms: number): string {
    return formatTime(ms, this.options.lastChangedAt);
  }

  createdCell(ms: number): string {
    return formatTime(ms, this.options.created);
  }

  /** The request as the service acts on it: its filter's boundaries and zone, the separator it writes. */
  request(request: ExportRequest): ExportRequest {
    const {
      sinceInclusive,
      untilExclusive,
      filterOffsetMinutes = 0,
      fileSeparator,
      ignoreWindow,
      filterSeconds,
    } = this.options;
    const shift = filterOffsetMinutes * 60_000;
    const seconds = (ms: number | undefined) => (ms === undefined ? undefined : Math.floor(ms / 1000) * 1000);
    const asked = ignoreWindow ? {since: undefined, until: undefined} : request.window;
    const since = filterSeconds === 'both' ? seconds(asked.since) : asked.since;
    const until = filterSeconds === undefined ? asked.until : seconds(asked.until);
    // Rows have whole-millisecond times: "at or after since" is "after since - 1 ms".
    const window = {
      since: since === undefined ? undefined : since - shift - (sinceInclusive ? 1 : 0),
      until: until === undefined ? undefined : until - shift - (untilExclusive ? 1 : 0),
    };
    const settings = fileSeparator === undefined ? request.settings : {...request.settings, separator: fileSeparator};
    return {settings, window};
  }

  /** Where a completed export's 302 points; `path` is the documented download path. */
  location(path: string, exportId: string, relative: boolean): string {
    if (this.options.downloadHost === 'other-host')
      return `${this.otherOrigin()}${path}?sig=${this.signature(exportId)}`;
    return relative ? 'download' : path;
  }

  /** Whether a download request carries the signature of an 'other-host' link to this export. */
  signed(exportId: string, query: URLSearchParams): boolean {
    return this.options.downloadHost === 'other-host' && query.get('sig') === this.signature(exportId);
  }

  /** The headers the service names and writes its own way; `now` on the simulator's clock. */
  rateLimitHeaders(headers: Record<string, string>, now: number): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [name, value] of Object.entries(headers)) {
      let text = value;
      if (name === 'X-RateLimit-Reset' && this.options.rateLimitReset === 'epoch-us') {
        const n = Number(value);
        // What the limiter means, as an epoch in microseconds.
        const epochMs = n >= 1e12 ? n : n >= 1e9 ? n * 1000 : now + n * 1000;
        text = String(epochMs * 1000);
      }
      out[this.options.rateLimitNames === 'ietf' ? name.replace(/^X-/, '') : name] = text;
    }
    return out;
  }

  private signature(exportId: string): string {
    return createHmac('sha256', this.key).update(exportId).digest('hex').slice(0, 32);
  }
}
