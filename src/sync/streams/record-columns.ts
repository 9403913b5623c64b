import {ColumnNames} from '../../core/config';
import {readTime} from '../../core/time-text';
import {columnsFromHeader, isCreatedHeader, isResponseIdHeader} from '../../csv/header';
import {warehouseNames} from './column-names';

/** Fields the connector adds to every record of a quest stream, beside the quest's CSV columns. */
export const QUEST_ID_FIELD = '_questback_quest_id';
export const WINDOW_START_FIELD = '_questback_window_start';
export const CURSOR_FIELD = '_questback_window_end';
export const CONNECTOR_FIELDS: ReadonlySet<string> = new Set([QUEST_ID_FIELD, WINDOW_START_FIELD, CURSOR_FIELD]);

/** A column of a quest's records: its field name, and the header text it came from. */
export interface Column {
  name: string;
  title: string;
  format?: 'date-time';
}

/**
 * The record field names of a header. "warehouse": ASCII snake_case names that every destination
 * keeps as they are (the header text stays in the schema's title); "survey": the header texts, made
 * unique, as the survey shows them (destinations then rewrite them their own way).
 *
 * `pinned` (header text -> the names the configured schema gives it, in the schema's order) keeps a
 * name where the connection has it. When the rule names the header as the connection does (a read
 * with the catalog discover gave), the rule's names are the names, whatever the header's repeats.
 * Else the k-th occurrence of a text keeps the k-th name pinned for it, and the other texts are named
 * by the rule without those names, so a question added later never takes a configured column's name
 * (two texts that differ in case only would otherwise both move to hashed names).
 */
export function recordColumns(
  header: readonly string[],
  mode: ColumnNames,
  pinned: ReadonlyMap<string, readonly string[]> = new Map()
): Column[] {
  const byRule = (texts: readonly string[], reserved: ReadonlySet<string>): string[] =>
    mode === 'warehouse' ? warehouseNames(texts, reserved) : columnsFromHeader(texts, reserved).names;
  const seen = new Map<string, number>();
  const kept = header.map((text) => {
    const k = seen.get(text) ?? 0;
    seen.set(text, k + 1);
    return pinned.get(text)?.[k];
  });
  const rule = byRule(header, CONNECTOR_FIELDS);
  if (kept.every((name, i) => name === undefined || name === rule[i]))
    return header.map((title, i) => ({name: rule[i], title}));
  const rest = header.filter((_, i) => kept[i] === undefined);
  const names = byRule(rest, new Set([...CONNECTOR_FIELDS, ...kept.filter((n): n is string => n !== undefined)]));
  let next = 0;
  return header.map((title, i) => ({name: kept[i] ?? names[next++], title}));
}

/**
 * Splits expanded multiple-choice headers into question and option: a header "Q: O" is a question
 * with an option when another header of the export starts with the same "Q: ". A header with no such
 * sibling is a question of its own, whatever colons it holds.
 */
export function questionParts(header: readonly string[]): {question: string; option: string | null}[] {
  const prefixes = new Map<string, number>();
  const prefixOf = (h: string): string | undefined => {
    const at = h.lastIndexOf(': ');
    return at > 0 ? h.slice(0, at) : undefined;
  };
  for (const h of header) {
    const p = prefixOf(h);
    if (p !== undefined) prefixes.set(p, (prefixes.get(p) ?? 0) + 1);
  }
  return header.map((h) => {
    const p = prefixOf(h);
    return p !== undefined && (prefixes.get(p) ?? 0) > 1
      ? {question: p, option: h.slice(p.length + 2)}
      : {question: h, option: null};
  });
}

/**
 * Types the columns. A column's type must not depend on whether the quest had responses when
 * discover ran: a type that changes on a schema refresh is a breaking change in Airbyte. So the
 * header decides: `Created` (any case), the creation time, is date-time also for an empty sample;
 * every other column is a nullable string, since nothing else is certain (other timestamp-like
 * headers are not documented). The one exception protects the data: a sampled `Created` value that
 * is not a time the connector reads (core/time-text.ts) keeps the column a string, as its values
 * would be nulled. A date-time column's values are written as RFC 3339 in UTC.
 */
export function typeColumns(columns: Column[], sample: readonly string[][]): Column[] {
  return columns.map((column, i) => {
    if (!isCreatedHeader(column.title)) return column;
    const contradicted = sample.some((row) => row[i] && readTime(row[i]) === undefined);
    return contradicted ? column : {...column, format: 'date-time'};
  });
}

/** The response id column, if the export has one: the natural primary key of a quest's rows. */
export function responseIdColumn(columns: readonly Column[]): string | undefined {
  return columns.find((c) => isResponseIdHeader(c.title))?.name;
}

export interface JsonSchema {
  $schema: string;
  type: 'object';
  additionalProperties: true;
  properties: Record<string, Record<string, unknown>>;
}

/** The connector's window fields of a record, as the quest streams' and `responses` schemas describe them. */
export const WINDOW_PROPERTIES: JsonSchema['properties'] = {
  [WINDOW_START_FIELD]: {
    type: 'string',
    format: 'date-time',
    description: 'Start (exclusive) of the export time window the row came from.',
  },
  [CURSOR_FIELD]: {
    type: 'string',
    format: 'date-time',
    description: 'End (inclusive) of the export time window the row came from; the incremental cursor.',
  },
};

/** A string property of a schema, with its description. */
export const stringProperty = (description: string) => ({type: 'string', description});

/** A stream's schema: an object of these properties, keeping any other (Airbyte drops them anyway). */
export function objectSchema(properties: JsonSchema['properties']): JsonSchema {
  return {$schema: 'http://json-schema.org/draft-07/schema#', type: 'object', additionalProperties: true, properties};
}
