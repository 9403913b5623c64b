// CSV encoding (RFC 4180 quoting, CRLF or LF rows, the quest's byte encoding) and the streaming
// export-file writer, including the deliberate corruptions a quest can be configured with.

import {once} from 'events';
import * as fs from 'fs';
import {byteLength, codecOf} from './encoding';
import {Corruption, CsvOptions, FileEncoding} from './types';

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
 * The export file's bytes, in chunks of about CHUNK_CHARS characters (a string is UTF-8, which a
 * file stream encodes fastest). `written` counts the bytes
 * where a cut position needs them and receives cut-last-cell's cut once the last line is made.
 */
function* fileChunks(src: CsvSource, written: {bytes: number; cutAt?: number}): Generator<string | Buffer> {
  const codec = codecOf(src.encoding);
  const {lo, hi, separator: sep, corruption, eol} = src;
  // Bytes are counted only where a cut position needs them (it costs a scan per chunk).
  const counting = corruption === 'cut-last-cell';
  const bytesOf = (data: string | Buffer): string | Buffer => {
    if (counting) written.bytes += byteLength(data);
    return data;
  };
  const encode = cellEncoder(sep);

  if (corruption === 'html-body' || corruption === 'html-octet-stream') {
    // A page from a proxy or a failing backend, not from the export writer: always UTF-8.
    yield bytesOf(Buffer.from(corruption === 'html-body' ? HTML_BODY : HTML_ERROR_PAGE, 'utf8'));
    return;
  }
  if (corruption === 'empty-body' || (hi === lo && !src.headerOnEmpty)) return;
  let chunk = codec.leading;
  // The last line is where no-final-newline drops the line end and cut-last-cell cuts.
  const line = (cells: readonly string[], last: boolean): string => {
    const encoded = cells.map(encode);
    if (last && corruption === 'cut-last-cell') {
      written.cutAt = written.bytes + byteLength(codec.encode(chunk + cutInside(encoded, sep)));
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
      yield bytesOf(codec.encode(chunk));
      chunk = '';
    }
  }
  if (hi === lo && corruption === 'ragged-row' && src.middle === lo) chunk += 'ragged' + eol;
  if (hi === lo && corruption === 'unterminated-quote') chunk += '"unterminated' + eol;
  if (chunk.length > 0) yield bytesOf(codec.encode(chunk));
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
  const written = {bytes: 0, cutAt: undefined as number | undefined};
  try {
    for (const chunk of fileChunks(src, written)) {
      if (aborted()) break;
      if (!out.write(chunk)) await once(out, 'drain');
    }
    if (aborted()) {
      out.destroy();
      await fs.promises.rm(path, {force: true});
      return undefined;
    }
    out.end();
    await once(out, 'close');
    return {bytes: out.bytesWritten, cutAt: written.cutAt};
  } catch (err) {
    out.destroy();
    await fs.promises.rm(path, {force: true}).catch(() => undefined);
    throw err;
  }
}

/** The whole export file in memory, made at once (the simulator's `files: 'memory'`). */
export function renderCsvFile(src: CsvSource): WrittenFile & {content: Buffer} {
  const written = {bytes: 0, cutAt: undefined as number | undefined};
  const content = Buffer.concat([...fileChunks(src, written)].map((c) => (typeof c === 'string' ? Buffer.from(c) : c)));
  return {content, bytes: content.length, cutAt: written.cutAt};
}

/**
 * A CSV file as the service writes one by default (a BOM, CRLF row ends, RFC 4180 quoting), with
 * `options` to write it otherwise: for on-demand answers that serve a file of their own.
 */
export function csvText(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  options: CsvOptions = {}
): string {
  const separator = options.separator ?? '|';
  const encode = options.quote === 'never' ? (v: string): string => v : cellEncoder(separator);
  const line = (cells: readonly string[]): string => cells.map(encode).join(separator) + '\r\n';
  return (options.bom ?? '\uFEFF') + line(header) + rows.map(line).join('');
}
