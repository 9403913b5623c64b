import {ColumnNames} from '../../core/config';
import {parseUtcTimestamp} from '../../core/time';
import {columnsFromHeader} from '../../csv/header';
import {warehouseNames} from './column-names';

/** Fields the connector adds to every record, beside the quest's CSV columns. */
export const QUEST_ID_FIELD = '_questback_quest_id';
export const WINDOW_START_FIELD = '_questback_window_start';
export const CURSOR_FIELD = '_questback_window_end';
export const CONNECTOR_FIELDS: ReadonlySet<string> = new Set([QUEST_ID_FIELD, WINDOW_START_FIELD, CURSOR_FIELD]);

/** The combined layout's object of every cell of a response, keyed by header text (responses-stream.ts). */
export const ANSWERS_FIELD = 'answers';

/**
 * The keys of the answers object: each header text exactly as exported. A text repeated byte for
 * byte in one export gets " (2)", " (3)" … by occurrence (and a further number should that key be
 * taken by another header), so that no cell is lost to a duplicate key.
 */
export function answerKeys(header: readonly string[]): string[] {
  const taken = new Set(header);
  const seen = new Set<string>();
  return header.map((text) => {
    if (!seen.has(text)) {
      seen.add(text);
      return text;
    }
    let n = 2;
    while (taken.has(`${text} (${n})`) || seen.has(`${text} (${n})`)) n++;
    const key = `${text} (${n})`;
    seen.add(key);
    return key;
  });
}

/** A warehouse-safe table name that still shows the quest id: quest_<uuid with underscores>. */
export function streamNameFor(questId: string): string {
  return `quest_${questId.toLowerCase().replace(/-/g, '_')}`;
}

export function questIdFromStreamName(name: string): string | undefined {
  const m = /^quest_([0-9a-f]{8})_([0-9a-f]{4})_([0-9a-f]{4})_([0-9a-f]{4})_([0-9a-f]{12})$/.exec(name);
  return m ? m.slice(1).join('-') : undefined;
}

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
 */
export function recordColumns(header: readonly string[], mode: ColumnNames): Column[] {
  const names =
    mode === 'warehouse' ? warehouseNames(header, CONNECTOR_FIELDS) : columnsFromHeader(header, CONNECTOR_FIELDS).names;
  return header.map((title, i) => ({name: names[i], title}));
}

/** The export's response creation time, the time its `since`/`until` filter compares. */
const CREATED = /^created$/i;

/**
 * Types the columns. A column's type must not depend on whether the quest had responses when
 * discover ran: a type that changes on a schema refresh is a breaking change in Airbyte. So the
 * header decides: `Created` (any case), the creation time, is date-time also for an empty sample;
 * every other column is a nullable string, since nothing else is certain (other timestamp-like
 * headers are not documented). The one exception protects the data: a sampled `Created` value that
 * is not an ISO 8601 UTC timestamp keeps the column a string, as a destination would null every
 * such value of a date-time column.
 */
export function typeColumns(columns: Column[], sample: readonly string[][]): Column[] {
  return columns.map((column, i) => {
    if (!CREATED.test(column.title.trim())) return column;
    const contradicted = sample.some((row) => row[i] && parseUtcTimestamp(row[i]) === undefined);
    return contradicted ? column : {...column, format: 'date-time'};
  });
}

/** Whether a header text is the response id column ("Response ID", "ResponseId", "response_id"...). */
export function isResponseIdHeader(text: string): boolean {
  return text.toLowerCase().replace(/[^a-z]/g, '') === 'responseid';
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

/**
 * The stream's schema: every CSV column as a nullable string (the export does not say which are
 * numbers; destinations cast later) unless it is a known timestamp column, plus the connector's
 * fields. The platform keeps only the fields listed here, so a column missing from it never reaches
 * the warehouse: discover must see every column, and a schema refresh picks up new ones.
 */
export function questSchema(columns: readonly Column[]): JsonSchema {
  const properties: JsonSchema['properties'] = {};
  for (const column of columns) {
    properties[column.name] = {
      type: ['null', 'string'],
      ...(column.format ? {format: column.format} : {}),
      ...(column.title !== column.name ? {title: column.title} : {}),
    };
  }
  properties[QUEST_ID_FIELD] = {type: 'string', description: 'Id of the quest (survey) the response belongs to.'};
  properties[WINDOW_START_FIELD] = {
    type: 'string',
    format: 'date-time',
    description: 'Start (exclusive) of the export time window the row came from.',
  };
  properties[CURSOR_FIELD] = {
    type: 'string',
    format: 'date-time',
    description: 'End (inclusive) of the export time window the row came from; the incremental cursor.',
  };
  return {$schema: 'http://json-schema.org/draft-07/schema#', type: 'object', additionalProperties: true, properties};
}
