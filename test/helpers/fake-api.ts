// The export API and a clock for unit tests of the sync core: the simulator's engine driven directly
// on a virtual clock, and each test scripts what goes wrong with which export or download.

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
import {RowWriter, StreamRef, StreamStatus, SyncOutput} from '../../src/sync/output-port';
import {shapeRecords} from './shapes';
import {createEngine, csvText, ExportOutcome, SimulatorEngine} from '../../simulator';
import {Prng} from '../../simulator/prng';

/** A seeded pseudo-random generator (the simulator's mulberry32): the same seed, the same test. */
export function prng(seed: number): () => number {
  const random = new Prng(seed);
  return () => random.next();
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
  /** `e1`, `e2`, ... in order of creation (the simulator's export id is `exportId`). */
  id: string;
  exportId: string;
  questId: string;
  window: TimeWindow;
  rows: number;
  createdAt: number;
  polls: number;
  downloads: number;
  outcome: 'ok' | 'error' | 'stuck' | 'vanish';
}

/** What goes wrong, decided per export or per download (n counts the downloads of this export from 1). */
export interface FakeScript {
  /** How a new export ends (default ok). */
  outcome?(e: FakeExport, n: number): FakeExport['outcome'];
  /** Bytes after which a download is cut off, if it is. */
  cutAfter?(e: FakeExport, n: number, size: number): number | undefined;
  /** A download that answers 410: the export is deleted. */
  gone?(e: FakeExport, n: number): boolean;
  /** Replaces a download's rows (to make a file differ from an earlier download of it). */
  alter?(e: FakeExport, n: number, rows: string[][]): string[][];
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

const OUTCOMES: Record<FakeExport['outcome'], ExportOutcome> = {
  ok: 'ok',
  error: 'error',
  stuck: 'stuck',
  vanish: 'vanished',
};

/**
 * The export API of the simulator's engine (createEngine), called directly rather than over HTTP,
 * on the test's virtual clock: the quests are tables of rows `[id, created ISO, answer]`, exports
 * are the engine's (its windows, files and states), and `script` decides what goes wrong with
 * which export or download, as a hostile service would.
 */
export class FakeExportApi implements ExportApi {
  readonly header = ['Response ID', 'Created', 'Answer'];
  readonly exports: FakeExport[] = [];
  private readonly engine: SimulatorEngine;

  constructor(
    rows: Map<string, number[]>,
    private readonly rt: Runtime,
    private readonly script: FakeScript = {}
  ) {
    const quests = [...rows.keys()].map((id) => ({
      id,
      table: {header: this.header, rows: FakeExportApi.rows(id, rows.get(id) ?? [])},
    }));
    // Generated at once: a test may drive the sync on a clock of its own, which the engine does not see.
    this.engine = createEngine({clock: rt, files: 'memory', exportDurationMs: 0, quests});
  }

  /** A quest's rows, each `[id, created ISO, answer]`: empty answers, quotes and separators included. */
  private static rows(questId: string, times: number[]): string[][] {
    return times.map((t, i) => [
      `${questId.slice(0, 4)}-${i}`,
      new Date(t).toISOString(),
      i % 3 === 0 ? '' : `answer "${i}" | ok`,
    ]);
  }

  /** The rows of the quest created in (since, until], as the CSV has them. */
  rowsOf(questId: string, window?: TimeWindow): string[][] {
    return window ? this.engine.exportRows(questId, window) : this.engine.groundTruth(questId).rows;
  }

  async createExport(questId: string, window: TimeWindow, signal?: AbortSignal): Promise<CreateResult> {
    if (signal?.aborted) throw new Cancelled();
    const e: FakeExport = {
      id: `e${this.exports.length + 1}`,
      exportId: '',
      questId,
      window,
      rows: 0,
      createdAt: 0,
      polls: 0,
      downloads: 0,
      outcome: 'ok',
    };
    e.rows = this.rowsOf(questId, window).length;
    e.outcome = this.script.outcome?.(e, this.exports.length + 1) ?? 'ok';
    const created = this.engine.createExport(questId, window, OUTCOMES[e.outcome]);
    e.exportId = created.exportId;
    e.createdAt = Date.parse(created.createdAt);
    this.exports.push(e);
    return {kind: 'created', exportId: e.id};
  }

  async exportStatus(_questId: string, exportId: string, signal?: AbortSignal): Promise<ExportStatus> {
    if (signal?.aborted) throw new Cancelled();
    const e = this.find(exportId);
    e.polls++;
    const state = this.engine.exportState(e.exportId);
    switch (state) {
      case 'VANISHED':
        return {kind: 'vanished', httpStatus: 404};
      case 'GONE':
        return {kind: 'vanished', httpStatus: 410};
      case 'ERROR':
        return {kind: 'failed', status: state};
      case 'COMPLETED':
        return {kind: 'completed', downloadUrl: `engine://${exportId}`};
      default:
        return {kind: 'running', status: state, known: true};
    }
  }

  async openDownload(_questId: string, exportId: string, _url: string, signal?: AbortSignal): Promise<DownloadResult> {
    if (signal?.aborted) throw new Cancelled();
    const e = this.find(exportId);
    e.downloads++;
    if (this.engine.exportState(e.exportId) === 'GONE' || this.script.gone?.(e, e.downloads)) {
      this.engine.expireExport(e.exportId);
      return {kind: 'gone', httpStatus: 410};
    }
    let bytes = this.engine.exportFile(e.exportId);
    if (this.script.alter) {
      const rows = this.rowsOf(e.questId, e.window);
      bytes = Buffer.from(csvText(this.header, this.script.alter(e, e.downloads, rows)), 'utf8');
    }
    const stall = this.script.stallMs?.(e, e.downloads);
    const silence = stall === undefined ? undefined : () => this.rt.sleep(stall);
    return {
      kind: 'file',
      download: new MemoryFile(bytes, this.script.cutAfter?.(e, e.downloads, bytes.length), silence),
    };
  }

  private find(id: string): FakeExport {
    const e = this.exports.find((x) => x.id === id);
    if (!e) throw new Error(`unknown export ${id}`);
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
        rowsOf(shape.stream).push(
          ...rowStrings(rows).flatMap((r) => shapeRecords(shape, r).map((record) => Object.values(record).map(text)))
        );
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
