// Memory that does not follow the size of an export (issue 27): bin/main reads one large export of
// UUID Response IDs against the simulator, while the test reads its stdout as a slow consumer
// would: it stalls first, then takes the output in small portions with pauses, so that the
// connector is always the faster side. Peak RSS (getrusage, exact) stays under a bound, also with a
// setback late in the file (the resume keys of the whole window are loaded then), and every row
// arrives exactly once. A read killed inside such a window and resumed from its last STATE is exact.

import {ChildProcess, spawn} from 'child_process';

import {MAIN, mainNodeFlags, tempDir, writeJson} from '../helpers/connector';
import {simCatalog, simConfig} from '../helpers/fixtures';
import {peakRssProbe} from '../helpers/peak-rss';
import {Simulator, startSimulator} from '../../simulator';

const DAY = 86_400_000;
const ROWS = 1_000_000;
const PEAK_RSS_MIB = 150;

interface Consumed {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
  records: number;
  /** Response IDs of the records, with how often each came. */
  ids: Map<string, number>;
  /** Response IDs of the records before the last STATE: what the run committed. */
  committed: string[];
  lastState?: unknown;
  peakRssMiB: number;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const RESPONSE_ID = /"response_id":"([^"]*)"/;

/**
 * Runs bin/main and reads its stdout like a slow consumer: nothing for `stallMs`, then at most
 * `portionBytes` between pauses of `pauseMs` (0: as fast as it comes). With `killAfterRecords`, the
 * connector gets SIGKILL once that many records have arrived.
 */
async function consume(
  args: string[],
  options: {stallMs: number; portionBytes: number; pauseMs: number; killAfterRecords?: number}
): Promise<Consumed> {
  const rss = peakRssProbe();
  // With the node flags the image starts it with: the memory measured is the memory shipped.
  const child: ChildProcess = spawn(process.execPath, [...mainNodeFlags(), MAIN, ...args], {
    env: {...process.env, ...rss.env},
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stderr: Buffer[] = [];
  child.stderr?.on('data', (d: Buffer) => stderr.push(d));
  const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.on('close', (code, signal) => resolve([code, signal]))
  );
  const out: Consumed = {
    code: null,
    signal: null,
    stderr: '',
    records: 0,
    ids: new Map(),
    committed: [],
    peakRssMiB: 0,
  };
  let pending = '';
  let sinceState: string[] = [];
  const line = (text: string): void => {
    if (text.startsWith('{"type":"RECORD"')) {
      const id = RESPONSE_ID.exec(text)?.[1] ?? '';
      out.ids.set(id, (out.ids.get(id) ?? 0) + 1);
      out.records++;
      sinceState.push(id);
      if (out.records === options.killAfterRecords) child.kill('SIGKILL');
    } else if (text.startsWith('{"type":"STATE"')) {
      out.committed = out.committed.concat(sinceState);
      sinceState = [];
      out.lastState = (JSON.parse(text) as {state: unknown}).state;
    }
  };
  await sleep(options.stallMs);
  let portion = 0;
  for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
    const lines = (pending + chunk.toString('utf8')).split('\n');
    pending = lines.pop() ?? '';
    for (const text of lines) line(text);
    portion += chunk.length;
    if (options.pauseMs > 0 && portion >= options.portionBytes) {
      portion = 0;
      await sleep(options.pauseMs);
    }
  }
  [out.code, out.signal] = await exited;
  out.stderr = Buffer.concat(stderr).toString('utf8');
  // A killed process writes no figure.
  out.peakRssMiB = out.signal === 'SIGKILL' ? 0 : rss.peakMiB();
  return out;
}

/** What is wrong with a run's rows against the truth: missing, repeated or unknown ids (a few of each). */
function problems(truth: readonly string[], ids: Map<string, number>): string[] {
  const out: string[] = [];
  for (const id of truth) {
    const n = ids.get(id) ?? 0;
    if (n !== 1 && out.length < 10) out.push(`${id} came ${n} times`);
  }
  const known = new Set(truth);
  for (const id of ids.keys()) if (!known.has(id) && out.length < 20) out.push(`${id} is no row`);
  return out;
}

describe(`one export of ${ROWS.toLocaleString('en')} rows with UUID Response IDs, read by a slow consumer`, () => {
  let sim: Simulator;
  let truth: string[];
  const questId = '3e3e0000-0000-4000-8000-000000000027';
  let config: string;
  let catalog: string;

  beforeAll(async () => {
    sim = await startSimulator({
      exportDurationMs: 10,
      quests: [
        {
          id: questId,
          rows: ROWS,
          columns: 4,
          responseIds: 'uuid',
          firstCreatedAt: new Date(Date.now() - 3 * DAY).toISOString(),
        },
      ],
      // The first download of every export ends at 95 % of its bytes: the window's file is read
      // again, and the keys of 950,000 rows are loaded to skip them.
      faults: {cutFirstDownloadAt: 0.95},
    });
    truth = sim.groundTruth(questId).rows.map((r) => r[0]);
    const dir = tempDir('questback-memory-');
    // A start_date just before the rows: the whole quest is one window, one export.
    config = writeJson(dir, 'config.json', simConfig(sim, {start_date: new Date(Date.now() - 4 * DAY).toISOString()}));
    catalog = writeJson(dir, 'catalog.json', simCatalog(sim, [questId], 'incremental'));
  }, 300_000);
  afterAll(async () => {
    truth = [];
    await sim.close();
  });

  test('peak RSS stays under the bound: a stall, then small portions with pauses, and a setback late in the file', async () => {
    const run = await consume(['read', '--config', config, '--catalog', catalog], {
      stallMs: 3000,
      portionBytes: 4 * 1024 * 1024,
      pauseMs: 20,
    });
    process.stdout.write(
      `memory.test figures: slow consumer, ${ROWS} rows, peak RSS ${run.peakRssMiB.toFixed(0)} MiB\n`
    );
    expect({
      code: run.code,
      stderr: run.stderr,
      records: run.records,
      problems: problems(truth, run.ids),
      peakRssWithinBound: run.peakRssMiB <= PEAK_RSS_MIB || `${run.peakRssMiB.toFixed(0)} MiB`,
    }).toEqual({code: 0, stderr: '', records: ROWS, problems: [], peakRssWithinBound: true});
  }, 600_000);

  test('killed inside the window and resumed from its last STATE: every row exactly once', async () => {
    const args = ['read', '--config', config, '--catalog', catalog];
    const first = await consume(args, {stallMs: 0, portionBytes: 0, pauseMs: 0, killAfterRecords: ROWS / 2});
    expect({signal: first.signal, state: first.lastState !== undefined}).toEqual({signal: 'SIGKILL', state: true});
    const dir = tempDir('questback-memory-');
    const state = writeJson(dir, 'state.json', [first.lastState]);
    const second = await consume([...args, '--state', state], {stallMs: 0, portionBytes: 0, pauseMs: 0});
    // What the first attempt committed (records before its last STATE) and all the second emitted.
    const union = new Map(second.ids);
    for (const id of first.committed) union.set(id, (union.get(id) ?? 0) + 1);
    expect({
      code: second.code,
      stderr: second.stderr,
      problems: problems(truth, union),
      peakRssWithinBound: second.peakRssMiB <= PEAK_RSS_MIB || `${second.peakRssMiB.toFixed(0)} MiB`,
    }).toEqual({code: 0, stderr: '', problems: [], peakRssWithinBound: true});
  }, 600_000);
});
