// Which columns a sensitive_columns entry names (header text, either column name, the question of
// expanded options), the keys it may not touch, and what discover and a read say about them.

import {isRespondentColumn, sensitiveHeader, sensitiveNotes} from '../../src/sync/streams/sensitive-columns';
import {parsedConfig} from '../helpers/fixtures';

const Q = '1b4e28ba-2fa1-11d2-883f-0016d3cca427';
const HEADER = [
  'Response ID',
  'Created',
  'E-mail',
  'Phone',
  'Q1. Hvor fornøyd er du? (1-5)',
  'Q3 Favourite colours: Red',
  'Q3 Favourite colours: Blue',
  'Q4 Comment',
];
const SALT = {hash_salt: 'sixteen chars ok!'};

describe('sensitive columns of a header', () => {
  test('an entry names a column by header text, warehouse name, survey name, or the question of its options', () => {
    const config = parsedConfig({
      ...SALT,
      sensitive_columns: [
        {column: 'E-mail', action: 'hash'},
        {column: 'phone', action: 'drop'},
        {column: 'Q3 Favourite colours', action: 'drop'},
        {column: 'q1_hvor_fornoyd_er_du_1_5_85f8ec1e', action: 'hash'},
        {column: 'Q4 Comment', action: 'keep'},
      ],
    });
    const {treatments, matched} = sensitiveHeader(HEADER, config, Q);
    expect(treatments).toEqual(['keep', 'keep', 'hash', 'drop', 'hash', 'drop', 'drop', 'keep']);
    expect(matched.map((m) => m.column)).toEqual(expect.arrayContaining(['E-mail', 'phone', 'Q3 Favourite colours']));
    // The survey naming names a column by its header text, which matches as well.
    const survey = parsedConfig({column_names: 'survey', sensitive_columns: [{column: 'Q4 Comment', action: 'drop'}]});
    expect(sensitiveHeader(HEADER, survey, Q).treatments[7]).toBe('drop');
    // Named twice, the stronger protection wins.
    const twice = parsedConfig({
      ...SALT,
      sensitive_columns: [
        {column: 'Q3 Favourite colours', action: 'hash'},
        {column: 'Q3 Favourite colours: Red', action: 'drop'},
      ],
    });
    expect(sensitiveHeader(HEADER, twice, Q).treatments.slice(5, 7)).toEqual(['drop', 'hash']);
  });

  test('the Response ID and Created columns are keys: hashing or dropping them is a config_error', () => {
    for (const column of ['Response ID', 'created']) {
      const config = parsedConfig({sensitive_columns: [{column, action: 'drop'}]});
      expect(() => sensitiveHeader(HEADER, config, Q)).toThrow(
        expect.objectContaining({message: expect.stringMatching(/a key of every record.*Remove/)})
      );
    }
    expect(
      sensitiveHeader(HEADER, parsedConfig({sensitive_columns: [{column: 'Created', action: 'keep'}]}), Q)
    ).toBeTruthy();
  });

  test('respondent information sent as it is gets a suggestion, changing nothing; an entry matching nothing is named', () => {
    expect(HEADER.filter(isRespondentColumn)).toEqual(['E-mail', 'Phone']);
    const plain = parsedConfig({include_respondent_information: true});
    const notes = sensitiveNotes(HEADER, plain, Q, sensitiveHeader(HEADER, plain, Q));
    expect(notes).toEqual([
      {
        warn: true,
        text: `Quest ${Q}: the export carries respondent information ("E-mail", "Phone") that reaches the warehouse as it is. To protect it, set sensitive_columns to [{"column":"E-mail","action":"hash"},{"column":"Phone","action":"hash"}] and a hash_salt; nothing is changed unless you do.`,
      },
    ]);
    expect(sensitiveHeader(HEADER, plain, Q).treatments.every((t) => t === 'keep')).toBe(true);
    const typo = parsedConfig({
      include_respondent_information: true,
      sensitive_columns: [
        {column: 'Email', action: 'drop'},
        {column: 'Phone', action: 'drop'},
      ],
    });
    const said = sensitiveNotes(HEADER, typo, Q, sensitiveHeader(HEADER, typo, Q)).map((n) => n.text);
    expect(said[0]).toBe(`Quest ${Q}: sensitive columns "Phone": dropped.`);
    expect(said[1]).toMatch(/sensitive_columns names "Email", which match no column of its export/);
    expect(said[2]).toMatch(
      /respondent information \("E-mail"\).*\[\{"column":"Email","action":"drop"\},\{"column":"Phone","action":"drop"\},\{"column":"E-mail","action":"hash"\}\]/
    );
  });
});
