// The probe's page (docs/probe.md) is made from the probe (npm run docs:probe): the table of what to do
// about each verdict must be the probe's own, and the sample report must be what the probe writes today.

import fs from 'fs';

import {PROBE_PAGE, sampleReport} from '../../scripts/probe-sample';
import {ASSUMPTIONS} from '../../src/probe/assumptions';
import {adviceTable} from '../../src/probe/report';
import {TestClock} from '../helpers/clock';

const page = fs.readFileSync(PROBE_PAGE, 'utf8');

function block(name: string): string {
  const m = new RegExp(`<!-- ${name}:start -->([\\s\\S]*)<!-- ${name}:end -->`).exec(page);
  return m ? m[1].trim() : '';
}

/** A Markdown table without the padding Prettier adds: cells trimmed, separator rows as ---. */
function cells(table: string): string[][] {
  return table.split('\n').map((line) =>
    line
      .replace(/^\||\|$/g, '')
      .split(/(?<!\\)\|/)
      .map((cell) => cell.trim().replace(/^-+$/, '---'))
  );
}

/**
 * A report as far as it does not depend on the moment and the machine: ids, times, addresses and numbers
 * masked, and what a verdict saw left out (which status words the polls meet depends on the load).
 */
function skeleton(report: string): string[] {
  return report
    .trim()
    .split('\n')
    .map((line) => {
      const masked = line
        .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<id>')
        .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<time>')
        .replace(/https?:\/\/[^\s|]+/g, '<url>')
        .replace(/\d+(\.\d+)?/g, '#');
      if (masked.startsWith('- Seen:')) return '- Seen: …';
      const row = /^\| `[a-z.-]+` \|/.test(masked) ? masked.split(' | ') : undefined;
      return row && row.length === 4 ? `${row.slice(0, 3).join(' | ')} | …` : masked;
    });
}

test("the page's table of verdicts is the probe's (else run npm run docs:probe)", () => {
  expect(cells(block('probe-advice'))).toEqual(cells(adviceTable()));
});

test('the sample report on the page was made by the probe, with every verdict (else run npm run docs:probe)', () => {
  const sample = block('probe-sample');
  expect(sample).toMatch(/^`{3,}text\n# Questback export API: probe report\n/);
  expect(sample).toMatch(/\*\*\d+ confirmed, \d+ contradicted, \d+ unknown\.\*\*/);
  for (const {id} of ASSUMPTIONS) expect(sample).toContain(`| \`${id}\` |`);
  expect(sample).toContain('## Contradicted, and what to do');
});

test('the sample report on the page is what the probe writes today (else run npm run docs:probe)', async () => {
  const onPage = block('probe-sample')
    .replace(/^`{3,}text\n/, '')
    .replace(/\n`{3,}$/, '');
  const today = await sampleReport(new TestClock(7));
  expect(skeleton(onPage)).toEqual(skeleton(today));
});
