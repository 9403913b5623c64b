// Text from outside (the config, catalog and state files, the service's answers) as keys of objects.

/**
 * An object to key by outside text: without a prototype, so that a key `__proto__`, `constructor` or
 * `prototype` is a key like any other, never the object's prototype or something it inherits.
 */
export function keyedByText<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}
