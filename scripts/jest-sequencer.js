// The order in which jest starts the test files. With times from an earlier run, jest's own: failed first,
// then longest first. Without (a fresh clone), jest would go by file size, which says nothing of a suite
// (a line that names its case files): then the test files that are no suite come first (the warehouse test
// waits on its PostgreSQL, the longest in real time), then the suites in the order of test/suites.json,
// heaviest first, so that the last ones to start are short and no worker is left alone with a long one.
'use strict';

const path = require('path');
const TestSequencer = require('@jest/test-sequencer').default;

const SUITES = Object.keys(require('../test/suites.json'));

class SuitesFirstHeaviest extends TestSequencer {
  sort(tests) {
    if (tests.every((test) => this.time(test) != null)) return super.sort(tests);
    const name = (test) =>
      path.relative(path.join(test.context.config.rootDir, 'test'), test.path).replace(/\.test\.ts$/, '');
    const rank = (test) => SUITES.indexOf(name(test));
    return [...tests].sort((a, b) => rank(a) - rank(b) || (name(a) < name(b) ? -1 : 1));
  }
}

module.exports = SuitesFirstHeaviest;
