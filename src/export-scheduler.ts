import {AirbyteLogger} from 'faros-airbyte-cdk';
import VError from 'verror';

import {ExportJobs, ReadyExport} from './export-job';
import {connectorError} from './errors';
import {describeWindow, TimeWindow} from './windows';

interface Job {
  questId: string;
  window: TimeWindow;
  started?: Promise<ReadyExport>;
}

function key(questId: string, window: TimeWindow): string {
  return `${questId}/${window.since}/${window.until}`;
}

/**
 * Runs the export jobs of a sync ahead of the reader: the service spends most of a sync generating
 * files, so up to `limit` jobs (of several quests, and the next windows of the same quest) are
 * created and polled at once, in the order the reader will want them. A job holds its slot until
 * the reader is done with its file, which bounds the work the service is asked for.
 */
export class ExportScheduler {
  private readonly queue: Job[] = [];
  private readonly jobs = new Map<string, Job>();
  private active = 0;

  constructor(
    private readonly exports: ExportJobs,
    private readonly limit: number,
    private readonly logger: AirbyteLogger,
    /** How many times a job that ends in ERROR is created again before the window fails. */
    private readonly maxAttempts = 5
  ) {}

  /** Plans the windows of a quest, in the order they will be read. */
  enqueue(questId: string, windows: readonly TimeWindow[]): void {
    for (const window of windows) {
      const job: Job = {questId, window};
      this.queue.push(job);
      this.jobs.set(key(questId, window), job);
    }
    this.fill();
  }

  /** The export of this window once its file is ready; starts it now if it has not started. */
  ready(questId: string, window: TimeWindow): Promise<ReadyExport> {
    const job = this.jobs.get(key(questId, window));
    if (!job) throw new VError('No export planned for quest %s window %s', questId, describeWindow(window));
    if (!job.started) this.start(job);
    return job.started as Promise<ReadyExport>;
  }

  /** The file is gone (410): a new job for the same window, which the reader waits for now. */
  recreate(questId: string, window: TimeWindow): Promise<ReadyExport> {
    const job = this.jobs.get(key(questId, window));
    if (!job) throw new VError('No export planned for quest %s window %s', questId, describeWindow(window));
    job.started = this.prepare(job);
    job.started.catch(() => undefined);
    return job.started;
  }

  /** The reader is done with this window: its slot goes to the next planned job. */
  release(questId: string, window: TimeWindow): void {
    const k = key(questId, window);
    const job = this.jobs.get(k);
    if (!job) return;
    this.jobs.delete(k);
    if (job.started) this.active--;
    this.fill();
  }

  /** The quest's stream failed: its jobs that have not started never will. */
  cancel(questId: string): void {
    for (let i = this.queue.length - 1; i >= 0; i--) {
      if (this.queue[i].questId === questId) this.queue.splice(i, 1);
    }
    for (const [k, job] of this.jobs) {
      if (job.questId === questId) {
        this.jobs.delete(k);
        if (job.started) this.active--;
      }
    }
    this.fill();
  }

  private fill(): void {
    while (this.active < this.limit && this.queue.length > 0) {
      const job = this.queue.shift() as Job;
      if (!job.started && this.jobs.get(key(job.questId, job.window)) === job) this.start(job);
    }
  }

  private start(job: Job): void {
    const index = this.queue.indexOf(job);
    if (index !== -1) this.queue.splice(index, 1);
    this.active++;
    job.started = this.prepare(job);
    // The reader awaits it later; until then a failure must not count as unhandled.
    job.started.catch(() => undefined);
  }

  private async prepare(job: Job): Promise<ReadyExport> {
    let lastError: Error | undefined;
    for (let attempt = 1; attempt <= this.maxAttempts; attempt++) {
      const exportId = await this.exports.create(job.questId, job.window);
      try {
        return await this.exports.waitUntilReady(job.questId, exportId, job.window);
      } catch (err) {
        const info = VError.info(err as Error);
        if (!info.exportStatus) throw err;
        lastError = err as Error;
        this.logger.warn(
          `${(err as Error).message} Creating it again (attempt ${attempt + 1} of ${this.maxAttempts}).`
        );
      }
    }
    throw connectorError(
      'transient_error',
      `The export of quest ${job.questId} for window ${describeWindow(job.window)} failed ${this.maxAttempts} times on the service (last: ${lastError?.message}). The next sync retries from the last checkpoint; if it keeps failing, give Questback support the quest id and the export ids in the log.`,
      {questId: job.questId, window: describeWindow(job.window)},
      lastError
    );
  }
}
