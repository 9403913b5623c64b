// bin/main's output loaded into a real PostgreSQL server the way Airbyte's Postgres destination loads it
// (test/helpers/postgres.ts), for Norwegian, German and long multiple-choice headers, before and after a
// question is inserted into the running surveys: every cell lands in its own question's column, and
// keeps doing so after the edit.

import {errorTraces, runConnector, stateFile, tempDir, writeJson} from '../helpers/connector';
import {configuredCatalog, simConfig, streamOf} from '../helpers/fixtures';
import {ConfiguredStream, loadSync, Postgres, startPostgres, StreamLoad} from '../helpers/postgres';
import {AirbyteMessageJson} from '../helpers/protocol';
import {ExportSettings, Simulator, startSimulator} from '../simulator';

const DAY = 86_400_000;
const NORSK = '7b7b7b7b-0000-4000-8000-000000000001';
const DEUTSCH = '7b7b7b7b-0000-4000-8000-000000000002';
const LONG = '7b7b7b7b-0000-4000-8000-000000000003';
/** Without responses at first: its `created` must not change type when they arrive. */
const EMPTY = '7b7b7b7b-0000-4000-8000-000000000004';
const EDITED = [NORSK, DEUTSCH, LONG];
const QUESTS = [...EDITED, EMPTY];
const SETTINGS: ExportSettings = {expandMultipleChoiceToColumns: true, includeRespondentInformation: true};
const CONNECTOR_FIELDS = ['_questback_quest_id', '_questback_window_start', '_questback_window_end'];

type Catalog = {streams: ConfiguredStream[]};

let sim: Simulator;
let pg: Postgres;
let dir: string;
let config: string;

beforeAll(async () => {
  [sim, pg] = await Promise.all([
    startSimulator({
      seed: 1616,
      exportDurationMs: 30,
      quests: [
        {
          id: NORSK,
          rows: 14,
          columns: 9,
          titles: 'norwegian',
          firstCreatedAt: new Date(Date.now() - 9 * DAY).toISOString(),
        },
        {
          id: DEUTSCH,
          rows: 11,
          columns: 9,
          titles: 'german',
          firstCreatedAt: new Date(Date.now() - 8 * DAY).toISOString(),
        },
        {id: EMPTY, rows: 0, columns: 5},
        {id: LONG, rows: 16, columns: 12, titles: 'long', firstCreatedAt: new Date(Date.now() - 7 * DAY).toISOString()},
      ],
    }),
    startPostgres(),
  ]);
  dir = tempDir();
  config = writeJson(
    dir,
    'config.json',
    simConfig(sim, {quest_ids: QUESTS, expand_multiple_choice_to_columns: true, include_respondent_information: true})
  );
}, 120_000);
afterAll(async () => {
  await Promise.all([sim?.close(), pg?.stop()]);
});

/** Discover, and the configured catalog Airbyte builds for "Incremental | Append + Deduped". */
async function discover(name: string): Promise<Catalog> {
  const run = await runConnector(['discover', '--config', config]);
  expect(run.code).toBe(0);
  const catalog = configuredCatalog(run.messages, 'incremental') as unknown as Catalog;
  for (const s of catalog.streams) {
    s.destination_sync_mode = 'append_dedup';
    s.primary_key = s.stream.source_defined_primary_key;
  }
  writeJson(dir, name, catalog);
  return catalog;
}

async function read(catalog: string, state?: string): Promise<AirbyteMessageJson[]> {
  const run = await runConnector([
    'read',
    '--config',
    config,
    '--catalog',
    catalog,
    ...(state ? ['--state', state] : []),
  ]);
  expect(errorTraces(run.messages)).toEqual([]);
  expect(run.code).toBe(0);
  return run.messages;
}

/**
 * The header text of every answer column, from the configured schema's titles (a property without a
 * title is named as its header). The connector's own fields have none.
 */
function headersOf(catalog: Catalog, questId: string): Map<string, string> {
  const stream = catalog.streams.find((s) => s.stream.name === streamOf(questId));
  const properties = Object.entries(stream?.stream.json_schema.properties ?? {});
  return new Map(
    properties.filter(([name]) => !CONNECTOR_FIELDS.includes(name)).map(([name, p]) => [name, p.title ?? name])
  );
}

/** The cells of the warehouse table that differ from the simulator's truth, read through `headers`. */
async function mismatches(questId: string, load: StreamLoad, headers: Map<string, string>): Promise<string[]> {
  const truth = sim.groundTruth(questId, SETTINGS);
  const cellOf = new Map(truth.header.map((h, i) => [h, i]));
  const rowOf = new Map(truth.rows.map((row) => [row[0], row]));
  const table = await pg.rows(`SELECT * FROM "${load.table}"`);
  const found: string[] = [];
  if (table.length !== truth.rows.length) found.push(`${table.length} rows, the truth has ${truth.rows.length}`);
  for (const header of truth.header) {
    if (![...headers.values()].includes(header)) found.push(`no column for ${JSON.stringify(header)}`);
  }
  for (const row of table) {
    const id = String(row.response_id);
    const expected = rowOf.get(id);
    if (!expected) {
      found.push(`row ${id} is not in the truth`);
      continue;
    }
    for (const [column, header] of headers) {
      const i = cellOf.get(header);
      if (i === undefined) {
        found.push(`column ${column} holds ${JSON.stringify(header)}, which the export no longer has`);
        continue;
      }
      const want = expected[i] === '' ? null : expected[i];
      const got = row[load.columns.get(column) as string];
      const same = column === 'created' ? Date.parse(String(got)) === Date.parse(String(want)) : got === want;
      if (!same)
        found.push(`row ${id}, ${column} (${header}): ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`);
    }
  }
  return found.slice(0, 10);
}

/** What every load must show: each property in a column of its own name, every timestamp cast. */
function expectCleanLoad(loads: Map<string, StreamLoad>): void {
  for (const id of QUESTS) {
    const load = loads.get(streamOf(id)) as StreamLoad;
    const columns = [...load.columns.values()];
    expect(new Set(columns).size).toBe(columns.length);
    expect([...load.columns].filter(([property, column]) => property !== column)).toEqual([]);
    expect({stream: streamOf(id), failedCasts: load.failedCasts}).toEqual({stream: streamOf(id), failedCasts: 0});
  }
}

describe('loaded into PostgreSQL as Airbyte loads it', () => {
  let before: Catalog;
  let firstRead: AirbyteMessageJson[];
  const truthBefore = new Map<string, {header: string[]; rows: string[][]}>();

  test('every non-empty cell of the truth is in its own column, in a column of its own, and every timestamp casts', async () => {
    before = await discover('before.json');
    firstRead = await read(`${dir}/before.json`);
    const loads = await loadSync(pg, before, firstRead);
    expectCleanLoad(loads);
    for (const id of QUESTS) {
      const load = loads.get(streamOf(id)) as StreamLoad;
      expect(load.columns.get('created')).toBe('created');
      expect(await mismatches(id, load, headersOf(before, id))).toEqual([]);
      truthBefore.set(id, sim.groundTruth(id, SETTINGS));
    }
    // The long multiple-choice quest is the one whose names used to clash in Postgres.
    expect([...headersOf(before, LONG).values()].filter((h) => h.length > 63).length).toBeGreaterThan(10);
  });

  test('after a question is inserted mid-survey, every old column still holds only its own question', async () => {
    sim.insertQuestion(NORSK, 1, {kind: 'rating', title: 'Hvor fornøyd er du med nettsidene våre? (1-5)'});
    sim.insertQuestion(DEUTSCH, 0, {
      kind: 'single',
      title: 'Wie oft nutzen Sie unseren Service?',
      options: ['Täglich', 'Wöchentlich', 'Selten'],
    });
    // Before the other multiple choices, with their long start and two of their options.
    sim.insertQuestion(LONG, 2, {
      kind: 'multi',
      title:
        'Thinking about your most recent experience with our customer service team, which channels did you try first? (new, several answers possible)',
      options: ['E-mail', 'Phone', 'Walk-in'],
    });
    for (const id of QUESTS) sim.addResponses(id, 4);
    await new Promise((resolve) => setTimeout(resolve, 20));

    const after = await discover('after.json');
    const state = writeJson(dir, 'state.json', stateFile(firstRead));
    const loads = await loadSync(pg, after, await read(`${dir}/after.json`, state));
    expectCleanLoad(loads);
    // The empty quest's table was made with `created` a timestamptz; its first rows load into it (the
    // loader fails on a column whose type changes).
    expect(await mismatches(EMPTY, loads.get(streamOf(EMPTY)) as StreamLoad, headersOf(after, EMPTY))).toEqual([]);
    expect(sim.groundTruth(EMPTY).rows).toHaveLength(4);
    for (const id of EDITED) {
      const old = headersOf(before, id);
      const now = headersOf(after, id);
      // The simulator's edit changed nothing but the new question: the old cells are as they were.
      const was = truthBefore.get(id) as {header: string[]; rows: string[][]};
      const is = sim.groundTruth(id, SETTINGS);
      expect(is.header.length).toBeGreaterThan(was.header.length);
      for (const [k, row] of was.rows.entries()) {
        expect(was.header.map((h, i) => [h, row[i]])).toEqual(
          was.header.map((h) => [h, is.rows[k][is.header.indexOf(h)]])
        );
      }
      // Rows read before the edit and rows read after it, each column against the header it had from
      // the first discover on. (Once the `columns` stream maps every column to its header in the
      // warehouse, assert here that joining it yields this same map.)
      const load = loads.get(streamOf(id)) as StreamLoad;
      expect(await mismatches(id, load, new Map([...now, ...old]))).toEqual([]);
      // Every old column still names the header it named before; the new ones are new names.
      expect([...old].filter(([column, header]) => now.get(column) !== header)).toEqual([]);
      expect(now.size).toBeGreaterThan(old.size);
    }
  });
});
