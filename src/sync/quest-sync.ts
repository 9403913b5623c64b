import {AirbyteLogger} from 'faros-airbyte-cdk';

import {ExportApi} from '../api/client';
import {ColumnNames} from '../core/config';
import {connectorError} from '../core/errors';
import {Runtime} from '../core/runtime';
import {describeWindow, formatDuration, formatUtcTimestamp, TimeWindow} from '../core/time';
import {CsvReadOptions} from '../csv/reader';
import {decide, describeSetback, PieceRecord, Setback, WindowBudget} from './export-policy';
import {JobResult, runExportJob} from './export-job';
import {RowWriter, StreamRef, SyncOutput} from './output-port';
import {ExportSlots, Priority, Slot} from './scheduler';
import {Column, CURSOR_FIELD, QUEST_ID_FIELD, recordColumns, WINDOW_START_FIELD} from './schema';
import {DensityHint, SizingOptions, WindowSizer} from './sizing';
import {questState} from './state';
import {ChainState, readExportFile, ReadOutcome} from './window-reader';
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
  csv: CsvReadOptions;
  columnNames: ColumnNames;
}

/** One quest's part of a read, decided before any request. */
export interface QuestPlan {
  questId: string;
  stream: StreamRef;
  /** Record field names of the configured schema, the connector's own left out. */
  configuredNames: ReadonlySet<string>;
  /** Header texts the configured schema knows (property titles, else names). */
  configuredTitles: ReadonlySet<string>;
  /** Reading starts after this (exclusive): the state's cursor, less any lookback, or just before start_date. */
  from: number;
  /** The cursor a STATE never goes below: the state's cursor (a lookback re-reads, it does not move back). */
  cursor: number;
  /** Reading ends here (inclusive): the sync's end. */
  end: number;
  density?: DensityHint;
}

interface Piece {
  window: TimeWindow;
  record: PieceRecord;
  job?: Promise<JobResult>;
  result?: JobResult;
  slot?: Slot;
  /** Moves the piece's wait for a slot to the front: a reader now waits for it. True while it still waits. */
  prioritize?: () => boolean;
}

interface PlannedWindow {
  window: TimeWindow;
  budget: WindowBudget;
  pieces: Piece[];
  chain: ChainState;
}

function newPiece(window: TimeWindow): Piece {
  return {window, record: {window, failedInRow: 0, cutOffsInRow: 0}};
}

/**
 * One quest's read: its windows sized as the data comes (WindowSizer), each exported and read in
 * order, with what goes wrong decided by the export policy (export-policy.ts); a STATE after every
 * finished piece. Windows planned ahead are generated while the current one is read. Every job of
 * the quest stops when the read ends, whichever way it ends.
 */
export class QuestSync {
  private readonly sizer: WindowSizer;
  private readonly abort = new AbortController();
  private readonly pieces = new Set<Piece>();
  /** The service said 409: it generates one export of this quest at a time. */
  private oneExportAtATime = false;
  private columns: Column[] | undefined;
  private cursor: number;
  private sinceState = 0;
  private total = 0;
  private warnedMissing = false;

  constructor(
    private readonly ctx: QuestSyncContext,
    private readonly plan: QuestPlan,
    parent: AbortSignal
  ) {
    this.sizer = new WindowSizer({...ctx.sizing, exportTimeoutMs: ctx.exportTimeoutMs}, plan.density);
    this.cursor = plan.cursor;
    if (parent.aborted) this.abort.abort(parent.reason);
    else parent.addEventListener('abort', () => this.abort.abort(parent.reason), {once: true});
  }

  /** Reads the quest; resolves to the number of records emitted, or throws what failed it. */
  async run(): Promise<number> {
    const {questId, end} = this.plan;
    const windows: PlannedWindow[] = [];
    let plannedUntil = this.plan.from;
    const planAhead = (): void => {
      while (plannedUntil < end && (windows.length === 0 || windows.length <= this.lookahead())) {
        const sized = this.sizer.next(plannedUntil, end);
        const span = sized.window.until - sized.window.since;
        this.ctx.logger.info(
          `Quest ${questId}: window ${describeWindow(sized.window)} of ${formatDuration(span)}: ${sized.reason}`
        );
        const piece = newPiece(sized.window);
        windows.push({
          window: sized.window,
          budget: {setbacks: 0, timeouts: 0},
          pieces: [piece],
          chain: {pendingSkip: 0},
        });
        this.start(piece, windows.length === 1 ? Priority.Needed : Priority.Ahead);
        plannedUntil = sized.window.until;
      }
    };
    try {
      if (plannedUntil >= end) {
        this.ctx.logger.info(
          `Stream ${this.plan.stream.name}: nothing new to read (the cursor is at or past the sync's end)`
        );
        await this.checkpoint();
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

  /** Exports and reads every piece of one planned window, in order, acting on setbacks as the policy decides. */
  private async readWindow(w: PlannedWindow, planAhead: () => void): Promise<void> {
    const {questId} = this.plan;
    while (w.pieces.length > 0) {
      const piece = w.pieces[0];
      if (!piece.job) this.start(piece, Priority.Needed);
      if (piece.prioritize?.()) {
        this.ctx.logger.info(
          `Quest ${questId}: waiting for a free export slot for ${describeWindow(piece.window)}: all ${this.ctx.slots.limit} (max_concurrent_exports) are held by exports being generated or read.`
        );
      }
      piece.result ??= await piece.job;
      const result = piece.result as JobResult;
      if (result.kind !== 'ready') {
        this.act(w, piece, result);
        continue;
      }
      const where = `window ${describeWindow(piece.window)}`;
      let writer: RowWriter | undefined;
      const outcome: ReadOutcome = await readExportFile(
        {
          api: this.ctx.api,
          logger: this.ctx.logger,
          csv: this.ctx.csv,
          knownTitles: this.plan.configuredTitles,
          signal: this.abort.signal,
        },
        {questId, exportId: result.exportId, url: result.downloadUrl, where},
        w.chain,
        {
          begin: (header) => this.begin(header),
          rows: (rows) => {
            writer ??= this.ctx.output.rowWriter(this.plan.stream, this.columnNames(), this.constants(piece.window));
            this.sinceState += rows.length;
            this.total += rows.length;
            return writer.write(rows);
          },
          estimate: (rows) => this.estimated(piece.window, rows, result.generationMs, planAhead),
        }
      );
      if (outcome.kind === 'gone') {
        this.act(w, piece, {kind: 'gone', exportId: result.exportId, httpStatus: outcome.httpStatus});
        continue;
      }
      if (outcome.kind === 'cut-off') {
        this.act(w, piece, {kind: 'cut-off', exportId: result.exportId, reason: outcome.reason});
        continue;
      }
      this.ctx.logger.info(
        `Quest ${questId}: ${where} done, ${outcome.emitted} rows emitted, ${(outcome.bytes / 1048576).toFixed(1)} MB downloaded`
      );
      this.sizer.observe({
        window: piece.window,
        rows: outcome.rows,
        bytes: outcome.bytes,
        generationMs: result.generationMs,
      });
      this.finish(piece);
      w.pieces.shift();
      if (w.chain.pendingSkip === 0) {
        this.cursor = Math.max(this.cursor, piece.window.until);
        await this.checkpoint();
      } else if (w.pieces.length === 0) {
        throw connectorError(
          'transient_error',
          `Quest ${questId}: the exports of window ${describeWindow(w.window)} now hold fewer rows than this sync already emitted from it; the window is read again by the next sync.`,
          {questId, window: describeWindow(w.window)}
        );
      }
    }
  }

  /**
   * The size of the file being read is known: the next windows can be planned while it is read. A
   * file far above the target is still read whole (it is generated already; another export of the
   * same rows would cost as much again), but its density goes into a STATE at once, so that a retry
   * after a failure sizes its windows right.
   */
  private estimated(window: TimeWindow, rows: number, generationMs: number, planAhead: () => void): void {
    this.sizer.observe({window, rows, generationMs, estimated: true});
    const target = this.ctx.sizing.targetRows;
    if (rows > 2 * target) {
      this.ctx.logger.info(
        `Quest ${this.plan.questId}: the export of ${describeWindow(window)} holds about ${rows} rows, more than twice target_rows_per_export (${target}); it is read whole, and the next windows are sized to the target.`
      );
      if (this.sinceState === 0) void this.checkpoint();
    }
    planAhead();
  }

  /** Applies the policy's decision on a setback of the piece at the head of the window. */
  private act(w: PlannedWindow, piece: Piece, setback: Setback): void {
    const decision = decide(setback, piece.record, w.budget);
    const {questId} = this.plan;
    const what = describeSetback(setback);
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
          `Quest ${questId}: ${what}; downloading it again, skipping the ${w.chain.pendingSkip} rows already emitted.`
        );
        return;
      case 'split': {
        const halves = splitWindow(piece.window).map(newPiece);
        if (setback.kind === 'failed') for (const half of halves) half.record.halfOfFailed = true;
        this.ctx.logger.warn(
          `Quest ${questId}: ${what}; splitting ${describeWindow(piece.window)} into ${describeWindow(halves[0].window)} and ${describeWindow(halves[1].window)}.`
        );
        w.pieces.splice(0, 1, ...halves);
        // The halves ask for their slots before the whole gives its slot back, so the first half gets it.
        this.start(halves[0], Priority.Needed);
        this.start(halves[1], Priority.Ahead);
        this.finish(piece);
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

  /** Starts (or restarts) the piece's export job, holding a slot for it until the piece is finished. */
  private start(piece: Piece, priority: Priority): void {
    this.pieces.add(piece);
    const signal = this.abort.signal;
    piece.job = (async () => {
      if (!piece.slot) {
        const request = this.ctx.slots.request(priority, signal);
        piece.prioritize = request.prioritize;
        piece.slot = await request.slot;
        piece.prioritize = undefined;
      }
      return runExportJob(
        {
          api: this.ctx.api,
          runtime: this.ctx.runtime,
          logger: this.ctx.logger,
          timeoutMs: this.ctx.exportTimeoutMs,
          onConflict: () => this.oneAtATime(),
        },
        this.plan.questId,
        piece.window,
        signal
      );
    })();
    // Awaited when the piece is read; until then a failure must not count as unhandled.
    piece.job.catch(() => undefined);
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

  /** The header of the quest's first file: its record columns, checked against the configured schema. */
  private begin(header: string[]): void {
    const columns = recordColumns(header, this.ctx.columnNames);
    const {configuredNames, stream} = this.plan;
    const missing = columns.filter((c) => !configuredNames.has(c.name));
    if (columns.length > 0 && missing.length === columns.length) {
      throw connectorError(
        'config_error',
        `Stream ${stream.name}: the configured schema lists none of the ${columns.length} columns of the quest's export (e.g. ${JSON.stringify(columns[0].name)}), so Airbyte would drop every answer. Refresh the source schema in Airbyte (connection → Schema → Refresh source schema) and save the connection.`,
        {questId: this.plan.questId, stream: stream.name}
      );
    }
    if (missing.length && !this.warnedMissing && this.columns === undefined) {
      this.warnedMissing = true;
      this.ctx.logger.warn(
        `Stream ${stream.name}: ${missing.length} column(s) of the export are not in the configured schema (${missing
          .slice(0, 5)
          .map((c) => JSON.stringify(c.name))
          .join(
            ', '
          )}${missing.length > 5 ? ', ...' : ''}); Airbyte drops them. If they are new, refresh the source schema in Airbyte to add them; if you deselected them, nothing is wrong.`
      );
    }
    this.columns = columns;
  }

  private columnNames(): string[] {
    return (this.columns ?? []).map((c) => c.name);
  }

  private constants(window: TimeWindow): Record<string, string> {
    return {
      [QUEST_ID_FIELD]: this.plan.questId,
      [WINDOW_START_FIELD]: formatUtcTimestamp(window.since),
      [CURSOR_FIELD]: formatUtcTimestamp(window.until),
    };
  }

  private async checkpoint(): Promise<void> {
    await this.ctx.output.state(
      this.plan.stream,
      questState(this.cursor, this.sizer.hint() ?? this.plan.density),
      this.sinceState
    );
    this.sinceState = 0;
  }
}
