// Issue 17's scale requirement end to end: a read of many quests of a few rows each, through bin/main
// (a process of its own, whose peak memory is measured) against the simulator, in both stream layouts. Every row once, no Node warning on stderr, a final
// state of a few MB at most, a bounded peak RSS, and exports generated side by side, never more at
// once than max_concurrent_exports. Time is not bounded here beyond jest's timeout (the machine may
// be busy); the figures for people are in the bench's "Many quests" section.

import {RecordMessage, records, runBinMain, RunResult, stateFile} from '../helpers/connector';
import {questEntries} from '../helpers/combined';
import {configuredCatalog, simCatalog, startWorld, streamOf, World} from '../helpers/fixtures';
import {peakRssProbe} from '../helpers/peak-rss';
import {DAY_MS} from '../../src/core/time';
import {warehouseNames} from '../../src/sync/streams/column-names';
import {Simulator, systemClock} from '../../simulator';
import {discovered} from '../helpers/streams';

// The benchmark (Many quests) reads 500; the suite reads enough to exercise the same paths (more quests than
// export slots, more than Node's listener warning threshold) in a few seconds.
const QUESTS = 120;
const ROWS = 3;
const MAX_CONCURRENT_EXPORTS = 16;
/** Generous: the connector holds a few rows per quest and a state entry per quest at most. */
const PEAK_RSS_MIB = 400;
const STATE_BYTES = 3_000_000;

const questIds = (prefix: string): string[] =>
  Array.from({length: QUESTS}, (_, i) => `${prefix}-0000-4000-8000-${String(i).padStart(12, '0')}`);

/** QUESTS quests of 3 rows over the last 5 days: with start_date 6 days back, one export per quest. On the real clock: the read is a process. */
function manyQuests(ids: readonly string[]): Promise<World> {
  const firstCreatedAt = new Date(Date.now() - 5 * DAY_MS).toISOString();
  return startWorld({
    seed: 500,
    clock: systemClock,
    exportDurationMs: 20,
    quests: ids.map((id) => ({id, rows: ROWS, columns: 4, firstCreatedAt})),
  });
}

/** One emitted row: its quest, its Response ID and every cell keyed by header text. */
interface Row {
  questId: string;
  responseId: string;
  cells: Record<string, string | null>;
}

/** Rows of the per-quest layout: one stream per quest, cells under their warehouse names. */
function perQuestRows(sim: Simulator, ids: readonly string[], emitted: RecordMessage[]): Row[] {
  const byStream = new Map(ids.map((id) => [streamOf(id), id]));
  const names = new Map<string, {header: string[]; names: string[]}>();
  return emitted.map(({record}) => {
    const questId = byStream.get(record.stream) ?? `unknown stream ${record.stream}`;
    let columns = names.get(questId);
    if (!columns) {
      const header = byStream.has(record.stream) ? sim.groundTruth(questId).header : [];
      columns = {header, names: warehouseNames(header)};
      names.set(questId, columns);
    }
    const {header, names: keys} = columns;
    const cells = Object.fromEntries(header.map((h, i) => [h, record.data[keys[i]] as string | null]));
    return {questId, responseId: String(cells['Response ID']), cells};
  });
}

/** Rows of the combined layout: one stream `responses`, cells in `answers` keyed by header text. */
function combinedRows(emitted: RecordMessage[]): Row[] {
  return emitted.map(({record}) => {
    const data = record.data as {quest_id: string; response_id: string; answers: Record<string, string | null>};
    return {questId: data.quest_id, responseId: data.response_id, cells: data.answers};
  });
}

/** What differs from the simulator's truth: rows missing, emitted twice, unknown or with other cells. */
function problems(sim: Simulator, ids: readonly string[], rows: Row[]): string[] {
  const out: string[] = [];
  const seen = new Map<string, Row[]>();
  for (const row of rows) {
    const key = `${row.questId}/${row.responseId}`;
    seen.set(key, [...(seen.get(key) ?? []), row]);
  }
  for (const id of ids) {
    const {header, rows: truth} = sim.groundTruth(id);
    for (const cells of truth) {
      const key = `${id}/${cells[0]}`;
      const got = seen.get(key) ?? [];
      seen.delete(key);
      if (got.length !== 1) {
        out.push(`${key} emitted ${got.length} times`);
        continue;
      }
      const want = Object.fromEntries(header.map((h, i) => [h, cells[i] === '' ? null : cells[i]]));
      if (JSON.stringify(got[0].cells) !== JSON.stringify(want)) out.push(`${key}: ${JSON.stringify(got[0].cells)}`);
    }
  }
  for (const key of seen.keys()) out.push(`${key} is no row of the simulator`);
  return out;
}

/**
 * The most exports held at once, each from its creation until the last request for it (its
 * download): a slot is held from before the create to after the file is read, so this never counts
 * more than the connector held, and the connector may never hold more than max_concurrent_exports.
 */
function mostExportsAtOnce(sim: Simulator): number {
  const lastRequest = new Map<string, number>();
  for (const r of sim.requests()) {
    const m = /\/exports\/([^/]+)\/(?:status|download)$/.exec(r.path);
    if (m) lastRequest.set(m[1], Math.max(lastRequest.get(m[1]) ?? 0, r.at));
  }
  const events: [number, number][] = [];
  for (const e of sim.exports()) {
    events.push([Date.parse(e.createdAt), +1], [lastRequest.get(e.exportId) ?? Infinity, -1]);
  }
  // Ends before starts at the same instant: a slot handed on is not two at once.
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let most = 0;
  for (const [, step] of events) most = Math.max(most, (now += step));
  return most;
}

interface Figures {
  layout: string;
  readSeconds: number;
  peakRssMiB: number;
  stateBytes: number;
  exports: number;
  mostAtOnce: number;
  requests: number;
  discoverSeconds?: number;
}

const figures: Figures[] = [];
afterAll(() => {
  // The measured figures, for the report and the bench's comparison; no bound on time here.
  for (const f of figures) process.stdout.write(`scale.test figures: ${JSON.stringify(f)}\n`);
});

async function read(config: string, catalog: string): Promise<RunResult & {peakRssMiB: number}> {
  const rss = peakRssProbe();
  const run = await runBinMain(['read', '--config', config, '--catalog', catalog], rss.env);
  return {...run, peakRssMiB: rss.peakMiB()};
}

/** The read's verdict in one comparison, so that a failure shows everything that went wrong. */
function expectScaled(
  sim: Simulator,
  ids: readonly string[],
  run: RunResult & {peakRssMiB: number},
  rows: Row[],
  figure: Omit<Figures, 'peakRssMiB' | 'stateBytes' | 'exports' | 'mostAtOnce' | 'requests'>,
  configured: readonly string[] = ids.map(streamOf)
): void {
  const stateBytes = Buffer.byteLength(JSON.stringify(stateFile(run.messages)));
  const exports = sim.exports();
  const mostAtOnce = mostExportsAtOnce(sim);
  figures.push({
    ...figure,
    peakRssMiB: Math.round(run.peakRssMiB),
    stateBytes,
    exports: exports.length,
    mostAtOnce,
    requests: sim.requests().length,
  });
  expect({
    code: run.code,
    stderr: run.stderr,
    invalid: run.invalid.slice(0, 3),
    problems: problems(sim, ids, rows).slice(0, 10),
    rows: rows.length,
    statesOf: stateFile(run.messages)
      .map((s) => s.stream.stream_descriptor.name)
      .sort(),
    stateWithinBound: stateBytes <= STATE_BYTES || `${stateBytes} bytes`,
    peakRssWithinBound: run.peakRssMiB <= PEAK_RSS_MIB || `${run.peakRssMiB.toFixed(0)} MiB`,
    // Every export of a quest once: the read holds nothing back and repeats nothing.
    exportsPerQuest: new Set(exports.map((e) => e.questId)).size === QUESTS && exports.length === QUESTS,
    outcomes: [...new Set(exports.map((e) => e.outcome))],
    withinLimit: mostAtOnce <= MAX_CONCURRENT_EXPORTS || mostAtOnce,
    sideBySide: mostAtOnce > 1 || mostAtOnce,
  }).toEqual({
    code: 0,
    stderr: '',
    invalid: [],
    problems: [],
    rows: QUESTS * ROWS,
    // A state for every configured stream (combined: every quest's cursor in the one state of responses).
    statesOf: [...configured].sort(),
    stateWithinBound: true,
    peakRssWithinBound: true,
    exportsPerQuest: true,
    outcomes: ['ok'],
    withinLimit: true,
    sideBySide: true,
  });
}

function configFor(world: World, ids: readonly string[], layout: 'per_quest' | 'combined'): string {
  return world.config({
    quest_ids: ids,
    stream_layout: layout,
    max_concurrent_exports: MAX_CONCURRENT_EXPORTS,
    start_date: new Date(Date.now() - 6 * DAY_MS).toISOString(),
  });
}

describe(`a read of ${QUESTS} quests of ${ROWS} rows each`, () => {
  test.concurrent(
    'per_quest: every row once, nothing on stderr, a small state, bounded memory, exports side by side within the limit',
    async () => {
      const ids = questIds('5ca1e001');
      const world = await manyQuests(ids);
      const {sim} = world;
      try {
        const config = configFor(world, ids, 'per_quest');
        const catalog = world.file(simCatalog(sim, ids, 'incremental'));
        const startedAt = Date.now();
        const run = await read(config, catalog);
        const readSeconds = (Date.now() - startedAt) / 1000;
        expectScaled(sim, ids, run, perQuestRows(sim, ids, records(run.messages)), {layout: 'per_quest', readSeconds});
      } finally {
        await world.close();
      }
    },
    300_000
  );

  test.concurrent(
    'combined: discover makes no export; the read puts every row once into responses, with the same bounds',
    async () => {
      const ids = questIds('5ca1e002');
      const world = await manyQuests(ids);
      const {sim} = world;
      try {
        const config = configFor(world, ids, 'combined');
        let startedAt = Date.now();
        const found = await world.run(['discover', '--config', config]);
        const discoverSeconds = (Date.now() - startedAt) / 1000;
        expect({code: found.code, stderr: found.stderr}).toEqual({code: 0, stderr: ''});
        // It may prove the credentials with a token; it asks the export API nothing.
        expect(sim.exports()).toEqual([]);
        expect(sim.requests().filter((r) => r.path.includes('/v1/'))).toEqual([]);
        const catalog = world.file(configuredCatalog(found.messages, 'incremental'));

        startedAt = Date.now();
        const run = await read(config, catalog);
        const readSeconds = (Date.now() - startedAt) / 1000;
        const rows = combinedRows(records(run.messages).filter((r) => r.record.stream === 'responses'));
        expectScaled(
          sim,
          ids,
          run,
          rows,
          {layout: 'combined', readSeconds, discoverSeconds},
          discovered(found.messages).map((s) => s.name)
        );
        // The one STATE of responses holds every quest's cursor.
        expect(Object.keys(questEntries(stateFile(run.messages))).sort()).toEqual([...ids].sort());
      } finally {
        await world.close();
      }
    },
    300_000
  );
});
