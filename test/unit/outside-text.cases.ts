// Outside text in messages: quoted as JSON, cut after a few hundred characters, with work bounded
// by what is shown whatever the value's size or depth.
import {cut, quote, QUOTE_MAX} from '../../src/core/outside-text';

test('a small value is quoted as JSON.stringify writes it', () => {
  for (const value of [{last_id: 42}, 'a "text"', [1, 'x', null, true, {a: []}], {}, [], -1.5, null, {u: undefined}])
    expect(quote(value)).toBe(JSON.stringify(value));
  expect(quote(undefined)).toBe('undefined');
});

test('a long text, a deep value, a wide one: at most QUOTE_MAX characters and an ellipsis', () => {
  const deep = JSON.parse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`) as unknown;
  expect(() => JSON.stringify(deep)).toThrow(RangeError);
  expect(quote(deep)).toBe(`${'['.repeat(QUOTE_MAX)}…`);
  expect(quote('x'.repeat(10_000_000))).toBe(`"${'x'.repeat(QUOTE_MAX - 1)}…`);
  expect(quote({keys: Array.from({length: 1_000_000}, (_, i) => i)})).toMatch(/^\{"keys":\[0,1,2,[\d,]*…$/);
  expect(quote({keys: Array.from({length: 1_000_000}, (_, i) => i)})).toHaveLength(QUOTE_MAX + 1);
});

test('the work is bounded by what is shown: a list of ten million items is read no further', () => {
  let reads = 0;
  const items = new Proxy(new Array<string>(10_000_000).fill('x'), {
    get(target, key, receiver) {
      if (typeof key === 'string' && /^\d+$/.test(key)) reads++;
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
  expect(quote(items)).toHaveLength(QUOTE_MAX + 1);
  expect(reads).toBeLessThanOrEqual(QUOTE_MAX + 1);
});

test('a cut never splits a character made of two UTF-16 units', () => {
  const emoji = '\u{1F600}';
  expect(cut(emoji.repeat(QUOTE_MAX))).toBe(`${emoji.repeat(QUOTE_MAX / 2)}…`);
  expect(cut(`x${emoji.repeat(QUOTE_MAX)}`)).toBe(`x${emoji.repeat(QUOTE_MAX / 2 - 1)}…`);
  expect(cut('short')).toBe('short');
});
