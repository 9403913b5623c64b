import {ENTRY_WORDS, PRINT} from './key-forms';

/**
 * Entries of ENTRY_WORDS words, partitioned in place into buckets by the top bits of their first
 * word mixed with their fingerprint (about eight entries a bucket; rows that share a key spread
 * too), and which of them a file has met. Built after a setback only.
 */
export class Table {
  readonly index: Uint32Array;
  private readonly shift: number;
  private readonly taken: Uint8Array;

  constructor(
    readonly words: Uint32Array,
    readonly n: number
  ) {
    const bits = Math.min(24, Math.max(1, Math.ceil(Math.log2(Math.max(2, n / 8)))));
    this.shift = 32 - bits;
    this.taken = new Uint8Array((n + 7) >>> 3);
    this.index = partition(words, n, this.shift, 1 << bits);
  }

  get bytes(): number {
    return this.words.byteLength + this.index.byteLength + this.taken.byteLength;
  }

  /**
   * The first entry not yet met whose words equal `probe`'s (all of them, or with `verify` all but
   * words 2 and 3, which `verify` decides), which is then met; -1 when there is none.
   */
  meet(probe: Uint32Array, verify?: (entry: number) => boolean): number {
    const w = this.words;
    const bucket = bucketOf(probe, 0, this.shift);
    for (let i = this.index[bucket], end = this.index[bucket + 1]; i < end; i++) {
      const k = i * ENTRY_WORDS;
      if (w[k] !== probe[0] || w[k + 1] !== probe[1] || w[k + PRINT] !== probe[PRINT]) continue;
      if (w[k + PRINT + 1] !== probe[PRINT + 1]) continue;
      if (!verify && (w[k + 2] !== probe[2] || w[k + 3] !== probe[3])) continue;
      if (this.taken[i >>> 3] & (1 << (i & 7))) continue;
      if (verify && !verify(k)) continue;
      this.taken[i >>> 3] |= 1 << (i & 7);
      return i;
    }
    return -1;
  }
}

function bucketOf(w: Uint32Array, k: number, shift: number): number {
  return ((w[k] ^ w[k + PRINT]) >>> 0) >>> shift;
}

/** American flag sort on the bucket of each entry: no second copy of the entries. */
function partition(w: Uint32Array, n: number, shift: number, buckets: number): Uint32Array {
  const index = new Uint32Array(buckets + 1);
  for (let i = 0; i < n; i++) index[bucketOf(w, i * ENTRY_WORDS, shift) + 1]++;
  for (let b = 0; b < buckets; b++) index[b + 1] += index[b];
  const next = index.slice(0, buckets);
  for (let b = 0; b < buckets; b++) {
    const end = index[b + 1];
    let i = next[b];
    while (i < end) {
      const t = bucketOf(w, i * ENTRY_WORDS, shift);
      if (t === b) {
        i++;
        continue;
      }
      const j = next[t]++ * ENTRY_WORDS;
      const k = i * ENTRY_WORDS;
      for (let x = 0; x < ENTRY_WORDS; x++) {
        const v = w[k + x];
        w[k + x] = w[j + x];
        w[j + x] = v;
      }
    }
  }
  return index;
}
