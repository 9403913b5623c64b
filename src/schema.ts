/** Fields the connector adds to every record, beside the quest's CSV columns. */
export const QUEST_ID_FIELD = '_questback_quest_id';
export const WINDOW_START_FIELD = '_questback_window_start';
export const CURSOR_FIELD = '_questback_window_end';
export const CONNECTOR_FIELDS: ReadonlySet<string> = new Set([QUEST_ID_FIELD, WINDOW_START_FIELD, CURSOR_FIELD]);

/** A warehouse-safe table name that still shows the quest id: quest_<uuid with underscores>. */
export function streamNameFor(questId: string): string {
  return `quest_${questId.toLowerCase().replace(/-/g, '_')}`;
}

export function questIdFromStreamName(name: string): string | undefined {
  const m = /^quest_([0-9a-f]{8})_([0-9a-f]{4})_([0-9a-f]{4})_([0-9a-f]{4})_([0-9a-f]{12})$/.exec(name);
  return m ? m.slice(1).join('-') : undefined;
}

/** The response id column, if the export has one: the natural primary key of a quest's rows. */
export function responseIdColumn(columns: readonly string[]): string | undefined {
  return columns.find((c) => c.toLowerCase().replace(/[^a-z]/g, '') === 'responseid');
}

export interface JsonSchema {
  $schema: string;
  type: 'object';
  additionalProperties: true;
  properties: Record<string, Record<string, unknown>>;
}

/**
 * The stream's schema: every CSV column as a nullable string (the export does not say which are
 * numbers; destinations cast later), the connector's fields, and additional properties allowed so
 * that columns added to the survey after discovery still arrive.
 */
export function questSchema(columns: readonly string[]): JsonSchema {
  const properties: JsonSchema['properties'] = {};
  for (const column of columns) properties[column] = {type: ['null', 'string']};
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
