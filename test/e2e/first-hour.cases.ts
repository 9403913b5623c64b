// The first hour with the connector: the mistakes people make while setting it up, each run through
// the command line as Airbyte would run it. For each, the message the user sees must say what to do
// and name the setting at fault, and it must come without retries (see expectPrompt).

import net from 'net';

import {LIMITS} from '../../src/core/limits';
import {announcedWaits, errorTraces, RunResult, statusesByStream} from '../helpers/connector';
import {simCatalog, simConfig, startWorld, World} from '../helpers/fixtures';
import {Simulator} from '../../simulator';

const A = '3f6c1a52-8d4e-4b7a-9c21-5e0d7f8a1b34';
const B = 'a9e27c40-1b5d-4f83-8e6a-0c4d92b7f615';
const FORBIDDEN = 'f0f0f0f0-0000-4000-8000-000000000001';
/** A well-formed id of no quest on the service. */
const MISSING = 'f0f0f0f0-0000-4000-8000-000000000002';

/**
 * "Fails within a few seconds": what cannot heal is not retried. Asserted on the waits the connector
 * announces (every retry is logged), not on wall time, which load stretches. The wall bound only asks
 * whether it hung: the check's own deadline.
 */
function expectPrompt(result: RunResult & {ms: number}): void {
  expect(announcedWaits(result.messages)).toEqual([]);
  expect(result.ms).toBeLessThan(LIMITS.check.deadlineMs);
}

interface Setup extends World {
  /** A port on 127.0.0.1 that nothing listens on. */
  closedPort: number;
}

// Set up once, on first use (test.concurrent bodies may start before beforeAll hooks have finished).
let setup: Promise<Setup> | undefined;
function world(): Promise<Setup> {
  setup ??= (async () => {
    const world = await startWorld({
      seed: 7,
      exportDurationMs: 50,
      quests: [
        {id: A, rows: 6, firstCreatedAt: new Date(Date.now() - 5 * 86_400_000).toISOString()},
        {id: B, rows: 4, firstCreatedAt: new Date(Date.now() - 5 * 86_400_000).toISOString()},
        {id: FORBIDDEN, rows: 1, forbidden: true},
      ],
    });
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const closedPort = (probe.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    return {...world, closedPort};
  })();
  return setup;
}
afterAll(async () => {
  if (setup) await (await setup).close();
  if (timings.size) {
    const lines = [...timings].map(([name, ms]) => `  ${String(ms).padStart(5)} ms  ${name}`);
    console.log(`first-hour mistakes, time to the message:\n${lines.join('\n')}`);
  }
});

/** A working config for the two readable quests, with the mistake in `overrides`. */
function configFor(sim: Simulator, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return simConfig(sim, {quest_ids: [A, B], ...overrides});
}

const timings = new Map<string, number>();

/** Runs a command with a config (and more arguments), timed. */
async function timed(
  name: string,
  command: string,
  config: Record<string, unknown>,
  more: string[] = []
): Promise<RunResult & {ms: number}> {
  const setup = await world();
  const file = setup.file(config);
  const started = Date.now();
  const result = await setup.run([command, '--config', file, ...more]);
  const ms = Date.now() - started;
  timings.set(name, ms);
  expect(result.invalid).toEqual([]);
  return {...result, ms};
}

function connectionStatus(result: RunResult): {status: string; message?: string} {
  const statuses = result.messages.filter((m) => m.type === 'CONNECTION_STATUS') as unknown as {
    connectionStatus: {status: string; message?: string};
  }[];
  expect(statuses).toHaveLength(1);
  return statuses[0].connectionStatus;
}

/** The message of a failed check. */
function failure(result: RunResult): string {
  const status = connectionStatus(result);
  expect(status.status).toBe('FAILED');
  expect(result.code).toBe(0);
  return status.message ?? '';
}

function warnings(result: RunResult): string[] {
  return result.messages
    .filter((m) => m.type === 'LOG')
    .map((m) => (m as unknown as {log: {level: string; message: string}}).log)
    .filter((l) => l.level === 'WARN')
    .map((l) => l.message);
}

function count(text: string, part: string): number {
  return text.split(part).length - 1;
}

/** Says what to do: an instruction, not only what went wrong. */
const ACTION = /\b(check|set|rename|list|ask|use|remove)\b/i;

describe('the first hour: common setup mistakes and what the user is told', () => {
  test.concurrent('auth_url unreachable (connection refused): check names auth_url and its address', async () => {
    const {sim, closedPort} = await world();
    const address = `http://127.0.0.1:${closedPort}`;
    const result = await timed('auth_url unreachable', 'check', configFor(sim, {auth_url: address}));
    const message = failure(result);
    expect(message).toContain('auth_url');
    expect(message).toContain(address);
    expect(message).toMatch(/refused/);
    expect(message).toMatch(ACTION);
    expectPrompt(result);
  });

  test.concurrent('api_url unreachable: check names api_url and its address, once for all quests', async () => {
    const {sim, closedPort} = await world();
    const address = `http://127.0.0.1:${closedPort}`;
    const result = await timed('api_url unreachable', 'check', configFor(sim, {api_url: address}));
    const message = failure(result);
    expect(message).toMatch(/Check api_url/);
    expect(message).toContain(address);
    expect(count(message, 'ECONNREFUSED')).toBe(1);
    // Not the quests' fault.
    expect(message).not.toMatch(/quest\(s\) cannot be read|quest_ids/);
    expectPrompt(result);
  });

  test.concurrent('TLS to a plain-http server: the message says TLS and names the URL', async () => {
    const {sim} = await world();
    const url = sim.apiUrl.replace(/^http:/, 'https:');
    const result = await timed('TLS problem (https:// to a plain-http port)', 'check', configFor(sim, {api_url: url}));
    const message = failure(result);
    expect(message).toMatch(/TLS/);
    expect(message).toContain(`api_url (${url})`);
    expect(message).toMatch(ACTION);
    // The reason, without OpenSSL's internals.
    expect(message).toMatch(/wrong version number/);
    expect(message).not.toMatch(/openssl|ssl3_|\n/i);
    expectPrompt(result);
  });

  test.concurrent('401 from the token service: check client_id/client_secret and project_id', async () => {
    const {sim} = await world();
    const result = await timed('401 from the token service', 'check', configFor(sim, {client_secret: 'not-it'}));
    const message = failure(result);
    expect(message).toMatch(/401/);
    expect(message).toMatch(/Check client_id and client_secret/);
    expect(message).toMatch(/project_id/);
    expect(message).not.toContain('not-it');
    expectPrompt(result);
  });

  test.concurrent('404 on every quest (wrong api_url path): says check api_url, not the quest ids', async () => {
    const {sim} = await world();
    const url = `${sim.apiUrl}/nope`;
    const result = await timed('404 on every quest', 'check', configFor(sim, {api_url: url}));
    const message = failure(result);
    expect(message).toContain(`api_url (${url}) is wrong`);
    expect(message).not.toMatch(/check (its id|the quest ids?)/i);
    expectPrompt(result);
  });

  test.concurrent('one quest forbidden, one missing: the message names which is which', async () => {
    const {sim} = await world();
    const result = await timed(
      'one quest forbidden, one missing',
      'check',
      configFor(sim, {quest_ids: [A, FORBIDDEN, MISSING]})
    );
    const message = failure(result);
    expect(message).toMatch(/^2 of 3 quest\(s\) cannot be read/);
    expect(message).not.toContain(A);
    const forbidden = message.slice(message.indexOf(FORBIDDEN), message.indexOf(MISSING));
    expect(forbidden).toMatch(/HTTP 403.*no permission for this quest/);
    const missing = message.slice(message.indexOf(MISSING));
    expect(missing).toMatch(/HTTP 404.*quest was not found: check its id in quest_ids/);
    expect(message.indexOf(FORBIDDEN)).toBeGreaterThanOrEqual(0);
    expect(message.indexOf(MISSING)).toBeGreaterThan(message.indexOf(FORBIDDEN));
    expectPrompt(result);
  });

  test.concurrent('api_url ending in /v1: works, with a warning that names the fix', async () => {
    const {sim} = await world();
    const result = await timed('api_url ending in /v1', 'check', configFor(sim, {api_url: `${sim.apiUrl}/v1`}));
    expect(connectionStatus(result)).toEqual({status: 'SUCCEEDED'});
    expect(warnings(result)).toEqual([
      `'api_url' ends with the path the connector adds itself; using ${sim.apiUrl} (set 'api_url' to that to silence this warning).`,
    ]);
    expectPrompt(result);
  });

  test.concurrent('a misspelled optional key (window_size): a warning suggests window_days', async () => {
    const {sim} = await world();
    const {window_days: _, ...config} = configFor(sim);
    const result = await timed('misspelled optional key window_size', 'check', {...config, window_size: 7});
    expect(connectionStatus(result)).toEqual({status: 'SUCCEEDED'});
    expect(warnings(result)).toEqual(["Unknown option 'window_size' is ignored: did you mean 'window_days'?"]);
    expectPrompt(result);
  });

  test.concurrent('a misspelled required key (clientSecret): the error names the typo and the fix', async () => {
    const {sim} = await world();
    const {client_secret: secret, ...config} = configFor(sim);
    const result = await timed('misspelled required key clientSecret', 'check', {...config, clientSecret: secret});
    const message = failure(result);
    expect(message).toMatch(
      /'client_secret' is required\. The config has 'clientSecret': rename it to 'client_secret'\./
    );
    expect(message).not.toContain(String(secret));
    expectPrompt(result);
  });

  test.concurrent('a future start_date: says what to set instead', async () => {
    const {sim} = await world();
    const future = new Date(Date.now() + 3 * 86_400_000).toISOString();
    const result = await timed('future start_date', 'check', configFor(sim, {start_date: future}));
    const message = failure(result);
    expect(message).toContain(`'start_date' ${future} lies in the future`);
    expect(message).toMatch(
      /Set it to the first day whose responses you want \(today or earlier, UTC\), e\.g\. \d{4}-\d{2}-\d{2}T00:00:00Z\./
    );
    expectPrompt(result);
  });

  test.concurrent(
    'a config error inside read (wrong client_secret, 2 quests): one error trace for the sync',
    async () => {
      const {sim, file} = await world();
      const catalog = file(simCatalog(sim, [A, B], 'incremental'));
      const result = await timed(
        'config error inside read (wrong client_secret)',
        'read',
        configFor(sim, {client_secret: 'not-it'}),
        ['--catalog', catalog]
      );
      expect(result.code).toBe(1);
      const errors = errorTraces(result.messages);
      expect(errors).toHaveLength(1);
      const error = errors[0].trace.error;
      expect(error?.failure_type).toBe('config_error');
      expect(error?.stream_descriptor).toBeUndefined();
      expect(error?.message).toMatch(/Check client_id and client_secret/);
      expect(error?.message).not.toMatch(/resume|next sync/i);
      const statuses = statusesByStream(result.messages);
      expect(Object.values(statuses).map((s) => s[s.length - 1])).toEqual(['INCOMPLETE', 'INCOMPLETE']);
      expectPrompt(result);
    }
  );

  test.concurrent('a quest id typo (not a UUID): named once or twice, with what a quest id looks like', async () => {
    const {sim} = await world();
    const typo = A.slice(0, -1);
    const result = await timed('quest id typo (not a UUID)', 'check', configFor(sim, {quest_ids: [typo, B]}));
    const message = failure(result);
    expect(count(message, typo)).toBeGreaterThanOrEqual(1);
    expect(count(message, typo)).toBeLessThanOrEqual(2);
    expect(message).toMatch(/quest_ids\[0\]/);
    expect(message).toMatch(/List the ids of the quests to export/);
    expectPrompt(result);
  });
});
