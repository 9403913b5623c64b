import {TimeWindow} from '../core/time';

/** start_date is inclusive for the user; since is exclusive for the service. */
export function sinceForStartDate(startMs: number): number {
  return startMs - 1;
}

export function spanOf(w: TimeWindow): number {
  return w.until - w.since;
}

/** Two halves that chain exactly: (since, mid] and (mid, until]. */
export function splitWindow(w: TimeWindow): [TimeWindow, TimeWindow] {
  const mid = w.since + Math.floor(spanOf(w) / 2);
  return [
    {since: w.since, until: mid},
    {since: mid, until: w.until},
  ];
}
