// A case file that no suite lists would never run, and nothing would say so: every case file is in exactly
// one suite, every suite has its test file, and jest runs no test file but the suites' and two of their own.
import fs from 'fs';
import path from 'path';

import {SUITES} from '../helpers/suites';

const TEST_ROOT = path.join(__dirname, '..');

/** Paths under test/ of the files whose names end with `suffix`, sorted. */
function filesEndingWith(suffix: string, dir = TEST_ROOT): string[] {
  return fs
    .readdirSync(dir, {withFileTypes: true})
    .flatMap((entry) => {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) return filesEndingWith(suffix, full);
      return entry.name.endsWith(suffix) ? [path.relative(TEST_ROOT, full)] : [];
    })
    .sort();
}

test('every case file is in exactly one suite, and every suite has its test file', () => {
  const listed = Object.entries(SUITES).flatMap(([suite, names]) =>
    names.map((name) => path.join(path.dirname(suite), `${name}.cases.ts`))
  );
  expect([...listed].sort()).toEqual(filesEndingWith('.cases.ts'));
  expect(new Set(listed).size).toBe(listed.length);
  const suiteFiles = Object.keys(SUITES).map((suite) => `${suite}.test.ts`);
  // Test files that are not suites: a case file of their own each (the simulator's contract, and the
  // warehouse test whose PostgreSQL starts once for its file).
  expect(filesEndingWith('.test.ts')).toEqual(
    [...suiteFiles, 'e2e/warehouse-postgres.test.ts', 'simulator.test.ts'].sort()
  );
  for (const suite of Object.keys(SUITES))
    expect(fs.readFileSync(path.join(TEST_ROOT, `${suite}.test.ts`), 'utf8')).toContain(`runSuite('${suite}')`);
});
