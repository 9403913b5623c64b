// The connector's benchmark: `npm run bench` (or `node lib/scripts/bench.js [options]` after a build).
// It reports figures; what the connector promises in counts and exactness the tests assert. A target
// column stays on what no test may bound (throughput, wall-time ratios) and on peak memory by rows
// per export, which no test measures at these sizes.
// Every process it starts (simulators, connector runs, consumers) is a child with a timeout, all on
// loopback, all killed and the temp dir removed on exit. The sections and options are USAGE below,
// which --help prints and docs/benchmarks.md repeats.

import fs from 'fs';
import os from 'os';
import path from 'path';

import {ROOT} from '../harness/bin-main';
import {ATTEMPTS_SECTION} from './bench/attempts';
import {ECONOMY_CASES, ECONOMY_SECTION} from './bench/economy';
import {LATENCY_SECTION, REQUESTS_SECTION} from './bench/latency';
import {LONG_LAYOUT_SECTION} from './bench/long-layout';
import {MANY_QUESTS_SECTION} from './bench/many-quests';
import {INVITATIONS_SECTION} from './bench/invitations';
import {HAS_TIME, killAll} from './bench/proc';
import {consoleTable, machine, markdown, Row} from './bench/report';
import {THROUGHPUT_SECTION} from './bench/throughput';
import type {BenchContext, Section} from './bench/types';

const SECTIONS: readonly Section[] = [
  THROUGHPUT_SECTION,
  LATENCY_SECTION,
  REQUESTS_SECTION,
  ECONOMY_SECTION,
  ATTEMPTS_SECTION,
  MANY_QUESTS_SECTION,
  LONG_LAYOUT_SECTION,
  INVITATIONS_SECTION,
];

const DEFAULT_ROWS = 1_000_000;
const QUICK_ROWS = 20_000;
const DOC = path.join(ROOT, 'docs', 'benchmarks.md');
/** Nothing in a healthy run comes close; a hung child must not keep the benchmark alive forever. */
const OVERALL_TIMEOUT_MS = 60 * 60_000;

const USAGE = `Sections (each a heading of docs/benchmarks.md, in this order):
  throughput  a 1,000,000-row, 30-column quest read by bin/main into a counting consumer, against a
              csv-parse + JSON.stringify baseline, a no-parse ceiling, DuckDB on one thread and Miller
              (where installed) on the same export file; then peak RSS by rows per export (200,000,
              1,000,000, 3,000,000), with a setback late in the file and with a slow consumer
  latency     8 quests whose exports take 5 s each, against 1 such quest
  requests    the calls an export of 5 s and one of 60 s cost
  economy     adaptive window sizing against 30-day windows on sparse, dense, mixed (with the next
              incremental syncs) and faulty quests
  attempts    a sync killed after its exports were created, and the next attempt with and without
              re-using them
  many        10, 100 and 500 quests in one connection, in each stream layout
  long        answer cells per second of the long layout against the wide one on the same export
  invitations one quest of 100,000 invitations read by the invitations stream: invitations per second,
              list requests per 1,000 invitations, peak RSS

Options:
  --quick          a smoke run of every section at a small scale (${QUICK_ROWS.toLocaleString('en-US')} throughput rows, one run each,
                   shorter exports, fewer and smaller quests), in a few minutes: it shows the bench works,
                   its figures are no measurement, and it judges no target
  --rows N         rows of the throughput export (default ${DEFAULT_ROWS.toLocaleString('en-US')}; other counts judge no target)
  --only a,b       run only these sections: ${SECTIONS.map((x) => x.key).join(', ')}
  --cases a,b      run only these cases of the economy section: ${ECONOMY_CASES.join(', ')}
  --repeat N       throughput runs per pipeline, alternating; the best of N is reported (default 3:
                   single runs on the shared 2-core machine vary by up to a third)
  --no-doc         do not write docs/benchmarks.md (only a full run writes it: every section and case,
                   the default rows, not --quick)
  --help           print this

Peak RSS and CPU time come from /usr/bin/time when present, else from each node process's own report as it exits
(getrusage; BENCH_NO_TIME=1 forces that; Miller is then not measured).`;

interface Options {
  quick: boolean;
  rows: number;
  only: ReadonlySet<string>;
  cases: ReadonlySet<string>;
  repeat: number;
  doc: boolean;
}

/** A comma-separated list of names, each one of `known`. */
function names(arg: string, value: string, known: readonly string[]): Set<string> {
  const list = value.split(',');
  for (const n of list) if (!known.includes(n)) throw new Error(`${arg}: unknown name ${n}; use ${known.join(', ')}`);
  return new Set(list);
}

function parseArgs(argv: readonly string[]): Options | 'help' {
  const sectionKeys = SECTIONS.map((x) => x.key);
  const opts = {quick: false, only: new Set(sectionKeys), cases: new Set<string>(ECONOMY_CASES), doc: true};
  let rows: number | undefined;
  let repeat: number | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${arg} needs a value`);
      return v;
    };
    const whole = (): number => {
      const n = Number(value());
      if (!Number.isInteger(n) || n < 1) throw new Error(`${arg} needs a whole number >= 1`);
      return n;
    };
    if (arg === '--help' || arg === '-h') return 'help';
    else if (arg === '--quick') opts.quick = true;
    else if (arg === '--rows') rows = whole();
    else if (arg === '--repeat') repeat = whole();
    else if (arg === '--only') opts.only = names(arg, value(), sectionKeys);
    else if (arg === '--cases') opts.cases = names(arg, value(), ECONOMY_CASES);
    else if (arg === '--no-doc') opts.doc = false;
    else throw new Error(`unknown argument ${arg} (--help lists the options)`);
  }
  return {
    ...opts,
    rows: rows ?? (opts.quick ? QUICK_ROWS : DEFAULT_ROWS),
    repeat: repeat ?? (opts.quick ? 1 : 3),
  };
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

async function main(): Promise<void> {
  const opts = parseArgs(process.argv.slice(2));
  if (opts === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const watchdog = setTimeout(() => {
    progress(`the benchmark did not finish within ${OVERALL_TIMEOUT_MS / 60_000} min; stopping`);
    cleanup();
    process.exit(1);
  }, OVERALL_TIMEOUT_MS);
  watchdog.unref();

  const host = machine();
  progress(
    `temp dir ${tmpDir}; ${host.nproc} CPU(s), ${host.cpuModel}, Node ${host.node}; peak RSS via ${HAS_TIME ? '/usr/bin/time' : 'getrusage on exit'}${opts.quick ? '; quick: a smoke run, no measurement' : ''}`
  );
  const ctx: BenchContext = {tmpDir, progress, ...opts};
  const sections = SECTIONS.filter((x) => opts.only.has(x.key));
  const rows: Row[] = [];
  const notes: string[] = [];
  for (const section of sections) await section.run(ctx, rows, notes);

  // A scaled-down run measures nothing a target speaks of: its rows keep their figures only.
  const fullScale = !opts.quick && opts.rows === DEFAULT_ROWS;
  const shown: Row[] = fullScale ? rows : rows.map(({section, metric, value}) => ({section, metric, value}));
  const durationS = (Date.now() - benchStart) / 1000;
  process.stdout.write(`\n${consoleTable(shown)}\n\n`);
  for (const n of notes) process.stdout.write(`note: ${n}\n`);
  process.stdout.write(`The benchmark took ${durationS.toFixed(0)} s.\n`);

  const complete = fullScale && sections.length === SECTIONS.length && opts.cases.size === ECONOMY_CASES.length;
  if (opts.doc && complete) {
    const args = process.argv.slice(2);
    const command = `npm run bench${args.length ? ` -- ${args.join(' ')}` : ''}`;
    const methods = new Map(sections.map((x) => [x.title, x.method(ctx)]));
    fs.mkdirSync(path.dirname(DOC), {recursive: true});
    fs.writeFileSync(DOC, markdown({machine: host, command, durationS, rows, usage: USAGE, methods, notes}));
    process.stdout.write(`Wrote ${path.relative(ROOT, DOC)}.\n`);
  } else if (opts.doc) {
    process.stdout.write(`Not writing ${path.relative(ROOT, DOC)}: only a full run (--help says which) does.\n`);
  }
  const missed = shown.filter((r) => r.met === false);
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
