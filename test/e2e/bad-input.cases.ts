import {configuredCatalog, simConfig, startWorld, streamOf, World} from '../helpers/fixtures';
import {errorTraces, records, states, statusesByStream, RunResult} from '../helpers/connector';
import {warehouseNames} from '../../src/sync/streams/column-names';
import {responsesCatalogStream} from '../../src/sync/streams/responses-stream';
import {Corruption} from '../../simulator';

const GOOD = 'c0c0c0c0-0000-4000-8000-000000000001';
const CORRUPT: Record<Corruption, string> = {
  'html-body': 'c0c0c0c0-0000-4000-8000-000000000002',
  'unterminated-quote': 'c0c0c0c0-0000-4000-8000-000000000003',
  'ragged-row': 'c0c0c0c0-0000-4000-8000-000000000004',
  'no-header': 'c0c0c0c0-0000-4000-8000-000000000005',
  'duplicate-header': 'c0c0c0c0-0000-4000-8000-000000000006',
  'empty-body': 'c0c0c0c0-0000-4000-8000-000000000007',
  'stray-quote': 'c0c0c0c0-0000-4000-8000-000000000008',
  'html-octet-stream': 'c0c0c0c0-0000-4000-8000-000000000009',
  'no-final-newline': 'c0c0c0c0-0000-4000-8000-00000000000a',
  'cut-last-cell': 'c0c0c0c0-0000-4000-8000-00000000000b',
};
const CATALOG_OF_GOOD: {value?: Record<string, unknown>} = {};

let world: World;

beforeAll(async () => {
  world = await startWorld({
    seed: 5,
    exportDurationMs: 60,
    quests: [
      {id: GOOD, rows: 8, firstCreatedAt: new Date(Date.now() - 3 * 86_400_000).toISOString()},
      ...Object.entries(CORRUPT).map(([corruption, id]) => ({
        id,
        rows: 8,
        corruption: corruption as Corruption,
        firstCreatedAt: new Date(Date.now() - 3 * 86_400_000).toISOString(),
      })),
    ],
  });
  const discover = await world.run(['discover', '--config', world.config({quest_ids: [GOOD]})]);
  CATALOG_OF_GOOD.value = configuredCatalog(discover.messages, 'incremental');
});
afterAll(() => world.close());

/** A catalog for one quest, with the columns the good quest has (the simulated quests share a layout). */
function catalogFor(questId: string): Record<string, unknown> {
  const base = CATALOG_OF_GOOD.value as {streams: {stream: Record<string, unknown>}[]};
  return {streams: [{...base.streams[0], stream: {...base.streams[0].stream, name: streamOf(questId)}}]};
}

interface Case {
  name: string;
  config?: Record<string, unknown> | string;
  catalog?: Record<string, unknown> | string;
  state?: unknown;
  type: 'config_error' | 'transient_error';
  message: RegExp;
  /** Failed before any request reached the service. */
  offline?: boolean;
}

const future = new Date(Date.now() + 86_400_000).toISOString();
const CASES: Case[] = [
  {
    name: 'missing client_id',
    config: {client_id: undefined},
    type: 'config_error',
    message: /'client_id' is required\. Ask your Questback account owner/,
    offline: true,
  },
  {
    name: 'client_secret of the wrong type',
    config: {client_secret: 12345},
    type: 'config_error',
    message: /'client_secret' must be a string, got number/,
    offline: true,
  },
  {
    name: 'a quest id that is not a UUID',
    config: {quest_ids: ['survey-42']},
    type: 'config_error',
    message: /quest_ids\[0\] is "survey-42", which is not a quest id\. .*the UUID in the quest address/,
    offline: true,
  },
  {
    name: 'a quest id listed twice',
    config: {quest_ids: [GOOD, GOOD.toUpperCase()]},
    type: 'config_error',
    message: /listed twice/,
    offline: true,
  },
  {
    name: 'no quest ids',
    config: {quest_ids: []},
    type: 'config_error',
    message: /'quest_ids' must name at least one quest/,
    offline: true,
  },
  {
    name: 'an unparsable start_date',
    config: {start_date: '01/02/2024'},
    type: 'config_error',
    message: /'start_date' must be an ISO 8601 UTC date-time like 2024-01-01T00:00:00Z, got "01\/02\/2024"/,
    offline: true,
  },
  {
    name: 'a start_date in the future',
    config: {start_date: future},
    type: 'config_error',
    message: /'start_date' .* lies in the future/,
    offline: true,
  },
  {
    name: 'plain http to a host that is not loopback',
    config: {api_url: 'http://api.questback.com'},
    type: 'config_error',
    message: /'api_url' must use https:\/\//,
    offline: true,
  },
  {
    name: 'a project id that is not numeric',
    config: {project_id: 'my-project'},
    type: 'config_error',
    message: /'project_id' must be digits only/,
    offline: true,
  },
  {
    name: 'a window of zero days',
    config: {window_days: 0},
    type: 'config_error',
    message:
      /'window_days' must be a whole number of days from 1 to 3650 \(or left out, so that windows follow the data\), got 0/,
    offline: true,
  },
  {
    name: 'an unknown separator',
    config: {field_separator: 'COLON'},
    type: 'config_error',
    message: /'field_separator' must be one of PIPE, COMMA, SEMICOLON, TAB/,
    offline: true,
  },
  {
    name: 'a config file that is not JSON',
    config: '{"client_id": ',
    type: 'config_error',
    message: /The config file .* is not valid JSON/,
    offline: true,
  },
  {
    name: 'a catalog file that is not JSON',
    catalog: 'streams:',
    type: 'config_error',
    message: /The catalog file .* is not valid JSON/,
    offline: true,
  },
  {
    name: 'a state file that is not JSON',
    state: '[{',
    type: 'config_error',
    message: /The state file .* is not valid JSON/,
    offline: true,
  },
  {
    name: 'a compressed state of an older build',
    state: {format: 'base64/gzip', data: 'H4sIAAAAAAAAA6uuBQBDv6ajAgAAAA=='},
    type: 'config_error',
    message: /compressed format of an older connector build.*Reset the connection's state/,
    offline: true,
  },
  {
    name: 'a state whose cursor is not a timestamp',
    state: [{type: 'STREAM', stream: {stream_descriptor: {name: streamOf(GOOD)}, stream_state: {cursor: 'yesterday'}}}],
    type: 'config_error',
    message: /^Invalid state: Stream quest_\w+: the cursor in its state is not an ISO 8601 UTC timestamp: "yesterday"/,
    offline: true,
  },
  {
    name: "another connector's state under one of this source's stream names",
    state: [{type: 'STREAM', stream: {stream_descriptor: {name: streamOf(GOOD)}, stream_state: {last_id: 42}}}],
    type: 'config_error',
    // The stream is named once: "Stream quest_…", not "Stream Stream quest_…" nor "stream Stream quest_…".
    message: /^Invalid state: Stream quest_\w+: its state has no 'cursor' \(got \{"last_id":42\}\)\. Reset/,
    offline: true,
  },
  {
    name: 'a catalog naming responses under stream_layout per_quest',
    catalog: {streams: [{stream: responsesCatalogStream(), sync_mode: 'incremental', destination_sync_mode: 'append'}]},
    type: 'config_error',
    // The way out is the layout, not a quest id.
    message:
      /^(?!.*quest id)Stream responses is a stream of stream_layout "combined", and this source's stream_layout is "per_quest"\. To read it, set stream_layout to "combined"/,
    offline: true,
  },
  {
    name: 'a catalog naming a quest stream under stream_layout combined',
    config: {stream_layout: 'combined'},
    type: 'config_error',
    message:
      /^(?!.*quest id)Stream quest_\w+ is a stream of stream_layout "per_quest", and this source's stream_layout is "combined"\. To read it, set stream_layout to "per_quest"/,
    offline: true,
  },
  {
    name: 'a LEGACY-typed state entry',
    state: [{type: 'LEGACY', data: {}}],
    type: 'config_error',
    message: /has type "LEGACY", which Airbyte no longer accepts; this connector keeps per-stream \(STREAM\) state/,
    offline: true,
  },
  {
    name: 'an export setting the service rejects (400 with errors map)',
    config: {value_type: 'BOGUS'},
    type: 'config_error',
    message: /HTTP 400 .*validation errors: settings\.valueType: .*traceId/,
  },
  {
    name: 'credentials the token service rejects (401)',
    config: {client_secret: 'not-the-secret'},
    type: 'config_error',
    message: /token service rejected the API login.*HTTP 401.*Check client_id and client_secret/,
  },
  {
    name: 'an HTML page instead of the CSV',
    catalog: 'html-body',
    type: 'transient_error',
    message: /answered a HTML page \(text\/html.*\) instead of CSV/,
  },
  {
    name: 'an HTML page served as application/octet-stream',
    catalog: 'html-octet-stream',
    type: 'transient_error',
    message: /returned an HTML page instead of CSV \(Content-Type application\/octet-stream\)/,
  },
  {
    name: 'a stray quote in an unquoted cell',
    catalog: 'stray-quote',
    type: 'config_error',
    message: /quote inside an unquoted cell .*set accept_stray_quotes to true/,
  },
  {
    name: 'a body of unknown length cut inside its last cell, every time',
    catalog: 'cut-last-cell',
    type: 'transient_error',
    message: /could not be completed: .*last row had no line end/,
  },
  {
    name: 'an unterminated quote in the CSV',
    catalog: 'unterminated-quote',
    type: 'transient_error',
    message: /is not valid CSV: Quote not closed.* on line \d+/,
  },
  {
    name: 'a row with the wrong number of cells',
    catalog: 'ragged-row',
    type: 'transient_error',
    message: /is not valid CSV: Wrong number of cells: expected \d+ like the header, got \d+ on line \d+/,
  },
  {name: 'a file without a header row', catalog: 'no-header', type: 'transient_error', message: /has no header row/},
];

async function readWith(c: Case): Promise<RunResult> {
  // Offline cases point at an address where nothing listens: a request would fail with another error.
  const nowhere: Record<string, unknown> = c.offline
    ? {api_url: 'http://127.0.0.1:9', auth_url: 'http://127.0.0.1:9'}
    : {};
  const configValue =
    typeof c.config === 'string'
      ? c.config
      : {...simConfig(world.sim, {quest_ids: [GOOD]}), ...nowhere, ...(c.config ?? {})};
  if (typeof configValue === 'object')
    for (const k of Object.keys(configValue)) if (configValue[k] === undefined) delete configValue[k];
  const quest = typeof c.catalog === 'string' && c.catalog in CORRUPT ? CORRUPT[c.catalog as Corruption] : GOOD;
  const catalogValue =
    typeof c.catalog === 'object' || (typeof c.catalog === 'string' && !(c.catalog in CORRUPT))
      ? c.catalog
      : catalogFor(quest);
  if (typeof configValue === 'object' && quest !== GOOD) {
    // One window, so the broken file is the only one.
    Object.assign(configValue, {
      quest_ids: [quest],
      start_date: new Date(Date.now() - 4 * 86_400_000).toISOString(),
      window_days: 30,
    });
  }
  const args = ['read', '--config', world.file(configValue), '--catalog', world.file(catalogValue)];
  if (c.state !== undefined) args.push('--state', world.file(c.state));
  return world.run(args);
}

describe('bad input gets one clear error of the right type', () => {
  test.concurrent.each(CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const result = await readWith(c);
    expect(result.invalid).toEqual([]);
    expect(result.code).toBe(1);
    const errors = errorTraces(result.messages);
    expect(errors).toHaveLength(1);
    expect(errors[0].trace.error?.failure_type).toBe(c.type);
    expect(errors[0].trace.error?.message).toMatch(c.message);
    // A broken window never advances the stream's state (rows before the break may stream out, uncommitted); a
    // STATE may only record the export created, its cursor still where the read began.
    if (!c.offline) {
      const moved = states(result.messages).filter((s) => !('exports' in s.state.stream.stream_state));
      expect(moved).toEqual([]);
    }
    // Stack traces only inside the trace's stack_trace, never in log lines or elsewhere on stdout.
    const outsideTraces = result.messages.filter((m) => m.type !== 'TRACE').map((m) => JSON.stringify(m));
    expect(outsideTraces.filter((line) => /\\n\s+at /.test(line))).toEqual([]);
  });

  test.concurrent('check reports a bad config as one FAILED status without calling the service', async () => {
    // Nothing listens at these addresses: a request would give another message.
    const nowhere = {api_url: 'http://127.0.0.1:9', auth_url: 'http://127.0.0.1:9'};
    const result = await world.run([
      'check',
      '--config',
      world.file({...simConfig(world.sim), ...nowhere, start_date: 'soon'}),
    ]);
    expect(result.messages.filter((m) => m.type === 'CONNECTION_STATUS')).toEqual([
      {
        type: 'CONNECTION_STATUS',
        connectionStatus: {status: 'FAILED', message: expect.stringMatching(/'start_date' must be an ISO 8601/)},
      },
    ]);
    expect(result.code).toBe(0);
  });

  test.concurrent('a header with a repeated name keeps both columns, the repeat renamed, and says so', async () => {
    const quest = CORRUPT['duplicate-header'];
    const result = await world.run([
      'read',
      '--config',
      world.config({quest_ids: [quest]}),
      '--catalog',
      world.file(catalogFor(quest)),
    ]);
    expect(result.code).toBe(0);
    const {header, rows} = world.sim.groundTruth(quest);
    const repeated = header.find((h, i) => header.indexOf(h) !== i) as string;
    expect(repeated).toBeDefined();
    const got = records(result.messages);
    expect(got).toHaveLength(rows.length);
    const names = warehouseNames(header);
    const first = names[header.indexOf(repeated)];
    expect(Object.keys(got[0].record.data)).toEqual(expect.arrayContaining([first, `${first}__2`]));
    expect(result.stdout).toContain(`not in the configured schema`);
  });

  test.concurrent('a file whose last row has no line end is whole when its length was announced', async () => {
    const quest = CORRUPT['no-final-newline'];
    const result = await world.run([
      'read',
      '--config',
      world.config({quest_ids: [quest]}),
      '--catalog',
      world.file(catalogFor(quest)),
    ]);
    expect(result.code).toBe(0);
    expect(records(result.messages)).toHaveLength(world.sim.groundTruth(quest).rows.length);
  });

  test.concurrent('an empty 200 body is an empty window, not an error', async () => {
    const quest = CORRUPT['empty-body'];
    const result = await world.run([
      'read',
      '--config',
      world.config({quest_ids: [quest]}),
      '--catalog',
      world.file(catalogFor(quest)),
    ]);
    expect(result.code).toBe(0);
    expect(records(result.messages)).toHaveLength(0);
    expect(statusesByStream(result.messages)[streamOf(quest)]).toEqual(['STARTED', 'RUNNING', 'COMPLETE']);
  });
});
