import {AirbyteLogger} from 'faros-airbyte-cdk/lib/logger';

import {connectorError} from '../../core/errors';
import {describeWindow, formatDuration, TimeWindow} from '../../core/time';
import {plural} from '../../core/quantities';
import {newPiece, Piece} from '../exports/export-jobs';
import {decide, describeSetback, halves, Setback} from '../exports/export-policy';
import {Priority} from '../exports/export-slots';
import {QuestCheckpoints} from '../state/checkpoints';
import {PlannedWindow} from './window-planner';

/**
 * What a setback may do to its quest's read (QuestSync): say so in the log, cut a window anew, start
 * or hand over an export, and tell the checkpoints an export is dropped. Nothing else of the read.
 */
interface SetbackQuest {
  readonly questId: string;
  readonly logger: AirbyteLogger;
  /** How long a window may go without a new row (the policy's stall budget). */
  readonly stallBudgetMs: number;
  /** A window cut into pieces of the target size (WindowPlanner.partition). */
  partition(window: TimeWindow): TimeWindow[];
  /** Starts (or starts again) a piece's export. */
  start(piece: Piece, priority: Priority): void;
  /** The head piece gives way to `first`, which takes over its slot (ExportJobs.replace). */
  replace(head: Piece, first: Piece): void;
  readonly checkpoints: Pick<QuestCheckpoints, 'clean' | 'exportDropped' | 'reuseAbandoned'>;
}

/**
 * A setback of the piece at the head of a window, acted on as the export policy (export-policy.ts)
 * decides: the export made anew, created again, downloaded again, split, or the quest failed; the
 * log says which and why.
 */
export class Setbacks {
  constructor(private readonly quest: SetbackQuest) {}

  /** Applies the policy's decision on a setback of the piece at the head of the window. */
  async act(w: PlannedWindow, piece: Piece, setback: Setback): Promise<void> {
    const {questId, checkpoints, logger} = this.quest;
    const what = describeSetback(setback);
    const decision = decide(setback, piece.record, w.budget, this.quest.stallBudgetMs);
    if (decision.action !== 'redownload') checkpoints.exportDropped(setback.exportId);
    switch (decision.action) {
      case 'anew':
        logger.warn(
          `Quest ${questId}: ${what}; the export of an earlier attempt is not re-used, its window is exported anew.`
        );
        this.replaceHead(
          w,
          this.quest.partition(piece.window).map((window) => newPiece(window))
        );
        await checkpoints.reuseAbandoned(setback.exportId);
        return;
      case 'recreate':
        logger.warn(`Quest ${questId}: ${what}; creating the export of ${describeWindow(piece.window)} again.`);
        this.quest.start(piece, Priority.Needed);
        return;
      case 'redownload': {
        const {stallBudgetMs} = this.quest;
        const left =
          w.budget.stalledMs > 0
            ? ` (${formatDuration(Math.max(0, stallBudgetMs - w.budget.stalledMs))} of the ${formatDuration(stallBudgetMs)} a window may go without new rows are left)`
            : '';
        logger.warn(
          `Quest ${questId}: ${what}; downloading it again, skipping the ${plural(w.files.resume?.emitted ?? 0, 'row')} of this window already emitted${left}.`
        );
        return;
      }
      case 'split': {
        const parts = halves(piece.record, setback).map((record) => ({...newPiece(record.window), record}));
        logger.warn(
          `Quest ${questId}: ${what}; splitting ${describeWindow(piece.window)} into ${describeWindow(parts[0].window)} and ${describeWindow(parts[1].window)}.`
        );
        this.replaceHead(w, parts);
        this.quest.start(parts[0], Priority.Needed);
        this.quest.start(parts[1], Priority.Ahead);
        return;
      }
      case 'fail':
        throw connectorError(
          'transient_error',
          `Quest ${questId}: the export of window ${describeWindow(w.window)} could not be completed: ${decision.why}. The next sync retries it from the last checkpoint; if it keeps failing, give Questback support the quest id and the export ids in the log.`,
          {questId, window: describeWindow(w.window), setback: setback.kind}
        );
    }
  }

  /**
   * The head piece gives way to `pieces`, the first of which takes over its slot (the head of a
   * window never waits for a new one). Rows the stream has not committed yet may lie in any of them.
   */
  private replaceHead(w: PlannedWindow, pieces: Piece[]): void {
    if (!this.quest.checkpoints.clean) w.mixed = true;
    const [head] = w.pieces.splice(0, 1, ...pieces);
    this.quest.replace(head, pieces[0]);
  }
}
