// Created, per row (issue 24): the connector in-process against the simulator. Times in any form
// the connector can read come out as RFC 3339 in UTC with the precision written; a Created it cannot
// read is null with its meta.changes entry and one warning per window, by shape only; and a service
// that ignores since/until cannot make a row go out twice: a row outside its export's window is
// not emitted with it, and each window says how many it left out, once.

import {records, repeated, RunResult, warnings} from '../helpers/connector';
import {responses} from '../helpers/combined';
import {streamOf, withWorld, World} from '../helpers/fixtures';
import {DialectOptions} from '../../simulator';
import {responseRecords} from '../helpers/streams';

const DAY = 86_400_000;
const Q = 'c4ea7ed0-0000-4000-8000-000000000024';

/** A world with one quest of 60 rows over the last 20 days, speaking `dialect`. */
const world = (dialect: DialectOptions, fn: (w: World) => Promise<void>): Promise<void> =>
  withWorld(
    {
      seed: 24,
      exportDurationMs: 10,
      dialect,
      quests: [{id: Q, rows: 60, columns: 3, firstCreatedAt: new Date(Date.now() - 20 * DAY).toISOString()}],
    },
    fn
  );

/** A read of `layout` in windows of 5 days (a start_date 25 days back: several windows). */
async function read(w: World, layout: 'per_quest' | 'combined'): Promise<RunResult> {
  const config = w.config({
    stream_layout: layout,
    window_days: 5,
    start_date: new Date(Date.now() - 25 * DAY).toISOString(),
  });
  const run = await w.run(['read', '--config', config, '--catalog', await w.discoveredCatalog(config, 'incremental')]);
  expect({code: run.code, invalid: run.invalid}).toEqual({code: 0, invalid: []});
  return run;
}

describe('Created, per row', () => {
  test.concurrent.each([
    ['an offset', 'offset' as const, (iso: string) => iso],
    ['seven fractional digits', 'iso-7' as const, (iso: string) => iso.replace('Z', '0000Z')],
  ])('written with %s: RFC 3339 in UTC, with the precision written, in both layouts', async (_, created, want) => {
    await world({created}, async (w) => {
      const truth = w.sim.groundTruth(Q);
      const at = truth.header.indexOf('Created');
      const expected = Object.fromEntries(
        truth.rows.map((r) => [r[0], want(new Date(Date.parse(r[at])).toISOString())])
      );
      const perQuest = await read(w, 'per_quest');
      const got = records(perQuest.messages)
        .filter((r) => r.record.stream === streamOf(Q))
        .map((r) => [r.record.data.response_id, r.record.data.created]);
      expect(Object.fromEntries(got)).toEqual(expected);
      const combined = await read(w, 'combined');
      expect(Object.fromEntries(responses(combined).map((r) => [r.response_id, r.created]))).toEqual(expected);
      expect(warnings(combined.messages).filter((m) => /Created/.test(m))).toEqual([]);
    });
  });

  test.concurrent(
    'a Created that is not a time: null, its meta.changes entry, one warning per window by shape',
    async () => {
      await world({created: 'month-first'}, async (w) => {
        const run = await read(w, 'combined');
        const mine = records(run.messages).filter((r) => r.record.stream === 'responses');
        expect(mine.length).toBe(60);
        const meta = mine.map((r) => [(r.record.data as {created: unknown}).created, r.record.meta]);
        expect(new Set(meta.map((m) => JSON.stringify(m)))).toEqual(
          new Set([
            JSON.stringify([
              null,
              {changes: [{field: 'created', change: 'NULLED', reason: 'SOURCE_SERIALIZATION_ERROR'}]},
            ]),
          ])
        );
        // The answers keep the text as exported.
        const truth = new Map(w.sim.groundTruth(Q).rows.map((r) => [r[0], r[1]]));
        expect(responses(run).filter((r) => r.answers.Created !== truth.get(r.response_id))).toEqual([]);
        const said = warnings(run.messages).filter((m) => /cannot read as a time/.test(m));
        const windows = new Set(
          mine.map((r) => (r.record.data as {_questback_window_end: string})._questback_window_end)
        );
        expect(said.length).toBe(windows.size);
        for (const m of said) expect(m).toMatch(/^Quest c4ea7ed0-.*written like `99\/99\/9999 99:99:99`/);
        // Never a value: no Created of the export appears in a warning.
        expect(said.filter((m) => [...truth.values()].some((v) => m.includes(v)))).toEqual([]);
      });
    }
  );

  test.concurrent('a service that ignores since/until: every row once, each window says what it left out', async () => {
    await world({ignoreWindow: true}, async (w) => {
      for (const layout of ['per_quest', 'combined'] as const) {
        const run = await read(w, layout);
        const mine = responseRecords(run.messages);
        const ids = mine.map((r) => String(r.record.data.response_id));
        expect({layout, duplicates: repeated(ids), rows: new Set(ids).size}).toEqual({
          layout,
          duplicates: [],
          rows: 60,
        });
        const said = warnings(run.messages).filter((m) => /outside the window asked for/.test(m));
        // Every export held all 60 rows: each window left out those of the others, and said so once.
        const windows = new Set(mine.map((r) => String(r.record.data._questback_window_end)));
        expect(said.length).toBeGreaterThanOrEqual(windows.size);
        expect(new Set(said).size).toBe(said.length);
      }
    });
  });

  test.concurrent(
    "a Created without a zone in local time (UTC+2): no row lost at the windows' ends, none twice",
    async () => {
      await world({created: 'no-zone'}, async (w) => {
        const run = await read(w, 'per_quest');
        const ids = records(run.messages)
          .filter((r) => r.record.stream === streamOf(Q))
          .map((r) => String(r.record.data.response_id));
        expect({duplicates: repeated(ids), rows: new Set(ids).size}).toEqual({duplicates: [], rows: 60});
        expect(warnings(run.messages).filter((m) => /outside the window asked for/.test(m))).toEqual([]);
      });
    }
  );
});
