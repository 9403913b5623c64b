// Small seeded PRNG helpers. Everything random in the simulator (data, ids, faults) comes from
// here so that a seed reproduces a run; Math.random is never used.

/** Murmur3 finaliser: turns nearby integers (row indexes) into unrelated 32-bit values. */
export function mix32(x: number): number {
  let h = x >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** FNV-1a over UTF-16 code units, then mixed; used to derive independent streams from labels. */
export function hashString(text: string, seed = 0): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return mix32(h);
}

/** Seed of an independent stream named `label` under `seed`. */
export function deriveSeed(seed: number, label: string): number {
  return hashString(label, mix32(seed));
}

/** mulberry32: fast, 32-bit state, good enough for test data (not for cryptography). */
export class Prng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** Restart the stream from another seed; lets hot loops reuse one object per row. */
  reseed(seed: number): void {
    this.state = seed >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** Integer in [min, max]. */
  range(min: number, max: number): number {
    return min + this.int(max - min + 1);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }

  hex(length: number): string {
    let out = '';
    while (out.length < length) {
      out += this.int(0x10000).toString(16).padStart(4, '0');
    }
    return out.slice(0, length);
  }

  bytes(length: number): Buffer {
    const buf = Buffer.alloc(length);
    for (let i = 0; i < length; i++) buf[i] = this.int(256);
    return buf;
  }

  /** A version-4-shaped UUID. */
  uuid(): string {
    const h = this.hex(32).split('');
    h[12] = '4';
    h[16] = '89ab'[this.int(4)];
    const s = h.join('');
    return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
  }
}
