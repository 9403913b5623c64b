// Two sections about waiting for exports: "Latency hiding" (8 quests whose exports take seconds,
// read by one `bin/main read`, against one such quest) and "Requests per export" (the calls an export
// of 5 s and of 60 s costs, from the simulator's request log).

import path from 'path';

import {binMainArgv} from '../../harness/bin-main';
import {DEFAULTS} from '../../src/core/config';
import {runPiped, SimChild} from './proc';
import {plural} from '../../src/core/quantities';
import {iso, Row, s} from './report';
import {
  catalogFor,
  checkRun,
  connectorConfig,
  countRequests,
  DAY_MS,
  discoverCatalog,
  selectStreams,
  writeJson,
} from './scenario';
import type {BenchContext, Section} from './types';

const LATENCY = 'Latency hiding';
const REQUESTS = 'Requests per export';

const TARGETS = {latencyRatio: 1.5, polls60s: 15};

/** Generation time of the latency section's exports; shorter in a quick run. */
const latencyExportMs = (ctx: BenchContext): number => (ctx.quick ? 1_000 : 5_000);
/** The export lengths of the requests section; a quick run does without the minute-long one. */
const requestsExportMs = (ctx: BenchContext): number[] => (ctx.quick ? [1_000, 5_000] : [5_000, 60_000]);

async function latency(ctx: BenchContext, rows: Row[]): Promise<void> {
  const {tmpDir, progress} = ctx;
  const exportMs = latencyExportMs(ctx);
  const count = 8;
  const ids = Array.from({length: count}, (_, k) => `1a7e0000-0000-4000-8000-00000000000${k + 1}`);
  const perQuest = 300;
  const firstCreatedAt = Date.now() - 2 * DAY_MS;
  progress(`latency: starting a simulator with ${count} quests whose exports take ${s(exportMs)}`);
  const sim = await SimChild.start({
    quests: ids.map((id) => ({id, rows: perQuest, exportDurationMs: exportMs, firstCreatedAt: iso(firstCreatedAt)})),
    dataDir: path.join(tmpDir, 'sim-latency'),
  });
  try {
    const base = {start_date: iso(firstCreatedAt - 60_000), window_days: 30};
    // One discover for all cases (its exports take as long); 8 at once keeps it short.
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
      const run = await runPiped(binMainArgv(['read', '--config', config, '--catalog', catalogFile]), {
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
        value: `${s(run.producer.wallMs)} (${plural(counts.create, 'export')}, ${counts.status} status polls)`,
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

async function requestsPerExport(ctx: BenchContext, rows: Row[]): Promise<void> {
  const {tmpDir, progress} = ctx;
  const durations = requestsExportMs(ctx);
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
        const run = await runPiped(binMainArgv(['read', '--config', config, '--catalog', catalogFile]), {
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

export const LATENCY_SECTION: Section = {
  key: 'latency',
  title: LATENCY,
  method: (ctx) =>
    [
      `Eight quests of 300 rows whose exports take ${s(latencyExportMs(ctx))} each to generate, one window per quest, read by one \`bin/main read\``,
      `with max_concurrent_exports 4 and 8 (the connector's default is ${DEFAULTS.max_concurrent_exports}), against one such quest. Wall time of the read process.`,
    ].join('\n'),
  run: latency,
};

export const REQUESTS_SECTION: Section = {
  key: 'requests',
  title: REQUESTS,
  method: (ctx) =>
    [
      `One quest, one window, an export that takes ${requestsExportMs(ctx).map(s).join(' or ')} to generate; the requests of one \`bin/main read\` as the`,
      "simulator logged them (the catalog is written by hand: a discover would cost one more export). 'Ready seen' is",
      'the time from the create request to the status answer that points at the file.',
    ].join('\n'),
  run: (ctx, rows) => requestsPerExport(ctx, rows),
};
