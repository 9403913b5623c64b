// The throughput ceiling: what the same download into the same consumer costs when nothing is
// parsed. Downloads the export file like baseline.ts (BENCH_URL, bearer BENCH_TOKEN), decodes it
// as UTF-8, and wraps every physical line of the CSV whole, as one JSON string, into a RECORD-like
// line ({"type":"RECORD","record":{"stream":...,"emitted_at":...,"data":{"line":...}}}), written in
// 64 KB batches that wait for 'drain' when stdout pushes back. The connector's throughput over this
// one's is the share of the ceiling its parsing and encoding leave.

import {once} from 'events';
import http from 'http';

const BATCH_BYTES = 64 * 1024;

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

  const res = await get(url, token);
  if (res.statusCode !== 200) throw new Error(`download answered HTTP ${res.statusCode}`);
  const out = process.stdout;
  const decoder = new TextDecoder();
  let batch = Buffer.allocUnsafe(BATCH_BYTES);
  let used = 0;
  let prefix = '';
  /** Set when stdout pushed back: the loop waits for 'drain' before the next chunk. */
  let full = false;
  const send = (data: Buffer | string): void => {
    if (!out.write(data)) full = true;
  };
  const wrap = (line: string): void => {
    const text = `${prefix}${JSON.stringify(line)}}}}`;
    // UTF-8 takes at most 3 bytes for each UTF-16 unit.
    if (used + text.length * 3 + 1 > BATCH_BYTES && used > 0) {
      send(batch.subarray(0, used));
      batch = Buffer.allocUnsafe(BATCH_BYTES);
      used = 0;
    }
    if (text.length * 3 + 1 > BATCH_BYTES) {
      send(`${text}\n`);
      return;
    }
    used += batch.write(text, used, 'utf8');
    batch[used++] = 10;
  };
  let rest = '';
  for await (const chunk of res as AsyncIterable<Buffer>) {
    prefix = `{"type":"RECORD","record":{"stream":${JSON.stringify(stream)},"emitted_at":${Date.now()},"data":{"line":`;
    const text = rest + decoder.decode(chunk, {stream: true});
    let start = 0;
    for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
      wrap(text.slice(start, end));
      start = end + 1;
    }
    rest = text.slice(start);
    if (full) {
      full = false;
      await once(out, 'drain');
    }
  }
  rest += decoder.decode();
  if (rest) wrap(rest);
  if (used) send(batch.subarray(0, used));
  await new Promise<void>((resolve, reject) => out.write('', (err) => (err ? reject(err) : resolve())));
}

main().catch((err: unknown) => {
  process.stderr.write(`ceiling failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exitCode = 1;
});
