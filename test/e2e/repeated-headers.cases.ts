// Issue 33, point 9: a header whose texts repeat, byte for byte and in another case (`Q1`, `Q1`, `q1`),
// beside blank, accented and `Q1 (2)` texts. Discover, a read with the very catalog discover gave, and
// the `columns` stream must give every column one name; else Airbyte drops the answers of the columns
// the read names otherwise. In process against the simulator, per layout and naming.

import {records, RunResult, warnings} from '../helpers/connector';
import {configuredCatalog, streamOf, withWorld, World} from '../helpers/fixtures';
import {responseRecords} from '../helpers/streams';

const Q = '9e0a0000-0000-4000-8000-000000000009';
const HEADER = [
  'Response ID',
  'Created',
  'Q1',
  'Q1',
  'q1',
  '',
  '',
  'Kjønn',
  'Kjonn',
  'Q1 (2)',
  'Q1_2',
  'E-mail',
  'E mail',
  'column_6',
];
const DAY = 86_400_000;
const ROWS = [1, 2, 3].map((n) => [
  `R-${n}`,
  new Date(Date.now() - (4 - n) * DAY).toISOString(),
  ...HEADER.slice(2).map((text, i) => `answer ${n}.${i} to ${text || 'blank'}`),
]);
const OPTIONS = {
  seed: 9,
  exportDurationMs: 10,
  files: 'memory' as const,
  quests: [{id: Q, table: {header: HEADER, rows: ROWS}}],
};

interface Catalog {
  streams: {stream: {name: string; json_schema: {properties: Record<string, {title?: string}>}}}[];
}

/** discover, then a read of every stream with the catalog discover gave. */
async function discoverThenRead(
  world: World,
  overrides: Record<string, unknown>
): Promise<{catalog: Catalog; read: RunResult}> {
  const config = world.config({quest_ids: [Q], ...overrides});
  const discover = await world.run(['discover', '--config', config]);
  expect(discover.code).toBe(0);
  const catalog = configuredCatalog(discover.messages, 'incremental') as unknown as Catalog;
  const read = await world.run(['read', '--config', config, '--catalog', world.file(catalog)]);
  expect(read.code).toBe(0);
  return {catalog, read};
}

/** The `columns` stream's names of the quest's columns, by position. */
const columnsStreamNames = (read: RunResult): string[] =>
  records(read.messages)
    .filter((r) => r.record.stream === 'columns')
    .sort((a, b) => Number(a.record.data.position) - Number(b.record.data.position))
    .map((r) => String(r.record.data.column));

describe('a header whose texts repeat, in another case, blank, accented', () => {
  test.each(['warehouse', 'survey'])(
    'per_quest (%s names): discover, the read with its catalog and the columns stream name every column alike; no answer dropped',
    async (columnNames) => {
      await withWorld(OPTIONS, async (world) => {
        const {catalog, read} = await discoverThenRead(world, {stream_layout: 'per_quest', column_names: columnNames});
        const stream = catalog.streams.find((s) => s.stream.name === streamOf(Q));
        const properties = Object.entries(stream?.stream.json_schema.properties ?? {}).filter(
          ([name]) => !name.startsWith('_questback_')
        );
        const discovered = properties.map(([name]) => name);
        // Discover names every column of the header, each once.
        expect(properties.map(([name, p]) => p.title ?? name)).toEqual(HEADER);
        expect(new Set(discovered).size).toBe(HEADER.length);
        const rows = records(read.messages).filter((r) => r.record.stream === streamOf(Q));
        expect(rows.map((r) => Object.keys(r.record.data).filter((k) => !k.startsWith('_questback_')))).toEqual(
          ROWS.map(() => discovered)
        );
        // Every cell under the name discover gave its column.
        expect(rows.map((r) => discovered.map((name) => r.record.data[name]))).toEqual(ROWS);
        expect(columnsStreamNames(read)).toEqual(discovered);
        expect(warnings(read.messages).filter((w) => /not in the configured schema|collides/.test(w))).toEqual([]);
      });
    }
  );

  test.each(['long', 'combined'])('%s: the read and the columns stream name every column alike', async (layout) => {
    await withWorld(OPTIONS, async (world) => {
      const {read} = await discoverThenRead(world, {stream_layout: layout});
      const names = columnsStreamNames(read);
      expect(new Set(names).size).toBe(HEADER.length);
      const data = responseRecords(read.messages);
      if (layout === 'long') {
        // Each answer's column is the name the columns stream gives its header's position.
        const got = data.map((r) => [r.record.data.column, r.record.data.value]);
        const want = ROWS.flatMap((row) => row.slice(2).map((value, i) => [names[i + 2], value]));
        expect(got.sort()).toEqual(want.sort());
      } else {
        expect(data.map((r) => Object.keys(r.record.data.answers as object))).toEqual(ROWS.map(() => names));
        expect(data.map((r) => Object.values(r.record.data.answers as object))).toEqual(ROWS);
      }
    });
  });
});
