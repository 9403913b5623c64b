import {DAY_MS, formatDuration, TimeWindow} from '../core/time';
import {spanOf} from './windows';

/** A window may grow at most this much over the one before it while exports come back sparse. */
export const GROWTH = 8;
/** A first sync reads a span this short (or shorter) in one export: probing it would cost more. */
export const FIRST_PROBE_MIN_MS = 7 * DAY_MS;
/** No export is planned above this many bytes, whatever the row target says (wide quests). */
export const BYTE_CEILING = 256 * 1024 * 1024;
/** Exports that take longer than this share of export_timeout_minutes to generate shrink the next window. */
const GENERATION_SHARE = 0.25;

/** What one export of the quest returned. */
export interface Observation {
  window: TimeWindow;
  rows: number;
  bytes?: number;
  generationMs?: number;
  /** Rows estimated from the announced size and the first rows, before the whole file was read. */
  estimated?: boolean;
}

/** What the state keeps of a quest's density, so that the next sync sizes its first window right away. */
export interface DensityHint {
  rows_per_day: number;
  bytes_per_row?: number;
}

export interface SizingOptions {
  targetRows: number;
  /** window_days, when set: no window is longer. */
  maxSpanMs?: number;
  exportTimeoutMs: number;
}

export interface SizedWindow {
  window: TimeWindow;
  /** Why this size, for the log line. */
  reason: string;
}

function plural(n: number, word: string): string {
  return `${Math.round(n).toLocaleString('en-US')} ${word}${Math.round(n) === 1 ? '' : 's'}`;
}

/**
 * Sizes a quest's export windows from what its earlier exports returned, so that the number of
 * exports follows the data rather than the calendar: a first window of an eighth of the span (or
 * the whole span when it is short), then windows sized for about `targetRows` at the density last
 * seen, growing at most GROWTH times per step while exports come back sparse, and shrinking at once
 * when one comes back dense, large in bytes, or slow to generate. window_days, when set, caps them.
 */
export class WindowSizer {
  private last: Observation | undefined;
  private lastSpan: number | undefined;
  private rowsPerMs: number | undefined;
  private bytesPerRow: number | undefined;

  constructor(
    private readonly options: SizingOptions,
    hint?: DensityHint
  ) {
    if (hint && hint.rows_per_day >= 0) this.rowsPerMs = hint.rows_per_day / DAY_MS;
    if (hint?.bytes_per_row && hint.bytes_per_row > 0) this.bytesPerRow = hint.bytes_per_row;
  }

  /** Something is known of the quest's density: windows can be planned ahead. */
  get informed(): boolean {
    return this.rowsPerMs !== undefined;
  }

  /**
   * The density is known well enough to plan more windows before the current one is read: from the
   * state, or from a window that held a tenth of the target or more. Sparse windows are not planned
   * ahead: each one's size decides how far the next may grow.
   */
  get canPlanAhead(): boolean {
    if (this.rowsPerMs === undefined) return false;
    return this.last === undefined || this.last.rows >= this.options.targetRows / 10;
  }

  /** The next window from `from` (exclusive) toward `end`. */
  next(from: number, end: number): SizedWindow {
    const remaining = end - from;
    let span: number;
    let reason: string;
    if (this.rowsPerMs === undefined) {
      span = remaining <= FIRST_PROBE_MIN_MS ? remaining : Math.max(FIRST_PROBE_MIN_MS, remaining / GROWTH);
      reason =
        span >= remaining
          ? 'nothing is known of the quest yet and the span is short: one export'
          : `a first probe of 1/${GROWTH} of the ${formatDuration(remaining)} to read, as nothing is known of the quest yet`;
    } else {
      // One row more than seen, so that an empty window still says "sparse", not "infinitely sparse".
      const density = this.last
        ? (this.last.rows + 1) / Math.max(1, this.last.window.until - this.last.window.since)
        : this.rowsPerMs;
      span = this.options.targetRows / Math.max(density, Number.MIN_VALUE);
      reason = `sized for about ${plural(this.options.targetRows, 'row')} at ${plural(density * DAY_MS, 'row')} a day`;
      if (this.last)
        reason += ` (the last window, ${formatDuration(spanOf(this.last.window))}, held ${plural(this.last.rows, 'row')}${this.last.estimated ? ' by its size' : ''}${this.last.generationMs !== undefined ? ` and took ${formatDuration(this.last.generationMs)} to generate` : ''})`;
      if (this.lastSpan !== undefined && span > this.lastSpan * GROWTH) {
        span = this.lastSpan * GROWTH;
        reason = `grown ×${GROWTH}, because ${this.last ? `the last window (${formatDuration(spanOf(this.last.window))}) held ${plural(this.last.rows, 'row')}` : 'earlier windows were sparse'}`;
      }
      if (this.bytesPerRow !== undefined && density > 0) {
        const byBytes = BYTE_CEILING / (density * this.bytesPerRow);
        if (span > byBytes) {
          span = byBytes;
          reason = `capped at ${BYTE_CEILING / 1048576} MiB (${Math.round(this.bytesPerRow)} bytes a row at ${plural(density * DAY_MS, 'row')} a day)`;
        }
      }
      const slowMs = this.options.exportTimeoutMs * GENERATION_SHARE;
      if (this.last?.generationMs !== undefined && this.last.generationMs > slowMs) {
        const bySpeed = spanOf(this.last.window) * (slowMs / this.last.generationMs);
        if (span > bySpeed) {
          span = bySpeed;
          reason = `shrunk, because the last export took ${formatDuration(this.last.generationMs)} to generate (export_timeout_minutes is ${this.options.exportTimeoutMs / 60_000})`;
        }
      }
    }
    if (this.options.maxSpanMs !== undefined && span > this.options.maxSpanMs) {
      span = this.options.maxSpanMs;
      reason += `; capped at window_days (${formatDuration(this.options.maxSpanMs)})`;
    }
    span = Math.max(1, Math.floor(span));
    // The rest, when what would be left after this window is a sliver of it.
    const cap = this.options.maxSpanMs ?? Infinity;
    if (remaining <= cap && (span >= remaining || remaining - span < span / 4)) span = remaining;
    this.lastSpan = span;
    return {window: {since: from, until: from + span}, reason};
  }

  /** What an export of the quest returned (or, estimated, will return). */
  observe(observation: Observation): void {
    const span = Math.max(1, spanOf(observation.window));
    this.last = observation;
    this.rowsPerMs = observation.rows / span;
    if (observation.bytes !== undefined && observation.rows > 0)
      this.bytesPerRow = observation.bytes / observation.rows;
  }

  /** The density to remember in the state, when anything was seen. */
  hint(): DensityHint | undefined {
    if (this.rowsPerMs === undefined) return undefined;
    const hint: DensityHint = {rows_per_day: Math.round(this.rowsPerMs * DAY_MS * 1000) / 1000};
    if (this.bytesPerRow !== undefined) hint.bytes_per_row = Math.round(this.bytesPerRow);
    return hint;
  }
}
