// The throughput baseline: the plain batched pipeline of the team's performance-baselines note, run
// on the same export file the connector read. Downloads it (BENCH_URL, bearer BENCH_TOKEN), parses it with
// csv-parse (`columns: true`, BOM, '|'), and writes one Airbyte RECORD line per row with
// JSON.stringify, in 64 KB batches that wait for 'drain' when stdout pushes back.

import {parse} from 'csv-parse';
import {once} from 'events';
import http from 'http';
import {pipeline} from 'stream';

const BATCH_CHARS = 64 * 1024;

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

function get(url: string, token: string): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, {headers: {Authorization: `Bearer ${token}`}}, resolve);
    req.on('error', reject);
  });
}

async function main(): Promise<void> {
  const url = required('BENCH_URL');
  const token = required('BENCH_TOKEN');
  const stream = required('BENCH_STREAM');
  const delimiter = process.env.BENCH_DELIMITER ?? '|';

  const res = await get(url, token);
  if (res.statusCode !== 200) throw new Error(`download answered HTTP ${res.statusCode}`);
  const parser = parse({columns: true, bom: true, delimiter});
  // pipeline destroys the parser on a download error, which ends the loop below with that error.
  pipeline(res, parser, () => undefined);

  const out = process.stdout;
  let batch = '';
  for await (const data of parser as AsyncIterable<Record<string, string>>) {
    batch += JSON.stringify({type: 'RECORD', record: {stream, emitted_at: Date.now(), data}}) + '\n';
    if (batch.length >= BATCH_CHARS) {
      const ok = out.write(batch);
      batch = '';
      if (!ok) await once(out, 'drain');
    }
  }
  await new Promise<void>((resolve, reject) => out.write(batch, (err) => (err ? reject(err) : resolve())));
}

main().catch((err: unknown) => {
  process.stderr.write(`baseline failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exitCode = 1;
});
