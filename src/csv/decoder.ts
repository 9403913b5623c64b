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
export function countChar(text: string, char: string): number {
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
  // For UTF-8, TextDecoder takes about half the time StringDecoder does on text with many
  // non-ASCII characters. A BOM is dropped before the decoder sees it (see ByteDecoder).
  const text = new TextDecoder(encoding, {ignoreBOM: true});
  return {write: (buf) => text.decode(buf, {stream: true}), end: () => text.decode()};
}

/**
 * Bytes of an export file to text. A byte-order mark decides the encoding (UTF-8, UTF-16 LE or BE)
 * and is dropped, however often it was written; without one, UTF-16 is recognised by its zero
 * bytes, and a start that is not valid UTF-8 is read as Windows-1252 (the "Excel-friendly" export).
 * Bytes that are not valid in the chosen encoding become U+FFFD and are counted, as are NUL
 * characters, so that the reader can warn or stop instead of emitting garbage without a word.
 */
export class ByteDecoder {
  encoding: TextEncoding = 'utf-8';
  basis: EncodingBasis = 'default';
  invalidSequences = 0;
  nulChars = 0;
  private decoder: Decoder | undefined;
  private held: Buffer | undefined;
  private leading = true;
  /** The UTF-8 decoder holds the start of a sequence cut at the end of the previous chunk. */
  private cut = false;
  /** The last three bytes given to the UTF-8 decoder. */
  private lastBytes = Buffer.alloc(0);

  write(chunk: Buffer): string {
    let buf = chunk;
    if (!this.decoder) {
      buf = this.held ? Buffer.concat([this.held, chunk]) : chunk;
      if (buf.length < SNIFF_BYTES) {
        this.held = buf;
        return '';
      }
      this.held = undefined;
      buf = this.choose(buf);
    }
    return this.text((this.decoder as Decoder).write(buf), buf);
  }

  end(): string {
    let tail = '';
    if (!this.decoder) {
      const buf = this.choose(this.held ?? Buffer.alloc(0));
      tail = this.text((this.decoder as unknown as Decoder).write(buf), buf);
    }
    return tail + this.text((this.decoder as Decoder).end(), Buffer.alloc(0));
  }

  /** Picks the decoder from the first bytes; returns the bytes left after a byte-order mark. */
  private choose(buf: Buffer): Buffer {
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
    this.decoder = decoderFor(this.encoding);
    return buf.subarray(skip);
  }

  private text(text: string, bytes: Buffer): string {
    let out = text;
    if (this.leading && out.length > 0) {
      // A BOM written twice (or more) must not end up in the first column's name.
      out = out.replace(/^\uFEFF+/, '');
      this.leading = out.length === 0;
    }
    let legitimate = 0;
    if (this.encoding === 'utf-8') {
      // Whole valid UTF-8 with nothing held from before decodes without a U+FFFD of its own: the
      // bytes are checked (natively, many times faster) instead of the text.
      const whole = !this.cut && isUtf8(bytes);
      const before = this.lastBytes;
      this.lastBytes = Buffer.from((bytes.length >= 3 ? bytes : Buffer.concat([before, bytes])).subarray(-3));
      this.cut = !whole && completeUtf8(this.lastBytes).length !== this.lastBytes.length;
      if (whole) {
        if (bytes.includes(0)) this.nulChars += countChar(out, '\0');
        return out;
      }
      // A U+FFFD of the text may have its bytes split between two chunks: it comes out with its last byte.
      if (out.includes(REPLACEMENT)) {
        legitimate = countBytes(Buffer.concat([before.subarray(-2), bytes]), ENCODED_REPLACEMENT);
      }
    }
    if (out.includes(REPLACEMENT)) {
      this.invalidSequences += Math.max(0, countChar(out, REPLACEMENT) - legitimate);
    }
    if (out.includes('\0')) this.nulChars += countChar(out, '\0');
    return out;
  }
}
