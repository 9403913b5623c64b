// Export jobs: the PENDING -> INPROGRESS -> COMPLETED/ERROR state machine (derived from the clock,
// so no timers are needed) and the asynchronous generation of the export file on disk.

import * as fs from 'fs';
import * as path from 'path';
import {writeCsvFile} from './csv';
import {QuestData} from './data';
import {ExportOutcome} from './faults';
import {Prng} from './prng';
import {ExportRequest} from './validation';

export type ExportStatus = 'PENDING' | 'INPROGRESS' | 'COMPLETED' | 'ERROR';
export type JobView = {state: 'GONE'} | {state: ExportStatus; lastChangedMs: number};

export const RETENTION_MS = 30 * 24 * 3600 * 1000;

export interface ExportJob {
  id: string;
  questId: string;
  createdMs: number;
  durationMs: number;
  outcome: ExportOutcome;
  file: string;
  /** Set once the file is fully written and closed. */
  fileDoneMs?: number;
  /** Set when writing the file failed; the job then reports ERROR. */
  failedMs?: number;
  gone: boolean;
}

export class ExportStore {
  private readonly jobs = new Map<string, ExportJob>();
  private readonly writers = new Set<Promise<void>>();
  private closed = false;

  constructor(
    private readonly dir: string,
    private readonly rng: Prng,
    private readonly log: (line: string) => void
  ) {}

  create(quest: QuestData, request: ExportRequest, now: number, durationMs: number, outcome: ExportOutcome): ExportJob {
    const id = this.rng.uuid();
    const job: ExportJob = {
      id,
      questId: quest.config.id,
      createdMs: now,
      durationMs,
      outcome,
      file: path.join(this.dir, `${id}.csv`),
      gone: false,
    };
    this.jobs.set(id, job);
    // Failed and stuck jobs never produce a file, as in the real service.
    if (outcome === 'ok') this.generate(job, quest, request, now);
    return job;
  }

  private generate(job: ExportJob, quest: QuestData, request: ExportRequest, now: number): void {
    const {settings, window} = request;
    // The snapshot holds rows that exist at creation time (added rows may lie in the future).
    const [lo, hi] = quest.range(window.since, window.until ?? now);
    const source = {
      header: quest.header(settings),
      lo,
      hi,
      row: (i: number) => quest.row(i, settings),
      separator: settings.separator,
      corruption: quest.config.corruption,
      headerOnEmpty: quest.config.headerOnEmpty,
    };
    const writer = writeCsvFile(job.file, source, () => this.closed || job.gone)
      .then((complete) => {
        if (complete) job.fileDoneMs = Date.now();
      })
      .catch((err: unknown) => {
        job.failedMs = Date.now();
        this.log(`export ${job.id}: writing the file failed: ${err instanceof Error ? err.message : String(err)}`);
      })
      .finally(() => this.writers.delete(writer));
    this.writers.add(writer);
  }

  find(questId: string, exportId: string): ExportJob | undefined {
    const job = this.jobs.get(exportId);
    return job && job.questId === questId ? job : undefined;
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
    // A running writer notices `gone` and removes its own partial file.
    fs.promises.rm(job.file, {force: true}).catch(() => undefined);
  }

  /** Stops all writers and waits until their files are closed. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.writers]);
  }
}
