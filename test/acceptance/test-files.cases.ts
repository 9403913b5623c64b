// The files Airbyte's CAT reads (acceptance-test-config.yml, test_files/) agree with the connector:
// checked against the spec, the protocol schema, and bin/main run on the simulator with the sample
// config's quest ids.

import fs from 'fs';
import yaml from 'js-yaml';
import path from 'path';

import {records, RunResult, states, writeJson} from '../helpers/connector';
import {startWorld, streamOf, World} from '../helpers/fixtures';
import {DEFAULT_QUEST_IDS, Simulator} from '../../simulator';
import {
  AirbyteStreamJson,
  catalogOf,
  COLUMNS_CURSOR,
  COLUMNS_STREAM,
  INVITATIONS_STREAM,
  ConfiguredCatalogJson,
  CURSOR_FIELD,
  cursorValuesByField,
  errorsOf,
  isObject,
  newAjv,
  protocolValidator,
  readJson,
  ROOT,
  SchemaNode,
  StateInput,
  summary,
} from './support';

interface SpecJson {
  connectionSpecification: SchemaNode & {properties: Record<string, SchemaNode>};
}

const cursorFieldOf = (stream: string): string => (stream === COLUMNS_STREAM ? COLUMNS_CURSOR : CURSOR_FIELD);

const GROUPS = ['spec', 'connection', 'discovery', 'basic_read', 'full_refresh', 'incremental'];
const CATALOGS = {
  full_refresh: 'test_files/configured_catalog_full.json',
  incremental: 'test_files/configured_catalog_incremental.json',
} as const;

/** The fields two full reads in a row may give differently, by stream (a quest stream's: its window fields). */
const IGNORED: Record<string, string[]> = {
  [COLUMNS_STREAM]: ['first_seen_at', COLUMNS_CURSOR],
  // An invitation's statuses change when it is sent or answered between the reads.
  [INVITATIONS_STREAM]: ['opted_out', 'replied', 'sent', 'sent_at'],
};

describe('test_files and acceptance-test-config.yml', () => {
  const spec = readJson<SpecJson>('resources/spec.json');
  const sample = readJson<Record<string, unknown>>('test_files/sample_config.json');
  const invalid = readJson<Record<string, unknown>>('test_files/invalid_config.json');
  const abnormal = readJson<StateInput[]>('test_files/abnormal_state.json');
  let world: World;
  let sim: Simulator;
  let dir: string;
  /** The sample config, pointed at the simulator (whose quests have the sample's quest ids). */
  let simSample: Record<string, unknown>;

  beforeAll(async () => {
    world = await startWorld({exportDurationMs: 20});
    ({sim, dir} = world);
    simSample = {
      ...sample,
      client_id: sim.clientId,
      client_secret: sim.clientSecret,
      api_url: sim.apiUrl,
      auth_url: sim.authUrl,
      settle_seconds: 0,
    };
  });
  afterAll(async () => {
    await world.close();
  });

  test('sample_config.json validates against the spec and uses its documented defaults', () => {
    const validate = newAjv().compile(spec.connectionSpecification);
    expect({valid: validate(sample), errors: validate.errors ?? null}).toEqual({valid: true, errors: null});
    for (const [key, property] of Object.entries(spec.connectionSpecification.properties)) {
      if ('default' in property) expect({key, value: sample[key]}).toEqual({key, value: property.default});
    }
    expect(sample.quest_ids).toHaveLength(2);
    expect(sample.start_date).toBe('2024-01-01T00:00:00Z');
  });

  test('invalid_config.json is invalid for the spec: a non-UUID quest id and no client_secret', () => {
    const validate = newAjv().compile(spec.connectionSpecification);
    expect(validate(invalid)).toBe(false);
    const errors = (validate.errors ?? []).map((e) => `${e.instancePath} ${e.keyword} ${JSON.stringify(e.params)}`);
    expect(errors.some((e) => e.includes('client_secret'))).toBe(true);
    expect(errors.some((e) => e.startsWith('/quest_ids/0 pattern'))).toBe(true);
  });

  test('invalid_config fails check with FAILED', async () => {
    const result = await world.run(['check', '--config', path.join(ROOT, 'test_files', 'invalid_config.json')]);
    expect(result.invalid).toEqual([]);
    expect(result.code).toBe(0);
    const statuses = result.messages.filter((m) => m.type === 'CONNECTION_STATUS') as unknown as {
      connectionStatus: {status: string; message?: string};
    }[];
    expect(statuses).toHaveLength(1);
    expect(statuses[0].connectionStatus.status).toBe('FAILED');
    expect(statuses[0].connectionStatus.message).toMatch(/client_secret|quest_ids/);
  });

  test('the catalogs validate as configured catalogs, in the mode their name says', () => {
    const validate = protocolValidator('ConfiguredAirbyteCatalog');
    for (const [mode, file] of Object.entries(CATALOGS)) {
      const catalog = readJson<ConfiguredCatalogJson>(file);
      expect({file, errors: errorsOf(validate, catalog)}).toEqual({file, errors: []});
      for (const s of catalog.streams) {
        // A stream that does not support the file's mode is in the one it declares.
        const modes = s.stream.supported_sync_modes ?? [];
        expect(s.sync_mode).toBe(modes.includes(mode) ? mode : modes[0]);
        if (mode === 'incremental') {
          expect(s.cursor_field).toEqual(s.stream.default_cursor_field);
          expect(s.cursor_field).toEqual([cursorFieldOf(s.stream.name)]);
        }
        if (s.destination_sync_mode === 'append_dedup')
          expect(s.primary_key).toEqual(s.stream.source_defined_primary_key);
      }
    }
  });

  test("catalog stream names match the sample config's quest ids, then the columns (and invitations) streams", () => {
    const quests = (sample.quest_ids as string[]).map(streamOf);
    // The incremental catalog holds the streams that support incremental; invitations is full refresh only.
    const expected = {
      full_refresh: [...quests, COLUMNS_STREAM, INVITATIONS_STREAM],
      incremental: [...quests, COLUMNS_STREAM],
    };
    for (const [mode, file] of Object.entries(CATALOGS))
      expect(readJson<ConfiguredCatalogJson>(file).streams.map((s) => s.stream.name)).toEqual(
        expected[mode as keyof typeof expected]
      );
    expect(quests).toEqual(DEFAULT_QUEST_IDS.map(streamOf));
  });

  test('the catalog streams are what discover returns for those quests', async () => {
    const result = await world.run(['discover', '--config', writeJson(dir, 'sample-on-sim.json', simSample)]);
    expect(result.invalid).toEqual([]);
    expect({code: result.code, summary: result.code === 0 ? '' : summary(result)}).toEqual({code: 0, summary: ''});
    const discovered: AirbyteStreamJson[] = catalogOf(result);
    expect(readJson<ConfiguredCatalogJson>(CATALOGS.full_refresh).streams.map((s) => s.stream)).toEqual(discovered);
    expect(readJson<ConfiguredCatalogJson>(CATALOGS.incremental).streams.map((s) => s.stream)).toEqual(
      discovered.filter((s) => s.supported_sync_modes?.includes('incremental'))
    );
  });

  test('abnormal_state.json parses as per-stream state, in the future, for every catalog stream', () => {
    const validate = protocolValidator('AirbyteStateMessage');
    expect(Array.isArray(abnormal)).toBe(true);
    for (const entry of abnormal) {
      expect(errorsOf(validate, entry)).toEqual([]);
      expect(entry.type).toBe('STREAM');
      const cursor = Date.parse(entry.stream.stream_state.cursor);
      expect(Number.isNaN(cursor)).toBe(false);
      expect(cursor).toBeGreaterThan(Date.now() + 100 * 365 * 86_400_000);
      expect(new Date(cursor).toISOString()).toBe(entry.stream.stream_state.cursor);
    }
    const names = readJson<ConfiguredCatalogJson>(CATALOGS.incremental).streams.map((s) => s.stream.name);
    expect(abnormal.map((e) => e.stream.stream_descriptor.name)).toEqual(names);
  });

  test('CAT finds the cursor of every abnormal_state.json stream by its cursor field, in the wire format', () => {
    const catalog = readJson<ConfiguredCatalogJson>(CATALOGS.incremental);
    for (const entry of abnormal) {
      const stream = catalog.streams.find((s) => s.stream.name === entry.stream.stream_descriptor.name);
      const field = (stream?.cursor_field ?? stream?.stream.default_cursor_field ?? [])[0];
      expect(field).toBe(cursorFieldOf(entry.stream.stream_descriptor.name));
      const values = cursorValuesByField(entry.stream.stream_state, field);
      expect(values).toEqual([entry.stream.stream_state.cursor]);
      // The shape of the cursors the connector writes (ISO 8601 UTC, milliseconds), as CAT compares them.
      expect(entry.stream.stream_state.cursor).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    }
  });

  test('abnormal_state.json yields zero records and a STATE per stream', async () => {
    const result: RunResult = await world.run([
      'read',
      '--config',
      writeJson(dir, 'sample-on-sim-read.json', simSample),
      '--catalog',
      path.join(ROOT, CATALOGS.incremental),
      '--state',
      path.join(ROOT, 'test_files', 'abnormal_state.json'),
    ]);
    expect(result.invalid).toEqual([]);
    expect({code: result.code, summary: result.code === 0 ? '' : summary(result)}).toEqual({code: 0, summary: ''});
    expect(records(result.messages)).toHaveLength(0);
    const named = states(result.messages).map((s) => s.state.stream.stream_descriptor.name);
    expect([...new Set(named)]).toEqual(abnormal.map((e) => e.stream.stream_descriptor.name));
  });

  test('acceptance-test-config.yml declares all six groups at high strictness, with files that exist', () => {
    const config = yaml.load(fs.readFileSync(path.join(ROOT, 'acceptance-test-config.yml'), 'utf8'));
    if (!isObject(config) || !isObject(config.acceptance_tests))
      throw new Error('acceptance-test-config.yml has no acceptance_tests');
    expect(config.connector_image).toBe('airbyte/source-questback:dev');
    expect(config.test_strictness_level).toBe('high');
    const groups = config.acceptance_tests;
    expect(Object.keys(groups).sort()).toEqual([...GROUPS].sort());
    const paths: string[] = [];
    for (const name of GROUPS) {
      const group = groups[name];
      if (!isObject(group) || !Array.isArray(group.tests)) throw new Error(`group ${name} declares no tests`);
      expect({group: name, bypassed: group.bypass_reason}).toEqual({group: name, bypassed: undefined});
      expect(group.tests.length).toBeGreaterThan(0);
      for (const t of group.tests) {
        if (!isObject(t)) throw new Error(`a test of ${name} is not an object`);
        expect({group: name, config: t.config_path}).toEqual({group: name, config: expect.any(String)});
        for (const value of [
          t.config_path,
          t.spec_path,
          t.configured_catalog_path,
          isObject(t.future_state) ? t.future_state.future_state_path : undefined,
        ]) {
          if (typeof value === 'string') paths.push(value);
        }
        // Only expect_records may be bypassed (the records are the customer's).
        if (isObject(t.expect_records)) expect(typeof t.expect_records.bypass_reason).toBe('string');
        // At high strictness CAT refuses a custom catalog for basic_read and needs a future state.
        if (name === 'basic_read') expect(t.configured_catalog_path).toBeUndefined();
        if (name === 'incremental')
          expect(isObject(t.future_state) && typeof t.future_state.future_state_path).toBe('string');
      }
    }
    const local = [...new Set(paths)].filter((p) => !p.startsWith('secrets/'));
    expect(local.sort()).toEqual(
      [
        'resources/spec.json',
        CATALOGS.full_refresh,
        CATALOGS.incremental,
        'test_files/abnormal_state.json',
        'test_files/invalid_config.json',
      ].sort()
    );
    for (const p of local)
      expect({path: p, exists: fs.existsSync(path.join(ROOT, p))}).toEqual({path: p, exists: true});
    expect([...new Set(paths)].filter((p) => p.startsWith('secrets/'))).toEqual(['secrets/config.json']);
    // ignored_fields name streams that exist, and every stream's fields set from the sync's own time:
    // CAT compares the records of two full reads whole, as the full catalog configures no primary key.
    const streamNames = readJson<ConfiguredCatalogJson>(CATALOGS.full_refresh).streams.map((s) => s.stream.name);
    const fullRefresh = (groups.full_refresh as {tests: Record<string, unknown>[]}).tests;
    for (const t of fullRefresh) {
      const ignored = isObject(t.ignored_fields) ? t.ignored_fields : {};
      for (const name of Object.keys(ignored)) expect(streamNames).toContain(name);
      for (const name of streamNames) {
        const fields = ((ignored[name] ?? []) as {name: string}[]).map((f) => f.name);
        expect({stream: name, ignored: fields.sort()}).toEqual({
          stream: name,
          ignored: IGNORED[name] ?? ['_questback_window_end', '_questback_window_start'],
        });
      }
    }
  });
});
