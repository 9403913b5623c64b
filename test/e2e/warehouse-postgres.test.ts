// bin/main's output loaded into a real PostgreSQL (PGlite, test/helpers/postgres.ts) the way Airbyte's Postgres
// destination loads it, for Norwegian, German and long multiple-choice headers, before and after a
// question is inserted into the running surveys: every cell lands in its own question's column, keeps
// doing so after the edit, and the `columns` table names the header of every answer column. Then the
// `combined` layout into a second schema: `answers` as jsonb, every cell under its header text.
// Then the `long` layout into a third: every non-empty cell one row of `answers`, under its question
// and option, a number where the cell is one, old column names kept across a survey edit; and the
// rating-per-month query of each layout. The PostgreSQL queries of docs/warehouse-sql.md are run here verbatim.

import {warehouseNames} from '../../src/sync/streams/column-names';
import {CONNECTOR_FIELDS} from '../../src/sync/streams/record-columns';
import {answerKeys} from '../../src/sync/streams/quests-stream';
import {errorTraces, records, runConnector, stateFile, tempDir, writeJson} from '../helpers/connector';
import {destinationColumns} from '../helpers/destinations';
import {configuredCatalog, simConfig, streamOf} from '../helpers/fixtures';
import {answerKey, truthAnswers} from '../helpers/long';
import {
  ConfiguredStream,
  Database,
  DOC_QUERIES,
  docQuery,
  loadSync,
  Postgres,
  startPostgres,
  StreamLoad,
} from '../helpers/postgres';
import {AirbyteMessageJson} from '../helpers/protocol';
import {ExportSettings, Simulator, startSimulator} from '../../simulator';
import {isResponseStream} from '../helpers/streams';

const DAY = 86_400_000;
// The quests of the examples in docs/warehouse-sql.md.
const NORSK = '5e0c8a3b-9f1d-4c27-b6e2-7a1d3c9f0e11';
const DEUTSCH = '5e0c8a3b-9f1d-4c27-b6e2-7a1d3c9f0e12';
const LONG = '5e0c8a3b-9f1d-4c27-b6e2-7a1d3c9f0e13';
/** Without responses at first: its `created` must not change type when they arrive. */
const EMPTY = '5e0c8a3b-9f1d-4c27-b6e2-7a1d3c9f0e14';
/** Only in the combined layout: byte-identical repeated headers, quotes of both kinds. */
const REPEATS = '5e0c8a3b-9f1d-4c27-b6e2-7a1d3c9f0e15';
/** The `long` layout's and the rating-per-month examples: both quests ask RATING, over several months. */
const RATED_A = '7a7ed000-2026-4000-8000-00000000000a';
const RATED_B = '7a7ed000-2026-4000-8000-00000000000b';
const RATED = [RATED_A, RATED_B];
const RATING = 'How satisfied are you overall? (1-5)';
const EDITED = [NORSK, DEUTSCH, LONG];
const QUESTS = [...EDITED, EMPTY];
const SETTINGS: ExportSettings = {expandMultipleChoiceToColumns: true, includeRespondentInformation: true};

type Catalog = {streams: ConfiguredStream[]};

let sim: Simulator;
let pg: Postgres;
let dir: string;
/** The connector's config in the per_quest layout (the default), and in the combined layout. */
let config: string;
let combinedConfig: string;

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
        {
          id: REPEATS,
          rows: 6,
          firstCreatedAt: new Date(Date.now() - 6 * DAY).toISOString(),
          questionTitles: [
            'Hvor fornøyd er du? (1-5)',
            'Kommentar til «oss»',
            'Hva bruker du? Velg "alle" som passer',
            "What's your team's name?",
            'Kommentar til «oss»',
            'Hvor fornøyd er du? (1-5)',
          ],
        },
        {
          id: RATED_A,
          rows: 140,
          columns: 7,
          firstCreatedAt: new Date(Date.now() - 100 * DAY).toISOString(),
          questionTitles: [
            RATING,
            'What could we do better?',
            'Which channels do you use?',
            'How did you hear about us?',
            'How did you hear about us? (other)',
            'When did you last visit us?',
            'How many visits this year?',
          ],
        },
        {
          id: RATED_B,
          rows: 90,
          columns: 4,
          titles: 'norwegian',
          firstCreatedAt: new Date(Date.now() - 70 * DAY).toISOString(),
          questionTitles: [RATING, 'Kommentar til «oss»', 'Hva bruker du? Velg "alle" som passer', 'Hvor bor du?'],
        },
      ],
    }),
    startPostgres(),
  ]);
  dir = tempDir();
  const common = {expand_multiple_choice_to_columns: true, include_respondent_information: true};
  config = writeJson(dir, 'config.json', simConfig(sim, {quest_ids: QUESTS, ...common}));
  combinedConfig = writeJson(
    dir,
    'combined-config.json',
    // A day of lookback: the second sync emits some rows again, which the destination dedups.
    simConfig(sim, {quest_ids: [...QUESTS, REPEATS], stream_layout: 'combined', lookback_days: 1, ...common})
  );
}, 300_000);
afterAll(async () => {
  await Promise.all([sim?.close(), pg?.stop()]);
});

/** Discover, and the configured catalog Airbyte builds for "Incremental | Append + Deduped". */
async function discover(configPath: string, name: string): Promise<Catalog> {
  const run = await runConnector(['discover', '--config', configPath]);
  expect(run.code).toBe(0);
  const catalog = configuredCatalog(run.messages, 'incremental') as unknown as Catalog;
  // The answers' tables (the response stream and columns): invitations have a warehouse case of their own (e2e/invitations).
  catalog.streams = catalog.streams.filter((s) => isResponseStream(s.stream.name) || s.stream.name === 'columns');
  for (const s of catalog.streams) {
    s.destination_sync_mode = 'append_dedup';
    s.primary_key = s.stream.source_defined_primary_key;
  }
  writeJson(dir, name, catalog);
  return catalog;
}

async function read(configPath: string, catalog: string, state?: string): Promise<AirbyteMessageJson[]> {
  const run = await runConnector([
    'read',
    '--config',
    configPath,
    '--catalog',
    catalog,
    ...(state ? ['--state', state] : []),
  ]);
  expect(errorTraces(run.messages)).toEqual([]);
  expect(run.code).toBe(0);
  return run.messages;
}

const sqlText = (s: string) => `'${s.replace(/'/g, "''")}'`;
/** A cell as the warehouse holds it: an empty cell is null. */
const cell = (value: string | undefined) => (value === '' || value === undefined ? null : value);
/** The header text of a `columns` row, from its question and option parts. */
const headerOf = (r: Record<string, unknown>) =>
  r.option === null ? String(r.question) : `${r.question}: ${r.option}`;

/**
 * The header text of every answer column of the quest's table, as the `columns` table gives it. Asserts
 * the join: every column of the table but the connector's `_questback_*` and Airbyte's `_airbyte_*`
 * has exactly one `columns` row of the quest whose `column`, named as the destination names it, is
 * that column; and the destination keeps those names, so a plain SQL join on `column` finds them.
 */
async function headersFromColumnsTable(questId: string, load: StreamLoad): Promise<Map<string, string>> {
  const tableColumns = (
    await pg.rows(`SELECT column_name FROM information_schema.columns WHERE table_name = ${sqlText(load.table)}`)
  )
    .map((r) => String(r.column_name))
    .filter((c) => !c.startsWith('_questback_') && !c.startsWith('_airbyte_'));
  const rows = (await pg.rows(`SELECT "column", header FROM columns WHERE quest_id = ${sqlText(questId)}`)).map((r) => {
    const property = String(r.column);
    const column = load.columns.get(property) ?? destinationColumns([property], 'postgres')[0];
    return {property, column, header: String(r.header)};
  });
  const joined = tableColumns.map((column) => [column, rows.filter((r) => r.column === column).length]);
  expect({questId, columnsWithoutOneRow: joined.filter(([, n]) => n !== 1)}).toEqual({
    questId,
    columnsWithoutOneRow: [],
  });
  expect(rows.filter((r) => r.column !== r.property)).toEqual([]);
  return new Map(rows.filter((r) => tableColumns.includes(r.column)).map((r) => [r.property, r.header]));
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
      const want = cell(expected[i]);
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

/** Every answer column of every quest table holds its own question's cells, read through the `columns` table. */
async function expectColumnsJoin(loads: Map<string, StreamLoad>): Promise<void> {
  for (const id of QUESTS) {
    const load = loads.get(streamOf(id)) as StreamLoad;
    expect(await mismatches(id, load, await headersFromColumnsTable(id, load))).toEqual([]);
  }
}

/** The header text of every answer column, from the configured schema's titles (a property without one is named as its header). */
function headersOf(catalog: Catalog, questId: string): Map<string, string> {
  const stream = catalog.streams.find((s) => s.stream.name === streamOf(questId));
  const properties = Object.entries(stream?.stream.json_schema.properties ?? {});
  return new Map(
    properties.filter(([name]) => !CONNECTOR_FIELDS.has(name)).map(([name, p]) => [name, p.title ?? name])
  );
}

describe('loaded into PostgreSQL as Airbyte loads it', () => {
  let before: Catalog;
  let firstRead: AirbyteMessageJson[];
  const truthBefore = new Map<string, {header: string[]; rows: string[][]}>();

  test('every non-empty cell of the truth is in its own column, in a column of its own, every timestamp casts, and `columns` names its header', async () => {
    before = await discover(config, 'before.json');
    firstRead = await read(config, `${dir}/before.json`);
    const loads = await loadSync(pg, before, firstRead);
    expectCleanLoad(loads);
    for (const id of QUESTS) {
      const load = loads.get(streamOf(id)) as StreamLoad;
      expect(load.columns.get('created')).toBe('created');
      expect(await mismatches(id, load, headersOf(before, id))).toEqual([]);
      truthBefore.set(id, sim.groundTruth(id, SETTINGS));
    }
    await expectColumnsJoin(loads);
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
    // A sync reads up to the whole second before it starts (windows end on whole seconds): the new rows lie before it.
    await sim.clock.sleep(1_020);

    const after = await discover(config, 'after.json');
    const state = writeJson(dir, 'state.json', stateFile(firstRead));
    const loads = await loadSync(pg, after, await read(config, `${dir}/after.json`, state));
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
      // the first discover on.
      const load = loads.get(streamOf(id)) as StreamLoad;
      expect(await mismatches(id, load, new Map([...now, ...old]))).toEqual([]);
      // Every old column still names the header it named before; the new ones are new names.
      expect([...old].filter(([column, header]) => now.get(column) !== header)).toEqual([]);
      expect(now.size).toBeGreaterThan(old.size);
    }
    // The warehouse's own map agrees: the `columns` table joins every column, old and new, to its header.
    await expectColumnsJoin(loads);
  });

  test('the per_quest queries of docs/warehouse-sql.md', async () => {
    const norsk = sim.groundTruth(NORSK, SETTINGS);
    const listed = await docQuery(pg, 'per-quest-columns');
    expect(listed.map((r) => r.header)).toEqual(norsk.header);
    expect(listed.map(headerOf)).toEqual(norsk.header);
    expect(listed.map((r) => Number(r.position))).toEqual(norsk.header.map((_, i) => i + 1));

    // One column, counted per answer and labelled with its question.
    const question = 'Jobber du hjemmefra?';
    const at = norsk.header.indexOf(question);
    const counts = new Map<string | null, number>();
    for (const row of norsk.rows) counts.set(cell(row[at]), (counts.get(cell(row[at])) ?? 0) + 1);
    const counted = await docQuery(pg, 'per-quest-one-column');
    expect(counted.map((r) => [r.question, r.answer, Number(r.responses)])).toEqual(
      [...counts].sort(([a], [b]) => (a ?? '\uffff').localeCompare(b ?? '\uffff')).map(([a, n]) => [question, a, n])
    );

    // Every column of the long multiple-choice quest as rows, each with its question and option.
    const long = sim.groundTruth(LONG, SETTINGS);
    const rowOf = new Map(long.rows.map((row) => [row[0], row]));
    const cells = await docQuery(pg, 'per-quest-all-columns');
    expect(cells).toHaveLength(long.rows.length * long.header.length);
    const wrong = cells.filter((r) => {
      const i = long.header.indexOf(headerOf(r));
      const want = cell(rowOf.get(String(r.response_id))?.[i]);
      return (
        i < 0 ||
        (long.header[i] === 'Created' ? Date.parse(String(r.answer)) !== Date.parse(String(want)) : r.answer !== want)
      );
    });
    expect(wrong.slice(0, 5)).toEqual([]);
  });
});

describe('the combined layout loaded into PostgreSQL as Airbyte loads it', () => {
  const ALL = [...QUESTS, REPEATS];
  let db: Database;

  /** Every row of the quests' truth, keyed by quest and response id, with its answers keyed as the connector keys them. */
  function truthRows(): Map<string, {questId: string; answers: [string, string | null][]}> {
    const out = new Map<string, {questId: string; answers: [string, string | null][]}>();
    for (const questId of ALL) {
      const {header, rows} = sim.groundTruth(questId, SETTINGS);
      const keys = answerKeys(header);
      for (const row of rows)
        out.set(`${questId} ${row[0]}`, {questId, answers: keys.map((k, i) => [k, cell(row[i])])});
    }
    return out;
  }

  test('`answers` is jsonb with every cell under its header text exactly as exported, one row per quest and response', async () => {
    db = await pg.database('combined');
    const catalog = await discover(combinedConfig, 'combined.json');
    expect(catalog.streams.map((s) => s.stream.name).sort()).toEqual(['columns', 'responses']);
    const first = await read(combinedConfig, `${dir}/combined.json`);
    await loadSync(db, catalog, first);
    for (const id of ALL) sim.addResponses(id, 2);
    // A sync reads up to the whole second before it starts (windows end on whole seconds): the new rows lie before it.
    await sim.clock.sleep(1_020);
    const state = writeJson(dir, 'combined-state.json', stateFile(first));
    const second = await read(combinedConfig, `${dir}/combined.json`, state);
    const loads = await loadSync(db, catalog, second);
    expect([...loads.values()].map((l) => l.failedCasts)).toEqual([0, 0]);

    const types = await db.rows(
      `SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'responses' ORDER BY column_name`
    );
    expect(Object.fromEntries(types.map((t) => [t.column_name, t.data_type]))).toEqual({
      _questback_window_end: 'timestamp with time zone',
      _questback_window_start: 'timestamp with time zone',
      answers: 'jsonb',
      created: 'timestamp with time zone',
      quest_id: 'character varying',
      response_id: 'character varying',
    });

    // Dedup on (quest_id, response_id): the lookback emitted rows again, the table has each once.
    const keyOf = (m: AirbyteMessageJson[]) =>
      records(m)
        .filter((r) => r.record.stream === 'responses')
        .map((r) => `${r.record.data.quest_id} ${r.record.data.response_id}`);
    const firstKeys = new Set(keyOf(first));
    const again = keyOf(second).filter((k) => firstKeys.has(k));
    expect(again.length).toBeGreaterThan(0);
    const truth = truthRows();
    const table = await db.rows(`SELECT quest_id || ' ' || response_id AS key FROM responses`);
    expect(table.map((r) => r.key).sort()).toEqual([...truth.keys()].sort());

    // Every cell of the truth, read as `answers ->> '<header>'`: null for an empty cell.
    for (const questId of ALL) {
      const {header} = sim.groundTruth(questId, SETTINGS);
      const keys = answerKeys(header);
      const got = await db.rows(
        `SELECT response_id, ${keys.map((k, i) => `answers ->> ${sqlText(k)} AS c${i}`).join(', ')} FROM responses WHERE quest_id = ${sqlText(questId)}`
      );
      const wrong: string[] = [];
      for (const row of got) {
        const want = truth.get(`${questId} ${row.response_id}`)?.answers ?? [];
        keys.forEach((k, i) => {
          if (row[`c${i}`] !== want[i]?.[1])
            wrong.push(`${questId} ${row.response_id} ${k}: ${JSON.stringify(row[`c${i}`])}`);
        });
      }
      expect(wrong.slice(0, 5)).toEqual([]);
      // The keys are exactly the header texts, the repeats numbered: nothing more, nothing lost.
      const keySets = await db.rows(
        `SELECT DISTINCT array(SELECT jsonb_object_keys(answers)) AS keys FROM responses WHERE quest_id = ${sqlText(questId)}`
      );
      expect(keySets.map((r) => [...(r.keys as string[])].sort())).toEqual([[...keys].sort()]);
    }
    // Norwegian, German and long multiple-choice headers, and a header repeated byte for byte.
    const all = ALL.flatMap((id) => answerKeys(sim.groundTruth(id, SETTINGS).header));
    expect(all).toEqual(expect.arrayContaining(['Kommentar til «oss» (2)', 'Hvor fornøyd er du? (1-5) (2)']));
    expect(all.filter((k) => k.length > 63 && k.includes(': ')).length).toBeGreaterThan(10);
  });

  test('the combined queries of docs/warehouse-sql.md', async () => {
    const truth = truthRows();
    const deutsch = sim.groundTruth(DEUTSCH, SETTINGS);
    const query = DOC_QUERIES.get('combined-as-columns') ?? '';
    // Each `answers ->> '<header>' AS <alias>` of the query, checked against the truth's cell.
    const picked = [...query.matchAll(/answers ->> '((?:[^']|'')*)' AS (\w+)/g)].map((m) => [
      m[1].replace(/''/g, "'"),
      m[2],
    ]);
    expect(picked.length).toBeGreaterThan(3);
    for (const [header] of picked) expect(deutsch.header).toContain(header);
    const rows = await docQuery(db, 'combined-as-columns');
    expect(rows.map((r) => r.response_id).sort()).toEqual(deutsch.rows.map((r) => r[0]).sort());
    for (const row of rows) {
      const want = new Map(truth.get(`${DEUTSCH} ${row.response_id}`)?.answers);
      expect(picked.map(([header, alias]) => [header, row[alias]])).toEqual(
        picked.map(([header]) => [header, want.get(header)])
      );
    }

    const headers = new Map(ALL.map((id) => [id, sim.groundTruth(id, SETTINGS).header]));
    const cells = await docQuery(db, 'combined-with-questions');
    expect(cells).toHaveLength([...truth.values()].reduce((n, r) => n + r.answers.length, 0));
    const wrong = cells.filter((r) => {
      const answers = truth.get(`${r.quest_id} ${r.response_id}`)?.answers ?? [];
      const at = Number(r.position) - 1;
      // The position gives the key; the question and option give the header text without its repeat number.
      const header = headers.get(String(r.quest_id))?.[at];
      return answers[at]?.[1] !== r.answer || headerOf(r) !== header;
    });
    expect(wrong.slice(0, 5)).toEqual([]);
  });
});

describe('the loader', () => {
  test('a date-time that does not cast to timestamptz is nulled and counted as a failed cast', async () => {
    const db = await pg.database('casts');
    const catalog: Catalog = {
      streams: [
        {
          stream: {
            name: 'casts',
            json_schema: {properties: {id: {type: 'string'}, at: {type: 'string', format: 'date-time'}}},
            source_defined_primary_key: [['id']],
          },
          destination_sync_mode: 'append_dedup',
        },
      ],
    };
    const record = (id: string, at: string): AirbyteMessageJson => ({
      type: 'RECORD',
      record: {stream: 'casts', data: {id, at}},
    });
    const loads = await loadSync(db, catalog, [
      record('1', '2024-03-01T10:00:00.123+02:00'),
      record('2', '2024-02-30T00:00:00Z'),
      record('3', 'not a date'),
    ]);
    expect(loads.get('casts')?.failedCasts).toBe(2);
    expect(await db.rows('SELECT id, at FROM casts ORDER BY id')).toEqual([
      {id: '1', at: '2024-03-01T08:00:00.123+00:00'},
      {id: '2', at: null},
      {id: '3', at: null},
    ]);
  });
});

/** The truth's answer: per UTC month, the average rating (rounded half up to 2 places, as numeric round does) and the count. */
function ratingsPerMonth(): {month: string; average_rating: string; ratings: string}[] {
  const months = new Map<string, {sum: number; count: number}>();
  for (const id of RATED) {
    const {header, rows} = sim.groundTruth(id, SETTINGS);
    const at = header.indexOf(RATING);
    const created = header.indexOf('Created');
    for (const row of rows) {
      if (row[at] === '') continue;
      const month = months.get(row[created].slice(0, 7)) ?? {sum: 0, count: 0};
      month.sum += Number(row[at]);
      month.count++;
      months.set(row[created].slice(0, 7), month);
    }
  }
  return [...months]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([month, {sum, count}]) => ({
      month,
      // Integers only: floor((200 sum + count) / (2 count)) is the average in hundredths, rounded half up.
      average_rating: (Math.floor((200 * sum + count) / (2 * count)) / 100).toFixed(2),
      ratings: String(count),
    }));
}

/** The rows of a rating-per-month query, as text (PGlite gives a numeric as a number: 2.8 for 2.80). */
const asText = (rows: Record<string, unknown>[]) =>
  rows.map((r) => ({
    month: String(r.month),
    average_rating: Number(r.average_rating).toFixed(2),
    ratings: String(r.ratings),
  }));

/** A config for the RATED quests in `layout`, start_date before their first response. */
const ratedConfig = (layout: string) =>
  writeJson(
    dir,
    `rated-${layout}-config.json`,
    simConfig(sim, {
      quest_ids: RATED,
      stream_layout: layout,
      expand_multiple_choice_to_columns: true,
      include_respondent_information: true,
      start_date: new Date(Date.now() - 120 * DAY).toISOString(),
    })
  );

describe('the long layout loaded into PostgreSQL as Airbyte loads it', () => {
  let db: Database;
  let first: AirbyteMessageJson[];

  /** The table's rows that differ from the truth's answers, and the truth's answers the table lacks. */
  async function differences(): Promise<string[]> {
    const table = await db.rows(
      `SELECT quest_id, response_id, to_char(created AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created, "column", header, question, option, value, value_number FROM answers`
    );
    const truth = new Map(RATED.flatMap((id) => [...truthAnswers(sim, id, SETTINGS)]));
    const found: string[] = [];
    const keys = new Set<string>();
    for (const row of table) {
      const key = answerKey(row as {quest_id: string; response_id: string; column: string});
      keys.add(key);
      const want = truth.get(key);
      const got = {...row, value_number: row.value_number === null ? null : Number(row.value_number)};
      if (JSON.stringify(got) !== JSON.stringify(want)) found.push(`${key}: ${JSON.stringify(got)}`);
    }
    for (const key of truth.keys()) if (!keys.has(key)) found.push(`missing ${key}`);
    return found.slice(0, 5);
  }

  test('every non-empty cell of the truth is one row under its question and option, a number where the cell is one', async () => {
    db = await pg.database('long');
    const config = ratedConfig('long');
    const catalog = await discover(config, 'long.json');
    expect(catalog.streams.map((s) => s.stream.name)).toEqual(['answers', 'columns']);
    first = await read(config, `${dir}/long.json`);
    const loads = await loadSync(db, catalog, first);
    expect([...loads.values()].map((l) => l.failedCasts)).toEqual([0, 0]);
    const types = await db.rows(
      `SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'answers' ORDER BY column_name`
    );
    expect(Object.fromEntries(types.map((t) => [t.column_name, t.data_type]))).toEqual({
      _questback_window_end: 'timestamp with time zone',
      _questback_window_start: 'timestamp with time zone',
      column: 'character varying',
      created: 'timestamp with time zone',
      header: 'character varying',
      option: 'character varying',
      question: 'character varying',
      quest_id: 'character varying',
      response_id: 'character varying',
      value: 'character varying',
      value_number: 'numeric',
    });
    expect(await differences()).toEqual([]);
    // Options of expanded multiple choices under their question; numbers from ratings, options and counts.
    const [{options, numbers}] = await db.rows(
      `SELECT count(*) FILTER (WHERE option IS NOT NULL) AS options, count(value_number) AS numbers FROM answers`
    );
    expect(Number(options)).toBeGreaterThan(50);
    expect(Number(numbers)).toBeGreaterThan(200);
  });

  test('after a question is inserted mid-survey, every old answer keeps its column name; the new one is a new name', async () => {
    const before = await db.rows(`SELECT DISTINCT quest_id, header, "column" FROM answers`);
    sim.insertQuestion(RATED_A, 1, {kind: 'rating', title: 'How easy was it to find what you needed? (1-5)'});
    sim.insertQuestion(RATED_B, 0, {
      kind: 'multi',
      title: 'Hvilke kanaler brukte du?',
      options: ['E-post', 'Telefon', 'Chat'],
    });
    for (const id of RATED) sim.addResponses(id, 5);
    // A sync reads up to the whole second before it starts (windows end on whole seconds): the new rows lie before it.
    await sim.clock.sleep(1_020);
    const config = ratedConfig('long');
    const catalog = await discover(config, 'long-after.json');
    const state = writeJson(dir, 'long-state.json', stateFile(first));
    await loadSync(db, catalog, await read(config, `${dir}/long-after.json`, state));
    expect(await differences()).toEqual([]);
    const after = await db.rows(`SELECT DISTINCT quest_id, header, "column" FROM answers`);
    const nameOf = new Map(after.map((r) => [`${r.quest_id} ${r.header}`, r.column]));
    expect(before.filter((r) => nameOf.get(`${r.quest_id} ${r.header}`) !== r.column)).toEqual([]);
    // One name per header and quest, old or new.
    expect(nameOf.size).toBe(after.length);
    expect(after.length).toBeGreaterThan(before.length);
  });

  test('the rating-per-month query of each layout in docs/warehouse-sql.md gives the truth', async () => {
    const truth = ratingsPerMonth();
    expect(truth.length).toBeGreaterThanOrEqual(3);
    expect(asText(await docQuery(db, 'long-rating-per-month'))).toEqual(truth);
    // A quest table's rating column is its own name in both quests: the per_quest query names it once.
    const ratingNames = RATED.map((id) => {
      const {header} = sim.groundTruth(id);
      return warehouseNames(header)[header.indexOf(RATING)];
    });
    expect(ratingNames).toEqual([
      'how_satisfied_are_you_overall_1_5_8b3f65e2',
      'how_satisfied_are_you_overall_1_5_8b3f65e2',
    ]);
    for (const [layout, query] of [
      ['combined', 'combined-rating-per-month'],
      ['per_quest', 'per-quest-rating-per-month'],
    ]) {
      const other = await pg.database(`rated_${layout}`);
      const config = ratedConfig(layout);
      const catalog = await discover(config, `rated-${layout}.json`);
      await loadSync(other, catalog, await read(config, `${dir}/rated-${layout}.json`));
      expect({layout, months: asText(await docQuery(other, query))}).toEqual({layout, months: truth});
    }
  });
});
