// Shared checks of the acceptance suite: what Airbyte's Connector Acceptance Tests (CAT) assert on
// specs, catalogs, records and states, written for this project's black-box runs of the command line.

import Ajv, {ValidateFunction} from 'ajv';
import addFormats from 'ajv-formats';
import fs from 'fs';
import yaml from 'js-yaml';
import path from 'path';

import {RunResult} from '../helpers/connector';
import {AirbyteMessageJson, PROTOCOL_FILE} from '../helpers/protocol';

export const ROOT = path.resolve(__dirname, '..', '..');
export const DRAFT_07 = 'http://json-schema.org/draft-07/schema';
export const CURSOR_FIELD = '_questback_window_end';
export const PRIMARY_KEY = 'response_id';
/** The stream mapping every quest's columns to their header texts: a cursor and key of its own. */
export const COLUMNS_STREAM = 'columns';
export const COLUMNS_CURSOR = 'seen_at';
/** Every configured quest's invitations: full refresh only, keyed by invitation_id, no cursor. */
export const INVITATIONS_STREAM = 'invitations';
const DAY_MS = 86_400_000;

export type SchemaNode = Record<string, unknown>;

export interface AirbyteStreamJson {
  name: string;
  namespace?: string;
  json_schema: SchemaNode;
  supported_sync_modes?: string[];
  source_defined_cursor?: boolean;
  default_cursor_field?: string[];
  source_defined_primary_key?: string[][];
  is_resumable?: boolean;
}

export interface ConfiguredStreamJson {
  stream: AirbyteStreamJson;
  sync_mode: 'full_refresh' | 'incremental';
  destination_sync_mode: string;
  cursor_field?: string[];
  primary_key?: string[][];
}

export interface ConfiguredCatalogJson {
  streams: ConfiguredStreamJson[];
}

export interface StateInput {
  type: 'STREAM';
  stream: {stream_descriptor: {name: string}; stream_state: {cursor: string; cursor_field?: string[]}};
}

/**
 * Cursor values of a stream state as CAT's future-state test finds them: under a key named like the
 * cursor field, or under "cursor" in an object that also has "cursor_field", at any depth.
 */
export function cursorValuesByField(state: unknown, cursorField: string): unknown[] {
  const found: unknown[] = [];
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(visit);
    else if (isObject(node)) {
      for (const [key, value] of Object.entries(node)) {
        if (key === cursorField || (key === 'cursor' && 'cursor_field' in node)) found.push(value);
        visit(value);
      }
    }
  };
  visit(state);
  return found;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function daysAgo(days: number): string {
  return new Date(Date.now() - days * DAY_MS).toISOString();
}

export function readJson<T>(relative: string): T {
  return JSON.parse(fs.readFileSync(path.join(ROOT, relative), 'utf8')) as T;
}

// ---------------------------------------------------------------------------------------------
// JSON Schema walking

const SCHEMA_MAPS = new Set(['properties', 'patternProperties', 'definitions', '$defs', 'dependencies']);
const SCHEMA_LISTS = new Set(['allOf', 'anyOf', 'oneOf', 'items']);
const SCHEMA_VALUES = new Set([
  'items',
  'additionalItems',
  'additionalProperties',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'propertyNames',
]);

/** A readable JSON-pointer of a schema location, e.g. /properties/quest_ids/items. */
export function pointer(at: readonly string[]): string {
  return '/' + at.map((s) => s.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
}

/**
 * Visits every subschema with its location. Property names are names, not keywords: a property
 * called "not" is never taken for the keyword.
 */
export function walkSchema(node: unknown, visit: (schema: SchemaNode, at: string[]) => void, at: string[] = []): void {
  if (!isObject(node)) return;
  visit(node, at);
  for (const [key, value] of Object.entries(node)) {
    if (SCHEMA_MAPS.has(key) && isObject(value)) {
      for (const [name, child] of Object.entries(value)) walkSchema(child, visit, [...at, key, name]);
    } else if (SCHEMA_LISTS.has(key) && Array.isArray(value)) {
      value.forEach((child, i) => walkSchema(child, visit, [...at, key, String(i)]));
    } else if (SCHEMA_VALUES.has(key)) {
      walkSchema(value, visit, [...at, key]);
    }
  }
}

/** Locations of the given keywords anywhere in the schema. */
export function keywordLocations(schema: unknown, keywords: readonly string[]): string[] {
  const found: string[] = [];
  walkSchema(schema, (node, at) => {
    for (const keyword of keywords) if (keyword in node) found.push(pointer([...at, keyword]));
  });
  return found;
}

/** Type arrays other than [T, "null"] (one type and null, in either order). */
export function typeArrayProblems(schema: unknown): string[] {
  const found: string[] = [];
  walkSchema(schema, (node, at) => {
    const type = node.type;
    if (!Array.isArray(type)) return;
    const others = type.filter((t) => t !== 'null');
    if (type.length !== 2 || others.length !== 1 || typeof others[0] !== 'string')
      found.push(`${pointer([...at, 'type'])} = ${JSON.stringify(type)}`);
  });
  return found;
}

/** additionalProperties values that the predicate rejects. */
export function additionalPropertiesProblems(schema: unknown, allowed: (value: unknown) => boolean): string[] {
  const found: string[] = [];
  walkSchema(schema, (node, at) => {
    if ('additionalProperties' in node && !allowed(node.additionalProperties)) {
      found.push(`${pointer([...at, 'additionalProperties'])} = ${JSON.stringify(node.additionalProperties)}`);
    }
  });
  return found;
}

/** oneOf blocks whose variants lack properties or a common property with a const (unique per variant). */
export function oneOfProblems(schema: unknown): string[] {
  const found: string[] = [];
  walkSchema(schema, (node, at) => {
    if (!('oneOf' in node)) return;
    const where = pointer([...at, 'oneOf']);
    const variants = node.oneOf;
    if (!Array.isArray(variants) || variants.length === 0) {
      found.push(`${where} is not a non-empty list`);
      return;
    }
    const props = variants.map((v) => (isObject(v) && isObject(v.properties) ? v.properties : undefined));
    props.forEach((p, i) => {
      if (!p) found.push(`${where}/${i} has no properties`);
    });
    if (props.some((p) => !p)) return;
    const defined = props as Record<string, unknown>[];
    const common = Object.keys(defined[0]).filter((name) =>
      defined.every((p) => isObject(p[name]) && 'const' in (p[name] as SchemaNode))
    );
    if (common.length === 0) {
      found.push(`${where} variants share no property with a const`);
      return;
    }
    const consts = defined.map((p) => JSON.stringify((p[common[0]] as SchemaNode).const));
    if (new Set(consts).size !== consts.length)
      found.push(`${where} variants repeat a const of ${common[0]}: ${consts.join(', ')}`);
  });
  return found;
}

/** order values that are not integers or repeat among sibling properties. */
export function orderProblems(schema: unknown): string[] {
  const found: string[] = [];
  walkSchema(schema, (node, at) => {
    if (!isObject(node.properties)) return;
    const seen = new Map<unknown, string>();
    for (const [name, child] of Object.entries(node.properties)) {
      if (!isObject(child) || !('order' in child)) continue;
      const where = pointer([...at, 'properties', name, 'order']);
      if (!Number.isInteger(child.order)) found.push(`${where} = ${JSON.stringify(child.order)} is not an integer`);
      const other = seen.get(child.order);
      if (other !== undefined) found.push(`${where} = ${String(child.order)} repeats ${other}`);
      seen.set(child.order, where);
    }
  });
  return found;
}

/** Group references that no declared group has, malformed groups, and declared groups nobody uses. */
export function groupProblems(connectionSpecification: SchemaNode): string[] {
  const found: string[] = [];
  const used = new Map<string, string>();
  walkSchema(connectionSpecification, (node, at) => {
    if ('group' in node && at.length > 0) {
      if (typeof node.group !== 'string' || node.group === '')
        found.push(`${pointer([...at, 'group'])} is not a group id`);
      else used.set(node.group, pointer(at));
    }
  });
  const groups = connectionSpecification.groups;
  if (groups === undefined) {
    for (const [id, where] of used) found.push(`${where} names group ${id} but the spec declares no groups`);
    return found;
  }
  if (!Array.isArray(groups)) return [...found, '/groups is not a list'];
  const ids = new Set<string>();
  groups.forEach((g, i) => {
    if (!isObject(g) || typeof g.id !== 'string' || g.id === '') found.push(`/groups/${i} has no id`);
    else if (ids.has(g.id)) found.push(`/groups/${i} repeats id ${g.id}`);
    else ids.add(g.id);
    if (isObject(g) && g.title !== undefined && typeof g.title !== 'string')
      found.push(`/groups/${i} title is not a string`);
  });
  for (const [id, where] of used) if (!ids.has(id)) found.push(`${where} names undeclared group ${id}`);
  for (const id of ids) if (![...used.keys()].includes(id)) found.push(`group ${id} is declared but unused`);
  return found;
}

/** Words that make a property name a secret's name, as CAT's secret check reads them. */
const SECRET_WORDS = new Set([
  'secret',
  'password',
  'passwd',
  'token',
  'key',
  'apikey',
  'credential',
  'credentials',
  'jwt',
  'certificate',
  'private',
]);

export function isSecretName(name: string): boolean {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  return words.some((w) => SECRET_WORDS.has(w));
}

/** Secret-named string properties without airbyte_secret, and booleans or consts marked secret. */
export function secretProblems(schema: unknown): string[] {
  const found: string[] = [];
  walkSchema(schema, (node, at) => {
    if (!isObject(node.properties)) return;
    for (const [name, child] of Object.entries(node.properties)) {
      if (!isObject(child)) continue;
      const where = pointer([...at, 'properties', name]);
      const types = Array.isArray(child.type) ? child.type : [child.type];
      const canHoldSecret =
        (child.type === undefined || types.includes('string')) && !('const' in child) && !('enum' in child);
      if (child.airbyte_secret === true && !canHoldSecret)
        found.push(
          `${where} is marked airbyte_secret but cannot hold a secret (${JSON.stringify(child.type ?? child.const)})`
        );
      if (isSecretName(name) && canHoldSecret && child.airbyte_secret !== true)
        found.push(`${where} is named like a secret but is not airbyte_secret`);
    }
  });
  return found;
}

// ---------------------------------------------------------------------------------------------
// ajv

export function newAjv(): Ajv {
  const ajv = new Ajv({strict: false, allErrors: true});
  addFormats(ajv);
  return ajv;
}

/** Errors of a schema against the draft-07 meta-schema, then of compiling it; empty when valid. */
export function draft07Problems(schema: unknown): string[] {
  const ajv = newAjv();
  const meta = ajv.getSchema(DRAFT_07);
  if (!meta) throw new Error('ajv has no draft-07 meta-schema');
  if (!meta(schema)) return (meta.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''}`);
  try {
    ajv.compile(schema as SchemaNode);
  } catch (err) {
    return [`does not compile: ${err instanceof Error ? err.message : String(err)}`];
  }
  return [];
}

let protocolAjv: Ajv | undefined;

/** A validator for one definition of the official Airbyte protocol schema. */
export function protocolValidator(definition: string): ValidateFunction {
  if (!protocolAjv) {
    protocolAjv = newAjv();
    protocolAjv.addSchema(yaml.load(fs.readFileSync(PROTOCOL_FILE, 'utf8')) as SchemaNode, 'protocol');
  }
  const validate = protocolAjv.getSchema(`protocol#/definitions/${definition}`);
  if (!validate) throw new Error(`${definition} is not defined in ${PROTOCOL_FILE}`);
  return validate;
}

export function errorsOf(validate: ValidateFunction, value: unknown): string[] {
  return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`);
}

// ---------------------------------------------------------------------------------------------
// Records

/** Number literals of a JSON text with their location, as written (1 and 1.0 differ here). */
export function numberLiterals(text: string): {at: string[]; raw: string}[] {
  const found: {at: string[]; raw: string}[] = [];
  let i = 0;
  const ws = (): void => {
    while (i < text.length && ' \t\r\n'.includes(text[i])) i++;
  };
  const str = (): string => {
    const start = i;
    i++;
    while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  const value = (at: string[]): void => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        ws();
        const key = str();
        ws();
        i++; // ':'
        value([...at, key]);
        ws();
        if (text[i++] === '}') return;
      }
    } else if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (let n = 0; ; n++) {
        value([...at, String(n)]);
        ws();
        if (text[i++] === ']') return;
      }
    } else if (c === '"') {
      str();
    } else {
      const m = /^-?\d+(\.\d+)?([eE][+-]?\d+)?|^true|^false|^null/.exec(text.slice(i, i + 400));
      if (!m) throw new Error(`not JSON at ${i}: ${text.slice(i, i + 40)}`);
      if (m[0] !== 'true' && m[0] !== 'false' && m[0] !== 'null') found.push({at, raw: m[0]});
      i += m[0].length;
    }
  };
  value([]);
  return found;
}

/** The subschema of a location inside an instance, following properties, items and additionalProperties. */
export function subschema(schema: SchemaNode, at: readonly string[]): SchemaNode | undefined {
  let node: SchemaNode | undefined = schema;
  for (const segment of at) {
    if (!node) return undefined;
    if (isObject(node.properties) && isObject(node.properties[segment])) node = node.properties[segment] as SchemaNode;
    else if (isObject(node.items) && /^\d+$/.test(segment)) node = node.items;
    else if (isObject(node.additionalProperties)) node = node.additionalProperties;
    else return undefined;
  }
  return node;
}

function typesOf(node: SchemaNode | undefined): unknown[] {
  if (!node) return [];
  return Array.isArray(node.type) ? node.type : [node.type];
}

/** Values a schema types as integer (and not number) that the line writes with a fraction or exponent. */
export function strictIntegerProblems(recordLine: string, schema: SchemaNode): string[] {
  return numberLiterals(recordLine)
    .filter(({at}) => at[0] === 'record' && at[1] === 'data')
    .filter(({at}) => {
      const types = typesOf(subschema(schema, at.slice(2)));
      return types.includes('integer') && !types.includes('number');
    })
    .filter(({raw}) => /[.eE]/.test(raw))
    .map(({at, raw}) => `${pointer(at.slice(2))} = ${raw} is not an integer literal`);
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** Values of date-time-formatted properties that are not RFC 3339 date-times or do not parse. */
export function dateTimeProblems(data: unknown, schema: SchemaNode, at: string[] = []): string[] {
  const found: string[] = [];
  if (schema.format === 'date-time' && typeof data === 'string') {
    if (!RFC3339.test(data) || Number.isNaN(Date.parse(data)))
      found.push(`${pointer(at)} = ${JSON.stringify(data)} is not a date-time`);
  }
  if (isObject(data)) {
    for (const [key, value] of Object.entries(data)) {
      const child = subschema(schema, [key]);
      if (child) found.push(...dateTimeProblems(value, child, [...at, key]));
    }
  } else if (Array.isArray(data) && isObject(schema.items)) {
    data.forEach((value, i) => found.push(...dateTimeProblems(value, schema.items as SchemaNode, [...at, String(i)])));
  }
  return found;
}

// ---------------------------------------------------------------------------------------------
// Connector output

export function catalogOf(result: RunResult): AirbyteStreamJson[] {
  const catalogs = result.messages.filter((m) => m.type === 'CATALOG') as unknown as {
    catalog: {streams: AirbyteStreamJson[]};
  }[];
  if (catalogs.length !== 1)
    throw new Error(`discover printed ${catalogs.length} CATALOG messages; stderr: ${result.stderr.slice(0, 500)}`);
  return catalogs[0].catalog.streams;
}

/** The configured catalog of `streams`, each in `preferred` mode when it supports it, else in the mode it declares. */
export function configuredCatalogOf(
  streams: AirbyteStreamJson[],
  preferred: 'full_refresh' | 'incremental'
): ConfiguredCatalogJson {
  return {
    streams: streams.map((stream) => {
      const modes = stream.supported_sync_modes ?? [];
      const mode = modes.includes(preferred) || !modes.length ? preferred : (modes[0] as typeof preferred);
      return mode === 'incremental'
        ? {stream, sync_mode: mode, cursor_field: stream.default_cursor_field, destination_sync_mode: 'append'}
        : {stream, sync_mode: mode, destination_sync_mode: 'overwrite'};
    }),
  };
}

export function messagesOfType(result: RunResult, type: string): AirbyteMessageJson[] {
  return result.messages.filter((m) => m.type === type);
}

/** Raw stdout lines with their parsed message, in order (for checks of how values are written). */
export function linesOf(result: RunResult): {line: string; message: AirbyteMessageJson}[] {
  return result.stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((line) => ({line, message: JSON.parse(line) as AirbyteMessageJson}));
}

/** What a run printed that a person debugging a failed assertion wants to see. */
export function summary(result: RunResult): string {
  const notable = result.messages
    .filter((m) => m.type !== 'RECORD' && !(m.type === 'LOG' && JSON.stringify(m).includes('"INFO"')))
    .map((m) => JSON.stringify(m).slice(0, 400));
  return [`exit ${String(result.code)}`, ...notable, result.stderr.slice(0, 1000)].join('\n');
}
