// CAT "incremental" group, replicated on the built bin/main: two sequential reads, a resume from
// every intermediate checkpoint (with several window sizes), and a state far in the future.

import {simConfig} from '../helpers/fixtures';
import {
  RecordMessage,
  records,
  runConnector,
  RunResult,
  stateFile,
  StateMessage,
  states,
  tempDir,
  writeJson,
} from '../helpers/connector';
import {Simulator, startSimulator} from '../simulator';
import {
  AirbyteStreamJson,
  catalogOf,
  configuredCatalogOf,
  CURSOR_FIELD,
  daysAgo,
  PRIMARY_KEY,
  removeDir,
  StateInput,
  streamOf,
  summary,
} from './support';

const QUEST_A = 'b1b1b1b1-2c2c-4d3d-8e4e-5f5f5f5f5f5f';
const QUEST_B = 'c2c2c2c2-3d3d-4e4e-9f5f-606060606060';
const ROWS: Record<string, number> = {[streamOf(QUEST_A)]: 60, [streamOf(QUEST_B)]: 25};
const FUTURE = '2999-12-31T23:59:59.000Z';

const cursorOf = (r: RecordMessage): number => Date.parse(String(r.record.data[CURSOR_FIELD]));
const keyOf = (r: RecordMessage): string => String(r.record.data[PRIMARY_KEY]);
const ofStream = <T extends RecordMessage | StateMessage>(items: T[], stream: string): T[] =>
  items.filter((x) => ('record' in x ? x.record.stream : x.state.stream.stream_descriptor.name) === stream);

function expectOk(run: RunResult): void {
  expect(run.invalid).toEqual([]);
  expect({code: run.code, summary: run.code === 0 ? '' : summary(run)}).toEqual({code: 0, summary: ''});
}

/** Runs the jobs with at most `limit` at once (two cores: a few connector processes at a time). */
async function inBatches<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += limit) out.push(...(await Promise.all(items.slice(i, i + limit).map(fn))));
  return out;
}

describe('incremental', () => {
  let sim: Simulator;
  let dir: string;
  let streams: AirbyteStreamJson[];
  const configFiles = new Map<number, string>();
  let read1: RunResult;

  const catalogFor = (only?: string): string =>
    writeJson(
      dir,
      `inc-${only ?? 'all'}.json`,
      configuredCatalogOf(
        streams.filter((s) => !only || s.name === only),
        'incremental'
      )
    );
  const read = (windowDays: number, state?: unknown, only?: string, name = 'state'): Promise<RunResult> => {
    const args = ['read', '--config', configFiles.get(windowDays) as string, '--catalog', catalogFor(only)];
    if (state !== undefined) args.push('--state', writeJson(dir, `${name}.json`, state));
    return runConnector(args);
  };

  /** Resumes from every intermediate STATE of a first read, stream by stream. */
  async function resumeFromEveryCheckpoint(windowDays: number, first: RunResult): Promise<void> {
    const checkpoints: StateMessage[] = [];
    for (const s of streams) {
      const own = ofStream(states(first.messages), s.name);
      // Several windows, so several checkpoints before the final one.
      expect({stream: s.name, intermediate: own.length - 1 >= 3}).toEqual({stream: s.name, intermediate: true});
      checkpoints.push(...own.slice(0, -1));
    }
    const results = await inBatches(checkpoints, 6, (c) => {
      const name = c.state.stream.stream_descriptor.name;
      return read(
        windowDays,
        [c.state],
        name,
        `w${windowDays}-${name}-${Date.parse(c.state.stream.stream_state.cursor)}`
      );
    });
    checkpoints.forEach((c, i) => {
      const run = results[i];
      const name = c.state.stream.stream_descriptor.name;
      const at = Date.parse(c.state.stream.stream_state.cursor);
      expectOk(run);
      const got = records(run.messages);
      // Only records after the checkpoint...
      expect({
        checkpoint: c.state.stream.stream_state.cursor,
        early: got.filter((r) => cursorOf(r) <= at).map(keyOf),
      }).toEqual({
        checkpoint: c.state.stream.stream_state.cursor,
        early: [],
      });
      // ...and every record of read 1 after it: resuming loses nothing.
      const expected = ofStream(records(first.messages), name)
        .filter((r) => cursorOf(r) > at)
        .map(keyOf);
      const keys = new Set(got.map(keyOf));
      expect({checkpoint: c.state.stream.stream_state.cursor, missing: expected.filter((k) => !keys.has(k))}).toEqual({
        checkpoint: c.state.stream.stream_state.cursor,
        missing: [],
      });
      expect(got.every((r) => r.record.stream === name)).toBe(true);
      expect(ofStream(states(run.messages), name).length).toBeGreaterThan(0);
    });
  }

  beforeAll(async () => {
    sim = await startSimulator({
      seed: 21,
      exportDurationMs: 20,
      quests: [
        {id: QUEST_A, rows: 60, firstCreatedAt: daysAgo(30)},
        {id: QUEST_B, rows: 25, columns: 8, firstCreatedAt: daysAgo(20)},
      ],
    });
    dir = tempDir('questback-acceptance-incremental-');
    for (const windowDays of [7]) {
      configFiles.set(
        windowDays,
        writeJson(
          dir,
          `config-${windowDays}.json`,
          simConfig(sim, {start_date: daysAgo(31), window_days: windowDays, max_concurrent_exports: 16})
        )
      );
    }
    streams = catalogOf(await runConnector(['discover', '--config', configFiles.get(7) as string]));
    read1 = await read(7);
  });
  afterAll(async () => {
    await sim.close();
    removeDir(dir);
  });

  test('read 1 emits records and state', () => {
    expectOk(read1);
    for (const s of streams) {
      expect({stream: s.name, records: ofStream(records(read1.messages), s.name).length}).toEqual({
        stream: s.name,
        records: ROWS[s.name],
      });
      const cursors = ofStream(states(read1.messages), s.name).map((m) =>
        Date.parse(m.state.stream.stream_state.cursor)
      );
      expect(cursors.length).toBeGreaterThan(0);
      // Checkpoints move forward, and the last one covers every record emitted.
      expect(cursors.every((c, i) => i === 0 || c > cursors[i - 1])).toBe(true);
      expect(Math.max(...ofStream(records(read1.messages), s.name).map(cursorOf))).toBeLessThanOrEqual(
        cursors[cursors.length - 1]
      );
    }
  });

  test('every intermediate checkpoint of read 1 can be resumed from (window_days 7)', async () => {
    await resumeFromEveryCheckpoint(7, read1);
  });

  describe('read 2 from the final state of read 1, after new responses', () => {
    let read2: RunResult;
    let finalState: StateMessage['state'][];
    const added: Record<string, number> = {[streamOf(QUEST_A)]: 5, [streamOf(QUEST_B)]: 3};

    beforeAll(async () => {
      finalState = stateFile(read1.messages);
      sim.addResponses(QUEST_A, added[streamOf(QUEST_A)]);
      sim.addResponses(QUEST_B, added[streamOf(QUEST_B)]);
      await new Promise((resolve) => setTimeout(resolve, 30));
      read2 = await read(7, finalState, undefined, 'final-state');
    });

    test("read 2 from read 1's final state returns only records with cursor >= that state", () => {
      expectOk(read2);
      expect(finalState.map((s) => s.stream.stream_descriptor.name).sort()).toEqual(streams.map((s) => s.name).sort());
      for (const s of finalState) {
        const name = s.stream.stream_descriptor.name;
        const got = ofStream(records(read2.messages), name);
        expect({stream: name, records: got.length}).toEqual({stream: name, records: added[name]});
        const state = Date.parse(s.stream.stream_state.cursor);
        expect({stream: name, before: got.filter((r) => cursorOf(r) < state).map(keyOf)}).toEqual({
          stream: name,
          before: [],
        });
      }
    });

    test('read 2 repeats no record of read 1', () => {
      const seen = new Set(records(read1.messages).map((r) => `${r.record.stream}/${keyOf(r)}`));
      expect(
        records(read2.messages)
          .filter((r) => seen.has(`${r.record.stream}/${keyOf(r)}`))
          .map(keyOf)
      ).toEqual([]);
    });
  });

  test('a state far in the future yields zero records and at least one STATE', async () => {
    const future: StateInput[] = streams.map((s) => ({
      type: 'STREAM',
      stream: {stream_descriptor: {name: s.name}, stream_state: {cursor: FUTURE}},
    }));
    const run = await read(7, future, undefined, 'future');
    expectOk(run);
    expect(records(run.messages)).toHaveLength(0);
    for (const s of streams) {
      const own = ofStream(states(run.messages), s.name);
      expect(own.length).toBeGreaterThanOrEqual(1);
      // The state is kept, not moved back to the present.
      for (const m of own)
        expect(Date.parse(m.state.stream.stream_state.cursor)).toBeGreaterThanOrEqual(Date.parse(FUTURE));
    }
  });
});
