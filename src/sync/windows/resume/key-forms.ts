import {randomFillSync} from 'crypto';

/** The 32-bit words of an entry: four of the key's form (see EmittedKeys), then the row's fingerprint (two). */
export const ENTRY_WORDS = 6;
/** Where an entry's fingerprint lies in it. */
export const PRINT = 4;

/** How a key is stored: its entry's form (see EmittedKeys), chosen by the key's own bytes. */
const LOWER_UUID = 0;
const UPPER_UUID = 1;
const SHORT = 2;
export const LONG = 3;
/** The longest key stored as its own bytes (the entry's first byte holds its length). */
const SHORT_MAX = 15;

/**
 * Per-process random keys: the order of a table (and the hash of a long key) cannot be steered by
 * the data, so no file can pile its keys into one bucket of the index.
 */
const SECRET = randomFillSync(new Uint32Array(10));

/** Per byte: its value as a hex digit, or 16 for none. */
const HEX_VALUE = new Uint8Array(256).fill(16);
/** Per byte: 0 for a decimal digit, 1 for a-f, 2 for A-F, 4 for anything else. */
const HEX_CASE = new Uint8Array(256).fill(4);
for (let c = 0; c < 256; c++) {
  const ch = String.fromCharCode(c);
  if (/[0-9]/.test(ch)) [HEX_VALUE[c], HEX_CASE[c]] = [c - 48, 0];
  else if (/[a-f]/.test(ch)) [HEX_VALUE[c], HEX_CASE[c]] = [c - 87, 1];
  else if (/[A-F]/.test(ch)) [HEX_VALUE[c], HEX_CASE[c]] = [c - 55, 2];
}
/** Where each byte's two hex digits lie in a canonical UUID (8-4-4-4-12). */
const UUID_DIGITS = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];

/**
 * Writes the 16-byte entry of the key b[s, e) at out[at]; returns its form. A canonical UUID is
 * its 16 bytes (in the form of its case), a key of up to 15 bytes its length and bytes; a longer
 * key is LONG and writes nothing.
 */
export function writeEntry(b: Uint8Array, s: number, e: number, out: Uint8Array, at: number): number {
  const len = e - s;
  if (len === 36 && b[s + 8] === 45 && b[s + 13] === 45 && b[s + 18] === 45 && b[s + 23] === 45) {
    let cases = 0;
    for (let j = 0; j < 16; j++) {
      const p = s + UUID_DIGITS[j];
      const hi = b[p];
      const lo = b[p + 1];
      cases |= HEX_CASE[hi] | HEX_CASE[lo];
      out[at + j] = (HEX_VALUE[hi] << 4) | HEX_VALUE[lo];
    }
    if (cases < 3) return cases === 2 ? UPPER_UUID : LOWER_UUID;
  }
  if (len > SHORT_MAX) return LONG;
  out[at] = len;
  for (let i = 0; i < SHORT_MAX; i++) out[at + 1 + i] = i < len ? b[s + i] : 0;
  return SHORT;
}

/** Murmur3's finaliser: every bit of x moves every bit of the result. */
function mix32(x: number): number {
  let h = x >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * A keyed bijection of the entry's four words, in place: entries spread evenly over the index
 * whatever the keys look like (sequential ids, time-ordered UUIDs), and equal entries stay equal
 * and unequal ones unequal.
 */
export function scramble(w: Uint32Array, i: number): void {
  let a = w[i];
  let b = w[i + 1];
  let c = w[i + 2];
  let d = w[i + 3];
  for (let r = 0; r < 8; r += 4) {
    a = (a ^ mix32(d ^ SECRET[r])) >>> 0;
    b = (b ^ mix32(a ^ SECRET[r + 1])) >>> 0;
    c = (c ^ mix32(b ^ SECRET[r + 2])) >>> 0;
    d = (d ^ mix32(c ^ SECRET[r + 3])) >>> 0;
  }
  w[i] = a;
  w[i + 1] = b;
  w[i + 2] = c;
  w[i + 3] = d;
}

/**
 * The fingerprint of a row: a 64-bit hash of its bytes b[s, e) as the file has them, separators
 * and quotes included (so cell boundaries count), into out[0], out[1]; `view` is a DataView of
 * `b`. Fixed, read four bytes at a time in little-endian order whatever the machine, so that a
 * later process computes the same; it never leaves the process but as a keyed hash of it
 * (FingerprintKey.print: it covers dropped and hashed cells too). Not exact: two different rows share it
 * with a probability of about 2^-64, which matters only for two rows of one Response ID (a
 * service that repeats an id), so never in practice.
 */
export function rowPrint(b: Uint8Array, view: DataView, s: number, e: number, out: Uint32Array): void {
  let h1 = 0x811c9dc5 ^ (e - s);
  let h2 = 0x2f6d9c35;
  let i = s;
  for (; i + 4 <= e; i += 4) {
    const w = view.getInt32(i, true);
    h1 = Math.imul(h1 ^ w, 0x9e3779b1);
    h1 ^= h1 >>> 16;
    h2 = Math.imul(((h2 << 5) | (h2 >>> 27)) ^ w, 0x85ebca77);
  }
  for (; i < e; i++) {
    h1 = Math.imul(h1 ^ b[i], 0x9e3779b1);
    h1 ^= h1 >>> 16;
    h2 = Math.imul(((h2 << 5) | (h2 >>> 27)) ^ b[i], 0x85ebca77);
  }
  out[0] = mix32(h1 ^ mix32(h2));
  out[1] = mix32(h2 ^ 0x9e3779b9);
}

/** A 64-bit hash of b[s, e) into out[0] and out[1]. */
export type Hash64 = (b: Uint8Array, s: number, e: number, out: Uint32Array) => void;

/** A 64-bit hash of b[s, e) into out[0], out[1]: two multiplicative lanes, keyed, then mixed. */
export function hash64(b: Uint8Array, s: number, e: number, out: Uint32Array): void {
  let h1 = SECRET[8] ^ (e - s);
  let h2 = SECRET[9];
  for (let i = s; i < e; i++) {
    const c = b[i];
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x5bd1e995);
    h2 ^= h2 >>> 15;
  }
  out[0] = mix32(h1 ^ mix32(h2));
  out[1] = mix32(h2 ^ SECRET[8]);
}
