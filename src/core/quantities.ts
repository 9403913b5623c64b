// How the log writes counts and sizes: one place, so that no line says "1 rows" or mixes units.

/** `n` and the noun, singular for exactly one: "1 row", "2 rows", "1,200 rows" (rounded, with thousands separators). */
export function plural(n: number, one: string, many = `${one}s`): string {
  const whole = Math.round(n);
  return `${whole.toLocaleString('en-US')} ${whole === 1 ? one : many}`;
}

/**
 * A quantity that need not be whole (a rate), as a person reads it: from 10 on as plural() says it
 * ("1,234 rows"), below with two significant digits ("2.5 rows", "0.29 rows"), so that a known rate
 * under one half is never said as 0.
 */
export function amount(n: number, one: string, many = `${one}s`): string {
  if (n === 0 || Math.abs(n) >= 10) return plural(n, one, many);
  const shown = Number(n.toPrecision(2));
  return `${String(shown)} ${shown === 1 ? one : many}`;
}

/** Bytes as a person reads them: "512 B", "48 KB", "27.2 MB", "1.3 GB" (binary multiples, as the downloads are logged). */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${Math.round(bytes)} B`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  if (bytes < 1024 * 1024 * 1024) return `${(bytes / 1048576).toFixed(1)} MB`;
  return `${(bytes / 1073741824).toFixed(1)} GB`;
}
