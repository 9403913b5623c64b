// The "Attempts" section: what a sync killed after its exports were created costs the next attempt,
// with the re-use of recorded exports (every export is recorded in a STATE the moment it exists, and
// an attempt from such a state polls and downloads it instead of creating it again) and without it
// (the same state without `exports`, as states written before re-use look). Each attempt's output
// goes to a file. That the two attempts together deliver every row exactly once is what
// test/e2e/attempts.cases.ts asserts; here the counts are checked (a wrong count is no figure).

import fs from 'fs';
import path from 'path';
import readline from 'readline';

import {binMainArgv} from '../../harness/bin-main';
import {DEFAULTS} from '../../src/core/config';
import {FileRun, runToFile, SimChild} from './proc';
import {plural} from '../../src/core/quantities';
import {iso, Row, s, thousands} from './report';
import {catalogFor, connectorConfig, countRequests, DAY_MS, writeJson} from './scenario';
import type {BenchContext, Section} from './types';

const ATTEMPTS = 'Attempts';

const QUEST_ID = 'a77e0000-0000-4000-8000-0000000000b1';
/** The quest's rows; a tenth in a quick run. */
const rowsOf = (ctx: BenchContext): number => (ctx.quick ? 30_000 : 300_000);
const COLUMNS = 10;
const SPAN_DAYS = 60;
/**
 * Windows of 5 days (25,000 rows): window_days caps even the first probes (an eighth of what is left to
 * read), and capped windows are planned ahead, so up to max_concurrent_exports are generated side by side.
 */
const WINDOW_DAYS = 5;
const TARGET_ROWS = 50_000;
/** Generation time: 1 s plus 0.4 s per 1,000 rows, i.e. 11 s for a window and 2 min for the whole quest in one export. */
const EXPORT_BASE_MS = 1000;
const EXPORT_MS_PER_THOUSAND = 400;
const RUN_TIMEOUT_MS = 10 * 60_000;

interface StreamState {
  type: 'STREAM';
  stream: {stream_descriptor: {name: string}; stream_state: {exports?: unknown[]} & Record<string, unknown>};
}

interface StateMessage {
  type: 'STATE';
  state: {stream: StreamState['stream']; sourceStats?: {recordCount?: number}};
}

/** What one attempt wrote on stdout. */
interface Output {
  records: number;
  /** How many of them a STATE committed (records before the last STATE). */
  committed: number;
  /** The state file Airbyte would pass to the next attempt: each stream's last STATE. */
  state: StreamState[];
  errors: string[];
}

/** Reads an attempt's stdout file and removes it (each is 100 MB or more). */
async function readOutput(file: string): Promise<Output> {
  dropPartialLine(file);
  const out: Output = {records: 0, committed: 0, state: [], errors: []};
  const lastState = new Map<string, StreamState>();
  const lines = readline.createInterface({input: fs.createReadStream(file), crlfDelay: Infinity});
  for await (const line of lines) {
    if (line.startsWith('{"type":"RECORD"')) {
      out.records++;
    } else if (line.startsWith('{"type":"STATE"')) {
      const m = JSON.parse(line) as StateMessage;
      lastState.set(m.state.stream.stream_descriptor.name, {type: 'STREAM', stream: m.state.stream});
      out.committed = out.records;
    } else if (line.includes('"type":"TRACE"') && line.includes('"type":"ERROR"')) {
      out.errors.push(line.slice(0, 500));
    }
  }
  fs.rmSync(file, {force: true});
  out.state = [...lastState.values()];
  return out;
}

/** A process killed while writing leaves half a line; nothing reads it (Airbyte drops it too). */
function dropPartialLine(file: string): void {
  const fd = fs.openSync(file, 'r+');
  try {
    const size = fs.fstatSync(fd).size;
    const tailBytes = Buffer.alloc(Math.min(size, 1 << 20));
    fs.readSync(fd, tailBytes, 0, tailBytes.length, size - tailBytes.length);
    const lastNewline = tailBytes.lastIndexOf(10);
    if (lastNewline !== tailBytes.length - 1) fs.ftruncateSync(fd, size - tailBytes.length + lastNewline + 1);
  } finally {
    fs.closeSync(fd);
  }
}

const recorded = (state: readonly StreamState[]): number =>
  state.reduce((n, s) => n + (s.stream.stream_state.exports?.length ?? 0), 0);

/** The same state as an attempt before re-use existed would leave it: no `exports`. */
function withoutExports(state: readonly StreamState[]): StreamState[] {
  return state.map((s) => {
    const rest = {...s.stream.stream_state};
    delete rest.exports;
    return {...s, stream: {...s.stream, stream_state: rest}};
  });
}

/** Kill points: a STATE line that lists at least two exports and, for the later one, commits records. */
function stateLine(line: string, withRecords: boolean): boolean {
  if (!line.startsWith('{"type":"STATE"')) return false;
  const m = JSON.parse(line) as StateMessage;
  const exports = m.state.stream.stream_state.exports?.length ?? 0;
  return exports >= 2 && (!withRecords || (m.state.sourceStats?.recordCount ?? 0) > 0);
}

/** The first attempt's committed records and the second attempt's records make the quest's rows. */
function checkCounts(label: string, rows: number, first: Output, second: Output): string {
  const read = first.committed + second.records;
  if (read !== rows)
    throw new Error(
      `${label}: ${thousands(first.committed)} committed + ${thousands(second.records)} read = ${thousands(read)}, not ${thousands(rows)}`
    );
  return `${thousands(first.committed)} committed + ${thousands(second.records)} read`;
}

interface Attempt {
  run: FileRun;
  output: Output;
  created: number;
  requests: ReturnType<typeof countRequests>;
}

async function attempt(
  ctx: BenchContext,
  sim: SimChild,
  key: string,
  files: {config: string; catalog: string},
  opts: {state?: StreamState[]; killAt?: (line: string) => boolean}
): Promise<Attempt> {
  const argv = ['read', '--config', files.config, '--catalog', files.catalog];
  if (opts.state) argv.push('--state', writeJson(ctx.tmpDir, `${key}-state.json`, opts.state));
  const outFile = path.join(ctx.tmpDir, `${key}.out`);
  const run = await runToFile(binMainArgv(argv), {
    outFile,
    timeoutMs: RUN_TIMEOUT_MS,
    label: `read ${key}`,
    killAt: opts.killAt,
  });
  const output = await readOutput(outFile);
  const killed = opts.killAt !== undefined;
  if (killed ? run.killedAfterMs === undefined : run.code !== 0 || output.errors.length > 0) {
    throw new Error(
      `read ${key}: ${killed ? 'ended before the kill point' : `exit ${run.code ?? run.signal}`}; ` +
        `${output.errors.slice(0, 3).join('; ')} stderr: ${run.stderr.slice(-2000)}`
    );
  }
  const [{requests}, exports] = await Promise.all([sim.stats(), sim.exports()]);
  return {
    run,
    output,
    created: exports.filter((e) => Date.parse(e.createdAt) >= run.startedAt).length,
    requests: countRequests(requests, run.startedAt),
  };
}

/**
 * Waits until the simulator has handled the killed attempt's last requests: creates it had sent are
 * still answered (the service makes those exports, though nobody learns their ids), and they belong
 * to the first attempt, not to the second.
 */
async function settled(sim: SimChild): Promise<number> {
  let count = (await sim.exports()).length;
  for (let quiet = 0, waited = 0; quiet < 1000 && waited < 10_000; waited += 250) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const now = (await sim.exports()).length;
    quiet = now === count ? quiet + 250 : 0;
    count = now;
  }
  return count;
}

function secondSummary(a: Attempt): string {
  const r = a.requests;
  return (
    `${s(a.run.wallMs)}; ${plural(a.created, 'export')} created, ${thousands(a.output.records)} records, ` +
    `${r.total} requests (create ${r.create}, status ${r.status}, download ${r.download})`
  );
}

async function attempts(ctx: BenchContext, rows: Row[]): Promise<void> {
  const now = Date.now();
  const questRows = rowsOf(ctx);
  ctx.progress(`attempts: starting a simulator with one quest of ${thousands(questRows)} rows over ${SPAN_DAYS} days`);
  const sim = await SimChild.start({
    exportDurationMs: EXPORT_BASE_MS,
    exportMsPerThousandRows: EXPORT_MS_PER_THOUSAND,
    quests: [{id: QUEST_ID, rows: questRows, columns: COLUMNS, firstCreatedAt: iso(now - SPAN_DAYS * DAY_MS)}],
    dataDir: path.join(ctx.tmpDir, 'sim-attempts'),
  });
  try {
    const files = {
      config: writeJson(
        ctx.tmpDir,
        'attempts.json',
        connectorConfig(sim.info, {
          start_date: iso(now - SPAN_DAYS * DAY_MS - 60_000),
          target_rows_per_export: TARGET_ROWS,
          window_days: WINDOW_DAYS,
        })
      ),
      catalog: writeJson(ctx.tmpDir, 'attempts-catalog.json', catalogFor(sim.info, [QUEST_ID], 'incremental')),
    };
    const killPoints = [
      {key: 'generating', label: 'Killed right after creating its first exports', withRecords: false},
      {key: 'reading', label: 'Killed after its first window was committed', withRecords: true},
    ];
    for (const point of killPoints) {
      ctx.progress(`attempts: ${point.label}: first attempt`);
      const first = await attempt(ctx, sim, `attempts-${point.key}-1`, files, {
        killAt: (line) => stateLine(line, point.withRecords),
      });
      const before = (await sim.exports()).length - first.created;
      const createdByFirst = (await settled(sim)) - before;
      const state = first.output.state;
      rows.push({
        section: ATTEMPTS,
        metric: `${point.label}: first attempt`,
        value:
          `SIGKILL after ${s(first.run.killedAfterMs ?? first.run.wallMs)}; ${createdByFirst} exports created ` +
          `(${createdByFirst - first.created} of them by creates the service handled after the kill), ` +
          `${recorded(state)} recorded in its last STATE, ${thousands(first.output.committed)} records committed`,
      });
      const variants = [
        {key: 'reuse', label: 're-using the recorded exports', state},
        {key: 'anew', label: 'without re-use (the state without exports)', state: withoutExports(state)},
      ];
      const walls: number[] = [];
      for (const v of variants) {
        ctx.progress(`attempts: ${point.label}: second attempt, ${v.label}`);
        const second = await attempt(ctx, sim, `attempts-${point.key}-2-${v.key}`, files, {state: v.state});
        const counts = checkCounts(`${point.label}, ${v.label}`, questRows, first.output, second.output);
        walls.push(second.run.wallMs);
        rows.push({
          section: ATTEMPTS,
          metric: `${point.label}: second attempt, ${v.label}`,
          value: `${secondSummary(second)}; ${counts}`,
        });
      }
      rows.push({
        section: ATTEMPTS,
        metric: `${point.label}: second attempt, re-use / without`,
        value: `${(walls[0] / walls[1]).toFixed(2)}x the wall time (${s(walls[1] - walls[0])} saved)`,
      });
    }
  } finally {
    await sim.close();
  }
}

function method(ctx: BenchContext): string {
  const windowRows = Math.round((rowsOf(ctx) * WINDOW_DAYS) / SPAN_DAYS);
  return [
    `One quest of ${thousands(rowsOf(ctx))} rows of ${COLUMNS} question columns spread over ${SPAN_DAYS} days, read from before its first row with`,
    `target_rows_per_export ${thousands(TARGET_ROWS)} and window_days ${WINDOW_DAYS} (windows of about ${thousands(windowRows)} rows, generated side by side up to`,
    `max_concurrent_exports ${DEFAULTS.max_concurrent_exports}, the default). The simulator takes ${s(EXPORT_BASE_MS)} plus ${s(EXPORT_MS_PER_THOUSAND)} per 1,000 rows to generate an export`,
    `(${s(EXPORT_BASE_MS + (windowRows / 1000) * EXPORT_MS_PER_THOUSAND)} for a window; the real service takes minutes for a large quest). A first \`bin/main read\` gets SIGKILL`,
    'at the first STATE on its stdout that lists at least two exports (a STATE records each export the moment it',
    'exists), or, the second time, at the first such STATE that also commits records. Once the simulator has handled',
    "the killed attempt's last requests (creates already sent still make exports), a second `bin/main read` starts",
    "from the first attempt's last STATE: first as it is (re-use: the recorded exports are polled and downloaded, not",
    'created again), then with `exports` removed from it (as states written before re-use look: every window is',
    'exported anew, so starting later does not help it). Wall time is spawn to exit of the second attempt; exports and',
    "requests are what the simulator logged during it. The first attempt's committed records (those before its last",
    "STATE) and the second attempt's records add up to the quest's rows; that they are its rows exactly once is what",
    'test/e2e/attempts.cases.ts asserts.',
  ].join('\n');
}

export const ATTEMPTS_SECTION: Section = {key: 'attempts', title: ATTEMPTS, method, run: attempts};
