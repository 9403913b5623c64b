// CAT "discovery" group, replicated on the built bin/main.

import {simConfig, startWorld, streamOf, World} from '../helpers/fixtures';
import {RunResult, writeJson} from '../helpers/connector';
import {Simulator} from '../../simulator';
import {
  additionalPropertiesProblems,
  AirbyteStreamJson,
  catalogOf,
  COLUMNS_CURSOR,
  COLUMNS_STREAM,
  INVITATIONS_STREAM,
  CURSOR_FIELD,
  daysAgo,
  draft07Problems,
  keywordLocations,
  SchemaNode,
  subschema,
  summary,
} from './support';
import {isResponseStream} from '../helpers/streams';

const WITH_ROWS = '3a3a3a3a-4b4b-4c5c-8d6d-7e7e7e7e7e7e';
const EMPTY_WITH_HEADER = '4b4b4b4b-5c5c-4d6d-9e7e-8f8f8f8f8f8f';
const EMPTY_NO_HEADER = '5c5c5c5c-6d6d-4e7e-af8f-909090909090';
const SCALAR = new Set(['string', 'number', 'integer', 'boolean']);

/** The declared types of a field, without null; scalar when all of them are. */
function isScalar(schema: SchemaNode | undefined): boolean {
  if (!schema) return false;
  const types = (Array.isArray(schema.type) ? schema.type : [schema.type]).filter((t) => t !== 'null');
  return types.length > 0 && types.every((t) => typeof t === 'string' && SCALAR.has(t));
}

describe('discover', () => {
  let world: World;
  let sim: Simulator;
  let dir: string;
  let result: RunResult;
  let streams: AirbyteStreamJson[];

  beforeAll(async () => {
    world = await startWorld({
      seed: 9,
      exportDurationMs: 20,
      quests: [
        {id: WITH_ROWS, rows: 20, columns: 9, firstCreatedAt: daysAgo(10)},
        {id: EMPTY_WITH_HEADER, rows: 0},
        {id: EMPTY_NO_HEADER, rows: 0, headerOnEmpty: false},
      ],
    });
    ({sim, dir} = world);
    result = await world.run([
      'discover',
      '--config',
      writeJson(dir, 'config.json', simConfig(sim, {max_concurrent_exports: 8})),
    ]);
    streams = catalogOf(result);
  });
  afterAll(async () => {
    await world.close();
  });

  test('exactly one CATALOG', () => {
    expect(result.invalid).toEqual([]);
    expect({code: result.code, summary: result.code === 0 ? '' : summary(result)}).toEqual({code: 0, summary: ''});
    expect(result.messages.filter((m) => m.type === 'CATALOG')).toHaveLength(1);
    expect(result.messages.filter((m) => m.type !== 'LOG').map((m) => m.type)).toEqual(['CATALOG']);
  });

  test('one stream per configured quest, named quest_<uuid with underscores>, then the streams every layout has (columns, invitations)', () => {
    const names = streams.map((s) => s.name);
    const quests = [WITH_ROWS, EMPTY_WITH_HEADER, EMPTY_NO_HEADER].map(streamOf);
    expect(names.slice(0, quests.length)).toEqual(quests);
    expect(names.filter(isResponseStream)).toEqual(quests);
    expect(names).toEqual(expect.arrayContaining([COLUMNS_STREAM, INVITATIONS_STREAM]));
  });

  test('unique stream names', () => {
    const names = streams.map((s) => s.name);
    expect(new Set(names).size).toBe(names.length);
  });

  test('each json_schema is valid draft-07', () => {
    for (const s of streams)
      expect({stream: s.name, problems: draft07Problems(s.json_schema)}).toEqual({stream: s.name, problems: []});
  });

  test('default_cursor_field and source_defined_primary_key paths exist under properties with scalar types', () => {
    for (const s of streams) {
      // A stream that reads incrementally has its cursor; a full-refresh-only one has none.
      const cursor = s.name === COLUMNS_STREAM ? COLUMNS_CURSOR : CURSOR_FIELD;
      expect({stream: s.name, cursor: s.default_cursor_field}).toEqual({
        stream: s.name,
        cursor: s.supported_sync_modes?.includes('incremental') ? [cursor] : undefined,
      });
      const paths = [
        ...(s.default_cursor_field ? [s.default_cursor_field] : []),
        ...(s.source_defined_primary_key ?? []),
      ];
      for (const p of paths) {
        expect(p.length).toBeGreaterThan(0);
        const field = subschema(s.json_schema, p);
        expect({stream: s.name, path: p, exists: field !== undefined, scalar: isScalar(field)}).toEqual({
          stream: s.name,
          path: p,
          exists: true,
          scalar: true,
        });
      }
    }
    // Quests whose export shows a header have the response id as primary key.
    expect(streams[0].source_defined_primary_key).toEqual([['response_id']]);
    expect(streams[1].source_defined_primary_key).toEqual([['response_id']]);
    expect(streams.find((s) => s.name === COLUMNS_STREAM)?.source_defined_primary_key).toEqual([
      ['quest_id'],
      ['column'],
    ]);
  });

  test('supported_sync_modes not empty; a cursor, source-defined, exactly when incremental is among them', () => {
    for (const s of streams) {
      expect(s.supported_sync_modes?.length ?? 0).toBeGreaterThan(0);
      expect(['full_refresh', 'incremental']).toEqual(expect.arrayContaining(s.supported_sync_modes ?? []));
      const incremental = s.supported_sync_modes?.includes('incremental') ?? false;
      expect({stream: s.name, cursor: s.source_defined_cursor}).toEqual({stream: s.name, cursor: incremental});
    }
    // The quests' streams and the columns stream read both ways.
    expect(streams.filter((s) => s.supported_sync_modes?.length === 2).map((s) => s.name)).toEqual(
      expect.arrayContaining([...[WITH_ROWS, EMPTY_WITH_HEADER, EMPTY_NO_HEADER].map(streamOf), COLUMNS_STREAM])
    );
  });

  test('every stream that reads incrementally is resumable (is_resumable)', () => {
    // The platform then keeps a stream's state between the attempts of a sync, also in full refresh.
    const incremental = streams.filter((s) => s.supported_sync_modes?.includes('incremental'));
    expect(incremental.map((s) => [s.name, s.is_resumable])).toEqual(incremental.map((s) => [s.name, true]));
  });

  test('no $ref, allOf, not in stream schemas', () => {
    for (const s of streams)
      expect({stream: s.name, found: keywordLocations(s.json_schema, ['$ref', 'allOf', 'not'])}).toEqual({
        stream: s.name,
        found: [],
      });
  });

  test('additionalProperties never false (if present, true)', () => {
    for (const s of streams) {
      expect({stream: s.name, found: additionalPropertiesProblems(s.json_schema, (v) => v === true)}).toEqual({
        stream: s.name,
        found: [],
      });
    }
  });
});
