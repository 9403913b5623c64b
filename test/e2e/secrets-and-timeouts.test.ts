import {configuredCatalog, simConfig, streamOf} from '../helpers/fixtures';
import {errorTraces, records, runConnector, statusesByStream, tempDir, writeJson} from '../helpers/connector';
import {Simulator, startSimulator} from '../../simulator';

const A = 'dddddddd-0000-4000-8000-00000000000a';
const SLOW = 'dddddddd-0000-4000-8000-00000000000b';
const FORBIDDEN = 'dddddddd-0000-4000-8000-00000000000c';

/** Each test has a simulator of its own, so that the faults one injects never reach the other. */
async function withSim(fn: (sim: Simulator, dir: string) => Promise<void>): Promise<void> {
  const sim = await startSimulator({
    seed: 31,
    exportDurationMs: 100,
    tokenLifetimeSeconds: 2,
    quests: [
      {id: A, rows: 40, firstCreatedAt: new Date(Date.now() - 10 * 86_400_000).toISOString()},
      {id: SLOW, rows: 5, exportDurationMs: 600_000},
      {id: FORBIDDEN, rows: 5, forbidden: true},
    ],
  });
  try {
    await fn(sim, tempDir());
  } finally {
    await sim.close();
  }
}

describe('secrets and stuck exports', () => {
  test.concurrent(
    'no client secret or access token appears anywhere in the output of a faulty debug-level run',
    () =>
      withSim(async (sim, dir) => {
        const env = {LOG_LEVEL: 'debug'};
        const config = simConfig(sim, {
          quest_ids: [A, FORBIDDEN],
          window_days: 2,
          start_date: new Date(Date.now() - 12 * 86_400_000).toISOString(),
        });
        const configFile = writeJson(dir, 'config.json', config);
        let output = '';
        const check = await runConnector(['check', '--config', configFile], env);
        output += check.stdout + check.stderr;
        const discover = await runConnector(
          ['discover', '--config', writeJson(dir, 'a.json', simConfig(sim, {quest_ids: [A]}))],
          env
        );
        output += discover.stdout + discover.stderr;
        const catalog = configuredCatalog(discover.messages, 'incremental') as {streams: {stream: {name: string}}[]};
        catalog.streams.push({
          ...catalog.streams[0],
          stream: {...catalog.streams[0].stream, name: streamOf(FORBIDDEN)},
        });
        sim.setFaults({serverErrorRate: 0.1, exportErrorRate: 0.2, truncatedDownloadRate: 0.2, goneRate: 0.1});
        const read = await runConnector(
          ['read', '--config', configFile, '--catalog', writeJson(dir, 'catalog.json', catalog)],
          env
        );
        sim.setFaults({});
        output += read.stdout + read.stderr;
        const badSecret = await runConnector(
          [
            'read',
            '--config',
            writeJson(dir, 'bad.json', {...config, client_secret: 'another-secret-456'}),
            '--catalog',
            writeJson(dir, 'catalog.json', catalog),
          ],
          env
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
      withSim(async (sim, dir) => {
        const config = simConfig(sim, {quest_ids: [SLOW, A], export_timeout_minutes: 0.05});
        const discover = await runConnector([
          'discover',
          '--config',
          writeJson(dir, 'a2.json', simConfig(sim, {quest_ids: [A]})),
        ]);
        const catalog = configuredCatalog(discover.messages, 'full_refresh') as {streams: {stream: {name: string}}[]};
        catalog.streams.unshift({...catalog.streams[0], stream: {...catalog.streams[0].stream, name: streamOf(SLOW)}});
        const result = await runConnector([
          'read',
          '--config',
          writeJson(dir, 'slow.json', config),
          '--catalog',
          writeJson(dir, 'slow-cat.json', catalog),
        ]);
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
        expect(statusesByStream(result.messages)).toEqual({
          [streamOf(SLOW)]: ['STARTED', 'RUNNING', 'INCOMPLETE'],
          [streamOf(A)]: ['STARTED', 'RUNNING', 'COMPLETE'],
          // The quest that failed gives no header to the columns stream; the stream itself completes.
          columns: ['STARTED', 'RUNNING', 'COMPLETE'],
        });
        expect(records(result.messages).filter((r) => r.record.stream === streamOf(A)).length).toBe(40);
      })
  );
});
