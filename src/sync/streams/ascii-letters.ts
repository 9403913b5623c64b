// Any character as ASCII letters and digits, for warehouse column names (column-names.ts): tables
// for the letters NFKD does not reduce to ASCII (Latin, Cyrillic, Greek), and NFKD for the rest.

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

/** One lower-cased character as ASCII letters/digits, '' (dropped) or ' ' (a word separator). */
export function asciiOf(ch: string, decomposed = false): string {
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
