// Child processes of the benchmark: every one is bounded by a timeout and registered, so that an
// error, Ctrl+C or a timeout kills exactly the processes the benchmark started (by process group:
// /usr/bin/time's node child must go too) and nothing is left behind.

import {ChildProcess, execFileSync, fork, spawn, SpawnOptions} from 'child_process';
import fs from 'fs';
import path from 'path';

import {type Exit, exited, ROOT} from '../../harness/bin-main';
import {usageProbe} from '../../harness/peak-usage';
import type {ExportRecord, FaultOptions, RequestRecord, SimulatorStats} from '../../simulator';
import {ConsumerReport, SimCommand, SimInfo, SimProcessOptions, SimReply} from './types';

const CONSUMER = path.join(__dirname, 'consumer.js');
const SIM_PROCESS = path.join(__dirname, 'sim-process.js');
const TIME = '/usr/bin/time';

const live = new Set<ChildProcess>();

/** Spawns in its own process group (detached) so that killGroup reaches its descendants. */
function start(command: string, args: string[], options: SpawnOptions): ChildProcess {
  const child = spawn(command, args, {...options, detached: true});
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    child.kill('SIGKILL');
  }
}

/** Kills every child still running; safe to call from an 'exit' handler (synchronous). */
export function killAll(): void {
  for (const child of live) killGroup(child);
  live.clear();
}

/** Waits for the child; past the deadline it is killed and the promise fails saying which step hung. */
async function within<T>(promise: Promise<T>, timeoutMs: number, label: string, children: ChildProcess[]): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      for (const c of children) killGroup(c);
      reject(new Error(`${label} did not finish within ${Math.round(timeoutMs / 1000)} s and was killed`));
    }, timeoutMs);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** Keeps the last `max` characters of a stream, for error messages. */
function tail(stream: NodeJS.ReadableStream | null, max = 16_384): () => string {
  let text = '';
  stream?.on('data', (d: Buffer) => {
    text = (text + d.toString('utf8')).slice(-max);
  });
  return () => text;
}

export interface CapturedRun extends Exit {
  stdout: string;
  stderr: string;
  wallMs: number;
}

/** Runs `node args` and captures its (small) output: bin/main discover, for instance. */
export async function runNode(args: string[], timeoutMs: number, label: string): Promise<CapturedRun> {
  const startedAt = Date.now();
  const child = start(process.execPath, args, {cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe']});
  const out: Buffer[] = [];
  child.stdout?.on('data', (d: Buffer) => out.push(d));
  const stderr = tail(child.stderr);
  const exit = await within(exited(child), timeoutMs, label, [child]);
  return {...exit, stdout: Buffer.concat(out).toString('utf8'), stderr: stderr(), wallMs: Date.now() - startedAt};
}

export interface ProducerFigures extends Exit {
  /** From spawn to exit of the producer, ms. */
  wallMs: number;
  peakRssKb?: number;
  userS?: number;
  sysS?: number;
  stderr: string;
  /** It was told to stop (stopAfterMs) before it finished. */
  stopped: boolean;
}

export interface PipedRun {
  producer: ProducerFigures;
  consumer: ConsumerReport;
  startedAt: number;
}

/** BENCH_NO_TIME=1 forces the fallback (the producer's own report, harness/peak-usage.ts), to check it where /usr/bin/time is. */
export const HAS_TIME = fs.existsSync(TIME) && !process.env.BENCH_NO_TIME;

/**
 * Runs `node producerArgs` with its stdout piped straight into a consumer process (never through
 * this process's event loop), and measures the producer: wall time, peak RSS and CPU time via
 * /usr/bin/time when present, else, for a node producer, as it reports them on exit.
 */
export async function runPiped(
  producerArgs: string[],
  opts: {
    timeoutMs: number;
    label: string;
    tmpDir: string;
    env?: NodeJS.ProcessEnv;
    /** false: no /usr/bin/time or usage report (no RSS or CPU figures); the producer is node itself. */
    measure?: boolean;
    /**
     * Past this, the producer gets SIGTERM (a read then ends its streams and exits on its own) and the
     * run counts as stopped, not failed. Only without `measure`, so that the signal reaches node itself.
     */
    stopAfterMs?: number;
    /** The producer's program, when it is not node (an external tool): producerArgs are its arguments. */
    command?: string;
    /** The consumer reads slowly (consumer.ts BENCH_PACE): nothing for stallMs, then pauseMs after each portion. */
    pace?: {stallMs: number; portionBytes: number; pauseMs: number};
    /**
     * Connect producer and consumer with a pipe (a FIFO), as a shell would, instead of the socket pair
     * child processes get: a tool that opens /dev/stdout (DuckDB's COPY) cannot open a socket.
     */
    fifo?: boolean;
    /** The producer writes data lines only (a tool's JSON rows): the consumer counts each as a record, decoding none. */
    dataLines?: boolean;
  }
): Promise<PipedRun> {
  // The consumer first: the producer gets its stdin as stdout. The parent never reads that pipe
  // (a readable end in the parent would start reading and steal data), it only holds the write end.
  const pace = opts.pace;
  let fifoEnds: [number, number] | undefined;
  if (opts.fifo) {
    const fifo = path.join(opts.tmpDir, `fifo-${process.pid}-${Date.now()}`);
    execFileSync('mkfifo', [fifo]);
    // The read end first, without waiting for a writer; then the write end finds its reader.
    const readEnd = fs.openSync(fifo, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    fifoEnds = [readEnd, fs.openSync(fifo, fs.constants.O_WRONLY)];
    fs.unlinkSync(fifo);
  }
  const consumer = start(process.execPath, [CONSUMER], {
    cwd: ROOT,
    stdio: [fifoEnds ? fifoEnds[0] : 'pipe', 'pipe', 'pipe'],
    env: {
      ...process.env,
      ...(pace ? {BENCH_PACE: `${pace.stallMs},${pace.portionBytes},${pace.pauseMs}`} : {}),
      ...(opts.dataLines ? {BENCH_DATA_LINES: '1'} : {}),
    },
  });
  const consumerOut: Buffer[] = [];
  consumer.stdout?.on('data', (d: Buffer) => consumerOut.push(d));
  const consumerErr = tail(consumer.stderr);

  const timeFile = path.join(opts.tmpDir, `${opts.label.replace(/[^a-z0-9]+/gi, '-')}-${Date.now()}.time`);
  const measure = opts.measure ?? true;
  if (measure && opts.stopAfterMs !== undefined) throw new Error(`${opts.label}: stopAfterMs needs measure: false`);
  const useTime = measure && HAS_TIME;
  const program = opts.command ?? process.execPath;
  // Without /usr/bin/time a node producer reports its own usage; an external tool goes unmeasured.
  const probe = measure && !useTime && !opts.command ? usageProbe(opts.tmpDir) : undefined;
  const [command, args] = useTime
    ? [TIME, ['-f', '%e %U %S %M', '-o', timeFile, program, ...producerArgs]]
    : [program, producerArgs];
  const startedAt = Date.now();
  const pipe = fifoEnds ? fifoEnds[1] : consumer.stdin;
  if (!pipe) throw new Error(`${opts.label}: the consumer has no stdin pipe`);
  const producer = start(command, args, {
    cwd: ROOT,
    stdio: ['ignore', pipe, 'pipe'],
    env: {...process.env, ...opts.env, ...probe?.env},
  });
  // Our copy of the write end must close, or the consumer never sees the end of its input.
  if (fifoEnds) for (const fd of fifoEnds) fs.closeSync(fd);
  else consumer.stdin?.destroy();
  const producerErr = tail(producer.stderr);
  let stopped = false;
  const stopTimer =
    opts.stopAfterMs === undefined
      ? undefined
      : setTimeout(() => {
          if (producer.exitCode !== null || producer.signalCode !== null) return;
          stopped = true;
          producer.kill('SIGTERM');
        }, opts.stopAfterMs);

  const both = Promise.all([exited(producer).then((exit) => ({exit, at: Date.now()})), exited(consumer)]);
  const [{exit, at}, consumerExit] = await within(both, opts.timeoutMs, opts.label, [producer, consumer]).finally(() =>
    clearTimeout(stopTimer)
  );

  if (consumerExit.code !== 0)
    throw new Error(
      `${opts.label}: the consumer failed (${consumerExit.code ?? consumerExit.signal}): ${consumerErr()}`
    );
  const consumerReport = JSON.parse(Buffer.concat(consumerOut).toString('utf8')) as ConsumerReport;

  const figures: ProducerFigures = {...exit, wallMs: at - startedAt, stderr: producerErr(), stopped};
  if (useTime) {
    // The -o file holds "elapsed user sys maxrss_kb" on its last line (after any "Command exited" note).
    const lines = fs.readFileSync(timeFile, 'utf8').trim().split('\n');
    const [, user, sys, rss] = (lines[lines.length - 1] ?? '').split(' ').map(Number);
    Object.assign(figures, {userS: user, sysS: sys, peakRssKb: rss});
  } else {
    Object.assign(figures, probe?.read());
  }
  return {producer: figures, consumer: consumerReport, startedAt};
}

export interface FileRun extends Exit {
  /** From spawn to exit, ms. */
  wallMs: number;
  startedAt: number;
  stderr: string;
  /** From spawn to the SIGKILL that `killAt` asked for; undefined when it ran to its end. */
  killedAfterMs?: number;
}

/**
 * Runs `node args` with its stdout written straight to a file (never through this process, so the
 * wall time is the producer's own). With `killAt`, the file is tailed every 100 ms and the process
 * group gets SIGKILL (no goodbye, as an evicted pod) at the first complete line `killAt` accepts.
 */
export async function runToFile(
  args: string[],
  opts: {outFile: string; timeoutMs: number; label: string; killAt?: (line: string) => boolean}
): Promise<FileRun> {
  const fd = fs.openSync(opts.outFile, 'w');
  const startedAt = Date.now();
  let child: ChildProcess;
  try {
    child = start(process.execPath, args, {cwd: ROOT, stdio: ['ignore', fd, 'pipe']});
  } finally {
    fs.closeSync(fd);
  }
  const stderr = tail(child.stderr);
  let killedAfterMs: number | undefined;
  let timer: NodeJS.Timeout | undefined;
  const {killAt} = opts;
  const reader = killAt ? fs.openSync(opts.outFile, 'r') : undefined;
  if (killAt && reader !== undefined) {
    let offset = 0;
    let partial = '';
    timer = setInterval(() => {
      const size = fs.fstatSync(reader).size;
      if (size <= offset || killedAfterMs !== undefined) return;
      const chunk = Buffer.alloc(size - offset);
      const read = fs.readSync(reader, chunk, 0, chunk.length, offset);
      offset += read;
      const lines = (partial + chunk.subarray(0, read).toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      if (lines.some(killAt)) {
        killedAfterMs = Date.now() - startedAt;
        killGroup(child);
      }
    }, 100);
  }
  const exit = await within(exited(child), opts.timeoutMs, opts.label, [child]).finally(() => {
    clearInterval(timer);
    if (reader !== undefined) fs.closeSync(reader);
  });
  return {...exit, wallMs: Date.now() - startedAt, startedAt, stderr: stderr(), killedAfterMs};
}

/** A simulator running in a child process, driven over IPC. */
export class SimChild {
  private constructor(
    private readonly child: ChildProcess,
    readonly info: SimInfo
  ) {}

  static async start(options: SimProcessOptions, timeoutMs = 60_000): Promise<SimChild> {
    const child = fork(SIM_PROCESS, [], {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      detached: true,
      env: {...process.env, BENCH_SIM_OPTIONS: JSON.stringify(options)},
    });
    live.add(child);
    child.once('exit', () => live.delete(child));
    const stderr = tail(child.stderr);
    const ready = new Promise<SimInfo>((resolve, reject) => {
      child.on('message', (m: SimReply) => {
        if (m.type === 'ready') resolve(m.info);
        else if (m.type === 'error') reject(new Error(`simulator failed to start: ${m.message}`));
      });
      child.once('exit', (code) => reject(new Error(`simulator exited early (${code}): ${stderr()}`)));
    });
    return new SimChild(child, await within(ready, timeoutMs, 'starting the simulator', [child]));
  }

  private command(command: SimCommand): void {
    this.child.send(command);
  }

  /** Sends a command and waits for the first reply of the given type (an 'error' reply fails it). */
  private ask<T extends SimReply['type']>(command: SimCommand, replyType: T): Promise<Extract<SimReply, {type: T}>> {
    const reply = new Promise<Extract<SimReply, {type: T}>>((resolve, reject) => {
      const onMessage = (m: SimReply): void => {
        if (m.type !== replyType && m.type !== 'error') return;
        this.child.off('message', onMessage);
        if (m.type === 'error') reject(new Error(`simulator: ${m.message}`));
        else resolve(m as Extract<SimReply, {type: T}>);
      };
      this.child.on('message', onMessage);
    });
    this.command(command);
    return within(reply, 30_000, `simulator command ${command.type}`, [this.child]);
  }

  async stats(): Promise<{stats: SimulatorStats; requests: RequestRecord[]}> {
    const {stats, requests} = await this.ask({type: 'stats'}, 'stats');
    return {stats, requests};
  }

  /** Every export created so far, in creation order. */
  async exports(): Promise<ExportRecord[]> {
    return (await this.ask({type: 'exports'}, 'exports')).exports;
  }

  async addResponses(questId: string, count: number): Promise<void> {
    await this.ask({type: 'addResponses', questId, count}, 'done');
  }

  async setFaults(faults: FaultOptions): Promise<void> {
    await this.ask({type: 'setFaults', faults}, 'done');
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const done = exited(this.child);
    this.command({type: 'close'});
    await within(done, 30_000, 'closing the simulator', [this.child]).catch(() => undefined);
  }
}
