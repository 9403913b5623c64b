// The throughput section: one 1,000,000-row, 30-column quest (UUID Response IDs) read by
// `bin/main read` with the default config into a counting consumer process, side by side with
// pipelines on the very file the connector read (yardstick.ts): csv-parse + JSON.stringify (the
// baseline), a pipeline that wraps each CSV line whole without parsing (the ceiling), and two
// general-purpose tools on a local copy of it: DuckDB on one thread and Miller where it is installed. Then peak memory by rows per export: 200,000, 1,000,000 and 3,000,000 rows in
// one export, also with a setback late in the file and with a slow consumer.

import {execFileSync} from 'child_process';
import fs from 'fs';
import path from 'path';
import {pipeline} from 'stream/promises';

import {binMainArgv} from '../../harness/bin-main';
import {HAS_TIME, PipedRun, runPiped, SimChild} from './proc';
import {iso, mib, Row, s, thousands} from './report';
import type {QuestConfig} from '../../simulator';
import {
  catalogFor,
  checkRun,
  connectorConfig,
  DAY_MS,
  discoverCatalog,
  fetchToken,
  kindOf,
  selectStreams,
  streamName,
  writeJson,
} from './scenario';
import type {BenchContext, Section} from './types';
import {YARDSTICKS} from './yardstick';

const THROUGHPUT = 'Throughput';

const YARDSTICK = path.join(__dirname, 'yardstick.js');
const TARGETS = {baselineRatio: 4, ceilingRatio: 0.9, duckdbRatio: 1, rssMiB: 150};
/** Rows per export of the memory rows, for the default run of 1,000,000 (scaled with --rows). */
const SIZE_FACTORS = [0.2, 1, 3];
/** Where the setback falls: the first download of each export ends after this share of its bytes. */
const CUT_AT = 0.95;
/** The slow consumer: nothing for 3 s, then a pause of 20 ms after every 4 MiB. */
const PACE = {stallMs: 3000, portionBytes: 4 * 1024 * 1024, pauseMs: 20};
/** The run's start_date: years before its rows, as a first sync with the default config meets them. */
const START_DATE = '2020-01-01T00:00:00Z';

interface StreamFigures {
  records: number;
  wallMs: number;
  /** Start of the process to the first RECORD on the consumer's side. */
  waitMs: number;
  /** First RECORD to the end of the output: the part that is the pipeline's own work. */
  streamMs: number;
  /** CSV rows of the file (not RECORD lines: the ceiling writes one per physical line) per second. */
  rowsPerS: number;
  recordMBPerS: number;
  stdoutBytes: number;
  userS?: number;
  sysS?: number;
  peakRssKb?: number;
}

/** Miller's command, where it is installed. */
function millerPath(): string | undefined {
  try {
    return execFileSync('sh', ['-c', 'command -v mlr'], {encoding: 'utf8', timeout: 5000}).trim() || undefined;
  } catch {
    return undefined;
  }
}

function figures(run: PipedRun, csvRows: number): StreamFigures {
  const c = run.consumer;
  // The tools write no RECORD lines (JSON objects of their own): their stream starts at their first byte.
  const first = c.firstRecordAt ?? c.firstByteAt ?? c.endAt;
  const streamMs = Math.max(1, c.endAt - first);
  const p = run.producer;
  return {
    records: c.records || c.lines,
    wallMs: p.wallMs,
    waitMs: first - run.startedAt,
    streamMs,
    rowsPerS: (csvRows / streamMs) * 1000,
    recordMBPerS: (c.recordBytes || c.bytes) / 1e6 / (streamMs / 1000),
    stdoutBytes: c.bytes,
    userS: p.userS,
    sysS: p.sysS,
    peakRssKb: p.peakRssKb,
  };
}

function pipelineRows(who: string, f: StreamFigures, rssTarget: boolean): Row[] {
  const section = THROUGHPUT;
  const rssMiB = f.peakRssKb === undefined ? undefined : f.peakRssKb / 1024;
  return [
    {
      section,
      metric: `${who}: records / stdout`,
      value: `${thousands(f.records)} / ${(f.stdoutBytes / 1e6).toFixed(0)} MB`,
    },
    {section, metric: `${who}: total wall time`, value: s(f.wallMs)},
    {section, metric: `${who}: start to first record`, value: s(f.waitMs)},
    {section, metric: `${who}: first record to end`, value: s(f.streamMs)},
    {section, metric: `${who}: CSV rows/s (first record to end)`, value: thousands(f.rowsPerS)},
    {section, metric: `${who}: output MB/s (first record to end)`, value: f.recordMBPerS.toFixed(1)},
    {
      section,
      metric: `${who}: CPU time, user + sys`,
      value:
        f.userS === undefined || f.sysS === undefined
          ? 'n/a'
          : `${(f.userS + f.sysS).toFixed(1)} s (${f.userS.toFixed(1)} + ${f.sysS.toFixed(1)})`,
    },
    {
      section,
      metric: `${who}: peak RSS`,
      value: mib(f.peakRssKb),
      ...(rssTarget ? {target: `<= ${TARGETS.rssMiB} MiB`, met: rssMiB !== undefined && rssMiB <= TARGETS.rssMiB} : {}),
    },
  ];
}

const best = (runs: StreamFigures[]): number =>
  runs.reduce((top, f, i) => (f.rowsPerS > runs[top].rowsPerS ? i : top), 0);

type Pipeline = 'connector' | 'baseline' | 'ceiling' | 'duckdb' | 'miller';

/** A simulator quest of `rows` rows x 30 columns, all created in the last three days. */
function throughputQuest(questId: string, rows: number): QuestConfig {
  return {id: questId, rows, columns: 28, responseIds: 'uuid', firstCreatedAt: iso(Date.now() - 3 * DAY_MS)};
}

/** One `bin/main read` of the quest's stream, piped into a counting consumer (slow, with `pace`). */
async function readRun(
  ctx: BenchContext,
  sim: SimChild,
  catalog: unknown,
  label: string,
  pace?: {stallMs: number; portionBytes: number; pauseMs: number}
): Promise<PipedRun> {
  const config = writeJson(ctx.tmpDir, 'throughput-config.json', connectorConfig(sim.info, {start_date: START_DATE}));
  const catalogFile = writeJson(ctx.tmpDir, 'throughput-catalog.json', catalog);
  return runPiped(binMainArgv(['read', '--config', config, '--catalog', catalogFile]), {
    timeoutMs: 30 * 60_000,
    label,
    tmpDir: ctx.tmpDir,
    fifo: true,
    ...(pace ? {pace} : {}),
  });
}

async function throughput(ctx: BenchContext, rows: Row[], notes: string[]): Promise<void> {
  const {tmpDir, progress, repeat} = ctx;
  const questId = 'b16e0000-0000-4000-8000-000000000001';
  // All rows in the last three days, start_date years earlier: the default sizing probes the first
  // eighth of the span (empty), then reads the rest, every row, in one export.
  progress(`throughput: starting a simulator with ${thousands(ctx.rows)} rows x 30 columns`);
  const sim = await SimChild.start({
    quests: [throughputQuest(questId, ctx.rows)],
    dataDir: path.join(tmpDir, 'sim-throughput'),
  });
  const miller = millerPath();
  try {
    const config = writeJson(tmpDir, 'throughput-config.json', connectorConfig(sim.info, {start_date: START_DATE}));
    const {catalog: discovered} = await discoverCatalog(config, 180_000);
    // The quest's stream alone: the columns stream's few records would upset the count.
    const catalog = selectStreams(discovered, [questId]);

    const runs: Record<Pipeline, StreamFigures[]> = {connector: [], baseline: [], ceiling: [], duckdb: [], miller: []};
    /** Per connector run: its largest export, created to file ready, as its polls saw it. */
    const readyMs: (number | undefined)[] = [];
    /** Per connector run: the rows of each export it created. */
    const exportRows: number[][] = [];
    /** The connector's largest export file, downloaded once: the tools read it from disk. */
    const localCopy = path.join(tmpDir, 'throughput-export.csv');
    for (let i = 1; i <= repeat; i++) {
      progress(`throughput ${i}/${repeat}: bin/main read (the simulator generates the file first)`);
      const connector = await readRun(ctx, sim, catalog, 'connector read');
      checkRun('connector read', connector, ctx.rows);
      runs.connector.push(figures(connector, ctx.rows));
      progress(`throughput ${i}/${repeat}: connector ${thousands(runs.connector[i - 1].rowsPerS)} rows/s`);

      const [{requests}, exports] = await Promise.all([sim.stats(), sim.exports()]);
      const created = exports.filter((e) => Date.parse(e.createdAt) >= connector.startedAt);
      exportRows.push(created.map((e) => e.rows));
      const big = created.reduce<(typeof created)[number] | undefined>(
        (m, e) => (!m || e.rows > m.rows ? e : m),
        undefined
      );
      if (!big) throw new Error('the connector run created no export');
      const seen = requests.find(
        (r) => r.at >= connector.startedAt && r.status === 302 && r.path.includes(`/exports/${big.exportId}/status`)
      );
      readyMs.push(seen ? seen.at - Date.parse(big.createdAt) : undefined);
      // The other pipelines read the connector's largest export file (the one holding every row).
      const download = requests.find(
        (r) =>
          r.at >= connector.startedAt &&
          kindOf(r) === 'download' &&
          r.status === 200 &&
          r.path.includes(`/exports/${big.exportId}/`)
      );
      if (!download) throw new Error('the connector run made no successful download of its largest export');
      const env = {
        BENCH_URL: `${sim.info.apiUrl}${download.path}`,
        BENCH_TOKEN: await fetchToken(sim.info),
        BENCH_STREAM: streamName(questId),
        BENCH_FILE: localCopy,
      };
      if (i === 1) await downloadTo(env.BENCH_URL, env.BENCH_TOKEN, localCopy);
      const others: [Pipeline, string[], string | undefined][] = YARDSTICKS.map((y) => [y, [YARDSTICK, y], undefined]);
      if (miller) others.push(['miller', ['--icsv', '--ifs', '|', '--ojsonl', 'cat', localCopy], miller]);
      for (const [who, args, command] of others) {
        progress(`throughput ${i}/${repeat}: ${who} on the same file`);
        const run = await runPiped(args, {
          timeoutMs: 30 * 60_000,
          label: who,
          tmpDir,
          env,
          fifo: true,
          // DuckDB and Miller write a JSON object a row and nothing else.
          dataLines: who === 'duckdb' || who === 'miller',
          ...(command ? {command} : {}),
        });
        // The ceiling writes a record per physical line, the tools a JSON object per row.
        const lines = run.consumer.records || run.consumer.lines;
        checkTool(who, run, who === 'ceiling' ? Math.max(ctx.rows, lines) : ctx.rows);
        runs[who].push(figures(run, ctx.rows));
        progress(`throughput ${i}/${repeat}: ${who} ${thousands(runs[who][i - 1].rowsPerS)} rows/s`);
      }
    }
    const top = best(runs.connector);
    const c = runs.connector[top];
    rows.push(...pipelineRows('connector', c, true));
    const sizes = exportRows[top];
    rows.push({
      section: THROUGHPUT,
      metric: 'connector: exports (rows each)',
      value: `${sizes.length} (${sizes.map(thousands).join(' + ')})`,
    });
    const ready = readyMs[top];
    if (ready !== undefined) {
      rows.push({
        section: THROUGHPUT,
        metric: 'connector: largest export created to file ready (seen by a poll)',
        value: s(ready),
      });
    }
    const bests = {} as Record<Exclude<Pipeline, 'connector'>, StreamFigures | undefined>;
    for (const who of ['baseline', 'ceiling', 'duckdb', 'miller'] as const) {
      bests[who] = runs[who].length ? runs[who][best(runs[who])] : undefined;
      const f = bests[who];
      if (f)
        rows.push(...pipelineRows(who === 'duckdb' ? 'DuckDB, 1 thread' : who === 'miller' ? 'Miller' : who, f, false));
    }
    if (!miller) {
      rows.push({section: THROUGHPUT, metric: 'Miller', value: 'not installed (mlr not on PATH): skipped'});
      notes.push('Miller was not installed, so its rows are missing; `apt-get install -y miller` adds them.');
    }
    const ratio = (who: 'baseline' | 'ceiling' | 'duckdb', label: string, target: number, x: boolean): void => {
      const other = bests[who];
      if (!other) return;
      const r = c.rowsPerS / other.rowsPerS;
      rows.push({
        section: THROUGHPUT,
        metric: `connector / ${label}, rows/s`,
        value: x ? `${r.toFixed(2)}x` : r.toFixed(2),
        target: `>= ${target}${x ? 'x' : ''}`,
        met: r >= target,
      });
    };
    ratio('baseline', 'baseline', TARGETS.baselineRatio, true);
    ratio('ceiling', 'ceiling', TARGETS.ceilingRatio, false);
    ratio('duckdb', 'DuckDB on 1 thread', TARGETS.duckdbRatio, true);
    // Rows/s of runs at different moments of a shared machine differ with the other work; CPU time per row much less.
    const cpuS = (f: StreamFigures | undefined): number | undefined =>
      f?.userS === undefined || f.sysS === undefined ? undefined : f.userS + f.sysS;
    const [ownCpu, duckCpu] = [cpuS(c), cpuS(bests.duckdb)];
    if (ownCpu && duckCpu) {
      rows.push({
        section: THROUGHPUT,
        metric: 'connector / DuckDB on 1 thread, rows per CPU second (the connector downloads, DuckDB reads a file)',
        value: `${(duckCpu / ownCpu).toFixed(2)}x`,
      });
    }
    if (repeat > 1) {
      const list = (f: StreamFigures[]): string => f.map((x) => thousands(x.rowsPerS)).join(', ');
      notes.push(
        `Throughput runs (rows/s): connector ${list(runs.connector)}; baseline ${list(runs.baseline)}; ceiling ${list(runs.ceiling)}; DuckDB ${list(runs.duckdb)}${miller ? `; Miller ${list(runs.miller)}` : ''}; the table shows the best of each.`
      );
    }
    notes.push(
      `The connector's RECORD lines are larger than the baseline's (${(c.stdoutBytes / c.records).toFixed(0)} vs ${((bests.baseline?.stdoutBytes ?? 0) / (bests.baseline?.records || 1)).toFixed(0)} bytes a row): they carry three connector fields and null for empty cells; rows/s is the figure compared.`
    );

    await memoryBySize(ctx, {sim, questId, catalog, figures: c}, rows, notes);
  } finally {
    await sim.close();
  }
}

/** Saves a download to a file. */
async function downloadTo(url: string, token: string, file: string): Promise<void> {
  const res = await fetch(url, {headers: {Authorization: `Bearer ${token}`}});
  if (res.status !== 200 || !res.body)
    throw new Error(`downloading the export for the tools answered HTTP ${res.status}`);
  await pipeline(res.body as unknown as NodeJS.ReadableStream, fs.createWriteStream(file));
}

/** A tool's run must have delivered every row (a JSON line each), exit 0. */
function checkTool(label: string, run: PipedRun, expectedLines: number): void {
  if (label === 'baseline') return checkRun(label, run, expectedLines);
  const lines = run.consumer.records || run.consumer.lines;
  if (run.producer.code !== 0 || lines !== expectedLines) {
    throw new Error(
      `${label}: exit ${run.producer.code ?? run.producer.signal}, ${lines} of ${expectedLines} lines; stderr: ${run.producer.stderr.slice(-2000)}`
    );
  }
}

/**
 * Peak RSS and rows/s of one `bin/main read` per export size (one export holding every row), then
 * with the first download of the export cut late (the window's file is read again, its rows
 * matched with the identities emitted so far), and with a consumer that stalls and then reads slowly.
 */
async function memoryBySize(
  ctx: BenchContext,
  main: {sim: SimChild; questId: string; catalog: unknown; figures: StreamFigures},
  rows: Row[],
  notes: string[]
): Promise<void> {
  const sizes = SIZE_FACTORS.map((f) => Math.round(ctx.rows * f));
  const section = THROUGHPUT;
  const report = (label: string, f: StreamFigures, n: number): void => {
    const rss = (f.peakRssKb ?? Infinity) / 1024;
    rows.push({
      section,
      metric: `${thousands(n)} rows in one export${label}: peak RSS (rows/s)`,
      value: `${mib(f.peakRssKb)} (${thousands(f.rowsPerS)})`,
      target: `<= ${TARGETS.rssMiB} MiB`,
      met: rss <= TARGETS.rssMiB,
    });
  };
  for (const n of sizes) {
    const own = n === ctx.rows ? undefined : await startSized(ctx, n);
    const {sim, catalog} = own ?? main;
    try {
      const variants: {label: string; cut: boolean; pace?: typeof PACE}[] = [{label: '', cut: false}];
      if (n >= ctx.rows) variants.push({label: `, cut at ${CUT_AT * 100} % and read again`, cut: true});
      if (n === ctx.rows) variants.push({label: ', a consumer that stalls, then reads slowly', cut: false, pace: PACE});
      for (const v of variants) {
        if (!v.cut && !v.pace && n === ctx.rows) {
          report('', main.figures, n);
          continue;
        }
        progress(ctx, `memory: ${thousands(n)} rows${v.label}`);
        if (v.cut) await sim.setFaults({cutFirstDownloadAt: CUT_AT});
        try {
          const run = await readRun(ctx, sim, catalog, `read ${thousands(n)} rows${v.label}`, v.pace);
          checkRun(`read ${thousands(n)} rows${v.label}`, run, n);
          report(v.label, figures(run, n), n);
        } finally {
          if (v.cut) await sim.setFaults({});
        }
      }
    } finally {
      await own?.sim.close();
    }
  }
  notes.push(
    `Memory by rows per export: a simulator per size (the ${thousands(ctx.rows)}-row one is the throughput's, and its plain row is the best throughput run); rows/s of a cut run counts the file's rows over the time from the first record to the end, the file read one time and ${CUT_AT * 100} % more.`
  );
}

function progress(ctx: BenchContext, message: string): void {
  ctx.progress(message);
}

async function startSized(ctx: BenchContext, n: number): Promise<{sim: SimChild; questId: string; catalog: unknown}> {
  const questId = `b16e0000-0000-4000-8000-${String(n).padStart(12, '0')}`;
  progress(ctx, `memory: starting a simulator with ${thousands(n)} rows x 30 columns`);
  const sim = await SimChild.start({quests: [throughputQuest(questId, n)], dataDir: path.join(ctx.tmpDir, `sim-${n}`)});
  return {sim, questId, catalog: catalogFor(sim.info, [questId])};
}

function method(ctx: BenchContext): string {
  return [
    'One quest of 1,000,000 rows x 30 columns (a UUID Response ID, Created and 28 questions; about one cell in five a',
    `quoted free text), all created in the last three days, read with the default config and start_date ${START_DATE.slice(0, 10)}`,
    '(settle_seconds 0: the simulator has no late rows): the adaptive sizing probes the first eighth of the span, which',
    'is empty, then reads the rest in one export of every row. The simulator runs in its own process. `bin/main read`',
    '(full_refresh catalog from a `discover` run) writes into a pipe (a FIFO, as a shell would make, for every pipeline',
    'of this section) read by a counting consumer process. Two other',
    "pipelines download the connector's largest export file (the one of every row) over HTTP, each in a process of its",
    'own, into the same kind of consumer: the baseline runs csv-parse (`columns: true`, `bom`, delimiter `|`) +',
    '`JSON.stringify` per record + 64 KB batched writes honouring backpressure; the ceiling parses nothing: it decodes',
    'UTF-8 and wraps each physical line of the CSV whole, as one JSON string, into a RECORD-like line, in the same kind',
    "of batches. Its rows/s is what reading the file costs without the connector's parsing and encoding. Two",
    'general-purpose tools read a local copy of the same file (no HTTP) into the same consumer: DuckDB (npm',
    "`@duckdb/node-api`, one thread, `read_csv` with every column text, `COPY ... TO '/dev/stdout' (FORMAT json)`: a",
    'JSON object per row) and Miller where installed (`mlr --icsv --ifs "|" --ojsonl cat`); the consumer counts each',
    "of their lines as a record without decoding it, as it counts the connector's RECORD lines. rows/s counts the",
    "file's CSV rows from the first RECORD line the consumer sees (for the tools, their first byte) to the end of the",
    "output, which leaves out the connector's wait for the export to be generated; the total wall time includes it.",
    `Peak RSS and CPU time (all threads) are the producer process's, from ${HAS_TIME ? '`/usr/bin/time`' : 'its own getrusage as it exits'}. MB is 10^6 bytes, MiB 2^20.`,
    `Each pipeline ran ${ctx.repeat} time(s), alternating; the table shows each one's run with the most rows/s.`,
    'Memory by rows per export: the same quest with 200,000, 1,000,000 and 3,000,000 rows, each one export of every row',
    `read by one \`bin/main read\` (no discover); for 1,000,000 and 3,000,000 rows again with the first download of the`,
    `export cut after ${CUT_AT * 100} % of its bytes (simulator fault cutFirstDownloadAt: the file is downloaded and read again,`,
    'its rows matched with the identities of those emitted), and for 1,000,000 rows with a consumer that reads nothing',
    `for ${PACE.stallMs / 1000} s, then pauses ${PACE.pauseMs} ms after every ${PACE.portionBytes / 1048576} MiB.`,
  ].join('\n');
}

export const THROUGHPUT_SECTION: Section = {key: 'throughput', title: THROUGHPUT, method, run: throughput};
