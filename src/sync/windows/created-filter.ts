import {describeWindow, TimeWindow} from '../../core/time';
import {placeInWindow, readTimeBytes, timeShape} from '../../core/time-text';
import {cellText, decodeWtf8, QUOTE, RowBatch, selectRows} from '../../csv/rows';

/** What the Created cells of one planned window's files showed, over all its files. */
export interface CreatedTally {
  /**
   * Rows not emitted: their Created lies at or before the start of their export's window, or after its
   * end (by more than 14 h when it has no zone).
   */
  before: number;
  after: number;
  /** Rows emitted with a Created that is not a time (its field is null, see unreadableTime). */
  unreadable: number;
  /** The shape of the first such Created (timeShape: never the value). */
  example?: string;
}

export function emptyTally(): CreatedTally {
  return {before: 0, after: 0, unreadable: 0};
}

let scratch = new Uint8Array(64);

/** The farthest any time zone lies from UTC (UTC+14): a time without a zone is at most this far off. */
const ZONELESS_MARGIN_MS = 14 * 3_600_000;

const widened = (window: TimeWindow): TimeWindow => ({
  since: window.since - ZONELESS_MARGIN_MS,
  until: window.until + ZONELESS_MARGIN_MS,
});

/**
 * The rows of a file whose Created lies in the window its export asked for, and those whose Created
 * cannot be read (they cannot be placed; their records say so); the others are counted, not
 * emitted. Each row belongs to the window of its own time, so a service that ignores or widens
 * since/until cannot make a row go out twice, and the resume keys of a window hold only its rows.
 */
export function rowsInWindow(batch: RowBatch, created: number, window: TimeWindow, tally: CreatedTally): RowBatch {
  const {bytes, cells, rows, width} = batch;
  const stride = width + 1;
  let keep: Uint8Array | undefined;
  for (let r = 0; r < rows; r++) {
    let b = bytes;
    let s = cells[r * stride + created];
    let e = cells[r * stride + created + 1] - 1;
    if (e > s && bytes[s] === QUOTE) {
      if (scratch.length < e - s) scratch = new Uint8Array(2 * (e - s));
      [b, e, s] = [scratch, cellText(bytes, s, e, scratch, 0), 0];
    }
    if (e === s) continue;
    const time = readTimeBytes(b, s, e);
    if (!time) {
      if (tally.unreadable++ === 0) tally.example = timeShape(decodeWtf8(b, s, Math.min(e, s + 200)));
      continue;
    }
    // A time without a zone may be the service's local time: placed only when it lies outside the
    // window by more than any zone's offset, so that a zone the connector does not know never loses a row.
    const place = placeInWindow(time, time.zone === 'none' ? widened(window) : window);
    if (place === 0) continue;
    if (place < 0) tally.before++;
    else tally.after++;
    keep ??= new Uint8Array(rows).fill(1);
    keep[r] = 0;
  }
  return keep ? selectRows(batch, keep) : batch;
}

/** The warnings a window's tally calls for (none when every Created was a time inside its window). */
export function tallyWarnings(questId: string, window: TimeWindow, tally: CreatedTally): string[] {
  const where = describeWindow(window);
  const out: string[] = [];
  const outside = tally.before + tally.after;
  if (outside > 0) {
    out.push(
      `Quest ${questId}: the export of ${where} listed ${outside} rows whose Created lies outside the window asked for (${tally.before} at or before its start, ${tally.after} after its end); they were not emitted with it. Each row is emitted by the window of its own Created, so none is sent twice; the service's export filter did not keep to since/until.`
    );
  }
  if (tally.unreadable > 0) {
    out.push(
      `Quest ${questId}: ${tally.unreadable} rows of ${where} have a Created the connector cannot read as a time (written like \`${tally.example}\`); their records carry null there, with an entry in meta.changes (NULLED, SOURCE_SERIALIZATION_ERROR), and were emitted whatever their time. Tell Questback support the quest id and this shape.`
    );
  }
  return out;
}
