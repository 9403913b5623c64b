/** An export window: rows created after `since` (exclusive) and at or before `until` (inclusive), epoch ms. */
export interface TimeWindow {
  since: number;
  until: number;
}

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

/**
 * Splits (since, end] into consecutive windows of at most windowMs. Each window's until is the next
 * one's since, so with an exclusive since and inclusive until nothing falls between or into two.
 */
export function planWindows(since: number, end: number, windowMs: number): TimeWindow[] {
  if (!(windowMs > 0)) throw new RangeError(`window length must be positive, got ${windowMs}`);
  const windows: TimeWindow[] = [];
  for (let from = since; from < end;) {
    const until = Math.min(from + windowMs, end);
    windows.push({since: from, until});
    from = until;
  }
  return windows;
}

/** start_date is inclusive for the user; since is exclusive for the service. */
export function sinceForStartDate(startMs: number): number {
  return startMs - 1;
}

export function describeWindow(w: TimeWindow): string {
  return `(${formatUtcTimestamp(w.since)}, ${formatUtcTimestamp(w.until)}]`;
}
