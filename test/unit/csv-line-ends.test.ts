// The parser counts how rows ended and how many cells were quoted: what the probe reports of a file's
// dialect. A CRLF cut between two chunks is one CRLF.

import {CsvRowParser} from '../../src/csv/parser';

function parse(chunks: string[]): CsvRowParser {
  const parser = new CsvRowParser('|');
  const rows: string[][] = [];
  for (const chunk of chunks) parser.push(chunk, rows);
  parser.end(rows);
  return parser;
}

describe('line ends and quoted cells', () => {
  test('CRLF, LF and CR rows, a line break inside a quoted cell not counted as a row end', () => {
    const parser = parse(['a|b\r\n"x\r\ny"|2\n3|"4"\r5|6\r\n']);
    expect(parser.lineEnds).toEqual({crlf: 2, lf: 1, cr: 1});
    expect(parser.quotedCells).toBe(2);
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
