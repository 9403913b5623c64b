// Issue 33, point 1: a file whose first line is not a header. The simulator's `no-header` corruption
// serves every export of a quest without its header row, so the first respondent's answers come
// first. In every layout (per_quest, combined `responses`, long `answers`, and the `columns` stream
// when it samples the quest itself), that quest fails closed with an error that quotes no cell,
// while the other quest still syncs; no cell of the headerless quest is anywhere in the output
// (catalog, logs, traces, states, records), in any form a value could travel in.

import {Simulator} from '../../simulator';
import {errorTraces, records, RunResult, statusesByStream} from '../helpers/connector';
import {configuredCatalog, streamOf, World, withWorld} from '../helpers/fixtures';
import {responseRecords} from '../helpers/streams';

const GOOD = '7a0c0001-0000-4000-8000-000000000001';
const HEADLESS = '7a0c0001-0000-4000-8000-000000000002';
const HEADER = ['Response ID', 'Created', 'E-mail', 'Phone', 'Q1 Comment'];
const DAY = 86_400_000;

function rowsOf(base: number, emails: string[]): string[][] {
  return emails.map((email, i) => [
    `R-${base + i}`,
    new Date(Date.now() - (3 - i * 0.5 - base / 10_000) * DAY).toISOString(),
    email,
    `+47 ${base + i} 55 555`,
    `comment number ${base + i} in words`,
  ]);
}

const OPTIONS = {
  seed: 33,
  exportDurationMs: 10,
  files: 'memory' as const,
  quests: [
    {id: GOOD, table: {header: HEADER, rows: rowsOf(100, ['good.one@example.com', 'good.two@example.com'])}},
    {
      id: HEADLESS,
      corruption: 'no-header' as const,
      table: {header: HEADER, rows: rowsOf(900, ['first.respondent@example.com', 'second.respondent@example.org'])},
    },
  ],
};

const SENSITIVE = {
  sensitive_columns: [
    {column: 'E-mail', action: 'hash'},
    {column: 'Phone', action: 'drop'},
  ],
  hash_salt: 'a salt of sixteen characters or more',
};

/** Every form a value could travel in: as is, JSON-escaped, URL-encoded, base64, hex. */
function forms(value: string): string[] {
  const bytes = Buffer.from(value, 'utf8');
  return [
    value,
    JSON.stringify(value).slice(1, -1),
    encodeURIComponent(value),
    bytes.toString('base64').replace(/=+$/, ''),
    bytes.toString('base64url'),
    bytes.toString('hex'),
  ];
}

/** The cells of the headerless quest (its Created times and ids too: no cell may become a name or a line). */
const headlessCells = (sim: Simulator): string[] => [...new Set(sim.groundTruth(HEADLESS).rows.flat())];

function leaks(sim: Simulator, run: RunResult): string[] {
  const out = run.stdout + run.stderr;
  return headlessCells(sim).filter((cell) => forms(cell).some((form) => out.includes(form)));
}

const headerless =
  /Quest 7a0c0001-0000-4000-8000-000000000002: the export of window .* has no header row: its first line has neither a Response ID nor a Created column/;

/** The catalog of discover for `quests` in `layout` (the headerless quest's per_quest stream built as the simulator's header names it). */
async function catalogFor(world: World, layout: string, streams: (name: string) => boolean): Promise<string> {
  const config = world.config({stream_layout: layout, ...SENSITIVE, quest_ids: [GOOD]});
  const discover = await world.run(['discover', '--config', config]);
  expect(discover.code).toBe(0);
  const catalog = configuredCatalog(discover.messages, 'incremental') as {streams: {stream: {name: string}}[]};
  if (layout === 'per_quest') {
    // The headerless quest's stream as a discover of its true header would list it.
    const good = catalog.streams.find((s) => s.stream.name === streamOf(GOOD));
    catalog.streams.push(JSON.parse(JSON.stringify(good).split(streamOf(GOOD)).join(streamOf(HEADLESS))));
  }
  catalog.streams = catalog.streams.filter((s) => streams(s.stream.name));
  return world.file(catalog);
}

describe('a file whose first line is not a header', () => {
  test('discover (per_quest) fails naming the quest, quoting no cell, with the transient type', async () => {
    await withWorld(OPTIONS, async (world) => {
      const config = world.config({stream_layout: 'per_quest', ...SENSITIVE});
      const run = await world.run(['discover', '--config', config]);
      expect(run.code).not.toBe(0);
      expect(run.messages.some((m) => m.type === 'CATALOG')).toBe(false);
      const [error] = errorTraces(run.messages);
      expect(error.trace.error?.failure_type).toBe('transient_error');
      expect(error.trace.error?.message).toMatch(
        /Could not learn the columns of quest 7a0c0001-.*-000000000002: .*has no header row/
      );
      expect(leaks(world.sim, run)).toEqual([]);
    });
  });

  test.each(['per_quest', 'combined', 'long'])(
    '%s read: the headerless quest fails closed, the other syncs, and no cell of it is in any output',
    async (layout) => {
      await withWorld(OPTIONS, async (world) => {
        const config = world.config({stream_layout: layout, ...SENSITIVE, quest_ids: [GOOD, HEADLESS]});
        const run = await world.run([
          'read',
          '--config',
          config,
          '--catalog',
          await catalogFor(world, layout, () => true),
        ]);
        expect(run.code).not.toBe(0);
        const data = responseRecords(run.messages);
        const quests = new Set(data.map((r) => String(r.record.data._questback_quest_id ?? r.record.data.quest_id)));
        expect([...quests]).toEqual([GOOD]);
        const responses = new Set(data.map((r) => String(r.record.data.response_id)));
        expect([...responses].sort()).toEqual(['R-100', 'R-101']);
        const errors = errorTraces(run.messages).map((t) => t.trace.error);
        expect(errors).toEqual([
          expect.objectContaining({failure_type: 'transient_error', message: expect.stringMatching(headerless)}),
        ]);
        const statuses = statusesByStream(run.messages);
        const failed = layout === 'per_quest' ? streamOf(HEADLESS) : layout === 'combined' ? 'responses' : 'answers';
        expect(statuses[failed].at(-1)).toBe('INCOMPLETE');
        if (layout === 'per_quest') expect(statuses[streamOf(GOOD)].at(-1)).toBe('COMPLETE');
        // The columns stream lists the good quest only: the headerless one's first line is no header.
        const columns = records(run.messages).filter((r) => r.record.stream === 'columns');
        expect(new Set(columns.map((r) => r.record.data.quest_id))).toEqual(new Set([GOOD]));
        expect(leaks(world.sim, run)).toEqual([]);
      });
    }
  );

  test.each(['per_quest', 'combined', 'long'])(
    '%s: the columns stream sampling the headerless quest itself fails for it, quoting no cell',
    async (layout) => {
      await withWorld(OPTIONS, async (world) => {
        const config = world.config({stream_layout: layout, ...SENSITIVE, quest_ids: [GOOD, HEADLESS]});
        const catalog = await catalogFor(world, layout, (name) => name === 'columns' || name === streamOf(GOOD));
        const run = await world.run(['read', '--config', config, '--catalog', catalog]);
        expect(run.code).not.toBe(0);
        expect(statusesByStream(run.messages).columns.at(-1)).toBe('INCOMPLETE');
        if (layout === 'per_quest') {
          expect(statusesByStream(run.messages)[streamOf(GOOD)].at(-1)).toBe('COMPLETE');
          expect(records(run.messages).filter((r) => r.record.stream === streamOf(GOOD)).length).toBe(2);
        }
        const errors = errorTraces(run.messages).map((t) => t.trace.error?.message);
        expect(errors).toEqual([expect.stringMatching(/has no header row/)]);
        expect(leaks(world.sim, run)).toEqual([]);
      });
    }
  );
});
