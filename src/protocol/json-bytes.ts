import {QUOTE} from '../csv/rows';

// JSON written as UTF-8 bytes straight from a CSV's bytes: the escapes, and copies of literals.

const BACKSLASH = 92;
const HEX = Buffer.from('0123456789abcdef');
/**
 * Per byte of a cell's UTF-8: 0 when JSON takes it as it is; else the letter JSON escapes a control
 * character with (`\n`), 1 for one written `\u00XX`, 2 for a quote or backslash, 3 for the first
 * byte of a lone surrogate's three (0xED, see decoder.ts encodeWtf8).
 */
const ESCAPE = new Uint8Array(256);
for (let c = 0; c < 32; c++) ESCAPE[c] = 1;
for (const [code, letter] of [
  [8, 'b'],
  [9, 't'],
  [10, 'n'],
  [12, 'f'],
  [13, 'r'],
] as const)
  ESCAPE[code] = letter.charCodeAt(0);
ESCAPE[QUOTE] = 2;
ESCAPE[BACKSLASH] = 2;
ESCAPE[0xed] = 3;

/**
 * Writes the JSON escape of the byte b[i] (one ESCAPE marks) at out[o]; returns where it ends. A
 * lone surrogate's three bytes (0xED then 0xA0 or more: never in valid UTF-8) become `\udxxx`; any
 * other 0xED starts an ordinary character and is written as it is.
 */
function writeEscape(b: Uint8Array, i: number, out: Uint8Array, o: number): number {
  const c = b[i];
  const kind = ESCAPE[c];
  if (kind === 2) {
    out[o] = BACKSLASH;
    out[o + 1] = c;
    return o + 2;
  }
  if (kind === 3) {
    if (b[i + 1] < 0xa0) {
      out[o] = c;
      return o + 1;
    }
    const unit = 0xd000 | ((b[i + 1] & 0x3f) << 6) | (b[i + 2] & 0x3f);
    out[o] = BACKSLASH;
    out[o + 1] = 117; // u
    out[o + 2] = HEX[unit >> 12];
    out[o + 3] = HEX[(unit >> 8) & 15];
    out[o + 4] = HEX[(unit >> 4) & 15];
    out[o + 5] = HEX[unit & 15];
    return o + 6;
  }
  out[o] = BACKSLASH;
  if (kind !== 1) {
    out[o + 1] = kind;
    return o + 2;
  }
  out[o + 1] = 117; // u
  out[o + 2] = 48;
  out[o + 3] = 48;
  out[o + 4] = HEX[c >> 4];
  out[o + 5] = HEX[c & 15];
  return o + 6;
}

export function copy(from: Uint8Array, out: Uint8Array, o: number): number {
  out.set(from, o);
  return o + from.length;
}

/** `"` and the text bytes[start, e) escaped for JSON (a quoted cell's doubled quotes once); returns where it ends. */
export function writeText(
  bytes: Uint8Array,
  start: number,
  e: number,
  quoted: boolean,
  buf: Uint8Array,
  at: number
): number {
  let o = at;
  buf[o++] = QUOTE;
  for (let i = start; i < e; i++) {
    const ch = bytes[i];
    if (ESCAPE[ch] === 0) {
      buf[o++] = ch;
      continue;
    }
    o = writeEscape(bytes, i, buf, o);
    if (ch === QUOTE) {
      if (quoted) i++;
    } else if (ch === 0xed && bytes[i + 1] >= 0xa0) {
      i += 2;
    }
  }
  return o;
}

/** A key of a JSON object and its colon, with the comma before it unless it is the first. */
export const jsonKey = (name: string, first: boolean): string => `${first ? '' : ','}${JSON.stringify(name)}:`;
