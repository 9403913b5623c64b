// The hostile service: the simulator serving a few small quests of fixed rows, whose tests replace
// any route's answers (Simulator.on) with what a misbehaving service sends, and the judgement of
// what the connector did: exit code, failure, data, states and secrets. Runs are in-process, on a
// virtual clock shared with the simulator unless a test asks for real time.

import zlib from 'zlib';

import {warehouseNames} from '../../src/sync/streams/column-names';
import {QuestConfig, Simulator, startSimulator} from '../../simulator';
import {TestClock} from './clock';
import {
  errorTraces,
  LiveRun,
  logLines,
  records,
  startBinMain,
  startConnector,
  states,
  tempDir,
  writeJson,
} from './connector';
import {runtimeOf, streamOf, using} from './fixtures';
import {AirbyteMessageJson} from './protocol';

export const HEADER = ['Response ID', 'Created', 'Q1 Comment', 'Q2 Rating'];
const CREATED = 1;
export const BOM = '\uFEFF';
export const DAY_MS = 86_400_000;
export const CURSOR_FIELD = '_questback_window_end';

export const CLIENT_ID = '312345678901234567@questback';
export const CLIENT_SECRET = 's3cr3t/with+special=chars&more ø%';
export const PROJECT_ID = '314876184947078893';

/** One CSV row, cells in the order of the quest's header. */
export type Row = string[];

/**
 * A quest's default data: a handful of rows over the last few days (one of them 4 days old, before
 * the tests' usual start_date), with cells that need quoting and non-ASCII text.
 */
export function defaultRows(questIndex: number, now = Date.now()): Row[] {
  const at = (daysAgo: number): string => new Date(now - daysAgo * DAY_MS).toISOString();
  const id = (i: number): string => `R-${questIndex + 1}${String(i).padStart(3, '0')}`;
  return [
    [id(1), at(4), 'Older than the start date', '1'],
    [id(2), at(2.6), 'Great, "really" | great', '5'],
    [id(3), at(1.9), 'Line one\r\nline two', '4'],
    [id(4), at(1.2), 'Blåbær og ø på Ærø', '3'],
    [id(5), at(0.6), 'Quick and friendly', '5'],
    [id(6), at(0.1), 'Could be better', '2'],
  ];
}

/** Rows `R-9001`, `R-9002`, ... created the given numbers of days ago, with the given comments. */
export function rowsAt(cells: [number, string][]): Row[] {
  const now = Date.now();
  return cells.map(([daysAgo, comment], i) => [
    `R-${9001 + i}`,
    new Date(now - daysAgo * DAY_MS).toISOString(),
    comment,
    String((i % 5) + 1),
  ]);
}

export interface HostileOptions {
  /** Quests served: an id (default rows) or rows and a header of its own. Default: one quest. */
  quests?: (string | {id: string; header?: string[]; rows?: Row[]})[];
  /** Path prefix of the whole service, e.g. `/gw/qb`; requests outside it get 404. */
  prefix?: string;
  /** 'real': the system clock, for a case about real time (default: a TestClock). */
  clock?: 'real';
}

/** The service with its quests, credentials that need escaping, and the clock runs share with it. */
export async function startHostile(options: HostileOptions = {}): Promise<Simulator> {
  const now = Date.now();
  const quests: QuestConfig[] = (options.quests ?? ['1b4e28ba-2fa1-41d2-883f-0016d3cca427']).map((q, i) => {
    const given = typeof q === 'string' ? {id: q} : q;
    return {id: given.id, table: {header: given.header ?? HEADER, rows: given.rows ?? defaultRows(i, now)}};
  });
  return startSimulator({
    seed: 19,
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    projectId: PROJECT_ID,
    pathPrefix: options.prefix,
    quests,
    files: 'memory',
    ...(options.clock === 'real' ? {} : {clock: new TestClock()}),
  });
}

/** Runs `fn` with a service of its own, always closed afterwards. */
export const withServer = (options: HostileOptions, fn: (server: Simulator) => Promise<void>): Promise<void> =>
  using(startHostile(options), fn);

/** The quest's rows with since < Created <= until (epoch ms). */
export function rowsBetween(server: Simulator, questId: string, sinceMs: number, untilMs: number): Row[] {
  return server.groundTruth(questId).rows.filter((r) => {
    const at = Date.parse(r[CREATED]);
    return at > sinceMs && at <= untilMs;
  });
}

// ---------------------------------------------------------------------------------------------
// Running the connector against the service, and judging what it did.

/**
 * The default request timeout, for a case that counts exports or downloads: axios times an answer on
 * real time, and with hostileConfig's 2 s a create answered late on a busy machine was retried,
 * making a second export (one never downloaded).
 */
export const PATIENT = {request_timeout_seconds: 120};

/** The connector config every hostile test starts from. */
export function hostileConfig(server: Simulator, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    client_id: server.clientId,
    client_secret: server.clientSecret,
    project_id: server.projectId,
    api_url: server.apiUrl,
    auth_url: server.authUrl,
    quest_ids: server.quests.map((q) => q.id),
    start_date: new Date(server.clock.now() - 3 * DAY_MS).toISOString(),
    settle_seconds: 0,
    request_timeout_seconds: 2,
    ...overrides,
  };
}

/** A configured catalog, incremental, of the given quests (each listed once unless repeated). */
export function catalogOf(
  server: Simulator,
  questIds: string[] = server.quests.map((q) => q.id),
  options: {properties?: boolean; names?: 'warehouse' | 'survey'} = {}
): Record<string, unknown> {
  return {
    streams: questIds.map((id) => {
      const properties: Record<string, unknown> = {};
      if (options.properties !== false) {
        const header = server.groundTruth(id).header;
        const names = options.names === 'survey' ? header : warehouseNames(header);
        names.forEach((name, i) => (properties[name] = {type: ['null', 'string'], title: header[i]}));
        properties._questback_quest_id = {type: 'string'};
        properties._questback_window_start = {type: 'string', format: 'date-time'};
        properties[CURSOR_FIELD] = {type: 'string', format: 'date-time'};
      }
      return {
        stream: {
          name: streamOf(id),
          json_schema: {type: 'object', additionalProperties: true, properties},
          supported_sync_modes: ['full_refresh', 'incremental'],
          source_defined_cursor: true,
          default_cursor_field: [CURSOR_FIELD],
        },
        sync_mode: 'incremental',
        cursor_field: [CURSOR_FIELD],
        destination_sync_mode: 'append',
      };
    }),
  };
}

export interface HostileRun {
  code: number | null;
  /** The signal a process was ended by (null in-process). */
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  messages: AirbyteMessageJson[];
  invalid: string[];
  /** Real time from start to end, in seconds: a bound on it only asks whether the connector hung. */
  seconds: number;
  /** Start and end on the service's clock. */
  startedAt: number;
  exitedAt: number;
  /** Stopped by the test after `killAfterMs`: the connector did not finish in time. */
  killed: boolean;
  config: Record<string, unknown>;
  /** start_date in epoch ms. */
  startMs: number;
}

export interface RunOptions {
  config?: Record<string, unknown>;
  catalog?: Record<string, unknown>;
  state?: unknown;
  /** The test stops the read after this long (real ms, default 60 s) so that a hang fails the test, not jest. */
  killAfterMs?: number;
  /** Runs bin/main as a process of its own (for signals); its waits take real time. */
  process?: boolean;
}

/** Starts `check` or `read` against the service, in-process on its clock; the live run can be watched line by line. */
export function launch(
  server: Simulator,
  command: 'check' | 'read',
  options: RunOptions = {}
): {live: LiveRun; done: Promise<HostileRun>} {
  const dir = tempDir('questback-hostile-');
  const config = hostileConfig(server, options.config);
  const args = [command, '--config', writeJson(dir, 'config.json', config)];
  if (command === 'read') args.push('--catalog', writeJson(dir, 'catalog.json', options.catalog ?? catalogOf(server)));
  if (options.state !== undefined) args.push('--state', writeJson(dir, 'state.json', options.state));
  const realStart = Date.now();
  const runtime = runtimeOf(server);
  if (options.process && runtime)
    throw new Error("a process runs on the real clock: start the service with clock: 'real'");
  const killAfterMs = options.killAfterMs ?? 60_000;
  const live = options.process ? startBinMain(args, {killAfterMs}) : startConnector(args, {runtime, killAfterMs});
  const done = live.done.then((r) => ({
    ...r,
    seconds: (Date.now() - realStart) / 1000,
    startedAt: live.startedAt,
    config,
    startMs: Date.parse(String(config.start_date)),
  }));
  return {live, done};
}

export function runHostile(server: Simulator, command: 'check' | 'read', options: RunOptions = {}) {
  return launch(server, command, options).done;
}

/** Every form in which a secret could leak: raw, URL- and form-encoded, JSON-escaped, base64; and every token issued. */
export function secretForms(server: Simulator): Record<string, string> {
  const secret = server.clientSecret;
  const forms: Record<string, string> = {
    raw: secret,
    encodeURIComponent: encodeURIComponent(secret),
    form: new URLSearchParams({s: secret}).toString().slice(2),
    json: JSON.stringify(secret).slice(1, -1),
    base64: Buffer.from(secret, 'utf8').toString('base64'),
    basicAuth: Buffer.from(`${server.clientId}:${secret}`, 'utf8').toString('base64'),
  };
  server.issuedTokens().forEach((token, i) => (forms[`token#${i + 1}`] = token));
  return forms;
}

/** Names of the secret forms found in the run's stdout or stderr. */
export function leaks(run: Pick<HostileRun, 'stdout' | 'stderr'>, server: Simulator): string[] {
  const output = run.stdout + '\n' + run.stderr;
  return Object.entries(secretForms(server))
    .filter(([, value]) => output.includes(value))
    .map(([name]) => name);
}

export const stateMessages = (run: HostileRun, questId: string) =>
  states(run.messages).filter((s) => s.state.stream.stream_descriptor.name === streamOf(questId));
export const recordsOf = (run: HostileRun, questId: string) =>
  records(run.messages).filter((r) => r.record.stream === streamOf(questId));

/**
 * What is wrong with a stream that should have succeeded: its records must be exactly the server's
 * rows after the start (start_date, or a later state cursor) up to its last STATE, each once, with
 * every cell as served; every STATE must only follow records covering it; and the last STATE must
 * cover every row the server has after the start.
 */
export function streamDataProblems(run: HostileRun, server: Simulator, questId: string, fromMs?: number): string[] {
  const problems: string[] = [];
  const quest = server.groundTruth(questId);
  const stream = streamOf(questId);
  const startMs = fromMs ?? run.startMs;
  const idIndex = quest.header.indexOf('Response ID');
  // Records carry the warehouse-safe names (the connector's default column_names), or the header's.
  const names = run.config.column_names === 'survey' ? quest.header : warehouseNames(quest.header);
  const idName = names[idIndex];
  const byId = new Map(quest.rows.map((r) => [r[idIndex], r]));
  const seen = new Map<string, number>();
  let lastCursor: number | undefined;
  for (const m of run.messages) {
    if (m.type === 'RECORD') {
      const rec = (m as unknown as {record: {stream: string; data: Record<string, unknown>}}).record;
      if (rec.stream !== stream) continue;
      const id = String(rec.data[idName]);
      seen.set(id, (seen.get(id) ?? 0) + 1);
      const row = byId.get(id);
      if (!row) {
        problems.push(`record with unknown Response ID ${JSON.stringify(rec.data[idName])}`);
        continue;
      }
      if (Date.parse(row[CREATED]) <= startMs) problems.push(`record ${id} was created before the start`);
      names.forEach((column, i) => {
        const want = row[i] === '' ? null : row[i];
        if (rec.data[column] !== want) {
          problems.push(
            `record ${id}: ${column} is ${JSON.stringify(rec.data[column])}, served ${JSON.stringify(want)}`
          );
        }
      });
    } else if (m.type === 'STATE') {
      const st = (
        m as unknown as {state: {stream?: {stream_descriptor: {name: string}; stream_state: {cursor?: string}}}}
      ).state;
      if (st.stream?.stream_descriptor.name !== stream) continue;
      const cursor = Date.parse(String(st.stream.stream_state?.cursor));
      if (Number.isNaN(cursor)) {
        problems.push(`STATE without a parsable cursor: ${JSON.stringify(st.stream.stream_state)}`);
        continue;
      }
      lastCursor = cursor;
      const missing = rowsBetween(server, questId, startMs, cursor)
        .map((r) => r[idIndex])
        .filter((id) => !seen.has(id));
      if (missing.length) {
        problems.push(
          `STATE at ${st.stream.stream_state.cursor} before the records ${missing.join(', ')} were emitted`
        );
      }
    }
  }
  for (const [id, n] of seen) if (n !== 1) problems.push(`record ${id} emitted ${n} times`);
  if (lastCursor === undefined) problems.push('no STATE');
  const expected = rowsBetween(server, questId, startMs, server.clock.now()).map((r) => r[idIndex]);
  const missing = expected.filter((id) => !seen.has(id));
  if (missing.length) problems.push(`rows never emitted: ${missing.join(', ')}`);
  return problems;
}

export interface Outcome {
  /** The exit code, or 'nonzero' for any number but 0. */
  code: number | 'nonzero';
  maxSeconds: number;
  /** The error TRACE expected (one, or the first of several). */
  failure?: {type: string | RegExp; message: RegExp; questId?: string};
  /** Quests whose records must equal the server's data, each once. */
  ok?: string[];
  /**
   * Quests that must claim no progress: no STATE moves their cursor past where the read started (a
   * STATE that only records a created export, for a later attempt to re-use, is allowed).
   */
  failed?: string[];
  /** Start of the expected data when not start_date (e.g. a state cursor). */
  fromMs?: number;
}

/** The whole judgement of one read: exit code, time, failure, records and states, no secret. */
export function judge(run: HostileRun, server: Simulator, outcome: Outcome) {
  const errors = errorTraces(run.messages).map((t) => t.trace.error);
  const failure = errors[0];
  return {
    code: run.code,
    exitedNonZero: typeof run.code === 'number' && run.code !== 0,
    killedByTest: run.killed,
    withinTime: run.seconds < outcome.maxSeconds ? true : `${run.seconds.toFixed(1)} s`,
    invalidLines: run.invalid,
    failureType: failure?.failure_type,
    failureMessage: failure?.message,
    failureStream: failure?.stream_descriptor?.name,
    data: Object.fromEntries((outcome.ok ?? []).map((q) => [q, streamDataProblems(run, server, q, outcome.fromMs)])),
    statesOfFailed: Object.fromEntries(
      (outcome.failed ?? []).map((q) => [
        q,
        stateMessages(run, q).filter((s) => movedCursor(s, outcome.fromMs ?? run.startMs)).length,
      ])
    ),
    leaks: leaks(run, server),
  };
}

/** Whether a STATE's cursor lies past `fromMs`, the start of the read (start_date, or the given state's cursor). */
function movedCursor(s: ReturnType<typeof stateMessages>[number], fromMs: number): boolean {
  const cursor = Date.parse(String((s.state.stream.stream_state as {cursor?: string}).cursor));
  // start_date is inclusive: the state of a read that moved nothing says start_date less 1 ms.
  return cursor >= fromMs;
}

/** The judgement `judge` must return for the outcome (use with toMatchObject / toEqual). */
export function wanted(outcome: Outcome) {
  return {
    ...(outcome.code === 'nonzero' ? {exitedNonZero: true} : {code: outcome.code}),
    killedByTest: false,
    withinTime: true,
    invalidLines: [],
    ...(outcome.failure
      ? {
          failureType:
            outcome.failure.type instanceof RegExp ? expect.stringMatching(outcome.failure.type) : outcome.failure.type,
          failureMessage: expect.stringMatching(outcome.failure.message),
          ...(outcome.failure.questId ? {failureStream: streamOf(outcome.failure.questId)} : {}),
        }
      : {failureType: undefined, failureMessage: undefined}),
    data: Object.fromEntries((outcome.ok ?? []).map((q) => [q, []])),
    statesOfFailed: Object.fromEntries((outcome.failed ?? []).map((q) => [q, 0])),
    leaks: [],
  };
}

/** Asserts the outcome of a read in one comparison, so a failure shows everything that went wrong. */
export function expectOutcome(run: HostileRun, server: Simulator, outcome: Outcome): void {
  expect(judge(run, server, outcome)).toMatchObject(wanted(outcome));
}

/** Log messages of a run, with their level. */
export function logs(run: HostileRun): {level: string; message: string}[] {
  return logLines(run.messages);
}

/** The CONNECTION_STATUS messages of a check. */
export function connectionStatuses(run: HostileRun): {status: string; message?: string}[] {
  return run.messages
    .filter((m) => m.type === 'CONNECTION_STATUS')
    .map((m) => (m as unknown as {connectionStatus: {status: string; message?: string}}).connectionStatus);
}

/** Encodes text as UTF-8 and turns each U+FFFD into one invalid byte (0xFF). */
export function utf8WithInvalidBytes(text: string): Buffer {
  const buf = Buffer.from(text, 'utf8');
  const out: number[] = [];
  for (let i = 0; i < buf.length; i++) {
    if (buf[i] === 0xef && buf[i + 1] === 0xbf && buf[i + 2] === 0xbd) {
      out.push(0xff);
      i += 2;
    } else out.push(buf[i]);
  }
  return Buffer.from(out);
}

export const gzip = (text: string | Buffer): Buffer => zlib.gzipSync(text);
