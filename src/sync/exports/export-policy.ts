import {ExportEnd} from '../../api/export-job';
import {Cancelled, errorMessage, isAuthFailure} from '../../core/errors';
import {LIMITS} from '../../core/limits';
import {formatDuration, splittable, splitWindow, TimeWindow} from '../../core/time';
import {RecordedExport} from '../state/checkpoints';
import {exportSeal} from '../state/stream-state';

/** Something that stopped an export of a window from ending in a whole file. */
export type Setback =
  /** The export failed on the service, was not generated in time, or vanished (api/export-job.ts). */
  | Exclude<ExportEnd, {kind: 'ready'}>
  /** The file was gone when downloaded (404 or 410). */
  | {kind: 'gone'; exportId: string; httpStatus: number}
  /** The download did not arrive whole. */
  | {kind: 'cut-off'; exportId: string; reason: string}
  /** An earlier attempt's export answered what no retry mended (403, 404, a 500 for good...); `why` says what. */
  | {kind: 'unusable'; exportId: string; why: string};

type Decision =
  /** Create a new export of the same piece. */
  | {action: 'recreate'}
  /** Download the same export again, skipping the rows already emitted. */
  | {action: 'redownload'}
  /** Replace the piece by its two halves (see `halves`), each exported on its own. */
  | {action: 'split'}
  /** An earlier attempt's export that cannot be had: export its window anew, in pieces of about the target. */
  | {action: 'anew'}
  | {action: 'fail'; why: string};

/** What one piece of a window (the window itself, or a part after splits) has met so far. */
export interface PieceRecord {
  window: TimeWindow;
  failedInRow: number;
  cutOffsInRow: number;
  /** The piece is half of one that kept failing: the service seems to choke on the size, so it splits sooner. */
  halfOfFailed?: boolean;
  /** The piece's export is one an earlier attempt created (recorded in the state), not one of this attempt. */
  reused?: boolean;
}

/** A piece as the policy first sees it: nothing met yet. `reused`: its export is an earlier attempt's. */
export function pieceRecord(window: TimeWindow, reused = false): PieceRecord {
  return {window, failedInRow: 0, cutOffsInRow: 0, ...(reused ? {reused} : {})};
}

/** The two halves a split piece becomes; halves of a piece that kept failing split again at their first failure. */
export function halves(piece: PieceRecord, setback: Setback): PieceRecord[] {
  return splitWindow(piece.window).map((half) => ({
    ...pieceRecord(half),
    ...(setback.kind === 'failed' ? {halfOfFailed: true} : {}),
  }));
}

/** The one budget of a planned window, shared by all the pieces it is split into. */
export interface WindowBudget {
  setbacks: number;
  timeouts: number;
  /** Time the window's cut-off downloads went without a row new to it, summed. */
  stalledMs: number;
}

export function describeSetback(s: Setback): string {
  switch (s.kind) {
    case 'failed':
      return `export ${s.exportId} ended with status ${s.status} on the service`;
    case 'timeout':
      return `export ${s.exportId} was still ${s.status} after ${formatDuration(s.waitedMs)} (export_timeout_minutes is ${s.timeoutMs / 60_000})`;
    case 'vanished':
      return `export ${s.exportId} vanished while it was generated (HTTP ${s.httpStatus} on its status)`;
    case 'gone':
      return `the file of export ${s.exportId} was gone (HTTP ${s.httpStatus})`;
    case 'cut-off':
      return `the download of export ${s.exportId} was cut off: ${s.reason}`;
    case 'unusable':
      return `export ${s.exportId} cannot be had: ${s.why}`;
  }
}

/**
 * The exports an earlier attempt recorded that this attempt may re-use: only those made for this
 * quest with the same settings (exportSeal of the settings digest, the quest and the export id),
 * since a file made with others, or for another quest, is not the file this sync asks for.
 */
export function reusable(
  recorded: readonly RecordedExport[],
  settingsDigest: string,
  questId: string
): RecordedExport[] {
  return recorded.filter((e) => e.fingerprint === exportSeal(settingsDigest, questId, e.exportId));
}

/**
 * An earlier attempt's export whose status or file failed in a way no retry mended: a setback (its
 * window is exported anew), unless the read is stopping or the credentials failed, which stop all.
 */
export function unusable(err: unknown, exportId: string, signal: AbortSignal): Extract<Setback, {kind: 'unusable'}> {
  if (signal.aborted || err instanceof Cancelled || isAuthFailure(err)) throw err;
  return {kind: 'unusable', exportId, why: errorMessage(err)};
}

/**
 * Every rule for what happens when an export of a window does not end in a whole file, in one place:
 * - an export of an earlier attempt that failed, timed out, is gone or cannot be had (its status or
 *   file answered what no retry mended: 403, 404, a 500 for good) is not created again: its window is exported anew, in pieces the density seen says hold about the target (the first export
 *   of it may have been far larger); a cut-off download of it is downloaded again, as any;
 * - a failed export is created again; after LIMITS.window.failedBeforeSplit failures in a row the
 *   piece is split in two, since a service may choke on one large export; a half of such a piece
 *   splits again at its first failure;
 * - an export not generated in time splits its piece at once (waiting as long again for the same
 *   export rarely helps), at most LIMITS.window.timeouts times;
 * - an export that vanished, or whose file is gone, is created again;
 * - a cut-off download is downloaded again (the rows already emitted are skipped); after
 *   LIMITS.window.cutOffsBeforeSplit cut-offs in a row the piece is split;
 * - a planned window and all its pieces share LIMITS.window.setbacks, and a budget of time without
 *   a new row across its cut-off downloads (stallBudgetMs); past either the stream fails, and the
 *   next sync starts again from the last STATE.
 * A piece with no whole second inside it is never split (windows end on whole seconds, see
 * core/time.ts wholeSecond): it is tried again instead, or fails.
 */
export function decide(
  setback: Setback,
  piece: PieceRecord,
  budget: WindowBudget,
  stallBudgetMs: number = LIMITS.window.stallMs
): Decision {
  // An earlier attempt's export (only such a one can be unusable) is never created again.
  if (setback.kind === 'unusable' || (piece.reused && setback.kind !== 'cut-off')) return {action: 'anew'};
  budget.setbacks++;
  if (budget.stalledMs > stallBudgetMs) {
    return {
      action: 'fail',
      why: `its downloads went ${formatDuration(budget.stalledMs)} without a new row (at most ${formatDuration(stallBudgetMs)} are allowed), the last: ${describeSetback(setback)}`,
    };
  }
  if (budget.setbacks > LIMITS.window.setbacks) {
    return {
      action: 'fail',
      why: `${LIMITS.window.setbacks} setbacks in one window, the last: ${describeSetback(setback)}`,
    };
  }
  const canSplit = splittable(piece.window);
  switch (setback.kind) {
    case 'failed':
      piece.failedInRow++;
      return piece.failedInRow >= (piece.halfOfFailed ? 1 : LIMITS.window.failedBeforeSplit) && canSplit
        ? {action: 'split'}
        : {action: 'recreate'};
    case 'timeout':
      budget.timeouts++;
      if (budget.timeouts > LIMITS.window.timeouts || !canSplit) {
        return {action: 'fail', why: describeSetback(setback)};
      }
      return {action: 'split'};
    case 'vanished':
    case 'gone':
      return {action: 'recreate'};
    case 'cut-off':
      piece.cutOffsInRow++;
      return piece.cutOffsInRow >= LIMITS.window.cutOffsBeforeSplit && canSplit
        ? {action: 'split'}
        : {action: 'redownload'};
  }
}
