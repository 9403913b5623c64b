/**
 * Shapes instead of values: what the probe may put in a report about a value the service sent (a
 * time, a header, a word) without the value itself.
 */

/** A time the service wrote, read leniently: any precision, a zone, an offset, or none. */
export interface ReadTime {
  /** Epoch ms, the digits beyond the millisecond cut off; with no zone, read as UTC. */
  ms: number;
  /** Digits beyond the millisecond that are not all zero: the time lies after `ms`. */
  beyondMs: boolean;
  zone: 'utc' | 'offset' | 'none';
  /** Fractional digits written. */
  digits: number;
}

const TIME = /^(\d{4})-(\d{2})-(\d{2})([T ])(\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/** A time like 2026-01-02T03:04:05.6789+02:00, or undefined when the text is not such a time. */
export function readTime(text: string): ReadTime | undefined {
  const m = TIME.exec(text.trim());
  if (!m) return undefined;
  const [, y, mo, d, , h, mi, s = '0', fraction = '', zone] = m;
  let ms = Date.UTC(+y, +mo - 1, +d, +h, +mi, +s, Number(fraction.slice(0, 3).padEnd(3, '0')));
  if (Number.isNaN(ms) || new Date(ms).getUTCDate() !== +d) return undefined;
  let kind: ReadTime['zone'] = 'none';
  if (zone) {
    const offset = /^[+-](\d{2}):?(\d{2})$/.exec(zone);
    const minutes = offset ? Number(offset[1]) * 60 + Number(offset[2]) : 0;
    kind = minutes === 0 ? 'utc' : 'offset';
    ms -= (zone.startsWith('-') ? -1 : 1) * minutes * 60_000;
  }
  return {ms, beyondMs: /[1-9]/.test(fraction.slice(3)), zone: kind, digits: fraction.length};
}

/**
 * The pattern of a time as written, e.g. `yyyy-MM-ddTHH:mm:ss.fffZ` or `yyyy-MM-dd HH:mm:ss+hh:mm`;
 * for any other text its outline, digits as 9 and letters as a (`99.99.9999 99:99`), at most 40 characters.
 */
export function timeShape(text: string): string {
  const m = TIME.exec(text.trim());
  if (!m) return outline(text);
  const [, , , , sep, , , seconds, fraction, zone] = m;
  const zoneShape = !zone ? '' : zone.toUpperCase() === 'Z' ? 'Z' : zone.includes(':') ? '+hh:mm' : '+hhmm';
  return `yyyy-MM-dd${sep}HH:mm${seconds === undefined ? '' : ':ss'}${fraction ? `.${'f'.repeat(fraction.length)}` : ''}${zoneShape}`;
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

/**
 * A short word of the service's vocabulary (a status, a token type, a member name) as is: letters,
 * spaces, _ and - only, so that nothing like a token or an id passes; anything else by its outline.
 */
export function word(value: unknown): string {
  if (typeof value !== 'string') return value === undefined ? '(none)' : `a ${typeOf(value)}`;
  return /^[A-Za-z][A-Za-z _-]{0,31}$/.test(value) ? value : `a text shaped ${outline(value)}`;
}

/** A media type (`text/csv`) as is, its parameters left out; anything else by its outline. */
export function mediaType(value: string | undefined): string {
  if (value === undefined) return '(none)';
  const type = value.split(';')[0].trim();
  const shown = /^[A-Za-z]+\/[A-Za-z0-9.+-]{1,40}$/.test(type) ? type : `a text shaped ${outline(type)}`;
  return value.includes(';') ? `${shown}; …` : shown;
}

/** JSON types of a value's members: `exportId (string), message (string)`. */
export function memberShapes(value: unknown): string {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return `a JSON ${typeOf(value)}`;
  const members = Object.entries(value as Record<string, unknown>).map(([key, v]) => `${word(key)} (${typeOf(v)})`);
  return members.length ? members.join(', ') : 'an empty JSON object';
}

export function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'list';
  return typeof value === 'object' ? 'object' : typeof value;
}

/** Counts of each shape, most frequent first: `yyyy-MM-ddTHH:mm:ss.fffZ ×12, (empty) ×1`. */
export function tally(counts: ReadonlyMap<string, number>): string {
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([shape, n]) => `\`${shape}\` ×${n}`)
    .join(', ');
}
