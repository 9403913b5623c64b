// CAT "incremental" group, replicated on the built bin/main: two sequential reads, a resume from
// every intermediate checkpoint (with several window sizes), and a state far in the future.

import {simConfig, startWorld, streamOf, World} from '../helpers/fixtures';
import {RecordMessage, records, RunResult, stateFile, StateMessage, states, writeJson} from '../helpers/connector';
import {Simulator} from '../../simulator';
import {
  AirbyteStreamJson,
  catalogOf,
  COLUMNS_CURSOR,
  COLUMNS_STREAM,
  configuredCatalogOf,
  CURSOR_FIELD,
  daysAgo,
  PRIMARY_KEY,
  StateInput,
  summary,
} from './support';

const QUEST_A = 'b1b1b1b1-2c2c-4d3d-8e4e-5f5f5f5f5f5f';
const QUEST_B = 'c2c2c2c2-3d3d-4e4e-9f5f-606060606060';
const ROWS: Record<string, number> = {[streamOf(QUEST_A)]: 60, [streamOf(QUEST_B)]: 25};
const FUTURE = '2999-12-31T23:59:59.000Z';

const isColumns = (r: RecordMessage): boolean => r.record.stream === COLUMNS_STREAM;
/** The record's cursor and primary key as its stream declares them (the columns stream has its own). */
const cursorOf = (r: RecordMessage): number =>
  Date.parse(String(r.record.data[isColumns(r) ? COLUMNS_CURSOR : CURSOR_FIELD]));
const keyOf = (r: RecordMessage): string =>
  isColumns(r)
    ? `${String(r.record.data.quest_id)}/${String(r.record.data.column)}`
    : String(r.record.data[PRIMARY_KEY]);
const ofStream = <T extends RecordMessage | StateMessage>(items: T[], stream: string): T[] =>
  items.filter((x) => ('record' in x ? x.record.stream : x.state.stream.stream_descriptor.name) === stream);

function expectOk(run: RunResult): void {
  expect(run.invalid).toEqual([]);
  expect({code: run.code, summary: run.code === 0 ? '' : summary(run)}).toEqual({code: 0, summary: ''});
}

/** Runs the jobs with at most `limit` at once (two cores: a few connector processes at a time). */
async function inBatches<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>
): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += limit)
    out.push(...(await Promise.all(items.slice(i, i + limit).map((item, j) => fn(item, i + j)))));
  return out;
}

describe('incremental', () => {
  let world: World;
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
    return world.run(args);
  };

  /**
   * Resumes from every intermediate STATE of a first read, stream by stream. Quest streams have
   * several (one per created export and per finished window); the columns stream writes one STATE
   * per read, so it has none to resume from.
   */
  async function resumeFromEveryCheckpoint(windowDays: number, first: RunResult): Promise<void> {
    const checkpoints: StateMessage[] = [];
    for (const s of streams) {
      const own = ofStream(states(first.messages), s.name);
      if (s.name === COLUMNS_STREAM) {
        expect(own).toHaveLength(1);
        continue;
      }
      // Several windows, so several checkpoints before the final one, at several cursors.
      const intermediate = own.slice(0, -1);
      const cursors = new Set(intermediate.map((c) => c.state.stream.stream_state.cursor));
      expect({stream: s.name, intermediate: intermediate.length >= 3, cursors: cursors.size >= 3}).toEqual({
        stream: s.name,
        intermediate: true,
        cursors: true,
      });
      // One checkpoint per cursor (the last one at it): STATEs that share a cursor only record exports
      // created meanwhile, and resuming from them tests nothing new (they cost a connector run each).
      const lastAt = new Map(intermediate.map((c) => [c.state.stream.stream_state.cursor, c]));
      checkpoints.push(...lastAt.values());
    }
    // Checkpoints can share a cursor (an export created within a window): each gets a state file of its own.
    const results = await inBatches(checkpoints, 6, (c, i) => {
      const name = c.state.stream.stream_descriptor.name;
      return read(windowDays, [c.state], name, `w${windowDays}-${name}-${i}`);
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
    world = await startWorld({
      seed: 21,
      exportDurationMs: 20,
      quests: [
        {id: QUEST_A, rows: 60, firstCreatedAt: daysAgo(30)},
        {id: QUEST_B, rows: 25, columns: 8, firstCreatedAt: daysAgo(20)},
      ],
    });
    ({sim, dir} = world);
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
    // Airbyte's incremental checks read the streams that support incremental (not the full-refresh-only invitations).
    streams = catalogOf(await world.run(['discover', '--config', configFiles.get(7) as string])).filter((s) =>
      s.supported_sync_modes?.includes('incremental')
    );
    read1 = await read(7);
  });
  afterAll(async () => {
    await world.close();
  });

  /** The columns of both quests: every column of a quest stream's schema but the connector's own. */
  function columnCount(): number {
    return streams
      .filter((s) => s.name !== COLUMNS_STREAM)
      .flatMap((s) => Object.keys(s.json_schema.properties ?? {}))
      .filter((p) => !p.startsWith('_questback_')).length;
  }

  test('read 1 emits records and state', () => {
    expectOk(read1);
    expect(streams.map((s) => s.name)).toContain(COLUMNS_STREAM);
    for (const s of streams) {
      const own = ofStream(records(read1.messages), s.name);
      expect({stream: s.name, records: own.length}).toEqual({
        stream: s.name,
        records: s.name === COLUMNS_STREAM ? columnCount() : ROWS[s.name],
      });
      const cursors = ofStream(states(read1.messages), s.name).map((m) =>
        Date.parse(m.state.stream.stream_state.cursor)
      );
      expect(cursors.length).toBeGreaterThan(0);
      // Checkpoints never go back (a STATE for a newly created export repeats the cursor), they do
      // move on over the read, and the last one covers every record emitted.
      expect({stream: s.name, back: cursors.filter((c, i) => i > 0 && c < cursors[i - 1])}).toEqual({
        stream: s.name,
        back: [],
      });
      if (s.name !== COLUMNS_STREAM) expect(new Set(cursors).size).toBeGreaterThan(1);
      expect(Math.max(...own.map(cursorOf))).toBeLessThanOrEqual(cursors[cursors.length - 1]);
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
      // A sync reads up to the whole second before it starts (windows end on whole seconds): the new rows lie before it.
      await world.clock.sleep(1_030);
      read2 = await read(7, finalState, undefined, 'final-state');
    });

    test("read 2 from read 1's final state returns only records with cursor >= that state", () => {
      expectOk(read2);
      expect(finalState.map((s) => s.stream.stream_descriptor.name).sort()).toEqual(streams.map((s) => s.name).sort());
      for (const s of finalState) {
        const name = s.stream.stream_descriptor.name;
        const got = ofStream(records(read2.messages), name);
        // The columns stream reports every column again in each sync.
        expect({stream: name, records: got.length}).toEqual({
          stream: name,
          records: name === COLUMNS_STREAM ? columnCount() : added[name],
        });
        const state = Date.parse(s.stream.stream_state.cursor);
        expect({stream: name, before: got.filter((r) => cursorOf(r) < state).map(keyOf)}).toEqual({
          stream: name,
          before: [],
        });
      }
    });

    test('read 2 repeats no record of read 1 (quest streams)', () => {
      const quests = (run: RunResult): RecordMessage[] => records(run.messages).filter((r) => !isColumns(r));
      const seen = new Set(quests(read1).map((r) => `${r.record.stream}/${keyOf(r)}`));
      expect(quests(read2).length).toBeGreaterThan(0);
      expect(
        quests(read2)
          .filter((r) => seen.has(`${r.record.stream}/${keyOf(r)}`))
          .map(keyOf)
      ).toEqual([]);
    });

    test('the columns stream reports the same columns again, first seen in read 1 and seen in read 2', () => {
      const columns = (run: RunResult): RecordMessage[] => records(run.messages).filter(isColumns);
      const before = new Map(columns(read1).map((r) => [keyOf(r), r.record.data]));
      const after = columns(read2);
      expect(after.map(keyOf).sort()).toEqual([...before.keys()].sort());
      const stateCursor = Date.parse(
        finalState.find((s) => s.stream.stream_descriptor.name === COLUMNS_STREAM)?.stream.stream_state.cursor ?? ''
      );
      for (const r of after) {
        const was = before.get(keyOf(r));
        expect({column: keyOf(r), first_seen_at: r.record.data.first_seen_at}).toEqual({
          column: keyOf(r),
          first_seen_at: was?.first_seen_at,
        });
        expect(cursorOf(r)).toBeGreaterThanOrEqual(stateCursor);
      }
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
      // Not kept (it would hide every response created before it): moved back to the sync's time at the latest.
      for (const m of own) expect(Date.parse(m.state.stream.stream_state.cursor)).toBeLessThan(Date.parse(FUTURE));
    }
  });
});
