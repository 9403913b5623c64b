// The parser counts how rows ended and how many cells were quoted: what the probe reports of a file's
// dialect. A CRLF cut between two chunks is one CRLF.

import {CsvScanner} from '../../src/csv/parser';

function parse(chunks: string[]): CsvScanner {
  const scanner = new CsvScanner('|');
  for (const chunk of chunks) {
    scanner.push(Buffer.from(chunk, 'utf8'));
    scanner.take();
  }
  scanner.end();
  return scanner;
}

describe('line ends and quoted cells', () => {
  test('CRLF, LF and CR rows, a line break inside a quoted cell not counted as a row end', () => {
    const scanner = parse(['a|b\r\n"x\r\ny"|2\n3|"4"\r5|6\r\n']);
    expect(scanner.lineEnds).toEqual({crlf: 2, lf: 1, cr: 1});
    expect(scanner.quotedCells).toBe(2);
  });

  test.each([
    ['a CRLF cut between CR and LF', ['a|b\r', '\n1|2\r\n'], {crlf: 2, lf: 0, cr: 0}],
    ['a CR at the end of a chunk, then a row', ['a|b\r', '1|2\r'], {crlf: 0, lf: 0, cr: 2}],
    ['a file ending in a CR', ['a|b\r'], {crlf: 0, lf: 0, cr: 1}],
    ['a file without a final line end', ['a|b\n1|2'], {crlf: 0, lf: 1, cr: 0}],
  ])('%s', (_name, chunks, ends) => {
    expect(parse(chunks).lineEnds).toEqual(ends);
  });
});
