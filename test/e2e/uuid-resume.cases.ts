// Resume within a window with UUID Response IDs (issue 27), in-process: every first download is cut
// at 60 %, so each window's file is read again and its rows met against the identities spilled to
// disk; the read is stopped after a window read so, and resumed from its last STATE. What the first
// attempt committed and all the second emitted are every row exactly once. (Memory at 1M and 3M rows
// per export is measured by `npm run bench`, not here.)

import {committed, records, repeated, RunResult} from '../helpers/connector';
import {simCatalog, stopThenResume, streamOf, withWorld} from '../helpers/fixtures';

const DAY = 86_400_000;
const Q = '0a1d0000-0000-4000-8000-000000000027';

const redownloads = (run: RunResult): number =>
  run.messages.filter((m) => m.type === 'LOG' && /downloading it again, skipping the \d+ rows/.test(JSON.stringify(m)))
    .length;

test('UUID ids, cut downloads read again, a stop inside the backfill and a resume: every row exactly once', async () => {
  await withWorld(
    {
      seed: 27,
      exportDurationMs: 10,
      faults: {cutFirstDownloadAt: 0.6},
      quests: [
        {
          id: Q,
          rows: 3000,
          columns: 4,
          responseIds: 'uuid',
          firstCreatedAt: new Date(Date.now() - 3 * DAY).toISOString(),
        },
      ],
    },
    async (world) => {
      const {sim} = world;
      const truth = sim.groundTruth(Q).rows.map((r) => r[0]);
      expect(
        truth.every((id) => /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(id))
      ).toBe(true);
      let rows = 0;
      let readAgain = false;
      const {first, second} = await stopThenResume(world, {
        config: world.config({start_date: new Date(Date.now() - 4 * DAY).toISOString(), window_days: 1}),
        catalog: world.file(simCatalog(sim, [Q], 'incremental')),
        // The first STATE after a window's file was read again: that window committed, the next ones to come.
        stopAt: (m) => {
          if (m.type === 'RECORD') rows++;
          if (m.type === 'LOG' && /downloading it again/.test(JSON.stringify(m))) readAgain = true;
          return m.type === 'STATE' && readAgain && rows > 0;
        },
        signal: 'SIGTERM',
      });
      const delivered = [...committed(first.messages), ...records(second.messages)]
        .filter((r) => r.record.stream === streamOf(Q))
        .map((r) => String(r.record.data.response_id));
      const deliveredOnce = new Set(delivered);
      expect({
        first: committed(first.messages).length > 0,
        redownloads: redownloads(first) + redownloads(second) > 0,
        second: second.code,
        duplicates: repeated(delivered),
        missing: truth.filter((id) => !deliveredOnce.has(id)).length,
      }).toEqual({first: true, redownloads: true, second: 0, duplicates: [], missing: 0});
    }
  );
});
