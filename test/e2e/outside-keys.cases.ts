// Keys of the input files (config, catalog, state) and header texts named __proto__, constructor or
// prototype: keys like any other, in every layout; none reaches an object's prototype.
import {createHash} from 'crypto';

import {configuredCatalog, simConfig, startWorld, streamOf, World} from '../helpers/fixtures';
import {errorTraces, records, RunResult, states, warnings} from '../helpers/connector';

const QUEST = 'b0b0b0b0-0000-4000-8000-000000000001';
const KEYS = ['__proto__', 'constructor', 'prototype'];
const HEADER = ['Response ID', 'Created', ...KEYS];
const DAY_MS = 86_400_000;
const PAST = new Date(Date.now() - 30 * DAY_MS).toISOString().replace(/\.\d+Z$/, 'Z');
const ROWS = [3, 2, 1].map((daysAgo, i) => [
  String(100 + i),
  new Date(Date.now() - daysAgo * DAY_MS).toISOString(),
  `proto ${i}`,
  `ctor ${i}`,
  `type ${i}`,
]);
/** Every key a plain object gives meaning to, each holding what a polluted prototype would show. */
const NASTY = `{${KEYS.map((k) => `"${k}": {"polluted": ["${PAST}", "x"], "namespace": ["${PAST}", "x"]}`).join(', ')}}`;
/** A JSON object text with the nasty keys and `more` (members as JSON text), parsed as a file would be. */
const withNasty = (more: string): Record<string, unknown> =>
  JSON.parse(`{${NASTY.slice(1, -1)}${more ? `, ${more}` : ''}}`) as Record<string, unknown>;

const SENSITIVE = {
  sensitive_columns: [
    {column: '__proto__', action: 'hash'},
    {column: 'constructor', action: 'drop'},
  ],
  hash_salt: 'a-salt-of-sixteen-or-more-characters',
};

let world: World;
const untouched = Object.getOwnPropertyNames(Object.prototype).sort();

beforeAll(async () => {
  world = await startWorld({
    seed: 34,
    exportDurationMs: 20,
    quests: [{id: QUEST, table: {header: HEADER, rows: ROWS}}],
  });
});
afterAll(() => world.close());
afterEach(() => {
  const added = Object.getOwnPropertyNames(Object.prototype).filter((name) => !untouched.includes(name));
  // Undone before the verdict, so that a failure here does not spread to the cases after it.
  for (const name of added) delete (Object.prototype as Record<string, unknown>)[name];
  expect(added).toEqual([]);
});

function ok(result: RunResult): void {
  expect(errorTraces(result.messages)).toEqual([]);
  expect(result.code).toBe(0);
}

async function read(config: Record<string, unknown>, state: unknown): Promise<RunResult> {
  const configFile = world.file(config);
  const discover = await world.run(['discover', '--config', configFile]);
  ok(discover);
  const catalog = world.file(configuredCatalog(discover.messages, 'incremental'));
  return world.run(['read', '--config', configFile, '--catalog', catalog, '--state', world.file(state)]);
}

const streamState = (name: string, state: unknown) => ({
  type: 'STREAM',
  stream: {stream_descriptor: {name}, stream_state: state},
});
const digest = (text: string): string => createHash('sha256').update(text).digest('base64url').slice(0, 8);
const lastState = (result: RunResult, name: string): Record<string, unknown> =>
  states(result.messages)
    .filter((s) => s.state.stream.stream_descriptor.name === name)
    .map((s) => s.state.stream.stream_state as unknown as Record<string, unknown>)
    .pop() as Record<string, unknown>;

test('per_quest with survey names: header texts, sensitive_columns and a columns state keyed by them', async () => {
  const config = simConfig(world.sim, {quest_ids: [QUEST], column_names: 'survey', ...SENSITIVE});
  const columnsState = {
    cursor: PAST,
    cursor_field: ['seen_at'],
    columns: withNasty(`"${QUEST}": ${JSON.stringify({prototype: [PAST, digest('prototype')]})}`),
  };
  const questState = withNasty(`"cursor": "${PAST}", "cursor_field": ["Created"]`);
  const result = await read(config, [streamState('columns', columnsState), streamState(streamOf(QUEST), questState)]);
  ok(result);
  const quest = records(result.messages).filter((r) => r.record.stream === streamOf(QUEST));
  expect(quest).toHaveLength(ROWS.length);
  for (const {record} of quest) {
    expect(Object.getOwnPropertyNames(record.data)).toEqual(expect.arrayContaining(['__proto__', 'prototype']));
    expect(Object.getOwnPropertyDescriptor(record.data, '__proto__')?.value).toMatch(/^[0-9a-f]{64}$/);
    expect(Object.hasOwn(record.data, 'constructor')).toBe(false);
  }
  expect(quest.map((r) => r.record.data.prototype)).toEqual(ROWS.map((r) => r[4]));
  const columns = records(result.messages).filter((r) => r.record.stream === 'columns');
  expect(columns.map((r) => [r.record.data.column, r.record.data.sensitive])).toEqual([
    ['Response ID', null],
    ['Created', null],
    ['__proto__', 'hashed'],
    ['constructor', 'dropped'],
    ['prototype', null],
  ]);
  for (const {record} of columns) expect(Object.keys(record.data)).not.toContain('namespace');
  // The state's first sight of a column is kept under a key named like a prototype's.
  expect(columns.find((r) => r.record.data.column === 'prototype')?.record.data.first_seen_at).toBe(PAST);
  const seen = lastState(result, 'columns').columns as Record<string, Record<string, unknown>>;
  expect(Object.keys(seen).sort()).toEqual([...KEYS, QUEST].sort());
  expect(Object.keys(seen[QUEST]).sort()).toEqual([...HEADER].sort());
});

test('combined: answers keyed by such header texts, a quests map with such keys', async () => {
  const config = simConfig(world.sim, {quest_ids: [QUEST], stream_layout: 'combined', ...SENSITIVE});
  const result = await read(config, [streamState('responses', {quests: withNasty('')})]);
  ok(result);
  const got = records(result.messages).filter((r) => r.record.stream === 'responses');
  expect(got).toHaveLength(ROWS.length);
  for (const {record} of got) {
    const answers = record.data.answers as Record<string, unknown>;
    expect(Object.getOwnPropertyNames(answers).sort()).toEqual(['Created', 'Response ID', '__proto__', 'prototype']);
  }
  const quests = lastState(result, 'responses').quests as Record<string, unknown>;
  expect(Object.keys(quests).sort()).toEqual([...KEYS, QUEST].sort());
});

test('long: a record per answer under such header texts', async () => {
  const config = simConfig(world.sim, {quest_ids: [QUEST], stream_layout: 'long'});
  const result = await read(config, []);
  ok(result);
  const headers = records(result.messages)
    .filter((r) => r.record.stream === 'answers')
    .map((r) => r.record.data.header);
  expect(headers.filter((h) => h === '__proto__')).toHaveLength(ROWS.length);
  expect(new Set(headers)).toEqual(new Set(KEYS));
});

test('a state of the older name -> state form, a config and a catalog with such keys', async () => {
  const config = {...simConfig(world.sim, {quest_ids: [QUEST]}), ...withNasty('')};
  const configFile = world.file(config);
  const discover = await world.run(['discover', '--config', configFile]);
  ok(discover);
  // Each configured stream's schema also lists fields named like a prototype's keys.
  const catalog = configuredCatalog(discover.messages, 'incremental') as {
    streams: {stream: {json_schema: {properties: Record<string, unknown>}}}[];
  };
  for (const s of catalog.streams)
    s.stream.json_schema.properties = {...s.stream.json_schema.properties, ...withNasty('')};
  const state = withNasty(`"${streamOf(QUEST)}": {"cursor": "${PAST}", "cursor_field": ["Created"]}`);
  const result = await world.run([
    'read',
    '--config',
    configFile,
    '--catalog',
    world.file(catalog),
    '--state',
    world.file(state),
  ]);
  ok(result);
  expect(records(result.messages).filter((r) => r.record.stream === streamOf(QUEST))).toHaveLength(ROWS.length);
  for (const key of KEYS) expect(warnings(result.messages)).toContain(`Unknown option '${key}' is ignored.`);
});
