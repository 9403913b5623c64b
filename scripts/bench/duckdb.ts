// The external yardstick: DuckDB (npm @duckdb/node-api, a development dependency used here only) on
// one thread, reading the same export file as the connector (a local copy, BENCH_FILE) and writing
// every row as a JSON object, one a line, to stdout: a general-purpose engine's CSV reader and JSON
// writer on the same bytes. All columns stay text (all_varchar), as the connector writes them.

import {DuckDBInstance} from '@duckdb/node-api';

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

async function main(): Promise<void> {
  const file = required('BENCH_FILE').replace(/'/g, "''");
  const threads = process.env.BENCH_THREADS ?? '1';
  const db = await DuckDBInstance.create(':memory:', {threads});
  const connection = await db.connect();
  await connection.run(
    `COPY (SELECT * FROM read_csv('${file}', delim = '|', quote = '"', escape = '"', header = true, all_varchar = true)) TO '/dev/stdout' (FORMAT json)`
  );
  connection.closeSync();
}

main().catch((err: unknown) => {
  process.stderr.write(`duckdb failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exitCode = 1;
});
