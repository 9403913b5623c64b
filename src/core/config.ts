import {connectorError} from './errors';
import {SecretScrubber} from './secrets';
import {DAY_MS, parseUtcTimestamp} from './time';

/**
 * "warehouse" (default): names made from each header text alone (sync/column-names.ts), stable across
 * survey edits. "survey": the header texts as they are; long texts sharing their first 63 characters
 * clash in Postgres, which can fail Airbyte's Postgres destination.
 */
export type ColumnNames = 'warehouse' | 'survey';

/**
 * "per_quest" (default): a stream per quest, each answer column its own field. "combined": one
 * stream `responses` for every quest, the answers in one object keyed by their header texts.
 */
export type StreamLayout = 'per_quest' | 'combined';

/** The user's settings after defaults were applied and everything was validated. */
export interface QuestbackConfig {
  client_id: string;
  client_secret: string;
  project_id: string;
  api_url: string;
  auth_url: string;
  quest_ids: string[];
  start_date: string;
  target_rows_per_export: number;
  /** A cap on the length of one export window; undefined lets the windows follow the data. */
  window_days?: number;
  lookback_days: number;
  settle_seconds: number;
  max_concurrent_exports: number;
  export_timeout_minutes: number;
  request_timeout_seconds: number;
  column_names: ColumnNames;
  stream_layout: StreamLayout;
  skip_inaccessible_quests: boolean;
  accept_stray_quotes: boolean;
  value_type: string;
  expand_multiple_choice_to_columns: boolean;
  include_respondent_information: boolean;
  show_other_as_text: boolean;
  field_separator: string;
}

export const DEFAULTS = {
  project_id: '314876184947078893',
  api_url: 'https://api.questback.com',
  auth_url: 'https://auth.questback.com',
  target_rows_per_export: 100_000,
  lookback_days: 0,
  settle_seconds: 60,
  max_concurrent_exports: 8,
  export_timeout_minutes: 60,
  request_timeout_seconds: 120,
  column_names: 'warehouse',
  stream_layout: 'per_quest',
  skip_inaccessible_quests: false,
  accept_stray_quotes: false,
  value_type: 'ORDER_NUMBER',
  expand_multiple_choice_to_columns: false,
  include_respondent_information: false,
  show_other_as_text: false,
  field_separator: 'PIPE',
} as const;

/** The service's separator names and the character each one means in the CSV. */
export const SEPARATORS: Record<string, string> = {PIPE: '|', COMMA: ',', SEMICOLON: ';', TAB: '\t'};

/** Every option the spec knows; anything else in a config file is a typo or a leftover. */
export const KNOWN_OPTIONS = [
  'client_id',
  'client_secret',
  'quest_ids',
  'start_date',
  'project_id',
  'api_url',
  'auth_url',
  'target_rows_per_export',
  'window_days',
  'lookback_days',
  'settle_seconds',
  'max_concurrent_exports',
  'export_timeout_minutes',
  'request_timeout_seconds',
  'column_names',
  'stream_layout',
  'skip_inaccessible_quests',
  'accept_stray_quotes',
  'value_type',
  'expand_multiple_choice_to_columns',
  'include_respondent_information',
  'show_other_as_text',
  'field_separator',
] as const;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);
const CREDENTIALS_HINT =
  'Ask your Questback account owner or Questback support for an API login (client id and secret).';

export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK.has(hostname);
}

function fail(message: string): never {
  throw connectorError('config_error', `Invalid configuration: ${message}`);
}

/** Edit distance, for suggesting the option a misspelled key meant. */
function distance(a: string, b: string): number {
  const row = Array.from({length: b.length + 1}, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length];
}

/** The known option a key most likely meant, if any is close (case, separators and small typos). */
export function closestOption(key: string): string | undefined {
  const normal = (s: string): string => s.toLowerCase().replace(/[^a-z0-9]/g, '');
  let best: {option: string; d: number} | undefined;
  for (const option of KNOWN_OPTIONS) {
    const d = distance(normal(key), normal(option));
    if (!best || d < best.d) best = {option, d};
  }
  if (best && best.d <= Math.max(2, Math.floor(best.option.length / 4))) return best.option;
  // Else the one option that shares a word with the key (window_size -> window_days).
  const words = (s: string): string[] =>
    s
      .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
      .toLowerCase()
      .split(/[^a-z0-9]+/)
      .filter((w) => w.length >= 4);
  const keyWords = new Set(words(key));
  const sharing = KNOWN_OPTIONS.filter((option) => words(option).some((w) => keyWords.has(w)));
  return sharing.length === 1 ? sharing[0] : undefined;
}

interface Reader {
  raw: Record<string, unknown>;
  unknown: string[];
}

function suggestionFor(reader: Reader, key: string): string {
  const typo = reader.unknown.find((k) => closestOption(k) === key);
  return typo ? ` The config has '${typo}': rename it to '${key}'.` : '';
}

function requiredString(reader: Reader, key: string, hint: string): string {
  const value = reader.raw[key];
  if (value === undefined || value === null || value === '')
    fail(`'${key}' is required.${suggestionFor(reader, key)} ${hint}`);
  if (typeof value !== 'string') fail(`'${key}' must be a string, got ${typeof value}.`);
  if (value.trim() === '') fail(`'${key}' is empty. ${hint}`);
  return value.trim();
}

function optional<T>(reader: Reader, key: string, fallback: T, check: (v: unknown) => v is T, expected: string): T {
  const value = reader.raw[key];
  if (value === undefined || value === null || value === '') return fallback;
  if (!check(value)) fail(`'${key}' must be ${expected}, got ${JSON.stringify(value)}.`);
  return value;
}

const isBool = (v: unknown): v is boolean => typeof v === 'boolean';
const isString = (v: unknown): v is string => typeof v === 'string';
function isNumberIn(min: number, max: number) {
  return (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= min && v <= max;
}
function isIntIn(min: number, max: number) {
  return (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;
}

/**
 * A base URL, normalised: no trailing slash, and without the path the connector adds itself (a
 * pasted `…/v1` or token address would otherwise be doubled), which is said in a warning.
 */
function baseUrl(reader: Reader, key: 'api_url' | 'auth_url', warnings: string[]): string {
  const value = optional(reader, key, DEFAULTS[key], isString, 'a URL');
  // Echoed without anything that may be credentials: user info ("user:pass@") is cut.
  const shown = withoutUserInfo(value);
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return fail(`'${key}' is not a valid URL: ${JSON.stringify(shown)}. Use the base address, e.g. ${DEFAULTS[key]}.`);
  }
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    fail(`'${key}' must use https:// (plain http:// is accepted for localhost only, for testing): ${shown}.`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') fail(`'${key}' must be an https:// URL: ${shown}.`);
  if (url.search || url.hash || url.username || url.password) {
    fail(`'${key}' must be a plain base URL without credentials, query or fragment, e.g. ${DEFAULTS[key]}.`);
  }
  let text = url.toString().replace(/\/+$/, '');
  const added = key === 'api_url' ? /\/v1$/i : /\/oauth\/v2(\/token)?$/i;
  if (added.test(text)) {
    const trimmed = text.replace(added, '');
    warnings.push(
      `'${key}' ends with the path the connector adds itself; using ${trimmed} (set '${key}' to that to silence this warning).`
    );
    text = trimmed;
  }
  return text;
}

function questIds(reader: Reader): string[] {
  const value = reader.raw.quest_ids;
  const hint =
    'List the ids of the quests to export: the UUID in the quest address in Questback, e.g. 1b4e28ba-2fa1-11d2-883f-0016d3cca427.';
  if (value === undefined || value === null)
    fail(`'quest_ids' is required.${suggestionFor(reader, 'quest_ids')} ${hint}`);
  if (!Array.isArray(value)) fail(`'quest_ids' must be a list of quest ids. ${hint}`);
  if (value.length === 0) fail(`'quest_ids' must name at least one quest. ${hint}`);
  const seen = new Set<string>();
  return value.map((id, i) => {
    if (typeof id !== 'string' || !UUID.test(id.trim())) {
      fail(`quest_ids[${i}] is ${JSON.stringify(id)}, which is not a quest id. ${hint}`);
    }
    const normal = id.trim().toLowerCase();
    if (seen.has(normal)) fail(`quest id ${normal} is listed twice in 'quest_ids'; list each quest once.`);
    seen.add(normal);
    return normal;
  });
}

function startDate(reader: Reader, nowMs: number): string {
  const example = `e.g. ${new Date(nowMs - 365 * DAY_MS).toISOString().slice(0, 10)}T00:00:00Z`;
  const value = requiredString(
    reader,
    'start_date',
    `Give the UTC date-time from which to export responses, ${example}.`
  );
  const ms = parseUtcTimestamp(value);
  if (ms === undefined) {
    fail(`'start_date' must be an ISO 8601 UTC date-time like 2024-01-01T00:00:00Z, got ${JSON.stringify(value)}.`);
  }
  if (ms > nowMs) {
    fail(
      `'start_date' ${value} lies in the future, and the service rejects future time filters. Set it to the first day whose responses you want (today or earlier, UTC), ${example}.`
    );
  }
  return new Date(ms).toISOString();
}

function enumValue(reader: Reader, key: 'value_type' | 'field_separator'): string {
  const value = optional(reader, key, DEFAULTS[key], isString, 'a string');
  if (!/^[A-Z_]+$/.test(value.trim())) {
    fail(`'${key}' must be an upper-case option name like ${DEFAULTS[key]}, got ${JSON.stringify(value)}.`);
  }
  return value.trim();
}

function streamLayout(reader: Reader): StreamLayout {
  const value = optional(reader, 'stream_layout', DEFAULTS.stream_layout, isString, 'a string');
  if (value !== 'per_quest' && value !== 'combined') {
    fail(`'stream_layout' must be "per_quest" or "combined", got ${JSON.stringify(value)}.`);
  }
  return value;
}

function columnNames(reader: Reader): ColumnNames {
  const value = optional(reader, 'column_names', DEFAULTS.column_names, isString, 'a string');
  if (value !== 'warehouse' && value !== 'survey') {
    fail(`'column_names' must be "warehouse" or "survey", got ${JSON.stringify(value)}.`);
  }
  return value;
}

export interface ParsedConfig {
  config: QuestbackConfig;
  /** What the user should hear about although the config is valid (typos, normalised URLs). */
  warnings: string[];
}

/** A URL setting as a message may show it: everything up to its last '@' (user info, a password with '/') is cut. */
function withoutUserInfo(value: string): string {
  return value.replace(/^([^@]*?\/\/)?.*@/s, (_, scheme: string | undefined) => `${scheme ?? ''}…@`);
}

/**
 * Validates the raw config file and applies defaults; throws a config_error naming the field and what
 * to do. Its messages never carry the client secret, in any form, even when it was pasted into
 * another setting and validation fails before the secret is known to the output's scrubber.
 */
export function parseConfig(input: unknown, nowMs: number): ParsedConfig {
  try {
    return parseValidated(input, nowMs);
  } catch (err) {
    const raw = (input ?? {}) as Record<string, unknown>;
    const scrubber = new SecretScrubber();
    for (const secret of [raw.client_secret, String(raw.client_secret ?? '').trim()]) {
      if (typeof secret === 'string')
        scrubber.add(secret, typeof raw.client_id === 'string' ? raw.client_id : undefined);
    }
    const message = err instanceof Error ? err.message : String(err);
    // A new error: the stack trace of the first would carry the message as it was.
    throw connectorError('config_error', scrubber.scrub(message));
  }
}

function parseValidated(input: unknown, nowMs: number): ParsedConfig {
  if (!input || typeof input !== 'object' || Array.isArray(input)) fail('the config must be a JSON object.');
  const raw = input as Record<string, unknown>;
  const known = new Set<string>(KNOWN_OPTIONS);
  const reader: Reader = {raw, unknown: Object.keys(raw).filter((k) => !known.has(k))};
  const warnings = reader.unknown.map((key) => {
    const guess = closestOption(key);
    return `Unknown option '${key}' is ignored${guess ? `: did you mean '${guess}'?` : '.'}`;
  });
  const projectId = optional(reader, 'project_id', DEFAULTS.project_id, isString, 'a string of digits');
  if (!/^\d+$/.test(projectId.trim())) {
    fail(
      `'project_id' must be digits only (the identity provider's project id), got ${JSON.stringify(projectId)}. Leave it empty for Questback's default ${DEFAULTS.project_id}.`
    );
  }
  const separator = enumValue(reader, 'field_separator');
  if (!(separator in SEPARATORS)) {
    fail(`'field_separator' must be one of ${Object.keys(SEPARATORS).join(', ')}, got ${JSON.stringify(separator)}.`);
  }
  const config: QuestbackConfig = {
    client_id: requiredString(reader, 'client_id', CREDENTIALS_HINT),
    client_secret: requiredString(reader, 'client_secret', CREDENTIALS_HINT),
    project_id: projectId.trim(),
    api_url: baseUrl(reader, 'api_url', warnings),
    auth_url: baseUrl(reader, 'auth_url', warnings),
    quest_ids: questIds(reader),
    start_date: startDate(reader, nowMs),
    target_rows_per_export: optional(
      reader,
      'target_rows_per_export',
      DEFAULTS.target_rows_per_export,
      isIntIn(100, 10_000_000),
      'a whole number of rows from 100 to 10000000'
    ),
    window_days: optional<number | undefined>(
      reader,
      'window_days',
      undefined,
      isIntIn(1, 3650),
      'a whole number of days from 1 to 3650 (or left out, so that windows follow the data)'
    ),
    lookback_days: optional(
      reader,
      'lookback_days',
      DEFAULTS.lookback_days,
      isNumberIn(0, 90),
      'a number of days from 0 to 90'
    ),
    settle_seconds: optional(
      reader,
      'settle_seconds',
      DEFAULTS.settle_seconds,
      isIntIn(0, 86_400),
      'a whole number of seconds from 0 to 86400'
    ),
    max_concurrent_exports: optional(
      reader,
      'max_concurrent_exports',
      DEFAULTS.max_concurrent_exports,
      isIntIn(1, 32),
      'a whole number from 1 to 32'
    ),
    export_timeout_minutes: optional(
      reader,
      'export_timeout_minutes',
      DEFAULTS.export_timeout_minutes,
      isNumberIn(0.05, 1440),
      'a number of minutes from 0.05 to 1440'
    ),
    request_timeout_seconds: optional(
      reader,
      'request_timeout_seconds',
      DEFAULTS.request_timeout_seconds,
      isIntIn(1, 3600),
      'a whole number of seconds from 1 to 3600'
    ),
    column_names: columnNames(reader),
    stream_layout: streamLayout(reader),
    skip_inaccessible_quests: optional(
      reader,
      'skip_inaccessible_quests',
      DEFAULTS.skip_inaccessible_quests,
      isBool,
      'true or false'
    ),
    accept_stray_quotes: optional(reader, 'accept_stray_quotes', DEFAULTS.accept_stray_quotes, isBool, 'true or false'),
    value_type: enumValue(reader, 'value_type'),
    expand_multiple_choice_to_columns: optional(
      reader,
      'expand_multiple_choice_to_columns',
      DEFAULTS.expand_multiple_choice_to_columns,
      isBool,
      'true or false'
    ),
    include_respondent_information: optional(
      reader,
      'include_respondent_information',
      DEFAULTS.include_respondent_information,
      isBool,
      'true or false'
    ),
    show_other_as_text: optional(reader, 'show_other_as_text', DEFAULTS.show_other_as_text, isBool, 'true or false'),
    field_separator: separator,
  };
  return {config, warnings};
}

/** The OAuth scope the identity provider (ZITADEL) expects for the project. */
export function scopeFor(projectId: string): string {
  return `urn:zitadel:iam:org:project:id:${projectId}:aud`;
}
