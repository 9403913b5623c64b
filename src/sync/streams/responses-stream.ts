import {QuestbackConfig} from '../../core/config';
import {ObjectCell, RecordField} from '../output-port';
import {answerKeys, QuestResponseRecords, questsStream} from './quests-stream';
import {CURSOR_FIELD, objectSchema, WINDOW_PROPERTIES} from './record-columns';
import {describeConfigured, Treatment} from './sensitive-columns';
import {catalogStream, incrementalSupport} from './stream-definition';

// The combined layout: one stream `responses` for every quest, its answers in one object keyed by
// header text, the progress of every quest in its one state (a map of quests).

export const RESPONSES_STREAM = 'responses';
const ANSWERS_FIELD = 'answers';
const RESPONSES_SUPPORT = incrementalSupport(CURSOR_FIELD, [['quest_id'], ['response_id']]);

/** The stream as discover lists it: no export needed, the schema is the same for every quest. */
export function responsesCatalogStream(config?: QuestbackConfig) {
  return catalogStream(
    RESPONSES_STREAM,
    objectSchema({
      quest_id: {type: 'string', description: 'Id of the quest (survey) the response belongs to.'},
      response_id: {type: 'string', description: "The response's id (the export's Response ID column)."},
      created: {
        type: ['null', 'string'],
        format: 'date-time',
        description:
          "When the response was created (the export's Created column), as RFC 3339 in UTC; null, with an entry in the record's meta.changes, when the export's value is not a time.",
      },
      [ANSWERS_FIELD]: {
        type: 'object',
        description: `Every column of the export, keyed by its header text exactly as exported (a repeated header text gets " (2)", " (3)" … by occurrence); values are strings, or null for an empty cell.${config ? describeConfigured(config) : ''}`,
        additionalProperties: {type: ['null', 'string']},
      },
      ...WINDOW_PROPERTIES,
    }),
    RESPONSES_SUPPORT
  );
}

/** A quest's rows as records of `responses`: every cell under its header text, in one object. */
export class QuestAnswers extends QuestResponseRecords<ObjectCell> {
  /** The keys of the answers object. */
  names(header: readonly string[]): string[] {
    return answerKeys(header);
  }

  protected cells(header: string[], treatments: Treatment[]): ObjectCell[] {
    return this.names(header).flatMap((key, index): ObjectCell[] =>
      treatments[index] === 'drop' ? [] : [{key, index, ...(treatments[index] === 'hash' ? {hash: true} : {})}]
    );
  }

  protected answerField(cells: ObjectCell[]): RecordField {
    return {kind: 'cells', name: ANSWERS_FIELD, cells};
  }
}

/** The `responses` stream (stream_layout "combined"): every configured quest, its rows as answers objects. */
export const responsesStream = questsStream(
  'combined',
  RESPONSES_STREAM,
  RESPONSES_SUPPORT,
  responsesCatalogStream,
  QuestAnswers
);
