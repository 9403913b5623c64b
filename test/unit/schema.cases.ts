import {questSchema} from '../../src/sync/streams/quest-stream';
import {recordColumns, typeColumns} from '../../src/sync/streams/record-columns';

const HEADER = [
  'Response ID',
  'Created',
  'Completed',
  'Hvor fornøyd er du? (1-5)',
  'Dato for siste besøk (åååå-mm-dd)',
];
const ROWS = [
  ['100000001', '2026-05-01T10:00:00.000Z', '2026-05-01T10:05:00.000Z', '4', '2025-12-24'],
  ['100000002', '2026-05-02T11:30:00.123Z', '', '', '2025-01-01'],
];

const schemaOf = (sample: readonly string[][]) =>
  questSchema(typeColumns(recordColumns(HEADER, 'warehouse'), sample)).properties;

describe('column types do not depend on whether the quest had responses', () => {
  test('an empty quest and a quest with responses, side by side: the same schema', () => {
    const empty = schemaOf([]);
    const answered = schemaOf(ROWS);
    expect(answered).toEqual(empty);
    expect({empty: empty.created, answered: answered.created}).toEqual({
      empty: {type: ['null', 'string'], format: 'date-time', title: 'Created'},
      answered: {type: ['null', 'string'], format: 'date-time', title: 'Created'},
    });
  });

  test('only Created is a date-time; every other column is a nullable string, whatever its values', () => {
    for (const sample of [[], ROWS]) {
      const columns = typeColumns(recordColumns(HEADER, 'survey'), sample);
      expect(columns.filter((c) => c.format).map((c) => c.title)).toEqual(['Created']);
    }
    expect(typeColumns(recordColumns(['CREATED'], 'warehouse'), [])[0].format).toBe('date-time');
  });

  test('a sampled Created that is not an ISO 8601 UTC timestamp keeps the column a string, so no value is nulled', () => {
    const local = [['100000003', '01.05.2026 12:00', '', '', '']];
    expect(typeColumns(recordColumns(HEADER, 'warehouse'), local)[1].format).toBeUndefined();
    expect(typeColumns(recordColumns(HEADER, 'warehouse'), [['1', '', '', '', '']])[1].format).toBe('date-time');
  });
});
