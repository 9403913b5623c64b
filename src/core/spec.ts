import VError from 'verror';

import {SPEC_DECLARATION} from './spec-declaration';
import {parseUtcTimestamp} from './time';

/** One option of the spec: the JSON Schema keywords the spec uses, and Airbyte's form keywords. */
export interface OptionSchema {
  type: 'string' | 'integer' | 'number' | 'boolean' | 'array' | 'object';
  title?: string;
  description?: string;
  default?: unknown;
  enum?: readonly string[];
  minimum?: number;
  maximum?: number;
  pattern?: string;
  /** Airbyte's text for what the pattern wants (the form shows it); messages use it too. */
  pattern_descriptor?: string;
  format?: 'date-time';
  items?: OptionSchema;
  /** An object's fields (sensitive_columns' items), and those it must have. */
  properties?: Readonly<Record<string, OptionSchema>>;
  required?: readonly string[];
  minItems?: number;
  uniqueItems?: boolean;
  airbyte_secret?: boolean;
}

/** The connector's spec (spec-declaration.ts, written out as resources/spec.json): its options, defaults and ranges. */
interface ConnectorSpec {
  connectionSpecification: {
    required: readonly string[];
    properties: Readonly<Record<string, OptionSchema & {order: number}>>;
  };
  [key: string]: unknown;
}

/**
 * The JSON Schema keywords this module validates, and those that only annotate (for the form). A
 * spec that uses any other keyword is refused at start: it would otherwise go unchecked.
 */
const VALIDATED = [
  'type',
  'enum',
  'minimum',
  'maximum',
  'pattern',
  'format',
  'items',
  'minItems',
  'uniqueItems',
  'properties',
  'required',
];
const ANNOTATIONS = [
  'title',
  'description',
  'default',
  'examples',
  'order',
  'group',
  'always_show',
  'airbyte_secret',
  'airbyte_hidden',
  'pattern_descriptor',
];

function checkKeywords(schema: object, where: string): void {
  for (const [keyword, value] of Object.entries(schema)) {
    if (!VALIDATED.includes(keyword) && !ANNOTATIONS.includes(keyword)) {
      throw new VError(
        'the spec (spec-declaration.ts): %s uses "%s", which the config validation does not know',
        where,
        keyword
      );
    }
    if (keyword === 'items') checkKeywords(value as object, `${where}.items`);
    if (keyword === 'properties') {
      for (const [name, field] of Object.entries(value as object)) checkKeywords(field as object, `${where}.${name}`);
    }
  }
}

let loaded: ConnectorSpec | undefined;

/** The connector's spec as Airbyte gets it: the declaration without what only the connector uses (exportSetting). */
export function connectorSpec(): ConnectorSpec {
  if (!loaded) {
    const declared = SPEC_DECLARATION.connectionSpecification;
    const properties = Object.fromEntries(
      Object.entries(declared.properties).map(([name, option]) => {
        const {exportSetting: _sent, ...schema} = option as OptionSchema & {order: number; exportSetting?: string};
        checkKeywords(schema, name);
        return [name, schema];
      })
    );
    loaded = {...SPEC_DECLARATION, connectionSpecification: {...declared, properties}};
  }
  return loaded;
}

type Options = typeof SPEC_DECLARATION.connectionSpecification.properties;

/** The value an option's schema admits, as a TypeScript type. */
type ValueOf<S> = S extends {enum: readonly (infer E)[]}
  ? E
  : S extends {type: 'string'}
    ? string
    : S extends {type: 'integer' | 'number'}
      ? number
      : S extends {type: 'boolean'}
        ? boolean
        : S extends {type: 'array'; items: infer I}
          ? ValueOf<I>[]
          : S extends {type: 'object'; properties: infer P; required: readonly (infer R)[]}
            ? ObjectOf<P, R & keyof P>
            : never;

/** An object of these fields, those named `Present` always there, the others optional. */
type ObjectOf<P, Present extends keyof P> = {-readonly [K in Present]: ValueOf<P[K]>} & {
  -readonly [K in Exclude<keyof P, Present>]?: ValueOf<P[K]>;
} extends infer O
  ? {[K in keyof O]: O[K]}
  : never;

/** The options that have a default in the spec. */
export type DefaultedOption = {[K in keyof Options]: Options[K] extends {default: unknown} ? K : never}[keyof Options];

/** The config after validation: the options the spec requires or gives a default are always there. */
export type ConfigFromSpec = ObjectOf<
  Options,
  DefaultedOption | (typeof SPEC_DECLARATION.connectionSpecification.required)[number]
>;

/** The export settings the options are sent as (their `exportSetting`), each of its option's type. */
export type ExportSettingsFromSpec = {
  -readonly [K in keyof Options as Options[K] extends {exportSetting: infer N extends string} ? N : never]: ValueOf<
    Options[K]
  >;
};

/** Each option sent as an export setting and the setting's name, in the declaration's order. */
export const EXPORT_SETTING_OPTIONS: readonly (readonly [keyof Options, string])[] = Object.entries(
  SPEC_DECLARATION.connectionSpecification.properties
).flatMap(([name, option]) =>
  'exportSetting' in option ? [[name as keyof Options, option.exportSetting] as const] : []
);

/** What a value breaks of an option's schema: the keyword (and, inside a list, the item's index); undefined if nothing. */
interface Violation {
  keyword: string;
  item?: number;
  /** The object's field that is missing or wrong. */
  field?: string;
}

function typeMatches(schema: OptionSchema, value: unknown): boolean {
  switch (schema.type) {
    case 'string':
      return typeof value === 'string';
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
  }
}

/**
 * Checks a value against an option's schema, with JSON Schema's meaning of each keyword (a test
 * compares the verdicts with a full JSON Schema validator). `skip` names keywords not to apply.
 */
export function violation(schema: OptionSchema, value: unknown, skip: readonly string[] = []): Violation | undefined {
  const applies = (keyword: string): boolean => !skip.includes(keyword);
  if (!typeMatches(schema, value)) return {keyword: 'type'};
  if (applies('enum') && schema.enum && !schema.enum.includes(value as string)) return {keyword: 'enum'};
  if (typeof value === 'number') {
    if (applies('minimum') && schema.minimum !== undefined && value < schema.minimum) return {keyword: 'minimum'};
    if (applies('maximum') && schema.maximum !== undefined && value > schema.maximum) return {keyword: 'maximum'};
  }
  if (typeof value === 'string') {
    if (applies('pattern') && schema.pattern !== undefined && !new RegExp(schema.pattern, 'u').test(value))
      return {keyword: 'pattern'};
    if (applies('format') && schema.format === 'date-time' && parseUtcTimestamp(value) === undefined)
      return {keyword: 'format'};
  }
  if (schema.type === 'object') {
    const fields = value as Record<string, unknown>;
    const absent = schema.required?.find((name) => !(name in fields));
    if (absent !== undefined) return {keyword: 'required', field: absent};
    for (const [name, field] of Object.entries(schema.properties ?? {})) {
      if (name in fields && violation(field, fields[name], skip) !== undefined)
        return {keyword: 'properties', field: name};
    }
  }
  if (Array.isArray(value)) {
    if (applies('minItems') && schema.minItems !== undefined && value.length < schema.minItems)
      return {keyword: 'minItems'};
    if (schema.items) {
      const items = schema.items;
      const bad = value.findIndex((item) => violation(items, item, skip) !== undefined);
      if (bad >= 0) return {keyword: 'items', item: bad};
    }
    if (applies('uniqueItems') && schema.uniqueItems) {
      // A set, not a search of the list before each item: 100,000 items took minutes.
      const seen = new Set<string>();
      const twice = value.findIndex((item) => {
        const key = JSON.stringify(item);
        if (seen.has(key)) return true;
        seen.add(key);
        return false;
      });
      if (twice >= 0) return {keyword: 'uniqueItems', item: twice};
    }
  }
  return undefined;
}
