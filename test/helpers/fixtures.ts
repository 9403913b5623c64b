import {parseConfig, QuestbackConfig} from '../../src/core/config';
import {warehouseNames} from '../../src/sync/streams/column-names';
import {Simulator} from '../../simulator';
import {connectorConfig} from '../../simulator/cli-app';
import {AirbyteMessageJson} from './protocol';

/** The stream the connector names after a quest. */
export const streamOf = (questId: string): string => `quest_${questId.replace(/-/g, '_')}`;

/** A config of the required options only (no service behind it). */
export const REQUIRED_OPTIONS = {
  client_id: 'id',
  client_secret: 'secret',
  quest_ids: ['1b4e28ba-2fa1-11d2-883f-0016d3cca427'],
  start_date: '2024-01-01T00:00:00Z',
};

/** The parsed config of the required options and these (defaults applied), for tests of the sync layer. */
export function parsedConfig(overrides: Record<string, unknown> = {}): QuestbackConfig {
  return parseConfig({...REQUIRED_OPTIONS, ...overrides}, Date.now()).config;
}

/** A connector config for a running simulator, with the connector's defaults and a start_date 40 days back. */
export function simConfig(sim: Simulator, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {...connectorConfig(sim), start_date: new Date(Date.now() - 40 * 86_400_000).toISOString(), ...overrides};
}

/** The configured catalog Airbyte would build from a discover output, every stream in one mode. */
export function configuredCatalog(
  discover: AirbyteMessageJson[],
  syncMode: 'full_refresh' | 'incremental'
): Record<string, unknown> {
  const catalog = discover.find((m) => m.type === 'CATALOG') as
    {catalog: {streams: {name: string; default_cursor_field?: string[]}[]}} | undefined;
  if (!catalog) throw new Error('discover returned no CATALOG');
  return {
    streams: catalog.catalog.streams.map((stream) => ({
      stream,
      sync_mode: syncMode,
      ...(syncMode === 'incremental' ? {cursor_field: stream.default_cursor_field} : {}),
      destination_sync_mode: syncMode === 'incremental' ? 'append' : 'overwrite',
    })),
  };
}

/**
 * A configured catalog for simulator quests without running discover: each stream lists the quest's
 * columns under their warehouse names (the connector's default), as discover would.
 */
export function simCatalog(
  sim: Simulator,
  questIds: readonly string[],
  syncMode: 'full_refresh' | 'incremental'
): Record<string, unknown> {
  return {
    streams: questIds.map((id) => {
      const header = sim.groundTruth(id).header;
      const properties: Record<string, unknown> = {};
      warehouseNames(header).forEach((name, i) => (properties[name] = {type: ['null', 'string'], title: header[i]}));
      for (const field of ['_questback_quest_id', '_questback_window_start', '_questback_window_end'])
        properties[field] = {type: 'string'};
      return {
        stream: {
          name: streamOf(id),
          json_schema: {type: 'object', properties},
          supported_sync_modes: ['full_refresh', 'incremental'],
        },
        sync_mode: syncMode,
        destination_sync_mode: syncMode === 'incremental' ? 'append' : 'overwrite',
      };
    }),
  };
}
