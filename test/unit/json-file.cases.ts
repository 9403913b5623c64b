// Config, catalog and state files that are not JSON: the error names the file, the line and the
// column, and what is wrong there, never an excerpt of the file (a config file holds the secret).

import fs from 'fs';
import path from 'path';
import VError from 'verror';

import {findJsonSyntaxProblem, readJsonFile} from '../../src/protocol/json-file';
import {prng} from '../helpers/fake-api';
import {tempDir} from '../helpers/connector';

function errorOf(text: string, what = 'config'): {message: string; type: unknown} {
  const file = path.join(tempDir(), `${what}.json`);
  fs.writeFileSync(file, text);
  try {
    readJsonFile(file, what);
  } catch (err) {
    return {message: (err as Error).message.replace(file, '<file>'), type: VError.info(err as Error).failureType};
  }
  throw new Error('no error');
}

describe('a JSON file with a mistake', () => {
  test('an unquoted client secret: line and column, and not a character of the secret', () => {
    const {message, type} = errorOf('{\n  "client_id": "x",\n  "client_secret": sim-secret-7Qe2\n}\n');
    expect(type).toBe('config_error');
    expect(message).toBe(
      'The config file <file> is not valid JSON at line 3, column 20: a value was expected here (text in double quotes, a number, true, false, null, an object or a list); text values need double quotes.'
    );
    expect(message).not.toMatch(/sim|7Qe2|secret/);
  });

  test.each([
    ['a comma after the last member', '{"a": 1,\n}', 2, 1, /a comma before \}/],
    ['a comma after the last item', '{"a": [1, 2, ]}', 1, 14, /a comma before \]/],
    ['a missing colon', '{"a" 1}', 1, 6, /a colon \(:\) after the member name/],
    ['a missing comma', '{"a": 1\n "b": 2}', 2, 2, /a comma \(,\) or a closing \}/],
    ['a member name without quotes', '{a: 1}', 1, 2, /a member name in double quotes/],
    ['single quotes', "{'a': 1}", 1, 2, /a member name in double quotes/],
    ['a text not closed', '{"a": "secret\n', 1, 14, /a line break or control character inside a text/],
    ['a text not closed at the end of the file', '{"a": "secret', 1, 7, /not closed before the end of the file/],
    ['a missing closing brace', '{"a": 1', 1, 8, /a closing \} is missing/],
    ['an invalid escape', '{"a": "x\\q"}', 1, 9, /an invalid escape/],
    ['a number with a leading plus', '{"a": +1}', 1, 7, /a value was expected/],
    ['more after the value', '{"a": 1} {"b": 2}', 1, 10, /more text follows the JSON value/],
    ['an empty file', '  \n', 2, 1, /the file is empty/],
    ['a CRLF file', '{\r\n"a": 1,\r\n"b": tru\r\n}', 3, 6, /a value was expected/],
  ])('%s', (_name, text, line, column, problem) => {
    const found = findJsonSyntaxProblem(text);
    expect(found).toEqual({line, column, problem: expect.stringMatching(problem)});
    expect(JSON.parse.bind(null, text)).toThrow();
  });

  test('a byte-order mark before valid JSON is accepted', () => {
    const file = path.join(tempDir(), 'state.json');
    fs.writeFileSync(file, '\uFEFF[{"type": "STREAM"}]');
    expect(readJsonFile(file, 'state')).toEqual([{type: 'STREAM'}]);
  });

  test('a file that cannot be read names the file and the reason', () => {
    expect(() => readJsonFile('/nonexistent/catalog.json', 'catalog')).toThrow(
      'Cannot read the catalog file /nonexistent/catalog.json: file not found.'
    );
    const folder = tempDir();
    expect(() => readJsonFile(folder, 'config')).toThrow(
      `Cannot read the config file ${folder}: it is a folder, not a file.`
    );
  });

  test('agrees with JSON.parse on whether 3,000 damaged documents are JSON', () => {
    const random = prng(25);
    const base = JSON.stringify(
      {
        client_id: 'x',
        client_secret: 's\u00e9cr\\et "q"',
        quest_ids: ['a', 'b'],
        n: -1.5e3,
        t: true,
        f: false,
        z: null,
      },
      null,
      1
    );
    const pieces = ['"', ',', ':', '{', '}', '[', ']', '\\', '\n', 'x', '1', '-', 'e', '.', ' ', 'nul', '\u0001'];
    for (let i = 0; i < 3000; i++) {
      let text = base;
      for (let k = 1 + Math.floor(random() * 2); k > 0; k--) {
        const at = Math.floor(random() * text.length);
        const op = random();
        const piece = pieces[Math.floor(random() * pieces.length)];
        text = op < 0.4 ? text.slice(0, at) + text.slice(at + 1) : text.slice(0, at) + piece + text.slice(at);
      }
      let valid = true;
      try {
        JSON.parse(text);
      } catch {
        valid = false;
      }
      expect({text, valid: findJsonSyntaxProblem(text) === undefined}).toEqual({text, valid});
    }
  });

  // Nesting deeper than any call stack: a finder that recursed per level overflowed it (a system_error).
  const DEEP = 100_000;
  test.each([
    ['truncated', `{"a":${'['.repeat(DEEP)}`, 1, DEEP + 6, /the file ends where a value was expected/],
    ['with a stray character at the bottom', `${'[{"a":'.repeat(DEEP)}x`, 1, 6 * DEEP + 1, /a value was expected/],
    ['closed, then more text', `${'['.repeat(DEEP)}${']'.repeat(DEEP)}]`, 1, 2 * DEEP + 1, /more text follows/],
    [
      'truncated, over lines',
      `{"a":\n${'[1,\n'.repeat(DEEP)}`,
      DEEP + 2,
      1,
      /the file ends where a value was expected/,
    ],
  ])('nested 100,000 deep, %s: line, column and what is wrong', (_name, text, line, column, problem) => {
    const {message, type} = errorOf(text);
    expect(type).toBe('config_error');
    expect(message).toMatch(
      new RegExp(`^The config file <file> is not valid JSON at line ${line}, column ${column}: `)
    );
    expect(message).toMatch(problem);
  });

  test('valid JSON nested 100,000 deep is read', () => {
    const file = path.join(tempDir(), 'catalog.json');
    fs.writeFileSync(file, `{"streams": ${'['.repeat(DEEP)}${']'.repeat(DEEP)}}`);
    expect(readJsonFile(file, 'catalog')).toHaveProperty('streams');
  });
});
