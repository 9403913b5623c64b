export type CsvProblem = 'stray-quote' | 'open-quote' | 'after-quote' | 'width' | 'cell-too-large' | 'row-too-large';

/**
 * Thrown for a malformed file; `line` is the physical line (1-based) where the bad row starts. For
 * a cell or row over its bound, `limit` is that bound (characters).
 */
export class CsvFormatError extends Error {
  constructor(
    message: string,
    readonly line: number,
    readonly problem: CsvProblem,
    readonly limit?: number
  ) {
    super(`${message} on line ${line}`);
    this.name = 'CsvFormatError';
  }
}
