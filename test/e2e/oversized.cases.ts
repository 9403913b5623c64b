// Never stuck on content (issue 25): a cell over the bound (LIMITS.csv.maxCellChars) is emitted cut
// to it, its record's meta.changes says so, a warning names the quest, window, column and sizes (no
// value), the sync completes, and the next sync moves past it. In-process against the simulator.

import {LIMITS} from '../../src/core/limits';
import {records, stateFile, warnings} from '../helpers/connector';
import {streamOf, withWorld} from '../helpers/fixtures';

const DAY = 86_400_000;
const Q = '0e7e51ce-0000-4000-8000-000000000025';
const HUGE = LIMITS.csv.maxCellChars + 1024 * 1024;

test('a 5 Mi-character cell: emitted cut to the bound with meta.changes, the sync completes, the next moves past it', async () => {
  const at = (days: number): string => new Date(Date.now() - days * DAY).toISOString();
  const header = ['Response ID', 'Created', 'Comment', 'Score'];
  const rows = [
    ['101', at(5), 'fine', '1'],
    ['102', at(4), `${'é'.repeat(HUGE - 3)}end`, '2'],
    ['103', at(3), 'also fine', '3'],
  ];
  await withWorld({seed: 25, exportDurationMs: 10, quests: [{id: Q, table: {header, rows}}]}, async (w) => {
    const config = w.config({start_date: at(10)});
    const catalog = await w.discoveredCatalog(config, 'incremental');
    const first = await w.run(['read', '--config', config, '--catalog', catalog]);
    const mine = records(first.messages).filter((r) => r.record.stream === streamOf(Q));
    const huge = mine.find((r) => r.record.data.response_id === '102');
    const comment = String(huge?.record.data.comment);
    expect({
      code: first.code,
      invalid: first.invalid,
      ids: mine.map((r) => r.record.data.response_id),
      kept: comment.length,
      prefix: comment === 'é'.repeat(LIMITS.csv.maxCellChars),
      score: huge?.record.data.score,
      meta: huge?.record.meta,
      others: mine.filter((r) => r.record.meta).length,
      warnings: warnings(first.messages).filter((m) => /truncated/.test(m)),
    }).toEqual({
      code: 0,
      invalid: [],
      ids: ['101', '102', '103'],
      kept: LIMITS.csv.maxCellChars,
      prefix: true,
      score: '2',
      meta: {changes: [{field: 'comment', change: 'TRUNCATED', reason: 'SOURCE_FIELD_SIZE_LIMITATION'}]},
      others: 1,
      warnings: [
        expect.stringMatching(
          new RegExp(
            `^Quest ${Q}: 1 cell\\(s\\) of .+ were truncated \\(e\\.g\\. column "Comment": ${HUGE} characters, cut to ${LIMITS.csv.maxCellChars},`
          )
        ),
      ],
    });
    // The next sync starts after the window that held it: nothing again, no warning.
    const second = await w.run([
      'read',
      '--config',
      config,
      '--catalog',
      catalog,
      '--state',
      w.file(stateFile(first.messages)),
    ]);
    expect({
      code: second.code,
      again: records(second.messages).filter((r) => r.record.stream === streamOf(Q)).length,
      warnings: warnings(second.messages).filter((m) => /truncated/.test(m)),
    }).toEqual({code: 0, again: 0, warnings: []});
  });
});
