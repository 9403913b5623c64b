/**
 * Shapes instead of values: what the probe may put in a report about a value the service sent (a
 * time, a header, a word) without the value itself. Times are read, and shaped, by core/time-text.ts.
 */

import {outline} from '../core/time-text';

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

function typeOf(value: unknown): string {
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
