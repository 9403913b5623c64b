// What the invitations stream's e2e cases share: quests with invitations on the simulator, and a sync
// of the stream alone (or of every stream) as discover lists it.

import {records, RunResult} from './connector';
import {World} from './fixtures';
import {SimulatorOptions} from '../../simulator';

export const Q1 = '1a7e0000-0000-4000-8000-000000000001';
export const Q2 = '1a7e0000-0000-4000-8000-000000000002';
export const DAY = 86_400_000;

/** A simulator with a quest per count, each with that many invitations added over 20 days. */
export const quests = (invitations: number[], more: Partial<SimulatorOptions> = {}): SimulatorOptions => ({
  seed: 36,
  exportDurationMs: 20,
  quests: invitations.map((n, i) => ({
    id: [Q1, Q2][i],
    rows: 6,
    invitations: n,
    firstCreatedAt: new Date(Date.now() - 20 * DAY).toISOString(),
  })),
  ...more,
});

export type CatalogEntry = {name: string; supported_sync_modes: string[]; default_cursor_field?: string[]};

/** discover, then a read of the invitations stream alone (full refresh), or of every stream discover lists. */
export async function sync(
  world: World,
  overrides: Record<string, unknown> = {},
  every = false
): Promise<RunResult & {streams: CatalogEntry[]}> {
  const config = world.config({stream_layout: 'combined', ...overrides});
  const discover = await world.run(['discover', '--config', config]);
  expect(discover.code).toBe(0);
  const catalog = discover.messages.find((m) => m.type === 'CATALOG') as unknown as {
    catalog: {streams: CatalogEntry[]};
  };
  const streams = catalog.catalog.streams.filter((s) => every || s.name === 'invitations');
  const configured = streams.map((stream) => {
    const mode = stream.supported_sync_modes.includes('incremental') ? 'incremental' : 'full_refresh';
    return {
      stream,
      sync_mode: mode,
      ...(mode === 'incremental' ? {cursor_field: stream.default_cursor_field} : {}),
      destination_sync_mode: mode === 'incremental' ? 'append' : 'overwrite',
    };
  });
  const run = await world.run(['read', '--config', config, '--catalog', world.file({streams: configured})]);
  return {...run, streams};
}

/** The invitations records of a run, their data. */
export const invitationRecords = (run: RunResult) =>
  records(run.messages)
    .filter((r) => r.record.stream === 'invitations')
    .map((r) => r.record.data);

/** The requests of the invitations list the simulator saw (not check's access probe, take=0). */
export const listRequests = (world: World) =>
  world.sim.requests('invitations').filter((r) => !/take=0\b/.test(r.query ?? ''));
