// CSV encoding (RFC 4180 quoting, CRLF rows, UTF-8 BOM) and the streaming export-file writer,
// including the deliberate corruptions a quest can be configured with.

import {once} from 'events';
import * as fs from 'fs';
import {Corruption} from './types';

export const BOM = '\uFEFF';
const CHUNK_CHARS = 256 * 1024;

export const HTML_BODY =
  '<!DOCTYPE html>\n<html><head><title>Questback - Sign in</title></head>\n' +
  '<body><h1>Session expired</h1><p>Please <a href="/login">sign in</a> again.</p></body></html>\n';

/** Returns a function that encodes one cell: quoted when it holds the separator, a quote, CR or LF. */
export function cellEncoder(separator: string): (value: string) => string {
  const needsQuotes = new RegExp(`["\\r\\n${separator.replace(/[\\\]^-]/g, '\\$&')}]`);
  return (value) => (needsQuotes.test(value) ? `"${value.replace(/"/g, '""')}"` : value);
}

export interface CsvSource {
  header: string[];
  /** Row indexes [lo, hi) to write, in order. */
  lo: number;
  hi: number;
  row(i: number): string[];
  separator: string;
  corruption?: Corruption;
  headerOnEmpty: boolean;
}

/**
 * Writes the export file with backpressure (never more than about one chunk in memory).
 * Resolves true when the file is complete and closed, false when `aborted()` turned true.
 */
export async function writeCsvFile(path: string, src: CsvSource, aborted: () => boolean): Promise<boolean> {
  const out = fs.createWriteStream(path, {highWaterMark: 1 << 20});
  const write = async (chunk: string): Promise<void> => {
    if (!out.write(chunk)) await once(out, 'drain');
  };
  const {lo, hi, separator: sep, corruption} = src;
  const encode = cellEncoder(sep);
  const line = (cells: readonly string[]): string => cells.map(encode).join(sep) + '\r\n';

  try {
    if (corruption === 'html-body') {
      await write(HTML_BODY);
    } else if (corruption !== 'empty-body' && (hi > lo || src.headerOnEmpty)) {
      let chunk = BOM;
      if (corruption !== 'no-header') chunk += line(src.header);
      const raggedAt = lo + Math.floor((hi - lo) / 2);
      for (let i = lo; i < hi; i++) {
        const cells = src.row(i);
        if (corruption === 'ragged-row' && i === raggedAt) cells.push('unexpected extra cell');
        if (corruption === 'unterminated-quote' && i === hi - 1) {
          // The last cell opens a quote that is never closed.
          const last = cells.pop() ?? '';
          chunk += cells.map(encode).join(sep) + sep + '"' + last.replace(/"/g, '""') + ' (cut off\r\n';
        } else {
          chunk += line(cells);
        }
        if (chunk.length >= CHUNK_CHARS) {
          if (aborted()) break;
          await write(chunk);
          chunk = '';
        }
      }
      if (hi === lo && corruption === 'ragged-row') chunk += 'ragged\r\n';
      if (hi === lo && corruption === 'unterminated-quote') chunk += '"unterminated\r\n';
      if (chunk.length > 0 && !aborted()) await write(chunk);
    }
    if (aborted()) {
      out.destroy();
      await fs.promises.rm(path, {force: true});
      return false;
    }
    out.end();
    await once(out, 'close');
    return true;
  } catch (err) {
    out.destroy();
    await fs.promises.rm(path, {force: true}).catch(() => undefined);
    throw err;
  }
}
