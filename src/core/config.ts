import {Check, checkTogether, closestOption, fail, RULES} from './config-rules';
import {connectorError} from './errors';
import {SecretScrubber} from './secrets';
import {ConfigFromSpec, connectorSpec, DefaultedOption, violation} from './spec';
import {cut, quote} from './outside-text';

/** The user's settings after defaults were applied and everything was validated (their types follow from the spec). */
export type QuestbackConfig = ConfigFromSpec;

/**
 * "warehouse" (default): names made from each header text alone (sync/streams/column-names.ts), stable across
 * survey edits. "survey": the header texts as they are; long texts sharing their first 63 characters
 * clash in Postgres, which can fail Airbyte's Postgres destination.
 */
export type ColumnNames = QuestbackConfig['column_names'];

/**
 * "per_quest" (default): a stream per quest, each answer column its own field. "combined": one
 * stream `responses` for every quest, the answers in one object keyed by their header texts.
 * "long": one stream `answers` for every quest, a record per non-empty answer cell.
 */
export type StreamLayout = QuestbackConfig['stream_layout'];

/** A column named in sensitive_columns (by header text, column name, or question) and what happens to its values. */
export type SensitiveColumn = QuestbackConfig['sensitive_columns'][number];

/** The options that have a default in the spec, with it. */
type DefaultedOptions = Pick<QuestbackConfig, DefaultedOption>;

const SPEC = connectorSpec().connectionSpecification;
const MAX_UNKNOWN_NAMED = 10;

/** Every option's default, as resources/spec.json declares it. */
export const DEFAULTS: Readonly<DefaultedOptions> = Object.fromEntries(
  Object.entries(SPEC.properties)
    .filter(([, option]) => option.default !== undefined)
    .map(([name, option]) => [name, option.default])
) as unknown as DefaultedOptions;

/** The service's separator names (the spec lists them) and the character each one means in the CSV. */
export const SEPARATORS: Record<string, string> = {PIPE: '|', COMMA: ',', SEMICOLON: ';', TAB: '\t'};

/** What an option's schema asks for, in words: "a whole number of days from 1 to 3650". */
function expectation(check: Check): string {
  const {option} = check;
  const leftOut = RULES[check.key]?.leftOut;
  const orLeftOut = leftOut ? ` (or left out, ${leftOut})` : '';
  if (option.type === 'boolean') return 'true or false';
  if (option.type === 'integer' || option.type === 'number') {
    const unit = /\((\w+)\)$/.exec(option.title ?? '')?.[1];
    const kind = option.type === 'integer' ? 'a whole number' : 'a number';
    return `${kind}${unit ? ` of ${unit}` : ''} from ${option.minimum} to ${option.maximum}${orLeftOut}`;
  }
  if (option.enum) {
    return option.enum.length === 2
      ? option.enum.map((v) => JSON.stringify(v)).join(' or ')
      : `one of ${option.enum.join(', ')}`;
  }
  if (option.pattern_descriptor) return option.pattern_descriptor + orLeftOut;
  return option.type === 'array' ? 'a list' : 'a string';
}

/** The value as a message shows it: a secret, or a value of a required text option, only by its type. */
function shown(check: Check, value: unknown): string {
  const required = SPEC.required.includes(check.key);
  return check.option.airbyte_secret || (required && check.option.type === 'string') ? typeof value : quote(value);
}

function checkOption(check: Check, raw: unknown): unknown {
  const {key, option} = check;
  const rule = RULES[key] ?? {};
  let value = typeof raw === 'string' ? raw.trim() : raw;
  // An empty value is a value left out: the default applies, or the option is required.
  if (value === undefined || value === null || value === '') {
    if (!SPEC.required.includes(key)) return option.default;
    const typo = check.unknownKeys.find((k) => closestOption(k) === key);
    const suggestion = typo ? ` The config has '${cut(typo)}': rename it to '${key}'.` : '';
    const hint = rule.hint?.(check.nowMs) ?? '';
    fail(
      typeof raw === 'string' && raw !== ''
        ? `'${key}' is empty. ${hint}`
        : `'${key}' is required.${suggestion} ${hint}`
    );
  }
  if (option.type === 'string' && typeof value !== 'string') {
    fail(`'${key}' must be a string, got ${shown(check, value)}.`);
  }
  if (rule.refine) value = rule.refine(value, check);
  const broken = violation(option, value, rule.formOnly);
  if (broken) {
    const fallback = option.default !== undefined ? ` Leave it empty for the default, ${String(option.default)}.` : '';
    fail(`'${key}' must be ${expectation(check)}, got ${shown(check, value)}.${fallback}`);
  }
  return value;
}

interface ParsedConfig {
  config: QuestbackConfig;
  /** What the user should hear about although the config is valid (typos, normalised URLs). */
  warnings: string[];
}

/**
 * Validates the raw config file against the spec (spec-declaration.ts) and applies its defaults; throws a
 * config_error naming the field and what to do. Its messages never carry the client secret, in any
 * form, even when it was pasted into another setting and validation fails before the secret is
 * known to the output's scrubber.
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
    if (typeof raw.hash_salt === 'string') for (const salt of [raw.hash_salt, raw.hash_salt.trim()]) scrubber.add(salt);
    const message = err instanceof Error ? err.message : String(err);
    // A new error: the stack trace of the first would carry the message as it was.
    throw connectorError('config_error', scrubber.scrub(message));
  }
}

function parseValidated(input: unknown, nowMs: number): ParsedConfig {
  if (!input || typeof input !== 'object' || Array.isArray(input)) fail('the config must be a JSON object.');
  const raw = input as Record<string, unknown>;
  const unknownKeys = Object.keys(raw).filter((k) => !Object.hasOwn(SPEC.properties, k));
  // A warning each for the first few: a file of a million unknown keys is not a million lines.
  const warnings = unknownKeys.slice(0, MAX_UNKNOWN_NAMED).map((key) => {
    const guess = closestOption(key);
    return `Unknown option '${cut(key)}' is ignored${guess ? `: did you mean '${guess}'?` : '.'}`;
  });
  const more = unknownKeys.length - MAX_UNKNOWN_NAMED;
  if (more > 0) warnings.push(`${more} more unknown option(s) are ignored.`);
  const config: Record<string, unknown> = {};
  const byOrder = Object.entries(SPEC.properties).sort(([, a], [, b]) => a.order - b.order);
  for (const [key, option] of byOrder) {
    const value = checkOption({key, option, unknownKeys, nowMs, warnings}, raw[key]);
    if (value !== undefined) config[key] = value;
  }
  checkTogether(config);
  return {config: config as unknown as QuestbackConfig, warnings};
}

/** The OAuth scope the identity provider (ZITADEL) expects for the project. */
export function scopeFor(projectId: string): string {
  return `urn:zitadel:iam:org:project:id:${projectId}:aud`;
}
