import {AirbyteLogLevel, SyncMode} from 'faros-airbyte-cdk';
import {PassThrough} from 'stream';

import {parseConfig} from '../../src/config';
import {ExportScheduler} from '../../src/export-scheduler';
import {ConnectorLogger} from '../../src/logger';
import {MessageWriter} from '../../src/output';
import {defaultEnvironment, QuestbackSource} from '../../src/source';
import {formatUtcTimestamp} from '../../src/windows';
import {simConfig} from '../helpers/fixtures';
import {startSimulator} from '../simulator';

test("the kit's per-record interface (readRecords over window slices) yields every row once, as objects", async () => {
  const id = 'eeeeeeee-0000-4000-8000-000000000001';
  const sim = await startSimulator({
    seed: 3,
    exportDurationMs: 50,
    quests: [{id, rows: 30, firstCreatedAt: new Date(Date.now() - 20 * 86_400_000).toISOString()}],
  });
  try {
    const logger = new ConnectorLogger(new MessageWriter(new PassThrough()), AirbyteLogLevel.ERROR);
    const source = new QuestbackSource(logger, defaultEnvironment());
    const config = parseConfig(simConfig(sim, {quest_ids: [id], window_days: 6}), Date.now());
    const connection = source.connect(config);
    const scheduler = new ExportScheduler(connection.exports, 2, logger);
    const stream = source.questStream(config, id, [], connection, scheduler);
    const windows = stream.windows(SyncMode.FULL_REFRESH, undefined, source.syncEnd(config));
    expect(windows.length).toBeGreaterThan(3);
    scheduler.enqueue(id, windows);
    const got: Record<string, unknown>[] = [];
    for (const w of windows) {
      for await (const record of stream.readRecords(SyncMode.FULL_REFRESH, undefined, {
        since: formatUtcTimestamp(w.since),
        until: formatUtcTimestamp(w.until),
      })) {
        got.push(record);
      }
    }
    const {header, rows} = sim.groundTruth(id);
    expect(got.map((r) => r['Response ID'])).toEqual(rows.map((row) => row[header.indexOf('Response ID')]));
    expect(got[0]._questback_quest_id).toBe(id);
  } finally {
    await sim.close();
  }
});
