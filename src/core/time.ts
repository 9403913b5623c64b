/** An export window: rows created after `since` (exclusive) and at or before `until` (inclusive), epoch ms. */
export interface TimeWindow {
  since: number;
  until: number;
}

const SECOND_MS = 1000;
export const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

/**
 * Parses an ISO 8601 UTC timestamp with any number of fractional digits (the service documents three
 * but has been seen sending seven); truncates to milliseconds. Returns undefined if not a UTC timestamp.
 */
export function parseUtcTimestamp(value: string): number | undefined {
  const m = /^(\d{4}-\d{2}-\d{2})(?:T(\d{2}:\d{2}(?::\d{2})?)(?:\.(\d+))?)?(Z|[+-]00:?00)?$/.exec(value.trim());
  if (!m) return undefined;
  const [, date, time, fraction, zone] = m;
  if (time && !zone) return undefined;
  const ms = (fraction ?? '').padEnd(3, '0').slice(0, 3);
  const iso = `${date}T${time ?? '00:00:00'}${time && time.length === 5 ? ':00' : ''}.${ms}Z`;
  const parsed = Date.parse(iso);
  if (Number.isNaN(parsed) || new Date(parsed).toISOString() !== iso) return undefined;
  return parsed;
}

/** The wire format: ISO 8601 UTC with exactly three fractional digits. */
export function formatUtcTimestamp(ms: number): string {
  return new Date(ms).toISOString();
}

/** start_date is inclusive for the user; since is exclusive for the service. */
export function sinceForStartDate(startMs: number): number {
  return startMs - 1;
}

export function spanOf(w: TimeWindow): number {
  return w.until - w.since;
}

/**
 * Windows end on whole seconds. The spec says the service compares milliseconds; one that cuts
 * `until` (and `since`) to whole seconds then still selects exactly the window asked for, and no
 * response falls between two windows (one created 500 ms before a window's end).
 */
export function wholeSecond(ms: number): number {
  return Math.floor(ms / SECOND_MS) * SECOND_MS;
}

/** The end of a window from `since` of about `wanted`: the whole second at or before it, and never `since` or before. */
export function windowEnd(since: number, wanted: number): number {
  const end = wholeSecond(wanted);
  return end > since ? end : wholeSecond(since) + SECOND_MS;
}

/** Whether a window can be split on a whole second (see wholeSecond): one lies strictly inside it. */
export function splittable(w: TimeWindow): boolean {
  return wholeSecond(w.since) + SECOND_MS < w.until;
}

/** Two halves that chain exactly, (since, mid] and (mid, until], `mid` on a whole second (the window must be splittable). */
export function splitWindow(w: TimeWindow): [TimeWindow, TimeWindow] {
  const mid = windowEnd(w.since, w.since + spanOf(w) / 2);
  return [
    {since: w.since, until: mid},
    {since: mid, until: w.until},
  ];
}

export function describeWindow(w: TimeWindow): string {
  return `(${formatUtcTimestamp(w.since)}, ${formatUtcTimestamp(w.until)}]`;
}

/** A span for log lines: "350 ms", "3.1 s", "4.5 min", "2.0 h", "240 d". */
export function formatDuration(ms: number): string {
  if (ms < SECOND_MS) return `${Math.round(ms)} ms`;
  if (ms < MINUTE_MS) return `${(ms / SECOND_MS).toFixed(1)} s`;
  if (ms < HOUR_MS) return `${(ms / MINUTE_MS).toFixed(1)} min`;
  if (ms < DAY_MS) return `${(ms / HOUR_MS).toFixed(1)} h`;
  const days = ms / DAY_MS;
  return `${days < 10 ? days.toFixed(1) : Math.round(days)} d`;
}
