// Counts in the log are English: one row, two rows (core/quantities.ts writes every count).

import {plural, formatBytes} from '../../src/core/quantities';
import {logs, rowsAt, runHostile, withServer} from '../helpers/hostile';

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
