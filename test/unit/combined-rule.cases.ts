// The exactly-once rule of a stream that holds several quests (stream_layout "combined"), as a
// property: a STATE commits every record of the stream written before it, so for ANY STATE of a read
// (with cut-offs, 410s, failed exports and splits on several quests at once, and a quest that fails
// mid-window while the others go on), the records before it plus a resumed read from it give every
// row exactly once, never a row twice.

import {DAY_MS} from '../../src/core/time';
import {StreamCheckpoints} from '../../src/sync/state/checkpoints';
import {QuestSync} from '../../src/sync/windows/quest-sync';
import {FingerprintKey} from '../../src/sync/windows/resume';
import {ExportSlots} from '../../src/sync/exports/export-slots';
import {cursorOf, densityOf, emittedOf, exportSeal, recordedExportsOf} from '../../src/sync/state/stream-state';
import {combinedState, questStatesOf} from '../../src/sync/streams/quests-stream';
import {QuestAnswers} from '../../src/sync/streams/responses-stream';
import {FakeExportApi, prng, quietLogger, recordingOutput, virtualRuntime} from '../helpers/fake-api';
import {parsedConfig} from '../helpers/fixtures';

const NOW = Date.parse('2026-11-26T00:00:00.000Z');
const STREAM = {name: 'responses'};

/** Reads every quest into the one stream, each from its entry in `state` (or `from`); resolves when all are done. */
async function readAll(
  api: FakeExportApi,
  questIds: string[],
  from: number,
  state: unknown,
  targetRows: number,
  seed: number
) {
  const rt = virtualRuntime(NOW);
  const output = recordingOutput();
  const previous = state === undefined ? {} : questStatesOf(state, STREAM.name);
  const stream = new StreamCheckpoints(output, STREAM, combinedState(previous));
  const slots = new ExportSlots(1 + (seed % 4));
  const errors: unknown[] = [];
  await Promise.all(
    questIds.map(async (questId) => {
      const own = previous[questId];
      const cursor = cursorOf(own, questId) ?? from;
      const density = densityOf(own);
      const emitted = emittedOf(own, questId);
      const checkpoints = stream.quest(questId, {
        cursor,
        ...(density ? {density} : {}),
        exports: recordedExportsOf(own),
        ...(emitted ? {emitted} : {}),
      });
      try {
        await new QuestSync(
          {
            api,
            slots,
            runtime: rt,
            logger: quietLogger(),
            output,
            sizing: {targetRows},
            exportTimeoutMs: 60 * 60_000,
            stallBudgetMs: 5 * 60_000,
            fingerprint: 'f',
            resumeKey: new FingerprintKey(Buffer.from('test')),
            csv: {separator: '|'},
          },
          {
            questId,
            stream: STREAM,
            records: new QuestAnswers(STREAM, questId, parsedConfig(), quietLogger()),
            from: cursor,
            end: NOW,
            ...(density ? {density} : {}),
          },
          checkpoints,
          new AbortController().signal
        ).run();
      } catch (err) {
        errors.push(err);
      }
    })
  );
  // The response id of each record, in the order written (records() keeps the data's values in order).
  const ids = (output.recorded.rows.get(STREAM.name) ?? []).map((r) => r[1]);
  return {ids, states: output.recorded.states, errors};
}

test('property: the records before any STATE of a combined stream, plus a read resumed from it, are every row exactly once', async () => {
  let checked = 0;
  let setbacks = 0;
  let failures = 0;
  for (let seed = 1; seed <= 12; seed++) {
    const random = prng(seed * 7717);
    const from = NOW - Math.floor((5 + random() * 200) * DAY_MS);
    const questIds = ['aaaa', 'bbbb', 'cccc', 'dddd'].slice(0, 2 + Math.floor(random() * 3));
    const data = new Map<string, number[]>();
    for (const q of questIds) {
      const n = Math.floor(random() * 600);
      // Few distinct moments: ties that re-read files list in other orders.
      const moments = Array.from(
        {length: 1 + Math.floor(random() * 40)},
        () => from + 1 + Math.floor(random() * (NOW - from - 60_000))
      );
      data.set(
        q,
        Array.from({length: n}, () => moments[Math.floor(random() * moments.length)]).sort((a, b) => a - b)
      );
    }
    let faulty = true;
    const rand = prng(seed * 31);
    const shuffle = (rows: string[][]): string[][] => [...rows].sort(() => rand() - 0.5);
    const api = new FakeExportApi(data, virtualRuntime(NOW), {
      outcome: () => (faulty && rand() < 0.08 ? 'error' : 'ok'),
      cutAfter: (_e, n, size) => (faulty && n <= 3 && rand() < 0.5 ? Math.floor(size * rand()) : undefined),
      gone: (_e, n) => faulty && n > 1 && rand() < 0.1,
      alter: (e, n, rows) => {
        const listed = n > 1 ? shuffle(rows) : rows;
        // In every third seed one quest's file may break mid-way (a row with a cell too many), failing that quest.
        if (!(faulty && e.questId === breaking && listed.length > 2 && rand() < 0.3)) return listed;
        const at = Math.floor(rand() * listed.length);
        return listed.map((r, i) => (i === at ? [...r, 'extra cell'] : r));
      },
    });
    const breaking = seed % 3 === 0 ? questIds[1] : undefined;
    const targetRows = 40 + Math.floor(random() * 200);
    const first = await readAll(api, questIds, from, undefined, targetRows, seed);
    const truth = questIds.flatMap((q) => api.rowsOf(q).map((r) => r[0])).sort();
    if (first.errors.length) {
      failures++;
      expect(new Set(first.ids).size).toBe(first.ids.length);
    } else {
      expect([...first.ids].sort()).toEqual(truth);
    }
    setbacks += api.exports.filter((e) => e.downloads > 1 || e.outcome !== 'ok').length;
    // Resume from a handful of the read's STATEs, the faults off so that every resumed read ends.
    faulty = false;
    const picks = [...new Set(Array.from({length: 4}, () => Math.floor(random() * first.states.length)))];
    for (const i of picks) {
      const s = first.states[i];
      const committed = first.ids.slice(0, s.rowsSoFar);
      const resumed = await readAll(api, questIds, from, s.state, targetRows, seed);
      expect(resumed.errors).toEqual([]);
      const before = new Set(committed);
      const again = resumed.ids.filter((id) => before.has(id));
      expect({seed, state: i, twice: again}).toEqual({seed, state: i, twice: []});
      expect([...committed, ...resumed.ids].sort()).toEqual(truth);
      checked++;
    }
    faulty = true;
  }
  expect(checked).toBeGreaterThan(20);
  expect(setbacks).toBeGreaterThan(10);
  expect(failures).toBeGreaterThan(1);
});

/**
 * A service of quests with `sizes[i]` rows each, created at `at(row)`, whose quest bbbb lists row `row` with a cell
 * too many while `fault.on`.
 */
function brokenAt(questIds: string[], sizes: number[], at: (r: number) => number, row: number) {
  const fault = {on: true};
  const data = new Map(questIds.map((q, i) => [q, Array.from({length: sizes[i]}, (_, r) => at(r))]));
  const api = new FakeExportApi(data, virtualRuntime(NOW), {
    alter: (e, _n, rows) =>
      fault.on && e.questId === 'bbbb' ? rows.map((r, i) => (i === row ? [...r, 'extra cell'] : r)) : rows,
  });
  return {api, fault};
}

test('a quest that fails mid-window: the STATEs after it list the rows it emitted, and the next read skips exactly those', async () => {
  const from = NOW - 6 * DAY_MS;
  const questIds = ['aaaa', 'bbbb', 'cccc', 'dddd'];
  // Quest bbbb's file breaks: its row 8,500 has a cell too many, which fails its window after the rows before it.
  const {api, fault} = brokenAt(questIds, [5, 9_000, 7, 8], (r) => from + (r + 1) * 30_000, 8_500);
  const first = await readAll(api, questIds, from, undefined, 1000, 1);
  expect(first.errors.map(String)).toEqual([expect.stringContaining('The export of quest bbbb for window')]);
  const bbbb = first.ids.filter((id) => id.startsWith('bbbb'));
  const all = api.rowsOf('bbbb').map((r) => r[0]);
  // The rows of the batches (256 KiB each) before the broken row: a prefix of the file.
  expect(bbbb.length).toBeGreaterThan(0);
  expect(bbbb).toEqual(all.slice(0, bbbb.length));
  const last = first.states[first.states.length - 1];
  // The last STATE comes after bbbb's rows: it commits them, and lists them.
  expect(last.rowsSoFar).toBe(first.ids.length);
  expect(first.ids.length).toBe(5 + 7 + 8 + bbbb.length);
  const quests = (last.state as {quests: Record<string, {cursor: string; emitted?: unknown}>}).quests;
  expect(quests.bbbb).toEqual({
    cursor: new Date(from).toISOString(),
    cursor_field: ['_questback_window_end'],
    density: expect.anything(),
    exports: [
      {
        export_id: 'e2',
        since: new Date(from).toISOString(),
        until: new Date(NOW).toISOString(),
        settings: exportSeal('f', 'bbbb', 'e2'),
      },
    ],
    emitted: {
      until: new Date(NOW).toISOString(),
      keys: bbbb,
      header: expect.stringMatching(/^[\w-]{11}$/),
      fingerprints: bbbb.map(() => expect.stringMatching(/^[\w-]{11}$/)),
    },
  });
  fault.on = false;
  const second = await readAll(api, questIds, from, last.state, 1000, 1);
  expect(second.errors).toEqual([]);
  expect(second.ids).toEqual(all.slice(bbbb.length));
  const after = (second.states[second.states.length - 1].state as {quests: Record<string, object>}).quests;
  expect(after.bbbb).not.toHaveProperty('emitted');
});

test('a quest that fails after more rows than a STATE may list: the next STATE lists the first that fit, the STATEs of the others go on, and only the rest come again', async () => {
  const from = NOW - 6 * DAY_MS;
  const questIds = ['aaaa', 'bbbb', 'cccc'];
  const {api, fault} = brokenAt(questIds, [30, 28_000, 30], (r) => from + 1 + r * 10_000, 27_000);
  const first = await readAll(api, questIds, from, undefined, 100_000, 1);
  expect(first.errors.map(String)).toEqual([expect.stringContaining('The export of quest bbbb for window')]);
  const sentB = first.ids.filter((id) => id.startsWith('bbbb'));
  // bbbb emitted over 21,000 ids (over the 256 KiB a STATE may list); others' rows came after.
  expect(sentB.length).toBeGreaterThan(21_000);
  const lastOfB = first.ids.lastIndexOf(sentB[sentB.length - 1]);
  expect(first.ids.length).toBeGreaterThan(lastOfB + 1);
  // The last STATE commits every record, the others' after bbbb's included, and lists bbbb's first rows.
  const last = first.states[first.states.length - 1];
  expect(last.rowsSoFar).toBe(first.ids.length);
  const listed = (last.state as {quests: Record<string, {emitted: {keys: string[]}}>}).quests.bbbb.emitted.keys;
  expect(listed.length).toBeGreaterThan(5_000);
  expect(listed).toEqual(sentB.slice(0, listed.length));
  fault.on = false;
  const second = await readAll(api, questIds, from, last.state, 100_000, 1);
  expect(second.errors).toEqual([]);
  // Sent twice: exactly bbbb's rows past those listed; nothing lost.
  const before = new Set(first.ids);
  expect(second.ids.filter((id) => before.has(id))).toEqual(sentB.slice(listed.length));
  expect([...new Set([...first.ids, ...second.ids])].sort()).toEqual(
    questIds.flatMap((q) => api.rowsOf(q).map((r) => r[0])).sort()
  );
});
