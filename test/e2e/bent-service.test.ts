// Issue 24, against the simulator in-process: one quest failing mid-window among others in the
// combined layout, and a service that cuts window bounds to whole seconds. Each case with the exact
// rows of every attempt, the exit code and the message.

import {errorTraces, records, RunResult, stateFile, states} from '../helpers/connector';
import {questEntries, responses} from '../helpers/combined';
import {streamOf, withWorld} from '../helpers/fixtures';

const DAY = 86_400_000;
const QUESTS = ['b3e70000-0000-4000-8000-00000000000a', 'b3e70000-0000-4000-8000-00000000000b'];
const [A, B] = QUESTS;
const C = 'b3e70000-0000-4000-8000-00000000000c';
const D = 'b3e70000-0000-4000-8000-00000000000d';

const logs = (run: RunResult): string[] =>
  run.messages.filter((m) => m.type === 'LOG').map((m) => (m as unknown as {log: {message: string}}).log.message);

test('combined: a quest whose file breaks after 2 rows fails; the STATEs after it list those 2, and the next attempt sends exactly the rest', async () => {
  const first = Date.now() - 5 * DAY;
  await withWorld(
    {
      seed: 24,
      exportDurationMs: 30,
      // One rating column: no cell holds a line break, so the file's lines are its rows.
      quests: [A, B, C, D].map((id, i) => ({
        id,
        rows: 30 + i,
        columns: 1,
        firstCreatedAt: new Date(first).toISOString(),
      })),
    },
    async (world) => {
      const {sim} = world;
      const config = world.config({
        stream_layout: 'combined',
        start_date: new Date(first - 3_600_000).toISOString(),
        window_days: 1,
      });
      const catalog = await world.discoveredCatalog(config, 'incremental');
      let broken: string[] | undefined;
      // B's first download: the header and 2 rows, then (after they were read) a row with a cell too many.
      sim.on('download', async (ctx) => {
        if (ctx.questId !== B || broken) return ctx.next();
        const lines = ctx.csv().split('\r\n');
        broken = ctx
          .rows()
          .slice(0, 2)
          .map((r) => r[0]);
        ctx.res.writeHead(200, {'Content-Type': 'text/csv; charset=utf-8'});
        ctx.res.write(lines.slice(0, 3).join('\r\n') + '\r\n');
        await new Promise((resolve) => setTimeout(resolve, 200));
        ctx.res.end(`${lines[3]}|a cell too many\r\n`);
      });
      const args = ['read', '--config', config, '--catalog', catalog];
      const one = await world.run(args);
      expect(one.code).toBe(1);
      const trace = errorTraces(one.messages).map((t) => t.trace.error);
      expect(trace).toEqual([
        expect.objectContaining({
          failure_type: 'transient_error',
          message: expect.stringMatching(
            new RegExp(
              `^Stream responses: 1 of 4 quest\\(s\\) failed \\(${B}: The export of quest ${B} for window .* is not valid CSV: Wrong number of cells`
            )
          ),
        }),
      ]);
      expect(logs(one)).toContainEqual(
        expect.stringMatching(
          new RegExp(
            `^Stream responses: quest ${B} failed after emitting 2 rows of window .* that no STATE has committed yet; the stream's next STATE lists their ids, so the next sync skips them and sends the rest of the window\\.$`
          )
        )
      );
      const sentB = responses(one).filter((r) => r.quest_id === B);
      expect(sentB.map((r) => r.response_id)).toEqual(broken);
      // The others went on: every STATE after B's rows lists them (and commits them).
      const all = one.messages.filter((m) => m.type === 'RECORD' || m.type === 'STATE');
      const afterB = all.slice(all.findIndex((m) => m.type === 'RECORD' && responses([m as never])[0]?.quest_id === B));
      const later = states(afterB).filter((s) => s.state.stream.stream_descriptor.name === 'responses');
      expect(later.length).toBeGreaterThan(0);
      for (const s of later) {
        const entry = (s.state.stream.stream_state as {quests: Record<string, {emitted?: {keys: string[]}}>}).quests[B];
        expect(entry.emitted?.keys).toEqual(broken);
      }
      for (const q of [A, C, D]) {
        expect(
          responses(one)
            .filter((r) => r.quest_id === q)
            .map((r) => r.response_id)
        ).toEqual(sim.groundTruth(q).rows.map((r) => r[0]));
      }

      const two = await world.run([...args, '--state', world.file(stateFile(one.messages))]);
      expect(two.code).toBe(0);
      expect(responses(two).map((r) => [r.quest_id, r.response_id])).toEqual(
        sim
          .groundTruth(B)
          .rows.map((r) => [B, r[0]])
          .filter(([, id]) => !broken?.includes(id))
      );
      expect(questEntries(stateFile(two.messages))[B]).not.toHaveProperty('emitted');
    }
  );
});

test.each([['until'], ['both']] as const)(
  'a service that cuts the filter to whole seconds (%s): responses 500 ms around window ends are each emitted once',
  async (filterSeconds) => {
    const start = Math.floor((Date.now() - 5 * DAY) / 1000) * 1000;
    // The connector's windows end on whole seconds: since0 = start - 1 ms, the first window ends at
    // start + 1 day - 1 s. Before the fix they ended at start + k days - 1 ms.
    const end1 = start + DAY - 1000;
    const createdAt = [
      start + 3_600_000,
      end1 - 500,
      end1,
      end1 + 500,
      start + DAY - 501,
      start + DAY - 1,
      start + 2 * DAY - 1500,
      start + 2 * DAY - 501,
      start + 3 * DAY - 2,
    ].sort((a, b) => a - b);
    await withWorld(
      {seed: 25, exportDurationMs: 30, dialect: {filterSeconds}, quests: [{id: A, createdAt, columns: 2}]},
      async (world) => {
        const {sim} = world;
        const config = world.config({start_date: new Date(start).toISOString(), window_days: 1, quest_ids: [A]});
        const catalog = await world.discoveredCatalog(config, 'incremental');
        const run = await world.run(['read', '--config', config, '--catalog', catalog]);
        expect(run.code).toBe(0);
        const got = records(run.messages)
          .filter((r) => r.record.stream === streamOf(A))
          .map((r) => r.record.data.response_id as string);
        expect(got).toEqual(sim.groundTruth(A).rows.map((r) => r[0]));
        expect(got).toHaveLength(createdAt.length);
        // Every window the connector asked for ends on a whole second.
        const untils = sim.requests('create').map((r) => JSON.parse(r.body).filter.until as string);
        expect(untils.filter((u) => !u.endsWith(':00.000Z') && !/\.000Z$/.test(u))).toEqual([]);
      }
    );
  }
);
