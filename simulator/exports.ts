// Export jobs: the PENDING -> INPROGRESS -> COMPLETED/ERROR state machine (derived from the clock,
// so no timers are needed) and the asynchronous generation of the export file on disk.

import * as fs from 'fs';
import * as path from 'path';
import {Readable} from 'stream';
import {pipeline} from 'stream/promises';
import {createGzip, gzipSync} from 'zlib';
import {CsvSource, renderCsvFile, writeCsvFile} from './csv';
import {middleRow, QuestData} from './data';
import {Prng} from './prng';
import {ExportOutcome, ExportRecord, SimulatorClock} from './types';
import {ResolvedSettings} from './settings';
import {ExportRequest} from './validation';

export type ExportStatus = 'PENDING' | 'INPROGRESS' | 'COMPLETED' | 'ERROR';
export type JobView = {state: 'GONE'} | {state: ExportStatus; lastChangedMs: number};

export const RETENTION_MS = 30 * 24 * 3600 * 1000;

export interface ExportJob {
  id: string;
  questId: string;
  /** 1-based, in order of creation. */
  seq: number;
  /** Status and download requests that named it. */
  polls: number;
  downloads: number;
  createdMs: number;
  durationMs: number;
  outcome: ExportOutcome;
  file: string;
  /** The export settings the file is written with. */
  settings: ResolvedSettings;
  /** The filter bounds (epoch ms) and the number of rows of the snapshot. */
  since?: number;
  until?: number;
  rows: number;
  /** Set once the file is fully written and closed. */
  fileDoneMs?: number;
  /** File size, once written. */
  bytes?: number;
  /** cut-last-cell: where every download of the file ends. */
  cutAt?: number;
  /** compression 'gzip': the compressed body of each file, made by the first download that needs it. */
  gzip?: Map<string, Promise<{file: string; size: number}>>;
  /** repeatedIds: the file that lists each repeated pair in the other order (on disk, or its content). */
  swapped?: {file: string; content?: Buffer};
  /** Set when writing the file failed; the job then reports ERROR. */
  failedMs?: number;
  gone: boolean;
  /** The file, when files are kept in memory. */
  content?: Buffer;
}

/** A download's body: its size, and a stream of its first `stop` bytes (at least one). */
export interface FileBody {
  size: number;
  read(stop: number): Readable;
  close(): Promise<void>;
}

/** How long generating an export takes: a fixed part plus a part that grows with its rows. */
export interface ExportTiming {
  durationMs: number;
  msPerThousandRows: number;
}

export class ExportStore {
  private readonly jobs = new Map<string, ExportJob>();
  private readonly writers = new Set<Promise<void>>();
  private readonly stop = new AbortController();
  private closed = false;

  constructor(
    /** Where files are written; undefined: files are kept in memory, made at once. */
    private readonly dir: string | undefined,
    private readonly rng: Prng,
    private readonly log: (line: string) => void,
    private readonly clock: SimulatorClock
  ) {}

  create(
    quest: QuestData,
    request: ExportRequest,
    now: number,
    timing: ExportTiming,
    outcome: ExportOutcome
  ): ExportJob {
    const id = this.rng.uuid();
    const {window} = request;
    // The snapshot holds rows that exist at creation time (added rows may lie in the future).
    const [lo, hi] = quest.range(window.since, window.until ?? now);
    const job: ExportJob = {
      id,
      questId: quest.config.id,
      seq: this.jobs.size + 1,
      polls: 0,
      downloads: 0,
      createdMs: now,
      durationMs: timing.durationMs + Math.round(((hi - lo) / 1000) * timing.msPerThousandRows),
      outcome,
      settings: request.settings,
      file: this.dir === undefined ? '' : path.join(this.dir, `${id}.csv`),
      since: window.since,
      until: window.until,
      rows: hi - lo,
      gone: false,
    };
    this.jobs.set(id, job);
    // Failed, stuck and vanished jobs never produce a file, as in the real service.
    if (outcome === 'ok') this.generate(job, quest, request, lo, hi);
    return job;
  }

  private generate(job: ExportJob, quest: QuestData, request: ExportRequest, lo: number, hi: number): void {
    const {settings} = request;
    const {config} = quest;
    const source = (swapped: boolean): CsvSource => ({
      header: quest.header(settings),
      lo,
      hi,
      row: (i: number) => quest.exportRow(quest.listed(i, lo, hi, swapped), lo, hi, settings),
      separator: settings.separator,
      corruption: config.corruption,
      headerOnEmpty: config.headerOnEmpty,
      encoding: config.encoding,
      eol: config.lineEnding === 'lf' ? '\n' : '\r\n',
      middle: middleRow(lo, hi, config.corruptRow),
      strayQuoteColumn: config.corruption === 'stray-quote' ? quest.strayQuoteColumn(settings) : undefined,
    });
    if (config.repeatedIds) job.swapped = {file: job.file && `${job.file}.swapped`};
    if (this.dir === undefined) {
      const file = renderCsvFile(source(false));
      if (job.swapped) job.swapped.content = renderCsvFile(source(true)).content;
      Object.assign(job, {content: file.content, bytes: file.bytes, cutAt: file.cutAt, fileDoneMs: job.createdMs});
      return;
    }
    // Writing takes real time: a virtual clock waits for it rather than jump past it.
    const release = this.clock.hold?.();
    const aborted = (): boolean => this.closed || job.gone;
    const swapped = job.swapped;
    this.track(
      writeCsvFile(job.file, source(false), aborted)
        .then(async (written) =>
          swapped && written && !(await writeCsvFile(swapped.file, source(true), aborted)) ? undefined : written
        )
        .then((written) => {
          if (!written) return;
          job.bytes = written.bytes;
          job.cutAt = written.cutAt;
          job.fileDoneMs = this.clock.now();
        })
        .catch((err: unknown) => {
          job.failedMs = this.clock.now();
          this.log(`export ${job.id}: writing the file failed: ${err instanceof Error ? err.message : String(err)}`);
        })
        .finally(() => release?.())
    );
  }

  /** Keeps `work` (which must not reject) in the set close() waits for. */
  private track(work: Promise<void>): void {
    const tracked = work.finally(() => this.writers.delete(tracked));
    this.writers.add(tracked);
  }

  /**
   * The gzip-compressed bytes [0, end) of the job's file, written once beside it: HTTP wants the
   * compressed size in Content-Length before the first byte, so it cannot be compressed on the fly.
   */
  compressed(job: ExportJob, plain: string, end: number): Promise<{file: string; size: number}> {
    job.gzip ??= new Map();
    let made = job.gzip.get(plain);
    if (made) return made;
    made = (async () => {
      const file = `${plain}.gz`;
      // createReadStream cannot read zero bytes of a range ({end: -1} is refused).
      const input = end > 0 ? fs.createReadStream(plain, {start: 0, end: end - 1}) : Readable.from([]);
      const work = pipeline(input, createGzip(), fs.createWriteStream(file), {signal: this.stop.signal});
      this.track(work.catch(() => undefined));
      await work;
      if (job.gone) await fs.promises.rm(file, {force: true});
      return {file, size: (await fs.promises.stat(file)).size};
    })();
    job.gzip.set(plain, made);
    return made;
  }

  /**
   * The body of a download of the job's file: bytes [0, end) (the whole file without `end`),
   * gzip-compressed when asked, from the file that lists repeated pairs in the other order when
   * `swapped` (repeatedIds). Throws when the file is gone.
   */
  async body(job: ExportJob, end: number | undefined, gzip: boolean, swapped = false): Promise<FileBody> {
    const variant = swapped && job.swapped ? job.swapped : {file: job.file, content: job.content};
    if (this.dir === undefined) {
      const content = job.gone ? undefined : variant.content;
      if (!content) throw new Error(`export ${job.id} has no file`);
      const plain = content.subarray(0, end ?? content.length);
      const bytes = gzip ? gzipSync(plain) : plain;
      return {size: bytes.length, read: (stop) => Readable.from([bytes.subarray(0, stop)]), close: async () => {}};
    }
    const compressed = gzip ? await this.compressed(job, variant.file, end ?? job.bytes ?? 0) : undefined;
    const handle = await fs.promises.open(compressed?.file ?? variant.file, 'r');
    const size = compressed?.size ?? end ?? (await handle.stat()).size;
    return {size, read: (stop) => handle.createReadStream({start: 0, end: stop - 1}), close: () => handle.close()};
  }

  /** The job as the API sees it: vanished jobs were deleted right after creation. */
  find(questId: string, exportId: string): ExportJob | undefined {
    const job = this.jobs.get(exportId);
    return job && job.questId === questId && job.outcome !== 'vanished' ? job : undefined;
  }

  /** Whether the quest has an export that is still PENDING or INPROGRESS at `now`. */
  running(questId: string, now: number): boolean {
    for (const job of this.jobs.values()) {
      if (job.questId !== questId || job.outcome === 'vanished') continue;
      const {state} = this.view(job, now);
      if (state === 'PENDING' || state === 'INPROGRESS') return true;
    }
    return false;
  }

  records(): ExportRecord[] {
    return [...this.jobs.values()].map((job) => this.record(job));
  }

  /** The job as exports() reports it. */
  record(job: ExportJob): ExportRecord {
    const record: ExportRecord = {
      questId: job.questId,
      exportId: job.id,
      rows: job.rows,
      bytes: job.bytes ?? 0,
      outcome: job.outcome,
      createdAt: new Date(job.createdMs).toISOString(),
      seq: job.seq,
      polls: job.polls,
      downloads: job.downloads,
    };
    if (job.since !== undefined) record.since = new Date(job.since).toISOString();
    if (job.until !== undefined) record.until = new Date(job.until).toISOString();
    return record;
  }

  byId(exportId: string): ExportJob | undefined {
    return this.jobs.get(exportId);
  }

  get count(): number {
    return this.jobs.size;
  }

  /** The job's state at `now`. */
  view(job: ExportJob, now: number): JobView {
    if (job.gone) return {state: 'GONE'};
    const third = Math.floor(job.durationMs / 3);
    const age = now - job.createdMs;
    if (age < third) return {state: 'PENDING', lastChangedMs: job.createdMs};
    const inProgress: JobView = {state: 'INPROGRESS', lastChangedMs: job.createdMs + third};
    if (job.outcome === 'stuck' || age < job.durationMs) return inProgress;
    const end = job.createdMs + job.durationMs;
    if (job.outcome === 'error') return {state: 'ERROR', lastChangedMs: end};
    if (job.failedMs !== undefined) return {state: 'ERROR', lastChangedMs: Math.max(end, job.failedMs)};
    if (job.fileDoneMs === undefined) return inProgress;
    const completedMs = Math.max(end, job.fileDoneMs);
    if (now - completedMs > RETENTION_MS) {
      this.markGone(job);
      return {state: 'GONE'};
    }
    return {state: 'COMPLETED', lastChangedMs: completedMs};
  }

  /** Deletes the export: from now on it answers 410. */
  markGone(job: ExportJob): void {
    if (job.gone) return;
    job.gone = true;
    job.content = undefined;
    if (this.dir === undefined) return;
    // A running writer notices `gone` and removes its own partial file.
    for (const file of [job.file, job.swapped?.file]) {
      if (file === undefined) continue;
      fs.promises.rm(file, {force: true}).catch(() => undefined);
      if (job.gzip?.has(file)) fs.promises.rm(`${file}.gz`, {force: true}).catch(() => undefined);
    }
  }

  /** Stops all writers and waits until their files are closed. */
  async close(): Promise<void> {
    this.closed = true;
    this.stop.abort();
    await Promise.allSettled([...this.writers]);
  }
}
