import {prng} from '../helpers/fake-api';
import {MAX_NAME_LENGTH, warehouseName, warehouseNames} from '../../src/sync/streams/column-names';
import {CONNECTOR_FIELDS} from '../../src/sync/streams/record-columns';
import {Destination, destinationColumns, javaHashCode} from '../helpers/destinations';
import {PRESETS} from '../../simulator/title-presets';
import {recordColumns} from '../../src/sync/streams/record-columns';

const DESTINATIONS: readonly Destination[] = ['postgres', 'bigquery', 'snowflake'];

// Two 100+ character questions that share their first 93 characters, expanded into one column per
// option the way Questback names them: `<question>: <option>`.
const SHARED = 'Tenk på den siste henvendelsen din til oss og vurder hvor enig du er i følgende påstander om ';
const LIKERT_A = `${SHARED}kundeservicen vår`;
const LIKERT_B = `${SHARED}nettsidene og appen vår`;
const LIKERT_OPTIONS = ['Helt enig', 'Delvis enig', 'Uenig'];

/** Header texts and the names warehouseNames gives them (with the connector's fields reserved). */
const CASES: readonly (readonly [string, string])[] = [
  // The simulator's English headers. Plain texts (ASCII words joined by single spaces, hyphens or
  // underscores) keep their words; every other text carries a hash of itself.
  ['Response ID', 'response_id'],
  ['Created', 'created'],
  ['E-mail', 'e_mail'],
  ['Phone', 'phone'],
  ['Q1. How satisfied are you? (1-5)', 'q1_how_satisfied_are_you_1_5_43714c59'],
  ['Q2 | Comments, "free text"', 'q2_comments_free_text_d3576563'],
  ['Q3 Favourite colours: Red', 'q3_favourite_colours_red_7e714db8'],
  ['Q3 Favourite colours: Light grey', 'q3_favourite_colours_light_grey_eb7c374a'],
  ['Q4 How did you hear about us?', 'q4_how_did_you_hear_about_us_dd3b47ec'],
  ['Q5 Other', 'q5_other'],
  // Norwegian.
  ['Hvor fornøyd er du med kundeservicen? (1-5)', 'hvor_fornoyd_er_du_med_kundeservicen_1_5_65055c46'],
  ['Hva er din største utfordring i hverdagen?', 'hva_er_din_storste_utfordring_i_hverdagen_1b72765c'],
  ['Kjønn', 'kjonn_4ce9cbab'],
  ['Bosted: Østlandet', 'bosted_ostlandet_12a052ae'],
  ['Bosted: Sør- og Vestlandet', 'bosted_sor_og_vestlandet_cb5e6d31'],
  // 66 characters: the question gives way, the option stays whole.
  [
    'Hvilke av disse tjenestene har du brukt siste år?: Økonomirådgivning',
    'hvilke_av_disse_tjenestene_har_du_okonomiradgivning_445288d1',
  ],
  [
    'Hvilke av disse tjenestene har du brukt siste år?: Forsikring',
    'hvilke_av_disse_tjenestene_har_du_brukt_forsikring_06db4e87',
  ],
  // German.
  ['Wie zufrieden sind Sie mit unserem Kundenservice?', 'wie_zufrieden_sind_sie_mit_unserem_kundenservice_01b85f41'],
  ['Größe des Unternehmens', 'grosse_des_unternehmens_8246eaf6'],
  ['Straße und Hausnummer', 'strasse_und_hausnummer_874060ac'],
  ['Würden Sie uns weiterempfehlen?', 'wurden_sie_uns_weiterempfehlen_fd4a9f4a'],
  // Long multiple choice: the question is cut at a word boundary, the option stays, and the hash of
  // the whole text tells the two questions' columns apart.
  [`${LIKERT_A}: Helt enig`, 'tenk_pa_den_siste_henvendelsen_din_til_oss_helt_enig_491c6b82'],
  [`${LIKERT_A}: Delvis enig`, 'tenk_pa_den_siste_henvendelsen_din_til_oss_delvis_enig_b729b0e8'],
  [`${LIKERT_A}: Uenig`, 'tenk_pa_den_siste_henvendelsen_din_til_oss_og_uenig_a7b87e74'],
  [`${LIKERT_B}: Helt enig`, 'tenk_pa_den_siste_henvendelsen_din_til_oss_helt_enig_bdfdc313'],
  [`${LIKERT_B}: Delvis enig`, 'tenk_pa_den_siste_henvendelsen_din_til_oss_delvis_enig_bf953cc5'],
  [`${LIKERT_B}: Uenig`, 'tenk_pa_den_siste_henvendelsen_din_til_oss_og_uenig_29b6e859'],
  // Cyrillic, CJK ("gender", "age").
  ['Насколько вы довольны нашим сервисом?', 'naskolko_vy_dovolny_nashim_servisom_9c8bfdb0'],
  ['性别', 'column_d2158a0e'],
  ['年龄', 'column_0f2a10c6'],
  // A repeated header.
  ['Kjønn', 'kjonn_4ce9cbab__2'],
];
const HEADERS = CASES.map(([header]) => header);
const EXPECTED = CASES.map(([, name]) => name);

/** The record fields the connector emits today: header texts, repeats suffixed `_2` (csv-records). */
function rawRecordFields(headers: readonly string[]): string[] {
  const taken = new Set<string>(CONNECTOR_FIELDS);
  const fields = headers.map((h) => {
    let name = h;
    for (let n = 2; taken.has(name); n++) name = `${h}_${n}`;
    taken.add(name);
    return name;
  });
  return [...fields, ...CONNECTOR_FIELDS];
}

const at = (header: string, occurrence = 1) => {
  let seen = 0;
  const i = HEADERS.findIndex((h) => h === header && ++seen === occurrence);
  if (i < 0) throw new Error(`no header ${header}`);
  return i;
};

describe('the fixture', () => {
  test('has two 100+ character questions sharing their first 70+ characters', () => {
    expect(LIKERT_A.length).toBeGreaterThan(100);
    expect(LIKERT_B.length).toBeGreaterThan(100);
    expect(LIKERT_A.slice(0, 70)).toBe(LIKERT_B.slice(0, 70));
    expect(HEADERS.filter((h) => h.startsWith(SHARED))).toHaveLength(2 * LIKERT_OPTIONS.length);
  });
});

describe('without warehouseNames: raw header texts as record fields', () => {
  const raw = rawRecordFields(HEADERS);
  const columns = Object.fromEntries(DESTINATIONS.map((d) => [d, destinationColumns(raw, d)])) as Record<
    Destination,
    string[]
  >;

  test('Postgres and BigQuery turn ø, ß, spaces and punctuation into underscores, one each', () => {
    for (const d of ['postgres', 'bigquery'] as const) {
      const c = columns[d];
      expect(c[at('Hvor fornøyd er du med kundeservicen? (1-5)')]).toBe('Hvor_forn_yd_er_du_med_kundeservicen___1_5_');
      expect(c[at('Hva er din største utfordring i hverdagen?')]).toBe('Hva_er_din_st_rste_utfordring_i_hverdagen_');
      expect(c[at('Kjønn')]).toBe('Kj_nn');
      expect(c[at('Kjønn', 2)]).toBe('Kj_nn_2');
      expect(c[at('Bosted: Østlandet')]).toBe('Bosted___stlandet');
      expect(c[at('Bosted: Sør- og Vestlandet')]).toBe('Bosted__S_r__og_Vestlandet');
      expect(c[at('Größe des Unternehmens')]).toBe('Gro_e_des_Unternehmens');
      expect(c[at('Straße und Hausnummer')]).toBe('Stra_e_und_Hausnummer');
      expect(c[at('Q1. How satisfied are you? (1-5)')]).toBe('Q1__How_satisfied_are_you___1_5_');
      expect(c[at('Q2 | Comments, "free text"')]).toBe('Q2___Comments___free_text_');
      // Mixed case stays: the columns must be quoted ("Response_ID") in every query.
      expect(c[at('Response ID')]).toBe('Response_ID');
    }
  });

  test('Cyrillic and CJK headers become all-underscore names, told apart only by `_1`', () => {
    for (const d of ['postgres', 'bigquery'] as const) {
      const c = columns[d];
      expect(c[at('Насколько вы довольны нашим сервисом?')]).toBe('_'.repeat(37));
      expect(c[at('性别')]).toBe('__');
      // "年龄" also becomes "__", collides, and is rebuilt from "年龄_1" (ColumnNameResolver).
      expect(c[at('年龄')]).toBe('___1');
    }
  });

  test('Postgres cuts long names to 54 characters plus a hash: the option of a multiple-choice column is lost', () => {
    const c = columns.postgres;
    expect(c[at('Hvilke av disse tjenestene har du brukt siste år?: Økonomirådgivning')]).toBe(
      'Hvilke_av_disse_tjenestene_har_du_brukt_siste_ar____ko_03662362'
    );
    const likert = HEADERS.map((h, i) => [h, c[i]] as const).filter(([h]) => h.startsWith(SHARED));
    expect(likert.map(([, name]) => name)).toEqual([
      'Tenk_pa_den_siste_henvendelsen_din_til_oss_og_vurder_h_45831910',
      'Tenk_pa_den_siste_henvendelsen_din_til_oss_og_vurder_h_25308438',
      'Tenk_pa_den_siste_henvendelsen_din_til_oss_og_vurder_h_41768917',
      'Tenk_pa_den_siste_henvendelsen_din_til_oss_og_vurder_h_44984379',
      'Tenk_pa_den_siste_henvendelsen_din_til_oss_og_vurder_h_83975733',
      'Tenk_pa_den_siste_henvendelsen_din_til_oss_og_vurder_h_23975030',
    ]);
    // Six columns, two questions, three options: nothing in the names but eight digits tells them apart.
    for (const [, name] of likert)
      expect(name).toMatch(/^Tenk_pa_den_siste_henvendelsen_din_til_oss_og_vurder_h_\d{8}$/);
  });

  test('BigQuery keeps long names whole: 118 to 127 characters with mangled letters', () => {
    const c = columns.bigquery;
    expect(c[at(`${LIKERT_B}: Helt enig`)]).toBe(
      'Tenk_pa_den_siste_henvendelsen_din_til_oss_og_vurder_hvor_enig_du_er_i_f_lgende_pastander_om_nettsidene_og_appen_var__Helt_enig'
    );
    expect(c[at('Hvilke av disse tjenestene har du brukt siste år?: Økonomirådgivning')]).toBe(
      'Hvilke_av_disse_tjenestene_har_du_brukt_siste_ar____konomiradgivning'
    );
  });

  test('Snowflake keeps the texts but upper-cases them into identifiers that need quoting', () => {
    const c = columns.snowflake;
    expect(c[at('Hvor fornøyd er du med kundeservicen? (1-5)')]).toBe('HVOR FORNØYD ER DU MED KUNDESERVICEN? (1-5)');
    expect(c[at('Q2 | Comments, "free text"')]).toBe('Q2 | COMMENTS, "FREE TEXT"');
    expect(c[at('Größe des Unternehmens')]).toBe('GRÖSSE DES UNTERNEHMENS');
    expect(c[at('Kjønn', 2)]).toBe('KJØNN_2');
    expect(c[at('性别')]).toBe('性别');
    expect(c[at(`${LIKERT_A}: Uenig`)]).toHaveLength(117);
    // Only two of the 31 header columns are valid unquoted identifiers.
    const unquoted = c.slice(0, HEADERS.length).filter((name) => /^[A-Z_][A-Z0-9_$]*$/.test(name));
    expect(unquoted).toEqual(['CREATED', 'PHONE']);
  });

  test('even ignoring case, the destinations agree only on plain single words and the connector fields', () => {
    const agreeing = raw.filter((_, i) => new Set(DESTINATIONS.map((d) => columns[d][i].toLowerCase())).size === 1);
    expect(agreeing).toEqual(['Created', 'Phone', ...CONNECTOR_FIELDS]);
  });
});

/** A name without its hash: what a reader sees of the text. */
const readablePart = (name: string) => name.replace(/_[0-9a-f]{8}$/, '');

describe('with warehouseNames', () => {
  const names = warehouseNames(HEADERS, CONNECTOR_FIELDS);

  test('gives readable snake_case names', () => {
    expect(names).toEqual(EXPECTED);
    expect(warehouseName('Hvor fornøyd er du med kundeservicen? (1-5)')).toBe(
      'hvor_fornoyd_er_du_med_kundeservicen_1_5_65055c46'
    );
  });

  test('every destination keeps the names (Snowflake upper-cases them, as it does every unquoted name)', () => {
    const fields = [...names, ...CONNECTOR_FIELDS];
    expect(destinationColumns(fields, 'postgres')).toEqual(fields);
    expect(destinationColumns(fields, 'bigquery')).toEqual(fields);
    expect(destinationColumns(fields, 'snowflake')).toEqual(fields.map((f) => f.toUpperCase()));
  });

  test('names are unique, ASCII [a-z0-9_], at most 63 characters and never the connector fields', () => {
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) {
      expect(name).toMatch(/^[a-z_][a-z0-9_]*$/);
      expect(name.length).toBeLessThanOrEqual(MAX_NAME_LENGTH);
      expect(CONNECTOR_FIELDS.has(name)).toBe(false);
    }
  });

  test('expanded multiple-choice columns end with their option and the hash', () => {
    const options: Record<string, string> = {
      'Helt enig': '_helt_enig',
      'Delvis enig': '_delvis_enig',
      Uenig: '_uenig',
      Østlandet: '_ostlandet',
      'Sør- og Vestlandet': '_sor_og_vestlandet',
      Økonomirådgivning: '_okonomiradgivning',
      Forsikring: '_forsikring',
      Red: '_red',
      'Light grey': '_light_grey',
    };
    let checked = 0;
    HEADERS.forEach((header, i) => {
      const option = header.split(': ').pop() as string;
      if (header.includes(': ')) {
        expect(readablePart(names[i]).endsWith(options[option])).toBe(true);
        checked++;
      }
    });
    expect(checked).toBe(12);
  });

  test('plain texts keep their words; any other text carries a hash of the whole text', () => {
    const plain: Record<string, string> = {
      'Response ID': 'response_id',
      response_id: 'response_id',
      'E-mail': 'e_mail',
      'Q5 Other': 'q5_other',
      '2024': '_2024',
      'Net Promoter Score 0 10': 'net_promoter_score_0_10',
    };
    for (const [text, name] of Object.entries(plain)) expect([text, warehouseName(text)]).toEqual([text, name]);
    // Punctuation, edge or double spaces, an ending that looks like a hash, over 63 characters.
    for (const text of ['Q5 Other?', ' Created', 'Q5  Other', 'Code 2024abcd', `Word ${'a'.repeat(60)}`]) {
      expect([text, warehouseName(text)]).toEqual([text, expect.stringMatching(/_[0-9a-f]{8}$/)]);
    }
    // Texts that one lost letter or one cut would make equal stay apart, whoever else is there.
    expect(warehouseNames(['Kjønn', 'Kjonn'])).toEqual(['kjonn_4ce9cbab', 'kjonn']);
    expect(warehouseNames(['Kjonn', 'Kjønn'])).toEqual(['kjonn', 'kjonn_4ce9cbab']);
  });

  test('byte-identical repeats get __2, __3 by occurrence, a mark no other name has', () => {
    expect(warehouseNames(['Kjønn', 'Kjønn', 'Kjønn'])).toEqual([
      'kjonn_4ce9cbab',
      'kjonn_4ce9cbab__2',
      'kjonn_4ce9cbab__3',
    ]);
    expect(warehouseNames(['Comment', 'Comment 2', 'Comment'])).toEqual(['comment', 'comment_2', 'comment__2']);
    expect(warehouseNames(['', ''])).toEqual(['column_811c9dc5', 'column_811c9dc5__2']);
    // A 63-character plain text shortens to make room for its mark, and so takes the hashed form.
    const full = `a ${'b'.repeat(60)}`;
    expect(warehouseNames([full, full])).toEqual([
      `a_${'b'.repeat(60)}`,
      expect.stringMatching(/^a_b+_b+_[0-9a-f]{8}__2$/),
    ]);
  });

  test('plain texts that differ only in case or separators both take their hashed names', () => {
    expect(warehouseNames(['E-mail', 'E mail', 'Email'])).toEqual(['e_mail_31bb94b0', 'e_mail_ffd88cc7', 'email']);
    expect(warehouseNames(['Response ID', 'RESPONSE ID'])).toEqual([
      expect.stringMatching(/^response_id_[0-9a-f]{8}$/),
      expect.stringMatching(/^response_id_[0-9a-f]{8}$/),
    ]);
  });

  test('texts whose 32-bit hashes collide take 16-digit hashes; a name taken even then gets a mark', () => {
    // Found by a birthday search: equal readable parts, equal FNV-1a 32-bit hashes.
    const [a, b] = ['Kjønn}~|)', 'Kjønn//]]'];
    expect(warehouseName(a)).toBe(warehouseName(b));
    expect(warehouseNames([a, b])).toEqual(['kjonn_3f92e8d1a55b8203', 'kjonn_7dacd322e8b0a823']);
    expect(warehouseNames([a, b], new Set(['kjonn_3f92e8d1a55b8203']))).toEqual([
      'column_3f92e8d1a55b8203__p1',
      'kjonn_7dacd322e8b0a823',
    ]);
  });

  test('reserved names and Airbyte columns are never produced', () => {
    expect(warehouseNames(['Created', 'Created'], new Set(['created']))).toEqual([
      'created_09de135b',
      'created_09de135b__2',
    ]);
    expect(warehouseNames(['Q5 Other'], new Set(['Q5_OTHER']))).toEqual([
      expect.stringMatching(/^q5_other_[0-9a-f]{8}$/),
    ]);
    // Headers that spell Airbyte's or the connector's fields lose the leading underscore.
    expect(
      warehouseNames(['_airbyte_raw_id', '_airbyte_extracted_at', '_questback_quest_id'], CONNECTOR_FIELDS).map(
        readablePart
      )
    ).toEqual(['airbyte_raw_id', 'airbyte_extracted_at', 'questback_quest_id']);
  });

  test('transliteration', () => {
    const examples: Record<string, string> = {
      'Ærlig talt': 'aerlig_talt',
      'ÆØÅ æøå': 'aeoa_aeoa',
      Smørbrød: 'smorbrod',
      'Häufigkeit für Öl': 'haufigkeit_fur_ol',
      'STRASSE / Straße': 'strasse_strasse',
      Þórshöfn: 'thorshofn',
      'Ðað er gott': 'dad_er_gott',
      œuvre: 'oeuvre',
      Łódź: 'lodz',
      Đakovo: 'dakovo',
      'İstanbul ılık': 'istanbul_ilik',
      'Ёлка, йогурт, їжак, Європа': 'elka_yogurt_yizhak_yevropa',
      'Щука и съёмка': 'shchuka_i_semka',
      'Πόσο ικανοποιημένος είστε;': 'poso_ikanopoiimenos_eiste',
      "Don't know": 'dont_know',
      'ﬁnal ＡＢＣ x²': 'final_abc_x2',
      '1. Alder': '_1_alder',
      '  --Q9--  ': 'q9',
    };
    for (const [text, name] of Object.entries(examples)) {
      expect([text, readablePart(warehouseName(text))]).toEqual([text, name]);
    }
  });

  test('a text with no letters or digits left gets column_<FNV-1a hash>', () => {
    expect(warehouseName('')).toBe('column_811c9dc5');
    expect(warehouseName('🙂')).toMatch(/^column_[0-9a-f]{8}$/);
    expect(warehouseName('???')).not.toBe(warehouseName('!!!'));
  });

  test('a long text keeps its first and last words', () => {
    const long = 'Hvor sannsynlig er det at du vil anbefale oss til en venn eller kollega på en skala fra 0 til 10?';
    expect(warehouseName(long)).toBe('hvor_sannsynlig_er_det_at_pa_en_skala_fra_0_til_10_fcb5e229');
    expect(warehouseName('x'.repeat(200))).toMatch(/^x{27}_x{26}_[0-9a-f]{8}$/);
  });
});

const PIECES = [
  'a', 'Z', '0', '7', ' ', '   ', '_', '__', '-', ':', ': ', '?', '(', ')', '"', "'", '’', '.', '|', '/', '$', '{', '${',
  'æ', 'Ø', 'å', 'ß', 'ẞ', 'ö', 'Ü', 'é', '\u0301', 'İ', 'ı', 'þ', 'Ð', 'ł', 'đ', 'œ', 'Ж', 'й', 'щ', 'Ω', 'ά', 'ς',
  '性', '别', '🙂', '👍🏽', '\uD800', '\uDFFF', '\u0000', '\t', '\n', '\u00A0', 'ﬁ', '①', '²', 'ＡＢ',
  '_airbyte', '_airbyte_raw_id', '_ab_cdc_deleted_at', 'airbyte', '_questback_quest_id', 'questback', 'column_', '_2',
  'Hvor fornøyd er du', ' med kundeservicen', 'Tenk på den siste henvendelsen din til oss og vurder hvor enig du er',
  'x'.repeat(40), 'Größe ', 'Straße und ', '__2', ' 811c9dc5',
]; // prettier-ignore

function randomText(next: () => number): string {
  const n = Math.floor(next() * 14);
  let s = '';
  for (let i = 0; i < n; i++) s += PIECES[Math.floor(next() * PIECES.length)];
  return s;
}

/** Every title and expanded `<title>: <option>` of the simulator's presets: Norwegian, German, long shared starts. */
const SURVEY_TEXTS: readonly string[] = Object.values(PRESETS).flatMap((preset) =>
  Object.values(preset.templates).flatMap((templates) =>
    templates.flatMap((template, k) => {
      const {title, options = []} = template(k + 1);
      return [title, preset.repeat(title, k + 7), ...options.map((o) => `${title}: ${o}`)];
    })
  )
);

/** A header of real-looking and random texts, every fifth a repeat of an earlier one. */
function randomHeader(next: () => number): string[] {
  const headers: string[] = [];
  const count = 1 + Math.floor(next() * 40);
  for (let i = 0; i < count; i++) {
    const r = next();
    if (headers.length && r < 0.2) headers.push(headers[Math.floor(next() * headers.length)]);
    else if (r < 0.6) headers.push(SURVEY_TEXTS[Math.floor(next() * SURVEY_TEXTS.length)]);
    else headers.push(randomText(next));
  }
  return headers;
}

/** The one documented exception: another plain text that differs only in case or separators. */
function hasPlainTwin(text: string, headers: readonly string[]): boolean {
  const key = (t: string) =>
    /^[A-Za-z0-9]+(?:[ _-][A-Za-z0-9]+)*$/.test(t) ? t.toLowerCase().replace(/-| /g, '_') : undefined;
  const own = key(text);
  return own !== undefined && headers.some((h) => h !== text && key(h) === own);
}

/** The name of occurrence `k` of a text with nothing else around it. */
const alone = (text: string, k: number) => warehouseNames(Array.from({length: k}, () => text))[k - 1];

/** Each text's names by occurrence. */
function namesByText(headers: readonly string[], names: readonly string[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  headers.forEach((h, i) => out.set(h, [...(out.get(h) ?? []), names[i]]));
  return out;
}

describe('properties over seeded random headers', () => {
  test('total, deterministic, unique, within 63, never reserved or _airbyte*, kept by every destination', () => {
    const next = prng(20260521);
    for (let round = 0; round < 400; round++) {
      const headers = randomHeader(next);
      const reserved = new Set([...CONNECTOR_FIELDS, warehouseName(headers[0])]);
      const names = warehouseNames(headers, reserved);

      expect(warehouseNames(headers, reserved)).toEqual(names);
      expect(names).toHaveLength(headers.length);
      expect(new Set(names).size).toBe(names.length);
      // The names that break a rule (one expect a round: 400 rounds of a dozen names each).
      const unsound = names.filter(
        (name) =>
          !/^[a-z_][a-z0-9_]*$/.test(name) ||
          /^_[^0-9]/.test(name) ||
          name.length > MAX_NAME_LENGTH ||
          reserved.has(name)
      );
      expect(unsound).toEqual([]);
      // What the destinations make of them: nothing changes but Snowflake's case.
      const fields = [...names, ...CONNECTOR_FIELDS];
      expect(destinationColumns(fields, 'postgres')).toEqual(fields);
      expect(destinationColumns(fields, 'bigquery')).toEqual(fields);
      expect(destinationColumns(fields, 'snowflake')).toEqual(fields.map((f) => f.toUpperCase()));
    }
  });

  test('a name is a function of its text and occurrence: the same with or without the other columns', () => {
    const next = prng(16);
    let twins = 0;
    // Every name beside the one its text gets alone, compared in one expect at the end.
    const [got, alike]: [string, string][][] = [[], []];
    for (let round = 0; round < 200; round++) {
      const headers = randomHeader(next);
      const names = warehouseNames(headers, CONNECTOR_FIELDS);
      for (const [text, byOccurrence] of namesByText(headers, names)) {
        if (hasPlainTwin(text, headers)) twins++;
        else
          byOccurrence.forEach((name, k) => {
            got.push([text, name]);
            alike.push([text, alone(text, k + 1)]);
          });
      }
    }
    expect(got).toEqual(alike);
    // The exception is rare enough not to hollow the test out.
    expect(twins).toBeLessThan(20);
  });

  test('inserting, removing or reordering columns never renames a text that stays', () => {
    const next = prng(1605);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)];
    // Every name of a text that stays beside its name before, compared in one expect at the end.
    const [got, kept]: [string, number, string][][] = [[], []];
    for (let round = 0; round < 200; round++) {
      const before = randomHeader(next);
      const after = [...before];
      for (let edits = 1 + Math.floor(next() * 4); edits > 0; edits--) {
        const r = next();
        const at = Math.floor(next() * (after.length + 1));
        if (r < 0.4) after.splice(at, 0, next() < 0.7 ? pick(SURVEY_TEXTS) : randomText(next));
        else if (r < 0.7 && after.length > 1) after.splice(Math.min(at, after.length - 1), 1);
        else if (after.length > 1) after.splice(at, 0, ...after.splice(Math.floor(next() * after.length), 1));
      }
      const old = namesByText(before, warehouseNames(before, CONNECTOR_FIELDS));
      const now = namesByText(after, warehouseNames(after, CONNECTOR_FIELDS));
      for (const [text, names] of now) {
        if (hasPlainTwin(text, before) || hasPlainTwin(text, after)) continue;
        const was = old.get(text) ?? [];
        // Occurrences that exist in both keep their names (byte-identical repeats are numbered).
        names.slice(0, was.length).forEach((name, k) => {
          got.push([text, k, name]);
          kept.push([text, k, was[k]]);
        });
      }
    }
    expect(got).toEqual(kept);
  });

  test('many columns with one long text stay unique and within 63', () => {
    const header = `${LIKERT_A}: ${'Svært '.repeat(20)}enig`;
    const names = warehouseNames(Array.from({length: 150}, () => header));
    expect(new Set(names).size).toBe(150);
    expect(names[0]).toMatch(/_[0-9a-f]{8}$/);
    expect(names[149]).toMatch(/_[0-9a-f]{8}__150$/);
    for (const name of names) expect(name.length).toBeLessThanOrEqual(MAX_NAME_LENGTH);
  });
});

describe('the destination emulation', () => {
  test('follows the documented Airbyte behaviour', () => {
    expect(javaHashCode('hello')).toBe(99162322);
    expect(destinationColumns(['User Id', '99-red-balloons', 'café', '北京', 'my---table'], 'postgres')).toEqual([
      'User_Id',
      '_99_red_balloons',
      'cafe',
      '__',
      'my___table',
    ]);
    const long = destinationColumns(['a'.repeat(60) + 'xyz', 'a'.repeat(60) + 'abc'], 'postgres');
    expect(long.map((n) => n.length)).toEqual([63, 63]);
    expect(long[0]).not.toBe(long[1]);
    expect(destinationColumns(['1. Alder'], 'bigquery')).toEqual(['_1__Alder']);
    expect(destinationColumns(['Kjønn', 'KJØNN'], 'snowflake')).toEqual(['KJØNN', 'KJØNN_1']);
    expect(destinationColumns(['a', 'A'], 'postgres')).toEqual(['a', 'A_1']);
  });

  test('an empty field name fails BigQuery and Snowflake syncs and gets a random name in Postgres', () => {
    expect(() => destinationColumns([''], 'bigquery')).toThrow(/empty/);
    expect(() => destinationColumns([''], 'snowflake')).toThrow(/Empty/);
    expect(destinationColumns([''], 'postgres')[0]).toMatch(/^default_name_/);
  });
});

describe('recordColumns with the names a configured schema pins', () => {
  const header = ['Response ID', 'Created', 'Q1', 'Q1', 'q1', '', '', 'E-mail'];
  const pinsOf = (texts: readonly string[], names: readonly string[]): Map<string, string[]> => {
    const pins = new Map<string, string[]>();
    texts.forEach((t, i) => pins.set(t, [...(pins.get(t) ?? []), names[i]]));
    return pins;
  };
  const named = (texts: readonly string[], pins?: Map<string, string[]>): string[] =>
    recordColumns(texts, 'warehouse', pins).map((c) => c.name);

  test("the catalog discover gave: the read names every column as discover did, whatever the header's repeats", () => {
    const discovered = named(header);
    expect(named(header, pinsOf(header, discovered))).toEqual(discovered);
    const survey = recordColumns(header, 'survey').map((c) => c.name);
    expect(recordColumns(header, 'survey', pinsOf(header, survey)).map((c) => c.name)).toEqual(survey);
  });

  test('a question added whose name collides: every configured column keeps its name, repeats by occurrence', () => {
    const discovered = named(header);
    const edited = [...header, 'E mail'];
    const got = named(edited, pinsOf(header, discovered));
    expect(got.slice(0, header.length)).toEqual(discovered);
    // The new text takes a name no configured column has (its hashed one, `e_mail` being pinned).
    expect(got[header.length]).toMatch(/^e_mail_[0-9a-f]{8}$/);
  });
});
