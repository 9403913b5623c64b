// A stream's state remembers the hash_salt its hashed cells were made with (as a keyed hash of a fixed
// text), so that a sync under another salt says so: what questStart reads and writes, whatever the
// config and the state hold.
import {saltCheck} from '../../src/core/keyed-hash';
import {questState, saltCheckOf} from '../../src/sync/state/stream-state';
import {questStart} from '../../src/sync/streams/quest-read';
import {quietLogger, virtualRuntime} from '../helpers/fake-api';
import {parsedConfig} from '../helpers/fixtures';

const SALT = 'a salt of sixteen+ characters';
const HASHING = {sensitive_columns: [{column: 'E-mail', action: 'hash'}], hash_salt: SALT};

function start(overrides: Record<string, unknown>, state: unknown, incremental = true) {
  const ctx = {config: parsedConfig(overrides), runtime: virtualRuntime(), logger: quietLogger(), syncEnd: Date.now()};
  return questStart(ctx, 'Stream quest_x', state, incremental);
}

const stateWith = (check?: unknown) => ({
  cursor: '2025-01-01T00:00:00.000Z',
  cursor_field: ['created'],
  ...(check === undefined ? {} : {salt_check: check}),
});

test('the check: 16 characters of base64url, one per salt, with nothing of the salt in it', () => {
  expect(saltCheck(SALT)).toMatch(/^[A-Za-z0-9_-]{16}$/);
  expect(saltCheck(SALT)).toBe(saltCheck(SALT));
  expect(saltCheck(`${SALT}.`)).not.toBe(saltCheck(SALT));
  expect(saltCheck(SALT)).not.toContain('salt');
});

test.each([
  ['no check in the state (a first sync, or a state of an older build)', stateWith(), false],
  ['the same salt', stateWith(saltCheck(SALT)), false],
  ['another salt', stateWith(saltCheck('the earlier salt, long enough')), true],
  ['a check that is no text (ignored)', stateWith(42), false],
])('a config that hashes, a state with %s: changed %s; the progress carries this salt', (_, state, changed) => {
  const {progress, saltChanged} = start(HASHING, state);
  expect(saltChanged).toBe(changed);
  expect(progress.saltCheck).toBe(saltCheck(SALT));
  expect(questState(progress, 'created').salt_check).toBe(saltCheck(SALT));
  expect(saltCheckOf(questState(progress, 'created'))).toBe(saltCheck(SALT));
});

test('a sync that hashes nothing keeps the earlier check, so that hashing again under another salt is still told', () => {
  const earlier = saltCheck('the earlier salt, long enough');
  const {progress, saltChanged} = start({sensitive_columns: [{column: 'E-mail', action: 'drop'}]}, stateWith(earlier));
  expect(saltChanged).toBe(false);
  expect(progress.saltCheck).toBe(earlier);
  expect(start({}, stateWith(earlier)).progress.saltCheck).toBe(earlier);
  expect(start({}, stateWith()).progress.saltCheck).toBeUndefined();
  expect(questState(start({}, stateWith()).progress, 'created')).not.toHaveProperty('salt_check');
});

test('a full refresh reads no state: nothing to compare, the check of this salt from then on', () => {
  const {progress, saltChanged} = start(HASHING, stateWith(saltCheck('the earlier salt, long enough')), false);
  expect(saltChanged).toBe(false);
  expect(progress.saltCheck).toBe(saltCheck(SALT));
});

describe("the state's sensitive_columns entries that matched the quest (sensitive_matched)", () => {
  const PROTECTING = {
    sensitive_columns: [
      {column: 'E-mail', action: 'hash'},
      {column: 'Phone', action: 'drop'},
      {column: 'Q2', action: 'keep'},
    ],
    hash_salt: SALT,
  };
  const matchedIn = (list: unknown) => ({...stateWith(), sensitive_matched: list});

  test.each([
    ['entries of the config', ['E-mail', 'Phone'], ['E-mail', 'Phone']],
    ['an entry the config no longer has, or keeps', ['E-mail', 'Fax', 'Q2'], ['E-mail']],
    ['texts named like members of Object.prototype', ['__proto__', 'constructor', 'E-mail'], ['E-mail']],
    ['what is no list of texts (ignored)', {__proto__: ['E-mail'], length: 1}, []],
    ['a list with other values', ['Phone', 7, null, {column: 'E-mail'}], ['Phone']],
  ])("a state listing %s (%j): only the config's entries that hash or drop", (_, list, want) => {
    const {progress, sensitiveMatched} = start(PROTECTING, matchedIn(list));
    expect(sensitiveMatched).toEqual(want);
    expect(progress.sensitiveMatched).toBe(sensitiveMatched);
  });

  test('the state writes the list sorted, and only when it holds an entry; a full refresh starts from none', () => {
    const {progress} = start(PROTECTING, matchedIn(['Phone', 'E-mail']));
    expect(questState(progress, 'created').sensitive_matched).toEqual(['E-mail', 'Phone']);
    expect(questState(start(PROTECTING, stateWith()).progress, 'created')).not.toHaveProperty('sensitive_matched');
    expect(start(PROTECTING, matchedIn(['E-mail']), false).sensitiveMatched).toEqual([]);
  });
});
