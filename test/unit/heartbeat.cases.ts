// The heartbeat on its own, on a virtual clock: waits of hours cost a few dozen jumps of the clock.

import {Heartbeat} from '../../src/sync/state/heartbeat';
import {QuestProgress, StreamCheckpoints} from '../../src/sync/state/checkpoints';
import {TestClock} from '../helpers/clock';
import {quietLogger, recordingOutput} from '../helpers/fake-api';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const STREAM = {name: 'quest_q'};
const codec = (quests: ReadonlyMap<string, QuestProgress>): object => ({quests: Object.fromEntries(quests)});

/** A stream of one quest whose export was just created (and recorded in a STATE), and a heartbeat watching it. */
async function setUp() {
  const clock = new TestClock(3);
  const out = recordingOutput();
  const at: number[] = [];
  const state = out.state;
  out.state = (stream, value, count) => {
    at.push(clock.now());
    return state(stream, value, count);
  };
  const heartbeat = new Heartbeat(clock, quietLogger());
  const stream = new StreamCheckpoints(heartbeat.output(out), STREAM, codec);
  const quest = stream.quest('q', {cursor: Date.parse('2026-11-01T00:00:00Z'), exports: []});
  const window = {since: Date.parse('2026-11-01T00:00:00Z'), until: Date.parse('2026-11-02T00:00:00Z')};
  await quest.exportCreated({exportId: 'e1', window, fingerprint: 'f'});
  heartbeat.watch(stream);
  const stop = new AbortController();
  const running = heartbeat.run(stop.signal);
  /** Waits `ms` on the clock, as a generation wait would, then stops the heartbeat. */
  const wait = async (ms: number): Promise<void> => {
    await clock.sleep(ms);
    stop.abort();
    await running;
  };
  return {clock, states: out.recorded.states, at, quest, window, wait};
}

test('a wait of three hours with no record: the STATE repeated every 5 min, unchanged, committing no record', async () => {
  const {states, at, wait} = await setUp();
  await wait(3 * HOUR);
  // The STATE of the export's creation, then one every 5 minutes: at 5, 10, ... 180 (the last one may race the stop).
  expect(states.length).toBeGreaterThanOrEqual(36);
  expect(states.length).toBeLessThanOrEqual(37);
  for (const s of states.slice(1)) {
    expect(s.state).toEqual(states[0].state);
    expect(s.recordCount).toBe(0);
  }
  // The test clock runs with real time while nothing waits on it: a busy machine moves a STATE by a few ms.
  const gaps = at.slice(1).map((t, i) => t - at[i]);
  expect(Math.min(...gaps)).toBeGreaterThan(5 * MINUTE - 1000);
  expect(Math.max(...gaps)).toBeLessThan(5 * MINUTE + 1000);
});

test('rows of a window not yet committed: no STATE in three hours, and the window end commits them', async () => {
  const {states, quest, window, wait} = await setUp();
  quest.rowsWritten(3);
  await wait(3 * HOUR);
  expect(states).toHaveLength(1);
  await quest.pieceRead('e1', window.until);
  expect(states).toHaveLength(2);
  expect(states[1].recordCount).toBe(3);
});
