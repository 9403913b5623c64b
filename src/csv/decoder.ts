import {isUtf8} from 'buffer';
import {StringDecoder} from 'string_decoder';

export type TextEncoding = 'utf-8' | 'utf-16le' | 'utf-16be' | 'windows-1252';

/** How the encoding was decided: by a byte-order mark, by looking at the bytes, or by default. */
export type EncodingBasis = 'bom' | 'sniffed' | 'default';

const REPLACEMENT = '\uFFFD';
const ENCODED_REPLACEMENT = Buffer.from([0xef, 0xbf, 0xbd]);
/** The first chunk must hold this much before the encoding is decided (or be the whole file). */
const SNIFF_BYTES = 4;

/** How often `char` occurs in `text`. */
function countChar(text: string, char: string): number {
  let n = 0;
  for (let i = text.indexOf(char); i !== -1; i = text.indexOf(char, i + 1)) n++;
  return n;
}

function countBytes(buf: Buffer, needle: Buffer): number {
  let n = 0;
  for (let i = buf.indexOf(needle); i !== -1; i = buf.indexOf(needle, i + needle.length)) n++;
  return n;
}

/** UTF-16 without a BOM shows as a zero byte beside nearly every ASCII character. */
function sniffUtf16(buf: Buffer): TextEncoding | undefined {
  const n = Math.min(buf.length, 4096) & ~1;
  if (n < 4) return undefined;
  let evenZeros = 0;
  let oddZeros = 0;
  for (let i = 0; i < n; i += 2) {
    if (buf[i] === 0) evenZeros++;
    if (buf[i + 1] === 0) oddZeros++;
  }
  const pairs = n / 2;
  if (oddZeros > pairs * 0.3 && evenZeros < pairs * 0.05) return 'utf-16le';
  if (evenZeros > pairs * 0.3 && oddZeros < pairs * 0.05) return 'utf-16be';
  return undefined;
}

/** The bytes of `buf` up to the last complete UTF-8 sequence, so a chunk cut mid-character still validates. */
function completeUtf8(buf: Buffer): Buffer {
  let end = buf.length;
  for (let back = 1; back <= 3 && end - back >= 0; back++) {
    const byte = buf[end - back];
    if ((byte & 0xc0) === 0x80) continue;
    const need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    if (need > back) end -= back;
    break;
  }
  return buf.subarray(0, end);
}

interface Decoder {
  write(buf: Buffer): string;
  end(): string;
}

function decoderFor(encoding: TextEncoding): Decoder {
  if (encoding === 'utf-16le') return new StringDecoder('utf16le');
  // UTF-16 BE and Windows-1252 (UTF-8 is checked and passed on as bytes by Utf8Transcoder); the BOM
  // was dropped before the decoder sees it.
  const text = new TextDecoder(encoding, {ignoreBOM: true});
  return {write: (buf) => text.decode(buf, {stream: true}), end: () => text.decode()};
}

const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const NUL = Buffer.from([0]);
const EMPTY = Buffer.alloc(0);

/**
 * Text to bytes, UTF-8 but for a lone surrogate (which a UTF-16 file may hold and JSON keeps as
 * `\udxxx`): that is written as its three-byte sequence (WTF-8), which valid UTF-8 never has, so
 * that no two texts share their bytes and the record encoder can escape it as JSON.stringify does.
 */
export function encodeWtf8(text: string): Buffer {
  if (!/[\ud800-\udfff]/.test(text)) return Buffer.from(text, 'utf8');
  const out = Buffer.allocUnsafe(text.length * 3);
  let at = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const d = i + 1 < text.length ? text.charCodeAt(i + 1) : 0;
    if (c >= 0xd800 && c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff) {
      at += out.write(text.slice(i, i + 2), at, 'utf8');
      i++;
    } else if (c >= 0xd800 && c <= 0xdfff) {
      out[at++] = 0xed;
      out[at++] = 0x80 | ((c >> 6) & 0x3f);
      out[at++] = 0x80 | (c & 0x3f);
    } else {
      at += out.write(text[i], at, 'utf8');
    }
  }
  return out.subarray(0, at);
}

/**
 * Bytes of an export file to UTF-8 bytes, for the CSV scanner. A byte-order mark decides the
 * encoding (UTF-8, UTF-16 LE or BE) and is dropped, however often it was written; without one,
 * UTF-16 is recognised by its zero bytes, and a start that is not valid UTF-8 is read as
 * Windows-1252 (the "Excel-friendly" export). Valid UTF-8 passes through untouched (checked
 * natively); a stretch that is not becomes what a UTF-8 decoder reads, each invalid sequence a
 * U+FFFD; other encodings are decoded and encoded again (see encodeWtf8). Invalid sequences and
 * NUL characters are counted, so that the reader can warn or stop instead of emitting garbage
 * without a word.
 */
export class Utf8Transcoder {
  encoding: TextEncoding = 'utf-8';
  basis: EncodingBasis = 'default';
  invalidSequences = 0;
  nulChars = 0;
  private decoder: Decoder | undefined;
  private chosen = false;
  private held: Buffer | undefined;
  /** The file's first bytes are still to come: a BOM there (even repeated) is dropped. */
  private leading = true;
  /** UTF-8: the start of a sequence cut at the end of the previous chunk. */
  private carry: Buffer = EMPTY;

  write(chunk: Buffer): Buffer {
    let buf = chunk;
    if (!this.chosen) {
      buf = this.held ? Buffer.concat([this.held, chunk]) : chunk;
      if (buf.length < SNIFF_BYTES) {
        this.held = buf;
        return EMPTY;
      }
      this.held = undefined;
      buf = this.choose(buf);
    }
    return this.convert(buf, false);
  }

  end(): Buffer {
    const head = this.chosen ? EMPTY : this.convert(this.choose(this.held ?? EMPTY), false);
    this.held = undefined;
    const tail = this.convert(EMPTY, true);
    return head.length === 0 ? tail : tail.length === 0 ? head : Buffer.concat([head, tail]);
  }

  /** Picks the encoding from the first bytes; returns the bytes left after a byte-order mark. */
  private choose(buf: Buffer): Buffer {
    this.chosen = true;
    let encoding: TextEncoding | undefined;
    let skip = 0;
    if (buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) [encoding, skip] = ['utf-8', 3];
    else if (buf[0] === 0xff && buf[1] === 0xfe) [encoding, skip] = ['utf-16le', 2];
    else if (buf[0] === 0xfe && buf[1] === 0xff) [encoding, skip] = ['utf-16be', 2];
    if (encoding) {
      this.basis = 'bom';
    } else {
      encoding = sniffUtf16(buf) ?? (isUtf8(completeUtf8(buf)) ? undefined : 'windows-1252');
      if (encoding) this.basis = 'sniffed';
    }
    this.encoding = encoding ?? 'utf-8';
    if (this.encoding !== 'utf-8') this.decoder = decoderFor(this.encoding);
    return buf.subarray(skip);
  }

  private convert(buf: Buffer, last: boolean): Buffer {
    if (this.decoder) {
      let text = last ? this.decoder.end() : this.decoder.write(buf);
      if (this.leading && text.length > 0) {
        // A BOM written twice (or more) must not end up in the first column's name.
        text = text.replace(/^\uFEFF+/, '');
        this.leading = text.length === 0;
      }
      this.count(text, 0);
      return encodeWtf8(text);
    }
    let data = this.carry.length > 0 ? Buffer.concat([this.carry, buf]) : buf;
    if (this.leading) {
      while (data.length >= 3 && data[0] === 0xef && data[1] === 0xbb && data[2] === 0xbf) data = data.subarray(3);
      if (!last && data.length < 3 && UTF8_BOM.subarray(0, data.length).equals(data)) {
        // Perhaps the start of one more BOM: decided with the next bytes.
        this.carry = Buffer.from(data);
        return EMPTY;
      }
      this.leading = data.length === 0 && !last;
    }
    const whole = last ? data : completeUtf8(data);
    this.carry = whole.length === data.length ? EMPTY : Buffer.from(data.subarray(whole.length));
    if (isUtf8(whole)) {
      if (whole.includes(0)) this.nulChars += countBytes(whole, NUL);
      return whole;
    }
    // Not valid UTF-8: what a decoder makes of it, counting the U+FFFD it adds (not those the file had).
    const text = new TextDecoder('utf-8', {ignoreBOM: true}).decode(whole);
    this.count(text, countBytes(whole, ENCODED_REPLACEMENT));
    return Buffer.from(text, 'utf8');
  }

  private count(text: string, legitimate: number): void {
    if (text.includes(REPLACEMENT)) {
      this.invalidSequences += Math.max(0, countChar(text, REPLACEMENT) - legitimate);
    }
    if (text.includes('\0')) this.nulChars += countChar(text, '\0');
  }
}
