/**
 * For tests: a real PostgreSQL of the test's own, and a loader that puts `bin/main read` output
 * into it the way Airbyte's Postgres destination does.
 *
 * The server: PGlite (`@electric-sql/pglite`, a devDependency), PostgreSQL 18 compiled to WebAssembly,
 * on a worker thread of the test process. `npm ci` brings it on every platform; no system PostgreSQL,
 * server user, port or install script is involved, and it runs as whoever runs the tests (a PostgreSQL
 * server refuses to run as root; CI runs as root). Its data lives in memory and goes with the test. It is
 * PostgreSQL's own parser, planner, executor and types, so jsonb, timestamptz casts and their failures,
 * and the 63-byte identifier cut behave as in a server. It serves one session, which is all a loader
 * needs; a second warehouse is a second schema, as a second Airbyte connection's namespace would be.
 *
 * The loader, from the behaviour described in /work/shared/notes/airbyte-platform-facts.md and
 * test/helpers/destinations.ts (not from Airbyte's code):
 * - one final table per configured stream, named as the destination names it;
 * - the platform's field selection: a record keeps only the properties its configured schema lists;
 * - column names as the destination makes them (NFKD, accents dropped, outside [A-Za-z0-9_] to `_`,
 *   the 63-character cut and its collision handling: destinationColumns);
 * - column types as the destination's type map has them (docs/integrations/destinations/postgres.md,
 *   "Final Tables Data type mapping"): `format: date-time` to `timestamptz` (a value that does not
 *   cast is nulled and counted), `object` and `array` to `jsonb` (the record's object as it is: keys and values
 *   untouched), `integer` to `bigint`, `number` to `decimal` (numeric), `boolean` to `boolean`, every other
 *   property `varchar`;
 * - a later sync adds the columns a refreshed schema brings (old columns stay); a column whose type
 *   would change fails the load, as the breaking change it is;
 * - `append_dedup`: one row per primary key, the last record in emitted order wins and replaces the
 *   whole row (a field the record lacks becomes null).
 * Left out: Airbyte's own `_airbyte_*` columns, `_airbyte_meta` (failed casts are only counted),
 * the other destination sync modes.
 */

import fs from 'fs';
import path from 'path';
import {Worker} from 'worker_threads';

import {records} from './connector';
import {destinationColumns} from './destinations';
import {AirbyteMessageJson} from './protocol';

/** One warehouse: a schema of its own, where its tables go and its queries look. */
export interface Database {
  /**
   * Runs SQL, several statements as one transaction (a failing statement undoes them all; so no
   * BEGIN or COMMIT), and returns the rows of those that return rows, in order.
   */
  sql(script: string): Promise<Record<string, unknown>[]>;
  /** The rows of one query, as JSON objects (nulls stay null, timestamptz as ISO text). */
  rows(query: string): Promise<Record<string, unknown>[]>;
}

export interface Postgres extends Database {
  /** A new, empty schema: a second warehouse beside the first (`public`). */
  database(name: string): Promise<Database>;
  /** Ends this PostgreSQL. */
  stop(): Promise<void>;
}

/** The worker's answer to request `id`. */
interface Reply {
  id: number;
  result?: unknown;
  error?: string;
}

/**
 * Starts a fresh, empty PostgreSQL: PGlite on a worker thread (test/helpers/postgres-worker.mjs). It
 * returns at once: PostgreSQL starts while the test does other things, and the first request waits for it.
 */
export function startPostgres(): Postgres {
  const worker = new Worker(path.join(__dirname, 'postgres-worker.mjs'));
  const pending = new Map<number, {resolve(value: unknown): void; reject(error: Error): void}>();
  /** Why the thread ended, once it has: later requests fail with it at once. */
  let ended: Error | undefined;
  const end = (error: Error) => {
    ended ??= error;
    for (const call of pending.values()) call.reject(ended);
    pending.clear();
  };
  worker.on('error', end);
  worker.on('exit', (code) => end(new Error(`the PostgreSQL worker thread has ended (exit code ${code})`)));
  worker.on('message', ({id, result, error}: Reply) => {
    const call = pending.get(id);
    pending.delete(id);
    // The thread keeps the process alive only while it owes an answer: a test that never calls stop() still ends.
    if (pending.size === 0) worker.unref();
    if (error === undefined) call?.resolve(result);
    else call?.reject(new Error(`PostgreSQL: ${error}`));
  });
  worker.unref();
  let next = 0;
  const request = (message: {op: 'exec' | 'rows'; schema: string; text: string}) =>
    new Promise<Record<string, unknown>[]>((resolve, reject) => {
      if (ended) return reject(ended);
      const id = next++;
      pending.set(id, {resolve: resolve as (value: unknown) => void, reject});
      worker.ref();
      worker.postMessage({id, ...message});
    });
  const inSchema = (schema: string): Database => ({
    sql: (text) => request({op: 'exec', schema: quoteId(schema), text}),
    rows: (text) => request({op: 'rows', schema: quoteId(schema), text}),
  });
  const first = inSchema('public');
  return {
    ...first,
    async database(name) {
      await first.sql(`CREATE SCHEMA ${quoteId(name)};`);
      return inSchema(name);
    },
    async stop() {
      await worker.terminate();
    },
  };
}

export interface ConfiguredStream {
  stream: {
    name: string;
    json_schema: {properties: Record<string, {type?: string | string[]; format?: string; title?: string}>};
    source_defined_primary_key?: string[][];
  };
  primary_key?: string[][];
  destination_sync_mode: string;
}

/** What one stream's load did. */
export interface StreamLoad {
  table: string;
  /** The column each property of the configured schema went to. */
  columns: Map<string, string>;
  /** date-time values that did not cast to timestamptz, nulled. */
  failedCasts: number;
}

const quoteId = (name: string) => `"${name.replace(/"/g, '""')}"`;
const quoteText = (value: unknown) =>
  value === null || value === undefined ? 'NULL' : `'${String(value).replace(/'/g, "''")}'`;
/** A record value as SQL text; an object or array as its JSON, which the stage casts to jsonb. */
const quoteValue = (value: unknown) =>
  quoteText(typeof value === 'object' && value !== null ? JSON.stringify(value) : value);
const TIMESTAMPTZ = 'timestamp with time zone';

const TRY_CAST = `CREATE OR REPLACE FUNCTION try_timestamptz(v text) RETURNS timestamptz LANGUAGE plpgsql AS $$
BEGIN RETURN v::timestamptz; EXCEPTION WHEN others THEN RETURN NULL; END $$;`;

/** Loads the records of one sync (the connector's stdout) into the configured streams' tables. */
export async function loadSync(
  pg: Database,
  catalog: {streams: ConfiguredStream[]},
  messages: AirbyteMessageJson[]
): Promise<Map<string, StreamLoad>> {
  const loads = new Map<string, StreamLoad>();
  for (const configured of catalog.streams) {
    const name = configured.stream.name;
    loads.set(
      name,
      await loadStream(
        pg,
        configured,
        records(messages)
          .filter((r) => r.record.stream === name)
          .map((r) => r.record.data)
      )
    );
  }
  return loads;
}

async function loadStream(
  pg: Database,
  configured: ConfiguredStream,
  data: Record<string, unknown>[]
): Promise<StreamLoad> {
  if (configured.destination_sync_mode !== 'append_dedup') {
    throw new Error(`destination_sync_mode ${configured.destination_sync_mode} is not modelled`);
  }
  const table = destinationColumns([configured.stream.name], 'postgres')[0];
  const schema = configured.stream.json_schema.properties;
  const properties = Object.keys(schema);
  const names = destinationColumns(properties, 'postgres');
  const columns = new Map(properties.map((p, i) => [p, names[i]]));
  const typeOf = (p: string): string => {
    const types = [schema[p].type ?? []].flat();
    if (schema[p].format === 'date-time') return TIMESTAMPTZ;
    if (types.includes('object') || types.includes('array')) return 'jsonb';
    if (types.includes('integer')) return 'bigint';
    if (types.includes('number')) return 'numeric';
    if (types.includes('boolean')) return 'boolean';
    return 'character varying';
  };
  const key = (configured.primary_key ?? configured.stream.source_defined_primary_key ?? []).map(
    (pathToField) => columns.get(pathToField[0]) as string
  );
  if (key.length === 0) throw new Error(`${configured.stream.name}: append_dedup needs a primary key`);

  const existing = new Map(
    (
      await pg.rows(
        `SELECT column_name AS name, data_type AS type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ${quoteText(table)}`
      )
    ).map((c) => [c.name as string, c.type as string])
  );
  for (const p of properties) {
    const was = existing.get(columns.get(p) as string);
    if (was !== undefined && was !== typeOf(p)) {
      throw new Error(`${table}.${columns.get(p)} would change type from ${was} to ${typeOf(p)}: a breaking change`);
    }
  }

  const cols = properties.map((p) => quoteId(columns.get(p) as string));
  const keyCols = key.map(quoteId).join(', ');
  const casted = properties.map((p) => {
    const column = quoteId(columns.get(p) as string);
    return typeOf(p) === TIMESTAMPTZ ? `try_timestamptz(${column})` : `${column}::${typeOf(p)}`;
  });
  const failedCount = properties
    .filter((p) => typeOf(p) === TIMESTAMPTZ)
    .map((p) => {
      const column = quoteId(columns.get(p) as string);
      return `(SELECT count(*) FROM stage WHERE ${column} IS NOT NULL AND try_timestamptz(${column}) IS NULL)`;
    });
  // Field selection: only the properties the configured schema lists reach the table.
  const values = data.map((record, order) => `(${order}, ${properties.map((p) => quoteValue(record[p])).join(', ')})`);
  // One transaction: a load that fails leaves nothing; the stage goes with it (the session stays).
  const [{failed}] = await pg.sql(
    [
      TRY_CAST,
      `CREATE TABLE IF NOT EXISTS ${quoteId(table)} ();`,
      ...properties.map((p, i) => `ALTER TABLE ${quoteId(table)} ADD COLUMN IF NOT EXISTS ${cols[i]} ${typeOf(p)};`),
      `CREATE TEMP TABLE stage (_ab_order integer, ${cols.map((c) => `${c} text`).join(', ')}) ON COMMIT DROP;`,
      ...(values.length ? [`INSERT INTO stage VALUES ${values.join(',\n')};`] : []),
      `SELECT ${failedCount.length ? failedCount.join(' + ') : '0'} AS failed;`,
      `DELETE FROM ${quoteId(table)} WHERE (${keyCols}) IN (SELECT ${keyCols} FROM stage);`,
      `INSERT INTO ${quoteId(table)} (${cols.join(', ')}) SELECT DISTINCT ON (${keyCols}) ${casted.join(', ')} FROM stage ORDER BY ${keyCols}, _ab_order DESC;`,
    ].join('\n')
  );
  return {table, columns, failedCasts: Number(failed)};
}

/** The PostgreSQL queries of docs/warehouse-sql.md by the name of their `<!-- tested: name -->` mark, as written. */
export const DOC_QUERIES = new Map(
  [
    ...fs
      .readFileSync(path.join(__dirname, '../../docs/warehouse-sql.md'), 'utf8')
      .matchAll(/<!-- tested: (\S+) -->\s*```sql\n([\s\S]*?)```/g),
  ].map((m) => [m[1], m[2]])
);

/** The rows of a documented query, run as the page shows it (db.rows wraps it, so without its `;`). */
export async function docQuery(db: Database, name: string): Promise<Record<string, unknown>[]> {
  const query = DOC_QUERIES.get(name);
  if (query === undefined) throw new Error(`docs/warehouse-sql.md has no query marked "tested: ${name}"`);
  return db.rows(query.trim().replace(/;$/, ''));
}
