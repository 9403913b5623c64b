/**
 * For tests: a real PostgreSQL server of the test's own, and a loader that puts `bin/main read` output
 * into it the way Airbyte's Postgres destination does.
 *
 * The server: `initdb` and `pg_ctl` from PATH or /usr/lib/postgresql/<version>/bin (`.ci/run` installs
 * Debian's `postgresql` package when they are missing), in a temp folder, trust authentication, no TCP
 * listener: clients connect through the Unix socket in that folder (the port only names the socket,
 * so servers of parallel test files cannot meet). PostgreSQL refuses to run as root; as root the
 * server runs as the `postgres` user (or `nobody`) through `runuser`. Clients use `psql`, which comes
 * with the server binaries: no npm driver is needed for a few statements per sync.
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
 *   untouched), `integer` to `bigint`, every other property `varchar`;
 * - a later sync adds the columns a refreshed schema brings (old columns stay); a column whose type
 *   would change fails the load, as the breaking change it is;
 * - `append_dedup`: one row per primary key, the last record in emitted order wins and replaces the
 *   whole row (a field the record lacks becomes null).
 * Left out: Airbyte's own `_airbyte_*` columns, `_airbyte_meta` (failed casts are only counted),
 * namespaces (everything goes to `public`), and the other destination sync modes.
 */

import {spawn, spawnSync} from 'child_process';
import fs from 'fs';
import net from 'net';
import os from 'os';
import path from 'path';

import {records} from './connector';
import {destinationColumns} from './destinations';
import {AirbyteMessageJson} from './protocol';

export interface Postgres {
  /** Runs SQL (several statements may follow each other) and returns psql's unaligned output. */
  sql(script: string): Promise<string>;
  /** The rows of one query, as JSON objects (nulls stay null, timestamptz as ISO text). */
  rows(query: string): Promise<Record<string, unknown>[]>;
  /** A client of a new, empty database on the same server: a second warehouse beside the first. */
  database(name: string): Promise<Postgres>;
  stop(): Promise<void>;
}

function binDir(): string {
  const onPath = spawnSync('sh', ['-c', 'command -v initdb'], {encoding: 'utf8'}).stdout.trim();
  if (onPath) return path.dirname(fs.realpathSync(onPath));
  const root = '/usr/lib/postgresql';
  const versions = fs.existsSync(root) ? fs.readdirSync(root).filter((v) => /^\d+$/.test(v)) : [];
  const newest = versions.sort((a, b) => Number(b) - Number(a)).find((v) => fs.existsSync(`${root}/${v}/bin/initdb`));
  if (!newest) throw new Error('PostgreSQL not found (initdb): apt-get install -y postgresql, as .ci/run does');
  return `${root}/${newest}/bin`;
}

/** As root, the user to run the server as; undefined when not root. */
function serverUser(): string | undefined {
  if (process.getuid?.() !== 0) return undefined;
  return spawnSync('id', ['-u', 'postgres']).status === 0 ? 'postgres' : 'nobody';
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const {port} = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function run(command: string, args: readonly string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {stdio: ['pipe', 'pipe', 'pipe']});
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => err.push(d));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(Buffer.concat(out).toString('utf8'));
      else reject(new Error(`${path.basename(command)} exited ${code}: ${Buffer.concat(err).toString('utf8')}`));
    });
    child.stdin.end(input ?? '');
  });
}

/** Starts a fresh server; stop() ends it and removes its folder. */
export async function startPostgres(): Promise<Postgres> {
  const bin = binDir();
  const user = serverUser();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'questback-pg-'));
  if (user) spawnSync('chown', ['-R', user, dir]);
  const asServer = (tool: string, args: string[]) =>
    user ? run('runuser', ['-u', user, '--', path.join(bin, tool), ...args]) : run(path.join(bin, tool), args);
  const data = path.join(dir, 'data');
  const port = await freePort();
  await asServer('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--no-locale', '--no-sync']);
  const options = `-p ${port} -k ${dir} -c listen_addresses= -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
  await asServer('pg_ctl', ['-D', data, '-o', options, '-l', path.join(dir, 'server.log'), '-w', '-t', '60', 'start']);

  const client = (database: string): Omit<Postgres, 'stop'> => {
    const psql = (script: string) =>
      run(
        path.join(bin, 'psql'),
        [
          '-h',
          dir,
          '-p',
          String(port),
          '-U',
          'postgres',
          '-d',
          database,
          '-X',
          '-q',
          '-A',
          '-t',
          '-v',
          'ON_ERROR_STOP=1',
        ],
        script
      );
    return {
      sql: psql,
      async rows(query: string) {
        const out = await psql(`SELECT coalesce(json_agg(q), '[]') FROM (${query}) q;`);
        return JSON.parse(out) as Record<string, unknown>[];
      },
      async database(name: string) {
        await psql(`CREATE DATABASE ${quoteId(name)};`);
        return {...client(name), stop: () => Promise.resolve()};
      },
    };
  };
  return {
    ...client('postgres'),
    async stop() {
      await asServer('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      fs.rmSync(dir, {recursive: true, force: true});
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
  pg: Postgres,
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
  pg: Postgres,
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
    return 'character varying';
  };
  const key = (configured.primary_key ?? configured.stream.source_defined_primary_key ?? []).map(
    (pathToField) => columns.get(pathToField[0]) as string
  );
  if (key.length === 0) throw new Error(`${configured.stream.name}: append_dedup needs a primary key`);

  const existing = new Map(
    (
      await pg.rows(
        `SELECT column_name AS name, data_type AS type FROM information_schema.columns WHERE table_name = ${quoteText(table)}`
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
  const output = await pg.sql(
    [
      TRY_CAST,
      'BEGIN;',
      `CREATE TABLE IF NOT EXISTS ${quoteId(table)} ();`,
      ...properties.map((p, i) => `ALTER TABLE ${quoteId(table)} ADD COLUMN IF NOT EXISTS ${cols[i]} ${typeOf(p)};`),
      `CREATE TEMP TABLE stage (_ab_order integer, ${cols.map((c) => `${c} text`).join(', ')});`,
      ...(values.length ? [`INSERT INTO stage VALUES ${values.join(',\n')};`] : []),
      `SELECT ${failedCount.length ? failedCount.join(' + ') : '0'};`,
      `DELETE FROM ${quoteId(table)} WHERE (${keyCols}) IN (SELECT ${keyCols} FROM stage);`,
      `INSERT INTO ${quoteId(table)} (${cols.join(', ')}) SELECT DISTINCT ON (${keyCols}) ${casted.join(', ')} FROM stage ORDER BY ${keyCols}, _ab_order DESC;`,
      'COMMIT;',
    ].join('\n')
  );
  return {table, columns, failedCasts: Number(output.trim())};
}
