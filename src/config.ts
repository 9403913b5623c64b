import {connectorError} from './errors';
import {parseUtcTimestamp} from './windows';

/** The user's settings after defaults were applied and everything was validated. */
export interface QuestbackConfig {
  client_id: string;
  client_secret: string;
  project_id: string;
  api_url: string;
  auth_url: string;
  quest_ids: string[];
  start_date: string;
  window_days: number;
  settle_seconds: number;
  max_concurrent_exports: number;
  export_timeout_minutes: number;
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
  window_days: 30,
  settle_seconds: 60,
  max_concurrent_exports: 8,
  export_timeout_minutes: 60,
  value_type: 'ORDER_NUMBER',
  expand_multiple_choice_to_columns: false,
  include_respondent_information: false,
  show_other_as_text: false,
  field_separator: 'PIPE',
} as const;

/** The service's separator names and the character each one means in the CSV. */
export const SEPARATORS: Record<string, string> = {PIPE: '|', COMMA: ',', SEMICOLON: ';', TAB: '\t'};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

function fail(message: string): never {
  throw connectorError('config_error', `Invalid configuration: ${message}`);
}

function requiredString(raw: Record<string, unknown>, key: string, hint: string): string {
  const value = raw[key];
  if (value === undefined || value === null || value === '') fail(`'${key}' is required. ${hint}`);
  if (typeof value !== 'string') fail(`'${key}' must be a string, got ${typeof value}.`);
  if (value.trim() === '') fail(`'${key}' is empty. ${hint}`);
  return value.trim();
}

function optional<T>(
  raw: Record<string, unknown>,
  key: string,
  fallback: T,
  check: (v: unknown) => v is T,
  expected: string
): T {
  const value = raw[key];
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

function baseUrl(raw: Record<string, unknown>, key: 'api_url' | 'auth_url'): string {
  const value = optional(raw, key, DEFAULTS[key], isString, 'a URL');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return fail(`'${key}' is not a valid URL: ${JSON.stringify(value)}.`);
  }
  if (url.protocol === 'http:' && !LOOPBACK.has(url.hostname)) {
    fail(`'${key}' must use https:// (plain http:// is accepted for localhost only, for testing): ${value}.`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') fail(`'${key}' must be an https:// URL: ${value}.`);
  if (url.search || url.hash || url.username || url.password) {
    fail(`'${key}' must be a plain base URL without credentials, query or fragment.`);
  }
  return url.toString().replace(/\/+$/, '');
}

function questIds(raw: Record<string, unknown>): string[] {
  const value = raw.quest_ids;
  const hint = 'List the ids (UUIDs) of the quests to export; they are in the quest URL in Questback.';
  if (value === undefined || value === null) fail(`'quest_ids' is required. ${hint}`);
  if (!Array.isArray(value)) fail(`'quest_ids' must be a list of quest ids. ${hint}`);
  if (value.length === 0) fail(`'quest_ids' must name at least one quest. ${hint}`);
  const seen = new Set<string>();
  return value.map((id, i) => {
    if (typeof id !== 'string' || !UUID.test(id.trim())) {
      fail(
        `quest_ids[${i}] is not a quest id (a UUID like 1b4e28ba-2fa1-11d2-883f-0016d3cca427): ${JSON.stringify(id)}.`
      );
    }
    const normal = id.trim().toLowerCase();
    if (seen.has(normal)) fail(`quest id ${normal} is listed twice in 'quest_ids'.`);
    seen.add(normal);
    return normal;
  });
}

function startDate(raw: Record<string, unknown>, nowMs: number): string {
  const value = requiredString(
    raw,
    'start_date',
    'Give the UTC date from which to export responses, e.g. 2024-01-01T00:00:00Z.'
  );
  const ms = parseUtcTimestamp(value);
  if (ms === undefined)
    fail(`'start_date' must be an ISO 8601 UTC date-time like 2024-01-01T00:00:00Z, got ${JSON.stringify(value)}.`);
  if (ms > nowMs) fail(`'start_date' ${value} lies in the future; the service rejects future time filters.`);
  return new Date(ms).toISOString();
}

function enumValue(raw: Record<string, unknown>, key: 'value_type' | 'field_separator'): string {
  const value = optional(raw, key, DEFAULTS[key], isString, 'a string');
  if (!/^[A-Z_]+$/.test(value.trim()))
    fail(`'${key}' must be an upper-case option name like ${DEFAULTS[key]}, got ${JSON.stringify(value)}.`);
  return value.trim();
}

/** Validates the raw config file and applies defaults; throws a config_error naming the field. */
export function parseConfig(input: unknown, nowMs: number): QuestbackConfig {
  if (!input || typeof input !== 'object' || Array.isArray(input)) fail('the config must be a JSON object.');
  const raw = input as Record<string, unknown>;
  const projectId = optional(raw, 'project_id', DEFAULTS.project_id, isString, 'a string of digits');
  if (!/^\d+$/.test(projectId.trim()))
    fail(`'project_id' must be digits only (the identity provider's project id), got ${JSON.stringify(projectId)}.`);
  const separator = enumValue(raw, 'field_separator');
  if (!(separator in SEPARATORS))
    fail(`'field_separator' must be one of ${Object.keys(SEPARATORS).join(', ')}, got ${JSON.stringify(separator)}.`);
  return {
    client_id: requiredString(
      raw,
      'client_id',
      'Ask your Questback account owner or support for API client credentials.'
    ),
    client_secret: requiredString(
      raw,
      'client_secret',
      'Ask your Questback account owner or support for API client credentials.'
    ),
    project_id: projectId.trim(),
    api_url: baseUrl(raw, 'api_url'),
    auth_url: baseUrl(raw, 'auth_url'),
    quest_ids: questIds(raw),
    start_date: startDate(raw, nowMs),
    window_days: optional(
      raw,
      'window_days',
      DEFAULTS.window_days,
      isIntIn(1, 3650),
      'a whole number of days from 1 to 3650'
    ),
    settle_seconds: optional(
      raw,
      'settle_seconds',
      DEFAULTS.settle_seconds,
      isIntIn(0, 86_400),
      'a whole number of seconds from 0 to 86400'
    ),
    max_concurrent_exports: optional(
      raw,
      'max_concurrent_exports',
      DEFAULTS.max_concurrent_exports,
      isIntIn(1, 32),
      'a whole number from 1 to 32'
    ),
    export_timeout_minutes: optional(
      raw,
      'export_timeout_minutes',
      DEFAULTS.export_timeout_minutes,
      isNumberIn(0.05, 1440),
      'a number of minutes from 0.05 to 1440'
    ),
    value_type: enumValue(raw, 'value_type'),
    expand_multiple_choice_to_columns: optional(
      raw,
      'expand_multiple_choice_to_columns',
      DEFAULTS.expand_multiple_choice_to_columns,
      isBool,
      'true or false'
    ),
    include_respondent_information: optional(
      raw,
      'include_respondent_information',
      DEFAULTS.include_respondent_information,
      isBool,
      'true or false'
    ),
    show_other_as_text: optional(raw, 'show_other_as_text', DEFAULTS.show_other_as_text, isBool, 'true or false'),
    field_separator: separator,
  };
}

/** The OAuth scope the identity provider (ZITADEL) expects for the project. */
export function scopeFor(projectId: string): string {
  return `urn:zitadel:iam:org:project:id:${projectId}:aud`;
}
