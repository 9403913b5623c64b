import {setMaxListeners} from 'events';
import {AirbyteLogger} from 'faros-airbyte-cdk/lib/logger';

import {ExportApi} from '../../api/client';
import {Runtime} from '../../core/runtime';
import {describeWindow, TimeWindow} from '../../core/time';
import {RecordedExport} from '../state/checkpoints';
import {awaitExport} from '../../api/export-job';
import {createFor, JobResult, SyncJob, syncJobContext} from './export-job';
import {pieceRecord, PieceRecord, unusable} from './export-policy';
import {ExportSlots, Priority, Slot, SlotRequest} from './export-slots';

/** A window exported as one export: a planned window itself, or a part of it after splits. */
export interface Piece {
  window: TimeWindow;
  /** What the piece has met so far, for the export policy. */
  record: PieceRecord;
  /** An export of exactly this window that an earlier attempt created: polled and read instead of a new one. */
  reuse?: RecordedExport;
  /** The export being generated or read for the piece, once it exists. */
  exportId?: string;
  job?: Promise<JobResult>;
  result?: JobResult;
  slot?: Slot;
  /** The piece's wait for a slot, while it waits. */
  request?: SlotRequest;
}

export function newPiece(window: TimeWindow, reuse?: RecordedExport): Piece {
  return {window, record: pieceRecord(window, reuse !== undefined), ...(reuse ? {reuse} : {})};
}

interface ExportJobsContext {
  api: ExportApi;
  slots: ExportSlots;
  runtime: Runtime;
  logger: AirbyteLogger;
  questId: string;
  /** export_timeout_minutes: the longest wait for one export to be generated. */
  timeoutMs: number;
  /** An export was created: called before the job waits for it, so that it can be recorded at once. */
  created(piece: Piece, exportId: string): Promise<void>;
  /** The service answered 409: it generates one export of this quest at a time. */
  conflict(): void;
}

/**
 * The export jobs of one quest: each piece's slot, its export (created, or an earlier attempt's
 * polled), its hand-over and its end. A slot is held from the export's creation until its file has
 * been read or dropped; the slot of a finished or replaced piece goes to the piece a reader needs
 * next, so that a window holding the stream's turn never waits for a slot others hold. Every job
 * stops when the quest's read ends, whichever way it ends (`stop`).
 */
export class ExportJobs {
  private readonly abort = new AbortController();
  private readonly pieces = new Set<Piece>();

  constructor(
    private readonly ctx: ExportJobsContext,
    parent: AbortSignal
  ) {
    if (parent.aborted) this.abort.abort(parent.reason);
    else
      parent.addEventListener('abort', () => this.abort.abort(parent.reason), {once: true, signal: this.abort.signal});
  }

  /** Aborted when the quest's read stops: every wait and download of the quest listens on it. */
  get signal(): AbortSignal {
    return this.abort.signal;
  }

  /** Starts (or restarts) the piece's export job, holding a slot for it until the piece is finished. */
  start(piece: Piece, priority: Priority): void {
    const {ctx} = this;
    this.pieces.add(piece);
    piece.result = undefined;
    // Each piece's work (slot, poll, download) listens on the quest's signal, and the file being read one more.
    setMaxListeners(Math.max(10, this.pieces.size + 1), this.abort.signal);
    const signal = this.abort.signal;
    const job: SyncJob = {
      api: ctx.api,
      runtime: ctx.runtime,
      logger: ctx.logger,
      questId: ctx.questId,
      timeoutMs: ctx.timeoutMs,
      onConflict: () => ctx.conflict(),
    };
    piece.job = (async () => {
      if (!piece.slot) {
        piece.request = ctx.slots.request(priority, signal);
        piece.slot = await piece.request.slot;
        piece.request = undefined;
      }
      const lifecycle = syncJobContext(job, piece.window);
      if (piece.reuse && piece.exportId === undefined) {
        const exportId = (piece.exportId = piece.reuse.exportId);
        return awaitExport(lifecycle, ctx.questId, exportId, signal).catch((err: unknown) =>
          unusable(err, exportId, signal)
        );
      }
      const exportId = await createFor(job, piece.window, signal, async (id) => {
        piece.exportId = id;
        await ctx.created(piece, id);
      });
      return awaitExport(lifecycle, ctx.questId, exportId, signal);
    })();
    // Awaited when the piece is read; until then a failure must not count as unhandled.
    piece.job.catch(() => undefined);
  }

  /** How the piece's job ended, once it has; the piece is needed now, so its wait for a slot goes first. */
  async result(piece: Piece): Promise<JobResult> {
    if (!piece.job) this.start(piece, Priority.Needed);
    if (piece.request?.prioritize()) {
      this.ctx.logger.info(
        `Quest ${this.ctx.questId}: waiting for a free export slot for ${describeWindow(piece.window)}: all ${this.ctx.slots.limit} (max_concurrent_exports) are held by exports being generated or read.`
      );
    }
    piece.result ??= await piece.job;
    return piece.result as JobResult;
  }

  /** The piece was replaced by others (a split, or a window exported anew): the first takes over its slot. */
  replace(piece: Piece, first: Piece): void {
    first.slot = piece.slot;
    piece.slot = undefined;
    this.finish(piece);
  }

  /**
   * The piece's file was read: its slot goes to the next piece of its window, which a reader needs
   * next (a window holding the stream's turn never waits for a slot that pieces waiting for the turn hold).
   */
  done(piece: Piece, next: Piece | undefined): void {
    if (next && piece.slot && !next.slot && (next.request?.takeOver(piece.slot) || !next.job)) {
      if (!next.job) next.slot = piece.slot;
      piece.slot = undefined;
    }
    this.finish(piece);
  }

  /** Stops every job of the quest and frees their slots, once they have settled. */
  async stop(): Promise<void> {
    this.abort.abort();
    const jobs = [...this.pieces].map((p) => p.job).filter((j): j is Promise<JobResult> => j !== undefined);
    await Promise.allSettled(jobs);
    for (const piece of this.pieces) piece.slot?.release();
  }

  private finish(piece: Piece): void {
    piece.slot?.release();
    piece.slot = undefined;
    this.pieces.delete(piece);
  }
}
