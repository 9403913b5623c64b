// Byte encodings of the export file. The real service's encoding is unknown: UTF-8 with a BOM is
// the likely one, but exports from Windows tooling come as UTF-16 or Latin-1, and a BOM written
// twice happens when a writer adds one to text that already starts with one.

import {FileEncoding} from './types';

export const BOM = '\uFEFF';

// Every code point outside Latin-1 (astral ones count once, thanks to the u flag).
const NOT_LATIN1 = /[\u0100-\u{10ffff}]/gu;

export interface Codec {
  /** Text written before the first line: the byte order marks, if any. */
  leading: string;
  /** Bytes of `text`; a string means UTF-8 (the stream encodes it, the fast default). */
  encode(text: string): string | Buffer;
  /** What a correct decoder reads back from the encoded `text` (Latin-1 loses characters). */
  readable(text: string): string;
}

const identity = (text: string): string => text;

function utf16be(text: string): Buffer {
  // Node has no UTF-16BE encoder: encode little-endian, then swap each pair of bytes.
  return Buffer.from(text, 'utf16le').swap16();
}

function latin1(text: string): string {
  return text.replace(NOT_LATIN1, '?');
}

const CODECS: Readonly<Record<FileEncoding, Codec>> = {
  'utf8-bom': {leading: BOM, encode: identity, readable: identity},
  utf8: {leading: '', encode: identity, readable: identity},
  'double-bom': {leading: BOM + BOM, encode: identity, readable: identity},
  'utf16le-bom': {leading: BOM, encode: (t) => Buffer.from(t, 'utf16le'), readable: identity},
  'utf16be-bom': {leading: BOM, encode: utf16be, readable: identity},
  latin1: {leading: '', encode: (t) => Buffer.from(latin1(t), 'latin1'), readable: latin1},
};

export const ENCODINGS = Object.keys(CODECS) as FileEncoding[];

export function codecOf(encoding: FileEncoding): Codec {
  return CODECS[encoding];
}

/** Byte length of what `encode` returns. */
export function byteLength(data: string | Buffer): number {
  return typeof data === 'string' ? Buffer.byteLength(data) : data.length;
}
