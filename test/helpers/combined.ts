// The combined layout as tests read it: the records of the one stream `responses`, their truth, and
// the per-quest entries of its state.

import {Simulator} from '../../simulator';
import {isDeepStrictEqual} from 'util';

import {RecordMessage, records, repeated, RunResult, StateMessage} from './connector';

export interface ResponsesRecord {
  quest_id: string;
  response_id: string;
  created: string | null;
  answers: Record<string, string | null>;
  _questback_window_start: string;
  _questback_window_end: string;
}

/** The records of one stream of a run (or of records), as their data. */
export const streamData = <T>(run: Pick<RunResult, 'messages'> | RecordMessage[], stream: string): T[] =>
  (Array.isArray(run) ? run : records(run.messages))
    .filter((r) => r.record.stream === stream)
    .map((r) => r.record.data as unknown as T);

/** The records of `responses`, as their data. */
export const responses = (run: Pick<RunResult, 'messages'> | RecordMessage[]): ResponsesRecord[] =>
  streamData<ResponsesRecord>(run, 'responses');

/** The quests of the `responses` stream's state, keyed by quest id. */
export function questEntries(state: StateMessage['state'][]): Record<string, {cursor: string}> {
  const entry = state.find((s) => s.stream.stream_descriptor.name === 'responses');
  return (
    (entry?.stream.stream_state as unknown as {quests: Record<string, {cursor: string}>} | undefined)?.quests ?? {}
  );
}

/** Every record of the quest is a row of the simulator's truth, cell for cell, keyed by header text; each once. */
export function expectQuestExact(
  sim: Simulator,
  questId: string,
  got: ResponsesRecord[],
  expectedIds?: string[]
): void {
  const {header, rows} = sim.groundTruth(questId);
  const mine = got.filter((r) => r.quest_id === questId);
  const ids = mine.map((r) => r.response_id);
  expect({questId, duplicates: repeated(ids)}).toEqual({questId, duplicates: []});
  expect([...ids].sort()).toEqual((expectedIds ?? rows.map((r) => r[0])).sort());
  const byId = new Map(rows.map((r) => [r[0], r]));
  // One comparison for all: the records whose answers or creation time differ from the truth.
  const differing = mine.filter((record) => {
    const row = byId.get(record.response_id) as string[];
    const want = Object.fromEntries(header.map((h, i) => [h, row[i] === '' ? null : row[i]]));
    return !isDeepStrictEqual(record.answers, want) || record.created !== row[header.indexOf('Created')];
  });
  expect(differing).toEqual([]);
}
