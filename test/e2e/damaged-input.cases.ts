// Config, catalog and state files as damage or an attacker would make them: nested deeper than any
// call stack, or megabytes where a word belongs. Each gets one config_error that names the file or
// the setting, quotes at most a few hundred characters of it, and comes without a stack overflow.
import {configuredCatalog, simConfig, startWorld, streamOf, World} from '../helpers/fixtures';
import {errorTraces, RunResult, warnings} from '../helpers/connector';

const QUEST = 'd0d0d0d0-0000-4000-8000-000000000001';
const DEEP = 100_000;
/** A JSON value nested DEEP lists deep, as text (JSON.stringify of it would overflow the stack). */
const NESTED = `${'['.repeat(DEEP)}${']'.repeat(DEEP)}`;
const BIG = 4_000_000;
const LONG = 'x'.repeat(BIG);
/** More than a message may quote: every message and log line stays under this. */
const QUOTED_MAX = 1_000;

let world: World;
let catalog: Record<string, unknown>;

beforeAll(async () => {
  world = await startWorld({seed: 34, exportDurationMs: 20, quests: [{id: QUEST, rows: 3}]});
  const discover = await world.run(['discover', '--config', world.config({quest_ids: [QUEST]})]);
  catalog = configuredCatalog(discover.messages, 'incremental');
});
afterAll(() => world.close());

/** `value` as JSON text, with each `@key@` text replaced by the raw JSON text `raw[key]`. */
function json(value: unknown, raw: Record<string, string> = {}): string {
  let text = JSON.stringify(value);
  for (const [key, replacement] of Object.entries(raw)) text = text.split(`"@${key}@"`).join(replacement);
  return text;
}

/** A config that reaches no service (nothing listens there): these runs must end before any request. */
function offlineConfig(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    ...simConfig(world.sim, {quest_ids: [QUEST]}),
    api_url: 'http://127.0.0.1:9',
    auth_url: 'http://127.0.0.1:9',
    ...overrides,
  };
}

const questState = (state: string): string =>
  json([{type: 'STREAM', stream: {stream_descriptor: {name: streamOf(QUEST)}, stream_state: '@state@'}}], {state});

interface Case {
  name: string;
  /** The config file's text, from a config of the simulator that reaches no service. */
  config?: (base: Record<string, unknown>) => string;
  catalog?: string;
  state?: string;
  message: RegExp;
}

/** What the output says in words (log lines, error messages): none of it longer than QUOTED_MAX. */
function longestText(result: RunResult): number {
  const texts = result.messages.flatMap((m) => {
    const {log, trace} = m as {log?: {message: string}; trace?: {error?: {message: string; internal_message?: string}}};
    return [log?.message, trace?.error?.message, trace?.error?.internal_message];
  });
  return Math.max(...texts.map((t) => t?.length ?? 0));
}

/** One config_error matching `message`, and no text of the output longer than QUOTED_MAX. */
function expectOneBoundedError(result: RunResult, message: RegExp): void {
  const errors = errorTraces(result.messages);
  expect(errors.map((e) => e.trace.error?.failure_type)).toEqual(['config_error']);
  expect(errors[0].trace.error?.message).toMatch(message);
  expect(longestText(result)).toBeLessThan(QUOTED_MAX);
  expect(result.code).toBe(1);
}

const CASES: Case[] = [
  {
    name: 'a config file cut inside 100,000 nested lists',
    config: () => `{"quest_ids": ${'['.repeat(DEEP)}`,
    message:
      /^The config file \S+ is not valid JSON at line 1, column 100015: the file ends where a value was expected\.$/,
  },
  {
    name: 'a catalog file cut inside 100,000 nested lists',
    catalog: `{"streams": ${'[{"a":'.repeat(DEEP)}`,
    message:
      /^The catalog file \S+ is not valid JSON at line 1, column 600013: the file ends where a value was expected\.$/,
  },
  {
    name: 'a state file cut inside 100,000 nested lists',
    state: `[${'['.repeat(DEEP)}1,`,
    message:
      /^The state file \S+ is not valid JSON at line 1, column 100004: the file ends where a value was expected\.$/,
  },
  {
    name: 'a stream state without a cursor, nested 100,000 deep',
    state: questState(`{"x": ${NESTED}}`),
    message: /^Invalid state: Stream quest_\w+: its state has no 'cursor' \(got \{"x":\[\[\[\[+…\)\. Reset/,
  },
  {
    name: 'a stream state without a cursor, 4 MB of it',
    state: questState(json({x: LONG})),
    message: /^Invalid state: Stream quest_\w+: its state has no 'cursor' \(got \{"x":"x+…\)\. Reset/,
  },
  {
    name: 'a cursor of 4 MB',
    state: questState(json({cursor: LONG})),
    message: /the cursor in its state is not an ISO 8601 UTC timestamp: "x+…/,
  },
  {
    name: 'a combined stream state without its quests map, nested 100,000 deep',
    config: (base) => json({...base, stream_layout: 'combined'}),
    catalog: 'combined',
    state: json([{type: 'STREAM', stream: {stream_descriptor: {name: 'responses'}, stream_state: '@state@'}}], {
      state: `{"x": ${NESTED}}`,
    }),
    message: /the state of stream responses has no 'quests' map \(got \{"x":\[\[\[+…\)/,
  },
  {
    name: 'window_days nested 100,000 deep',
    config: (base) => json({...base, window_days: '@deep@'}, {deep: NESTED}),
    message: /^Invalid configuration: 'window_days' must be a whole number of days from 1 to 3650 .*, got \[\[\[+…\./,
  },
  {
    name: 'a quest id nested 100,000 deep',
    config: (base) => json({...base, quest_ids: ['@deep@']}, {deep: NESTED}),
    message: /^Invalid configuration: quest_ids\[0\] is \[\[\[+…, which is not a quest id\./,
  },
  {
    name: 'a quest id of 4 MB',
    config: (base) => json({...base, quest_ids: [LONG]}),
    message: /^Invalid configuration: quest_ids\[0\] is "x+…, which is not a quest id\./,
  },
  {
    name: 'a sensitive column of 4 MB and an action nested 100,000 deep',
    config: (base) => json({...base, sensitive_columns: [{column: LONG, action: '@deep@'}]}, {deep: NESTED}),
    message: /^Invalid configuration: sensitive_columns\[0\] \("x+…\) must say what to do .* got \[\[\[+…\./,
  },
  {
    name: 'a sensitive column of 4 MB listed twice',
    config: (base) => json({...base, sensitive_columns: [1, 2].map(() => ({column: LONG, action: 'drop'}))}),
    message: /^Invalid configuration: sensitive_columns\[1\] names "x+… again/,
  },
  {
    name: 'a start_date of 4 MB',
    config: (base) => json({...base, start_date: LONG}),
    message: /^Invalid configuration: 'start_date' must be an ISO 8601 UTC date-time .*, got "x+…\./,
  },
  {
    name: 'a value_type of 4 MB',
    config: (base) => json({...base, value_type: LONG}),
    message: /^Invalid configuration: 'value_type' must be an upper-case option name like ORDER_NUMBER, got "x+…\./,
  },
  {
    name: 'a catalog sync_mode nested 100,000 deep, under a stream name of 4 MB',
    catalog: json({streams: [{stream: {name: LONG}, sync_mode: '@deep@'}]}, {deep: NESTED}),
    message: /^Catalog stream x+… has sync_mode \[\[\[+…; use full_refresh or incremental\.$/,
  },
  {
    name: 'a catalog naming a stream of 4 MB twice',
    catalog: json({streams: [1, 2].map(() => ({stream: {name: LONG}, sync_mode: 'incremental'}))}),
    message: /^The configured catalog lists stream x+… more than once\./,
  },
  {
    name: 'a catalog naming a stream of 4 MB this source does not have',
    catalog: json({streams: [{stream: {name: LONG}, sync_mode: 'incremental'}]}),
    message: /^Stream x+… is not one of this source's streams/,
  },
];

describe('damaged or hostile input files: one bounded config_error each', () => {
  test.concurrent.each(CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const args = [
      'read',
      '--config',
      world.file((c.config ?? json)(offlineConfig())),
      '--catalog',
      world.file(
        c.catalog === 'combined'
          ? {streams: [{stream: {name: 'responses'}, sync_mode: 'incremental'}]}
          : (c.catalog ?? catalog)
      ),
    ];
    if (c.state !== undefined) args.push('--state', world.file(c.state));
    expectOneBoundedError(await world.run(args), c.message);
  });

  test('unknown options: the first ten named, each cut, the rest counted', async () => {
    const unknown = Object.fromEntries(Array.from({length: 1000}, (_, i) => [`${LONG.slice(0, 1_000)}${i}`, i]));
    const result = await world.run(['check', '--config', world.file({...simConfig(world.sim), ...unknown})]);
    const said = warnings(result.messages).filter((w) => /unknown option/i.test(w));
    expect(said).toHaveLength(11);
    expect(said.slice(0, 10).every((w) => /^Unknown option 'x+…' is ignored\.$/.test(w))).toBe(true);
    expect(said[10]).toBe('990 more unknown option(s) are ignored.');
    expect(longestText(result)).toBeLessThan(QUOTED_MAX);
  });

  test('a GLOBAL-like state entry whose type is 4 MB: the warning quotes it cut', async () => {
    const state = json([{type: LONG}]);
    const result = await world.run([
      'read',
      '--config',
      world.config({quest_ids: [QUEST]}),
      '--catalog',
      world.file(catalog),
      '--state',
      world.file(state),
    ]);
    expect(errorTraces(result.messages)).toEqual([]);
    expect(warnings(result.messages).some((w) => /ignored: a x+… state \(entry 0;/.test(w))).toBe(true);
    expect(longestText(result)).toBeLessThan(QUOTED_MAX);
  });
});
