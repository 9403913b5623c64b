// CSV encoding (RFC 4180 quoting, CRLF or LF rows, the quest's byte encoding) and the streaming
// export-file writer, including the deliberate corruptions a quest can be configured with.

import {once} from 'events';
import * as fs from 'fs';
import {byteLength, codecOf} from './encoding';
import {Corruption, FileEncoding} from './types';

const CHUNK_CHARS = 256 * 1024;

export const HTML_BODY =
  '<!DOCTYPE html>\n<html><head><title>Questback - Sign in</title></head>\n' +
  '<body><h1>Session expired</h1><p>Please <a href="/login">sign in</a> again.</p></body></html>\n';

// The ASP.NET default error page: what a failing backend behind the same gateway answers with.
export const HTML_ERROR_PAGE =
  '<!DOCTYPE html>\r\n<html lang="en">\r\n<head>\r\n    <meta charset="utf-8" />\r\n    <title>Error</title>\r\n</head>\r\n' +
  '<body>\r\n    <h1 class="text-danger">Error.</h1>\r\n' +
  '    <h2 class="text-danger">An error occurred while processing your request.</h2>\r\n</body>\r\n</html>\r\n';

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
  encoding: FileEncoding;
  eol: string;
  /** The row (its index) that ragged-row and stray-quote corrupt. */
  middle: number;
  /** stray-quote: the column of the middle row written without quotes. */
  strayQuoteColumn?: number;
}

export interface WrittenFile {
  bytes: number;
  /** cut-last-cell: the byte offset inside the last line's last cell where downloads end. */
  cutAt?: number;
}

/**
 * Where a download of `line` (the encoded cells of the last line) is cut: inside the last cell
 * that has two characters or more, so the cut never falls on a cell boundary (an empty or
 * one-character last cell moves the cut to an earlier cell; the Response ID always qualifies).
 */
function cutInside(encoded: readonly string[], separator: string): string {
  let k = encoded.length - 1;
  while (k > 0 && [...encoded[k]].length < 2) k--;
  const chars = [...encoded[k]];
  return encoded.slice(0, k).join(separator) + (k > 0 ? separator : '') + chars.slice(0, chars.length >> 1).join('');
}

/**
 * Writes the export file with backpressure (never more than about one chunk in memory).
 * Resolves with its size when the file is complete and closed, undefined when `aborted()` turned true.
 */
export async function writeCsvFile(
  path: string,
  src: CsvSource,
  aborted: () => boolean
): Promise<WrittenFile | undefined> {
  const out = fs.createWriteStream(path, {highWaterMark: 1 << 20});
  const codec = codecOf(src.encoding);
  const {lo, hi, separator: sep, corruption, eol} = src;
  // Bytes written so far; counted only where a cut position needs them (it costs a scan per chunk).
  let bytes = 0;
  const counting = corruption === 'cut-last-cell';
  const writeBytes = async (data: string | Buffer): Promise<void> => {
    if (counting) bytes += byteLength(data);
    if (!out.write(data)) await once(out, 'drain');
  };
  const write = (chunk: string): Promise<void> => writeBytes(codec.encode(chunk));
  const encode = cellEncoder(sep);
  let cutAt: number | undefined;

  try {
    if (corruption === 'html-body' || corruption === 'html-octet-stream') {
      // A page from a proxy or a failing backend, not from the export writer: always UTF-8.
      await writeBytes(Buffer.from(corruption === 'html-body' ? HTML_BODY : HTML_ERROR_PAGE, 'utf8'));
    } else if (corruption !== 'empty-body' && (hi > lo || src.headerOnEmpty)) {
      let chunk = codec.leading;
      // The last line is where no-final-newline drops the line end and cut-last-cell cuts.
      const line = (cells: readonly string[], last: boolean): string => {
        const encoded = cells.map(encode);
        if (last && corruption === 'cut-last-cell') {
          cutAt = bytes + byteLength(codec.encode(chunk + cutInside(encoded, sep)));
        }
        return encoded.join(sep) + (last && corruption === 'no-final-newline' ? '' : eol);
      };
      if (corruption !== 'no-header') chunk += line(src.header, hi === lo);
      for (let i = lo; i < hi; i++) {
        const cells = src.row(i);
        if (corruption === 'ragged-row' && i === src.middle) cells.push('unexpected extra cell');
        if (corruption === 'unterminated-quote' && i === hi - 1) {
          // The last cell opens a quote that is never closed.
          const last = cells.pop() ?? '';
          chunk += cells.map(encode).join(sep) + sep + '"' + last.replace(/"/g, '""') + ' (cut off' + eol;
        } else if (corruption === 'stray-quote' && i === src.middle && src.strayQuoteColumn !== undefined) {
          // One cell holds a bare quote and is written as is, which RFC 4180 forbids.
          const col = src.strayQuoteColumn;
          chunk += cells.map((c, k) => (k === col ? c : encode(c))).join(sep) + eol;
        } else {
          chunk += line(cells, i === hi - 1);
        }
        if (chunk.length >= CHUNK_CHARS) {
          if (aborted()) break;
          await write(chunk);
          chunk = '';
        }
      }
      if (hi === lo && corruption === 'ragged-row') chunk += 'ragged' + eol;
      if (hi === lo && corruption === 'unterminated-quote') chunk += '"unterminated' + eol;
      if (chunk.length > 0 && !aborted()) await write(chunk);
    }
    if (aborted()) {
      out.destroy();
      await fs.promises.rm(path, {force: true});
      return undefined;
    }
    out.end();
    await once(out, 'close');
    return {bytes: out.bytesWritten, cutAt};
  } catch (err) {
    out.destroy();
    await fs.promises.rm(path, {force: true}).catch(() => undefined);
    throw err;
  }
}
