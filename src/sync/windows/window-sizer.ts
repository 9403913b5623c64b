import {LIMITS} from '../../core/limits';
import {DAY_MS, formatDuration, spanOf, TimeWindow, wholeSecond, windowEnd} from '../../core/time';
import {DensityHint} from '../state/checkpoints';
import {amount, plural} from '../../core/quantities';

/** A window may grow at most this much over the one before it while exports come back sparse. */
const GROWTH = 8;
/** A first sync reads a span this short (or shorter) in one export: probing it would cost more. */
const FIRST_PROBE_MIN_MS = 7 * DAY_MS;
/** No export is planned above this many bytes, whatever the row target says (wide quests). */
export const BYTE_CEILING = 256 * 1024 * 1024;
/** Exports that take longer than this share of export_timeout_minutes to generate shrink the next window. */
const GENERATION_SHARE = 0.25;
/** A window with at least this many rows gives a density to trust on its own; fewer rows are pooled with the rest. */
const TELLING_ROWS = 50;
/** The density a state remembers weighs as much as this span of new observations. */
const HINT_WEIGHT_MS = 30 * DAY_MS;

/** What one export of the quest returned. */
export interface Observation {
  window: TimeWindow;
  rows: number;
  bytes?: number;
  generationMs?: number;
  /** Rows estimated from the announced size and the first rows, before the whole file was read. */
  estimated?: boolean;
}

export interface SizingOptions {
  targetRows: number;
  /** window_days, when set: no window is longer. */
  maxSpanMs?: number;
  exportTimeoutMs: number;
}

interface SizedWindow {
  window: TimeWindow;
  /** Why this size, for the log line. */
  reason: string;
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
  /** Rows and span of every window read whole (and the state's density as one long window): the pooled density. */
  private pooled = {rows: 0, span: 0};
  private bytesPerRow: number | undefined;
  private lastCapped = false;

  constructor(
    private readonly options: SizingOptions,
    hint?: DensityHint
  ) {
    if (hint && hint.rows_per_day >= 0)
      this.pooled = {rows: (hint.rows_per_day * HINT_WEIGHT_MS) / DAY_MS, span: HINT_WEIGHT_MS};
    if (hint?.bytes_per_row && hint.bytes_per_row > 0) this.bytesPerRow = hint.bytes_per_row;
  }

  /** Something is known of the quest's density: windows can be planned ahead. */
  get informed(): boolean {
    return this.pooled.span > 0 || this.last !== undefined;
  }

  /**
   * Rows and span the density is taken from: the last window's alone when it held enough rows to
   * tell (density changes, and the latest is the best guess of the next), else pooled with
   * everything seen, so that a few rows in a short window do not make the next window tiny.
   */
  private basis(): {rows: number; span: number} {
    const last = this.last;
    if (last && last.rows >= TELLING_ROWS) return {rows: last.rows, span: Math.max(1, spanOf(last.window))};
    return {
      rows: this.pooled.rows + (last?.estimated ? last.rows : 0),
      span: this.pooled.span + (last?.estimated ? spanOf(last.window) : 0),
    };
  }

  /**
   * Rows per ms: what was seen (the state's density as it remembers it), or one row when none was,
   * so that empty windows say "sparse", not "infinitely sparse".
   */
  private density(): number {
    const {rows, span} = this.basis();
    return Math.max(rows, 1) / Math.max(1, span);
  }

  /**
   * Whether windows may be planned before the current one is read, and why: "capped" when window_days
   * cut the last window (the next ones are no longer whatever comes back, so any number may be
   * planned), "density" when the density is known well (from the state, or from a window that held a
   * tenth of the target or more), else "no": each sparse window's size decides how far the next grows.
   */
  get ahead(): 'capped' | 'density' | 'no' {
    if (this.lastCapped) return 'capped';
    if (!this.informed) return 'no';
    return this.last === undefined || this.last.rows >= this.options.targetRows / 10 ? 'density' : 'no';
  }

  /** The next window from `from` (exclusive) toward `end`. */
  next(from: number, end: number): SizedWindow {
    const remaining = end - from;
    let span: number;
    let reason: string;
    if (!this.informed) {
      span = remaining <= FIRST_PROBE_MIN_MS ? remaining : Math.max(FIRST_PROBE_MIN_MS, remaining / GROWTH);
      reason =
        span >= remaining
          ? 'nothing is known of the quest yet and the span is short: one export'
          : `a first probe of 1/${GROWTH} of the ${formatDuration(remaining)} to read, as nothing is known of the quest yet`;
    } else {
      const density = this.density();
      span = this.options.targetRows / Math.max(density, Number.MIN_VALUE);
      reason = `sized for about ${plural(this.options.targetRows, 'row')} at ${amount(density * DAY_MS, 'row')} a day`;
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
          reason = `capped at ${BYTE_CEILING / 1048576} MiB (${Math.round(this.bytesPerRow)} bytes a row at ${amount(density * DAY_MS, 'row')} a day)`;
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
    this.lastCapped = this.options.maxSpanMs !== undefined && span > this.options.maxSpanMs;
    if (this.options.maxSpanMs !== undefined && span > this.options.maxSpanMs) {
      span = this.options.maxSpanMs;
      reason += `; capped at window_days (${formatDuration(this.options.maxSpanMs)})`;
    }
    // On a whole second (core/time.ts wholeSecond); the rest, when what would be left after this window is a sliver of it.
    span = Math.min(remaining, windowEnd(from, from + span) - from);
    const cap = this.options.maxSpanMs ?? Infinity;
    if (remaining <= cap && (span >= remaining || remaining - span < span / 4)) span = remaining;
    this.lastSpan = span;
    return {window: {since: from, until: from + span}, reason};
  }

  /** What an export of the quest returned (or, estimated, will return). */
  observe(observation: Observation): void {
    this.last = observation;
    if (!observation.estimated) {
      this.pooled = {rows: this.pooled.rows + observation.rows, span: this.pooled.span + spanOf(observation.window)};
    }
    if (observation.bytes !== undefined && observation.rows > 0)
      this.bytesPerRow = observation.bytes / observation.rows;
  }

  /**
   * The density to remember in the state: the one the next window is sized by (so a resume plans
   * what this sync would have planned), including a window known only by its estimated size.
   */
  hint(): DensityHint | undefined {
    const {rows, span} = this.basis();
    if (span <= 0) return undefined;
    const hint: DensityHint = {rows_per_day: Math.round((rows / span) * DAY_MS * 1000) / 1000};
    if (this.bytesPerRow !== undefined) hint.bytes_per_row = Math.round(this.bytesPerRow);
    return hint;
  }

  /**
   * A window cut into pieces of about `targetRows` each at the density seen (a window that must be
   * exported anew and that the density says is far larger than the target).
   */
  partition(window: TimeWindow): TimeWindow[] {
    const expected = this.informed ? this.density() * spanOf(window) : 0;
    const count = Math.min(LIMITS.window.maxPartitions, Math.max(1, Math.round(expected / this.options.targetRows)));
    const pieces: TimeWindow[] = [];
    let since = window.since;
    for (let i = 1; i <= count; i++) {
      const until = i === count ? window.until : wholeSecond(window.since + (spanOf(window) * i) / count);
      if (until > since) pieces.push({since, until});
      since = until;
    }
    return pieces;
  }
}
