import {LIMITS} from '../../core/limits';
import {describeWindow} from '../../core/time';
import {RowBatch} from '../../csv/rows';
import {JobResult} from '../exports/export-job';
import {ExportJobs, Piece} from '../exports/export-jobs';
import {reusable, unusable} from '../exports/export-policy';
import {Priority} from '../exports/export-slots';
import {recordCounter, RowWriter} from '../output-port';
import {QuestCheckpoints} from '../state/checkpoints';
import {exportSeal} from '../state/stream-state';
import {tallyWarnings} from './created-filter';
import {cutWarning, readExportFile} from './file-reader';
import {QuestPlan, QuestSyncContext} from './quest-plan';
import {PlannedWindow, WindowPlanner} from './window-planner';
import {Setbacks} from './setbacks';
import {formatBytes, plural} from '../../core/quantities';

/**
 * One quest's read: the loop over its windows (WindowPlanner), each window's pieces exported
 * (ExportJobs) and their files read in order, every setback acted on as the export policy decides
 * (setbacks.ts). It tells the checkpointer what happened (an export was created or dropped,
 * rows were written, a piece was read whole), and the checkpointer decides when a STATE goes out.
 */
export class QuestSync {
  private readonly planner: WindowPlanner;
  private readonly jobs: ExportJobs;
  private readonly setbacks: Setbacks;
  private total = 0;

  constructor(
    private readonly ctx: QuestSyncContext,
    private readonly plan: QuestPlan,
    private readonly checkpoints: QuestCheckpoints,
    parent: AbortSignal
  ) {
    const {questId} = plan;
    const replay = reusable(checkpoints.recorded, ctx.fingerprint, questId);
    // The others were made with other settings or for another quest: the next STATE forgets them.
    for (const e of checkpoints.recorded) if (!replay.includes(e)) checkpoints.exportDropped(e.exportId);
    this.planner = new WindowPlanner({
      questId,
      logger: ctx.logger,
      sizing: {...ctx.sizing, exportTimeoutMs: ctx.exportTimeoutMs},
      ...(plan.density ? {density: plan.density} : {}),
      replay,
      from: plan.from,
      end: plan.end,
      slots: ctx.slots.limit,
    });
    this.jobs = new ExportJobs(
      {
        api: ctx.api,
        slots: ctx.slots,
        runtime: ctx.runtime,
        logger: ctx.logger,
        questId,
        timeoutMs: ctx.exportTimeoutMs,
        created: (piece, exportId) =>
          checkpoints.exportCreated({
            exportId,
            window: piece.window,
            fingerprint: exportSeal(ctx.fingerprint, questId, exportId),
          }),
        conflict: () => this.planner.oneAtATime(),
      },
      parent
    );
    const {planner, jobs} = this;
    this.setbacks = new Setbacks({
      questId,
      logger: ctx.logger,
      stallBudgetMs: ctx.stallBudgetMs,
      partition: (window) => planner.partition(window),
      start: (piece, priority) => jobs.start(piece, priority),
      replace: (head, first) => jobs.replace(head, first),
      checkpoints,
    });
  }

  /** Reads the quest; resolves to the number of records emitted, or throws what failed it. */
  async run(): Promise<number> {
    try {
      if (this.planner.done) {
        this.ctx.logger.info(
          `Stream ${this.plan.stream.name}: nothing new to read (the cursor is at or past the sync's end)`
        );
        await this.checkpoints.nothingToRead();
        return 0;
      }
      while (!this.planner.done) {
        this.planAhead();
        await this.readWindow(this.planner.head as PlannedWindow);
        this.planner.shift();
      }
      return this.total;
    } finally {
      await this.jobs.stop();
    }
  }

  /** Plans what may be planned now, and starts the exports of the windows planned. */
  private planAhead(): void {
    for (const w of this.planner.plan()) {
      this.jobs.start(w.pieces[0], w === this.planner.head ? Priority.Needed : Priority.Ahead);
    }
  }

  /**
   * Exports and reads every piece of one planned window, in order, acting on setbacks as the policy
   * decides. Windows of a stream are read one at a time (see StreamCheckpoints): the turn is taken
   * for a file and kept while the window has rows no STATE has committed yet, across its setbacks.
   * The head piece never needs a new export slot while it holds the turn (a recreated export keeps
   * its slot, a split hands it to the first half), so a turn never waits for a slot others hold.
   */
  private async readWindow(w: PlannedWindow): Promise<void> {
    let endTurn: (() => void) | undefined;
    try {
      while (w.pieces.length > 0) {
        const piece = w.pieces[0];
        const result = await this.jobs.result(piece);
        if (result.kind !== 'ready') {
          await this.setbacks.act(w, piece, result);
          continue;
        }
        endTurn ??= await this.checkpoints.reading();
        await this.readPiece(w, piece, result);
        if (this.checkpoints.clean) {
          endTurn();
          endTurn = undefined;
        }
      }
    } catch (err) {
      // Before the turn ends: no other quest of the stream may write a STATE in between.
      if (endTurn && !this.checkpoints.clean) this.failedWithRows(w);
      throw err;
    } finally {
      endTurn?.();
      w.files.resume?.close();
      const {created} = w.files;
      if (created)
        for (const warning of tallyWarnings(this.plan.questId, w.window, created)) this.ctx.logger.warn(warning);
      const cut = cutWarning(this.plan.questId, describeWindow(w.window), w.files);
      if (cut) this.ctx.logger.warn(cut);
    }
  }

  /**
   * The window failed after emitting rows no STATE has committed: the stream's next STATE (another
   * quest's) commits them, so it lists them, and the next sync skips them (see StreamCheckpoints);
   * those past what a STATE may list come again, and the log says how many.
   */
  private failedWithRows(w: PlannedWindow): void {
    const resume = w.files.resume;
    const emitted = resume ? resume.emittedKeys() : {listed: {keys: []}, unlisted: 0};
    const again = this.checkpoints.failedWithRows(w.window, emitted, resume?.wholeRows ?? false);
    const where = `Stream ${this.plan.stream.name}: quest ${this.plan.questId} failed after emitting ${resume?.emitted ?? 0} rows of window ${describeWindow(w.window)} that no STATE has committed yet`;
    if (again === 0) {
      this.ctx.logger.info(
        `${where}; the stream's next STATE lists their ids, so the next sync skips them and sends the rest of the window.`
      );
    } else {
      this.ctx.logger.warn(
        `${where}; more than a STATE may list (${formatBytes(LIMITS.state.emittedKeyBytes)} of ids): the stream's next STATE lists the first of them, so the next sync skips those, and sends the other ${plural(again, 'row')} of them again (duplicate records in an append destination; a deduplicating sync mode keeps one). The other quests' STATEs go on.`
      );
    }
  }

  /** Reads the ready file of the piece at the head of the window and tells the checkpointer, or acts on its setback. */
  private async readPiece(w: PlannedWindow, piece: Piece, result: Extract<JobResult, {kind: 'ready'}>): Promise<void> {
    const {questId, records} = this.plan;
    const {checkpoints} = this;
    const where = `window ${describeWindow(piece.window)}`;
    let writer: RowWriter | undefined;
    let recordsIn: (rows: RowBatch) => number = (rows) => rows.rows;
    const reading = readExportFile(
      {
        api: this.ctx.api,
        logger: this.ctx.logger,
        csv: this.ctx.csv,
        settings: this.ctx.fingerprint,
        resumeKey: this.ctx.resumeKey,
        signal: this.jobs.signal,
        now: () => this.ctx.runtime.now(),
        ...(checkpoints.emitted ? {emitted: checkpoints.emitted} : {}),
      },
      {questId, exportId: result.exportId, url: result.downloadUrl, window: piece.window, where},
      w.files,
      {
        begin: (header) => {
          const identity = records.header(header);
          this.ctx.onHeader?.(header);
          return identity;
        },
        rows: (rows) => {
          const write = (): Promise<void> | undefined => {
            if (!writer) {
              const shape = records.shape(piece.window);
              writer = this.ctx.output.rowWriter(shape);
              recordsIn = recordCounter(shape);
            }
            // Before the write: the batch's memory goes with it.
            const count = recordsIn(rows);
            this.total += count;
            checkpoints.rowsWritten(count);
            return writer.write(rows);
          };
          const due = checkpoints.beforeRows();
          return due ? due.then(write) : write();
        },
        estimate: (rows) => this.estimated(piece, rows, result.generationMs),
      }
    );
    // An earlier attempt's file that cannot be read (403, a 500 for good, a broken file) is exported anew.
    const outcome = piece.reuse
      ? await reading.catch((err: unknown) => unusable(err, result.exportId, this.jobs.signal))
      : await reading;
    if (outcome.kind === 'unusable') {
      await this.setbacks.act(w, piece, outcome);
      return;
    }
    if (outcome.kind === 'gone') {
      await this.setbacks.act(w, piece, {kind: 'gone', exportId: result.exportId, httpStatus: outcome.httpStatus});
      return;
    }
    if (outcome.kind === 'cut-off') {
      w.budget.stalledMs += outcome.stalledMs;
      await this.setbacks.act(w, piece, {kind: 'cut-off', exportId: result.exportId, reason: outcome.reason});
      return;
    }
    this.ctx.logger.info(
      `Quest ${questId}: ${where} done, ${plural(outcome.emitted, 'row')} emitted${outcome.skipped ? ` (${outcome.skipped} more were emitted from an earlier file of this window)` : ''}, ${formatBytes(outcome.bytes)} downloaded`
    );
    this.planner.observe({
      window: piece.window,
      rows: outcome.rows,
      bytes: outcome.bytes,
      ...(piece.reuse ? {} : {generationMs: result.generationMs}),
    });
    w.pieces.shift();
    this.jobs.done(piece, w.pieces[0]);
    // A window split after rows of the whole were emitted moves no cursor until its last piece is read.
    const whole = !w.mixed || w.pieces.length === 0;
    await checkpoints.pieceRead(result.exportId, whole ? piece.window.until : undefined, this.planner.hint());
  }

  /**
   * The size of the file being read is known: the next windows can be planned while it is read. A
   * file far above the target is still read whole (it is generated already; another export of the
   * same rows would cost as much again), but its density goes into a STATE before its rows, so that
   * a retry after a failure sizes its windows right.
   */
  private estimated(piece: Piece, rows: number, generationMs: number): void {
    this.planner.observe({window: piece.window, rows, estimated: true, ...(piece.reuse ? {} : {generationMs})});
    const target = this.ctx.sizing.targetRows;
    if (rows > 2 * target) {
      this.ctx.logger.info(
        `Quest ${this.plan.questId}: the export of ${describeWindow(piece.window)} holds about ${plural(rows, 'row')}, more than twice target_rows_per_export (${target}); it is read whole, and the next windows are sized to the target.`
      );
      this.checkpoints.densityLearned(this.planner.hint(), true);
    }
    this.planAhead();
  }
}
