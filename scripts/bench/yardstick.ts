// The throughput section's yardsticks, each run as `node yardstick.js <kind>` in a process of its own
// on the export file the connector read, writing into the same kind of consumer:
//   baseline  the plain batched pipeline of the team's performance-baselines note: downloads the file
//             (BENCH_URL, bearer BENCH_TOKEN), parses it with csv-parse (`columns: true`, BOM, '|') and
//             writes one Airbyte RECORD line per row with JSON.stringify;
//   ceiling   the same download when nothing is parsed: decodes UTF-8 and wraps every physical line of
//             the CSV whole, as one JSON string, into a RECORD-like line
//             ({"type":"RECORD","record":{"stream":...,"emitted_at":...,"data":{"line":...}}});
//   duckdb    a general-purpose engine: DuckDB (npm @duckdb/node-api, a development dependency used here
//             only) on one thread reads a local copy of the file (BENCH_FILE), every column text as the
//             connector writes them, and writes each row as a JSON object, one a line, to stdout.
// baseline and ceiling write 64 KB batches and wait for 'drain' when stdout pushes back.

import {once} from 'events';
import http from 'http';
import {pipeline} from 'stream';

const BATCH_BYTES = 64 * 1024;

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

/** The export file over HTTP, as the connector downloads it. */
async function download(): Promise<http.IncomingMessage> {
  const url = required('BENCH_URL');
  const token = required('BENCH_TOKEN');
  const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
    http.get(url, {headers: {Authorization: `Bearer ${token}`}}, resolve).on('error', reject);
  });
  if (res.statusCode !== 200) throw new Error(`download answered HTTP ${res.statusCode}`);
  return res;
}

/** Lines to stdout in batches of BATCH_BYTES; once `full` (stdout pushed back), the caller awaits `drain`. */
class BatchedLines {
  private readonly out = process.stdout;
  private batch = Buffer.allocUnsafe(BATCH_BYTES);
  private used = 0;
  full = false;

  line(text: string): void {
    // UTF-8 takes at most 3 bytes for each UTF-16 unit.
    const most = text.length * 3 + 1;
    if (this.used + most > BATCH_BYTES && this.used > 0) this.send();
    if (most > BATCH_BYTES) {
      this.write(`${text}\n`);
      return;
    }
    this.used += this.batch.write(text, this.used, 'utf8');
    this.batch[this.used++] = 10;
  }

  async drain(): Promise<void> {
    this.full = false;
    await once(this.out, 'drain');
  }

  async end(): Promise<void> {
    if (this.used) this.send();
    await new Promise<void>((resolve, reject) => this.out.write('', (err) => (err ? reject(err) : resolve())));
  }

  private send(): void {
    this.write(this.batch.subarray(0, this.used));
    this.batch = Buffer.allocUnsafe(BATCH_BYTES);
    this.used = 0;
  }

  private write(data: Buffer | string): void {
    if (!this.out.write(data)) this.full = true;
  }
}

async function baseline(out: BatchedLines): Promise<void> {
  const stream = required('BENCH_STREAM');
  // Loaded here: the other yardsticks do not carry csv-parse in their memory.
  const {parse} = await import('csv-parse');
  const parser = parse({columns: true, bom: true, delimiter: '|'});
  // pipeline destroys the parser on a download error, which ends the loop below with that error.
  pipeline(await download(), parser, () => undefined);
  for await (const data of parser as AsyncIterable<Record<string, string>>) {
    out.line(JSON.stringify({type: 'RECORD', record: {stream, emitted_at: Date.now(), data}}));
    if (out.full) await out.drain();
  }
}

async function ceiling(out: BatchedLines): Promise<void> {
  const stream = JSON.stringify(required('BENCH_STREAM'));
  const decoder = new TextDecoder();
  let prefix = '';
  const wrap = (line: string): void => out.line(`${prefix}${JSON.stringify(line)}}}}`);
  let rest = '';
  for await (const chunk of (await download()) as AsyncIterable<Buffer>) {
    prefix = `{"type":"RECORD","record":{"stream":${stream},"emitted_at":${Date.now()},"data":{"line":`;
    const text = rest + decoder.decode(chunk, {stream: true});
    let start = 0;
    for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
      wrap(text.slice(start, end));
      start = end + 1;
    }
    rest = text.slice(start);
    if (out.full) await out.drain();
  }
  rest += decoder.decode();
  if (rest) wrap(rest);
}

async function duckdb(): Promise<void> {
  const file = required('BENCH_FILE').replace(/'/g, "''");
  const {DuckDBInstance} = await import('@duckdb/node-api');
  const db = await DuckDBInstance.create(':memory:', {threads: '1'});
  const connection = await db.connect();
  await connection.run(
    `COPY (SELECT * FROM read_csv('${file}', delim = '|', quote = '"', escape = '"', header = true, all_varchar = true)) TO '/dev/stdout' (FORMAT json)`
  );
  connection.closeSync();
}

export const YARDSTICKS = ['baseline', 'ceiling', 'duckdb'] as const;

async function main(kind: string | undefined): Promise<void> {
  if (kind === 'duckdb') return duckdb();
  if (kind !== 'baseline' && kind !== 'ceiling') throw new Error(`say which yardstick: ${YARDSTICKS.join(', ')}`);
  const out = new BatchedLines();
  await (kind === 'baseline' ? baseline(out) : ceiling(out));
  await out.end();
}

if (require.main === module) {
  main(process.argv[2]).catch((err: unknown) => {
    process.stderr.write(`${process.argv[2]} failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exitCode = 1;
  });
}
