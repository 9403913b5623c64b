import {AirbyteLogger} from 'faros-airbyte-cdk/lib/logger';

import {LIMITS} from '../../core/limits';
import {formatBytes, plural} from '../../core/quantities';
import {formatDuration} from '../../core/time';

/** What a progress line names: the file and where its size is known. */
interface ProgressSubject {
  questId: string;
  exportId: string;
  /** The window, for messages. */
  where: string;
  /** Bytes announced for the body on the wire (its Content-Length), when the service says. */
  totalBytes?: number;
}

/**
 * The progress of one file's download, for the log: told the rows and bytes read so far, it writes a
 * line at most every LIMITS.downloadLogEveryMs (on the injected clock) with rows, size and rate, and
 * the share done when the size is known. A download shorter than that writes none; the line at its
 * end (quest-sync.ts) says the rest.
 */
export class DownloadProgress {
  private readonly startedAt: number;
  private loggedAt: number;

  constructor(
    private readonly subject: ProgressSubject,
    private readonly logger: AirbyteLogger,
    private readonly now: () => number
  ) {
    this.startedAt = now();
    this.loggedAt = this.startedAt;
  }

  /** `rows` rows and `bytes` bytes (on the wire) have been read of the file so far. */
  update(rows: number, bytes: number): void {
    const now = this.now();
    if (now - this.loggedAt < LIMITS.downloadLogEveryMs) return;
    this.loggedAt = now;
    const {questId, exportId, where, totalBytes} = this.subject;
    const seconds = Math.max(1, now - this.startedAt) / 1000;
    const share =
      totalBytes !== undefined && totalBytes > 0
        ? `, ${Math.min(100, Math.floor((100 * bytes) / totalBytes))}% of ${formatBytes(totalBytes)}`
        : ' (the size is not announced)';
    this.logger.info(
      `Quest ${questId}: downloading export ${exportId} of ${where} for ${formatDuration(now - this.startedAt)}: ${plural(rows, 'row')} and ${formatBytes(bytes)} so far${share}, at ${formatBytes(bytes / seconds)}/s and ${plural(rows / seconds, 'row')}/s`
    );
  }
}
