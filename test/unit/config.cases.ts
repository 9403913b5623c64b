// The config checks come from the spec (src/core/spec-declaration.ts, written out as resources/spec.json): each option's schema decides, with JSON Schema's
// meaning of its keywords, and the messages say what the schema asks for.

import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import fs from 'fs';

import {exportSettings} from '../../src/api/client';
import {parseConfig} from '../../src/core/config';
import {questIdOf} from '../../src/core/config-rules';
import {projectFile} from '../../src/core/project-file';
import {connectorSpec, violation} from '../../src/core/spec';
import {REQUIRED_OPTIONS} from '../helpers/fixtures';

const NOW = Date.parse('2026-06-01T00:00:00Z');
const BASE = REQUIRED_OPTIONS;

function messageOf(config: Record<string, unknown>): string {
  try {
    parseConfig({...BASE, ...config}, NOW);
    return 'accepted';
  } catch (err) {
    return (err as Error).message;
  }
}

/** Values of every kind, and around each bound and pattern of the spec. */
function samples(): unknown[] {
  const values: unknown[] = [
    true,
    false,
    null,
    {},
    'text',
    '',
    '  ',
    'PIPE',
    'TEXT',
    'per_quest',
    'snake',
    '42',
    '0x1',
  ];
  values.push('2024-01-01T00:00:00Z', '2024-01-01T00:00:00.5Z', '2024-01-01', '2024-02-30T00:00:00Z');
  values.push('https://api.questback.com', 'ftp://x', '1b4e28ba-2fa1-11d2-883f-0016d3cca427');
  values.push([], ['1b4e28ba-2fa1-11d2-883f-0016d3cca427'], ['a'], ['1b4e28ba-2fa1-11d2-883f-0016d3cca427', 'A']);
  values.push(['1b4e28ba-2fa1-11d2-883f-0016d3cca427', '1b4e28ba-2fa1-11d2-883f-0016d3cca427'], [3]);
  for (const option of Object.values(connectorSpec().connectionSpecification.properties)) {
    for (const bound of [option.minimum, option.maximum]) {
      if (bound !== undefined) values.push(bound, bound - 1, bound + 1, bound - 0.01, bound + 0.01, bound + 0.5);
    }
    values.push(...(option.enum ?? []), option.default);
  }
  return values;
}

describe('options from the spec', () => {
  test('resources/spec.json is the declared spec written out (npm run spec writes it again)', () => {
    // The same text but for layout (prettier's, which npm run lint checks): every key in the same order.
    const written: unknown = JSON.parse(fs.readFileSync(projectFile('resources/spec.json'), 'utf8'));
    expect(JSON.stringify(written, null, 1)).toBe(JSON.stringify(connectorSpec(), null, 1));
  });

  test('the export settings follow from the options, in the order their digest has always had', () => {
    const settings = exportSettings(parseConfig({...BASE, value_type: 'TEXT', field_separator: 'TAB'}, NOW).config);
    expect(JSON.stringify(settings)).toBe(
      '{"exportType":"CSV","valueType":"TEXT","expandMultipleChoiceToColumns":false,"includeRespondentInformation":false,"fieldSeparator":"TAB","showOtherAsText":false}'
    );
  });

  test('each option checks a value as a JSON Schema validator does', () => {
    const ajv = new Ajv({strict: false});
    addFormats(ajv);
    let compared = 0;
    for (const [name, option] of Object.entries(connectorSpec().connectionSpecification.properties)) {
      const validate = ajv.compile(option);
      for (const value of samples()) {
        expect({name, value, valid: violation(option, value) === undefined}).toEqual({
          name,
          value,
          valid: validate(value),
        });
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(1000);
  });

  test('messages say what the schema asks for, and the default to fall back on', () => {
    expect(messageOf({max_concurrent_exports: 0})).toBe(
      "Invalid configuration: 'max_concurrent_exports' must be a whole number from 1 to 32, got 0. Leave it empty for the default, 8."
    );
    expect(messageOf({lookback_days: 'a week'})).toMatch(
      /'lookback_days' must be a number of days from 0 to 90, got "a week"/
    );
    expect(messageOf({export_timeout_minutes: 0.01})).toMatch(
      /'export_timeout_minutes' must be a number of minutes from 0.05 to 1440/
    );
    expect(messageOf({skip_inaccessible_quests: 'yes'})).toMatch(
      /'skip_inaccessible_quests' must be true or false, got "yes"/
    );
    expect(messageOf({column_names: 'snake'})).toMatch(/'column_names' must be "warehouse" or "survey", got "snake"/);
    expect(messageOf({field_separator: 'pipe'})).toMatch(
      /'field_separator' must be one of PIPE, COMMA, SEMICOLON, TAB, got "pipe"/
    );
    expect(messageOf({project_id: '12a'})).toMatch(
      /'project_id' must be digits only, got "12a"\. Leave it empty for the default, \d+\./
    );
    expect(messageOf({window_days: 2.5})).toMatch(
      /'window_days' must be a whole number of days from 1 to 3650 \(or left out, so that windows follow the data\), got 2.5\.$/
    );
    expect(messageOf({client_secret: ['hunter2']})).toBe(
      "Invalid configuration: 'client_secret' must be a string, got object."
    );
  });

  test('empty values fall back to the defaults; text is trimmed; value_type is left to the service beyond upper-case names', () => {
    const {config} = parseConfig(
      {...BASE, max_concurrent_exports: '', stream_layout: ' combined ', value_type: 'BOGUS'},
      NOW
    );
    expect(config).toMatchObject({max_concurrent_exports: 8, stream_layout: 'combined', value_type: 'BOGUS'});
    expect(messageOf({value_type: 'text'})).toMatch(
      /'value_type' must be an upper-case option name like ORDER_NUMBER, got "text"/
    );
  });
});

describe('quest_ids as people copy them', () => {
  const ID = '1b4e28ba-2fa1-41d2-883f-0016d3cca427';
  const OTHER = '3f6c1a52-8d4e-4b7a-9c21-5e0d7f8a1b34';

  test('spaces, upper case and braces (a GUID as Windows tools copy it) are cleaned to the plain id', () => {
    const {config} = parseConfig(
      {...BASE, quest_ids: [` {${ID.toUpperCase()}} `, `{ ${OTHER} }`, '5E0D7F8A-1B34-4C21-9B7A-3F6C1A528D4E ']},
      NOW
    );
    expect(config.quest_ids).toEqual([ID, OTHER, '5e0d7f8a-1b34-4c21-9b7a-3f6c1a528d4e']);
  });

  test.each([`{${ID}`, `${ID}}`, `{{${ID}}}`, `(${ID})`, '{}'])('%s is still not a quest id', (id) => {
    expect(messageOf({quest_ids: [id]})).toContain(`quest_ids[0] is ${JSON.stringify(id)}, which is not a quest id.`);
  });

  test('the Airbyte form (the spec pattern) takes an id exactly when the connector cleans it to one', () => {
    const ajv = new Ajv({strict: false});
    const form = ajv.compile(connectorSpec().connectionSpecification.properties.quest_ids.items as object);
    const ids = [ID, ID.toUpperCase(), ` ${ID} `, `{${ID}}`, ` {${ID.toUpperCase()}} `, `{ ${ID} }`, `\t${ID}\n`];
    const notIds = [
      `{${ID}`,
      `${ID}}`,
      `{{${ID}}}`,
      `(${ID})`,
      '{}',
      `${ID}x`,
      `${ID.slice(1)}`,
      '',
      ' ',
      `${ID} ${OTHER}`,
    ];
    for (const id of [...ids, ...notIds])
      expect({id, form: form(id), connector: questIdOf(id) !== undefined}).toEqual({
        id,
        form: ids.includes(id),
        connector: ids.includes(id),
      });
  });

  test('an id in braces and the same id without are one quest listed twice', () => {
    expect(messageOf({quest_ids: [ID, `{${ID}}`]})).toMatch(new RegExp(`quest id ${ID} is listed twice`));
  });
});

describe('sensitive_columns and hash_salt', () => {
  const SALT = 'pepper of 16 chars+';
  const hashEmail = {sensitive_columns: [{column: 'E-mail', action: 'hash'}]};

  test('a hashed column needs the salt; a short salt is refused; neither message shows the salt', () => {
    expect(messageOf(hashEmail)).toBe(
      "Invalid configuration: 'sensitive_columns' hashes \"E-mail\", which needs 'hash_salt', the key of the hashes; it is missing. Give a random text of at least 16 characters (e.g. the output of `openssl rand -hex 32`), and keep it: another salt gives other hashes."
    );
    expect(messageOf({...hashEmail, hash_salt: '   '})).toMatch(/which needs 'hash_salt'.*it is missing/);
    const short = 'short-salt';
    const message = messageOf({...hashEmail, hash_salt: short});
    expect(message).toBe("Invalid configuration: 'hash_salt' must be at least 16 characters, got string.");
    expect(message).not.toContain(short);
    // A salt pasted where it does not belong is masked in the message too.
    expect(messageOf({...hashEmail, hash_salt: SALT, api_url: `ftp://${SALT}`})).not.toContain(SALT);
    expect(messageOf({sensitive_columns: [{column: 'E-mail', action: 'drop'}]})).toBe('accepted');
  });

  test('each entry names a column once and says what to do; actions in any case, columns trimmed', () => {
    const {config} = parseConfig(
      {
        ...BASE,
        sensitive_columns: [
          {column: ' E-mail ', action: 'HASH'},
          {column: 'phone', action: 'drop'},
        ],
        hash_salt: SALT,
      },
      NOW
    );
    expect(config.sensitive_columns).toEqual([
      {column: 'E-mail', action: 'hash'},
      {column: 'phone', action: 'drop'},
    ]);
    expect(config.hash_salt).toBe(SALT);
    expect(parseConfig(BASE, NOW).config.sensitive_columns).toEqual([]);
    expect(messageOf({sensitive_columns: 'E-mail'})).toMatch(
      /'sensitive_columns' must be a list of columns and what to do/
    );
    expect(messageOf({sensitive_columns: [{action: 'drop'}]})).toMatch(/sensitive_columns\[0\] must name a column/);
    expect(messageOf({sensitive_columns: [{column: 'Phone', action: 'mask'}]})).toMatch(
      /sensitive_columns\[0\] \("Phone"\) must say what to do with the column: "action" is one of hash, drop, keep, got "mask"/
    );
    expect(messageOf({sensitive_columns: [{column: 'Phone'}]})).toMatch(/got null/);
    expect(
      messageOf({
        sensitive_columns: [
          {column: 'Phone', action: 'drop'},
          {column: 'Phone ', action: 'keep'},
        ],
      })
    ).toMatch(/sensitive_columns\[1\] names "Phone" again \(see sensitive_columns\[0\]\)/);
  });
});
