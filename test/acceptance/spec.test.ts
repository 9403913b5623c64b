// CAT "spec" group, replicated on the built bin/main.

import {simConfig} from '../helpers/fixtures';
import {runConnector, RunResult} from '../helpers/connector';
import {Simulator, startSimulator} from '../simulator';
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
  let sim: Simulator;
  let result: RunResult;
  let spec: SpecJson;
  const expected = readJson<SpecJson>('resources/spec.json');

  beforeAll(async () => {
    sim = await startSimulator({exportDurationMs: 20, quests: [{id: '0b0b0b0b-1c1c-4d2d-8e3e-4f4f4f4f4f4f', rows: 1}]});
    result = await runConnector(['spec']);
    const specs = result.messages.filter((m) => m.type === 'SPEC') as unknown as {spec: SpecJson}[];
    spec = specs[0]?.spec;
  });
  afterAll(() => sim.close());

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
