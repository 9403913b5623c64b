// A state whose cursor lies after the sync's own time (a hand edit, a clock gone back) is not kept:
// every stream that meets one says so in a warning, reads nothing in that sync and moves its cursor
// back to the sync's end, so that responses created from then on are read by the next sync.
import {configuredCatalog, startWorld, streamOf, World} from '../helpers/fixtures';
import {errorTraces, records, stateFile, states, warnings} from '../helpers/connector';

const QUEST = 'f0f0f0f0-0000-4000-8000-000000000001';
const FUTURE = '2999-01-01T00:00:00.000Z';

let world: World;
let catalog: string;
let config: string;
const THREE_DAYS_AGO = new Date(Date.now() - 3 * 86_400_000).toISOString();

beforeAll(async () => {
  world = await startWorld({
    seed: 34,
    exportDurationMs: 20,
    quests: [{id: QUEST, rows: 5, firstCreatedAt: THREE_DAYS_AGO}],
  });
  config = world.config({quest_ids: [QUEST]});
  // The streams whose cursor is a time of this source: the quest's and columns.
  const discover = await world.run(['discover', '--config', config]);
  const all = configuredCatalog(discover.messages, 'incremental') as {streams: {stream: {name: string}}[]};
  const names = new Set([streamOf(QUEST), 'columns']);
  catalog = world.file({streams: all.streams.filter((s) => names.has(s.stream.name))});
});
afterAll(() => world.close());

test('a cursor in the future: a warning per stream, nothing read, the cursor moved back, nothing lost after', async () => {
  const names = [streamOf(QUEST), 'columns'];
  const future = names.map((name) => ({
    type: 'STREAM',
    stream: {stream_descriptor: {name}, stream_state: {cursor: FUTURE}},
  }));
  const read = (state: unknown) =>
    world.run(['read', '--config', config, '--catalog', catalog, '--state', world.file(state)]);
  const first = await read(future);
  expect(errorTraces(first.messages)).toEqual([]);
  expect(first.code).toBe(0);
  expect(records(first.messages)).toEqual([]);
  const said = warnings(first.messages).filter((w) =>
    w.includes(`the state's cursor ${FUTURE} lies after this sync's time`)
  );
  expect(said.map((w) => w.split(':')[0]).sort()).toEqual([`Stream ${streamOf(QUEST)}`, 'Stream columns'].sort());
  expect(said.every((w) => /reset the connection's state in Airbyte/.test(w) && /clock is behind/.test(w))).toBe(true);
  for (const s of states(first.messages))
    expect(Date.parse(s.state.stream.stream_state.cursor)).toBeLessThanOrEqual(world.runtime.now());

  // Responses created after the first sync come in the next; no warning then.
  world.sim.addResponses(QUEST, 4);
  await world.clock.sleep(60_000);
  const second = await read(stateFile(first.messages));
  expect(second.code).toBe(0);
  expect(records(second.messages).filter((r) => r.record.stream === streamOf(QUEST))).toHaveLength(4);
  expect(records(second.messages).filter((r) => r.record.stream === 'columns').length).toBeGreaterThan(0);
  expect(warnings(second.messages).filter((w) => w.includes('lies after'))).toEqual([]);
});
