// The long layout as tests read it: the records of the one stream `answers`, and the answers the
// simulator's truth holds, one per non-empty cell of a column other than Response ID and Created.

import {ExportSettings, Simulator} from '../../simulator';
import {warehouseNames} from '../../src/sync/streams/column-names';
import {CONNECTOR_FIELDS} from '../../src/sync/streams/record-columns';
import {RecordMessage, repeated, RunResult} from './connector';
import {streamData} from './combined';

export interface AnswerRecord {
  quest_id: string;
  response_id: string;
  created: string | null;
  column: string;
  header: string;
  question: string;
  option: string | null;
  value: string;
  value_number: number | null;
  _questback_window_start: string;
  _questback_window_end: string;
}

/** The records of `answers`, as their data. */
export const answerRecords = (run: Pick<RunResult, 'messages'> | RecordMessage[]): AnswerRecord[] =>
  streamData<AnswerRecord>(run, 'answers');

/** The key of an answer: quest, response, column. */
export const answerKey = (a: Pick<AnswerRecord, 'quest_id' | 'response_id' | 'column'>): string =>
  `${a.quest_id} ${a.response_id} ${a.column}`;

/**
 * The test's own reading of "a number", written by hand here: a plain decimal number that a double
 * reads back as the same text, but for trailing fractional zeros and the sign of zero (for the
 * magnitudes JavaScript writes without an exponent, which the tests' numbers keep to).
 */
const isPlainNumber = (s: string): boolean =>
  /^-?(0|[1-9]\d*)(\.\d+)?$/.test(s) &&
  String(Number(s)) ===
    s
      .replace(/(\.\d*?)0+$/, '$1')
      .replace(/\.$/, '')
      .replace(/^-0$/, '0');

/**
 * The answers of the quest's truth, by key: each non-empty cell of every column but Response ID and
 * Created, its column named as the wide layout names it (warehouse names, the connector's fields
 * reserved), its number when the text is a plain number. `rowIds` limits it to those responses.
 */
export function truthAnswers(
  sim: Simulator,
  questId: string,
  settings: ExportSettings = {},
  rowIds?: ReadonlySet<string>
): Map<string, Omit<AnswerRecord, '_questback_window_start' | '_questback_window_end'>> {
  const {header, rows} = sim.groundTruth(questId, settings);
  const names = warehouseNames(header, CONNECTOR_FIELDS);
  const created = header.indexOf('Created');
  const out = new Map<string, Omit<AnswerRecord, '_questback_window_start' | '_questback_window_end'>>();
  for (const row of rows) {
    if (rowIds && !rowIds.has(row[0])) continue;
    header.forEach((text, i) => {
      if (i === 0 || i === created || row[i] === '') return;
      const answer = {
        quest_id: questId,
        response_id: row[0],
        created: row[created],
        column: names[i],
        header: text,
        ...questionOf(header, i),
        value: row[i],
        value_number: isPlainNumber(row[i]) ? Number(row[i]) : null,
      };
      out.set(answerKey(answer), answer);
    });
  }
  return out;
}

/** Question and option of an expanded multiple-choice column ("<question>: <option>" with siblings), else the header. */
function questionOf(header: readonly string[], i: number): {question: string; option: string | null} {
  const at = header[i].lastIndexOf(': ');
  if (at > 0) {
    const question = header[i].slice(0, at);
    if (header.filter((h) => h.startsWith(`${question}: `)).length > 1)
      return {question, option: header[i].slice(at + 2)};
  }
  return {question: header[i], option: null};
}

/** The quest's records are exactly its truth's answers (of `rowIds`, when given): each once, each field right. */
export function expectLongExact(
  sim: Simulator,
  questId: string,
  got: AnswerRecord[],
  options: {settings?: ExportSettings; rowIds?: ReadonlySet<string>} = {}
): void {
  const mine = got.filter((a) => a.quest_id === questId);
  const keys = mine.map(answerKey);
  expect({questId, duplicates: repeated(keys)}).toEqual({questId, duplicates: []});
  const truth = truthAnswers(sim, questId, options.settings, options.rowIds);
  expect({questId, keys: [...keys].sort()}).toEqual({questId, keys: [...truth.keys()].sort()});
  const differing = mine.filter((a) => {
    const want = truth.get(answerKey(a));
    const {_questback_window_start: since, _questback_window_end: until, ...fields} = a;
    return JSON.stringify(fields) !== JSON.stringify(want) || !(since < until);
  });
  expect(differing.slice(0, 3)).toEqual([]);
}
