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
 */

/** Postgres's identifier limit (NAMEDATALEN - 1), the shortest of the supported destinations. */
export const MAX_NAME_LENGTH = 63;

/**
 * Letters that NFKD does not reduce to ASCII, written as a Norwegian, Danish or German reader would.
 * `ä`, `ö`, `ü` are not here: NFKD takes them to `a`, `o`, `u`. German convention would be `ae`, `oe`,
 * `ue`, but `ø` and `ö` must both become `o` (Norwegian and Swedish surveys mix them, and `ø` -> `oe`
 * reads oddly to a Norwegian), and a mix of `ä` -> `ae` with `ö` -> `o` would be neither convention.
 * Plain vowels match what Airbyte itself does with accents, so names stay recognisable.
 */
const LATIN: Readonly<Record<string, string>> = {
  æ: 'ae',
  ø: 'o',
  å: 'a',
  ß: 'ss',
  þ: 'th',
  ð: 'd',
  œ: 'oe',
  ł: 'l',
  đ: 'd',
  ħ: 'h',
  ı: 'i',
  ŋ: 'ng',
  ŧ: 't',
  ĸ: 'k',
  ƒ: 'f',
  // Apostrophes join a word rather than split it: "don't" -> dont, not don_t.
  "'": '',
  '’': '',
  ʼ: '',
  '`': '',
  '´': '',
};

/** A small Cyrillic table (Russian plus the Ukrainian and Belarusian letters), scientific-ish, ASCII. */
const CYRILLIC: Readonly<Record<string, string>> = {
  а: 'a',
  б: 'b',
  в: 'v',
  г: 'g',
  ґ: 'g',
  д: 'd',
  е: 'e',
  ё: 'e',
  є: 'ye',
  ж: 'zh',
  з: 'z',
  и: 'i',
  і: 'i',
  ї: 'yi',
  й: 'y',
  к: 'k',
  л: 'l',
  м: 'm',
  н: 'n',
  о: 'o',
  п: 'p',
  р: 'r',
  с: 's',
  т: 't',
  у: 'u',
  ў: 'u',
  ф: 'f',
  х: 'kh',
  ц: 'ts',
  ч: 'ch',
  ш: 'sh',
  щ: 'shch',
  ъ: '',
  ы: 'y',
  ь: '',
  э: 'e',
  ю: 'yu',
  я: 'ya',
};

/** Greek, modern pronunciation-based; accented vowels reach it through NFKD. */
const GREEK: Readonly<Record<string, string>> = {
  α: 'a',
  β: 'v',
  γ: 'g',
  δ: 'd',
  ε: 'e',
  ζ: 'z',
  η: 'i',
  θ: 'th',
  ι: 'i',
  κ: 'k',
  λ: 'l',
  μ: 'm',
  ν: 'n',
  ξ: 'x',
  ο: 'o',
  π: 'p',
  ρ: 'r',
  σ: 's',
  ς: 's',
  τ: 't',
  υ: 'y',
  φ: 'f',
  χ: 'ch',
  ψ: 'ps',
  ω: 'o',
};

const TABLE: ReadonlyMap<string, string> = new Map(
  [LATIN, CYRILLIC, GREEK].flatMap((t) => Object.entries(t) as [string, string][])
);

const COMBINING_MARK = /\p{M}/gu;
const ASCII_ALNUM = /^[a-z0-9]$/;
/** Names that must never be produced: Airbyte's own columns, and the CDC column it acts on. */
const FORBIDDEN_PREFIXES = ['_airbyte', '_ab_cdc'];

/** One lower-cased character as ASCII letters/digits, '' (dropped) or ' ' (a word separator). */
function asciiOf(ch: string, decomposed = false): string {
  const mapped = TABLE.get(ch);
  if (mapped !== undefined) return mapped;
  if (ASCII_ALNUM.test(ch)) return ch;
  if (decomposed) return ' ';
  // Accented letters, ligatures (ﬁ), full-width forms, superscripts, accented Greek: decompose and
  // look each part up once more.
  const parts = ch.normalize('NFKD').replace(COMBINING_MARK, '').toLowerCase();
  if (parts === ch || parts === '') return parts === '' ? '' : ' ';
  let out = '';
  for (const part of parts) out += asciiOf(part, true);
  return out;
}

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

/** FNV-1a (32 bit) over the UTF-8 bytes: a stable fingerprint, not a security measure. */
function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (const byte of Buffer.from(text, 'utf8')) {
    h ^= byte;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
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
 * The name of a header text within `budget` characters, with `marker` (a collision suffix such as
 * `_2`) placed before the option of a multiple-choice name and at the end of any other name.
 */
function compose(text: string, budget: number, marker: string): string {
  const {head, option} = partsOf(text);
  if (!head) return `column_${fnv1a(text)}${marker}`;
  const lead = /^[0-9]/.test(head) ? '_' : '';
  const room = budget - lead.length - marker.length;
  let name: string;
  if (!option) {
    name = lead + cutWords(head, room) + marker;
  } else if (head.length + 1 + option.length <= room) {
    name = `${lead}${head}${marker}_${option}`;
  } else {
    // Keep the option whole when it fits beside a readable start of the question (up to 20
    // characters of it); otherwise shorten both, the option first.
    const optionText = cutWords(option, room - 1 - Math.min(head.length, 20));
    const question = cutWords(head, room - (optionText ? 1 + optionText.length : 0));
    name = `${lead}${question}${marker}${optionText ? `_${optionText}` : ''}`;
  }
  // Unreachable for names built above (a leading `_` only ever precedes a digit), kept so that the
  // guarantee does not rest on that reasoning alone.
  if (FORBIDDEN_PREFIXES.some((p) => name.startsWith(p))) name = `col${name}`.slice(0, budget).replace(/_+$/, '');
  return name;
}

/**
 * An ASCII snake_case name (`[a-z0-9_]`, at most 63 characters, not starting with a digit) for one
 * header text. Letters are transliterated (æ -> ae, ø -> o, å -> a, ä -> a, ö -> o, ü -> u,
 * ß -> ss, þ -> th, ð -> d, œ -> oe, ł -> l, đ -> d; other accents dropped after NFKD; Cyrillic and
 * Greek by small tables), everything else separates words. A long `<question>: <option>` name keeps
 * the option and shortens the question, at a word boundary where possible. A text that leaves no
 * letters or digits (CJK, emoji, empty) gets `column_<8 hex digits of an FNV-1a hash of the text>`.
 * Deterministic and total: never throws.
 */
export function warehouseName(text: string): string {
  return compose(String(text), MAX_NAME_LENGTH, '');
}

/**
 * One unique name per header, in the same order. The first header to claim a name keeps it; a later
 * one (an identical text, or one equal after transliteration or the 63-character cut) gets `_2`,
 * `_3`, … by order of appearance, before the option of a multiple-choice name
 * (`<question>_2_<option>`, so the option stays last, and the options of a second long question
 * whose cut name equals the first one's carry the same mark) and at the end of any other (`kjonn_2`, matching the connector's `Comment_2`
 * for repeated raw headers). Numbering by order of appearance keeps every existing name when a later
 * export appends columns at the end; inserting or reordering columns can renumber the ones after.
 *
 * Names in `reserved` (compared case-insensitively; for example the connector's
 * `_questback_quest_id`, `_questback_window_start`, `_questback_window_end`) are never produced, nor
 * any name starting with `_airbyte` (Airbyte's own columns) or `_ab_cdc`.
 */
export function warehouseNames(headers: readonly string[], reserved: ReadonlySet<string> = new Set()): string[] {
  const taken = new Set<string>();
  for (const r of reserved) taken.add(String(r).toLowerCase());
  const usable = (name: string) => !taken.has(name) && !FORBIDDEN_PREFIXES.some((p) => name.startsWith(p));
  // Past this many numbered attempts (only reachable with contrived inputs or reserved sets),
  // `column_<hash>_<n>` names, distinct for every n, guarantee an end.
  const attempts = headers.length + taken.size + 2;
  return headers.map((raw) => {
    const text = String(raw);
    let name = compose(text, MAX_NAME_LENGTH, '');
    for (let n = 2; !usable(name); n++) {
      name = n <= attempts ? compose(text, MAX_NAME_LENGTH, `_${n}`) : `column_${fnv1a(text)}_${n}`;
    }
    taken.add(name);
    return name;
  });
}
