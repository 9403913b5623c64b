// Issue 33, point 3: a sensitive column renamed in the survey between two syncs (the simulator's
// renameColumn). The state remembers which sensitive_columns entries protected a column of which
// quest; in every layout the next sync fails that quest with a config_error naming the entry and
// the header texts that look like it, and sends none of its values, while the other quest syncs.
// An entry that never matched a quest stays a note, as before. The state holds entries of the
// config only: no header text, no value.

import {Simulator} from '../../simulator';
import {errorTraces, logLines, records, RunResult, stateFile, statusesByStream} from '../helpers/connector';
import {configuredCatalog, streamOf, withWorld, World} from '../helpers/fixtures';
import {responseRecords} from '../helpers/streams';

const EDITED = '5e0c0003-0000-4000-8000-000000000001';
const STEADY = '5e0c0003-0000-4000-8000-000000000002';
const HEADER = ['Response ID', 'Created', 'E-mail', 'Phone', 'Q1 Comment'];
const DAY = 86_400_000;

function rowsOf(base: number): string[][] {
  return [0, 1, 2].map((i) => [
    `R-${base + i}`,
    new Date(Date.now() - (3 - i * 0.5 - base / 10_000) * DAY).toISOString(),
    `person.${base + i}@example.com`,
    `+47 ${base + i} 12 345`,
    `comment ${base + i}`,
  ]);
}

const OPTIONS = {
  seed: 3,
  exportDurationMs: 10,
  files: 'memory' as const,
  quests: [
    {id: EDITED, table: {header: HEADER, rows: rowsOf(100)}},
    {id: STEADY, table: {header: HEADER, rows: rowsOf(500)}},
  ],
};

const SENSITIVE = {
  sensitive_columns: [
    {column: 'E-mail', action: 'hash'},
    {column: 'phone', action: 'drop'},
    // In no quest's export: a note, never an error.
    {column: 'Mobile', action: 'drop'},
  ],
  hash_salt: 'a salt of sixteen characters or more',
};

/** The e-mails and phones the edited quest has: none may leave the connector after the rename. */
const valuesOf = (sim: Simulator, questId: string): string[] =>
  sim.groundTruth(questId).rows.flatMap((r) => [r[2], r[3]]);

const questOf = (data: Record<string, unknown>): string => String(data._questback_quest_id ?? data.quest_id);

async function sync(world: World, layout: string, catalog: string, state?: unknown): Promise<RunResult> {
  // lookback_days: the second sync reads the rows again, so the edited quest's file has rows.
  const config = world.config({stream_layout: layout, ...SENSITIVE, lookback_days: 7});
  const args = ['read', '--config', config, '--catalog', catalog];
  return world.run(state ? [...args, '--state', world.file(state)] : args);
}

describe('a sensitive column renamed in the survey between syncs', () => {
  test.each(['per_quest', 'combined', 'long'])(
    '%s: the next sync fails that quest with a config_error naming the entry and its look-alikes; nothing of it leaves; the other quest syncs',
    async (layout) => {
      await withWorld(OPTIONS, async (world) => {
        const discover = await world.run(['discover', '--config', world.config({stream_layout: layout, ...SENSITIVE})]);
        const catalog = world.file(configuredCatalog(discover.messages, 'incremental'));
        const first = await sync(world, layout, catalog);
        expect(first.code).toBe(0);
        const state = stateFile(first.messages);
        // The state names the config's entries that protected a column of each quest, nothing else.
        const remembered = JSON.stringify(state).match(/"sensitive_matched":\[[^\]]*\]/g);
        expect(new Set(remembered)).toEqual(new Set(['"sensitive_matched":["E-mail","phone"]']));
        // The entry that matches nothing is said as before, not an error.
        expect(logLines(first.messages).map((l) => l.message)).toEqual(
          expect.arrayContaining([expect.stringMatching(/sensitive_columns names "Mobile", which match no column/)])
        );

        world.sim.renameColumn(EDITED, 'E-mail', 'E-mail address');
        world.sim.renameColumn(EDITED, 'Phone', 'Phone (mobile)');
        const second = await sync(world, layout, catalog, state);
        expect(second.code).toBe(1);
        const errors = errorTraces(second.messages).map((t) => t.trace.error);
        expect(errors).toEqual([
          expect.objectContaining({
            failure_type: 'config_error',
            message: expect.stringContaining(
              `Quest ${EDITED}: sensitive_columns entries "E-mail" (header texts that look like it: "E-mail address"), "phone" (header texts that look like it: "Phone (mobile)") matched a column of this quest in an earlier sync and match none of its export now`
            ),
          }),
        ]);
        const data = responseRecords(second.messages);
        expect(new Set(data.map((r) => questOf(r.record.data)))).toEqual(new Set([STEADY]));
        if (layout === 'per_quest') {
          expect(statusesByStream(second.messages)[streamOf(EDITED)].at(-1)).toBe('INCOMPLETE');
          expect(statusesByStream(second.messages)[streamOf(STEADY)].at(-1)).toBe('COMPLETE');
        }
        const out = second.stdout + second.stderr;
        expect(valuesOf(world.sim, EDITED).filter((v) => out.includes(v))).toEqual([]);
        // The edited quest's state keeps what it remembered: the next sync fails the same way until the config changes.
        const again = await sync(world, layout, catalog, stateFile(second.messages, state));
        expect(errorTraces(again.messages).map((t) => t.trace.error?.failure_type)).toEqual(['config_error']);

        // The entries follow the survey: the next sync reads the quest, protected.
        const fixed = world.config({
          stream_layout: layout,
          ...SENSITIVE,
          sensitive_columns: [
            {column: 'E-mail address', action: 'hash'},
            {column: 'Phone (mobile)', action: 'drop'},
          ],
          lookback_days: 7,
        });
        const after = await world.run([
          'read',
          '--config',
          fixed,
          '--catalog',
          catalog,
          '--state',
          world.file(stateFile(again.messages, state)),
        ]);
        // (per_quest: the catalog from before the rename lacks the renamed columns, a warning says so.)
        expect(errorTraces(after.messages).map((t) => t.trace.error?.message)).toEqual([]);
        const out2 = after.stdout + after.stderr;
        expect(valuesOf(world.sim, EDITED).filter((v) => out2.includes(v))).toEqual([]);
        expect(records(after.messages).some((r) => questOf(r.record.data) === EDITED)).toBe(true);
      });
    }
  );
});
