// Validation of request inputs shared by several endpoints: ISO timestamps, since/until windows,
// skip/take paging and the create-export body.

import {checkSettings, FieldErrors, ResolvedSettings} from './settings';

// Date, time, optional fraction of any length, and a UTC designator (Z or a zero offset).
const ISO_UTC = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|[+-]00:?00)$/;

/**
 * Parses an ISO 8601 UTC timestamp into epoch milliseconds, truncating digits beyond the
 * millisecond. Truncation keeps comparisons exact: rows have whole-millisecond times, so
 * `row > since` and `row <= until` give the same answer for the truncated and the exact value.
 */
export function parseIsoUtc(text: string): number | undefined {
  const m = ISO_UTC.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, frac] = m;
  const ms = frac ? Number(frac.slice(0, 3).padEnd(3, '0')) : 0;
  const t = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), ms);
  // Date.UTC silently rolls over (Feb 30 -> Mar 2); reject such values.
  const back = new Date(t);
  if (
    back.getUTCFullYear() !== Number(y) ||
    back.getUTCMonth() !== Number(mo) - 1 ||
    back.getUTCDate() !== Number(d) ||
    back.getUTCHours() !== Number(h) ||
    back.getUTCMinutes() !== Number(mi) ||
    back.getUTCSeconds() !== Number(s)
  ) {
    return undefined;
  }
  return t;
}

function addError(errors: FieldErrors, field: string, message: string): void {
  (errors[field] ??= []).push(message);
}

export interface TimeWindow {
  since?: number;
  until?: number;
}

/** Validates since/until values (strings or absent); `prefix` is "filter." for the export body. */
export function checkWindow(
  since: unknown,
  until: unknown,
  now: number,
  prefix: string,
  errors: FieldErrors
): TimeWindow {
  const window: TimeWindow = {};
  const one = (name: 'since' | 'until', value: unknown): number | undefined => {
    if (value === undefined || value === null) return undefined;
    const field = prefix + name;
    if (typeof value !== 'string') {
      addError(errors, field, `${name} must be an ISO 8601 UTC timestamp string`);
      return undefined;
    }
    const t = parseIsoUtc(value);
    if (t === undefined) {
      addError(errors, field, `'${value}' is not a valid ISO 8601 UTC timestamp (yyyy-MM-ddTHH:mm:ss.fffZ)`);
      return undefined;
    }
    if (t > now) {
      addError(errors, field, `${name} must not lie in the future`);
      return undefined;
    }
    return t;
  };
  window.since = one('since', since);
  window.until = one('until', until);
  if (window.since !== undefined && window.until !== undefined && window.since > window.until) {
    addError(errors, prefix + 'since', 'since must not be later than until');
  }
  return window;
}

export const MAX_TAKE = 1000;
export const DEFAULT_TAKE = 100;

/** Validates skip/take query parameters. */
export function checkPaging(
  skipText: string | null,
  takeText: string | null,
  errors: FieldErrors
): {skip: number; take: number} {
  const one = (name: string, text: string | null, fallback: number, max?: number): number => {
    if (text === null || text === '') return fallback;
    if (!/^[+-]?\d+$/.test(text)) {
      addError(errors, name, `The value '${text}' is not valid for ${name}`);
      return fallback;
    }
    const n = Number(text);
    if (n < 0) addError(errors, name, `${name} must be greater than or equal to 0`);
    else if (max !== undefined && n > max) addError(errors, name, `${name} must be between 0 and ${max}`);
    return n;
  };
  return {
    skip: one('skip', skipText, 0),
    take: one('take', takeText, DEFAULT_TAKE, MAX_TAKE),
  };
}

export interface ExportRequest {
  settings: ResolvedSettings;
  window: TimeWindow;
}

/** Validates a parsed create-export body. */
export function checkExportRequest(
  body: unknown,
  languages: readonly string[],
  now: number
): {errors: FieldErrors} | {request: ExportRequest} {
  const errors: FieldErrors = {};
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    addError(errors, '$', 'The request body must be a JSON object with settings and filter');
    return {errors};
  }
  const b = body as Record<string, unknown>;
  const checked = checkSettings(b.settings, languages);
  if ('errors' in checked) Object.assign(errors, checked.errors);

  let window: TimeWindow = {};
  const filter = b.filter;
  if (filter !== undefined && filter !== null) {
    if (typeof filter !== 'object' || Array.isArray(filter)) {
      addError(errors, 'filter', 'filter must be a JSON object');
    } else {
      const f = filter as Record<string, unknown>;
      window = checkWindow(f.since, f.until, now, 'filter.', errors);
    }
  }
  if (Object.keys(errors).length > 0 || 'errors' in checked) return {errors};
  return {request: {settings: checked.settings, window}};
}
