import fs from 'fs';

import {connectorError, fileProblem} from '../core/errors';
import {LIMITS} from '../core/limits';
import {formatBytes} from '../core/quantities';

/** Where a JSON text first breaks the grammar, and what was wrong there, in words that quote nothing of it. */
interface JsonSyntaxProblem {
  line: number;
  column: number;
  problem: string;
}

class Stop extends Error {
  constructor(
    readonly offset: number,
    readonly problem: string
  ) {
    super(problem);
  }
}

const VALUE_EXPECTED =
  'a value was expected here (text in double quotes, a number, true, false, null, an object or a list)';

/**
 * A JSON (RFC 8259) syntax check that says where the text first goes wrong. JSON.parse says it too,
 * but with an excerpt of the text ("Unexpected token 's', ..."_secret": sim-sec"..."), and a config
 * file holds the client secret: these messages name the line, the column and the kind of mistake only.
 */
export function findJsonSyntaxProblem(text: string): JsonSyntaxProblem | undefined {
  let pos = 0;
  const fail = (problem: string, at = pos): never => {
    throw new Stop(at, problem);
  };
  const space = (): void => {
    while (pos < text.length && ' \t\n\r'.includes(text[pos])) pos++;
  };
  const end = (): boolean => pos >= text.length;
  const literal = (word: string): void => {
    if (text.startsWith(word, pos)) pos += word.length;
    else fail(/^[A-Za-z_]/.test(text[pos]) ? `${VALUE_EXPECTED}; text values need double quotes` : VALUE_EXPECTED);
  };
  const string = (): void => {
    const start = pos++;
    for (;;) {
      if (end()) fail('a text in double quotes is not closed before the end of the file', start);
      const c = text.charCodeAt(pos);
      if (c === 0x22) {
        pos++;
        return;
      }
      if (c < 0x20) fail('a line break or control character inside a text in double quotes (write it as \\n)');
      if (c === 0x5c) {
        const escape = text[pos + 1];
        if (escape === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(pos + 2, pos + 6))) fail('an invalid \\u escape in a text');
          pos += 6;
        } else if (escape !== undefined && '"\\/bfnrt'.includes(escape)) pos += 2;
        else fail('an invalid escape (a backslash not followed by one of " \\ / b f n r t u) in a text');
      } else pos++;
    }
  };
  const number = (): void => {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(pos, pos + 400));
    if (!m) fail('an invalid number');
    pos += (m as RegExpExecArray)[0].length;
  };
  /** A member's name and its colon, at the start of the member. */
  const memberName = (): void => {
    if (end()) fail('the file ends inside an object: a closing } is missing');
    if (text[pos] !== '"') fail('a member name in double quotes was expected here');
    string();
    space();
    if (text[pos] !== ':')
      fail(end() ? 'the file ends after a member name' : 'a colon (:) after the member name was expected here');
    pos++;
  };
  /** A value that is no object or list, at its first character. */
  const scalar = (c: string): void => {
    if (c === '"') return string();
    if (c === '-' || (c >= '0' && c <= '9')) return number();
    if (c === 't') return literal('true');
    if (c === 'f') return literal('false');
    if (c === 'n') return literal('null');
    fail(/[A-Za-z_]/.test(c) ? `${VALUE_EXPECTED}; text values need double quotes` : VALUE_EXPECTED);
  };
  // The closing brackets of the objects and lists open at `pos`, innermost last: a list, not
  // recursion, so that no depth of nesting (a damaged file, a hostile one) overflows the call stack.
  const open: ('}' | ']')[] = [];
  try {
    space();
    if (end()) fail('the file is empty');
    for (;;) {
      // A value is expected here.
      space();
      if (end()) fail('the file ends where a value was expected');
      const c = text[pos];
      if (c === '{' || c === '[') {
        const close = c === '{' ? '}' : ']';
        pos++;
        space();
        if (text[pos] !== close) {
          open.push(close);
          if (close === '}') memberName();
          continue;
        }
        pos++;
      } else scalar(c);
      // A value ended: close what it ends, until a comma asks for the next value.
      for (;;) {
        space();
        const close = open.at(-1);
        if (close === undefined) {
          if (!end()) fail('more text follows the JSON value (one value per file)');
          return undefined;
        }
        const last = close === '}' ? 'member' : 'item';
        if (end())
          fail(`the file ends inside ${close === '}' ? 'an object' : 'a list'}: a closing ${close} is missing`);
        if (text[pos] === close) {
          pos++;
          open.pop();
          continue;
        }
        if (text[pos] !== ',') fail(`a comma (,) or a closing ${close} was expected here`);
        pos++;
        space();
        if (text[pos] === close) fail(`a comma before ${close} (JSON allows no comma after the last ${last})`);
        if (close === '}') memberName();
        break;
      }
    }
  } catch (err) {
    if (!(err instanceof Stop)) throw err;
    return {...lineAndColumn(text, err.offset), problem: err.problem};
  }
}

/** 1-based line and column of an offset; a CRLF is one line end. */
function lineAndColumn(text: string, offset: number): {line: number; column: number} {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return {line, column: offset - lineStart + 1};
}

class TooLarge extends Error {}

const CHUNK_BYTES = 1024 * 1024;

/**
 * A file's text, if it holds at most `maxBytes`: a regular file is judged by its size before it is
 * read; anything else (a pipe, a device such as /dev/zero) is read in chunks until it ends or passes
 * the bound. readFileSync would read it whole, however large, and /dev/zero never ends.
 */
function readBounded(file: string, maxBytes: number): string {
  const fd = fs.openSync(file, 'r');
  try {
    const stat = fs.fstatSync(fd);
    if (stat.isFile()) {
      if (stat.size > maxBytes) throw new TooLarge();
      return fs.readFileSync(fd, 'utf8');
    }
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, maxBytes + 1 - total));
      const n = fs.readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      chunks.push(n === chunk.length ? chunk : chunk.subarray(0, n));
      total += n;
      if (total > maxBytes) throw new TooLarge();
    }
    return Buffer.concat(chunks, total).toString('utf8');
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * A JSON file given on the command line (config, catalog, state). Errors are config_errors that name
 * the file, and for a syntax error the line and column, never its content: a config file holds the
 * client secret, and a parser's excerpt of the text around the mistake would show it.
 */
export function readJsonFile(file: string, what: string, maxBytes = LIMITS.input.fileMaxBytes): unknown {
  let text: string;
  try {
    text = readBounded(file, maxBytes);
  } catch (err) {
    if (err instanceof TooLarge) {
      throw connectorError(
        'config_error',
        `The ${what} file ${file} is larger than ${formatBytes(maxBytes)}, the most the connector reads of a ${what} file; no real one comes near. Check that --${what} names the ${what} file itself, not a device or an endless stream${what === 'state' ? "; if it is the connection's state, reset the connection's state in Airbyte" : ''}.`
      );
    }
    throw connectorError('config_error', `Cannot read the ${what} file ${file}: ${fileProblem(err)}.`);
  }
  // Editors on Windows may save a byte-order mark, which JSON.parse refuses and a person cannot see.
  const json = text.replace(/^\uFEFF/, '');
  try {
    return JSON.parse(json);
  } catch {
    const found = findJsonSyntaxProblem(json);
    const where = found ? ` at line ${found.line}, column ${found.column}: ${found.problem}` : '';
    throw connectorError('config_error', `The ${what} file ${file} is not valid JSON${where}.`);
  }
}
