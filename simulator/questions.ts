// The question layout of a quest and the seeded answers of one response. Answers are drawn in a
// fixed order that does not depend on the export settings, so every setting renders the same
// underlying response; rendering then applies valueType, expansion and showOtherAsText.

import {Prng} from './prng';
import {ResolvedSettings} from './settings';
import {Preset} from './title-presets';

export type QuestionKind = 'rating' | 'text' | 'multi' | 'single' | 'other' | 'date' | 'number';

export interface Question {
  kind: QuestionKind;
  title: string;
  /** Choice labels (rating, multi, single); a single with an 'other' column ends with the preset's other label. */
  options: readonly string[];
  /** single only: the next column holds the "other (please specify)" text. */
  hasOther: boolean;
  /**
   * Epoch ms when the question was inserted into the live survey (Simulator.insertQuestion):
   * responses created before have no answer to it. Absent for the questions the quest started with.
   */
  askedFrom?: number;
}

// The first seven columns show every kind once; further columns cycle so that roughly one cell
// in five of a wide export is a free text that needs quoting.
const FIRST_KINDS: readonly QuestionKind[] = ['rating', 'text', 'multi', 'single', 'other', 'date', 'number'];
const MORE_KINDS: readonly QuestionKind[] = [
  'text',
  'rating',
  'multi',
  'number',
  'single',
  'other',
  'text',
  'date',
  'rating',
  'text',
];

/**
 * The question columns of a quest: kinds from the fixed cycle, titles and labels from `preset`,
 * or the titles from `titles` (one per column) when given.
 */
export function buildLayout(columns: number, preset: Preset, titles?: readonly string[]): Question[] {
  const kinds: QuestionKind[] = [];
  for (let i = 0; i < columns; i++) {
    kinds.push(i < FIRST_KINDS.length ? FIRST_KINDS[i] : MORE_KINDS[(i - FIRST_KINDS.length) % MORE_KINDS.length]);
  }
  const seen: Partial<Record<QuestionKind, number>> = {};
  const used = new Set<string>();
  return kinds.map((kind, i) => {
    const k = seen[kind] ?? 0;
    seen[kind] = k + 1;
    const templates = preset.templates[kind];
    const t = templates[k % templates.length](i + 1);
    let title = titles ? titles[i] : t.title;
    if (!titles && used.has(title)) title = preset.repeat(title, i + 1);
    used.add(title);
    const hasOther = kind === 'single' && kinds[i + 1] === 'other';
    let options: readonly string[] = t.options ?? [];
    if (kind === 'rating') options = preset.ratingLabels;
    if (hasOther) options = [...options, preset.otherLabel];
    return {kind, title, options, hasOther};
  });
}

/** Header cells of the question part for these settings. */
export function questionHeader(layout: readonly Question[], s: ResolvedSettings): string[] {
  const out: string[] = [];
  for (const q of layout) {
    if (q.kind === 'multi' && s.expandMultipleChoice) {
      for (const o of q.options) out.push(`${q.title}: ${o}`);
    } else if (q.kind === 'other' && s.showOtherAsText) {
      continue; // the text moves into the choice cell of the preceding question
    } else {
      out.push(q.title);
    }
  }
  return out;
}

// Fragments chosen to break naive parsers: every separator, quotes, CR/LF and LF, edge spaces,
// right-to-left and CJK text, and emoji made of several code points.
const TEXT_FRAGMENTS = [
  'Great service, thanks!',
  'Too slow; waited 20 min',
  'a | b | c',
  'He said "wow"',
  '"Quoted" from the start',
  'ends with a quote"',
  'line one\r\nline two',
  'first\nsecond\nthird',
  '  leading spaces',
  'trailing spaces   ',
  'とても良かったです。また来ます',
  'خدمة ممتازة، شكراً جزيلاً',
  'Отлично, спасибо!',
  '👩‍💻 works from home 🇳🇴',
  'tab\there',
  'comma,semicolon;pipe|quote"',
  '""',
  'Ünïcödé — «ß» ½',
  'price: 5,50 €',
  '👍🏽 ok',
  "it's fine",
  '=SUM(A1:A2)',
  'NULL',
  '\\N',
];
const HARD_FRAGMENTS = TEXT_FRAGMENTS.filter((f) => /["\r\n|]/.test(f));

const OTHER_TEXTS = [
  'My neighbour, "Bob"',
  'LinkedIn | ad',
  'Радио',
  'ポスターを見た',
  'podcast; episode 12',
  ' a sign on the road ',
  'إعلان في الشارع',
  '🚲 bike tour\nwith friends',
];

const FIRST_NAMES = ['anna', 'bjorn', 'chloe', 'dmitri', 'emi', 'fatima', 'george', 'hana', 'ivan', 'julia'];
const LAST_NAMES = ['berg', 'olsen', 'smith', 'tanaka', 'haddad', 'petrov', 'garcia', 'nilsen'];

/** Raw answers of one response, as numbers or strings by column. */
export interface Response {
  email: string;
  phone: string;
  /** rating: 0 (empty) or 1..5; multi: option bitmask; single: 0 (empty) or 1-based option; others: text. */
  answers: (number | string)[];
}

function freeText(rng: Prng): string {
  if (rng.chance(0.12)) return '';
  const parts = rng.range(1, 3);
  let text = rng.chance(0.5) ? rng.pick(HARD_FRAGMENTS) : rng.pick(TEXT_FRAGMENTS);
  for (let i = 1; i < parts; i++) text += (rng.chance(0.2) ? '\n' : ' ') + rng.pick(TEXT_FRAGMENTS);
  return text;
}

// Every day from 2015-01-01 to 2025-12-31, formatted once: formatting per cell dominated the
// generation time of large exports.
const DATES: readonly string[] = Array.from({length: 4018}, (_, k) =>
  new Date(Date.UTC(2015, 0, 1) + k * 86_400_000).toISOString().slice(0, 10)
);

function isoDate(rng: Prng): string {
  return DATES[rng.int(DATES.length)];
}

function numberText(rng: Prng): string {
  const r = rng.next();
  if (r < 0.6) return String(rng.int(5001));
  if (r < 0.9) return (rng.int(100_000) / 100).toString();
  return String(-rng.range(1, 50));
}

/** The answer of question `i`, drawn from `rng`; `answers` holds those drawn before it. */
function drawAnswer(layout: readonly Question[], i: number, answers: readonly (number | string)[], rng: Prng) {
  const q = layout[i];
  switch (q.kind) {
    case 'rating':
      return rng.chance(0.15) ? 0 : rng.range(1, 5);
    case 'text':
      return freeText(rng);
    case 'multi':
      return rng.chance(0.1) ? 0 : rng.range(1, (1 << q.options.length) - 1);
    case 'single':
      return rng.chance(0.1) ? 0 : rng.range(1, q.options.length);
    case 'other': {
      // Filled only when the preceding single choice picked its "other" option.
      const prev = layout[i - 1];
      const picked = prev !== undefined && prev.hasOther && answers[i - 1] === prev.options.length;
      const text = rng.pick(OTHER_TEXTS);
      return picked ? text : '';
    }
    case 'date':
      return rng.chance(0.2) ? '' : isoDate(rng);
    case 'number':
      return rng.chance(0.2) ? '' : numberText(rng);
  }
}

/**
 * Draws the answers of one response created at `createdAt`; the caller seeds `rng` from the row.
 * Inserted questions are drawn after the original ones, so inserting a question leaves every other
 * answer as it was; a response created before a question was inserted has no answer to it.
 */
export function drawResponse(layout: readonly Question[], rng: Prng, createdAt: number): Response {
  const email = rng.chance(0.1)
    ? ''
    : `${rng.pick(FIRST_NAMES)}.${rng.pick(LAST_NAMES)}${rng.int(100)}${rng.chance(0.2) ? '+survey' : ''}@example.com`;
  const phone = rng.chance(0.3) ? '' : `+47 ${rng.range(400, 999)} ${rng.range(10, 99)} ${rng.range(100, 999)}`;
  const answers: (number | string)[] = new Array(layout.length);
  for (let i = 0; i < layout.length; i++) {
    if (layout[i].askedFrom === undefined) answers[i] = drawAnswer(layout, i, answers, rng);
  }
  for (let i = 0; i < layout.length; i++) {
    const askedFrom = layout[i].askedFrom;
    if (askedFrom === undefined) continue;
    const answer = drawAnswer(layout, i, answers, rng);
    answers[i] = createdAt >= askedFrom ? answer : typeof answer === 'number' ? 0 : '';
  }
  return {email, phone, answers};
}

/** Appends the question cells of `r` rendered with `s` to `out`. */
export function renderAnswers(layout: readonly Question[], r: Response, s: ResolvedSettings, out: string[]): void {
  const asText = s.valueType === 'TEXT';
  for (let i = 0; i < layout.length; i++) {
    const q = layout[i];
    const a = r.answers[i];
    switch (q.kind) {
      case 'rating': {
        const v = a as number;
        out.push(v === 0 ? '' : asText ? q.options[v - 1] : String(v));
        break;
      }
      case 'multi': {
        const mask = a as number;
        if (s.expandMultipleChoice) {
          for (let k = 0; k < q.options.length; k++) out.push(mask & (1 << k) ? '1' : '');
        } else {
          const picked: string[] = [];
          for (let k = 0; k < q.options.length; k++) {
            if (mask & (1 << k)) picked.push(asText ? q.options[k] : String(k + 1));
          }
          out.push(picked.join(';'));
        }
        break;
      }
      case 'single': {
        const v = a as number;
        if (v === 0) out.push('');
        else if (q.hasOther && v === q.options.length && s.showOtherAsText) out.push(r.answers[i + 1] as string);
        else out.push(asText ? q.options[v - 1] : String(v));
        break;
      }
      case 'other':
        if (!s.showOtherAsText) out.push(a as string);
        break;
      default:
        out.push(a as string);
    }
  }
}
