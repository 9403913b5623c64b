import {ChildProcess} from 'child_process';
import {AirbyteLogLevel} from 'faros-airbyte-cdk/lib/protocol';
import {Writable} from 'stream';

import {exited, spawnBinMain} from '../../harness/bin-main';
import {Runtime, systemRuntime} from '../../src/core/runtime';
import {mainCommand} from '../../src/index';
import {Host, StopSignal} from '../../src/protocol/cli';
import {StreamDefinition} from '../../src/sync/streams/stream-definition';
import {AirbyteMessageJson, messageErrors} from './protocol';

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
  messages: AirbyteMessageJson[];
  /** Lines of stdout that are not valid AirbyteMessages, with why. */
  invalid: string[];
}

export {removeTempDirs, tempDir, writeJson} from './temp';

/** Splits output into lines as it arrives, each timed on `clock`, and wakes whoever waits for one. */
class Lines {
  readonly lines: LiveLine[] = [];
  readonly chunks: Buffer[] = [];
  readonly waiters = new Set<() => void>();
  private partial = '';

  constructor(private readonly clock: () => number) {}

  add(chunk: Buffer): void {
    this.chunks.push(chunk);
    const parts = (this.partial + chunk.toString('utf8')).split('\n');
    this.partial = parts.pop() ?? '';
    const at = this.clock();
    for (const line of parts) if (line !== '') this.lines.push({at, line});
    this.wake();
  }

  end(): void {
    if (this.partial !== '') this.lines.push({at: this.clock(), line: this.partial});
    this.partial = '';
    this.wake();
  }

  get text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }

  private wake(): void {
    for (const wake of [...this.waiters]) wake();
  }
}

/** A live run: its stdout lines as they come, a way to signal it, and its result. */
function liveRun(
  lines: Lines,
  startedAt: number,
  kill: (signal: NodeJS.Signals) => void,
  done: Promise<LiveResult>
): LiveRun {
  const parse = (line: string): AirbyteMessageJson | undefined => {
    try {
      return JSON.parse(line);
    } catch {
      return undefined;
    }
  };
  const live: LiveRun = {
    startedAt,
    lines: lines.lines,
    kill,
    waitForLine(match, timeoutMs) {
      return new Promise((resolve) => {
        let checked = 0;
        const check = (): void => {
          for (; checked < lines.lines.length; checked++) {
            const message = parse(lines.lines[checked].line);
            if (message && match(message)) return finish(lines.lines[checked]);
          }
          if (live.exitedAt !== undefined) finish(undefined);
        };
        const deadline = setTimeout(() => finish(undefined), timeoutMs);
        const finish = (line: LiveLine | undefined): void => {
          clearTimeout(deadline);
          lines.waiters.delete(check);
          resolve(line);
        };
        lines.waiters.add(check);
        check();
      });
    },
    done: done.then((result) => {
      live.exitedAt = result.exitedAt;
      lines.end();
      return result;
    }),
  };
  return live;
}

/** The runs in progress that hear of Node's process warnings: one listener for all, however many run at once. */
const warningListeners = new Set<(warning: Error) => void>();
const onWarning = (warning: Error): void => warningListeners.forEach((listener) => listener(warning));

function watchWarnings(listener: (warning: Error) => void): () => void {
  if (warningListeners.size === 0) process.on('warning', onWarning);
  warningListeners.add(listener);
  return () => {
    warningListeners.delete(listener);
    if (warningListeners.size === 0) process.off('warning', onWarning);
  };
}

export interface InProcessOptions {
  /** The connector's clock: a TestClock shared with the simulator makes its waits take no real time. */
  runtime?: Runtime;
  /** LOG_LEVEL for this run (default info). */
  logLevel?: 'trace' | 'debug' | 'info' | 'warn' | 'error';
  /** Sends SIGTERM after this many real ms, so that a hang fails its test instead of jest (default 240 s: a guard against hangs, far from what a busy machine takes). */
  killAfterMs?: number;
  /** The kinds of stream the source has (the connector's own by default): a test may add a kind of its own. */
  definitions?: readonly StreamDefinition[];
}

/**
 * Runs a command of the connector in this process (mainCommand, as bin/main runs it) and returns
 * at once: stdout is collected line by line, each line timed on the run's clock. `kill('SIGTERM')`
 * or `kill('SIGINT')` stops a read as the signal would; only a process can be SIGKILLed.
 */
export function startConnector(args: string[], options: InProcessOptions = {}): LiveRun {
  const runtime = options.runtime ?? systemRuntime;
  const lines = new Lines(() => runtime.now());
  const out = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.add(chunk);
      callback();
    },
  });
  let stderr = '';
  let exitCode: number | undefined;
  let exited: number | undefined;
  const stopListeners = new Set<(signal: StopSignal) => void>();
  const host: Host = {
    setExitCode: (code) => void (exitCode = code),
    exit: (code) => void (exited ??= code),
    stderr: (text) => void (stderr += text),
    onStop(listener) {
      stopListeners.add(listener);
      return () => stopListeners.delete(listener);
    },
    worker: false,
  };
  // What Node would print on a process's stderr (MaxListenersExceededWarning...) is this run's stderr.
  const stopWatching = watchWarnings((warning) => void (stderr += `${warning.name}: ${warning.message}\n`));
  let killed = false;
  const kill = (signal: NodeJS.Signals): void => {
    if (signal !== 'SIGTERM' && signal !== 'SIGINT')
      throw new Error(`an in-process run takes SIGTERM or SIGINT, not ${signal}: use startBinMain`);
    for (const listener of [...stopListeners]) listener(signal);
  };
  const guard = setTimeout(() => {
    killed = true;
    kill('SIGTERM');
  }, options.killAfterMs ?? 240_000);
  const level = options.logLevel && AirbyteLogLevel[options.logLevel.toUpperCase() as keyof typeof AirbyteLogLevel];
  const startedAt = runtime.now();
  const {definitions} = options;
  const command = mainCommand({runtime, out, host, logLevel: level, ...(definitions ? {definitions} : {})});
  const done = command
    .parseAsync(args, {from: 'user'})
    // As bin/main ends (its own code, which must run without lib/): commander's usage errors are
    // explained already; anything else in one line on stderr (failureLine: no secret), the stack only at debug level.
    .then(
      () => exited ?? exitCode ?? 0,
      (err: {code?: unknown; exitCode?: unknown; stack?: string; message?: string}) => {
        if (err && err.code && String(err.code).startsWith('commander.'))
          return exited ?? (typeof err.exitCode === 'number' ? err.exitCode : 2);
        const debug = options.logLevel === 'debug' || options.logLevel === 'trace';
        stderr += `bin/main: ${command.failureLine(err, debug)}\n`;
        return exited ?? 1;
      }
    )
    .then((code) => {
      clearTimeout(guard);
      stopWatching();
      lines.end();
      const result = collect(code, lines.text, stderr);
      return {...result, signal: null, exitedAt: runtime.now(), killed};
    });
  return liveRun(lines, startedAt, kill, done);
}

/** Runs a command of the connector in this process and checks every stdout line against the protocol schema. */
export async function runConnector(args: string[], options: InProcessOptions = {}): Promise<RunResult> {
  const {code, stdout, stderr, messages, invalid} = await startConnector(args, options).done;
  return {code, stdout, stderr, messages, invalid};
}

/**
 * Runs bin/main as a process of its own, for what only a process shows (signals, SIGKILL, a closed
 * stdout, exit codes, peak memory); like startConnector otherwise. The process is killed after
 * `killAfterMs` so that a hanging connector fails its test instead of jest.
 */
export function startBinMain(
  args: string[],
  options: {env?: Record<string, string>; killAfterMs?: number} = {}
): LiveRun & {child: ChildProcess} {
  const child = spawnBinMain(args, {env: {...process.env, ...options.env}, stdio: ['ignore', 'pipe', 'pipe']});
  const startedAt = Date.now();
  const lines = new Lines(() => Date.now());
  const err: Buffer[] = [];
  child.stdout?.on('data', (d: Buffer) => lines.add(d));
  child.stderr?.on('data', (d: Buffer) => err.push(d));
  let killed = false;
  const timer = setTimeout(() => {
    killed = true;
    child.kill('SIGKILL');
  }, options.killAfterMs ?? 240_000);
  const done = exited(child)
    .finally(() => clearTimeout(timer))
    .then(({code, signal}): LiveResult => {
      const exitedAt = Date.now();
      lines.end();
      return {...collect(code, lines.text, Buffer.concat(err).toString('utf8')), signal, exitedAt, killed};
    });
  return {...liveRun(lines, startedAt, (signal) => void child.kill(signal), done), child};
}

/** Runs bin/main as a process of its own (see startBinMain) to its end. */
export async function runBinMain(args: string[], env: Record<string, string> = {}): Promise<RunResult> {
  const {code, stdout, stderr, messages, invalid} = await startBinMain(args, {env}).done;
  return {code, stdout, stderr, messages, invalid};
}

/** Parses the connector's stdout and checks every line against the protocol. */
function collect(code: number | null, stdout: string, stderr: string): RunResult {
  const invalid: string[] = [];
  const messages: AirbyteMessageJson[] = [];
  for (const line of stdout.split('\n').filter((l) => l !== '')) {
    const errors = messageErrors(line);
    if (errors.length) invalid.push(`${errors.join('; ')} :: ${line.slice(0, 300)}`);
    try {
      messages.push(JSON.parse(line));
    } catch {
      // reported in invalid
    }
  }
  return {code, stdout, stderr, messages, invalid};
}

export function ofType<T = Record<string, unknown>>(messages: AirbyteMessageJson[], type: string): T[] {
  return messages.filter((m) => m.type === type) as unknown as T[];
}

export interface RecordMessage {
  record: {stream: string; emitted_at: number; data: Record<string, unknown>; meta?: {changes: unknown[]}};
}
export interface StateMessage {
  state: {
    type: string;
    stream: {stream_descriptor: {name: string}; stream_state: {cursor: string}};
    sourceStats: {recordCount: number};
  };
}
export interface TraceMessage {
  trace: {
    type: string;
    error?: {message: string; failure_type: string; stream_descriptor?: {name: string}; stack_trace?: string};
    stream_status?: {stream_descriptor: {name: string}; status: string; reasons?: unknown[]};
  };
}

export const records = (m: AirbyteMessageJson[]): RecordMessage[] => ofType<RecordMessage>(m, 'RECORD');
export const states = (m: AirbyteMessageJson[]): StateMessage[] => ofType<StateMessage>(m, 'STATE');
export const traces = (m: AirbyteMessageJson[]): TraceMessage[] => ofType<TraceMessage>(m, 'TRACE');
export const errorTraces = (m: AirbyteMessageJson[]): TraceMessage[] =>
  traces(m).filter((t) => t.trace.type === 'ERROR');
/** The LOG messages' level and text. */
export const logLines = (m: AirbyteMessageJson[]): {level: string; message: string}[] =>
  ofType<{log: {level: string; message: string}}>(m, 'LOG').map((l) => l.log);
/** The texts of the WARN logs. */
export const warnings = (m: AirbyteMessageJson[]): string[] =>
  logLines(m)
    .filter((l) => l.level === 'WARN')
    .map((l) => l.message);

/** The values that occur more than once, each once (in linear time: a read may hold tens of thousands). */
export function repeated(values: readonly string[]): string[] {
  const seen = new Set<string>();
  const twice = new Set<string>();
  for (const value of values) (seen.has(value) ? twice : seen).add(value);
  return [...twice];
}

/** Milliseconds per unit of the durations the connector writes (core/time.ts formatDuration). */
const UNIT_MS: Record<string, number> = {ms: 1, s: 1000, min: 60_000, h: 3_600_000, d: 86_400_000};

/**
 * The waits the connector announced in its log (every wait is logged: retries, 429s, a low rate
 * limit, 409s), each with its line. Tests that are about "it did not wait" or "it retried soon" assert
 * on these, not on wall time, which a busy machine stretches several-fold.
 */
export function announcedWaits(m: AirbyteMessageJson[]): {ms: number; message: string}[] {
  const out: {ms: number; message: string}[] = [];
  for (const message of ofType<{log: {message: string}}>(m, 'LOG').map((l) => l.log.message)) {
    const said = /\b(?:waiting|retry \d+\/\d+ in|asking again in) (\d+(?:\.\d+)?) (ms|s|min|h|d)\b/.exec(message);
    if (said) out.push({ms: Number(said[1]) * UNIT_MS[said[2]], message});
  }
  return out;
}

/** Stream statuses in order, per stream name. */
export function statusesByStream(m: AirbyteMessageJson[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const t of traces(m)) {
    const s = t.trace.stream_status;
    if (t.trace.type === 'STREAM_STATUS' && s) (out[s.stream_descriptor.name] ??= []).push(s.status);
  }
  return out;
}

/** The last state of each stream, as a state file for the next read. */
export function stateFile(m: AirbyteMessageJson[], previous: StateMessage['state'][] = []): StateMessage['state'][] {
  const last = new Map<string, StateMessage['state']>();
  for (const s of previous) last.set(s.stream.stream_descriptor.name, s);
  for (const s of states(m)) last.set(s.state.stream.stream_descriptor.name, s.state);
  return [...last.values()];
}

/** One stdout line of a live run and when it arrived, on the run's clock. */
export interface LiveLine {
  at: number;
  line: string;
}

export interface LiveResult extends RunResult {
  /** The signal a process was ended by (null in-process). */
  signal: NodeJS.Signals | null;
  exitedAt: number;
  /** The run was ended by the test after `killAfterMs`. */
  killed: boolean;
}

/** A connector run whose stdout is watched line by line as it arrives. */
export interface LiveRun {
  startedAt: number;
  lines: LiveLine[];
  exitedAt?: number;
  /** The first stdout line (already seen or still to come) whose parsed message satisfies `match`; undefined on timeout or exit. */
  waitForLine(match: (message: AirbyteMessageJson) => boolean, timeoutMs: number): Promise<LiveLine | undefined>;
  /** Sends the run a signal. */
  kill(signal: NodeJS.Signals): void;
  done: Promise<LiveResult>;
}

/**
 * Records a destination keeps: Airbyte commits a stream's records when a STATE of that stream
 * follows them; records after a stream's last STATE (a window that failed) are not committed.
 */
export function committed(messages: AirbyteMessageJson[]): RecordMessage[] {
  const kept: RecordMessage[] = [];
  const pending = new Map<string, RecordMessage[]>();
  for (const m of messages) {
    if (m.type === 'RECORD') {
      const r = m as unknown as RecordMessage;
      (pending.get(r.record.stream) ?? pending.set(r.record.stream, []).get(r.record.stream))?.push(r);
    } else if (m.type === 'STATE') {
      const name = (m as unknown as StateMessage).state.stream.stream_descriptor.name;
      kept.push(...(pending.get(name) ?? []));
      pending.set(name, []);
    }
  }
  return kept;
}
