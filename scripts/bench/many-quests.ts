// The "Many quests" section: what 10, 100 and 500 quests of a few rows each cost in one connection:
// discover, check (also on a service answering in 1.3 s), a first sync from start_date and the next
// incremental sync from its state: wall time, exports, requests, peak RSS, state size, Node
// warnings. The stream layout is a parameter, so that each layout the connector offers is measured
// the same way against the same simulator. What is promised of these runs the tests assert (a check
// of hundreds of quests on a slow service passes: test/e2e/many-quests.cases.ts; a combined discover
// makes no export, a read prints no Node warning: test/e2e/scale.cases.ts); here they are figures.

import path from 'path';

import {binMainArgv} from '../../harness/bin-main';
import {DEFAULTS} from '../../src/core/config';
import {LIMITS} from '../../src/core/limits';
import {COLUMNS_STREAM} from '../../src/sync/streams/columns-stream';
import {PipedRun, runNode, runPiped, SimChild} from './proc';
import {iso, mib, Row, s, thousands} from './report';
import {connectorConfig, countRequests, DAY_MS, discoverCatalog, problems, stateInput, writeJson} from './scenario';
import type {BenchContext, Section} from './types';

const MANY_QUESTS = 'Many quests';

/** The connector's stream layouts (config option stream_layout). */
type StreamLayout = 'per_quest' | 'combined';
const LAYOUTS: readonly StreamLayout[] = ['per_quest', 'combined'];

/** The quest counts measured; a quick run measures the first only. */
const countsOf = (ctx: BenchContext): readonly number[] => (ctx.quick ? [10] : [10, 100, 500]);
const ROWS_PER_QUEST = 3;
/** Short, so that 500 quests stay within minutes; the costs counted (exports, requests) do not depend on it. */
const EXPORT_MS = 300;
/** The service of issue 17 whose check of 200 quests failed as "too slow". */
const SLOW_ANSWER_MS = 1300;
const START_DAYS_BACK = 40;

/** The config keys that select a layout. per_quest is the default and passes nothing: the config as most users have it. */
function layoutOption(layout: StreamLayout): Record<string, unknown> {
  return layout === 'per_quest' ? {} : {stream_layout: layout};
}

const questId = (k: number): string => `3a7e0000-0000-4000-8000-${String(k).padStart(12, '0')}`;

interface CatalogEntry {
  stream: {name: string; default_cursor_field?: string[]; supported_sync_modes?: string[]};
}

/**
 * Discover's catalog, every stream that supports it incremental, as Airbyte configures it for a
 * deduplicated history. A full-refresh-only stream (`invitations`) is left out: its own section measures it.
 */
function incremental(catalog: {streams: unknown[]}): {streams: unknown[]} {
  return {
    streams: (catalog.streams as CatalogEntry[])
      .filter(({stream}) => stream.supported_sync_modes?.includes('incremental'))
      .map(({stream}) => ({
        stream,
        sync_mode: 'incremental',
        destination_sync_mode: 'append',
        cursor_field: stream.default_cursor_field,
      })),
  };
}

/** Node's own warnings (MaxListenersExceededWarning and the like) in a process's stderr. */
const nodeWarnings = (stderr: string): string[] => stderr.split('\n').filter((l) => /^\(node:\d+\) \w*Warning/.test(l));

interface SyncFigures {
  run: PipedRun;
  exports: number;
  requests: ReturnType<typeof countRequests>;
  stateBytes: number;
}

async function sync(
  ctx: BenchContext,
  sim: SimChild,
  key: string,
  args: {config: string; catalog: string; state?: unknown[]; expected: number}
): Promise<SyncFigures> {
  const argv = ['read', '--config', args.config, '--catalog', args.catalog];
  if (args.state) argv.push('--state', writeJson(ctx.tmpDir, `${key}-state.json`, args.state));
  const run = await runPiped(binMainArgv(argv), {timeoutMs: 20 * 60_000, label: `read ${key}`, tmpDir: ctx.tmpDir});
  const trouble = problems(run.consumer);
  if (run.producer.code !== 0 || run.consumer.records !== args.expected || trouble.length) {
    throw new Error(
      `read ${key}: exit ${run.producer.code ?? run.producer.signal}, ${run.consumer.records} of ${args.expected} records` +
        `${trouble.length ? `; ${trouble.slice(0, 5).join('; ')}` : ''}; stderr: ${run.producer.stderr.slice(-2000)}`
    );
  }
  const [{requests}, exports] = await Promise.all([sim.stats(), sim.exports()]);
  return {
    run,
    exports: exports.filter((e) => Date.parse(e.createdAt) >= run.startedAt).length,
    requests: countRequests(requests, run.startedAt),
    stateBytes: Buffer.byteLength(JSON.stringify(stateInput(run.consumer.lastStates))),
  };
}

/** `bin/main check`: its wall time and whether it passed (with the message when it did not). */
async function check(configFile: string): Promise<{wallMs: number; passed: boolean; message?: string}> {
  const run = await runNode(binMainArgv(['check', '--config', configFile]), 3 * LIMITS.check.deadlineMs, 'check');
  const status = run.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as {type?: string; connectionStatus?: {status: string; message?: string}})
    .find((m) => m.type === 'CONNECTION_STATUS')?.connectionStatus;
  return {wallMs: run.wallMs, passed: status?.status === 'SUCCEEDED', message: status?.message};
}

function syncSummary(f: SyncFigures, columnRecords: number): string {
  const r = f.requests;
  const records = f.run.consumer.records;
  return (
    `${s(f.run.producer.wallMs)}; ${thousands(records)} records (${thousands(records - columnRecords)} responses, ${thousands(columnRecords)} columns), ${thousands(f.exports)} exports, ` +
    `${thousands(r.total)} requests (create ${r.create}, status ${r.status}, download ${r.download}, token ${r.token}, other ${r.other})`
  );
}

async function measure(
  ctx: BenchContext,
  sim: SimChild,
  rows: Row[],
  count: number,
  layout: StreamLayout,
  startDate: string
): Promise<void> {
  const who = `${count} quests, ${layout}`;
  const key = `many-${count}-${layout}`;
  const ids = Array.from({length: count}, (_, k) => questId(k));
  const config = writeJson(
    ctx.tmpDir,
    `${key}.json`,
    connectorConfig(sim.info, {quest_ids: ids, start_date: startDate, ...layoutOption(layout)})
  );

  ctx.progress(`many quests: ${who}: discover`);
  const discoverStart = Date.now();
  const {catalog, wallMs: discoverMs} = await discoverCatalog(config, 20 * 60_000);
  const discoverExports = (await sim.exports()).filter((e) => Date.parse(e.createdAt) >= discoverStart).length;
  const discoverRequests = countRequests((await sim.stats()).requests, discoverStart).total;
  rows.push({
    section: MANY_QUESTS,
    metric: `${who}: discover`,
    value: `${s(discoverMs)}; ${thousands(discoverExports)} exports, ${thousands(discoverRequests)} requests, ${catalog.streams.length} streams`,
  });

  ctx.progress(`many quests: ${who}: check, then check with every answer taking ${s(SLOW_ANSWER_MS)}`);
  const quick = await check(config);
  await sim.setFaults({latencyMs: SLOW_ANSWER_MS});
  const slow = await check(config).finally(() => sim.setFaults({}));
  for (const [label, c] of [
    ['check', quick],
    [`check, every answer taking ${s(SLOW_ANSWER_MS)}`, slow],
  ] as const) {
    rows.push({
      section: MANY_QUESTS,
      metric: `${who}: ${label}`,
      value: `${s(c.wallMs)}${c.passed ? '' : ` (failed: ${c.message ?? 'no status'})`}`,
    });
  }

  const catalogFile = writeJson(ctx.tmpDir, `${key}-catalog.json`, incremental(catalog));
  // The columns stream, selected as Airbyte selects every discovered stream, reports every column of
  // every quest in each sync: one record per header cell.
  const listsColumns = (catalog.streams as CatalogEntry[]).some((c) => c.stream.name === COLUMNS_STREAM);
  const columnRecords = listsColumns ? ids.reduce((n, id) => n + (sim.info.headers[id]?.length ?? 0), 0) : 0;
  ctx.progress(`many quests: ${who}: first sync from start_date`);
  const first = await sync(ctx, sim, `${key}-first`, {
    config,
    catalog: catalogFile,
    expected: count * ROWS_PER_QUEST + columnRecords,
  });
  ctx.progress(`many quests: ${who}: next sync from its state (no new rows)`);
  const next = await sync(ctx, sim, `${key}-next`, {
    config,
    catalog: catalogFile,
    state: stateInput(first.run.consumer.lastStates),
    expected: columnRecords,
  });
  rows.push({section: MANY_QUESTS, metric: `${who}: first sync`, value: syncSummary(first, columnRecords)});
  rows.push({
    section: MANY_QUESTS,
    metric: `${who}: next sync (incremental)`,
    value: syncSummary(next, columnRecords),
  });
  rows.push({
    section: MANY_QUESTS,
    metric: `${who}: peak RSS, first / next sync`,
    value: `${mib(first.run.producer.peakRssKb)} / ${mib(next.run.producer.peakRssKb)}`,
  });
  rows.push({
    section: MANY_QUESTS,
    metric: `${who}: state after the first sync`,
    value: `${(first.stateBytes / 1024).toFixed(0)} KiB`,
  });
  const warnings = [...nodeWarnings(first.run.producer.stderr), ...nodeWarnings(next.run.producer.stderr)];
  rows.push({
    section: MANY_QUESTS,
    metric: `${who}: Node warnings on stderr (both syncs)`,
    value: warnings.length
      ? `${warnings.length}: ${[...new Set(warnings.map((w) => w.replace(/^\(node:\d+\) /, '')))].join(' | ')}`
      : '0',
  });
}

/** The section: one simulator of 500 quests; each count reads the first quests of it, in each layout. */
async function manyQuests(ctx: BenchContext, rows: Row[]): Promise<void> {
  const most = Math.max(...countsOf(ctx));
  const now = Date.now();
  ctx.progress(`many quests: starting a simulator with ${most} quests of ${ROWS_PER_QUEST} rows`);
  const sim = await SimChild.start({
    exportDurationMs: EXPORT_MS,
    quests: Array.from({length: most}, (_, k) => ({
      id: questId(k),
      rows: ROWS_PER_QUEST,
      firstCreatedAt: iso(now - 30 * DAY_MS),
    })),
    dataDir: path.join(ctx.tmpDir, 'sim-many-quests'),
  });
  try {
    const startDate = iso(Math.floor((now - START_DAYS_BACK * DAY_MS) / 1000) * 1000);
    for (const count of countsOf(ctx))
      for (const layout of LAYOUTS) await measure(ctx, sim, rows, count, layout, startDate);
  } finally {
    await sim.close();
  }
}

function method(ctx: BenchContext): string {
  return [
    `One simulator of ${Math.max(...countsOf(ctx))} quests of ${ROWS_PER_QUEST} rows each (spread over the last 30 days), whose exports take`,
    `${s(EXPORT_MS)} to generate; for ${countsOf(ctx).join(', ')} quests (the first of them) and each layout (${LAYOUTS.join(', ')}):`,
    '`bin/main discover`; `bin/main check`, then `check` again with every answer of the simulator delayed by',
    `${s(SLOW_ANSWER_MS)}; a first \`bin/main read\` from start_date (${START_DAYS_BACK} days back) with discover's catalog, every stream`,
    'incremental; then the next incremental read from its last STATEs, with no new rows. The catalog selects every',
    'incremental stream discover lists, as Airbyte does by default (`invitations`, full refresh only, is measured in its',
    'own section): the quest streams (per_quest) or `responses` (combined), and',
    '`columns`, which reports every column of every quest in each sync (its records are counted apart; a quest the',
    'sync reads gives its header from that read, any other costs a header probe export). Default config otherwise',
    `(max_concurrent_exports ${DEFAULTS.max_concurrent_exports}, settle_seconds 0). Exports and requests are what the simulator logged during each run;`,
    "peak RSS is the read process's; the state is the size of the STATE messages the next sync gets; Node warnings are",
    "the lines Node itself printed on the read's stderr. Wall times depend on the export time chosen here: the counts",
    'are what carries over to the production service.',
  ].join('\n');
}

export const MANY_QUESTS_SECTION: Section = {key: 'many', title: MANY_QUESTS, method, run: manyQuests};
