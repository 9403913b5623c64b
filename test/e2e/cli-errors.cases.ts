// A config, catalog or state file that is not JSON, through the command line: the message names the
// file, the line and the column, and shows nothing of the file (a config file holds the client secret).

import {errorTraces, runConnector, tempDir, writeJson} from '../helpers/connector';

const SECRET = 'sim-secret-7Qe2xVn4Kd9LpR3tWb6Y';
const CONFIG_WITH_BARE_SECRET = `{\n  "client_id": "291846375018264733@questback-simulator",\n  "client_secret": ${SECRET},\n  "quest_ids": ["3f6c1a52-8d4e-4b7a-9c21-5e0d7f8a1b34"]\n}\n`;
const GOOD_CONFIG = {
  client_id: 'x',
  client_secret: SECRET,
  quest_ids: ['3f6c1a52-8d4e-4b7a-9c21-5e0d7f8a1b34'],
  start_date: '2024-01-01T00:00:00Z',
  api_url: 'http://127.0.0.1:9',
  auth_url: 'http://127.0.0.1:9',
};

test('check with an unquoted client_secret: line and column, no excerpt of the file', async () => {
  const dir = tempDir();
  const file = writeJson(dir, 'config.json', CONFIG_WITH_BARE_SECRET);
  const run = await runConnector(['check', '--config', file]);
  expect(run.code).toBe(0);
  expect(run.messages).toEqual([
    {
      type: 'CONNECTION_STATUS',
      connectionStatus: {
        status: 'FAILED',
        message: `The config file ${file} is not valid JSON at line 3, column 20: a value was expected here (text in double quotes, a number, true, false, null, an object or a list); text values need double quotes.`,
      },
    },
  ]);
  expect(run.stdout + run.stderr).not.toMatch(/sim-secret|7Qe2|_secret"/);
});

test('discover with an unquoted client_secret: an error trace naming line and column, exit 1', async () => {
  const file = writeJson(tempDir(), 'config.json', CONFIG_WITH_BARE_SECRET);
  const run = await runConnector(['discover', '--config', file]);
  expect(run.code).toBe(1);
  expect(errorTraces(run.messages)[0].trace.error).toMatchObject({
    failure_type: 'config_error',
    message: `The config file ${file} is not valid JSON at line 3, column 20: a value was expected here (text in double quotes, a number, true, false, null, an object or a list); text values need double quotes.`,
  });
  expect(run.stdout + run.stderr).not.toMatch(/sim-secret|7Qe2/);
});

test.each([
  [
    'catalog',
    '{"streams": [\n  {"stream": {"name": "quest_x"}, "sync_mode": "incremental",}\n]}',
    'line 2, column 62: a comma before }',
  ],
  ['state', "[{'type': 'STREAM'}]", 'line 1, column 3: a member name in double quotes was expected here'],
])('read with a %s file that is not JSON names line and column', async (what, text, where) => {
  const dir = tempDir();
  const config = writeJson(dir, 'config.json', GOOD_CONFIG);
  const catalog =
    what === 'catalog' ? writeJson(dir, 'catalog.json', text) : writeJson(dir, 'catalog.json', {streams: []});
  const state = what === 'state' ? ['--state', writeJson(dir, 'state.json', text)] : [];
  const run = await runConnector(['read', '--config', config, '--catalog', catalog, ...state]);
  expect(run.code).toBe(1);
  const message = errorTraces(run.messages)[0].trace.error?.message;
  expect(message).toContain(`The ${what} file ${dir}/${what}.json is not valid JSON at ${where}`);
  expect(message).not.toMatch(/quest_x|STREAM/);
});

test('discover --help says what it lists in each layout', async () => {
  const run = await runConnector(['discover', '--help']);
  expect(run.code).toBe(0);
  expect(run.stdout.replace(/\s+/g, ' ')).toContain(
    'with stream_layout per_quest, quest_<id> for each quest (its columns learnt from a small export of it) and columns; with combined, responses and columns (no export)'
  );
});
