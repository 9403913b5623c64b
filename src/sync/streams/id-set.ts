// The ids one quest's read of a list has met, so that an item a shifted page repeats is emitted once.
// Lower-case UUIDs (the service's ids) are kept as 128 bits in an open-addressing table: 16 bytes a
// slot, at most half full, so 100,000 ids take 2 to 4 MB where a Set of their strings takes about 23
// MB. Any other id (and the nil UUID, which marks an empty slot) goes to a Set.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const WORDS = 4;

function wordsOf(id: string): [number, number, number, number] | undefined {
  if (!UUID.test(id)) return undefined;
  const hex = id.replace(/-/g, '');
  const words: [number, number, number, number] = [0, 0, 0, 0];
  for (let i = 0; i < WORDS; i++) words[i] = parseInt(hex.slice(i * 8, i * 8 + 8), 16) >>> 0;
  return words[0] | words[1] | words[2] | words[3] ? words : undefined;
}

export class IdSet {
  private table = new Uint32Array(1024 * WORDS);
  private used = 0;
  private readonly others = new Set<string>();

  get size(): number {
    return this.used + this.others.size;
  }

  /** Adds the id; false when it was there already. */
  add(id: string): boolean {
    const words = wordsOf(id);
    if (!words) {
      if (this.others.has(id)) return false;
      this.others.add(id);
      return true;
    }
    if ((this.used + 1) * 2 * WORDS > this.table.length) this.grow();
    if (!IdSet.put(this.table, words)) return false;
    this.used++;
    return true;
  }

  /** Puts the words in their slot; false when they are there already. */
  private static put(table: Uint32Array, w: ArrayLike<number>): boolean {
    const slots = table.length / WORDS;
    // The words of a random UUID are random already; a mix keeps ids that share their first word apart.
    let slot = (Math.imul(w[0] ^ w[3], 0x9e3779b1) >>> 0) % slots;
    for (;;) {
      const at = slot * WORDS;
      if ((table[at] | table[at + 1] | table[at + 2] | table[at + 3]) === 0) {
        table.set(w, at);
        return true;
      }
      if (table[at] === w[0] && table[at + 1] === w[1] && table[at + 2] === w[2] && table[at + 3] === w[3])
        return false;
      slot = (slot + 1) % slots;
    }
  }

  private grow(): void {
    const old = this.table;
    this.table = new Uint32Array(old.length * 2);
    for (let at = 0; at < old.length; at += WORDS) {
      if ((old[at] | old[at + 1] | old[at + 2] | old[at + 3]) !== 0)
        IdSet.put(this.table, old.subarray(at, at + WORDS));
    }
  }
}
