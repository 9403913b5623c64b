// An in-memory export API and clock for unit tests of the sync core: exports answer instantly on a
// virtual clock, and each test scripts what goes wrong with which export or download.

import {AirbyteLogLevel} from 'faros-airbyte-cdk/lib/protocol';
import {PassThrough} from 'stream';

import {CreateResult, DownloadResult, ExportApi} from '../../src/api/client';
import {DownloadCutOff, ExportFile, Framing} from '../../src/api/download';
import {ExportStatus} from '../../src/api/export-status';
import {Cancelled} from '../../src/core/errors';
import {Runtime} from '../../src/core/runtime';
import {rowStrings} from '../../src/csv/rows';
import {TimeWindow} from '../../src/core/time';
import {ConnectorLogger} from '../../src/protocol/logger';
import {MessageWriter} from '../../src/protocol/output';
import {RowWriter, shapeRecord, StreamRef, StreamStatus, SyncOutput} from '../../src/sync/output-port';

/** A seeded pseudo-random generator (mulberry32): the same seed, the same test. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A clock that moves only when the code sleeps; sleeps end at once (after a turn of the event loop). */
export function virtualRuntime(
  start = Date.parse('2026-11-26T00:00:00.000Z')
): Runtime & {clock: number; slept: number} {
  const rt = {
    clock: start,
    slept: 0,
    now: () => rt.clock,
    sleep: (ms: number, signal?: AbortSignal): Promise<void> => {
      if (signal?.aborted) return Promise.reject(new Cancelled());
      rt.clock += ms;
      rt.slept += ms;
      return new Promise((resolve) => setImmediate(resolve));
    },
    random: () => 0.5,
  };
  return rt;
}

export function quietLogger(level = AirbyteLogLevel.ERROR): ConnectorLogger {
  return new ConnectorLogger(new MessageWriter(new PassThrough()), level);
}

export interface FakeExport {
  id: string;
  questId: string;
  window: TimeWindow;
  rows: number;
  createdAt: number;
  polls: number;
  downloads: number;
  outcome: 'ok' | 'error' | 'stuck' | 'vanish';
}

export interface FakeScript {
  /** How a new export ends (default ok). */
  outcome?(e: FakeExport, n: number): FakeExport['outcome'];
  /** Bytes after which a download is cut off, if it is (n counts the downloads of this export from 1). */
  cutAfter?(e: FakeExport, n: number, size: number): number | undefined;
  /** A download that answers 410. */
  gone?(e: FakeExport, n: number): boolean;
  /** Replaces a download's rows (to make a file differ from an earlier download of it). */
  alter?(e: FakeExport, n: number, rows: string[][]): string[][];
  /** Polls before an export completes (default 1). */
  polls?: number;
  /** A download that goes silent for this long (on the virtual clock) before it is cut off. */
  stallMs?(e: FakeExport, n: number): number | undefined;
}

class MemoryFile implements ExportFile {
  readonly framing: Framing = 'length';
  readonly contentLength: number;
  receivedBytes = 0;

  constructor(
    private readonly bytes: Buffer,
    private readonly cutAt: number | undefined,
    private readonly silence?: () => Promise<void>
  ) {
    this.contentLength = bytes.length;
  }

  async *chunks(): AsyncGenerator<Buffer> {
    const end = this.cutAt ?? this.bytes.length;
    for (let i = 0; i < end; i += 97) {
      const chunk = this.bytes.subarray(i, Math.min(end, i + 97));
      this.receivedBytes += chunk.length;
      await new Promise((resolve) => setImmediate(resolve));
      yield chunk;
    }
    if (this.cutAt !== undefined) {
      await this.silence?.();
      throw new DownloadCutOff(`cut after ${this.cutAt} bytes`);
    }
  }

  close(): void {}
}

/** The export API over a fixed set of rows of one or more quests, each row `[id, created ISO, answer]`. */
export class FakeExportApi implements ExportApi {
  readonly header = ['Response ID', 'Created', 'Answer'];
  readonly exports: FakeExport[] = [];
  /** Largest number of exports generated or awaiting download at once, as seen by the slots spy. */
  private next = 1;

  constructor(
    private readonly rows: Map<string, number[]>,
    private readonly rt: Runtime,
    private readonly script: FakeScript = {}
  ) {}

  /** The rows of the quest created in (since, until], as the CSV has them. */
  rowsOf(questId: string, window?: TimeWindow): string[][] {
    const times = this.rows.get(questId) ?? [];
    return times
      .map((t, i) => ({t, i}))
      .filter(({t}) => !window || (t > window.since && t <= window.until))
      .map(({t, i}) => [
        `${questId.slice(0, 4)}-${i}`,
        new Date(t).toISOString(),
        i % 3 === 0 ? '' : `answer "${i}" | ok`,
      ]);
  }

  async createExport(questId: string, window: TimeWindow, signal?: AbortSignal): Promise<CreateResult> {
    if (signal?.aborted) throw new Cancelled();
    const e: FakeExport = {
      id: `e${this.next++}`,
      questId,
      window,
      rows: this.rowsOf(questId, window).length,
      createdAt: this.rt.now(),
      polls: 0,
      downloads: 0,
      outcome: 'ok',
    };
    e.outcome = this.script.outcome?.(e, this.exports.length + 1) ?? 'ok';
    this.exports.push(e);
    return {kind: 'created', exportId: e.id};
  }

  async exportStatus(_questId: string, exportId: string, signal?: AbortSignal): Promise<ExportStatus> {
    if (signal?.aborted) throw new Cancelled();
    const e = this.find(exportId);
    e.polls++;
    if (e.outcome === 'vanish') return {kind: 'vanished', httpStatus: 404};
    if (e.polls <= (this.script.polls ?? 1) || e.outcome === 'stuck')
      return {kind: 'running', status: 'PENDING', known: true};
    if (e.outcome === 'error') return {kind: 'failed', status: 'ERROR'};
    return {kind: 'completed', downloadUrl: `mem://${exportId}`};
  }

  async openDownload(questId: string, exportId: string, _url: string, signal?: AbortSignal): Promise<DownloadResult> {
    if (signal?.aborted) throw new Cancelled();
    const e = this.find(exportId);
    e.downloads++;
    if (this.script.gone?.(e, e.downloads)) return {kind: 'gone', httpStatus: 410};
    let rows = this.rowsOf(questId, e.window);
    rows = this.script.alter?.(e, e.downloads, rows) ?? rows;
    const cell = (v: string): string => (/["|\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
    const text = '\uFEFF' + [this.header, ...rows].map((r) => r.map(cell).join('|') + '\r\n').join('');
    const bytes = Buffer.from(text, 'utf8');
    const stall = this.script.stallMs?.(e, e.downloads);
    const silence = stall === undefined ? undefined : () => this.rt.sleep(stall);
    return {
      kind: 'file',
      download: new MemoryFile(bytes, this.script.cutAfter?.(e, e.downloads, bytes.length), silence),
    };
  }

  private find(exportId: string): FakeExport {
    const e = this.exports.find((x) => x.id === exportId);
    if (!e) throw new Error(`unknown export ${exportId}`);
    return e;
  }
}

export interface Recorded {
  /** The values of every record written, per stream, in order (a quest stream's: its row's cells first). */
  rows: Map<string, string[][]>;
  /** Every STATE, per stream: its cursor and the rows written before it. */
  states: {stream: string; cursor: string; recordCount: number; rowsSoFar: number; state: object}[];
  statuses: {stream: string; status: StreamStatus}[];
  errors: {stream?: string; error: Error}[];
}

/** A SyncOutput that keeps what it is given. */
export function recordingOutput(): SyncOutput & {recorded: Recorded} {
  const recorded: Recorded = {rows: new Map(), states: [], statuses: [], errors: []};
  const rowsOf = (s: StreamRef): string[][] =>
    recorded.rows.get(s.name) ?? recorded.rows.set(s.name, []).get(s.name) ?? [];
  return {
    recorded,
    status: (stream, status) => void recorded.statuses.push({stream: stream.name, status}),
    rateLimited: () => undefined,
    rowWriter: (shape): RowWriter => ({
      write: (rows) => {
        const text = (v: unknown): string => (v !== null && typeof v === 'object' ? JSON.stringify(v) : String(v));
        rowsOf(shape.stream).push(...rowStrings(rows).map((r) => Object.values(shapeRecord(shape, r)).map(text)));
        return undefined;
      },
    }),
    records: async (stream, data) => void rowsOf(stream).push(...data.map((d) => Object.values(d).map(String))),
    state: async (stream, state, recordCount) => {
      recorded.states.push({
        stream: stream.name,
        cursor: (state as {cursor: string}).cursor,
        recordCount,
        rowsSoFar: rowsOf(stream).length,
        state,
      });
    },
    error: async (error, stream) => void recorded.errors.push({stream: stream?.name, error}),
  };
}
