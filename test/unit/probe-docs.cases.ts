// The guide's part on the probe is made from the probe (npm run docs:probe): the table of what to do
// about each verdict must be the probe's own, and the sample report must hold every verdict there is.

import fs from 'fs';
import path from 'path';

import {ASSUMPTIONS} from '../../src/probe/assumptions';
import {adviceTable} from '../../src/probe/report';

const guide = fs.readFileSync(path.resolve(__dirname, '..', '..', 'docs', 'questback.md'), 'utf8');

function block(name: string): string {
  const m = new RegExp(`<!-- ${name}:start -->([\\s\\S]*)<!-- ${name}:end -->`).exec(guide);
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

test("the guide's table of verdicts is the probe's (else run npm run docs:probe)", () => {
  expect(cells(block('probe-advice'))).toEqual(cells(adviceTable()));
});

test('the sample report in the guide was made by the probe, with every verdict (else run npm run docs:probe)', () => {
  const sample = block('probe-sample');
  expect(sample).toMatch(/^`{3,}text\n# Questback export API: probe report\n/);
  expect(sample).toMatch(/\*\*\d+ confirmed, \d+ contradicted, \d+ unknown\.\*\*/);
  for (const {id} of ASSUMPTIONS) expect(sample).toContain(`| \`${id}\` |`);
  expect(sample).toContain('## Contradicted, and what to do');
});
