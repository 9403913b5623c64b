// CAT "spec" group, replicated on the built bin/main.

import {DEFAULTS, parseConfig, SEPARATORS} from '../../src/core/config';
import {REQUIRED_OPTIONS, simConfig, startWorld, World} from '../helpers/fixtures';
import {RunResult} from '../helpers/connector';
import {Simulator} from '../../simulator';
import {
  additionalPropertiesProblems,
  draft07Problems,
  groupProblems,
  isSecretName,
  keywordLocations,
  newAjv,
  oneOfProblems,
  orderProblems,
  readJson,
  SchemaNode,
  secretProblems,
  typeArrayProblems,
} from './support';

interface SpecJson {
  connectionSpecification: SchemaNode;
  [key: string]: unknown;
}

const FORBIDDEN = ['$ref', 'allOf', 'anyOf', 'not', 'patternProperties', 'if', 'then', 'else'];

describe('spec', () => {
  let world: World;
  let sim: Simulator;
  let result: RunResult;
  let spec: SpecJson;
  const expected = readJson<SpecJson>('resources/spec.json');

  beforeAll(async () => {
    world = await startWorld({exportDurationMs: 20, quests: [{id: '0b0b0b0b-1c1c-4d2d-8e3e-4f4f4f4f4f4f', rows: 1}]});
    sim = world.sim;
    result = await world.run(['spec']);
    const specs = result.messages.filter((m) => m.type === 'SPEC') as unknown as {spec: SpecJson}[];
    spec = specs[0]?.spec;
  });
  afterAll(() => world.close());

  test('prints exactly one SPEC message, only valid protocol lines, and exits 0', () => {
    expect(result.invalid).toEqual([]);
    expect(result.messages.map((m) => m.type)).toEqual(['SPEC']);
    expect(result.code).toBe(0);
  });

  test('output equals resources/spec.json', () => {
    // Every field of the file, unchanged; the kit may add fields of its own beside them.
    for (const [key, value] of Object.entries(expected)) expect({key, value: spec[key]}).toEqual({key, value});
    expect(spec.connectionSpecification).toEqual(expected.connectionSpecification);
  });

  test('connectionSpecification is a valid draft-07 schema', () => {
    expect(draft07Problems(spec.connectionSpecification)).toEqual([]);
  });

  test('the config used in tests validates against it', () => {
    const validate = newAjv().compile(spec.connectionSpecification);
    const config = simConfig(sim);
    expect({valid: validate(config), errors: validate.errors ?? null}).toEqual({valid: true, errors: null});
  });

  test('required fields are declared properties', () => {
    const props = spec.connectionSpecification.properties as Record<string, SchemaNode>;
    const required = spec.connectionSpecification.required as string[];
    expect(required.length).toBeGreaterThan(0);
    expect(required.filter((name) => !(name in props))).toEqual([]);
  });

  test('secret-named properties are airbyte_secret', () => {
    // The checker itself: a secret-named string must be marked, a boolean must not be.
    expect(
      isSecretName('client_secret') &&
        isSecretName('apiToken') &&
        isSecretName('private_key') &&
        !isSecretName('client_id')
    ).toBe(true);
    expect(
      secretProblems({properties: {password: {type: 'string'}, use_token: {type: 'boolean', airbyte_secret: true}}})
    ).toHaveLength(2);

    expect(secretProblems(spec.connectionSpecification)).toEqual([]);
    const props = spec.connectionSpecification.properties as Record<string, SchemaNode>;
    expect(props.client_secret.airbyte_secret).toBe(true);
  });

  test('no $ref, allOf, anyOf, not, patternProperties, if/then/else', () => {
    expect(keywordLocations({properties: {not: {type: 'string'}, a: {allOf: []}}}, FORBIDDEN)).toEqual([
      '/properties/a/allOf',
    ]);
    expect(keywordLocations(spec.connectionSpecification, FORBIDDEN)).toEqual([]);
  });

  test('type arrays are only [T, "null"]', () => {
    expect(
      typeArrayProblems({properties: {a: {type: ['string', 'integer']}, b: {type: ['null', 'string']}}})
    ).toHaveLength(1);
    expect(typeArrayProblems(spec.connectionSpecification)).toEqual([]);
  });

  test('additionalProperties, if present, is true', () => {
    expect(additionalPropertiesProblems({additionalProperties: false}, (v) => v === true)).toHaveLength(1);
    expect(additionalPropertiesProblems(spec.connectionSpecification, (v) => v === true)).toEqual([]);
  });

  test('oneOf variants have properties and one common const', () => {
    const good = {oneOf: [{properties: {kind: {const: 'a'}}}, {properties: {kind: {const: 'b'}, x: {type: 'string'}}}]};
    const bad = {oneOf: [{properties: {kind: {const: 'a'}}}, {type: 'object'}]};
    expect(oneOfProblems(good)).toEqual([]);
    expect(oneOfProblems(bad)).toHaveLength(1);
    expect(oneOfProblems(spec.connectionSpecification)).toEqual([]);
  });

  test('order values are unique', () => {
    expect(orderProblems({properties: {a: {order: 0}, b: {order: 0}}})).toHaveLength(1);
    expect(orderProblems(spec.connectionSpecification)).toEqual([]);
    const props = spec.connectionSpecification.properties as Record<string, SchemaNode>;
    expect(Object.values(props).every((p) => Number.isInteger(p.order))).toBe(true);
  });

  test('groups, if used, are well formed', () => {
    expect(groupProblems({properties: {a: {group: 'auth'}}})).toHaveLength(1);
    expect(groupProblems(spec.connectionSpecification)).toEqual([]);
  });
});

// The setup form as a person fills it in, checked against the code that validates the config
// (resources/spec.json is the one list of options, defaults and ranges; src/core/config.ts applies it).
describe('spec form agrees with the config code', () => {
  const spec = readJson<SpecJson>('resources/spec.json');
  const form = spec.connectionSpecification;
  const props = form.properties as Record<string, SchemaNode>;
  const NOW = Date.parse('2026-06-01T00:00:00Z');
  const base = REQUIRED_OPTIONS;
  const accepts = (key: string, value: unknown): boolean => {
    try {
      parseConfig({...base, [key]: value}, NOW);
      return true;
    } catch {
      return false;
    }
  };
  const byOrder = Object.entries(props)
    .sort(([, a], [, b]) => (a.order as number) - (b.order as number))
    .map(([name]) => name);

  test('the parsed config holds every option of the form and nothing else; an unknown key is warned about', () => {
    const {config, warnings} = parseConfig(
      {...base, window_days: 7, hash_salt: 'a salt of 16 chars', windowDays: 7},
      NOW
    );
    expect(Object.keys(config).sort()).toEqual(Object.keys(props).sort());
    expect(warnings).toEqual(["Unknown option 'windowDays' is ignored: did you mean 'window_days'?"]);
  });

  test('defaults are the form defaults, applied when an option is left out; window_days has none (windows follow the data)', () => {
    const declared = Object.fromEntries(
      Object.entries(props)
        .filter(([, p]) => 'default' in p)
        .map(([name, p]) => [name, p.default])
    );
    expect(Object.keys(declared).length).toBeGreaterThan(10);
    expect(declared).toEqual({...DEFAULTS});
    const {config} = parseConfig(base, NOW);
    const applied = Object.fromEntries(
      Object.keys(declared).map((name) => [name, (config as object)[name as keyof object]])
    );
    expect(applied).toEqual(declared);
    expect('default' in props.window_days).toBe(false);
    expect(config.window_days).toBeUndefined();
    expect(String(props.window_days.description)).toMatch(/Leave empty to let windows follow the data/);
  });

  test('numeric ranges and integer types are the ones the config enforces, and the descriptions say them', () => {
    const numeric = Object.entries(props).filter(([, p]) => p.type === 'integer' || p.type === 'number');
    expect(numeric.length).toBeGreaterThan(5);
    for (const [name, p] of numeric)
      expect({name, range: [typeof p.minimum, typeof p.maximum]}).toEqual({name, range: ['number', 'number']});
    for (const [name, p] of numeric) {
      const min = p.minimum as number;
      const max = p.maximum as number;
      const step = p.type === 'integer' ? 1 : Math.min(0.01, min / 2 || 0.01);
      expect({name, min: accepts(name, min), max: accepts(name, max)}).toEqual({name, min: true, max: true});
      expect({name, below: accepts(name, min - step), above: accepts(name, max + step)}).toEqual({
        name,
        below: false,
        above: false,
      });
      // An integer option refuses fractions; a number option takes them.
      expect({name, fraction: accepts(name, min + 0.5)}).toEqual({name, fraction: p.type === 'number'});
      const text = String(p.description);
      for (const bound of [min, max])
        expect({name, bound, said: text.includes(bound.toLocaleString('en-US'))}).toEqual({name, bound, said: true});
    }
  });

  test('enumerations: value_type, column_names, field_separator; the config accepts each value', () => {
    expect(props.value_type.enum).toEqual(['ORDER_NUMBER', 'TEXT']);
    expect(String(props.value_type.description)).toMatch(/ORDER_NUMBER.*documents/);
    expect(String(props.value_type.description)).toMatch(/TEXT.*older API.*"raw value as text"/);
    expect(props.column_names.enum).toEqual(['warehouse', 'survey']);
    expect(props.field_separator.enum).toEqual(Object.keys(SEPARATORS));
    for (const key of ['value_type', 'column_names', 'field_separator'])
      for (const value of props[key].enum as string[])
        expect({key, value, ok: accepts(key, value)}).toEqual({key, value, ok: true});
    expect(accepts('column_names', 'snake')).toBe(false);
  });

  test('field_separator is accepted but hidden from the form, with its default', () => {
    expect(props.field_separator.airbyte_hidden).toBe(true);
    expect(props.field_separator.default).toBe(DEFAULTS.field_separator);
    expect(
      Object.entries(props)
        .filter(([, p]) => p.airbyte_hidden === true)
        .map(([n]) => n)
    ).toEqual(['field_separator']);
  });

  test('order: what a user fills in first, then personal data and column names, hidden fields last', () => {
    expect(byOrder.slice(0, 6)).toEqual([
      'client_id',
      'client_secret',
      'quest_ids',
      'start_date',
      'include_respondent_information',
      'column_names',
    ]);
    expect(byOrder[byOrder.length - 1]).toBe('field_separator');
    // The two optional fields among the first are shown, not folded under "Optional fields".
    expect([props.include_respondent_information.always_show, props.column_names.always_show]).toEqual([true, true]);
    expect(String(props.include_respondent_information.title)).toMatch(/personal data/);
  });

  test('groups: every field in one, the first group holds the required fields, groups in field order', () => {
    const groups = (form.groups as {id: string; title?: string}[]).map((g) => g.id);
    expect(Object.entries(props).filter(([, p]) => typeof p.group !== 'string')).toEqual([]);
    const required = form.required as string[];
    for (const name of required) expect({name, group: props[name].group}).toEqual({name, group: groups[0]});
    // Walking the fields by order never returns to a group left behind (hidden fields aside).
    const visible = byOrder.filter((n) => props[n].airbyte_hidden !== true).map((n) => props[n].group as string);
    const runs = visible.filter((g, i) => i === 0 || visible[i - 1] !== g);
    expect(runs).toEqual(groups);
  });

  test('titles carry no "(advanced)" suffix; every field says what it does', () => {
    expect(Object.values(props).filter((p) => /advanced/i.test(String(p.title)))).toEqual([]);
    for (const [name, p] of Object.entries(props))
      expect({name, long: String(p.description ?? '').length > 60}).toEqual({name, long: true});
  });

  test('quest_ids and start_date show concrete examples', () => {
    expect(String(props.quest_ids.description)).toMatch(
      /for example.*https:\/\/app\.questback\.com\/quests\/1b4e28ba-2fa1-11d2-883f-0016d3cca427\//i
    );
    expect(props.start_date.examples).toEqual(['2024-01-01T00:00:00Z']);
    expect(String(props.start_date.description)).toContain('2024-01-01T00:00:00Z');
  });
});
