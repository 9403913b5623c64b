// The suites jest runs. Each test/<folder>/<suite>.test.ts runs the case files that test/suites.json lists
// for it (<name>.cases.ts in the same folder), in that order, each in a describe named <folder>/<name>.
// Why not a test file each: jest gives every test file a fresh module registry, so each one compiled and
// loaded the connector, axios and the simulator again, about 0.3 s of CPU before its first test; 65 case
// files in 13 suites take about a fifth less CPU (npm test on 2 cores: its time). suites.json lists the
// suites heaviest first: on a first run, with no times of its own, jest starts them in that order
// (scripts/jest-sequencer.js). unit/suites.cases.ts checks that no case file is left out.
// One case file alone: npx jest <its suite> -t <folder>/<name>, e.g. npx jest test/e2e/layouts -t e2e/long.
import path from 'path';

import suites from '../suites.json';

export const SUITES: Readonly<Record<string, readonly string[]>> = suites;

/** Declares the case files of `suite` (a key of SUITES). */
export function runSuite(suite: string): void {
  const folder = path.dirname(suite);
  for (const name of SUITES[suite]) {
    describe(`${folder}/${name}`, () => {
      // A case file declares its tests as it loads, and they belong in this describe: a synchronous require.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      require(path.join(__dirname, '..', folder, `${name}.cases`));
    });
  }
}
