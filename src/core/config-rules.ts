// What resources/spec.json cannot say about the options: hints for their messages, what leaving one
// out means, and the checks and normalisations beyond the schema (config.ts applies the schema).

import {connectorError} from './errors';
import {LIMITS} from './limits';
import {connectorSpec, OptionSchema} from './spec';
import {DAY_MS, parseUtcTimestamp} from './time';
import {cut, quote} from './outside-text';

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK.has(hostname);
}

export function fail(message: string): never {
  throw connectorError('config_error', `Invalid configuration: ${message}`);
}

const OPTIONS = Object.keys(connectorSpec().connectionSpecification.properties);
const MAX_TYPO_LENGTH = 100;

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
  // No option name is half as long: such a key is no typo of one (and the edit distance costs its length times theirs).
  if (key.length > MAX_TYPO_LENGTH) return undefined;
  const normal = (s: string): string => s.toLowerCase().replace(/[^a-z0-9]/g, '');
  let best: {option: string; d: number} | undefined;
  for (const option of OPTIONS) {
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
  const sharing = OPTIONS.filter((option) => words(option).some((w) => keyWords.has(w)));
  return sharing.length === 1 ? sharing[0] : undefined;
}

/**
 * A URL setting as a message may show it: everything up to its last '@' (user info, a password with
 * '/') is cut, the scheme's '//' kept. With indexOf, not a regular expression: one that tried each
 * '//' took time quadratic in the text's length.
 */
function withoutUserInfo(value: string): string {
  const at = value.lastIndexOf('@');
  if (at === -1) return value;
  const slashes = value.indexOf('//');
  const scheme = slashes !== -1 && slashes < value.indexOf('@') ? value.slice(0, slashes + 2) : '';
  return `${scheme}…@${value.slice(at + 1)}`;
}

/** The text without the slashes it ends with (in one pass: /\/+$/ tries every run of slashes to its end). */
function withoutTrailingSlashes(text: string): string {
  let end = text.length;
  while (end > 0 && text[end - 1] === '/') end--;
  return text.slice(0, end);
}

/** What an option's checks see: its name, its schema, and the config file's keys the spec does not know. */
export interface Check {
  key: string;
  option: OptionSchema;
  unknownKeys: readonly string[];
  nowMs: number;
  warnings: string[];
}

/**
 * What resources/spec.json cannot say, per option: a hint for its messages, what leaving it out
 * means, a refinement that checks and normalises the value beyond the schema (run before the
 * schema's checks, which then apply to the normalised value), and keywords the form applies but the
 * connector does not.
 */
interface Rule {
  hint?(nowMs: number): string;
  leftOut?: string;
  refine?(value: unknown, check: Check): unknown;
  formOnly?: readonly string[];
}

const CREDENTIALS_HINT =
  'Ask your Questback account owner or Questback support for an API login (client id and secret).';
const QUEST_IDS_HINT =
  'List the ids of the quests to export: the UUID in the quest address in Questback, e.g. 1b4e28ba-2fa1-11d2-883f-0016d3cca427.';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function startDateExample(nowMs: number): string {
  return `e.g. ${new Date(nowMs - 365 * DAY_MS).toISOString().slice(0, 10)}T00:00:00Z`;
}

export const RULES: Readonly<Record<string, Rule>> = {
  client_id: {hint: () => CREDENTIALS_HINT},
  client_secret: {hint: () => CREDENTIALS_HINT},
  quest_ids: {hint: () => QUEST_IDS_HINT, refine: questIds},
  start_date: {
    hint: (nowMs) => `Give the UTC date-time from which to export responses, ${startDateExample(nowMs)}.`,
    refine: startDate,
  },
  api_url: {refine: baseUrl},
  auth_url: {refine: baseUrl},
  window_days: {leftOut: 'so that windows follow the data'},
  // The form offers the documented values; a config file may name another, which the service judges.
  value_type: {refine: upperCaseName, formOnly: ['enum']},
  sensitive_columns: {refine: sensitiveColumns},
  hash_salt: {hint: () => SALT_HINT},
};

const SALT_HINT =
  'Give a random text of at least 16 characters (e.g. the output of `openssl rand -hex 32`), and keep it: another salt gives other hashes.';
const ACTIONS = ['hash', 'drop', 'keep'];

/** The listed columns, trimmed, each with what happens to it (lower case); each column once. */
function sensitiveColumns(value: unknown, check: Check): {column: string; action: string}[] {
  const {key} = check;
  const example = `e.g. [{"column": "E-mail", "action": "hash"}]`;
  if (!Array.isArray(value)) fail(`'${key}' must be a list of columns and what to do with each, ${example}.`);
  const seen = new Map<string, number>();
  return value.map((item: unknown, i) => {
    const entry = (item ?? {}) as {column?: unknown; action?: unknown};
    if (typeof item !== 'object' || Array.isArray(item) || typeof entry.column !== 'string' || !entry.column.trim()) {
      fail(`${key}[${i}] must name a column: {"column": "<header text or column name>", "action": "hash"}.`);
    }
    const column = entry.column.trim();
    const action = typeof entry.action === 'string' ? entry.action.trim().toLowerCase() : undefined;
    if (action === undefined || !ACTIONS.includes(action)) {
      fail(
        `${key}[${i}] (${quote(column)}) must say what to do with the column: "action" is one of ${ACTIONS.join(', ')}, got ${quote(entry.action ?? null)}.`
      );
    }
    const twice = seen.get(column);
    if (twice !== undefined)
      fail(`${key}[${i}] names ${quote(column)} again (see ${key}[${twice}]); list each column once.`);
    seen.set(column, i);
    return {column, action};
  });
}

/** What no single option can say: a hashed column needs the salt. */
export function checkTogether(config: Record<string, unknown>): void {
  const columns = (config.sensitive_columns ?? []) as {column: string; action: string}[];
  const hashed = columns.filter((c) => c.action === 'hash');
  if (hashed.length && config.hash_salt === undefined) {
    fail(
      `'sensitive_columns' hashes ${hashed.map((c) => quote(c.column)).join(', ')}, which needs 'hash_salt', the key of the hashes; it is missing. ${SALT_HINT}`
    );
  }
}

/**
 * A quest id as people copy it, normalised: spaces around it, upper case, or braces around it (as
 * Windows tools copy a GUID) are cleaned; undefined when what is left is no UUID.
 */
export function questIdOf(text: string): string | undefined {
  let id = text.trim();
  if (id.startsWith('{') && id.endsWith('}')) id = id.slice(1, -1).trim();
  return UUID.test(id) ? id.toLowerCase() : undefined;
}

/** The ids, normalised (questIdOf): each a UUID, each once. */
function questIds(value: unknown, check: Check): string[] {
  const {key} = check;
  if (!Array.isArray(value)) fail(`'${key}' must be a list of quest ids. ${QUEST_IDS_HINT}`);
  if (value.length === 0) fail(`'${key}' must name at least one quest. ${QUEST_IDS_HINT}`);
  const most = LIMITS.input.questIds;
  if (value.length > most) {
    fail(
      `'${key}' lists ${value.length} quest ids; one connection reads at most ${most}. Split the quests across connections (stream_layout "combined" suits hundreds of quests in one).`
    );
  }
  const seen = new Set<string>();
  return value.map((id, i) => {
    const normal = typeof id === 'string' ? questIdOf(id) : undefined;
    if (normal === undefined) {
      fail(`${key}[${i}] is ${quote(id)}, which is not a quest id. ${QUEST_IDS_HINT}`);
    }
    if (seen.has(normal)) fail(`quest id ${normal} is listed twice in '${key}'; list each quest once.`);
    seen.add(normal);
    return normal;
  });
}

/** Any ISO 8601 UTC form the connector reads, normalised; never in the future (the service rejects it). */
function startDate(value: unknown, check: Check): string {
  const text = value as string;
  const ms = parseUtcTimestamp(text);
  if (ms === undefined) {
    fail(`'${check.key}' must be an ISO 8601 UTC date-time like 2024-01-01T00:00:00Z, got ${quote(text)}.`);
  }
  if (ms > check.nowMs) {
    fail(
      `'${check.key}' ${cut(text)} lies in the future, and the service rejects future time filters. Set it to the first day whose responses you want (today or earlier, UTC), ${startDateExample(check.nowMs)}.`
    );
  }
  return new Date(ms).toISOString();
}

/**
 * A base URL, normalised: no trailing slash, and without the path the connector adds itself (a
 * pasted `…/v1` or token address would otherwise be doubled), which is said in a warning.
 */
function baseUrl(value: unknown, check: Check): string {
  const {key} = check;
  const example = String(check.option.default);
  const text = value as string;
  // Refused by its length before anything reads it: no check then depends on how long a text may be.
  if (text.length > LIMITS.input.urlChars) {
    fail(
      `'${key}' is ${text.length} characters long; a base URL has at most ${LIMITS.input.urlChars}. Use the base address, e.g. ${example}.`
    );
  }
  // Echoed without anything that may be credentials: user info ("user:pass@") is cut.
  const shown = withoutUserInfo(text);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return fail(`'${key}' is not a valid URL: ${quote(shown)}. Use the base address, e.g. ${example}.`);
  }
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    fail(`'${key}' must use https:// (plain http:// is accepted for localhost only, for testing): ${cut(shown)}.`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') fail(`'${key}' must be an https:// URL: ${cut(shown)}.`);
  if (url.search || url.hash || url.username || url.password) {
    fail(`'${key}' must be a plain base URL without credentials, query or fragment, e.g. ${example}.`);
  }
  let normal = withoutTrailingSlashes(url.toString());
  const added = key === 'api_url' ? /\/v1$/i : /\/oauth\/v2(\/token)?$/i;
  if (added.test(normal)) {
    const trimmed = normal.replace(added, '');
    check.warnings.push(
      `'${key}' ends with the path the connector adds itself; using ${trimmed} (set '${key}' to that to silence this warning).`
    );
    normal = trimmed;
  }
  return normal;
}

function upperCaseName(value: unknown, check: Check): string {
  const text = value as string;
  if (!/^[A-Z_]+$/.test(text)) {
    fail(`'${check.key}' must be an upper-case option name like ${String(check.option.default)}, got ${quote(text)}.`);
  }
  return text;
}
