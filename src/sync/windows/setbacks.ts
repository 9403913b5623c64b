import {connectorError} from '../../core/errors';
import {describeWindow, formatDuration} from '../../core/time';
import {plural} from '../../core/quantities';
import {ExportJobs, newPiece, Piece} from '../exports/export-jobs';
import {decide, describeSetback, halves, Setback} from '../exports/export-policy';
import {Priority} from '../exports/export-slots';
import {QuestCheckpoints} from '../state/checkpoints';
import {QuestPlan, QuestSyncContext} from './quest-plan';
import {PlannedWindow, WindowPlanner} from './window-planner';

/** What a quest's read (QuestSync) lends its setbacks: the window's pieces are replanned and restarted through it. */
export interface SetbackQuest {
  readonly ctx: QuestSyncContext;
  readonly plan: QuestPlan;
  readonly planner: WindowPlanner;
  readonly jobs: ExportJobs;
  readonly checkpoints: QuestCheckpoints;
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
    const {questId} = this.quest.plan;
    const what = describeSetback(setback);
    const decision = decide(setback, piece.record, w.budget, this.quest.ctx.stallBudgetMs);
    if (decision.action !== 'redownload') this.quest.checkpoints.exportDropped(setback.exportId);
    switch (decision.action) {
      case 'anew':
        this.quest.ctx.logger.warn(
          `Quest ${questId}: ${what}; the export of an earlier attempt is not re-used, its window is exported anew.`
        );
        this.replaceHead(
          w,
          this.quest.planner.partition(piece.window).map((window) => newPiece(window))
        );
        await this.quest.checkpoints.reuseAbandoned(setback.exportId);
        return;
      case 'recreate':
        this.quest.ctx.logger.warn(
          `Quest ${questId}: ${what}; creating the export of ${describeWindow(piece.window)} again.`
        );
        this.quest.jobs.start(piece, Priority.Needed);
        return;
      case 'redownload': {
        const {stallBudgetMs} = this.quest.ctx;
        const left =
          w.budget.stalledMs > 0
            ? ` (${formatDuration(Math.max(0, stallBudgetMs - w.budget.stalledMs))} of the ${formatDuration(stallBudgetMs)} a window may go without new rows are left)`
            : '';
        this.quest.ctx.logger.warn(
          `Quest ${questId}: ${what}; downloading it again, skipping the ${plural(w.files.resume?.emitted ?? 0, 'row')} of this window already emitted${left}.`
        );
        return;
      }
      case 'split': {
        const parts = halves(piece.record, setback).map((record) => ({...newPiece(record.window), record}));
        this.quest.ctx.logger.warn(
          `Quest ${questId}: ${what}; splitting ${describeWindow(piece.window)} into ${describeWindow(parts[0].window)} and ${describeWindow(parts[1].window)}.`
        );
        this.replaceHead(w, parts);
        this.quest.jobs.start(parts[0], Priority.Needed);
        this.quest.jobs.start(parts[1], Priority.Ahead);
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
    this.quest.jobs.replace(head, pieces[0]);
  }
}
