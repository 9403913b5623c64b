// CAT "basic_read" group, replicated on the built bin/main: a full read of a quest with responses
// and of a quest with none, then a read that must fail.

import {ValidateFunction} from 'ajv';

import {simConfig, startWorld, streamOf, World} from '../helpers/fixtures';
import {
  errorTraces,
  records,
  RunResult,
  StateMessage,
  states,
  statusesByStream,
  TraceMessage,
  writeJson,
} from '../helpers/connector';
import {AirbyteMessageJson} from '../helpers/protocol';
import {Simulator} from '../../simulator';
import {
  AirbyteStreamJson,
  catalogOf,
  COLUMNS_CURSOR,
  COLUMNS_STREAM,
  configuredCatalogOf,
  INVITATIONS_STREAM,
  CURSOR_FIELD,
  dateTimeProblems,
  daysAgo,
  linesOf,
  newAjv,
  strictIntegerProblems,
  summary,
} from './support';
import {isResponseStream} from '../helpers/streams';

const WITH_ROWS = '6d6d6d6d-7e7e-4f8f-8a9a-0b0b0b0b0b0b';
const NO_ROWS = '7e7e7e7e-8f8f-4a9a-9b0b-1c1c1c1c1c1c';
const UNKNOWN = '8f8f8f8f-9a9a-4b0b-ac1c-2d2d2d2d2d2d';

function streamStatusIndexes(messages: AirbyteMessageJson[], stream: string): {status: string; at: number}[] {
  const out: {status: string; at: number}[] = [];
  messages.forEach((m, at) => {
    const s = (m as unknown as TraceMessage).trace?.stream_status;
    if (m.type === 'TRACE' && s && s.stream_descriptor.name === stream) out.push({status: s.status, at});
  });
  return out;
}

describe('read', () => {
  let world: World;
  let sim: Simulator;
  let dir: string;
  let streams: AirbyteStreamJson[];
  let result: RunResult;
  let failing: RunResult;
  let configFile: string;

  beforeAll(async () => {
    world = await startWorld({
      seed: 13,
      exportDurationMs: 20,
      quests: [
        {id: WITH_ROWS, rows: 40, firstCreatedAt: daysAgo(30)},
        {id: NO_ROWS, rows: 0},
      ],
    });
    ({sim, dir} = world);
    configFile = writeJson(
      dir,
      'config.json',
      simConfig(sim, {start_date: daysAgo(31), window_days: 7, max_concurrent_exports: 16})
    );
    const discover = await world.run(['discover', '--config', configFile]);
    streams = catalogOf(discover);
    const unknown: AirbyteStreamJson = {...streams[0], name: streamOf(UNKNOWN)};
    [result, failing] = await Promise.all([
      world.run([
        'read',
        '--config',
        configFile,
        '--catalog',
        writeJson(dir, 'full.json', configuredCatalogOf(streams, 'full_refresh')),
      ]),
      world.run([
        'read',
        '--config',
        configFile,
        '--catalog',
        writeJson(dir, 'unknown.json', configuredCatalogOf([unknown], 'full_refresh')),
      ]),
    ]);
  });
  afterAll(async () => {
    await world.close();
  });

  /** The columns stream's records of one quest, in the order of its export. */
  function columnsOf(quest: string): {column: string; position: number}[] {
    return records(result.messages)
      .filter((r) => r.record.stream === COLUMNS_STREAM && r.record.data.quest_id === quest)
      .map((r) => r.record.data as {column: string; position: number})
      .sort((a, b) => a.position - b.position);
  }

  test('every stdout line is a valid AirbyteMessage and the read exits 0', () => {
    expect(result.invalid).toEqual([]);
    expect({code: result.code, summary: result.code === 0 ? '' : summary(result)}).toEqual({code: 0, summary: ''});
    expect(records(result.messages).filter((r) => r.record.stream === streamOf(WITH_ROWS))).toHaveLength(40);
    expect(records(result.messages).filter((r) => r.record.stream === streamOf(NO_ROWS))).toHaveLength(0);
  });

  test('every record validates against its stream schema (strict integers, date-times that parse)', () => {
    const ajv = newAjv();
    const validators = new Map<string, ValidateFunction>(streams.map((s) => [s.name, ajv.compile(s.json_schema)]));
    const schemas = new Map(streams.map((s) => [s.name, s.json_schema]));
    const checked = new Map<string, number>();
    for (const {line, message} of linesOf(result)) {
      if (message.type !== 'RECORD') continue;
      const {stream, data} = (message as unknown as {record: {stream: string; data: Record<string, unknown>}}).record;
      const validate = validators.get(stream);
      const schema = schemas.get(stream);
      if (!validate || !schema) throw new Error(`record of unconfigured stream ${stream}`);
      expect({stream, valid: validate(data), errors: validate.errors ?? null}).toEqual({
        stream,
        valid: true,
        errors: null,
      });
      expect({
        stream,
        integers: strictIntegerProblems(line, schema),
        dateTimes: dateTimeProblems(data, schema),
      }).toEqual({stream, integers: [], dateTimes: []});
      checked.set(stream, (checked.get(stream) ?? 0) + 1);
      if (stream === INVITATIONS_STREAM) {
        // Keyed by its id, under a configured quest; no cursor (full refresh only).
        expect(typeof data.invitation_id).toBe('string');
        expect([WITH_ROWS, NO_ROWS]).toContain(data.quest_id);
        continue;
      }
      if (stream === COLUMNS_STREAM) {
        // The cursor is a date-time; the record names a configured quest and one of its columns.
        expect(Number.isNaN(Date.parse(String(data[COLUMNS_CURSOR])))).toBe(false);
        expect([WITH_ROWS, NO_ROWS]).toContain(data.quest_id);
        continue;
      }
      if (!isResponseStream(stream)) continue;
      // The connector's own fields are always there; the cursor is a date-time.
      expect(Number.isNaN(Date.parse(String(data[CURSOR_FIELD])))).toBe(false);
      expect(data._questback_quest_id).toBe(WITH_ROWS);
    }
    // 40 responses, and one columns record per column of each quest's export.
    const invitations = sim.invitations(WITH_ROWS).length + sim.invitations(NO_ROWS).length;
    const responses = [...checked]
      .filter(([stream]) => isResponseStream(stream))
      .reduce((n, [, count]) => n + count, 0);
    expect({responses, columns: checked.get(COLUMNS_STREAM), invitations: checked.get(INVITATIONS_STREAM)}).toEqual({
      responses: 40,
      columns: columnsOf(WITH_ROWS).length + columnsOf(NO_ROWS).length,
      invitations,
    });
    // The checker itself: 1.0 is not an integer, 1 is.
    const intSchema = {type: 'object', properties: {n: {type: 'integer'}}};
    expect(strictIntegerProblems('{"type":"RECORD","record":{"data":{"n":1.0}}}', intSchema)).toHaveLength(1);
    expect(strictIntegerProblems('{"type":"RECORD","record":{"data":{"n":1}}}', intSchema)).toEqual([]);
    expect(
      dateTimeProblems({t: '2024-13-45T99:00:00Z'}, {properties: {t: {type: 'string', format: 'date-time'}}})
    ).toHaveLength(1);
  });

  test('records carry no columns outside their stream schema (fail_on_extra_columns)', () => {
    const properties = new Map(streams.map((s) => [s.name, Object.keys((s.json_schema.properties ?? {}) as object)]));
    const extra = new Set<string>();
    for (const r of records(result.messages)) {
      const known = properties.get(r.record.stream) ?? [];
      for (const key of Object.keys(r.record.data)) if (!known.includes(key)) extra.add(`${r.record.stream}: ${key}`);
    }
    expect([...extra]).toEqual([]);
  });

  test('primary key values are scalars and never null (validate_primary_keys_data_type)', () => {
    for (const r of records(result.messages)) {
      const stream = streams.find((s) => s.name === r.record.stream);
      for (const key of stream?.source_defined_primary_key ?? []) {
        const value = key.reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], r.record.data);
        expect(value === null || value === undefined || typeof value === 'object').toBe(false);
      }
    }
  });

  test('at least one STATE per configured stream, also for a stream with no records', () => {
    const named = new Set(states(result.messages).map((s) => s.state.stream.stream_descriptor.name));
    // Every stream discover listed was configured (the quest without an export header has no stream).
    expect([...named].sort()).toEqual(streams.map((s) => s.name).sort());
    expect([...named]).toEqual(
      expect.arrayContaining([streamOf(WITH_ROWS), streamOf(NO_ROWS), COLUMNS_STREAM, INVITATIONS_STREAM])
    );
  });

  test('the columns stream has one record per column of each quest, the same columns its quest stream has', () => {
    for (const quest of [WITH_ROWS, NO_ROWS]) {
      const props = Object.keys(streams.find((s) => s.name === streamOf(quest))?.json_schema.properties ?? {});
      const columns = columnsOf(quest);
      expect(columns.length).toBeGreaterThan(0);
      expect({quest, columns: columns.map((c) => c.column).sort()}).toEqual({
        quest,
        columns: props.filter((p) => !p.startsWith('_questback_')).sort(),
      });
      expect(columns.map((c) => c.position)).toEqual(columns.map((_, i) => i + 1));
    }
    expect(statusesByStream(result.messages)[COLUMNS_STREAM]).toEqual(['STARTED', 'RUNNING', 'COMPLETE']);
  });

  test('STATE messages are per-stream and carry sourceStats.recordCount', () => {
    const all = states(result.messages);
    expect(all.length).toBeGreaterThan(0);
    for (const s of all) {
      expect(s.state.type).toBe('STREAM');
      expect(typeof s.state.stream.stream_descriptor.name).toBe('string');
      // A full-refresh-only stream's STATE has no cursor.
      if (streams.find((d) => d.name === s.state.stream.stream_descriptor.name)?.source_defined_cursor)
        expect(typeof s.state.stream.stream_state.cursor).toBe('string');
      expect(typeof s.state.sourceStats?.recordCount).toBe('number');
      expect((s.state as unknown as Record<string, unknown>).data).toBeUndefined();
    }
    // recordCount is the number of the stream's records since its previous STATE.
    const pending = new Map<string, number>();
    for (const m of result.messages) {
      if (m.type === 'RECORD') {
        const stream = (m as unknown as {record: {stream: string}}).record.stream;
        pending.set(stream, (pending.get(stream) ?? 0) + 1);
      } else if (m.type === 'STATE') {
        const s = (m as unknown as StateMessage).state;
        const name = s.stream.stream_descriptor.name;
        expect({stream: name, recordCount: s.sourceStats.recordCount}).toEqual({
          stream: name,
          recordCount: pending.get(name) ?? 0,
        });
        pending.set(name, 0);
      }
    }
    expect([...pending.values()].every((n) => n === 0)).toBe(true);
  });

  // The protocol defines recordCount as a double that "should always have a decimal point for proper
  // serialization"; the connector writes it with JSON.stringify, so 8 comes out as 8, not 8.0.
  test('sourceStats.recordCount is written with a decimal point', () => {
    const stateLines = linesOf(result).filter(({message}) => message.type === 'STATE');
    expect(stateLines.length).toBeGreaterThan(0);
    for (const {line} of stateLines) expect(line).toMatch(/"recordCount":-?\d+\.\d+/);
  });

  test('statuses in order STARTED, RUNNING, COMPLETE', () => {
    const stream = streamOf(WITH_ROWS);
    expect(statusesByStream(result.messages)[stream]).toEqual(['STARTED', 'RUNNING', 'COMPLETE']);
    // RUNNING comes with the first record, COMPLETE after the last record and state.
    const [started, running, complete] = streamStatusIndexes(result.messages, stream).map((s) => s.at);
    const mine = result.messages
      .map((m, at) => ({m, at}))
      .filter(({m}) => JSON.stringify(m).includes(`"${stream}"`) && (m.type === 'RECORD' || m.type === 'STATE'));
    const firstRecord = mine.find(({m}) => m.type === 'RECORD')?.at ?? -1;
    expect(started).toBeLessThan(running);
    expect(running).toBeLessThan(firstRecord);
    expect(Math.max(...mine.map(({at}) => at))).toBeLessThan(complete);
  });

  test('a stream with no records: STARTED, RUNNING, COMPLETE (validate_stream_statuses wants all three)', () => {
    expect(statusesByStream(result.messages)[streamOf(NO_ROWS)]).toEqual(['STARTED', 'RUNNING', 'COMPLETE']);
  });

  test('a failing read (a catalog naming an unknown stream) emits a TRACE ERROR with failure_type and exits non-zero', () => {
    expect(failing.invalid).toEqual([]);
    expect(failing.code).not.toBe(0);
    expect(failing.code).not.toBeNull();
    const errors = errorTraces(failing.messages);
    expect(errors.length).toBeGreaterThanOrEqual(1);
    for (const e of errors)
      expect(['config_error', 'system_error', 'transient_error']).toContain(e.trace.error?.failure_type);
    const mine = errors.find((e) => e.trace.error?.stream_descriptor?.name === streamOf(UNKNOWN));
    expect(mine?.trace.error?.failure_type).toBe('config_error');
    expect(mine?.trace.error?.message).toContain(streamOf(UNKNOWN));
    expect(records(failing.messages)).toHaveLength(0);
  });

  test('a catalog the connector cannot read (sync_mode INVALID) emits a TRACE ERROR and exits non-zero', async () => {
    // CAT's test_airbyte_trace_message_on_failure sends exactly this catalog.
    const invalidCatalog = {
      streams: [
        {
          stream: {
            name: '__AIRBYTE__stream_that_does_not_exist',
            json_schema: {type: 'object', properties: {f1: {type: 'string'}}},
            supported_sync_modes: ['full_refresh'],
          },
          sync_mode: 'INVALID',
          destination_sync_mode: 'INVALID',
        },
      ],
    };
    const run = await world.run([
      'read',
      '--config',
      configFile,
      '--catalog',
      writeJson(dir, 'invalid-catalog.json', invalidCatalog),
    ]);
    expect(run.invalid).toEqual([]);
    expect(run.code).not.toBe(0);
    const errors = errorTraces(run.messages);
    expect(errors.length).toBeGreaterThanOrEqual(1);
    expect(errors[0].trace.error?.failure_type).toBe('config_error');
    expect(records(run.messages)).toHaveLength(0);
  });

  test('a failed stream ends with status INCOMPLETE', () => {
    expect(statusesByStream(failing.messages)[streamOf(UNKNOWN)]).toEqual(['STARTED', 'INCOMPLETE']);
  });
});
