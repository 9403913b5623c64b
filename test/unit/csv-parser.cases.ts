import {parse} from 'csv-parse/sync';

import {LIMITS} from '../../src/core/limits';
import {Utf8Transcoder} from '../../src/csv/decoder';
import {CsvFormatError} from '../../src/csv/csv-error';
import {CsvScanner} from '../../src/csv/parser';
import {CsvParserOptions} from '../../src/csv/scanner-state';
import {CellCut, RowBatch, rowStrings} from '../../src/csv/rows';

/** One file with everything that breaks naive parsers. */
const TRICKY =
  '\uFEFFResponse ID|Created|"Q1 ""Comments"", free"|"Q2 | Choice"\r\n' +
  '1|2026-01-01T00:00:00.000Z|"pipe | inside, comma; semicolon"|a\r\n' +
  '2|2026-01-01T00:00:00.001Z|"doubled ""quotes"" and\r\nCRLF and\nLF inside"|\r\n' +
  '3||"日本語 العربية кириллица 👩‍💻 🎉"|"  spaces  "\r\n' +
  '\r\n' +
  '4|2026-01-01T00:00:00.003Z|""|"ends with quote"""\r\n' +
  '5|x|"multi\r\n\r\nblank lines inside"|last';

/** The header and the rows, as text; rows taken every few chunks, as the reader takes them. */
function scanned(scanner: CsvScanner, rows: string[][], takeEvery: number, chunk: number): void {
  if (!rows.length && scanner.header) rows.push(scanner.header);
  if (chunk % takeEvery !== 0) return;
  const batch = scanner.take();
  if (batch) rows.push(...rowStrings(batch));
}

function parseInChunks(text: string, chunkBytes: number, separator = '|', options: CsvParserOptions = {}): string[][] {
  const bytes = Buffer.from(text, 'utf8');
  const transcoder = new Utf8Transcoder();
  const scanner = new CsvScanner(separator, options);
  const rows: string[][] = [];
  let chunk = 0;
  for (let i = 0; i < bytes.length; i += chunkBytes) {
    scanner.push(transcoder.write(bytes.subarray(i, i + chunkBytes)));
    scanned(scanner, rows, 3, ++chunk);
  }
  scanner.push(transcoder.end());
  scanner.end();
  scanned(scanner, rows, 1, 0);
  return rows;
}

describe('CsvScanner', () => {
  const reference = parse(TRICKY, {
    bom: true,
    delimiter: '|',
    skip_empty_lines: true,
    relax_column_count: false,
  }) as string[][];

  test.each([1, 7, 64, 1000])('chunks of %i bytes give exactly the rows csv-parse gives for the whole file', (size) => {
    expect(parseInChunks(TRICKY, size)).toEqual(reference);
  });

  test('the reference really is tricky: 6 rows, with CR/LF, quotes and emoji in cells', () => {
    expect(reference).toHaveLength(6);
    expect(reference[2][2]).toBe('doubled "quotes" and\r\nCRLF and\nLF inside');
    expect(reference[3][2]).toContain('👩‍💻');
  });

  test('a file without a final line end keeps its last row; LF-only and other separators work', () => {
    expect(parseInChunks('a,b\n1,2', 3, ',')).toEqual([
      ['a', 'b'],
      ['1', '2'],
    ]);
    expect(parseInChunks('a\tb\n"x\ty"\t2\n', 2, '\t')).toEqual([
      ['a', 'b'],
      ['x\ty', '2'],
    ]);
  });

  test('an unterminated quote is an error naming the line where its row starts', () => {
    expect(() => parseInChunks('a|b\r\n1|2\r\n3|"never closed\r\n4|5\r\n', 5)).toThrow(
      new CsvFormatError('Quote not closed: a quoted cell runs to the end of the file', 3, 'open-quote')
    );
  });

  test('a row with the wrong number of cells is an error naming its line, counting lines inside quoted cells', () => {
    expect(() => parseInChunks('a|b\n"x\ny"|1\n1|2|3\n', 4)).toThrow(
      /Wrong number of cells: expected 2 like the header, got 3 on line 4/
    );
  });

  test.each([1, 2, 3, 5, 13, 1000])(
    'line numbers count the line ends inside quoted cells, in chunks of %i bytes',
    (size) => {
      const rows = ['a|b|c', '"x\ny\n"|"p""\nq"|1', '""|"\r\n\n"|"r\r\ns""\n"', '1|"\n"|"\n"'];
      const text = rows.join('\r\n') + '\r\n';
      const lineOf = (prefix: string): number => prefix.split('\n').length;
      expect(() => parseInChunks(`${text}1|2\n`, size)).toThrow(`got 2 on line ${lineOf(text)}`);
      expect(() => parseInChunks(`${text}1|"\n"x|3\n`, size)).toThrow(`after a closing quote on line ${lineOf(text)}`);
      expect(() => parseInChunks(`${text}"\n"|2|x"\n`, size)).toThrow(
        `Unexpected quote inside an unquoted cell on line ${lineOf(text) + 1}`
      );
    }
  );

  test('a quote inside an unquoted cell or text after a closing quote is an error', () => {
    expect(() => parseInChunks('a|b\n1|x"y\n', 100)).toThrow(/Unexpected quote.* on line 2/);
    expect(() => parseInChunks('a|b\n"1"x|2\n', 100)).toThrow(/after a closing quote on line 2/);
  });

  test('an empty input gives no rows', () => {
    expect(parseInChunks('', 10)).toEqual([]);
    expect(parseInChunks('\uFEFF', 1)).toEqual([]);
  });

  test('with acceptStrayQuotes, a quote inside an unquoted cell is text, as csv-parse relax_quotes reads it', () => {
    const text = 'a|b\n1|24" screen\n2|"quoted"\n';
    const expected = parse(text, {delimiter: '|', relax_quotes: true}) as string[][];
    expect(parseInChunks(text, 3, '|', {acceptStrayQuotes: true})).toEqual(expected);
    expect(expected[1][1]).toBe('24" screen');
  });

  test('terminated says whether the input ended where a row ends', () => {
    const ended = new CsvScanner('|');
    ended.push(Buffer.from('a|b\r\n1|2\r'));
    ended.push(Buffer.from('\n'));
    ended.end();
    expect(ended.terminated).toBe(true);
    const cut = new CsvScanner('|');
    cut.push(Buffer.from('a|b\r\n1|this was cut in the mid'));
    expect(cut.terminated).toBe(false);
    cut.end();
    expect(cut.terminated).toBe(false);
    expect(rowStrings(cut.take() as RowBatch)).toEqual([['1', 'this was cut in the mid']]);
  });

  test('a BOM written twice is dropped whole: the first header name is plain', () => {
    expect(parseInChunks('\uFEFF\uFEFFResponse ID|x\n1|2\n', 2)[0]).toEqual(['Response ID', 'x']);
  });

  test('the time is linear in the input, whatever the cell sizes: one 20 MB cell costs about ten 2 MB ones', () => {
    // CPU time of this process, not wall time: other processes on a busy machine stretch the wall
    // clock but hardly the CPU time this parse takes.
    const cpuMs = (): number => {
      const {user, system} = process.cpuUsage();
      return (user + system) / 1000;
    };
    const timeCell = (size: number, quoted: boolean): number => {
      const cell = quoted ? `"${'x'.repeat(size - 2)}"` : 'x'.repeat(size);
      const text = Buffer.from(`a|b\n1|${cell}\n`);
      const scanner = new CsvScanner('|', {maxCellChars: 30_000_000, maxRowChars: 30_000_000});
      const started = cpuMs();
      for (let i = 0; i < text.length; i += 64 * 1024) scanner.push(text.subarray(i, i + 64 * 1024));
      scanner.end();
      const batch = scanner.take() as RowBatch;
      const used = cpuMs() - started;
      expect(batch.cells[2] - 1 - batch.cells[1]).toBe(size);
      return used;
    };
    for (const quoted of [false, true]) {
      const small = Math.max(2, timeCell(2_000_000, quoted));
      // The smaller of two runs: a garbage collection landing in one of them does not count.
      const large = Math.min(timeCell(20_000_000, quoted), timeCell(20_000_000, quoted));
      // Linear: about 10x. Quadratic would be about 100x (the old parser took 17.5 s for 20 MB).
      expect(large / small).toBeLessThan(40);
    }
  });

  /** Rows and the cuts of their cells (row numbers counted over the whole file), pushed in chunks of `size` bytes. */
  function scanCuts(text: string, size: number, bounds: CsvParserOptions): {rows: string[][]; cuts: CellCut[]} {
    const scanner = new CsvScanner('|', bounds);
    const bytes = Buffer.from(text, 'utf8');
    const out: {rows: string[][]; cuts: CellCut[]} = {rows: [], cuts: []};
    const take = (): void => {
      const batch = scanner.take();
      if (!batch) return;
      for (const cut of batch.cuts ?? []) out.cuts.push({...cut, row: cut.row + out.rows.length});
      out.rows.push(...rowStrings(batch));
    };
    for (let i = 0; i < bytes.length; i += size) {
      scanner.push(bytes.subarray(i, i + size));
      take();
    }
    scanner.end();
    take();
    return out;
  }

  test.each([1, 2, 3, 64])(
    'a cell or a row over its bound is cut to it, whole characters and quotes kept, and said in the batch (chunks of %i bytes)',
    (size) => {
      const bounds = {maxCellChars: 10, maxRowChars: 16};
      const cut = (row: number, cell: number, kept: number, chars: number, byRow = false): CellCut => ({
        row,
        cell,
        kept,
        chars,
        byRow,
      });
      expect(scanCuts('a|b\n0123456789|"0123"\n', size, bounds)).toEqual({rows: [['0123456789', '0123']], cuts: []});
      for (const [cell, kept, chars] of [
        ['0123456789xyz', '0123456789', 13],
        ['"0123456789xyz"', '0123456789', 13],
        ['"01""23456789xy"', '01"2345678', 13],
        ['"012345678""9x"', '012345678"', 12],
        ['"012\n3456789xyz"', '012\n345678', 14],
        ['"é😀3456789xyz"', 'é😀3456789', 13],
        ['é😀345678😀x', 'é😀345678', 12],
      ] as const) {
        expect(scanCuts(`a|b\n1|2\n3|${cell}\n4|5\n`, size, bounds)).toEqual({
          rows: [
            ['1', '2'],
            ['3', kept],
            ['4', '5'],
          ],
          cuts: [cut(1, 1, 10, chars)],
        });
      }
      // The last cell of a file without a final line end counts too.
      expect(scanCuts('a|b\n1|0123456789x', size, bounds)).toEqual({
        rows: [['1', '0123456789']],
        cuts: [cut(0, 1, 10, 11)],
      });
      // 9 + 1 + 7 characters: each cell fits, the row does not; a cell after the row's bound is cut to nothing.
      expect(scanCuts('a|b|c\n012345678|0123456|"xy"\n4|5|6', size, bounds)).toEqual({
        rows: [
          ['012345678', '012345', ''],
          ['4', '5', '6'],
        ],
        cuts: [cut(0, 1, 6, 7, true), cut(0, 2, 0, 2, true)],
      });
      // A header over a bound is an error: no row could be read against it.
      expect(() => scanCuts('a|0123456789x\n1|2\n', size, bounds)).toThrow(
        expect.objectContaining({problem: 'cell-too-large', limit: 10, line: 1})
      );
    }
  );

  test('a cell that never ends keeps memory at the bound: the rest is dropped as it arrives, and counted', () => {
    const scanner = new CsvScanner('|');
    scanner.push(Buffer.from('a|b\n1|"'));
    const megabyte = Buffer.alloc(1024 * 1024, 'x');
    const before = process.memoryUsage().arrayBuffers;
    let most = 0;
    // 32 MiB: more than the bound below, which a cell kept whole would break.
    for (let pushed = 0; pushed < 32; pushed++) {
      scanner.push(megabyte);
      most = Math.max(most, process.memoryUsage().arrayBuffers - before);
    }
    scanner.push(Buffer.from('"\n2|3\n'));
    scanner.end();
    const batch = scanner.take() as RowBatch;
    expect({
      rows: rowStrings(batch).map((row) => row.map((cell) => cell.length)),
      cuts: batch.cuts,
      // The cell kept, a chunk and the buffer's growth: far below the 32 MiB pushed.
      withinBound: most < 5 * LIMITS.csv.maxCellChars || most,
    }).toEqual({
      rows: [
        [1, LIMITS.csv.maxCellChars],
        [1, 1],
      ],
      cuts: [{row: 0, cell: 1, kept: LIMITS.csv.maxCellChars, chars: 32 * 1024 * 1024, byRow: false}],
      withinBound: true,
    });
  });
});

describe('Utf8Transcoder', () => {
  test.each([1, 2, 3, 4, 5, 7, 64])(
    'counts invalid UTF-8 and NULs alike in chunks of %i bytes, a U+FFFD of the text not among them',
    (size) => {
      const valid = Buffer.from(
        'Response ID|Created|' + 'x'.repeat(64) + '|a\u0000b — ü 👩‍💻 \uFFFD x\u0000\u0000',
        'utf8'
      );
      // A lone continuation byte, a cut 3-byte sequence, an overlong form, a surrogate, a cut 4-byte sequence at the end.
      const bytes = Buffer.concat([
        valid,
        Buffer.from([0x80, 0x41, 0xe2, 0x82, 0x41, 0xc0, 0xaf]),
        valid,
        Buffer.from([0xed, 0xa0, 0x80]),
        valid,
        Buffer.from([0xf0, 0x9f, 0x98]),
      ]);
      const decoder = new Utf8Transcoder();
      const out: Buffer[] = [];
      for (let i = 0; i < bytes.length; i += size) out.push(decoder.write(bytes.subarray(i, i + size)));
      out.push(decoder.end());
      const text = Buffer.concat(out).toString('utf8');
      expect(text).toBe(new TextDecoder().decode(bytes));
      expect(decoder.nulChars).toBe(9);
      expect(decoder.invalidSequences).toBe((text.match(/\uFFFD/g) ?? []).length - 3);
      expect(decoder.invalidSequences).toBeGreaterThanOrEqual(5);
    }
  );
});
