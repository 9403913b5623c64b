import {spawn} from 'child_process';
import fs from 'fs';
import os from 'os';
import path from 'path';

import {AirbyteMessageJson, messageErrors} from './protocol';

export const MAIN = path.resolve(__dirname, '..', '..', 'bin', 'main');

/** The node flags bin/main's first line gives node (`#!/usr/bin/env -S node …`): what the image runs it with. */
export function mainNodeFlags(): string[] {
  const shebang = fs.readFileSync(MAIN, 'utf8').split('\n', 1)[0];
  return shebang
    .replace(/^#!\S+\s+-S\s+node\b/, '')
    .split(/\s+/)
    .filter(Boolean);
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
  messages: AirbyteMessageJson[];
  /** Lines of stdout that are not valid AirbyteMessages, with why. */
  invalid: string[];
}

const created: string[] = [];

/** A fresh folder in the system's temp dir, removed when the test file ends (see test/setup.ts). */
export function tempDir(prefix = 'questback-test-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  created.push(dir);
  return dir;
}

export function removeTempDirs(): void {
  for (const dir of created.splice(0)) fs.rmSync(dir, {recursive: true, force: true});
}

export function writeJson(dir: string, name: string, value: unknown): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value));
  return file;
}

/**
 * Runs bin/main as a subprocess (asynchronously, so an in-process simulator keeps serving) and
 * checks every stdout line against the protocol schema.
 */
export function runConnector(args: string[], env: Record<string, string> = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, ...args], {
      env: {...process.env, ...env},
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => err.push(d));
    child.on('error', reject);
    child.on('close', (code) => {
      try {
        resolve(collect(code, Buffer.concat(out).toString('utf8'), Buffer.concat(err).toString('utf8')));
      } catch (e) {
        reject(e);
      }
    });
  });
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
  record: {stream: string; emitted_at: number; data: Record<string, unknown>};
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

/** One stdout line of a live run and when it arrived (Date.now()). */
export interface LiveLine {
  at: number;
  line: string;
}

export interface LiveResult extends RunResult {
  signal: NodeJS.Signals | null;
  exitedAt: number;
  /** The run was killed after `killAfterMs`. */
  killed: boolean;
}

/** A connector process whose stdout is watched line by line as it arrives. */
export interface LiveRun {
  child: ReturnType<typeof spawn>;
  startedAt: number;
  lines: LiveLine[];
  exitedAt?: number;
  /** The first stdout line (already seen or still to come) whose parsed message satisfies `match`; undefined on timeout or exit. */
  waitForLine(match: (message: AirbyteMessageJson) => boolean, timeoutMs: number): Promise<LiveLine | undefined>;
  done: Promise<LiveResult>;
}

/**
 * Like runConnector, but returns at once: stdout is read incrementally (each line timed), and the
 * process is killed after `killAfterMs` so that a hanging connector fails its test instead of jest.
 */
export function startConnector(
  args: string[],
  options: {env?: Record<string, string>; killAfterMs?: number} = {}
): LiveRun {
  const child = spawn(process.execPath, [MAIN, ...args], {
    env: {...process.env, ...options.env},
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const startedAt = Date.now();
  const lines: LiveLine[] = [];
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const waiters = new Set<() => void>();
  let partial = '';
  let killed = false;
  const parse = (line: string): AirbyteMessageJson | undefined => {
    try {
      return JSON.parse(line);
    } catch {
      return undefined;
    }
  };
  child.stdout.on('data', (d: Buffer) => {
    out.push(d);
    const parts = (partial + d.toString('utf8')).split('\n');
    partial = parts.pop() ?? '';
    const at = Date.now();
    for (const line of parts) if (line !== '') lines.push({at, line});
    for (const wake of [...waiters]) wake();
  });
  child.stderr.on('data', (d: Buffer) => err.push(d));
  const timer = setTimeout(() => {
    killed = true;
    child.kill('SIGKILL');
  }, options.killAfterMs ?? 60_000);
  const live: LiveRun = {
    child,
    startedAt,
    lines,
    waitForLine(match, timeoutMs) {
      return new Promise((resolve) => {
        let checked = 0;
        const check = (): void => {
          for (; checked < lines.length; checked++) {
            const message = parse(lines[checked].line);
            if (message && match(message)) return finish(lines[checked]);
          }
          if (live.exitedAt !== undefined) finish(undefined);
        };
        const deadline = setTimeout(() => finish(undefined), timeoutMs);
        const finish = (line: LiveLine | undefined): void => {
          clearTimeout(deadline);
          waiters.delete(check);
          resolve(line);
        };
        waiters.add(check);
        check();
      });
    },
    done: new Promise((resolve, reject) => {
      child.on('error', reject);
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        live.exitedAt = Date.now();
        if (partial !== '') lines.push({at: live.exitedAt, line: partial});
        for (const wake of [...waiters]) wake();
        try {
          const result = collect(code, Buffer.concat(out).toString('utf8'), Buffer.concat(err).toString('utf8'));
          resolve({...result, signal, exitedAt: live.exitedAt, killed});
        } catch (e) {
          reject(e);
        }
      });
    }),
  };
  return live;
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
