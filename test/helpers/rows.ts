import {encodeWtf8} from '../../src/csv/decoder';
import {CsvScanner} from '../../src/csv/parser';
import {RowBatch} from '../../src/csv/rows';

/**
 * Rows as the reader hands them on: written as CSV (a cell quoted when it needs to be, and every
 * third one anyway, so that both kinds are met) under a header, and scanned.
 */
export function batchOf(rows: readonly (readonly string[])[], separator = '|'): RowBatch {
  const width = rows[0]?.length ?? 1;
  let n = 0;
  const cell = (text: string): string =>
    n++ % 3 === 0 || /["\r\n]/.test(text) || text.includes(separator) ? `"${text.replace(/"/g, '""')}"` : text;
  const lines = [Array.from({length: width}, (_, i) => `h${i}`), ...rows].map((row) => row.map(cell).join(separator));
  const scanner = new CsvScanner(separator);
  scanner.push(encodeWtf8(`${lines.join('\r\n')}\r\n`));
  scanner.end();
  return scanner.take() ?? {bytes: new Uint8Array(0), cells: new Int32Array(0), rows: 0, width};
}
