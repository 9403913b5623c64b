import {execFileSync} from 'child_process';
import {AirbyteMessageType} from 'faros-airbyte-cdk/lib/protocol';
import {createHmac} from 'crypto';
import fs from 'fs';
import path from 'path';
import {Writable} from 'stream';

import {recordMessage, streamState} from '../../src/protocol/messages';
import {MessageWriter} from '../../src/protocol/output';
import {CsvScanner} from '../../src/csv/parser';
import {RowBatch} from '../../src/csv/rows';
import {recordEncoder} from '../../src/protocol/long-record-encoder';
import {recordCounter, RecordShape} from '../../src/sync/output-port';
import {shapeChanges, shapeRecords} from '../helpers/shapes';
import {tempDir} from '../helpers/connector';
import {batchOf} from '../helpers/rows';

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

/** Cells that need every path of the encoder: empty, short and long, escapes, non-ASCII, lone surrogates. */
const TRICKY_CELLS = [
  '',
  '42',
  '2026-01-01T00:00:00.000Z',
  'say "hi"',
  'back\\slash',
  'tab\there',
  'line\r\nbreak',
  '\u0001\u001f',
  '\b\f\u007f\u2028\u2029 \\"',
  'Ünïcödé — «ß»',
  '👩‍💻 works from home',
  'lone \ud800 high',
  'lone \udc00 low',
  'pair at the end 😀',
  '\ud83d',
  '\ude00 the other half of a pair split between two cells',
  'x'.repeat(40),
  `${'y'.repeat(40)} "quoted" \n ${'é'.repeat(10)}`,
  'ok',
];
const STREAM = {name: 'quest_x', namespace: 'ns "q"'};
const COLUMNS = TRICKY_CELLS.map((_, i) => (i === 3 ? 'Q "quoted" | name' : `c${i}`));
const CONSTANTS = {_questback_quest_id: 'q-1', _questback_window_end: '2026-01-01T00:00:00.000Z'};
/** A quest stream's shape: a field per column, then the connector's fields. */
const SHAPE: RecordShape = {
  stream: STREAM,
  fields: [
    ...COLUMNS.map((name, index) => ({kind: 'cell' as const, name, index})),
    ...Object.entries(CONSTANTS).map(([name, value]) => ({kind: 'constant' as const, name, value})),
  ],
};

/** The line JSON.stringify makes of a row: what the encoder must write, byte for byte. */
function expectedLine(row: readonly string[], at: number): string {
  const data: Record<string, string | null> = {};
  COLUMNS.forEach((name, i) => (data[name] = row[i] === '' || row[i] === undefined ? null : row[i]));
  return JSON.stringify({
    type: 'RECORD',
    record: {namespace: STREAM.namespace, stream: STREAM.name, emitted_at: at, data: {...data, ...CONSTANTS}},
  });
}

describe('RecordEncoder', () => {
  test('writes each row as JSON.stringify would, in buffers no larger than the batch unless a row is', () => {
    const encoder = recordEncoder(SHAPE);
    const rows = [TRICKY_CELLS, [...TRICKY_CELLS].reverse(), TRICKY_CELLS.map(() => '')];
    const huge = TRICKY_CELLS.map((c, i) => (i === 9 ? c.repeat(5000) : c));
    const chunks = encoder.encode(batchOf([...rows, huge, ...rows]), 1234, 4096);
    const lines = Buffer.concat(chunks).toString('utf8').split('\n');
    expect(lines.pop()).toBe('');
    expect(lines).toEqual([...rows, huge, ...rows].map((row) => expectedLine(row, 1234)));
    expect(chunks.filter((c) => c.length > 4096)).toHaveLength(1);
  });

  test('writes every kind of field of a shape as the record shapeRecords makes of the row, keys in shape order', () => {
    const keys = TRICKY_CELLS.map((c, i) =>
      i === 0 ? 'Response ID' : i === 5 ? '__proto__' : i === 6 ? '10' : i === 7 ? '2' : `Q${i}: ${c.slice(0, 9)}`
    );
    const shape: RecordShape = {
      stream: {name: 'responses'},
      fields: [
        {kind: 'constant', name: 'quest_id', value: 'q "1"'},
        {kind: 'text', name: 'response_id', index: 1},
        {kind: 'cell', name: 'created', index: 2},
        {kind: 'cells', name: 'answers', cells: keys.map((key, index) => ({key, index}))},
        {kind: 'constant', name: 'nothing', value: null},
        {kind: 'text', name: 'past_the_row', index: 99},
        {kind: 'cell', name: 'again', index: 3},
      ],
    };
    const rows = [TRICKY_CELLS, TRICKY_CELLS.map(() => ''), [...TRICKY_CELLS].reverse()];
    const lines = Buffer.concat(recordEncoder(shape).encode(batchOf(rows), 7, 512))
      .toString('utf8')
      .split('\n');
    expect(lines.pop()).toBe('');
    // The same JSON value; "__proto__" is an answer like any other.
    expect(lines.map((l) => JSON.parse(l))).toEqual(
      rows.map((row) => recordMessage(shape.stream, shapeRecords(shape, row)[0], 7))
    );
    // Keys in the shape's order, integer-like ones too (JSON.stringify would put those first).
    for (const line of lines) {
      const at = keys.map((k) => line.indexOf(`${JSON.stringify(k)}:`, line.indexOf('"answers":')));
      expect(at.every((p, i) => p > (i === 0 ? 0 : at[i - 1]))).toBe(true);
    }
    const numbered: RecordShape = {
      stream: {name: 's'},
      fields: [{kind: 'cells', name: 'a', cells: ['2', 'x', '1'].map((key, index) => ({key, index}))}],
    };
    const line = Buffer.concat(recordEncoder(numbered).encode(batchOf([['b', 'x', '']]), 7, 512)).toString('utf8');
    expect(line).toBe(
      '{"type":"RECORD","record":{"stream":"s","emitted_at":7,"data":{"a":{"2":"b","x":"x","1":null}}}}\n'
    );
    expect(JSON.parse(line).record.data).toEqual(shapeRecords(numbered, ['b', 'x', ''])[0]);
  });
});

describe('long shapes and hashed cells', () => {
  const SALT = 'a salt of sixteen+';
  const hmac = (value: string) => createHmac('sha256', SALT).update(value, 'utf8').digest('hex');
  const NUMBERS = [
    '0',
    '-0',
    '12',
    '-3.25',
    '007',
    '1e5',
    '+1',
    '1.',
    '.5',
    '3,5',
    ' 4',
    '4 ',
    '-',
    '12345678901234567890.5',
    '9007199254740993',
    '9007199254740992',
    '-9007199254740993',
    '1'.repeat(400),
    `0.${'0'.repeat(400)}1`,
    '1234567890123456.7',
    '123456789012345.5',
    '0.1',
    '0.30000000000000004',
    '0.3000000000000000444',
    '1.0',
    '-2.50',
    '100000000000000000000',
    '1e3',
    '+5',
    '-0.0',
  ];

  function encodeLines(shape: RecordShape, rows: string[][], batchBytes = 512): string[] {
    const lines = Buffer.concat(recordEncoder(shape).encode(batchOf(rows), 7, batchBytes))
      .toString('utf8')
      .split('\n');
    expect(lines.pop()).toBe('');
    return lines;
  }

  test('a record per non-empty answer cell, as shapeRecords makes them; a plain number also as a number', () => {
    const cells = TRICKY_CELLS.map((c, index) => ({
      index,
      constants: [
        {name: 'column', value: `c${index}`},
        {name: 'option', value: index % 2 ? null : `O "${c.slice(0, 4)}"`},
      ],
      ...(index === 4 ? {hash: true} : {}),
    }));
    const shape: RecordShape = {
      stream: {name: 'answers', namespace: 'ns'},
      hashSalt: SALT,
      fields: [
        {kind: 'constant', name: 'quest_id', value: 'q'},
        {kind: 'text', name: 'response_id', index: 1},
        {kind: 'time', name: 'created', index: 2},
        {kind: 'cell', name: 'again', index: 3, hash: true},
        {kind: 'answer', cells, value: 'value', number: 'value_number'},
        {kind: 'constant', name: 'end', value: 'e'},
      ],
    };
    const numbers = NUMBERS.map((n) => TRICKY_CELLS.map((c, i) => (i === 5 ? n : c)));
    const rows = [TRICKY_CELLS, TRICKY_CELLS.map(() => ''), [...TRICKY_CELLS].reverse(), ...numbers];
    const huge = TRICKY_CELLS.map((c, i) => (i === 9 ? c.repeat(3000) : c));
    const all = [...rows, huge, ...rows];
    const lines = encodeLines(shape, all, 300);
    const expected = all.flatMap((row) => shapeRecords(shape, row));
    expect(lines.map((line) => JSON.parse(line).record.data)).toEqual(expected);
    expect(lines.map((line) => JSON.parse(line).record.namespace)).toEqual(expected.map(() => 'ns'));
    // Each answer's record carries the changes of its row's fields: here a Created that is no time.
    const changes = all.flatMap((row) => shapeRecords(shape, row).map(() => shapeChanges(shape, row)));
    expect(lines.map((line) => JSON.parse(line).record.meta?.changes ?? [])).toEqual(changes);
    expect(changes.filter((c) => c.length).length).toBeGreaterThan(0);
    // What a STATE counts: the records, not the rows.
    expect(recordCounter(shape)(batchOf(all))).toBe(expected.length);
    // An empty row gives no record; every non-empty cell gives one.
    expect(
      shapeRecords(
        shape,
        TRICKY_CELLS.map(() => '')
      )
    ).toEqual([]);
    const numbered = NUMBERS.map((n) => {
      const record = shapeRecords(shape, numbers[NUMBERS.indexOf(n)]).find((r) => r.column === 'c5');
      return [n, record?.value_number];
    });
    expect(numbered).toEqual([
      ['0', 0],
      ['-0', -0],
      ['12', 12],
      ['-3.25', -3.25],
      ['007', null],
      ['1e5', null],
      ['+1', null],
      ['1.', null],
      ['.5', null],
      ['3,5', null],
      [' 4', null],
      ['4 ', null],
      ['-', null],
      // A number a double cannot hold reads back as another: null, the text stays in value.
      ['12345678901234567890.5', null],
      ['9007199254740993', null],
      ['9007199254740992', 9007199254740992],
      ['-9007199254740993', null],
      ['1'.repeat(400), null],
      [`0.${'0'.repeat(400)}1`, null],
      ['1234567890123456.7', null],
      // Reads back as the same decimal: taken (0.1 is the double nearest to it, as every reader makes it).
      ['123456789012345.5', 123456789012345.5],
      ['0.1', 0.1],
      ['0.30000000000000004', 0.30000000000000004],
      ['0.3000000000000000444', null],
      ['1.0', 1],
      ['-2.50', -2.5],
      ['100000000000000000000', 1e20],
      ['1e3', null],
      ['+5', null],
      ['-0.0', -0],
    ]);
    // The number is written digit for digit, as the cell has it; a text that is no number keeps value alone.
    expect(lines.filter((l) => l.includes('"value_number":-2.50,'))).toHaveLength(2);
    const long = lines.filter((l) => l.includes(`"value":"${'1'.repeat(400)}"`));
    expect(long.map((l) => JSON.parse(l).record.data.value_number)).toEqual([null, null]);
    // A hashed cell: its HMAC, never a number.
    const hashed = shapeRecords(shape, TRICKY_CELLS).find((r) => r.column === 'c4');
    expect(hashed).toMatchObject({value: hmac(TRICKY_CELLS[4]), value_number: null, again: hmac(TRICKY_CELLS[3])});
  });

  test('hashed cells of a quest stream and of an answers object; a dropped cell is simply not in the shape', () => {
    const shape: RecordShape = {
      stream: {name: 'responses'},
      hashSalt: SALT,
      fields: [
        {kind: 'cell', name: 'a', index: 0},
        {kind: 'cell', name: 'b', index: 1, hash: true},
        {kind: 'cell', name: 'c', index: 2},
        {
          kind: 'cells',
          name: 'answers',
          cells: [
            {key: 'x', index: 0},
            {key: 'y', index: 2, hash: true},
            {key: 'z', index: 4},
          ],
        },
      ],
    };
    const rows = [TRICKY_CELLS, TRICKY_CELLS.map(() => ''), [...TRICKY_CELLS].reverse()];
    const lines = encodeLines(shape, rows);
    expect(lines.map((line) => JSON.parse(line).record.data)).toEqual(rows.map((row) => shapeRecords(shape, row)[0]));
    expect(shapeRecords(shape, TRICKY_CELLS)[0]).toMatchObject({
      b: hmac(TRICKY_CELLS[1]),
      answers: {x: null, y: hmac(TRICKY_CELLS[2]), z: TRICKY_CELLS[4]},
    });
    expect(shapeRecords(shape, ['', '', ''])[0]).toMatchObject({b: null, answers: {x: null, y: null, z: null}});
  });

  test("a cut answer's record says so as `value`; a cut field of the row, in each record of its row", () => {
    const shape: RecordShape = {
      stream: {name: 'answers'},
      fields: [
        {kind: 'text', name: 'response_id', index: 0},
        {
          kind: 'answer',
          cells: [1, 2].map((index) => ({index, constants: [{name: 'column', value: `c${index}`}]})),
          value: 'value',
          number: 'value_number',
        },
        {kind: 'constant', name: 'w', value: 'W'},
      ],
    };
    const scanner = new CsvScanner('|', {maxCellChars: 4});
    scanner.push(Buffer.from('id|a|b\n1|12|abcdef\n123456|7|\n'));
    scanner.end();
    const lines = Buffer.concat(recordEncoder(shape).encode(scanner.take() as RowBatch, 7, 4096))
      .toString('utf8')
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line).record);
    const cut = (field: string) => [{field, change: 'TRUNCATED', reason: 'SOURCE_FIELD_SIZE_LIMITATION'}];
    expect(lines.map((r) => [r.data, r.meta?.changes])).toEqual([
      [{response_id: '1', column: 'c1', value: '12', value_number: 12, w: 'W'}, undefined],
      [{response_id: '1', column: 'c2', value: 'abcd', value_number: null, w: 'W'}, cut('value')],
      [{response_id: '1234', column: 'c1', value: '7', value_number: 7, w: 'W'}, cut('response_id')],
    ]);
  });
});

describe('RecordEncoder: time fields', () => {
  test('a time is written as RFC 3339 in UTC; one that is not a time is null, and meta.changes says so', () => {
    const shape: RecordShape = {
      stream: {name: 'responses'},
      fields: [
        {kind: 'text', name: 'response_id', index: 0},
        {kind: 'time', name: 'created', index: 1},
        {kind: 'cells', name: 'answers', cells: ['Response ID', 'Created', 'Q1'].map((key, index) => ({key, index}))},
        {kind: 'time', name: 'Q1 as a time', index: 2},
      ],
    };
    const rows = [
      ['1', '2026-11-25 04:15:00', '2026-11-25T06:15:00.1234567+02:00'],
      ['2', '25/11/2026 04:15', 'x'.repeat(30)],
      ['3', '', 'a "quoted" 2026-11-25'],
      ['4', '2026-11-25T04:15:00.5Z', '\u0001 not a time'],
    ];
    const lines = Buffer.concat(recordEncoder(shape).encode(batchOf(rows), 7, 256))
      .toString('utf8')
      .trimEnd()
      .split('\n');
    const expected = rows.map((row) => {
      const message = recordMessage(shape.stream, shapeRecords(shape, row)[0], 7) as unknown as {
        record: Record<string, unknown>;
      };
      const changes = shapeChanges(shape, row);
      return changes.length ? {...message, record: {...message.record, meta: {changes}}} : message;
    });
    expect(lines.map((l) => JSON.parse(l))).toEqual(expected);
    expect(expected.map((m) => (m.record.data as Record<string, unknown>).created)).toEqual([
      '2026-11-25T04:15:00Z',
      null,
      null,
      '2026-11-25T04:15:00.5Z',
    ]);
    expect(JSON.parse(lines[1]).record.meta).toEqual({
      changes: [
        {field: 'created', change: 'NULLED', reason: 'SOURCE_SERIALIZATION_ERROR'},
        {field: 'Q1 as a time', change: 'NULLED', reason: 'SOURCE_SERIALIZATION_ERROR'},
      ],
    });
    // An empty cell is no change: it was empty.
    expect(JSON.parse(lines[2]).record.meta.changes).toEqual([
      {field: 'Q1 as a time', change: 'NULLED', reason: 'SOURCE_SERIALIZATION_ERROR'},
    ]);
  });
});

describe('MessageWriter records, encoded on this thread', () => {
  test('every line in the order written, records between logs and states, with backpressure', async () => {
    const {stream, chunks} = slowConsumer();
    const writer = new MessageWriter(stream, (l) => l, 4096);
    expect(writer.encodeInWorker()).toBe(false); // a stream without a file descriptor: encoded here
    const encoder = recordEncoder(SHAPE);
    const expected: string[] = [];
    let waits = 0;
    for (let batch = 0; batch < 60; batch++) {
      const rows = Array.from({length: batch % 7}, (_, i) =>
        TRICKY_CELLS.map((c, k) => (k === 1 ? `${batch}.${i}` : c))
      );
      const wait = rows.length ? writer.writeRecords(batchOf(rows), encoder, batch) : undefined;
      expected.push(...rows.map((row) => expectedLine(row, batch)));
      if (wait) {
        waits++;
        await wait;
      }
      if (batch % 10 === 3) {
        writer.write({type: AirbyteMessageType.LOG, log: {level: 'INFO', message: `log ${batch}`}} as never);
        expected.push(JSON.stringify({type: 'LOG', log: {level: 'INFO', message: `log ${batch}`}}));
      }
      if (batch % 10 === 7) {
        await writer.writeNow(streamState({name: 's'}, {batch}, 1));
        const line = chunks.join('').trimEnd().split('\n').pop();
        expect(line).toContain(`"batch":${batch}`);
        expected.push(line as string);
      }
    }
    await writer.flush();
    writer.close();
    expect(chunks.join('').split('\n').filter(Boolean)).toEqual(expected);
    expect(waits).toBeGreaterThan(0);
  });
});

/** The compiled writer: only there can it start its worker thread (record-worker.js), which writes to a file descriptor. */
const COMPILED = path.resolve(__dirname, '../../lib/src/protocol/output.js');
const COMPILED_SINKS = path.resolve(__dirname, '../../lib/src/protocol/output-sinks.js');
const describeCompiled = fs.existsSync(COMPILED) ? describe : describe.skip;

describeCompiled('MessageWriter on a worker thread that writes to a pipe (compiled)', () => {
  test('a stalled reader stops the writes once the bounded queue is full; every line then arrives in order', async () => {
    /* eslint-disable @typescript-eslint/no-require-imports */
    const Writer = (require(COMPILED) as {MessageWriter: typeof MessageWriter}).MessageWriter;
    const {WORKER_QUEUE_BYTES} = require(COMPILED_SINKS) as {WORKER_QUEUE_BYTES: number};
    /* eslint-enable @typescript-eslint/no-require-imports */
    const fifo = path.join(tempDir('questback-fifo-'), 'out');
    execFileSync('mkfifo', [fifo]);
    // Read and write: opening does not wait for a reader. The worker's socket owns (and closes) it.
    const fd = fs.openSync(fifo, 'r+');
    const writer = new Writer({fd} as unknown as NodeJS.WritableStream, (l) => l, 4096);
    expect(writer.encodeInWorker()).toBe(true);
    const encoder = recordEncoder(SHAPE);
    const rowsOf = (batch: number): string[][] =>
      Array.from({length: 20}, (_, i) => TRICKY_CELLS.map((c, k) => (k === 1 ? `${batch}.${i}` : c)));
    const batchCost = ((b) => b.bytes.buffer.byteLength + b.cells.buffer.byteLength)(batchOf(rowsOf(0)));

    // Nobody reads: writes are taken until the queue holds its bound, then the writer must wait.
    const expected: string[] = [];
    let batch = 0;
    let wait: Promise<void> | undefined;
    for (; batch < (4 * WORKER_QUEUE_BYTES) / batchCost && !wait; batch++) {
      wait = writer.writeRecords(batchOf(rowsOf(batch)), encoder, batch);
      expected.push(...rowsOf(batch).map((row) => expectedLine(row, batch)));
    }
    const acceptedBytes = batch * batchCost;
    expect({waited: wait !== undefined, withinBound: acceptedBytes <= WORKER_QUEUE_BYTES + batchCost}).toEqual({
      waited: true,
      withinBound: true,
    });

    // The reader starts: the wait ends, and what follows (logs, states, more records) keeps its order.
    const reader = fs.createReadStream(fifo);
    const got: Buffer[] = [];
    let gotBytes = 0;
    reader.on('data', (d) => {
      got.push(d as Buffer);
      gotBytes += d.length;
    });
    await wait;
    for (let more = 0; more < 30; more++, batch++) {
      const w = writer.writeRecords(batchOf(rowsOf(batch)), encoder, batch);
      expected.push(...rowsOf(batch).map((row) => expectedLine(row, batch)));
      if (w) await w;
      if (more % 10 === 3) {
        writer.write({type: AirbyteMessageType.LOG, log: {level: 'INFO', message: `log ${more}`}} as never);
        expected.push(JSON.stringify({type: 'LOG', log: {level: 'INFO', message: `log ${more}`}}));
      }
      if (more % 10 === 7) {
        const state = streamState({name: 's'}, {more}, 1);
        await writer.writeNow(state);
        expected.push(JSON.stringify(state).replace('"recordCount":1}', '"recordCount":1.0}'));
      }
    }
    await writer.flush();
    const total = Buffer.byteLength(expected.join('\n') + '\n');
    await new Promise<void>((resolve) => {
      const check = (): void => (gotBytes >= total ? resolve() : void reader.once('data', check));
      check();
    });
    reader.destroy();
    writer.close();
    expect(Buffer.concat(got).toString('utf8').split('\n').filter(Boolean)).toEqual(expected);
  });
});
