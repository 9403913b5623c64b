// Counts in the log are English: one row, two rows (core/quantities.ts writes every count). A read
// from a state says so, and the rate it sizes windows by is the one the state knows, not 0.

import {amount, formatBytes, plural} from '../../src/core/quantities';
import {DAY_MS, logs, rowsAt, runHostile, stateMessages, withServer} from '../helpers/hostile';

const Q = '1b4e28ba-2fa1-41d2-883f-0016d3cca427';

test('plural and formatBytes', () => {
  expect([0, 1, 2, 1234.4].map((n) => plural(n, 'row'))).toEqual(['0 rows', '1 row', '2 rows', '1,234 rows']);
  expect(plural(1, 'quest entry', 'quest entries')).toBe('1 quest entry');
  expect([512, 48 * 1024, 27.2 * 1048576, 1.25 * 1073741824].map(formatBytes)).toEqual([
    '512 B',
    '48 KB',
    '27.2 MB',
    '1.3 GB',
  ]);
  expect([0, 0.286, 0.0041, 1, 2.54, 9.96, 12.4, 1234.4].map((n) => amount(n, 'row'))).toEqual([
    '0 rows',
    '0.29 rows',
    '0.0041 rows',
    '1 row',
    '2.5 rows',
    '10 rows',
    '12 rows',
    '1,234 rows',
  ]);
});

test('a read of one row says "1 row" and "1 record", never "1 rows"', async () => {
  await withServer({quests: [{id: Q, rows: rowsAt([[1, 'The only answer']])}]}, async (server) => {
    const run = await runHostile(server, 'read');
    expect(run.code).toBe(0);
    const messages = logs(run).map((l) => l.message);
    expect(messages.filter((m) => /\b1 (rows|records|columns|exports|quests|streams)\b/.test(m))).toEqual([]);
    expect(messages.some((m) => /done, 1 row emitted, \d+ B downloaded$/.test(m))).toBe(true);
    expect(messages.some((m) => /: complete, 1 record$/.test(m))).toBe(true);
  });
});

test('a read from a state says it starts from the cursor, and sizes its window at the rate the state knows', async () => {
  // 20 responses over the last 60 days: about 0.3 a day, well under one.
  const rows = rowsAt(Array.from({length: 20}, (_, i): [number, string] => [58 - i * 3, `Answer ${i}`]));
  await withServer({quests: [{id: Q, rows}]}, async (server) => {
    const config = {start_date: new Date(server.clock.now() - 70 * DAY_MS).toISOString()};
    const first = await runHostile(server, 'read', {config});
    expect(first.code).toBe(0);
    const startDate = first.config.start_date as string;
    expect(logs(first)[0].message).toBe(`Reading 1 stream(s) of 1 configured quest(s) from start_date ${startDate}`);
    const last = stateMessages(first, Q).at(-1)?.state;
    const known = (last?.stream.stream_state as unknown as {density: {rows_per_day: number}}).density.rows_per_day;
    expect(known).toBeGreaterThan(0.1);
    expect(known).toBeLessThan(0.5);

    const second = await runHostile(server, 'read', {config, state: [last]});
    expect(second.code).toBe(0);
    const lines = logs(second).map((l) => l.message);
    expect(lines[0]).toBe(
      `Reading 1 stream(s) of 1 configured quest(s) from the cursor in the state (streams without a state: from start_date ${startDate})`
    );
    const sized = lines.filter((m) => / sized for about /.test(m));
    expect(sized).toHaveLength(1);
    expect(sized[0]).toMatch(new RegExp(` sized for about 100,000 rows at ${amount(known, 'row')} a day$`));
  });
});
