import {AirbyteConfiguredCatalog, AirbyteMessage, SyncMode} from 'faros-airbyte-cdk/lib/protocol';
import {AirbyteSource} from 'faros-airbyte-cdk/lib/sources/source';
import {AirbyteSourceBase} from 'faros-airbyte-cdk/lib/sources/source-base';

import {parseConfig} from '../../src/core/config';
import {systemRuntime} from '../../src/core/runtime';
import {QuestbackSource} from '../../src/index';
import {quietLogger} from '../helpers/fake-api';
import {simConfig, streamOf, withWorld} from '../helpers/fixtures';
import {isResponseStream} from '../helpers/streams';

const ID = 'eeeeeeee-0000-4000-8000-000000000001';

describe("the kit's entry points", () => {
  test('source.read, called as the kit calls it, runs the connector reader: every row once, statuses and a STATE', async () => {
    const options = {
      seed: 3,
      exportDurationMs: 50,
      quests: [{id: ID, rows: 30, firstCreatedAt: new Date(Date.now() - 20 * 86_400_000).toISOString()}],
    };
    await withWorld(options, async ({sim, runtime}) => {
      const source = new QuestbackSource(quietLogger(), {runtime, onSecret: () => undefined});
      const {config} = parseConfig(simConfig(sim, {quest_ids: [ID]}), Date.now());
      const catalog = (await source.discover(config)).catalog;
      const configured = {
        streams: catalog.streams.map((stream) => ({
          stream,
          // Each stream in the mode it declares (invitations reads in full refresh only).
          sync_mode: stream.supported_sync_modes?.includes(SyncMode.INCREMENTAL)
            ? SyncMode.INCREMENTAL
            : SyncMode.FULL_REFRESH,
          destination_sync_mode: 'append',
        })),
      } as unknown as AirbyteConfiguredCatalog;
      const messages: AirbyteMessage[] = [];
      for await (const message of source.read(config, {}, configured, {})) messages.push(message);
      const json = messages.map((m) => JSON.parse(JSON.stringify(m)));
      // Discover lists the quest's stream first, then the streams every layout has (columns, invitations); all are read.
      const names = catalog.streams.map((s) => s.name);
      expect(names.filter(isResponseStream)).toEqual([streamOf(ID)]);
      expect(names[0]).toBe(streamOf(ID));
      expect(names).toEqual(expect.arrayContaining(['columns', 'invitations']));
      const ofStream = (name: string, type: 'RECORD' | 'STATE') =>
        json.filter((m) => m.type === type && (m.record?.stream ?? m.state?.stream?.stream_descriptor?.name) === name);
      const {header, rows} = sim.groundTruth(ID);
      expect(ofStream(names[0], 'RECORD').map((m) => m.record.data.response_id)).toEqual(
        rows.map((row) => row[header.indexOf('Response ID')])
      );
      expect(ofStream('columns', 'RECORD').map((m) => m.record.data.header)).toEqual(header);
      for (const name of names) {
        const statuses = json
          .filter((m) => m.trace?.type === 'STREAM_STATUS' && m.trace.stream_status.stream_descriptor.name === name)
          .map((m) => m.trace.stream_status.status);
        expect({name, statuses}).toEqual({name, statuses: ['STARTED', 'RUNNING', 'COMPLETE']});
        expect({name, states: ofStream(name, 'STATE').length > 0}).toEqual({name, states: true});
      }
    });
  });

  test('a consumer that stops early stops the read: no export is polled any more', async () => {
    const ids = [ID, 'eeeeeeee-0000-4000-8000-000000000002'];
    const options = {
      seed: 4,
      exportDurationMs: 50,
      quests: [
        {id: ids[0], rows: 20, firstCreatedAt: new Date(Date.now() - 5 * 86_400_000).toISOString()},
        {id: ids[1], rows: 5, exportDurationMs: 600_000},
      ],
    };
    await withWorld(options, async ({sim, clock, runtime}) => {
      const source = new QuestbackSource(quietLogger(), {runtime, onSecret: () => undefined});
      const {config} = parseConfig(simConfig(sim, {quest_ids: ids}), Date.now());
      const catalog = (await source.discover(parseConfig(simConfig(sim, {quest_ids: [ids[0]]}), Date.now()).config))
        .catalog;
      const stream = catalog.streams[0];
      const configured = {
        streams: ids.map((id) => ({
          stream: {...stream, name: streamOf(id)},
          sync_mode: SyncMode.FULL_REFRESH,
          destination_sync_mode: 'overwrite',
        })),
      } as unknown as AirbyteConfiguredCatalog;
      let seen = 0;
      for await (const message of source.read(config, {}, configured, {})) {
        if ((message as {type: string}).type === 'RECORD') seen++;
        if (seen === 3) break;
      }
      const before = sim.requests().length;
      // A minute on the clock: a read still polling the slow export would poll it several times.
      await clock.sleep(60_000);
      expect(sim.requests().length).toBe(before);
    });
  });

  test("the kit's per-record interface cannot be reached: the source offers the kit no stream classes", () => {
    // Reads run through the connector reader (source.read above); the kit's record-by-record read
    // path belongs to its AirbyteSourceBase and its stream classes, which the source does not use.
    const source = new QuestbackSource(quietLogger(), {runtime: systemRuntime, onSecret: () => undefined});
    expect(source).toBeInstanceOf(AirbyteSource);
    expect(source).not.toBeInstanceOf(AirbyteSourceBase);
    expect('streams' in source).toBe(false);
  });
});
