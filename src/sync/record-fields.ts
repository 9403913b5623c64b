import {formatUtcTimestamp, TimeWindow} from '../core/time';
import {RecordField} from './output-port';
import {ANSWERS_FIELD, CURSOR_FIELD, QUEST_ID_FIELD, WINDOW_START_FIELD} from './schema';

/** The connector's own fields of a quest stream's record: the quest and the export window. */
function windowFields(questId: string, window: TimeWindow): RecordField[] {
  return [
    {name: QUEST_ID_FIELD, value: questId},
    {name: WINDOW_START_FIELD, value: formatUtcTimestamp(window.since)},
    {name: CURSOR_FIELD, value: formatUtcTimestamp(window.until)},
  ];
}

/** A per_quest record: a field per column, in cell order (an empty cell is null), then the connector's fields. */
export function columnFields(names: readonly string[], questId: string, window: TimeWindow): RecordField[] {
  return [...names.map((name, cell) => ({name, cell})), ...windowFields(questId, window)];
}

/** Where the combined layout's fields lie in a quest's rows (responses-stream.ts). */
export interface AnswersShape {
  /** The answers object's key of each cell (schema.ts answerKeys). */
  keys: readonly string[];
  idIndex: number;
  /** -1: the export has no Created column. */
  createdIndex: number;
}

/**
 * A combined-layout record: quest_id, response_id (kept as the text it is, even empty), created
 * (null when empty or absent), the answers object keyed by header text, and the window. The answers
 * are in the order a JavaScript object keeps its keys (integer-like keys first, ascending), as the
 * records written through JSON.stringify had them; a key no object can hold (`__proto__`) is left
 * out, as it was.
 */
export function answerFields(shape: AnswersShape, questId: string, window: TimeWindow): RecordField[] {
  const order: Record<string, number> = {};
  shape.keys.forEach((key, cell) => (order[key] = cell));
  return [
    {name: 'quest_id', value: questId},
    {name: 'response_id', cell: shape.idIndex, keepEmpty: true},
    shape.createdIndex < 0 ? {name: 'created', value: null} : {name: 'created', cell: shape.createdIndex},
    {name: ANSWERS_FIELD, fields: Object.entries(order).map(([name, cell]) => ({name, cell}))},
    {name: WINDOW_START_FIELD, value: formatUtcTimestamp(window.since)},
    {name: CURSOR_FIELD, value: formatUtcTimestamp(window.until)},
  ];
}
