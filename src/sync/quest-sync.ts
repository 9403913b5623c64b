import {setMaxListeners} from 'events';
import {AirbyteLogger} from 'faros-airbyte-cdk/lib/logger';

import {ExportApi} from '../api/client';
import {ColumnNames} from '../core/config';
import {connectorError} from '../core/errors';
import {Runtime} from '../core/runtime';
import {describeWindow, formatDuration, TimeWindow} from '../core/time';
import {CsvReadOptions} from '../csv/reader';
import {QuestCheckpoints, RecordedExport} from './checkpoints';
import {decide, describeSetback, PieceRecord, Setback, WindowBudget} from './export-policy';
import {awaitExport, createExport, JobContext, JobResult} from './export-job';
import {RowWriter, StreamRef, SyncOutput} from './output-port';
import {ExportSlots, Priority, Slot, SlotRequest} from './scheduler';
import {answerKeys, Column, isResponseIdHeader, recordColumns, responseIdColumn} from './schema';
import {answerFields, AnswersShape, columnFields} from './record-fields';
import {DensityHint, SizingOptions, WindowSizer} from './sizing';
import {readExportFile, ReadOutcome, WindowFiles} from './window-reader';
import {splitWindow} from './windows';

/** Windows of one quest generated ahead of the one being read, when its density is known. */
const LOOKAHEAD = 2;

export interface QuestSyncContext {
  api: ExportApi;
  slots: ExportSlots;
  runtime: Runtime;
  logger: AirbyteLogger;
  output: SyncOutput;
  sizing: Omit<SizingOptions, 'exportTimeoutMs'>;
  exportTimeoutMs: number;
  /** The longest a window may go without a row new to it, summed over the downloads that were cut off. */
  stallBudgetMs: number;
  csv: CsvReadOptions;
  columnNames: ColumnNames;
  /** The digest of the export settings (state.ts exportFingerprint): recorded exports made with others are not re-used. */
  fingerprint: string;
  /** Every header of the quest's files, as they are met. */
  onHeader?(header: string[]): void;
}

/** One quest's part of a read, decided before any request. */
export interface QuestPlan {
  questId: string;
  stream: StreamRef;
  /** What a row is written as: a field per column (per_quest), or an answers record (combined). */
  shape: 'columns' | 'answers';
  /** Record field names of the configured schema, the connector's own left out. */
  configuredNames: ReadonlySet<string>;
  /** Header texts the configured schema knows (property titles, else names). */
  configuredTitles: ReadonlySet<string>;
  /** The configured primary key's field, if any: an export without it would give records without their key. */
  primaryKey?: string;
  /** Reading starts after this (exclusive): the state's cursor, less any lookback, or just before start_date. */
  from: number;
  /** Reading ends here (inclusive): the sync's end. */
  end: number;
  density?: DensityHint;
}

interface Piece {
  window: TimeWindow;
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

interface PlannedWindow {
  window: TimeWindow;
  budget: WindowBudget;
  pieces: Piece[];
  files: WindowFiles;
  /**
   * Rows were emitted from a file of the whole before it was split: they may lie in any piece, so
   * no STATE moves the cursor until every piece is read (a resume re-reads the window whole).
   */
  mixed?: boolean;
}

function newPiece(window: TimeWindow, reuse?: RecordedExport): Piece {
  return {window, record: {window, failedInRow: 0, cutOffsInRow: 0}, ...(reuse ? {reuse} : {})};
}

/**
 * One quest's read: its windows sized as the data comes (WindowSizer), each exported and read in
 * order, with what goes wrong decided by the export policy (export-policy.ts). Every export is
 * recorded in a STATE the moment it exists, so that a later attempt re-uses it; windows an earlier
 * attempt recorded are replayed, with their exports, before new ones are sized. A STATE follows
 * every finished piece (of a split window whose whole had emitted rows: the last piece), under the
 * rule StreamCheckpoints keeps. Windows planned ahead are generated while the current one is read.
 * Every job of the quest stops when the read ends, whichever way it ends.
 */
export class QuestSync {
  private readonly sizer: WindowSizer;
  private readonly abort = new AbortController();
  private readonly pieces = new Set<Piece>();
  /** The service said 409: it generates one export of this quest at a time. */
  private oneExportAtATime = false;
  /** The columns of the sync's first header, and the names of every column seen since. */
  private columns: Column[] | undefined;
  private readonly seenNames = new Set<string>();
  /** The answers shape of the quest's header (combined layout). */
  private answers: AnswersShape | undefined;
  private total = 0;
  /** A STATE is due before the next rows (an export far above the target: its density must reach the state). */
  private stateDue = false;

  constructor(
    private readonly ctx: QuestSyncContext,
    private readonly plan: QuestPlan,
    private readonly checkpoints: QuestCheckpoints,
    parent: AbortSignal
  ) {
    this.sizer = new WindowSizer({...ctx.sizing, exportTimeoutMs: ctx.exportTimeoutMs}, plan.density);
    if (parent.aborted) this.abort.abort(parent.reason);
    else
      parent.addEventListener('abort', () => this.abort.abort(parent.reason), {once: true, signal: this.abort.signal});
  }

  /** Reads the quest; resolves to the number of records emitted, or throws what failed it. */
  async run(): Promise<number> {
    const {questId, end} = this.plan;
    const windows: PlannedWindow[] = [];
    let plannedUntil = this.plan.from;
    const replay = this.checkpoints.recorded.filter((e) => e.fingerprint === this.ctx.fingerprint);
    const planAhead = (): void => {
      while (plannedUntil < end) {
        const recorded = replay.find((e) => e.window.since === plannedUntil && e.window.until <= end);
        // A recorded window is planned at once, however far ahead: its export exists already. New
        // windows are planned ahead as far as the sizer allows, counting new ones only.
        const fresh = windows.filter((w) => !w.pieces[0]?.reuse).length;
        if (!recorded && fresh > 0 && fresh > this.lookahead()) break;
        const next = recorded
          ? {window: recorded.window, reason: `re-using export ${recorded.exportId}, created by an earlier attempt`}
          : this.sizer.next(plannedUntil, end);
        const span = next.window.until - next.window.since;
        this.ctx.logger.info(
          `Quest ${questId}: window ${describeWindow(next.window)} of ${formatDuration(span)}: ${next.reason}`
        );
        const piece = newPiece(next.window, recorded);
        windows.push({
          window: next.window,
          budget: {setbacks: 0, timeouts: 0, stalledMs: 0},
          pieces: [piece],
          files: {},
        });
        this.start(piece, windows.length === 1 ? Priority.Needed : Priority.Ahead);
        plannedUntil = next.window.until;
      }
    };
    try {
      if (plannedUntil >= end) {
        this.ctx.logger.info(
          `Stream ${this.plan.stream.name}: nothing new to read (the cursor is at or past the sync's end)`
        );
        await this.checkpoints.commit();
        return 0;
      }
      while (windows.length > 0 || plannedUntil < end) {
        planAhead();
        await this.readWindow(windows[0], planAhead);
        windows.shift();
      }
      return this.total;
    } finally {
      this.abort.abort();
      const jobs = [...this.pieces].map((p) => p.job).filter((j): j is Promise<JobResult> => j !== undefined);
      await Promise.allSettled(jobs);
      for (const piece of this.pieces) piece.slot?.release();
    }
  }

  /**
   * Exports and reads every piece of one planned window, in order, acting on setbacks as the policy
   * decides. Windows of a stream are read one at a time (see StreamCheckpoints): the turn is taken
   * for a file and kept while the window has rows no STATE has committed yet, across its setbacks.
   * The head piece never needs a new export slot while it holds the turn (a recreated export keeps
   * its slot, a split hands it to the first half), so a turn never waits for a slot others hold.
   */
  private async readWindow(w: PlannedWindow, planAhead: () => void): Promise<void> {
    const {questId} = this.plan;
    let endTurn: (() => void) | undefined;
    try {
      while (w.pieces.length > 0) {
        const piece = w.pieces[0];
        if (!piece.job) this.start(piece, Priority.Needed);
        if (piece.request?.prioritize()) {
          this.ctx.logger.info(
            `Quest ${questId}: waiting for a free export slot for ${describeWindow(piece.window)}: all ${this.ctx.slots.limit} (max_concurrent_exports) are held by exports being generated or read.`
          );
        }
        piece.result ??= await piece.job;
        const result = piece.result as JobResult;
        if (result.kind !== 'ready') {
          await this.act(w, piece, result);
          continue;
        }
        endTurn ??= await this.checkpoints.reading();
        await this.readPiece(w, piece, result, planAhead);
        if (this.checkpoints.clean) {
          endTurn();
          endTurn = undefined;
        }
      }
    } finally {
      endTurn?.();
      w.files.resume?.close();
    }
  }

  /** Reads the ready file of the piece at the head of the window, then checkpoints it, or acts on its setback. */
  private async readPiece(
    w: PlannedWindow,
    piece: Piece,
    result: Extract<JobResult, {kind: 'ready'}>,
    planAhead: () => void
  ): Promise<void> {
    const {questId} = this.plan;
    const where = `window ${describeWindow(piece.window)}`;
    let writer: RowWriter | undefined;
    const outcome: ReadOutcome = await readExportFile(
      {
        api: this.ctx.api,
        logger: this.ctx.logger,
        csv: this.ctx.csv,
        knownTitles: this.plan.configuredTitles,
        signal: this.abort.signal,
        now: () => this.ctx.runtime.now(),
      },
      {questId, exportId: result.exportId, url: result.downloadUrl, where},
      w.files,
      {
        begin: (header) => this.begin(header),
        rows: (rows) => {
          writer ??= this.rowWriter(piece.window);
          const write = (): Promise<void> | undefined => {
            this.total += rows.rows;
            this.checkpoints.counted(rows.rows);
            return writer?.write(rows);
          };
          if (!this.stateDue) return write();
          // The density of a file far above the target goes out before its rows, if the stream allows it now.
          this.stateDue = false;
          return this.checkpoints.commitIfClean().then(write);
        },
        estimate: (rows) => this.estimated(piece, rows, result.generationMs, planAhead),
      }
    );
    if (outcome.kind === 'gone') {
      await this.act(w, piece, {kind: 'gone', exportId: result.exportId, httpStatus: outcome.httpStatus});
      return;
    }
    if (outcome.kind === 'cut-off') {
      w.budget.stalledMs += outcome.stalledMs;
      await this.act(w, piece, {kind: 'cut-off', exportId: result.exportId, reason: outcome.reason});
      return;
    }
    this.ctx.logger.info(
      `Quest ${questId}: ${where} done, ${outcome.emitted} rows emitted${outcome.skipped ? ` (${outcome.skipped} more were emitted from an earlier file of this window)` : ''}, ${(outcome.bytes / 1048576).toFixed(1)} MB downloaded`
    );
    this.sizer.observe({
      window: piece.window,
      rows: outcome.rows,
      bytes: outcome.bytes,
      ...(piece.reuse ? {} : {generationMs: result.generationMs}),
    });
    w.pieces.shift();
    this.handOver(piece, w.pieces[0]);
    this.finish(piece);
    this.checkpoints.exportDropped(result.exportId);
    if (w.mixed && w.pieces.length > 0) return;
    this.checkpoints.advance(piece.window.until);
    this.checkpoints.setDensity(this.sizer.hint());
    await this.checkpoints.commit();
  }

  /**
   * The size of the file being read is known: the next windows can be planned while it is read. A
   * file far above the target is still read whole (it is generated already; another export of the
   * same rows would cost as much again), but its density goes into a STATE before its rows, so that
   * a retry after a failure sizes its windows right.
   */
  private estimated(piece: Piece, rows: number, generationMs: number, planAhead: () => void): void {
    this.sizer.observe({
      window: piece.window,
      rows,
      estimated: true,
      ...(piece.reuse ? {} : {generationMs}),
    });
    const target = this.ctx.sizing.targetRows;
    if (rows > 2 * target) {
      this.ctx.logger.info(
        `Quest ${this.plan.questId}: the export of ${describeWindow(piece.window)} holds about ${rows} rows, more than twice target_rows_per_export (${target}); it is read whole, and the next windows are sized to the target.`
      );
      this.checkpoints.setDensity(this.sizer.hint());
      this.stateDue = true;
    }
    planAhead();
  }

  /** Applies the policy's decision on a setback of the piece at the head of the window. */
  private async act(w: PlannedWindow, piece: Piece, setback: Setback): Promise<void> {
    const {questId} = this.plan;
    const what = describeSetback(setback);
    if (piece.reuse && setback.kind !== 'cut-off') {
      // An export of an earlier attempt that cannot be had any more: the window is exported anew,
      // in pieces the density seen says hold about the target (its first export may have been far larger).
      this.ctx.logger.info(
        `Quest ${questId}: ${what}; the export of an earlier attempt is not re-used, its window is exported anew.`
      );
      this.checkpoints.exportDropped(setback.exportId);
      const pieces = this.sizer.partition(piece.window).map((window) => newPiece(window));
      if (!this.checkpoints.clean) w.mixed = true;
      w.pieces.splice(0, 1, ...pieces);
      pieces[0].slot = piece.slot;
      piece.slot = undefined;
      this.finish(piece);
      await this.checkpoints.commitIfClean();
      return;
    }
    const decision = decide(setback, piece.record, w.budget, this.ctx.stallBudgetMs);
    if (decision.action !== 'redownload') this.checkpoints.exportDropped(setback.exportId);
    switch (decision.action) {
      case 'recreate':
        this.ctx.logger.warn(
          `Quest ${questId}: ${what}; creating the export of ${describeWindow(piece.window)} again.`
        );
        piece.result = undefined;
        this.start(piece, Priority.Needed);
        return;
      case 'redownload':
        this.ctx.logger.warn(
          `Quest ${questId}: ${what}; downloading it again, skipping the ${w.files.resume?.emitted ?? 0} rows of this window already emitted${w.budget.stalledMs > 0 ? ` (${formatDuration(Math.max(0, this.ctx.stallBudgetMs - w.budget.stalledMs))} of the ${formatDuration(this.ctx.stallBudgetMs)} a window may go without new rows are left)` : ''}.`
        );
        return;
      case 'split': {
        const halves = splitWindow(piece.window).map((half) => newPiece(half));
        if (setback.kind === 'failed') for (const half of halves) half.record.halfOfFailed = true;
        this.ctx.logger.warn(
          `Quest ${questId}: ${what}; splitting ${describeWindow(piece.window)} into ${describeWindow(halves[0].window)} and ${describeWindow(halves[1].window)}.`
        );
        if (!this.checkpoints.clean) w.mixed = true;
        w.pieces.splice(0, 1, ...halves);
        // The first half takes over the whole's slot: the head of a window never waits for a new one.
        halves[0].slot = piece.slot;
        piece.slot = undefined;
        this.finish(piece);
        this.start(halves[0], Priority.Needed);
        this.start(halves[1], Priority.Ahead);
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
   * Starts (or restarts) the piece's export job, holding a slot for it until the piece is finished.
   * A new export is recorded in a STATE as soon as it exists; a recorded one is polled, not created.
   */
  private start(piece: Piece, priority: Priority): void {
    this.pieces.add(piece);
    // Each piece's work (slot, poll, download) listens on the quest's signal, and the file being read one more.
    setMaxListeners(Math.max(10, this.pieces.size + 1), this.abort.signal);
    const signal = this.abort.signal;
    const job: JobContext = {
      api: this.ctx.api,
      runtime: this.ctx.runtime,
      logger: this.ctx.logger,
      timeoutMs: this.ctx.exportTimeoutMs,
      onConflict: () => this.oneAtATime(),
    };
    piece.job = (async () => {
      if (!piece.slot) {
        piece.request = this.ctx.slots.request(priority, signal);
        piece.slot = await piece.request.slot;
        piece.request = undefined;
      }
      const {questId} = this.plan;
      if (piece.reuse && piece.exportId === undefined) {
        piece.exportId = piece.reuse.exportId;
        return awaitExport(job, {questId, exportId: piece.exportId, window: piece.window}, signal);
      }
      const handle = await createExport(job, questId, piece.window, signal);
      piece.exportId = handle.exportId;
      this.checkpoints.exportCreated({
        exportId: handle.exportId,
        window: piece.window,
        fingerprint: this.ctx.fingerprint,
      });
      await this.checkpoints.commitIfClean();
      return awaitExport(job, handle, signal);
    })();
    // Awaited when the piece is read; until then a failure must not count as unhandled.
    piece.job.catch(() => undefined);
  }

  /**
   * A finished piece's slot goes to the next piece of its window, which a reader needs next: a window
   * holding the stream's turn never waits for a slot that pieces waiting for the turn hold.
   */
  private handOver(from: Piece, to: Piece | undefined): void {
    if (!to || !from.slot || to.slot) return;
    if (to.request?.takeOver(from.slot) || !to.job) {
      if (!to.job) to.slot = from.slot;
      from.slot = undefined;
    }
  }

  private finish(piece: Piece): void {
    piece.slot?.release();
    piece.slot = undefined;
    this.pieces.delete(piece);
  }

  /**
   * How many windows may be planned beyond the one being read: none when the service takes one
   * export of the quest at a time or the windows are sparse and unknown; LOOKAHEAD when the density is
   * known; as many as there are export slots when window_days fixes their sizes.
   */
  private lookahead(): number {
    if (this.oneExportAtATime) return 0;
    const ahead = this.sizer.ahead;
    return ahead === 'capped' ? this.ctx.slots.limit - 1 : ahead === 'density' ? LOOKAHEAD : 0;
  }

  /** The service generates one export of a quest at a time: stop planning this quest's windows ahead. */
  private oneAtATime(): void {
    if (this.oneExportAtATime) return;
    this.oneExportAtATime = true;
    this.ctx.logger.info(
      `Quest ${this.plan.questId}: the service takes one export of this quest at a time; its windows are no longer generated ahead.`
    );
  }

  /**
   * The header of a window's files: its record columns, checked against the configured schema before
   * any row is emitted. Returns the index of the rows' identity for resume (-1: the whole row).
   */
  private begin(header: string[]): number {
    const {configuredNames, stream, primaryKey, questId} = this.plan;
    if (this.plan.shape === 'answers') {
      const idIndex = header.findIndex(isResponseIdHeader);
      if (idIndex < 0) {
        throw connectorError(
          'config_error',
          `Stream ${stream.name}: the export of quest ${questId} has no Response ID column, the key of the ${stream.name} stream, so its records would reach the warehouse without their key. Nothing of this window was emitted. Tell Questback support (quest ${questId}) that the export has no response id column, or remove the quest from quest_ids.`,
          {questId, stream: stream.name, column: 'Response ID'}
        );
      }
      this.answers = {
        keys: answerKeys(header),
        idIndex,
        createdIndex: header.findIndex((h) => /^created$/i.test(h.trim())),
      };
      this.ctx.onHeader?.(header);
      return idIndex;
    }
    const columns = recordColumns(header, this.ctx.columnNames);
    const missing = columns.filter((c) => !configuredNames.has(c.name));
    if (columns.length > 0 && missing.length === columns.length) {
      throw connectorError(
        'config_error',
        `Stream ${stream.name}: the configured schema lists none of the ${columns.length} columns of the quest's export (e.g. ${JSON.stringify(columns[0].name)}), so Airbyte would drop every answer. Refresh the source schema in Airbyte (connection → Schema → Refresh source schema) and save the connection.`,
        {questId, stream: stream.name}
      );
    }
    if (primaryKey !== undefined && !columns.some((c) => c.name === primaryKey)) {
      throw connectorError(
        'config_error',
        `Stream ${stream.name}: the quest's export has no column ${JSON.stringify(primaryKey)}, the stream's primary key, so its records would reach the warehouse without their key (a deduplicating destination would merge or drop them). Nothing of this window was emitted. Refresh the source schema in Airbyte to see the export's columns now, and tell Questback support (quest ${questId}) that the export lost its response id column.`,
        {questId, stream: stream.name, column: primaryKey}
      );
    }
    const unseen = missing.filter((c) => !this.seenNames.has(c.name));
    if (unseen.length) {
      const list = `${unseen
        .slice(0, 5)
        .map((c) => JSON.stringify(c.name))
        .join(', ')}${unseen.length > 5 ? ', ...' : ''}`;
      this.ctx.logger.warn(
        this.columns === undefined
          ? `Stream ${stream.name}: ${unseen.length} column(s) of the export are not in the configured schema (${list}); Airbyte drops them. If they are new, refresh the source schema in Airbyte to add them; if you deselected them, nothing is wrong.`
          : `Stream ${stream.name}: ${unseen.length} column(s) appeared in the export of a later window (${list}): the survey was edited during the sync. Airbyte drops them until the source schema is refreshed (connection → Schema → Refresh source schema); the next sync after the refresh reads them.`
      );
    }
    for (const c of columns) this.seenNames.add(c.name);
    this.columns = columns;
    this.ctx.onHeader?.(header);
    const key = responseIdColumn(columns);
    return key === undefined ? -1 : columns.findIndex((c) => c.name === key);
  }

  /** Where the rows of a window go, written as the plan's shape. */
  private rowWriter(window: TimeWindow): RowWriter {
    const {stream, questId} = this.plan;
    const fields =
      this.plan.shape === 'columns' || !this.answers
        ? columnFields(
            (this.columns ?? []).map((c) => c.name),
            questId,
            window
          )
        : answerFields(this.answers, questId, window);
    return this.ctx.output.rowWriter(stream, fields);
  }
}
