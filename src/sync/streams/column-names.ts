/**
 * Warehouse-safe column names for survey header texts.
 *
 * Records carry the CSV header texts as field names. Airbyte destinations then rewrite them, each in
 * its own way (see test/helpers/destinations.ts for an emulation). What this module avoids, from the
 * Airbyte sources read for it:
 *
 * - `io.airbyte.commons.text.Names.toAlphanumericAndUnderscore` (used by `StandardNameTransformer`,
 *   `BigQuerySQLNameTransformer`, the bulk CDK's `Transformations` and Postgres's
 *   `toPostgresCompatibleName`): NFKD, combining marks removed, whitespace runs and then every
 *   character outside [A-Za-z0-9_] become `_`. `ø`, `æ`, `ß` do not decompose, so `fornøyd` becomes
 *   `forn_yd`, and Cyrillic or CJK texts become nothing but underscores.
 * - Postgres (`toPostgresCompatibleName` in destination-postgres, collisions by the bulk CDK's
 *   `ColumnNameResolver` / `TableCatalogFactory`): names over 63 characters become their first 54
 *   characters, `_` and eight digits of a Java `hashCode()`, so the end of a long text (the option of
 *   an expanded multiple-choice column) is lost.
 * - BigQuery (`BigQuerySQLNameTransformer.convertStreamName`): a `_` before a leading digit.
 * - Snowflake (`toSnowflakeCompatibleName`, `SnowflakeSqlGenerator.buildColumnId`): keeps the text but
 *   upper-cases it into a quoted identifier.
 *
 * A name made here is ASCII `[a-z0-9_]`, does not start with a digit, has at most 63 characters and
 * is unique within a header, so Postgres and BigQuery keep it as it is and Snowflake only upper-cases
 * it (which unquoted SQL resolves case-insensitively anyway). No code is taken from Airbyte; only the
 * behaviour above was read.
 *
 * The rule. A warehouse table lives for years while its survey is edited, so a column's name is a
 * function of its header text alone: the same text gets the same name in every discover and every
 * read, whatever is inserted, removed or reordered around it.
 *
 * 1. A *plain* text, ASCII letters and digits in words joined by single spaces, hyphens or
 *    underscores (`Response ID`, `Created`, `E-mail`), is named by its words, lower-cased and joined
 *    by `_` (`response_id`, `created`, `e_mail`), with `_` before a leading digit, when that fits in
 *    63 characters and does not end in `_` and 8 or 16 hex digits.
 * 2. Every other text (accents, letters outside ASCII, punctuation, too long) loses something on the
 *    way to a name, so two different texts could meet there (`Kjønn` and `Kjonn`, or two long
 *    questions cut at the same place). Its name is a readable part, then `_` and 8 hex digits of the
 *    FNV-1a hash of the whole text's UTF-8 bytes: `hvor_fornoyd_er_du_med_kundeservicen_1_5_<hash>`.
 *    The readable part is the text transliterated to snake_case, at most 54 characters: a longer
 *    text keeps its first and its last words, a `<question>: <option>` text keeps the option whole
 *    and shortens the question, and a text with no letters or digits left (Chinese, emoji, empty)
 *    reads `column`.
 * 3. The second, third, … byte-identical occurrence of a text gets `__2`, `__3` (shortening the
 *    name before it to fit). No other name contains `__`, so these never meet another text's name.
 *
 * Plain names, hashed names and repeat marks are disjoint by construction. Two different texts can
 * still claim one name in two ways: plain texts that differ only in letter case or separators
 * (`E-mail` and `E mail`), and a hash collision between texts with the same readable part (about one
 * pair in four billion). Then each of them takes its hashed name, and on a second collision a
 * 16-digit hash. Only then does a name depend on another column: on the other text being there.
 */

import {asciiOf} from './ascii-letters';

/** Postgres's identifier limit (NAMEDATALEN - 1), the shortest of the supported destinations. */
export const MAX_NAME_LENGTH = 63;

/** The snake_case words of a text, unbounded: `[a-z0-9]+` joined by single `_`, maybe ''. */
function slug(text: string): string {
  let out = '';
  for (const ch of text.normalize('NFC').toLowerCase()) out += asciiOf(ch);
  return out.replace(/[^a-z0-9]+/g, '_').replace(/^_|_$/g, '');
}

/**
 * A slug cut to at most `max` characters, at the last word boundary when that keeps at least half
 * of the room, else in the middle of a word. Never ends with `_`.
 */
function cutWords(s: string, max: number): string {
  if (s.length <= max) return s;
  if (max <= 0) return '';
  const head = s.slice(0, max);
  if (s[max] === '_') return head;
  const boundary = head.lastIndexOf('_');
  if (boundary >= Math.ceil(max / 2)) return head.slice(0, boundary);
  return head.replace(/_+$/, '');
}

/** The last words of a slug within `max` characters, cut in a word only if a boundary keeps less than half. */
function lastWords(s: string, max: number): string {
  if (s.length <= max) return s;
  const tail = s.slice(s.length - max);
  if (s[s.length - max - 1] === '_') return tail;
  const boundary = tail.indexOf('_');
  return boundary >= 0 && boundary < Math.floor(max / 2) ? tail.slice(boundary + 1) : tail.replace(/^_+/, '');
}

/** FNV-1a (32 bit) over the UTF-8 bytes, 8 hex digits: a stable fingerprint, not a security measure. */
function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (const byte of Buffer.from(text, 'utf8')) {
    h ^= byte;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}

/** FNV-1a (64 bit), 16 hex digits: for the texts whose 32-bit fingerprints collide. */
function fnv1a64(text: string): string {
  let h = 0xcbf29ce484222325n;
  for (const byte of Buffer.from(text, 'utf8')) h = ((h ^ BigInt(byte)) * 0x100000001b3n) & 0xffffffffffffffffn;
  return h.toString(16).padStart(16, '0');
}

interface Parts {
  /** The whole text's words, or the question's for an expanded multiple-choice header. */
  head: string;
  /** The option's words for `<question>: <option>`, else ''. */
  option: string;
}

/**
 * Splits `<question>: <option>` at the last colon followed by white space (question texts contain
 * colons more often than option labels). Both sides must keep some words, else it is a plain text.
 */
function partsOf(text: string): Parts {
  const m = /^([\s\S]*):\s+([\s\S]*)$/.exec(text);
  if (m) {
    const head = slug(m[1]);
    const option = slug(m[2]);
    if (head && option) return {head, option};
  }
  return {head: slug(text), option: ''};
}

/**
 * The readable part of a hashed name, at most `room` characters: the text's words, and for a text too
 * long, its first and last words (long questions often share their start and differ at the end); for
 * `<question>: <option>` the option whole beside a readable start of the question (up to 20
 * characters of it), shortening the option only when that does not fit; `column` for a text without
 * letters or digits. Never ends with `_`, never contains `__`.
 */
function readable(text: string, room: number): string {
  const {head, option} = partsOf(text);
  if (!head) return 'column';
  const lead = /^[0-9]/.test(head) ? '_' : '';
  const space = room - lead.length;
  if (!option) {
    if (head.length <= space) return lead + head;
    const start = cutWords(head, Math.ceil(space / 2));
    return `${lead}${start}_${lastWords(head.slice(start.length + 1), space - start.length - 1)}`;
  }
  if (head.length + 1 + option.length <= space) return `${lead}${head}_${option}`;
  const optionText = cutWords(option, space - 1 - Math.min(head.length, 20));
  const question = cutWords(head, space - (optionText ? 1 + optionText.length : 0));
  return `${lead}${question}${optionText ? `_${optionText}` : ''}`;
}

const PLAIN_TEXT = /^[A-Za-z0-9]+(?:[ _-][A-Za-z0-9]+)*$/;
/** How every hashed name ends; no plain name may end so. */
const HASH_END = /_(?:[0-9a-f]{8}|[0-9a-f]{16})$/;

/** The name of a plain text (rule 1), or undefined if the text is not plain. */
function plainName(text: string): string | undefined {
  if (!PLAIN_TEXT.test(text)) return undefined;
  const name = `${/^[0-9]/.test(text) ? '_' : ''}${text.toLowerCase().replace(/[ -]/g, '_')}`;
  return HASH_END.test(name) ? undefined : name;
}

/** 0: the name the rule gives; 1: the hashed name even for a plain text; 2: with a 16-digit hash. */
type Level = 0 | 1 | 2;

function nameOf(text: string, occurrence: number, level: Level): string {
  const mark = occurrence > 1 ? `__${occurrence}` : '';
  const room = MAX_NAME_LENGTH - mark.length;
  const plain = level === 0 ? plainName(text) : undefined;
  if (plain !== undefined && plain.length <= room) return plain + mark;
  const hash = level === 2 ? fnv1a64(text) : fnv1a(text);
  return `${readable(text, room - 1 - hash.length)}_${hash}${mark}`;
}

/**
 * The name of one header text (its first occurrence, with no other text to tell apart from): ASCII
 * snake_case, at most 63 characters, not starting with a digit, by the rule in this module's
 * comment. Letters are transliterated (æ -> ae, ø -> o, å -> a, ä -> a, ö -> o, ü -> u, ß -> ss,
 * þ -> th, ð -> d, œ -> oe, ł -> l, đ -> d; other accents dropped after NFKD; Cyrillic and Greek by
 * small tables), everything else separates words. Deterministic and total: never throws.
 */
export function warehouseName(text: string): string {
  return nameOf(String(text), 1, 0);
}

/**
 * One unique name per header, in the same order, by the rule in this module's comment. Names in
 * `reserved` (compared case-insensitively; for example the connector's `_questback_quest_id`) are
 * never produced: a text that would get one takes its hashed name. No name starts with `_` and a
 * letter, so neither Airbyte's `_airbyte_*` and `_ab_cdc_*` columns nor the connector's fields can be
 * produced.
 */
export function warehouseNames(headers: readonly string[], reserved: ReadonlySet<string> = new Set()): string[] {
  const texts = headers.map((h) => String(h));
  const seen = new Map<string, number>();
  const occurrences = texts.map((t) => {
    const n = (seen.get(t) ?? 0) + 1;
    seen.set(t, n);
    return n;
  });
  const taken = new Set([...reserved].map((r) => String(r).toLowerCase()));
  const levels = new Map<string, Level>();
  for (;;) {
    const names = texts.map((t, i) => nameOf(t, occurrences[i], levels.get(t) ?? 0));
    // Occurrences of one text never share a name, so a name with two claimants has two texts.
    const claims = new Map<string, Set<string>>();
    names.forEach((name, i) => claims.set(name, (claims.get(name) ?? new Set()).add(texts[i])));
    let escalated = false;
    for (const [name, claimants] of claims) {
      if (claimants.size < 2 && !taken.has(name)) continue;
      for (const t of claimants) {
        const level = levels.get(t) ?? 0;
        if (level < 2) {
          levels.set(t, (level + 1) as Level);
          escalated = true;
        }
      }
    }
    if (!escalated) return settle(names, texts, taken);
  }
}

/**
 * Uniqueness must not rest on a hash: a name still claimed twice after the 64-bit hash (texts with
 * the same readable part whose 64-bit fingerprints collide) gets `__p<n>`, a mark no other name has.
 */
function settle(names: string[], texts: readonly string[], taken: Set<string>): string[] {
  return names.map((name, i) => {
    let unique = name;
    for (let n = 1; taken.has(unique); n++) unique = `column_${fnv1a64(texts[i])}__p${n}`;
    taken.add(unique);
    return unique;
  });
}
