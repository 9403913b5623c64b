import {configuredCatalog, simConfig, streamOf, withWorld, World} from '../helpers/fixtures';
import {errorTraces, records, statusesByStream} from '../helpers/connector';
import {discovered} from '../helpers/streams';

const A = 'dddddddd-0000-4000-8000-00000000000a';
const SLOW = 'dddddddd-0000-4000-8000-00000000000b';
const FORBIDDEN = 'dddddddd-0000-4000-8000-00000000000c';

/** Each test has a simulator of its own, so that the faults one injects never reach the other. */
function withSim(fn: (world: World) => Promise<void>): Promise<void> {
  return withWorld(
    {
      seed: 31,
      exportDurationMs: 100,
      tokenLifetimeSeconds: 2,
      quests: [
        {id: A, rows: 40, firstCreatedAt: new Date(Date.now() - 10 * 86_400_000).toISOString()},
        {id: SLOW, rows: 5, exportDurationMs: 600_000},
        {id: FORBIDDEN, rows: 5, forbidden: true},
      ],
    },
    fn
  );
}

describe('secrets and stuck exports', () => {
  test.concurrent(
    'no client secret or access token appears anywhere in the output of a faulty debug-level run',
    () =>
      withSim(async ({sim, ...world}) => {
        const debug = {logLevel: 'debug'} as const;
        const config = simConfig(sim, {
          quest_ids: [A, FORBIDDEN],
          window_days: 2,
          start_date: new Date(Date.now() - 12 * 86_400_000).toISOString(),
        });
        const configFile = world.file(config);
        let output = '';
        const check = await world.run(['check', '--config', configFile], debug);
        output += check.stdout + check.stderr;
        const discover = await world.run(['discover', '--config', world.config({quest_ids: [A]})], debug);
        output += discover.stdout + discover.stderr;
        const catalog = configuredCatalog(discover.messages, 'incremental') as {streams: {stream: {name: string}}[]};
        catalog.streams.push({
          ...catalog.streams[0],
          stream: {...catalog.streams[0].stream, name: streamOf(FORBIDDEN)},
        });
        sim.setFaults({serverErrorRate: 0.1, exportErrorRate: 0.2, truncatedDownloadRate: 0.2, goneRate: 0.1});
        const read = await world.run(['read', '--config', configFile, '--catalog', world.file(catalog)], debug);
        sim.setFaults({});
        output += read.stdout + read.stderr;
        const badSecret = await world.run(
          [
            'read',
            '--config',
            world.file({...config, client_secret: 'another-secret-456'}),
            '--catalog',
            world.file(catalog),
          ],
          debug
        );
        output += badSecret.stdout + badSecret.stderr;

        expect(read.stdout).toContain('"level":"DEBUG"');
        expect(records(read.messages).length).toBeGreaterThan(0);
        const tokens = sim.issuedTokens();
        expect(tokens.length).toBeGreaterThan(1);
        const leaked = [sim.clientSecret, 'another-secret-456', ...tokens].filter((secret) => output.includes(secret));
        expect(leaked).toEqual([]);
        // Tokens travel in the Authorization header only: never in a query string.
        const queries = sim.requests().map((r) => (r as {query?: string}).query ?? '');
        expect(queries.filter((q) => tokens.some((t) => q.includes(t)))).toEqual([]);
      }),
    120_000
  );

  test.concurrent(
    'an export stuck beyond export_timeout_minutes fails its stream clearly and the others still sync',
    () =>
      withSim(async (world) => {
        const config = world.config({quest_ids: [SLOW, A], export_timeout_minutes: 0.05});
        const discover = await world.run(['discover', '--config', world.config({quest_ids: [A]})]);
        const catalog = configuredCatalog(discover.messages, 'full_refresh') as {streams: {stream: {name: string}}[]};
        catalog.streams.unshift({...catalog.streams[0], stream: {...catalog.streams[0].stream, name: streamOf(SLOW)}});
        const result = await world.run(['read', '--config', config, '--catalog', world.file(catalog)]);
        expect(result.invalid).toEqual([]);
        expect(result.code).toBe(1);
        const errors = errorTraces(result.messages);
        expect(errors).toHaveLength(1);
        expect(errors[0].trace.error?.stream_descriptor).toEqual({name: streamOf(SLOW)});
        expect(errors[0].trace.error?.failure_type).toBe('transient_error');
        expect(errors[0].trace.error?.message).toMatch(
          new RegExp(
            `Quest ${SLOW}: the export of window .* could not be completed: export \\S+ was still (PENDING|INPROGRESS) after .* \\(export_timeout_minutes is 0\\.05\\)`
          )
        );
        // Only the stuck quest's stream fails. The quest that failed gives no header to the columns stream, which
        // still completes; invitations are no export: the stuck export does not touch them.
        const others = discovered(discover.messages).map((s) => [s.name, ['STARTED', 'RUNNING', 'COMPLETE']]);
        expect(others.map(([name]) => name)).toEqual(expect.arrayContaining([streamOf(A), 'columns', 'invitations']));
        expect(statusesByStream(result.messages)).toEqual({
          ...Object.fromEntries(others),
          [streamOf(SLOW)]: ['STARTED', 'RUNNING', 'INCOMPLETE'],
        });
        expect(records(result.messages).filter((r) => r.record.stream === streamOf(A)).length).toBe(40);
      })
  );
});
