import {configuredCatalog, DEFAULT_EXPORT_SETTINGS, startWorld, streamOf, World} from '../helpers/fixtures';
import {committed, stateFile} from '../helpers/connector';

describe('under injected faults', () => {
  let world: World | undefined;
  afterAll(() => world?.close());

  test('repeated syncs resuming from state deliver every row exactly once, with every message valid', async () => {
    // On a virtual clock: backoffs, 429 waits and token expiry take no real time.
    world = await startWorld({
      seed: 99,
      exportDurationMs: 120,
      tokenLifetimeSeconds: 3,
      quests: [
        {
          id: 'aaaaaaaa-0000-4000-8000-000000000001',
          rows: 90,
          firstCreatedAt: new Date(Date.now() - 24 * 86_400_000).toISOString(),
        },
        {
          id: 'bbbbbbbb-0000-4000-8000-000000000002',
          rows: 70,
          columns: 9,
          firstCreatedAt: new Date(Date.now() - 16 * 86_400_000).toISOString(),
        },
      ],
      faults: {
        serverErrorRate: 0.1,
        exportErrorRate: 0.2,
        truncatedDownloadRate: 0.2,
        goneRate: 0.1,
        rateLimit: {limit: 15, windowMs: 1000, resetFormat: 'seconds'},
      },
    });
    const {sim} = world;
    const configFile = world.config({window_days: 5, start_date: new Date(Date.now() - 30 * 86_400_000).toISOString()});
    sim.setFaults({});
    const discover = await world.run(['discover', '--config', configFile]);
    expect(discover.code).toBe(0);
    sim.setFaults({
      serverErrorRate: 0.1,
      exportErrorRate: 0.2,
      truncatedDownloadRate: 0.2,
      goneRate: 0.1,
      rateLimit: {limit: 15, windowMs: 1000, resetFormat: 'seconds'},
    });
    const catalogFile = world.file(configuredCatalog(discover.messages, 'incremental'));

    const delivered = new Map<string, number>();
    let state: ReturnType<typeof stateFile> = [];
    let lastCode: number | null = null;
    const invalid: string[] = [];
    for (let sync = 1; sync <= 8; sync++) {
      if (sync === 2) {
        sim.addResponses(sim.quests[0].id, 7);
        // They arrive 1 ms apart; a sync reads up to the whole second before it starts (windows end on whole seconds).
        await world.clock.sleep(1_010);
      }
      const args = ['read', '--config', configFile, '--catalog', catalogFile];
      if (state.length) args.push('--state', world.file(state));
      const result = await world.run(args);
      invalid.push(...result.invalid);
      for (const r of committed(result.messages)) {
        const key = `${r.record.stream}/${r.record.data.response_id}`;
        delivered.set(key, (delivered.get(key) ?? 0) + 1);
      }
      state = stateFile(result.messages, state);
      lastCode = result.code;
      if (sync >= 2 && result.code === 0) break;
    }
    expect(invalid).toEqual([]);
    expect(lastCode).toBe(0);
    const stats = sim.stats();
    // The faults really happened.
    expect(stats.serverErrors).toBeGreaterThan(0);
    expect(stats.rateLimited + stats.serverErrors).toBeGreaterThan(0);
    expect(stats.tokens).toBeGreaterThan(1);
    for (const quest of sim.quests) {
      const stream = streamOf(quest.id);
      const {header, rows} = sim.groundTruth(quest.id, DEFAULT_EXPORT_SETTINGS);
      const ids = rows.map((row) => row[header.indexOf('Response ID')]);
      const got = [...delivered.entries()].filter(([k]) => k.startsWith(`${stream}/`));
      expect(got.map(([k]) => k.slice(stream.length + 1)).sort()).toEqual([...ids].sort());
      expect(got.filter(([, n]) => n !== 1)).toEqual([]);
    }
  }, 240_000);
});
