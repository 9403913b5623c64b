// Input files read with a bound: a config, catalog or state larger than any real one (a device such
// as /dev/zero, a runaway file) is refused with a config_error that names the file and the bound,
// without reading more than the bound; a large real state (40 MB, 2.5 million listed rows) still reads.
import {spawnSync} from 'child_process';
import fs from 'fs';
import path from 'path';
import VError from 'verror';

import {binMainArgv, ROOT} from '../../harness/bin-main';
import {LIMITS} from '../../src/core/limits';
import {formatBytes} from '../../src/core/quantities';
import {readJsonFile} from '../../src/protocol/json-file';
import {REQUIRED_OPTIONS} from '../helpers/fixtures';
import {tempDir, writeJson} from '../helpers/temp';

/** Only against a hang: a file read whole without a bound (/dev/zero) never ends. */
const HANG_GUARD_MS = 120_000;
const BOUND = formatBytes(LIMITS.input.fileMaxBytes);

/** node with `args` in the project's root (the compiled lib/), killed after HANG_GUARD_MS. */
function guarded(args: string[]): {stdout: string; status: number | null} {
  const run = spawnSync(process.execPath, args, {cwd: ROOT, encoding: 'utf8', timeout: HANG_GUARD_MS});
  expect(run.signal).toBeNull();
  return run;
}

test('a regular file larger than the bound is refused by its size, before it is read', () => {
  const file = path.join(tempDir(), 'state.json');
  const fd = fs.openSync(file, 'w');
  fs.ftruncateSync(fd, LIMITS.input.fileMaxBytes + 1); // sparse: nothing written
  fs.closeSync(fd);
  let error: Error | undefined;
  try {
    readJsonFile(file, 'state');
  } catch (err) {
    error = err as Error;
  }
  expect(error?.message).toBe(
    `The state file ${file} is larger than ${BOUND}, the most the connector reads of a state file; no real one comes near. Check that --state names the state file itself, not a device or an endless stream; if it is the connection's state, reset the connection's state in Airbyte.`
  );
  expect(VError.info(error as Error).failureType).toBe('config_error');
});

test(
  '/dev/zero as the state: one config_error once the bound is read, not a process that grows until it aborts',
  () => {
    const dir = tempDir();
    const config = writeJson(dir, 'config.json', {
      ...REQUIRED_OPTIONS,
      api_url: 'http://127.0.0.1:9',
      auth_url: 'http://127.0.0.1:9',
    });
    const catalog = writeJson(dir, 'catalog.json', {streams: []});
    const run = guarded(binMainArgv(['read', '--config', config, '--catalog', catalog, '--state', '/dev/zero']));
    const traces = run.stdout
      .split('\n')
      .filter((line) => line.includes('"TRACE"'))
      .map((line) => (JSON.parse(line) as {trace: {error: {message: string; failure_type: string}}}).trace.error);
    expect(traces).toEqual([
      expect.objectContaining({
        failure_type: 'config_error',
        message: expect.stringMatching(
          `^The state file /dev/zero is larger than ${BOUND}, the most the connector reads`
        ),
      }),
    ]);
    expect(run.status).toBe(1);
  },
  HANG_GUARD_MS + 10_000
);

test(
  'a state of 40 MB listing 2.5 million emitted rows reads whole',
  () => {
    const lib = (file: string): string => JSON.stringify(path.join(ROOT, 'lib', 'src', ...file.split('/')));
    const file = path.join(tempDir(), 'state.json');
    const script = `
      const fs = require('fs');
      const {readJsonFile} = require(${lib('protocol/json-file.js')});
      const {parseStateInput, emittedOf} = require(${lib('sync/state/stream-state.js')});
      const keys = Array.from({length: 2500000}, (_, i) => 'r' + String(i).padStart(13, '0'));
      const emitted = {until: '2026-01-02T00:00:00.000Z', keys};
      const stream_state = {cursor: '2026-01-01T00:00:00.000Z', cursor_field: ['Created'], emitted};
      fs.writeFileSync(${JSON.stringify(file)}, JSON.stringify([{type: 'STREAM', stream: {stream_descriptor: {name: 'quest_x'}, stream_state}}]));
      const read = emittedOf(parseStateInput(readJsonFile(${JSON.stringify(file)}, 'state')).get('quest_x'), 'quest_x');
      console.log(JSON.stringify({bytes: fs.statSync(${JSON.stringify(file)}).size, keys: read.keys.length, last: read.keys.at(-1)}));`;
    expect(JSON.parse(guarded(['-e', script]).stdout)).toEqual({
      bytes: expect.any(Number),
      keys: 2_500_000,
      last: 'r0000002499999',
    });
    expect(fs.statSync(file).size).toBeGreaterThan(40_000_000);
  },
  HANG_GUARD_MS + 10_000
);
