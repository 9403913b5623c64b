// The "Long layout" section: the same export read by `bin/main read` in the wide per_quest layout (a
// record per row) and in the long layout (a record per non-empty answer cell), each into a counting
// consumer, alternating: answer cells per second of each, and their ratio. The long layout writes
// many more, smaller records; its hot path must stay close to the wide one's cost per cell.

import path from 'path';

import {binMainArgv} from '../../harness/bin-main';
import {PipedRun, runPiped, SimChild} from './proc';
import {iso, mib, Row, s, thousands} from './report';
import {checkRun, connectorConfig, DAY_MS, discoverCatalog, problems, selectStreams, writeJson} from './scenario';
import type {BenchContext, Section} from './types';

const LONG_LAYOUT = 'Long layout';

const ROWS = 200_000;
const QUICK_ROWS = 10_000;
/** Response ID, Created and 28 questions, as in the throughput section. */
const QUESTIONS = 28;
const START_DATE = '2020-01-01T00:00:00Z';

interface Figures {
  records: number;
  stdoutBytes: number;
  /** First RECORD to the end of the output, ms. */
  streamMs: number;
  cellsPerS: number;
  /** The output's bytes over streamMs, MB/s. */
  mbPerS: number;
  cpuS?: number;
  /** The counting consumer's CPU time: on 2 cores it competes with the producer. */
  consumerCpuS: number;
  peakRssKb?: number;
}

function figuresOf(run: PipedRun, cells: number): Figures {
  const c = run.consumer;
  const streamMs = Math.max(1, c.endAt - (c.firstRecordAt ?? c.endAt));
  const p = run.producer;
  return {
    records: c.records,
    stdoutBytes: c.bytes,
    streamMs,
    cellsPerS: (cells / streamMs) * 1000,
    mbPerS: c.bytes / streamMs / 1000,
    ...(p.userS !== undefined && p.sysS !== undefined ? {cpuS: p.userS + p.sysS} : {}),
    consumerCpuS: c.cpuS,
    ...(p.peakRssKb !== undefined ? {peakRssKb: p.peakRssKb} : {}),
  };
}

/** CPU time in seconds, or n/a. */
const cpu = (seconds: number | undefined): string => (seconds === undefined ? 'n/a' : `${seconds.toFixed(1)} s`);

async function longLayout(ctx: BenchContext, rows: Row[], notes: string[]): Promise<void> {
  const {tmpDir, progress} = ctx;
  const repeat = ctx.quick ? 1 : ctx.repeat;
  const count = ctx.quick ? QUICK_ROWS : ROWS;
  const questId = 'b16e0000-0000-4000-8000-0000000000a2';
  progress(`long layout: starting a simulator with ${thousands(count)} rows x ${QUESTIONS + 2} columns`);
  const sim = await SimChild.start({
    quests: [{id: questId, rows: count, columns: QUESTIONS, firstCreatedAt: iso(Date.now() - 3 * DAY_MS)}],
    dataDir: path.join(tmpDir, 'sim-long-layout'),
  });
  try {
    const base = connectorConfig(sim.info, {start_date: START_DATE});
    const wideConfig = writeJson(tmpDir, 'long-layout-wide-config.json', base);
    const longConfig = writeJson(tmpDir, 'long-layout-long-config.json', {...base, stream_layout: 'long'});
    const wideCatalog = writeJson(
      tmpDir,
      'long-layout-wide-catalog.json',
      selectStreams((await discoverCatalog(wideConfig, 180_000)).catalog, [questId])
    );
    // The answers stream alone: the columns stream's few records would upset the count.
    const {catalog} = await discoverCatalog(longConfig, 60_000);
    const answersOnly = {
      streams: catalog.streams.filter((x) => (x as {stream: {name: string}}).stream.name === 'answers'),
    };
    const longCatalog = writeJson(tmpDir, 'long-layout-long-catalog.json', answersOnly);

    const runs = {wide: [] as Figures[], long: [] as Figures[]};
    /** Non-empty answer cells of the export: the long layout's records (the tests prove it exact). */
    let cells = 0;
    for (let i = 1; i <= repeat; i++) {
      for (const layout of ['long', 'wide'] as const) {
        progress(`long layout ${i}/${repeat}: bin/main read, ${layout}`);
        const [config, catalogFile] = layout === 'wide' ? [wideConfig, wideCatalog] : [longConfig, longCatalog];
        const run = await runPiped(binMainArgv(['read', '--config', config, '--catalog', catalogFile]), {
          timeoutMs: 30 * 60_000,
          label: `${layout} read`,
          tmpDir,
        });
        if (layout === 'long') {
          const trouble = problems(run.consumer);
          if (run.producer.code !== 0 || trouble.length || run.consumer.records < count)
            throw new Error(
              `long read: exit ${run.producer.code}, ${run.consumer.records} records; ${trouble.join('; ')}`
            );
          if (cells && run.consumer.records !== cells)
            throw new Error(`long read: ${run.consumer.records} records, an earlier run had ${cells}`);
          cells = run.consumer.records;
        } else checkRun('wide read', run, count);
        runs[layout].push(figuresOf(run, cells));
        progress(`long layout ${i}/${repeat}: ${layout} ${thousands(runs[layout][i - 1].cellsPerS)} cells/s`);
      }
    }
    const best = (list: Figures[]): Figures => list.reduce((top, f) => (f.cellsPerS > top.cellsPerS ? f : top));
    const wide = best(runs.wide);
    const long = best(runs.long);
    const section = LONG_LAYOUT;
    rows.push({
      section,
      metric: 'export: rows, non-empty answer cells',
      value: `${thousands(count)}, ${thousands(cells)}`,
    });
    for (const [who, f] of [
      ['wide (per_quest)', wide],
      ['long', long],
    ] as const) {
      rows.push(
        {
          section,
          metric: `${who}: records / stdout`,
          value: `${thousands(f.records)} / ${(f.stdoutBytes / 1e6).toFixed(0)} MB`,
        },
        {section, metric: `${who}: first record to end`, value: s(f.streamMs)},
        {section, metric: `${who}: answer cells/s`, value: thousands(f.cellsPerS)},
        {section, metric: `${who}: stdout MB/s`, value: f.mbPerS.toFixed(0)},
        {section, metric: `${who}: CPU time, user + sys`, value: cpu(f.cpuS)},
        {section, metric: `${who}: the consumer's CPU time`, value: cpu(f.consumerCpuS)},
        {
          section,
          metric: `${who}: peak RSS`,
          value: mib(f.peakRssKb),
        }
      );
    }
    rows.push({section, metric: 'long / wide, answer cells/s', value: (long.cellsPerS / wide.cellsPerS).toFixed(2)});
    // Per cell in CPU time, which the load of a shared machine disturbs less than the wall time.
    const least = (list: Figures[]): number | undefined =>
      list.every((f) => f.cpuS !== undefined) ? Math.min(...list.map((f) => f.cpuS as number)) : undefined;
    const [wideCpu, longCpu] = [least(runs.wide), least(runs.long)];
    rows.push({
      section,
      metric: 'long / wide, answer cells per CPU second',
      value: wideCpu === undefined || longCpu === undefined ? 'n/a' : (wideCpu / longCpu).toFixed(2),
    });
    if (repeat > 1) {
      const list = (f: Figures[]): string => f.map((x) => thousands(x.cellsPerS)).join(', ');
      notes.push(
        `Long layout runs (answer cells/s): wide ${list(runs.wide)}; long ${list(runs.long)}; the table shows the best of each.`
      );
    }
  } finally {
    await sim.close();
  }
}

function longLayoutMethod(ctx: BenchContext): string {
  return [
    `One quest of ${thousands(ctx.quick ? QUICK_ROWS : ROWS)} rows x ${QUESTIONS + 2} columns (as in the throughput section), all created in the last three days,`,
    `read from start_date ${START_DATE.slice(0, 10)} by \`bin/main read\` in the default per_quest layout (the quest's stream: one record`,
    'per row) and with `stream_layout: long` (the answers stream: one record per non-empty cell of a column other than',
    `Response ID and Created), each into a counting consumer process, the two alternating, ${ctx.quick ? 1 : ctx.repeat} run(s) each. Both read the`,
    "same export of every row. answer cells/s is the non-empty answer cells of the export (the long read's record count)",
    'over the time from the first RECORD line the consumer sees to the end of the output; the ratio long / wide is the',
    "long layout's speed per cell against the wide layout's on the same cells. stdout MB/s is the output's bytes over",
    "that same time. CPU time is the connector's (user + sys, both threads); the consumer's is its own, as it reports",
    'it: on a 2-core machine the two compete. answer cells per CPU second divides the cells by the least CPU time of',
    "each layout's runs: the cost per cell, which a busy machine disturbs less than the wall time.",
  ].join('\n');
}

export const LONG_LAYOUT_SECTION: Section = {
  key: 'long',
  title: LONG_LAYOUT,
  method: longLayoutMethod,
  run: longLayout,
};
