import {Simulator} from '../simulator';
import {AirbyteMessageJson} from './protocol';

/** The stream the connector names after a quest. */
export const streamOf = (questId: string): string => `quest_${questId.replace(/-/g, '_')}`;

/** A connector config for a running simulator. */
export function simConfig(sim: Simulator, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    client_id: sim.clientId,
    client_secret: sim.clientSecret,
    project_id: sim.projectId,
    api_url: sim.apiUrl,
    auth_url: sim.authUrl,
    quest_ids: sim.quests.map((q) => q.id),
    start_date: new Date(Date.now() - 40 * 86_400_000).toISOString(),
    settle_seconds: 0,
    window_days: 7,
    ...overrides,
  };
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
