import {AirbyteMessageType} from 'faros-airbyte-cdk';
import {Writable} from 'stream';

import {streamState} from '../../src/protocol/messages';
import {MessageWriter} from '../../src/protocol/output';

/** A consumer that takes one chunk at a time, slowly, with a tiny buffer: backpressure on every write. */
function slowConsumer(): {stream: Writable; chunks: string[]} {
  const chunks: string[] = [];
  const stream = new Writable({
    highWaterMark: 16,
    write(chunk: Buffer, _enc, done) {
      chunks.push(chunk.toString('utf8'));
      setTimeout(done, 1);
    },
  });
  return {stream, chunks};
}

describe('MessageWriter', () => {
  test('keeps every line in order, in batches no larger than the bound, waiting for a slow consumer', async () => {
    const {stream, chunks} = slowConsumer();
    const writer = new MessageWriter(stream, (l) => l, 1000);
    let waits = 0;
    for (let i = 0; i < 500; i++) {
      const wait = writer.writeLine(`{"n":${i},"pad":"${'x'.repeat(i % 50)}"}`);
      if (wait) {
        waits++;
        await wait;
      }
    }
    await writer.flush();
    const lines = chunks.join('').split('\n').filter(Boolean);
    expect(lines.map((l) => JSON.parse(l).n)).toEqual([...Array(500).keys()]);
    expect(Math.max(...chunks.map((c) => c.length))).toBeLessThanOrEqual(1000);
    expect(waits).toBeGreaterThan(0);
  });

  test('writes recordCount with a decimal point and scrubs non-record lines', async () => {
    const {stream, chunks} = slowConsumer();
    const writer = new MessageWriter(stream, (l) => l.replace('hunter2-secret', '**********'));
    await writer.write(streamState({name: 's'}, {cursor: 'c'}, 12));
    await writer.write({type: AirbyteMessageType.LOG, log: {level: 'INFO', message: 'token hunter2-secret'}} as never);
    await writer.flush();
    const out = chunks.join('');
    expect(out).toContain('"sourceStats":{"recordCount":12.0}');
    expect(out).not.toContain('hunter2-secret');
  });

  test('a STATE is written out at once, a log line within a tenth of a second, records within a second', async () => {
    const {stream, chunks} = slowConsumer();
    const writer = new MessageWriter(stream);
    const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
    writer.writeLine('{"type":"RECORD","n":1}');
    writer.write({type: AirbyteMessageType.LOG, log: {level: 'INFO', message: 'waiting for an export'}} as never);
    expect(chunks.join('')).toBe('');
    await sleep(300);
    expect(chunks.join('')).toContain('waiting for an export');
    writer.writeLine('{"type":"RECORD","n":2}');
    await sleep(300);
    expect(chunks.join('')).not.toContain('"n":2');
    await sleep(1000);
    expect(chunks.join('')).toContain('"n":2');
    writer.writeLine('{"type":"RECORD","n":3}');
    await writer.writeNow(streamState({name: 's'}, {cursor: 'c'}, 1));
    expect(chunks.join('')).toMatch(/"n":3\}\n\{"type":"STATE"/);
  });
});
