// Config checks in time linear in the config's size, and oversized settings refused at once by their
// size. Sizes are chosen so that a quadratic check would take hours while a linear one takes
// milliseconds. The checks are synchronous, so they run in a child process that a hang guard kills:
// no test bounds elapsed time more tightly than that.
import {spawnSync} from 'child_process';
import path from 'path';

import {binMainArgv, ROOT} from '../../harness/bin-main';
import {parseConfig} from '../../src/core/config';
import {LIMITS} from '../../src/core/limits';
import {REQUIRED_OPTIONS} from '../helpers/fixtures';
import {tempDir, writeJson} from '../helpers/temp';

const NOW = Date.parse('2026-06-01T00:00:00Z');
/** Only against a hang: a quadratic check of these sizes takes hours. */
const HANG_GUARD_MS = 120_000;

/** node with `args` in the project's root (the compiled lib/), killed after HANG_GUARD_MS. */
function guarded(args: string[]): string {
  const run = spawnSync(process.execPath, args, {cwd: ROOT, encoding: 'utf8', timeout: HANG_GUARD_MS});
  expect(run.signal).toBeNull();
  return run.stdout;
}

/** What `bin/main check` says of a config with `overrides`. */
function checkSays(overrides: Record<string, unknown>): string {
  const file = writeJson(tempDir(), 'config.json', {...REQUIRED_OPTIONS, ...overrides});
  const status = guarded(binMainArgv(['check', '--config', file]))
    .split('\n')
    .filter((line) => line.includes('CONNECTION_STATUS'));
  return (JSON.parse(status[0]) as {connectionStatus: {message: string}}).connectionStatus.message;
}

const idOf = (i: number): string => `d0d0d0d0-0000-4000-8000-${i.toString(16).padStart(12, '0')}`;

test.each(['api_url', 'auth_url'])(
  '%s of 2,500,000 slashes is refused by its length',
  (key) => {
    expect(checkSays({[key]: `https://${'/'.repeat(2_500_000)}`})).toBe(
      `Invalid configuration: '${key}' is 2500008 characters long; a base URL has at most ${LIMITS.input.urlChars}. Use the base address, e.g. ${key === 'api_url' ? 'https://api.questback.com' : 'https://auth.questback.com'}.`
    );
  },
  HANG_GUARD_MS + 10_000
);

test(
  'more quest ids than a connection reads are refused at once with the limit',
  () => {
    expect(checkSays({quest_ids: Array.from({length: 100_001}, (_, i) => idOf(i))})).toBe(
      `Invalid configuration: 'quest_ids' lists 100001 quest ids; one connection reads at most ${LIMITS.input.questIds}. Split the quests across connections (stream_layout "combined" suits hundreds of quests in one).`
    );
  },
  HANG_GUARD_MS + 10_000
);

test(
  "the spec validator's uniqueItems is linear: 300,000 items, the repeat found at the end",
  () => {
    const spec = path.join(ROOT, 'lib', 'src', 'core', 'spec.js');
    const script = `
      const {violation} = require(${JSON.stringify(spec)});
      const schema = {type: 'array', items: {type: 'string'}, uniqueItems: true};
      const items = Array.from({length: 300000}, (_, i) => 'item ' + i);
      console.log(JSON.stringify([violation(schema, items) ?? null, violation(schema, [...items, 'item 17'])]));`;
    expect(JSON.parse(guarded(['-e', script]))).toEqual([null, {keyword: 'uniqueItems', item: 300_000}]);
  },
  HANG_GUARD_MS + 10_000
);

function messageOf(config: Record<string, unknown>): string {
  try {
    parseConfig({...REQUIRED_OPTIONS, ...config}, NOW);
    return 'accepted';
  } catch (err) {
    return (err as Error).message;
  }
}

test('a URL at the length limit is checked, its trailing slashes cut', () => {
  const url = `https://api.questback.com/gw${'/'.repeat(LIMITS.input.urlChars - 28)}`;
  expect(url).toHaveLength(LIMITS.input.urlChars);
  expect(parseConfig({...REQUIRED_OPTIONS, api_url: url}, NOW).config.api_url).toBe('https://api.questback.com/gw');
  expect(messageOf({api_url: `${url}/`})).toMatch(/is 2049 characters long; a base URL has at most 2048/);
});

test('the most quest ids are read, each checked once for a repeat', () => {
  const ids = Array.from({length: LIMITS.input.questIds}, (_, i) => idOf(i));
  expect(parseConfig({...REQUIRED_OPTIONS, quest_ids: ids}, NOW).config.quest_ids).toEqual(ids);
  ids[ids.length - 1] = ids[0].toUpperCase();
  expect(messageOf({quest_ids: ids})).toMatch(`quest id ${ids[0]} is listed twice`);
});
