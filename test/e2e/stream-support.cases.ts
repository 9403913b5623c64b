// A stream declares what it supports (sync modes, cursor, key, resumability), and discover, the read
// and the configured catalog's check take it from there: a kind of stream added beside the
// connector's own, full refresh only, goes through the real discover and read of the in-process
// connector without any other test's assumption changing.

import {errorTraces, records, RunResult, states, statusesByStream} from '../helpers/connector';
import {configuredCatalog, withWorld, World} from '../helpers/fixtures';
import {STREAM_DEFINITIONS} from '../../src/sync/streams/catalog';
import {catalogStream, StreamDefinition, streamRef} from '../../src/sync/streams/stream-definition';
import {objectSchema, stringProperty} from '../../src/sync/streams/record-columns';
import {discovered} from '../helpers/streams';

const QUEST = 'f0110000-0000-4000-8000-000000000001';
const SNAPSHOT = 'quest_list';

/** A full-refresh-only stream of this test's own: the configured quests, read whole every sync, no STATE. */
const snapshotStream: StreamDefinition = {
  support: {syncModes: ['full_refresh'], primaryKey: [['quest_id']], resumable: false},
  async discover() {
    return [catalogStream(SNAPSHOT, objectSchema({quest_id: stringProperty('A configured quest.')}), this.support)];
  },
  plan(ctx, configured) {
    const ref = streamRef(configured);
    if (ref.name !== SNAPSHOT) return undefined;
    return {
      ref,
      questIds: [],
      readsResponses: false,
      read: async (env) => {
        await env.out.records(
          ref,
          ctx.config.quest_ids.map((quest_id) => ({quest_id}))
        );
        return ctx.config.quest_ids.length;
      },
    };
  },
};

const definitions = [...STREAM_DEFINITIONS, snapshotStream];
const quests = {
  seed: 21,
  exportDurationMs: 20,
  quests: [{id: QUEST, rows: 12, columns: 3, firstCreatedAt: new Date(Date.now() - 5 * 86_400_000).toISOString()}],
};

/** discover, then a read of the catalog `catalogOf` makes of its streams, both with the test's stream beside the connector's. */
async function discoverAndRead(
  world: World,
  catalogOf: (discover: RunResult) => Record<string, unknown>
): Promise<{discover: RunResult; read: RunResult}> {
  const config = world.config({stream_layout: 'combined'});
  const discover = await world.run(['discover', '--config', config], {definitions});
  expect(discover.code).toBe(0);
  const read = await world.run(['read', '--config', config, '--catalog', world.file(catalogOf(discover))], {
    definitions,
  });
  return {discover, read};
}

describe('a stream declares what it supports', () => {
  test.concurrent(
    'a full-refresh-only stream: discover lists it without a cursor, and a catalog configured from discover reads it in full refresh beside the incremental streams',
    async () => {
      await withWorld(quests, async (world) => {
        const {discover, read} = await discoverAndRead(world, (found) =>
          configuredCatalog(found.messages, 'incremental')
        );
        const catalog = discover.messages.find((m) => m.type === 'CATALOG') as unknown as {
          catalog: {streams: Record<string, unknown>[]};
        };
        expect(catalog.catalog.streams.find((s) => s.name === SNAPSHOT)).toEqual({
          name: SNAPSHOT,
          json_schema: expect.objectContaining({type: 'object'}),
          supported_sync_modes: ['full_refresh'],
          source_defined_cursor: false,
          source_defined_primary_key: [['quest_id']],
          is_resumable: false,
        });
        // The connector's own streams still read both ways on their cursor.
        expect(catalog.catalog.streams.map((s) => [s.name, s.supported_sync_modes])).toEqual(
          expect.arrayContaining([
            ['responses', ['full_refresh', 'incremental']],
            ['columns', ['full_refresh', 'incremental']],
            ['invitations', ['full_refresh']],
          ])
        );

        expect(errorTraces(read.messages)).toEqual([]);
        expect(read.code).toBe(0);
        const byStream = (name: string) => records(read.messages).filter((r) => r.record.stream === name);
        expect(byStream(SNAPSHOT).map((r) => r.record.data)).toEqual([{quest_id: QUEST}]);
        expect(byStream('responses')).toHaveLength(12);
        expect(statusesByStream(read.messages)[SNAPSHOT]).toEqual(['STARTED', 'RUNNING', 'COMPLETE']);
        // The incremental streams checkpoint; the full-refresh one has no state to keep.
        const stated = new Set(states(read.messages).map((s) => s.state.stream.stream_descriptor.name));
        // (invitations, full refresh too, states its record count for the platform's check.)
        const others = discovered(discover.messages).filter((s) => s.name !== SNAPSHOT);
        expect([...stated].sort()).toEqual(others.map((s) => s.name).sort());
        expect([...stated]).toEqual(expect.arrayContaining(['columns', 'invitations', 'responses']));
      });
    }
  );

  test.concurrent(
    'a catalog that asks incremental of a full-refresh-only stream fails that stream with a config_error that says what to set; the others are read',
    async () => {
      await withWorld(quests, async (world) => {
        const {discover, read} = await discoverAndRead(world, (found) => {
          const catalog = configuredCatalog(found.messages, 'incremental') as {streams: Record<string, unknown>[]};
          for (const s of catalog.streams) {
            if ((s.stream as {name: string}).name === SNAPSHOT) s.sync_mode = 'incremental';
          }
          return catalog;
        });
        expect(read.code).not.toBe(0);
        const errors = errorTraces(read.messages).map((t) => t.trace.error);
        expect(errors).toEqual([
          expect.objectContaining({
            failure_type: 'config_error',
            stream_descriptor: {name: SNAPSHOT},
            message: expect.stringContaining(
              `Stream ${SNAPSHOT} cannot be read in sync mode incremental: it supports full_refresh only.`
            ),
          }),
        ]);
        expect(records(read.messages).filter((r) => r.record.stream === SNAPSHOT)).toEqual([]);
        // Every other stream discover listed (responses, columns, invitations) is read.
        const others = discovered(discover.messages).filter((s) => s.name !== SNAPSHOT);
        expect(others.map((s) => s.name)).toEqual(expect.arrayContaining(['responses', 'columns', 'invitations']));
        expect(statusesByStream(read.messages)).toEqual({
          ...Object.fromEntries(others.map((s) => [s.name, ['STARTED', 'RUNNING', 'COMPLETE']])),
          [SNAPSHOT]: ['STARTED', 'INCOMPLETE'],
        });
        expect(records(read.messages).filter((r) => r.record.stream === 'responses')).toHaveLength(12);
      });
    }
  );
});
