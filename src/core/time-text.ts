import {TimeWindow} from './time';

/**
 * Times as the service writes them (the `Created` cells, status times), read by one lenient
 * grammar: the probe reports their shapes, a read keeps the rows of its window by them and writes
 * them as RFC 3339. A time is `yyyy-MM-dd`, `T` or a space, `HH:mm`, optionally `:ss` and a
 * fraction of any number of digits (after `.` or `,`), then optionally `Z` or an offset `±hh:mm` or
 * `±hhmm`; spaces around it are ignored. Without a zone it is read as UTC, as the API's times are
 * (export-api-spec.md). Anything else is not a time: the docs' own examples break their rule
 * (seven fractional digits, `2025-04-07T12Z`), so what can be read unambiguously is, and nothing is guessed.
 */
export interface ReadTime {
  /** Epoch ms, the digits beyond the millisecond cut off, the zone applied. */
  ms: number;
  /** Digits beyond the millisecond that are not all zero: the time lies after `ms`. */
  beyondMs: boolean;
  zone: 'utc' | 'offset' | 'none';
  /** Fractional digits written. */
  digits: number;
}

/** A time as read, and how it was written. */
interface Parsed extends ReadTime {
  /** The date and time separator as written (`T`, `t` or a space), its byte. */
  sep: number;
  seconds: boolean;
  /** Where the fractional digits begin. */
  fraction: number;
  zoneShape: '' | 'Z' | '+hh:mm' | '+hhmm';
  /** White space (spaces, tabs) was trimmed around the time. */
  padded: boolean;
}

const SPACE = 32;
const TAB = 9;

function two(b: Uint8Array, i: number): number {
  const hi = b[i] - 48;
  const lo = b[i + 1] - 48;
  return hi >= 0 && hi <= 9 && lo >= 0 && lo <= 9 ? hi * 10 + lo : -1;
}

function daysIn(year: number, month: number): number {
  return month === 2
    ? year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
      ? 29
      : 28
    : 30 + ((month + (month >> 3)) & 1);
}

/** Days since 1970-01-01 of a civil date (Howard Hinnant's days_from_civil): integer arithmetic, no Date. */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/** Filled by parse: a row's time costs no object. */
const parsed: Parsed = {
  ms: 0,
  beyondMs: false,
  zone: 'none',
  digits: 0,
  sep: 84,
  seconds: false,
  fraction: 0,
  zoneShape: '',
  padded: false,
};

/**
 * The time b[s, e) as written in UTF-8 (or any ASCII-compatible bytes), in `parsed` (valid until
 * the next call), or undefined when it is not one.
 */
function parse(b: Uint8Array, start: number, end: number): Parsed | undefined {
  let s = start;
  let e = end;
  while (s < e && (b[s] === SPACE || b[s] === TAB)) s++;
  while (e > s && (b[e - 1] === SPACE || b[e - 1] === TAB)) e--;
  if (e - s < 16 || b[s + 4] !== 45 || b[s + 7] !== 45 || b[s + 13] !== 58) return undefined;
  const century = two(b, s);
  const yy = two(b, s + 2);
  const month = two(b, s + 5);
  const day = two(b, s + 8);
  const sepByte = b[s + 10];
  const hour = two(b, s + 11);
  const minute = two(b, s + 14);
  if (century < 0 || yy < 0 || (sepByte !== 84 && sepByte !== 116 && sepByte !== SPACE)) return undefined;
  const year = century * 100 + yy;
  if (year < 1000 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined;
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59) return undefined;
  let p = s + 16;
  let second = 0;
  let seconds = false;
  let fraction = p;
  let digits = 0;
  if (p < e && b[p] === 58) {
    second = two(b, p + 1);
    if (second < 0 || second > 59 || p + 3 > e) return undefined;
    seconds = true;
    p += 3;
    if (p < e && (b[p] === 46 || b[p] === 44)) {
      fraction = ++p;
      while (p < e && b[p] >= 48 && b[p] <= 57) p++;
      digits = p - fraction;
      if (digits === 0) return undefined;
    }
  }
  let zone: ReadTime['zone'] = 'none';
  let zoneShape: Parsed['zoneShape'] = '';
  let offsetMinutes = 0;
  if (p < e) {
    const c = b[p];
    if ((c === 90 || c === 122) && p + 1 === e) {
      zone = 'utc';
      zoneShape = 'Z';
      p++;
    } else if (c === 43 || c === 45) {
      const colon = b[p + 3] === 58;
      if (e - p !== (colon ? 6 : 5)) return undefined;
      const oh = two(b, p + 1);
      const om = two(b, p + (colon ? 4 : 3));
      if (oh < 0 || oh > 23 || om < 0 || om > 59) return undefined;
      offsetMinutes = (c === 45 ? -1 : 1) * (oh * 60 + om);
      zone = offsetMinutes === 0 ? 'utc' : 'offset';
      zoneShape = colon ? '+hh:mm' : '+hhmm';
      p = e;
    } else {
      return undefined;
    }
  }
  let milli = 0;
  let beyondMs = false;
  for (let i = 0; i < digits; i++) {
    const d = b[fraction + i] - 48;
    if (i < 3) milli = milli * 10 + d;
    else if (d !== 0) beyondMs = true;
  }
  for (let i = digits; i < 3; i++) milli *= 10;
  const t = parsed;
  t.ms =
    daysFromCivil(year, month, day) * 86_400_000 + ((hour * 60 + minute - offsetMinutes) * 60 + second) * 1000 + milli;
  t.beyondMs = beyondMs;
  t.zone = zone;
  t.digits = digits;
  t.sep = sepByte;
  t.seconds = seconds;
  t.fraction = fraction;
  t.zoneShape = zoneShape;
  t.padded = s !== start || e !== end;
  return t;
}

/**
 * The time b[s, e), or undefined when it is not one (see ReadTime for the grammar). The object is
 * the reader's own, valid until its next call: a row's time costs no allocation.
 */
export function readTimeBytes(b: Uint8Array, s: number, e: number): Readonly<ReadTime> | undefined {
  return parse(b, s, e);
}

export function readTime(text: string): ReadTime | undefined {
  const b = Buffer.from(text, 'utf8');
  const t = parse(b, 0, b.length);
  return t && {ms: t.ms, beyondMs: t.beyondMs, zone: t.zone, digits: t.digits};
}

/** The most bytes writeRfc3339 writes for a time of `length` bytes. */
function rfc3339Bytes(length: number): number {
  return length + 4;
}

function put2(out: Uint8Array, o: number, v: number): void {
  out[o] = 48 + ((v / 10) | 0);
  out[o + 1] = 48 + (v % 10);
}

/**
 * Writes the time b[s, e) at out[o] as RFC 3339 in UTC, `yyyy-MM-ddTHH:mm:ss[.f…]Z`, with the
 * fractional digits as written (none when none were); returns where it ends, or -1 when b[s, e) is
 * not a time. Writes at most rfc3339Bytes(e - s) bytes.
 */
export function writeRfc3339(b: Uint8Array, s: number, e: number, out: Uint8Array, o: number): number {
  const t = parse(b, s, e);
  if (!t) return -1;
  if (
    t.zone !== 'offset' &&
    t.seconds &&
    t.sep === 84 &&
    b[e - 1] === 90 &&
    !t.padded &&
    (t.digits === 0 || b[t.fraction - 1] === 46)
  ) {
    // Written as RFC 3339 in UTC already (the service's own form): copied as it is (a loop: a view costs more).
    for (let i = s; i < e; i++) out[o++] = b[i];
    return o;
  }
  // The civil date of the day (Howard Hinnant's days_from_civil, inverted): no Date per row.
  const secs = Math.floor(t.ms / 1000);
  const days = Math.floor(secs / 86400);
  const inDay = secs - days * 86400;
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  put2(out, o, Math.floor(year / 100));
  put2(out, o + 2, year % 100);
  out[o + 4] = 45;
  put2(out, o + 5, month);
  out[o + 7] = 45;
  put2(out, o + 8, day);
  out[o + 10] = 84;
  put2(out, o + 11, Math.floor(inDay / 3600));
  out[o + 13] = 58;
  put2(out, o + 14, Math.floor(inDay / 60) % 60);
  out[o + 16] = 58;
  put2(out, o + 17, inDay % 60);
  let at = o + 19;
  if (t.digits > 0) {
    out[at++] = 46;
    for (let i = 0; i < t.digits; i++) out[at++] = b[t.fraction + i];
  }
  out[at++] = 90;
  return at;
}

/** The text as RFC 3339 in UTC (see writeRfc3339), or undefined when it is not a time. */
export function rfc3339(text: string): string | undefined {
  const b = Buffer.from(text, 'utf8');
  const out = Buffer.alloc(rfc3339Bytes(b.length));
  const end = writeRfc3339(b, 0, b.length, out, 0);
  return end < 0 ? undefined : out.toString('latin1', 0, end);
}

/**
 * The pattern of a time as written, e.g. `yyyy-MM-ddTHH:mm:ss.fffZ` or `yyyy-MM-dd HH:mm:ss+hh:mm`;
 * for any other text its outline, digits as 9 and letters as a (`99.99.9999 99:99`), at most 40 characters.
 */
export function timeShape(text: string): string {
  const b = Buffer.from(text, 'utf8');
  const t = parse(b, 0, b.length);
  if (!t) return outline(text);
  return `yyyy-MM-dd${String.fromCharCode(t.sep)}HH:mm${t.seconds ? ':ss' : ''}${t.digits ? `.${'f'.repeat(t.digits)}` : ''}${t.zoneShape}`;
}

/** The outline of a text: its punctuation kept, digits as 9 and letters as a, at most 40 characters. */
export function outline(text: string): string {
  if (text === '') return '(empty)';
  const shape = text
    .slice(0, 40)
    .replace(/\p{Nd}/gu, '9')
    .replace(/\p{L}/gu, 'a');
  return text.length > 40 ? `${shape}… (${text.length} characters)` : shape;
}

/** Where a time lies against a window (since, until]: before it (-1), in it (0) or after it (1). */
export function placeInWindow(time: ReadTime, window: TimeWindow): -1 | 0 | 1 {
  const afterSince = time.ms > window.since || (time.ms === window.since && time.beyondMs);
  if (!afterSince) return -1;
  const atOrBeforeUntil = time.ms < window.until || (time.ms === window.until && !time.beyondMs);
  return atOrBeforeUntil ? 0 : 1;
}
