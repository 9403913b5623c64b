import {TimeWindow} from '../../core/time';
import {StreamRef, SyncOutput} from '../output-port';
import {DensityHint} from '../windows/window-sizer';

/** An export created by this or an earlier attempt, kept in the state so a later attempt can re-use its file. */
export interface RecordedExport {
  exportId: string;
  window: TimeWindow;
  /** The export settings it was made with (see exportFingerprint): a file made with others is never re-used. */
  fingerprint: string;
}

/** What a STATE says of one quest. */
export interface QuestProgress {
  /** Every response created up to here (inclusive) has been emitted. */
  cursor: number;
  density?: DensityHint;
  /** Exports created past the cursor and not yet read whole, in window order. */
  exports: RecordedExport[];
}

/** Turns the progress of a stream's quests into its stream state (the layout decides the shape). */
export type StateCodec = (quests: ReadonlyMap<string, QuestProgress>) => object;

/**
 * The one owner of a stream's checkpoints: its quests' progress, the records emitted since the last
 * STATE, the STATE messages, and the rule that keeps them exactly once:
 * - a STATE commits every record of the stream written before it, so windows of the stream are read
 *   one at a time (`reading`): a STATE at a window's end commits that window's rows and no other's;
 * - a STATE within a window (an export was created, a density learned) is written only while the
 *   stream has no record since the last STATE; otherwise what it carries goes out with the next one.
 * A STATE is taken whole at the moment it is asked for (progress and count together, before
 * anything is awaited), so its count is exactly the stream's records written since the previous STATE.
 */
export class StreamCheckpoints {
  private readonly quests = new Map<string, QuestProgress>();
  private sinceState = 0;
  private reader: Promise<void> = Promise.resolve();

  constructor(
    private readonly output: SyncOutput,
    readonly stream: StreamRef,
    private readonly codec: StateCodec
  ) {}

  /** The progress of one quest of the stream, starting from what the state said. */
  quest(questId: string, start: QuestProgress): QuestCheckpoints {
    this.quests.set(questId, start);
    return new QuestCheckpoints(this, start);
  }

  /** No record was written since the last STATE. */
  get clean(): boolean {
    return this.sinceState === 0;
  }

  /** Records written to the stream; counted into the next STATE. */
  counted(records: number): void {
    this.sinceState += records;
  }

  /** Writes a STATE now; resolves once it is out. */
  commit(): Promise<void> {
    const count = this.sinceState;
    this.sinceState = 0;
    return this.output.state(this.stream, this.codec(this.quests), count);
  }

  /** Writes a STATE now if no record came since the last one (see the class comment); else the next STATE carries it. */
  commitIfClean(): Promise<void> {
    return this.sinceState === 0 ? this.commit() : Promise.resolve();
  }

  /** Waits for the stream's window reader turn; the returned function ends it. */
  async reading(): Promise<() => void> {
    const previous = this.reader;
    let done: () => void = () => undefined;
    this.reader = new Promise<void>((resolve) => (done = resolve));
    await previous;
    return done;
  }
}

/** One quest's view of its stream's checkpoints. */
export class QuestCheckpoints {
  constructor(
    private readonly owner: StreamCheckpoints,
    private readonly progress: QuestProgress
  ) {}

  get cursor(): number {
    return this.progress.cursor;
  }

  /** Exports an earlier attempt created past the cursor, for re-use. */
  get recorded(): readonly RecordedExport[] {
    return this.progress.exports;
  }

  counted(records: number): void {
    this.owner.counted(records);
  }

  /** Everything up to `cursor` is emitted; the cursor never moves back. */
  advance(cursor: number): void {
    this.progress.cursor = Math.max(this.progress.cursor, cursor);
    this.progress.exports = this.progress.exports.filter((e) => e.window.since >= this.progress.cursor);
  }

  setDensity(density: DensityHint | undefined): void {
    if (density) this.progress.density = density;
  }

  exportCreated(created: RecordedExport): void {
    this.progress.exports = [...this.progress.exports.filter((e) => e.exportId !== created.exportId), created].sort(
      (a, b) => a.window.since - b.window.since || a.window.until - b.window.until
    );
  }

  /** The export will not be read (it failed, its file is gone, its window was split). */
  exportDropped(exportId: string): void {
    this.progress.exports = this.progress.exports.filter((e) => e.exportId !== exportId);
  }

  commit(): Promise<void> {
    return this.owner.commit();
  }

  commitIfClean(): Promise<void> {
    return this.owner.commitIfClean();
  }

  reading(): Promise<() => void> {
    return this.owner.reading();
  }

  get clean(): boolean {
    return this.owner.clean;
  }
}
