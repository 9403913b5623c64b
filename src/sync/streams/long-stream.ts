import {QuestbackConfig} from '../../core/config';
import {AnswerCell, RecordField} from '../output-port';
import {
  CURSOR_FIELD,
  objectSchema,
  stringProperty,
  questionParts,
  recordColumns,
  WINDOW_PROPERTIES,
} from './record-columns';
import {QuestResponseRecords, questsStream} from './quests-stream';
import {describeConfigured, Treatment} from './sensitive-columns';
import {catalogStream, incrementalSupport} from './stream-definition';

// The long layout: one stream `answers` for every quest, one record per non-empty answer cell, the
// column named as the wide table names it and split into question and option as `columns` splits it.

export const ANSWERS_STREAM = 'answers';
const ANSWERS_SUPPORT = incrementalSupport(CURSOR_FIELD, [['quest_id'], ['response_id'], ['column']]);

/** The stream as discover lists it: no export needed, the schema is the same for every quest. */
function answersCatalogStream(config: QuestbackConfig) {
  return catalogStream(
    ANSWERS_STREAM,
    objectSchema({
      quest_id: stringProperty('Id of the quest (survey) the response belongs to.'),
      response_id: stringProperty("The response's id (the export's Response ID column)."),
      created: {
        type: ['null', 'string'],
        format: 'date-time',
        description: "When the response was created (the export's Created column).",
      },
      column: stringProperty(
        "The answer's column: the name the per_quest layout gives it (column_names), the same in the columns stream."
      ),
      header: stringProperty("The column's header text exactly as exported."),
      question: stringProperty(
        'The question: the header without the option part of an expanded multiple-choice column.'
      ),
      option: {
        type: ['null', 'string'],
        description: 'The option of an expanded multiple-choice column ("Question: Option" headers), else null.',
      },
      value: stringProperty(
        `The answer as exported (never empty: empty cells give no record).${describeConfigured(config)}`
      ),
      value_number: {
        type: ['null', 'number'],
        description:
          'The answer as a number when the cell is a plain decimal number (digits, an optional leading "-" and decimal point) that a double holds (it reads back as the same number), else null: the text is always in value.',
      },
      ...WINDOW_PROPERTIES,
    }),
    ANSWERS_SUPPORT
  );
}

/**
 * A quest's rows as records of `answers`: for each non-empty cell of an answer column (all but the
 * Response ID and Created columns, which are every record's key and time; a dropped sensitive column
 * gives none), a record with the response's key, the column's name, header, question and option,
 * and the value.
 */
class QuestLong extends QuestResponseRecords<AnswerCell> {
  /** The `column` values: the names the wide table would give the columns. */
  names(header: readonly string[]): string[] {
    return recordColumns(header, this.config.column_names).map((c) => c.name);
  }

  protected cells(header: string[], treatments: Treatment[], idIndex: number, createdIndex: number): AnswerCell[] {
    const names = this.names(header);
    const parts = questionParts(header);
    return header.flatMap((text, index): AnswerCell[] => {
      if (index === idIndex || index === createdIndex || treatments[index] === 'drop') return [];
      const constants = [
        {name: 'column', value: names[index]},
        {name: 'header', value: text},
        {name: 'question', value: parts[index].question},
        {name: 'option', value: parts[index].option},
      ];
      return [{index, constants, ...(treatments[index] === 'hash' ? {hash: true} : {})}];
    });
  }

  protected answerField(cells: AnswerCell[]): RecordField {
    return {kind: 'answer', cells, value: 'value', number: 'value_number'};
  }
}

/**
 * The `answers` stream (stream_layout "long"): every configured quest read as `responses` is (the
 * same windows, exports, re-use and exactly-once rules), each row written as its answers.
 */
export const answersStream = questsStream('long', ANSWERS_STREAM, ANSWERS_SUPPORT, answersCatalogStream, QuestLong);
