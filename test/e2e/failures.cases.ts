import {configuredCatalog, startWorld, streamOf, World} from '../helpers/fixtures';
import {errorTraces, records, states, statusesByStream} from '../helpers/connector';
import {discovered, isResponseStream} from '../helpers/streams';

const GOOD = '0a0a0a0a-1b1b-4c2c-8d3d-4e4e4e4e4e4e';
const FORBIDDEN = 'f0f0f0f0-1e1e-4d2d-9c3c-4b4b4b4b4b4b';
const UNKNOWN = '99999999-8888-4777-a666-555555555555';

function connectionStatus(messages: {type: string}[]): {status: string; message?: string} {
  const statuses = messages.filter((m) => m.type === 'CONNECTION_STATUS') as unknown as {
    connectionStatus: {status: string; message?: string};
  }[];
  expect(statuses).toHaveLength(1);
  return statuses[0].connectionStatus;
}

describe('failures a user can cause or meet', () => {
  let world: World;

  beforeAll(async () => {
    world = await startWorld({
      seed: 11,
      exportDurationMs: 100,
      quests: [
        {id: GOOD, rows: 12, firstCreatedAt: new Date(Date.now() - 5 * 86_400_000).toISOString()},
        {id: FORBIDDEN, rows: 5, forbidden: true},
      ],
    });
  });
  afterAll(() => world.close());

  test('check with a wrong client secret fails once, says what to fix, and never shows the secret', async () => {
    const config = world.config({quest_ids: [GOOD], client_secret: 'wrong-secret-value-123'});
    const result = await world.run(['check', '--config', config]);
    expect(result.invalid).toEqual([]);
    expect(result.code).toBe(0);
    const status = connectionStatus(result.messages);
    expect(status.status).toBe('FAILED');
    expect(status.message).toMatch(/rejected the API login.*HTTP 401.*Check client_id and client_secret/);
    expect(result.stdout + result.stderr).not.toContain('wrong-secret-value-123');
  });

  test('check with an unknown quest names it and says to check the id', async () => {
    const result = await world.run(['check', '--config', world.config({quest_ids: [GOOD, UNKNOWN]})]);
    const status = connectionStatus(result.messages);
    expect(status.status).toBe('FAILED');
    expect(status.message).toContain(`Checking access for quest ${UNKNOWN} failed: HTTP 404`);
    expect(status.message).toContain('The quest was not found: check its id in quest_ids');
    expect(status.message).toContain('1 of 2 quest(s) cannot be read');
  });

  test('check with a quest the client may not read names it and says who can grant access', async () => {
    const result = await world.run(['check', '--config', world.config({quest_ids: [GOOD, FORBIDDEN]})]);
    const status = connectionStatus(result.messages);
    expect(status.status).toBe('FAILED');
    expect(status.message).toContain(`HTTP 403`);
    expect(status.message).toContain(`quest ${FORBIDDEN} failed: HTTP 403`);
    expect(status.message).toContain('has no permission for this quest');
    expect(status.message).toMatch(/traceId \S+/);
  });

  test('a read where one quest fails still syncs the other, names the failed stream, and exits non-zero', async () => {
    const configFile = world.config({quest_ids: [GOOD, FORBIDDEN]});
    const discover = await world.run(['discover', '--config', world.config({quest_ids: [GOOD]})]);
    const catalog = configuredCatalog(discover.messages, 'incremental') as {streams: {stream: {name: string}}[]};
    // The quest streams alone: this is about one quest failing beside another.
    catalog.streams = catalog.streams.filter((s) => isResponseStream(s.stream.name));
    // The forbidden stream first: its failure must not stop the good one after it.
    catalog.streams.unshift({...catalog.streams[0], stream: {...catalog.streams[0].stream, name: streamOf(FORBIDDEN)}});
    const result = await world.run(['read', '--config', configFile, '--catalog', world.file(catalog)]);
    expect(result.invalid).toEqual([]);
    expect(result.code).not.toBe(0);
    expect(records(result.messages).map((r) => r.record.stream)).toEqual(Array(12).fill(streamOf(GOOD)));
    const errors = errorTraces(result.messages);
    expect(errors).toHaveLength(1);
    expect(errors[0].trace.error?.stream_descriptor).toEqual({name: streamOf(FORBIDDEN)});
    expect(errors[0].trace.error?.failure_type).toBe('config_error');
    expect(errors[0].trace.error?.message).toMatch(
      new RegExp(`quest ${FORBIDDEN} failed: HTTP 403.*has no permission for this quest`)
    );
    expect(statusesByStream(result.messages)).toEqual({
      [streamOf(FORBIDDEN)]: ['STARTED', 'RUNNING', 'INCOMPLETE'],
      [streamOf(GOOD)]: ['STARTED', 'RUNNING', 'COMPLETE'],
    });
    expect(states(result.messages).every((s) => s.state.stream.stream_descriptor.name === streamOf(GOOD))).toBe(true);
  });

  test.each(['per_quest', 'combined'])(
    'a read whose token is refused fails every stream, the columns stream too (%s): INCOMPLETE, one auth error, no STATE',
    async (layout) => {
      const discover = await world.run([
        'discover',
        '--config',
        world.config({quest_ids: [GOOD], stream_layout: layout}),
      ]);
      const catalog = world.file(configuredCatalog(discover.messages, 'incremental'));
      const config = world.config({quest_ids: [GOOD], stream_layout: layout, client_secret: 'wrong-secret-value-123'});
      const result = await world.run(['read', '--config', config, '--catalog', catalog]);
      expect(result.invalid).toEqual([]);
      expect(result.code).toBe(1);
      const failed = discovered(discover.messages).map((s) => [s.name, ['STARTED', 'RUNNING', 'INCOMPLETE']]);
      expect(failed.map(([name]) => name)).toContain(layout === 'combined' ? 'responses' : streamOf(GOOD));
      expect(statusesByStream(result.messages)).toEqual(Object.fromEntries(failed));
      const errors = errorTraces(result.messages);
      expect(errors).toHaveLength(1);
      expect(errors[0].trace.error?.failure_type).toBe('config_error');
      expect(errors[0].trace.error?.message).toMatch(/rejected the API login.*HTTP 401/);
      expect({records: records(result.messages).length, states: states(result.messages).length}).toEqual({
        records: 0,
        states: 0,
      });
      expect(result.stdout).not.toMatch(/columns: complete/);
    }
  );
});
