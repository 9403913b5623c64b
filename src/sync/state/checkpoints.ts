import {LIMITS} from '../../core/limits';
import {TimeWindow} from '../../core/time';
import {StreamRef, SyncOutput} from '../output-port';
import {HeartbeatStream} from './heartbeat';

/** What the state keeps of a quest's density, so that the next sync sizes its first window right away. */
export interface DensityHint {
  rows_per_day: number;
  bytes_per_row?: number;
}

/** An export created by this or an earlier attempt, kept in the state so a later attempt can re-use its file. */
export interface RecordedExport {
  exportId: string;
  window: TimeWindow;
  /** The export settings it was made with (see exportFingerprint): a file made with others is never re-used. */
  fingerprint: string;
}

/**
 * Rows past a quest's cursor that a failed read of it emitted and a STATE of its stream committed
 * (another quest's STATE, in a stream of several quests): a later read skips them.
 */
export interface EmittedRows {
  /** The end of the window they lie in: once the cursor reaches it, they lie behind it. */
  until: number;
  /** Their identities, one per row: Response IDs, or keyed hashes of whole rows (windows/resume/) when `wholeRows`. */
  keys: string[];
  /**
   * Beside Response IDs, each row's keyed fingerprint (windows/resume/), to tell apart two rows of one id; ''
   * where a state written before fingerprints listed the id (any one row of it). Absent for whole rows.
   */
  fingerprints?: string[];
  /**
   * With fingerprints: the keyed digest of the export settings and header of the file they were
   * taken from (FingerprintKey.file). A row's bytes change with either, and its keyed fingerprint with
   * the secret, so the fingerprints count only for a file of the same digest; for another (the survey
   * was edited, a setting changed, another secret) the ids do.
   */
  header?: string;
  wholeRows: boolean;
}

/** What a STATE says of one quest. */
export interface QuestProgress {
  /** Every response created up to here (inclusive) has been emitted. */
  cursor: number;
  density?: DensityHint;
  /** Exports created past the cursor and not yet read whole, in window order. */
  exports: RecordedExport[];
  emitted?: EmittedRows;
  /** The check of the hash_salt the quest's hashed cells were made with (core/keyed-hash.ts saltCheck). */
  saltCheck?: string;
  /**
   * The sensitive_columns entries (their `column` texts, from the config: never a header's) that hash
   * or drop a column of the quest, in this sync or an earlier one. The quest's read adds to this list
   * as it meets headers (streams/sensitive-columns.ts QuestSensitivity).
   */
  sensitiveMatched?: string[];
}

/** About the bytes a row's identity takes in a STATE's JSON: its key and its fingerprint if any, quoted, a comma each. */
export function identityBytes(key: string, fingerprint = ''): number {
  return Buffer.byteLength(key) + 3 + (fingerprint ? fingerprint.length + 3 : 0);
}

/** How many of the first rows listed fit in `most` bytes of a STATE. */
function fitting(rows: ListedRows, most: number): number {
  let bytes = 0;
  for (let i = 0; i < rows.keys.length; i++) {
    bytes += identityBytes(rows.keys[i], rows.fingerprints?.[i]);
    if (bytes > most) return i;
  }
  return rows.keys.length;
}

/** The identities of emitted rows as a STATE lists them (see EmittedRows). */
export type ListedRows = Pick<EmittedRows, 'keys' | 'fingerprints' | 'header'>;

/**
 * Two lists of emitted rows as one, under the newer's file digest: fingerprints where either has
 * them, '' (any row of the id) for the rows of one without, or of another file digest.
 */
function joined(a: ListedRows, b: ListedRows): ListedRows {
  const keys = [...a.keys, ...b.keys];
  if (!a.fingerprints && !b.fingerprints) return {keys};
  const header = b.fingerprints ? b.header : a.header;
  const prints = (x: ListedRows): string[] =>
    x.fingerprints && x.header === header ? x.fingerprints : x.keys.map(() => '');
  return {keys, fingerprints: [...prints(a), ...prints(b)], ...(header !== undefined ? {header} : {})};
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
 * - a quest whose read fails after rows of its window were emitted leaves them uncommitted, and the
 *   next STATE (of another quest of the stream) commits them: that STATE lists them
 *   (QuestProgress.emitted), so the next sync skips exactly them; when they are too many to list, it
 *   lists the first that fit, and only the rest come again in the next sync. The other quests'
 *   STATEs go on either way: one quest's failure never holds the stream.
 * A STATE is taken whole at the moment it is asked for (progress and count together, before
 * anything is awaited), so its count is exactly the stream's records written since the previous STATE.
 */
export class StreamCheckpoints implements HeartbeatStream {
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

  /**
   * A heartbeat during a long wait (heartbeat.ts): the STATE again, only if no record came since the
   * last one (the rule above), so that it commits nothing a later attempt would send again.
   */
  async repeatState(): Promise<boolean> {
    if (!this.clean) return false;
    await this.commit();
    return true;
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

/**
 * One quest's part of its stream's checkpoints. The quest's read says what happened (an export was
 * created or dropped, rows were written, a piece of a window was read whole); this decides, under
 * the stream's rule, what goes into the quest's progress and when a STATE is written.
 */
export class QuestCheckpoints {
  /** A density that should reach a STATE before the next rows, if the stream allows one then. */
  private densityDue = false;

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

  /** No record of the stream is waiting for a STATE. */
  get clean(): boolean {
    return this.owner.clean;
  }

  /** Rows past the cursor that an earlier read emitted and a STATE committed: this read skips them. */
  get emitted(): EmittedRows | undefined {
    return this.progress.emitted;
  }

  /**
   * The quest's read failed in `window` while it held the stream's turn, after emitting rows no
   * STATE has committed: every record the stream's next STATE commits is one of them. The progress
   * lists their identities (`emitted.listed`, see resume/; `emitted.unlisted` more were emitted than
   * it could list), after those listed already, as many as fit in LIMITS.state.emittedKeyBytes, so
   * that a read resumed from that STATE skips them. Returns how many of them no STATE lists: the
   * next sync sends those again.
   */
  failedWithRows(window: TimeWindow, emitted: {listed: ListedRows; unlisted: number}, wholeRows: boolean): number {
    if (this.owner.clean) return 0;
    const earlier = this.progress.emitted?.wholeRows === wholeRows ? this.progress.emitted : undefined;
    const all = joined(earlier ?? {keys: []}, emitted.listed);
    const fit = fitting(all, LIMITS.state.emittedKeyBytes);
    const {fingerprints, header} = all;
    this.progress.emitted = {
      until: Math.max(window.until, earlier?.until ?? 0),
      keys: all.keys.slice(0, fit),
      ...(fingerprints ? {fingerprints: fingerprints.slice(0, fit)} : {}),
      ...(header !== undefined ? {header} : {}),
      wholeRows,
    };
    return emitted.unlisted + all.keys.length - fit;
  }

  /** Waits for the stream's turn to read a window; the returned function ends it (see StreamCheckpoints). */
  reading(): Promise<() => void> {
    return this.owner.reading();
  }

  /** The quest has nothing to read in this sync: its state goes out as it is. */
  nothingToRead(): Promise<void> {
    return this.owner.commit();
  }

  /** An export exists: recorded at once, so that a later attempt re-uses it (in a STATE if the stream allows one now). */
  exportCreated(created: RecordedExport): Promise<void> {
    this.progress.exports = [...this.progress.exports.filter((e) => e.exportId !== created.exportId), created].sort(
      (a, b) => a.window.since - b.window.since || a.window.until - b.window.until
    );
    return this.owner.commitIfClean();
  }

  /** The export will not be read (it failed, its file is gone, its window was split); the next STATE forgets it. */
  exportDropped(exportId: string): void {
    this.progress.exports = this.progress.exports.filter((e) => e.exportId !== exportId);
  }

  /** An earlier attempt's export is not re-used: the state forgets it at once, if the stream allows a STATE now. */
  reuseAbandoned(exportId: string): Promise<void> {
    this.exportDropped(exportId);
    return this.owner.commitIfClean();
  }

  /**
   * The density the next windows are sized by. `urgent`: a file far above the target is being read,
   * and its density should reach a STATE before its rows (a retry after a failure then sizes right).
   */
  densityLearned(density: DensityHint | undefined, urgent = false): void {
    if (density) this.progress.density = density;
    if (urgent) this.densityDue = true;
  }

  /** Rows are about to be written: a STATE that is due goes first, if the stream allows one now. */
  beforeRows(): Promise<void> | undefined {
    if (!this.densityDue) return undefined;
    this.densityDue = false;
    return this.owner.commitIfClean();
  }

  /** Rows were written to the stream: the next STATE commits them. */
  rowsWritten(records: number): void {
    this.owner.counted(records);
  }

  /**
   * A piece of a window was read whole and its export is done with. With `through`, every row up to
   * it has been emitted: the cursor moves there, with the density, in a STATE. Without, rows of the
   * window may still lie in pieces not read yet, and nothing moves.
   */
  pieceRead(exportId: string, through?: number, density?: DensityHint): Promise<void> {
    this.exportDropped(exportId);
    if (through === undefined) return Promise.resolve();
    this.progress.cursor = Math.max(this.progress.cursor, through);
    this.progress.exports = this.progress.exports.filter((e) => e.window.since >= this.progress.cursor);
    if (this.progress.emitted && this.progress.emitted.until <= this.progress.cursor) delete this.progress.emitted;
    this.densityLearned(density);
    return this.owner.commit();
  }
}
