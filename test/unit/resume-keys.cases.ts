import {randomUUID} from 'crypto';

import {EmittedKeys} from '../../src/sync/windows/resume';
import {prng} from '../helpers/fake-api';

/** n random hex digits, eight from each draw (a draw per digit made this file's keys cost more than the store). */
const hex = (random: () => number, n: number): string => {
  let digits = '';
  while (digits.length < n)
    digits += Math.floor(random() * 0x100000000)
      .toString(16)
      .padStart(8, '0');
  return digits.slice(0, n);
};

/** Keys of every form the store tells apart, and some that look like one form but are another. */
function keyMaker(random: () => number, only?: readonly number[]): () => string {
  const all = [
    () => `${hex(random, 8)}-${hex(random, 4)}-4${hex(random, 3)}-a${hex(random, 3)}-${hex(random, 12)}`,
    () => `${hex(random, 8)}-${hex(random, 4)}-4${hex(random, 3)}-a${hex(random, 3)}-${hex(random, 12)}`.toUpperCase(),
    // Mixed case and a UUID with a non-hex letter: long keys, not UUIDs.
    () => `${hex(random, 8)}-ABCD-4${hex(random, 3)}-a${hex(random, 3)}-${hex(random, 12)}`,
    () => `${hex(random, 8)}-${hex(random, 4)}-4${hex(random, 3)}-a${hex(random, 3)}-${hex(random, 11)}g`,
    () => String(100_000_000 + Math.floor(random() * 1000)),
    () => '',
    () => `ø${hex(random, 2)}`,
    () => `R_${hex(random, 16)}`,
    () => `${hex(random, 1)}|${'x'.repeat(Math.floor(random() * 300))}|"quoted"|\r\n|👩‍💻`,
  ];
  const makers = only ? only.map((i) => all[i]) : all;
  return () => makers[Math.floor(random() * makers.length)]();
}

/**
 * The rule the store keeps, as plainly as it can be said: after restart, every key added before it
 * is met once; keys added since are not met.
 */
class Reference {
  private added: string[] = [];
  private pending = new Map<string, number>();

  add(key: string): void {
    this.added.push(key);
  }

  restart(): void {
    this.pending = new Map();
    for (const key of this.added) this.pending.set(key, (this.pending.get(key) ?? 0) + 1);
  }

  take(key: string): boolean {
    const left = this.pending.get(key) ?? 0;
    if (left === 0) return false;
    this.pending.set(key, left - 1);
    return true;
  }
}

const bytes = (key: string): Buffer => Buffer.from(key, 'utf8');

/**
 * Files of a window read one after another, each restarting the store: rows met again (in another
 * order, some twice in a file), rows never seen, duplicates. Returns how the store and the
 * reference answered every take.
 */
function replay(
  keys: EmittedKeys,
  seed: number,
  files: number,
  rowsPerFile: number,
  only?: readonly number[]
): {got: boolean[]; want: boolean[]} {
  const random = prng(seed);
  const next = keyMaker(random, only);
  const reference = new Reference();
  const seen: string[] = [];
  const got: boolean[] = [];
  const want: boolean[] = [];
  for (let f = 0; f < files; f++) {
    if (f > 0) {
      keys.restart();
      reference.restart();
    }
    for (let r = 0; r < rowsPerFile; r++) {
      const key = seen.length > 0 && random() < 0.6 ? seen[Math.floor(random() * seen.length)] : next();
      const b = bytes(key);
      // Read after a setback: a key met is skipped, any other emitted (and so added).
      const taken = f > 0 && keys.take(b, 0, b.length);
      const expected = f > 0 && reference.take(key);
      got.push(taken);
      want.push(expected);
      if (!expected) {
        reference.add(key);
        seen.push(key);
      }
      if (!taken) keys.add(b, 0, b.length);
    }
  }
  return {got, want};
}

describe('EmittedKeys', () => {
  test.each([1, 2, 3])('meets exactly the keys added before each restart, once each (seed %i)', (seed) => {
    const keys = new EmittedKeys();
    const {got, want} = replay(keys, seed, 4, 3000);
    keys.close();
    expect(got).toEqual(want);
    expect(want.filter(Boolean).length).toBeGreaterThan(1000);
  });

  test.each([
    ['in the order emitted, then new keys', 1.0],
    ['in the order emitted for a while, then in another order', 0.5],
  ])('a file that lists the keys %s: the same answers', (_, inOrder) => {
    const random = prng(11);
    const next = keyMaker(random);
    const keys = new EmittedKeys();
    const reference = new Reference();
    const first = Array.from({length: 12_000}, next);
    for (const key of first) {
      keys.add(bytes(key), 0, bytes(key).length);
      reference.add(key);
    }
    keys.restart();
    reference.restart();
    // The first file again: a prefix in order, the rest shuffled, with new keys among them.
    const cut = Math.floor(first.length * inOrder);
    const rest = first.slice(cut).sort(() => random() - 0.5);
    const again = [...first.slice(0, cut), ...rest, ...Array.from({length: 3000}, next)];
    const got = again.map((key) => keys.take(bytes(key), 0, bytes(key).length));
    keys.close();
    expect(got).toEqual(again.map((key) => reference.take(key)));
  });

  test('hash collisions cost reads, never a row: every long key hashed alike gives the same answers', () => {
    const keys = new EmittedKeys({
      hash: (_b, _s, _e, out) => {
        out[0] = 7;
        out[1] = 7;
      },
    });
    const {got, want} = replay(keys, 4, 3, 800);
    keys.close();
    expect(got).toEqual(want);
  });

  test('many keys (spilled to a file, long keys larger than a read block) and several setbacks', () => {
    const keys = new EmittedKeys();
    // Lower-case UUIDs and long ids only: both spill past the 64 KiB buffer (the first file alone adds
    // about 5,000 UUIDs, 80 KB of entries).
    const {got, want} = replay(keys, 5, 3, 10_000, [0, 7]);
    expect(keys.footprint.fileBytes).toBeGreaterThan(65_536);
    const huge = `${'x'.repeat(200_000)}end`;
    keys.add(bytes(huge), 0, huge.length);
    keys.restart();
    expect(keys.take(bytes(huge), 0, huge.length)).toBe(true);
    expect(keys.take(bytes(huge), 0, huge.length)).toBe(false);
    keys.close();
    expect(got).toEqual(want);
  });

  test('without a usable temp dir the keys stay in memory, said once, and still exact', () => {
    const said: string[] = [];
    const keys = new EmittedKeys({onMemory: (reason) => said.push(reason), tmpDir: '/nonexistent/questback-tmp'});
    const {got, want} = replay(keys, 6, 3, 10_000, [0, 7]);
    keys.close();
    expect(got).toEqual(want);
    expect(said).toEqual([
      expect.stringMatching(/^cannot make a temporary file in \/nonexistent\/questback-tmp \(folder not found\)$/),
    ]);
  });

  test('what grows with the window is on disk: 24 bytes a UUID (its 16 and a fingerprint) in the spill file, a 64 KiB buffer in memory', () => {
    const keys = new EmittedKeys();
    const sizes: {rows: number; fileBytes: number; memoryBytes: number}[] = [];
    for (let rows = 1; rows <= 12_000; rows++) {
      const id = bytes(randomUUID());
      keys.add(id, 0, id.length);
      if (rows % 4000 === 0) sizes.push({rows, ...keys.footprint});
    }
    keys.close();
    // What the buffer holds is not in the file yet: a 64 KiB block at a time goes there.
    expect(sizes).toEqual(
      sizes.map(({rows}) => ({rows, fileBytes: Math.floor((rows * 24) / 65536) * 65536, memoryBytes: 65536}))
    );
  });

  // 150,000 UUIDs: held in memory they would take 2.4 MB, over twice the 1 MiB bound that reading and
  // meeting them in order must stay under (the flatness this proves; the bench reads far more).
  test('memory: 150,000 UUIDs cost a 64 KiB buffer while read and while met again in order; out of order, 24 bytes each', () => {
    const ids = Array.from({length: 150_000}, () => bytes(randomUUID()));
    const arrayBuffers = (): number => process.memoryUsage().arrayBuffers;
    const keys = new EmittedKeys();
    const start = arrayBuffers();
    for (const id of ids) keys.add(id, 0, id.length);
    const reading = arrayBuffers() - start;
    keys.restart();
    // The first half again, in the order emitted (a download after a cut-off): no table.
    let met = 0;
    for (const id of ids.slice(0, ids.length / 2)) if (keys.take(id, 0, id.length)) met++;
    const inOrder = arrayBuffers() - start;
    // The second half backwards: the keys not met yet are loaded.
    for (const id of ids.slice(ids.length / 2).reverse()) if (keys.take(id, 0, id.length)) met++;
    const outOfOrder = arrayBuffers() - start;
    keys.close();
    const within = (value: number, bound: number): true | number => value < bound || value;
    expect({
      met,
      reading: within(reading, 1024 * 1024),
      inOrder: within(inOrder, 1024 * 1024),
      outOfOrder: within(outOfOrder, (ids.length / 2) * 24 + 1024 * 1024),
    }).toEqual({met: ids.length, reading: true, inOrder: true, outOfOrder: true});
  });
});
