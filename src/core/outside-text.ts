// Text from outside (the config, catalog and state files, the service's answers) as keys of objects.

/**
 * An object to key by outside text: without a prototype, so that a key `__proto__`, `constructor` or
 * `prototype` is a key like any other, never the object's prototype or something it inherits.
 */
export function keyedByText<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

/** At most this many characters of outside text in a message: enough to recognise it, never a whole file. */
export const QUOTE_MAX = 200;

/** A text as a message may show it as is (between quotes of the message's own): cut after `max` characters. */
export function cut(text: string, max = QUOTE_MAX): string {
  if (text.length <= max) return text;
  // Not inside a surrogate pair.
  const end = /[\uD800-\uDBFF]/.test(text[max - 1]) ? max - 1 : max;
  return `${text.slice(0, end)}…`;
}

type Step = {value: unknown} | {text: string};

/**
 * A value as a message may quote it: JSON as JSON.stringify writes it, cut after `max` characters
 * (then "…" and the number of characters or members left out is unknown, so none is claimed). The
 * work is bounded by `max` too, whatever the value's size or depth: no recursion over the value and
 * nothing of it turned into text beyond what is shown (JSON.stringify of a value nested 100,000 deep
 * overflows the stack; of a 20 MB state, writes 20 MB).
 */
export function quote(value: unknown, max = QUOTE_MAX): string {
  let out = '';
  const todo: Step[] = [{value}];
  while (todo.length && out.length <= max) {
    const step = todo.pop() as Step;
    if ('text' in step) {
      out += step.text;
      continue;
    }
    const v = step.value;
    const room = max - out.length + 1;
    if (typeof v === 'string') out += JSON.stringify(v.slice(0, room));
    else if (v !== null && typeof v === 'object') {
      // Each member takes a character at least: more than `room` of them would not show. Own keys, as
      // JSON.stringify takes them (Object.keys: a for-in over millions of them is slower still).
      const list = Array.isArray(v);
      const members: [string | undefined, unknown][] = list
        ? v.slice(0, room).map((item: unknown) => [undefined, item ?? null])
        : Object.keys(v)
            .slice(0, room)
            .map((key): [string, unknown] => [key, (v as Record<string, unknown>)[key]])
            .filter(([, item]) => item !== undefined && typeof item !== 'function');
      const steps = members.flatMap(([key, item], i): Step[] => [
        ...(i ? [{text: ','}] : []),
        ...(key === undefined ? [] : [{text: `${JSON.stringify(key.slice(0, room))}:`}]),
        {value: item},
      ]);
      todo.push({text: list ? ']' : '}'}, ...steps.reverse(), {text: list ? '[' : '{'});
    } else out += typeof v === 'number' || typeof v === 'boolean' || v === null ? JSON.stringify(v) : String(v);
  }
  // Whatever was left out made the text longer than `max`: the cut says so.
  return cut(out, max);
}
