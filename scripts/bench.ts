// The connector's benchmark: `npm run bench` (or `node lib/scripts/bench.js [options]` after a build).
//
//   1. Throughput: a 1,000,000-row, 30-column quest read by `bin/main read` with the default config
//      (start_date 2020-01-01) into a counting consumer process, against the plain csv-parse +
//      JSON.stringify pipeline, a no-parse ceiling, DuckDB on one thread and Miller (where installed)
//      on the same export file; then peak RSS by rows per export (200,000, 1,000,000, 3,000,000), with a
//      setback late in the file and with a slow consumer (scripts/bench/throughput.ts).
//   2. Latency hiding: 8 quests whose exports take 5 s each, against 1 such quest.
//   3. Requests per export: the calls a 5 s and a 60 s export cost.
//   4. Export economy: adaptive window sizing against 30-day windows on sparse, dense, mixed,
//      incremental and faulty quests (scripts/bench/economy.ts).
//   5. Attempts: a sync killed after its exports were created, and the next attempt with and without
//      re-using them (scripts/bench/attempts.ts).
//   6. Many quests: 10, 100 and 500 quests in one connection, in each stream layout
//      (scripts/bench/many-quests.ts).
//
// Every process it starts (simulators, connector runs, consumers) is a child with a timeout, all on
// loopback, all killed and the temp dir removed on exit. Options:
//   --rows N         rows of the throughput export (default 1000000)
//   --only a,b       run only these sections: throughput, latency, requests, economy, attempts, many
//   --cases a,b      run only these cases of the economy section: sparse, dense, mixed (with the
//                    incremental syncs), faulty
//   --repeat N       throughput runs per pipeline, alternating; the best of N is reported (default 3:
//                    single runs on the shared 2-core machine vary by up to a third)
//   --no-doc         do not write docs/benchmarks.md (a partial or scaled-down run never writes it)
// Peak RSS comes from /usr/bin/time when present, else from polling /proc (BENCH_NO_TIME=1 forces that).

import fs from 'fs';
import os from 'os';
import path from 'path';

import {DEFAULTS} from '../src/core/config';
import {ATTEMPTS, attempts, attemptsMethod} from './bench/attempts';
import {ECONOMY, ECONOMY_CASES, EconomyCase, economyMethod, exportEconomy} from './bench/economy';
import {MANY_QUESTS, manyQuests, manyQuestsMethod} from './bench/many-quests';
import {HAS_TIME, killAll, MAIN, ROOT, runPiped, SimChild} from './bench/proc';
import {consoleTable, iso, machine, markdown, Row, s} from './bench/report';
import {
  catalogFor,
  checkRun,
  connectorConfig,
  countRequests,
  DAY_MS,
  discoverCatalog,
  selectStreams,
  writeJson,
} from './bench/scenario';
import {THROUGHPUT, throughput, throughputMethod} from './bench/throughput';

const SECTIONS = ['throughput', 'latency', 'requests', 'economy', 'attempts', 'many'] as const;
type Section = (typeof SECTIONS)[number];

const DEFAULT_ROWS = 1_000_000;
const DOC = path.join(ROOT, 'docs', 'benchmarks.md');
/** Nothing in a healthy run comes close; a hung child must not keep the benchmark alive forever. */
const OVERALL_TIMEOUT_MS = 60 * 60_000;

const TARGETS = {latencyRatio: 1.5, polls60s: 15};

interface Options {
  rows: number;
  only: Set<Section>;
  cases: Set<EconomyCase>;
  repeat: number;
  doc: boolean;
}

function parseArgs(argv: readonly string[]): Options {
  const opts: Options = {
    rows: DEFAULT_ROWS,
    only: new Set(SECTIONS),
    cases: new Set(ECONOMY_CASES),
    repeat: 3,
    doc: true,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${arg} needs a value`);
      return v;
    };
    if (arg === '--rows' || arg === '--repeat') {
      const n = Number(value());
      if (!Number.isInteger(n) || n < 1) throw new Error(`${arg} needs a whole number >= 1`);
      if (arg === '--rows') opts.rows = n;
      else opts.repeat = n;
    } else if (arg === '--only') {
      const names = value().split(',');
      for (const n of names)
        if (!(SECTIONS as readonly string[]).includes(n))
          throw new Error(`unknown section ${n}; use ${SECTIONS.join(', ')}`);
      opts.only = new Set(names as Section[]);
    } else if (arg === '--cases') {
      const names = value().split(',');
      for (const n of names)
        if (!(ECONOMY_CASES as readonly string[]).includes(n))
          throw new Error(`unknown economy case ${n}; use ${ECONOMY_CASES.join(', ')}`);
      opts.cases = new Set(names as EconomyCase[]);
    } else if (arg === '--no-doc') {
      opts.doc = false;
    } else {
      throw new Error(`unknown argument ${arg}`);
    }
  }
  return opts;
}

const benchStart = Date.now();
function progress(message: string): void {
  process.stderr.write(`[bench ${((Date.now() - benchStart) / 1000).toFixed(0).padStart(4)} s] ${message}\n`);
}

const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'questback-bench-'));
let cleanedUp = false;
function cleanup(): void {
  if (cleanedUp) return;
  cleanedUp = true;
  killAll();
  fs.rmSync(tmpDir, {recursive: true, force: true});
}
process.on('exit', cleanup);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    progress(`${signal}: stopping the children and removing ${tmpDir}`);
    cleanup();
    process.exit(130);
  });
}

const LATENCY = 'Latency hiding';
const REQUESTS = 'Requests per export';

async function latency(rows: Row[]): Promise<void> {
  const count = 8;
  const ids = Array.from({length: count}, (_, k) => `1a7e0000-0000-4000-8000-00000000000${k + 1}`);
  const perQuest = 300;
  const firstCreatedAt = Date.now() - 2 * DAY_MS;
  progress(`latency: starting a simulator with ${count} quests whose exports take 5 s`);
  const sim = await SimChild.start({
    quests: ids.map((id) => ({id, rows: perQuest, exportDurationMs: 5000, firstCreatedAt: iso(firstCreatedAt)})),
    dataDir: path.join(tmpDir, 'sim-latency'),
  });
  try {
    const base = {start_date: iso(firstCreatedAt - 60_000), window_days: 30};
    // One discover for all cases (its exports take 5 s too); 8 at once keeps it short.
    const discoverConfig = writeJson(
      tmpDir,
      'latency-discover.json',
      connectorConfig(sim.info, {...base, max_concurrent_exports: count})
    );
    progress('latency: discover');
    const {catalog} = await discoverCatalog(discoverConfig, 180_000);

    // Always 4 and 8, plus the connector's default if it is neither; set explicitly and labelled from
    // the connector's own DEFAULTS, so the labels stay true when the default changes.
    const limits = [...new Set([4, count, DEFAULTS.max_concurrent_exports])].sort((a, b) => a - b);
    const named = (limit: number): string =>
      `max_concurrent_exports ${limit}${limit === DEFAULTS.max_concurrent_exports ? ' (default)' : ''}`;
    const cases = [
      {
        key: 'one',
        label: `1 quest, ${named(DEFAULTS.max_concurrent_exports)}`,
        ids: ids.slice(0, 1),
        limit: DEFAULTS.max_concurrent_exports,
      },
      ...limits.map((limit) => ({key: `eight-${limit}`, label: `${count} quests, ${named(limit)}`, ids, limit})),
    ];
    const walls = new Map<string, number>();
    for (const c of cases) {
      progress(`latency: ${c.label}`);
      const config = writeJson(
        tmpDir,
        `latency-${c.key}.json`,
        connectorConfig(sim.info, {...base, quest_ids: c.ids, max_concurrent_exports: c.limit})
      );
      const catalogFile = writeJson(tmpDir, `latency-${c.key}-catalog.json`, selectStreams(catalog, c.ids));
      const run = await runPiped([MAIN, 'read', '--config', config, '--catalog', catalogFile], {
        timeoutMs: 5 * 60_000,
        label: `read ${c.label}`,
        tmpDir,
      });
      checkRun(`read ${c.label}`, run, perQuest * c.ids.length);
      const counts = countRequests((await sim.stats()).requests, run.startedAt);
      walls.set(c.key, run.producer.wallMs);
      rows.push({
        section: LATENCY,
        metric: `${c.label}: wall time`,
        value: `${s(run.producer.wallMs)} (${counts.create} export${counts.create === 1 ? '' : 's'}, ${counts.status} status polls)`,
      });
    }
    const one = walls.get('one') as number;
    for (const c of cases.slice(1)) {
      const ratio = (walls.get(c.key) as number) / one;
      // The target is the connector's as shipped: its default setting; the other rows show the trade-off.
      const judged = c.limit === DEFAULTS.max_concurrent_exports;
      rows.push({
        section: LATENCY,
        metric: `${c.label} / 1 quest`,
        value: `${ratio.toFixed(2)}x`,
        ...(judged ? {target: `<= ${TARGETS.latencyRatio}x`, met: ratio <= TARGETS.latencyRatio} : {}),
      });
    }
  } finally {
    await sim.close();
  }
}

async function requestsPerExport(rows: Row[]): Promise<void> {
  const durations = [5_000, 60_000];
  progress(
    `requests: one quest per simulator, exports of ${durations.map((d) => s(d)).join(' and ')}, run side by side`
  );
  // The two runs wait almost all the time, so running them together costs no accuracy, only a minute less.
  const results = await Promise.all(
    durations.map(async (durationMs, k) => {
      const questId = `4e90e570-0000-4000-8000-00000000000${k + 1}`;
      const firstCreatedAt = Date.now() - 2 * DAY_MS;
      const sim = await SimChild.start({
        quests: [{id: questId, rows: 200, exportDurationMs: durationMs, firstCreatedAt: iso(firstCreatedAt)}],
        dataDir: path.join(tmpDir, `sim-requests-${k}`),
      });
      try {
        const config = writeJson(
          tmpDir,
          `requests-${k}.json`,
          connectorConfig(sim.info, {start_date: iso(firstCreatedAt - 60_000), window_days: 30})
        );
        // No discover: it would cost one more export of the same length before the measured one.
        const catalogFile = writeJson(tmpDir, `requests-${k}-catalog.json`, catalogFor(sim.info, [questId]));
        const run = await runPiped([MAIN, 'read', '--config', config, '--catalog', catalogFile], {
          timeoutMs: 5 * 60_000,
          label: `read, ${s(durationMs)} export`,
          tmpDir,
        });
        checkRun(`read, ${s(durationMs)} export`, run, 200);
        return {
          durationMs,
          counts: countRequests((await sim.stats()).requests, run.startedAt),
          wallMs: run.producer.wallMs,
        };
      } finally {
        await sim.close();
      }
    })
  );
  for (const {durationMs, counts, wallMs} of results) {
    const who = `${s(durationMs)} export`;
    const long = durationMs >= 60_000;
    rows.push({
      section: REQUESTS,
      metric: `${who}: status polls`,
      value: String(counts.status),
      ...(long ? {target: `<= ${TARGETS.polls60s}`, met: counts.status <= TARGETS.polls60s} : {}),
    });
    rows.push({
      section: REQUESTS,
      metric: `${who}: all requests`,
      value: `${counts.total} (token ${counts.token}, create ${counts.create}, status ${counts.status}, download ${counts.download}, other ${counts.other})`,
    });
    const ready = counts.readySeenAfterMs;
    rows.push({
      section: REQUESTS,
      metric: `${who}: created to ready seen by a poll`,
      value: ready === undefined ? 'n/a' : `${s(ready)} (${s(ready - durationMs)} after the file was ready)`,
    });
    rows.push({section: REQUESTS, metric: `${who}: read wall time`, value: s(wallMs)});
  }
}

function methods(opts: Options): Map<string, string> {
  return new Map<string, string>([
    [THROUGHPUT, throughputMethod(opts.repeat)],
    [
      LATENCY,
      [
        'Eight quests of 300 rows whose exports take 5 s each to generate, one window per quest, read by one `bin/main read`',
        `with max_concurrent_exports 4 and 8 (the connector's default is ${DEFAULTS.max_concurrent_exports}), against one such quest. Wall time of the read process.`,
      ].join('\n'),
    ],
    [
      REQUESTS,
      [
        'One quest, one window, an export that takes 5 s or 60 s to generate; the requests of one `bin/main read` as the',
        "simulator logged them (the catalog is written by hand: a discover would cost one more export). 'Ready seen' is",
        'the time from the create request to the status answer that points at the file.',
      ].join('\n'),
    ],
    [ECONOMY, economyMethod()],
    [ATTEMPTS, attemptsMethod()],
    [MANY_QUESTS, manyQuestsMethod()],
  ]);
}

async function main(): Promise<void> {
  const opts = parseArgs(process.argv.slice(2));
  const watchdog = setTimeout(() => {
    progress(`the benchmark did not finish within ${OVERALL_TIMEOUT_MS / 60_000} min; stopping`);
    cleanup();
    process.exit(1);
  }, OVERALL_TIMEOUT_MS);
  watchdog.unref();

  const host = machine();
  progress(
    `temp dir ${tmpDir}; ${host.nproc} CPU(s), ${host.cpuModel}, Node ${host.node}; peak RSS via ${HAS_TIME ? '/usr/bin/time' : '/proc VmHWM'}`
  );
  const rows: Row[] = [];
  const notes: string[] = [];
  if (opts.only.has('throughput'))
    await throughput({tmpDir, progress, rows: opts.rows, repeat: opts.repeat}, rows, notes);
  if (opts.only.has('latency')) await latency(rows);
  if (opts.only.has('requests')) await requestsPerExport(rows);
  if (opts.only.has('economy')) await exportEconomy({tmpDir, progress}, rows, notes, opts.cases);
  if (opts.only.has('attempts')) await attempts({tmpDir, progress}, rows);
  if (opts.only.has('many')) await manyQuests({tmpDir, progress}, rows);

  const durationS = (Date.now() - benchStart) / 1000;
  process.stdout.write(`\n${consoleTable(rows)}\n\n`);
  for (const n of notes) process.stdout.write(`note: ${n}\n`);
  process.stdout.write(`The benchmark took ${durationS.toFixed(0)} s.\n`);

  const complete =
    opts.only.size === SECTIONS.length && opts.cases.size === ECONOMY_CASES.length && opts.rows === DEFAULT_ROWS;
  if (opts.doc && complete) {
    const args = process.argv.slice(2);
    const command = `npm run bench${args.length ? ` -- ${args.join(' ')}` : ''}`;
    fs.mkdirSync(path.dirname(DOC), {recursive: true});
    fs.writeFileSync(DOC, markdown({machine: host, command, durationS, rows, methods: methods(opts), notes}));
    process.stdout.write(`Wrote ${path.relative(ROOT, DOC)}.\n`);
  } else if (opts.doc) {
    process.stdout.write(`Not writing ${path.relative(ROOT, DOC)}: only a full run with the default row count does.\n`);
  }
  const missed = rows.filter((r) => r.met === false);
  if (missed.length) process.stdout.write(`Targets missed: ${missed.map((r) => r.metric).join('; ')}.\n`);
}

main().then(
  () => {
    cleanup();
    process.exit(0);
  },
  (err: unknown) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? err.message : String(err)}\n`);
    cleanup();
    process.exit(1);
  }
);
