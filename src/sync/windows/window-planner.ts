import {AirbyteLogger} from 'faros-airbyte-cdk/lib/logger';

import {describeWindow, formatDuration, TimeWindow} from '../../core/time';
import {WindowBudget} from '../exports/export-policy';
import {newPiece, Piece} from '../exports/export-jobs';
import {DensityHint, RecordedExport} from '../state/checkpoints';
import {WindowFiles} from './file-reader';
import {Observation, SizingOptions, WindowSizer} from './window-sizer';

/** Windows of one quest generated ahead of the one being read, when its density is known. */
const LOOKAHEAD = 2;

/** A window of the quest as planned: exported in one piece, or in several after splits. */
export interface PlannedWindow {
  window: TimeWindow;
  budget: WindowBudget;
  /** The pieces not read yet, in order: the head is the one being exported or read. */
  pieces: Piece[];
  files: WindowFiles;
  /**
   * Rows were emitted from a file of the whole before it was split: they may lie in any piece, so
   * no STATE moves the cursor until every piece is read (a resume re-reads the window whole).
   */
  mixed?: boolean;
}

interface PlannerOptions {
  questId: string;
  logger: AirbyteLogger;
  sizing: SizingOptions;
  density?: DensityHint;
  /** Exports an earlier attempt recorded that may be re-used (see export-policy.ts reusable). */
  replay: readonly RecordedExport[];
  /** Reading starts after this (exclusive) and ends at `end` (inclusive). */
  from: number;
  end: number;
  /** max_concurrent_exports: how many windows capped by window_days may be generated side by side. */
  slots: number;
}

/**
 * The windows of one quest, from its start to the sync's end: the windows an earlier attempt
 * recorded are replayed first, with their exports; new ones are sized as the data comes
 * (WindowSizer), and planned ahead of the one being read as far as what is known allows.
 */
export class WindowPlanner {
  /** Windows planned and not read yet, the one being read first. */
  readonly windows: PlannedWindow[] = [];
  private readonly sizer: WindowSizer;
  private plannedUntil: number;
  /** The service said 409: it generates one export of this quest at a time. */
  private oneExportAtATime = false;

  constructor(private readonly options: PlannerOptions) {
    this.sizer = new WindowSizer(options.sizing, options.density);
    this.plannedUntil = options.from;
  }

  /** Nothing is left to plan or to read. */
  get done(): boolean {
    return this.windows.length === 0 && this.plannedUntil >= this.options.end;
  }

  /** The window being read. */
  get head(): PlannedWindow | undefined {
    return this.windows[0];
  }

  /**
   * Plans windows up to the sync's end, as far ahead as allowed; returns those planned now, whose
   * exports are to be started. A recorded window is planned at once, however far ahead: its export
   * exists already. New windows are planned ahead as far as `lookahead` allows, counting new ones only.
   */
  plan(): PlannedWindow[] {
    const {questId, end, logger} = this.options;
    const planned: PlannedWindow[] = [];
    while (this.plannedUntil < end) {
      const recorded = this.options.replay.find((e) => e.window.since === this.plannedUntil && e.window.until <= end);
      const fresh = this.windows.filter((w) => !w.pieces[0]?.reuse).length;
      if (!recorded && fresh > 0 && fresh > this.lookahead()) break;
      const next = recorded
        ? {window: recorded.window, reason: `re-using export ${recorded.exportId}, created by an earlier attempt`}
        : this.sizer.next(this.plannedUntil, end);
      const span = next.window.until - next.window.since;
      logger.info(`Quest ${questId}: window ${describeWindow(next.window)} of ${formatDuration(span)}: ${next.reason}`);
      const window: PlannedWindow = {
        window: next.window,
        budget: {setbacks: 0, timeouts: 0, stalledMs: 0},
        pieces: [newPiece(next.window, recorded)],
        files: {},
      };
      this.windows.push(window);
      planned.push(window);
      this.plannedUntil = next.window.until;
    }
    return planned;
  }

  /** The head window was read whole. */
  shift(): void {
    this.windows.shift();
  }

  /** What an export of the quest returned (or, estimated from its size, will return). */
  observe(observation: Observation): void {
    this.sizer.observe(observation);
  }

  /** The density to remember in the state (see WindowSizer.hint). */
  hint(): DensityHint | undefined {
    return this.sizer.hint();
  }

  /** A window cut into pieces of about the target rows each, at the density seen (see WindowSizer.partition). */
  partition(window: TimeWindow): TimeWindow[] {
    return this.sizer.partition(window);
  }

  /** The service generates one export of this quest at a time: its windows are no longer planned ahead. */
  oneAtATime(): void {
    if (this.oneExportAtATime) return;
    this.oneExportAtATime = true;
    this.options.logger.info(
      `Quest ${this.options.questId}: the service takes one export of this quest at a time; its windows are no longer generated ahead.`
    );
  }

  /**
   * How many windows may be planned beyond the one being read: none when the service takes one
   * export of the quest at a time or the windows are sparse and unknown; LOOKAHEAD when the density is
   * known; as many as there are export slots when window_days fixes their sizes.
   */
  private lookahead(): number {
    if (this.oneExportAtATime) return 0;
    const ahead = this.sizer.ahead;
    return ahead === 'capped' ? this.options.slots - 1 : ahead === 'density' ? LOOKAHEAD : 0;
  }
}
