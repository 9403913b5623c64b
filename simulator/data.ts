// The responses of one quest: their creation timeline and their cells. Row i is a pure function
// of (seed, quest id, i), so a million-row export needs no per-row memory beyond the creation
// times of rows added at run time.

import {Dialect} from './dialect';
import {deriveSeed, mix32, Prng} from './prng';
import {buildLayout, drawResponse, Question, questionHeader, renderAnswers} from './questions';
import {ResolvedSettings} from './settings';
import {PRESETS} from './title-presets';
import {InsertedQuestion, ResolvedQuest} from './types';

export const RESPONSE_ID = 'Response ID';
export const CREATED = 'Created';
export const EMAIL = 'E-mail';
export const PHONE = 'Phone';
const DUPLICATE_NAME = 'Comment';
/** The stray-quote corruption's cell: a bare quote inside an unquoted cell. */
export const STRAY_QUOTE_CELL = '24" screen';

/**
 * The row that ragged-row and stray-quote corrupt in an export of rows [lo, hi): the quest's
 * corruptRow if it has one (none in an export that does not hold it), else the export's middle row.
 */
export function middleRow(lo: number, hi: number, corruptRow?: number): number {
  if (corruptRow === undefined) return lo + Math.floor((hi - lo) / 2);
  return corruptRow >= lo && corruptRow < hi ? corruptRow : -1;
}

/**
 * Parses explicit creation times (ISO 8601 with a zone, or integer epoch ms) into sorted epoch ms.
 * A string without a zone would be read in the machine's time zone, so it is refused.
 */
export function parseCreatedAt(questId: string, times: readonly (string | number)[]): number[] {
  const out = times.map((t) => {
    const ms = typeof t === 'number' ? t : /(Z|[+-]\d\d:?\d\d)$/i.test(t) ? Date.parse(t) : NaN;
    if (!Number.isInteger(ms)) {
      throw new Error(
        `quest ${questId}: createdAt ${JSON.stringify(t)} is neither an ISO 8601 time with a zone nor integer epoch ms`
      );
    }
    return ms;
  });
  out.sort((a, b) => a - b);
  for (let i = 1; i < out.length; i++) {
    if (out[i] === out[i - 1]) {
      throw new Error(
        `quest ${questId}: createdAt holds ${new Date(out[i]).toISOString()} twice (times must be distinct)`
      );
    }
  }
  return out;
}

/** Index of the first element in [0, n) whose value is > x, for a non-decreasing `value`. */
function firstGreater(n: number, value: (i: number) => number, x: number): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (value(mid) > x) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** A quest given as a table (QuestConfig.table): its rows in creation order, and their creation times. */
interface Table {
  header: readonly string[];
  rows: readonly (readonly string[])[];
  times: readonly number[];
}

/** The table's rows sorted by their Created cell (ties keep their order); throws on a table that cannot be served. */
export function resolveTable(questId: string, header: readonly string[], rows: readonly (readonly string[])[]): Table {
  const at = header.indexOf(CREATED);
  if (at < 0) throw new Error(`quest ${questId}: a table needs a column named ${CREATED}`);
  const timed = rows.map((row, i) => {
    const ms = /(Z|[+-]\d\d:?\d\d)$/i.test(row[at] ?? '') ? Date.parse(row[at]) : NaN;
    if (Number.isNaN(ms))
      throw new Error(`quest ${questId}: table row ${i} has no ISO 8601 time with a zone in ${CREATED}`);
    return {ms, row: [...row]};
  });
  timed.sort((a, b) => a.ms - b.ms);
  return {header: [...header], rows: timed.map((t) => t.row), times: timed.map((t) => t.ms)};
}

export class QuestData {
  private questions: Question[];
  private readonly table?: Table;
  private readonly rowSeed: number;
  private readonly pairSeed: number;
  private readonly idBase: number;
  private readonly firstMs: number;
  private readonly spanMs: number;
  private readonly initialRows: number;
  /** Explicit creation times of the initial rows (QuestConfig.createdAt), sorted. */
  private readonly explicit?: readonly number[];
  /** Creation times of rows added after start, strictly increasing. */
  private readonly added: number[] = [];
  private readonly rng = new Prng(0);
  /** Header texts renamed while the simulator runs (renameColumn): old text -> new text. */
  private readonly renamed = new Map<string, string>();

  constructor(
    readonly config: ResolvedQuest,
    seed: number,
    startMs: number,
    private readonly dialect: Dialect
  ) {
    this.questions = buildLayout(config.columns, PRESETS[config.titles], config.questionTitles);
    this.rowSeed = deriveSeed(seed, `rows:${config.id}`);
    this.pairSeed = deriveSeed(seed, `pairs:${config.id}`);
    this.idBase = 100_000_000 + (deriveSeed(seed, `ids:${config.id}`) % 800_000_000);
    this.initialRows = config.rows;
    const end = startMs - 60_000;
    if (config.table) {
      this.table = resolveTable(config.id, config.table.header, config.table.rows);
      const last = this.table.times[this.table.times.length - 1];
      if (last > end)
        throw new Error(`quest ${config.id}: table rows must lie at least 60 s before the simulator start`);
      this.firstMs = this.table.times[0] ?? end;
      this.spanMs = 0;
      return;
    }
    if (config.createdAt) {
      this.explicit = config.createdAt;
      const last = this.explicit[this.explicit.length - 1];
      if (last > end)
        throw new Error(`quest ${config.id}: createdAt must lie at least 60 s before the simulator start`);
      this.firstMs = this.explicit[0] ?? end;
      this.spanMs = 0;
      return;
    }
    let first = Date.parse(config.firstCreatedAt);
    if (Number.isNaN(first)) throw new Error(`quest ${config.id}: firstCreatedAt is not a date`);
    if (first > end)
      throw new Error(`quest ${config.id}: firstCreatedAt must lie at least 60 s before the simulator start`);
    const steps = Math.max(1, config.rows - 1);
    // Too many rows for the span: fall back to one row per millisecond ending at `end`, which
    // keeps the times strictly increasing and in the past.
    if (end - first < steps) first = end - steps;
    this.firstMs = first;
    this.spanMs = end - first;
  }

  get layout(): readonly Question[] {
    return this.questions;
  }

  /**
   * Inserts a question before question `at` (0-based; the question count appends it), asked from
   * `now` on: a survey edited while it runs. Every other answer stays as it was.
   */
  insertQuestion(at: number, question: InsertedQuestion, now: number): void {
    if (this.table) throw new Error(`quest ${this.config.id} is a table: its questions cannot change`);
    const q = this.questions;
    if (!Number.isInteger(at) || at < 0 || at > q.length) throw new Error(`at must be an integer in [0, ${q.length}]`);
    if (q[at - 1]?.hasOther) throw new Error(`question ${at} is the "other" text of the single choice before it`);
    if (q.some((x) => x.title === question.title))
      throw new Error(`the quest already asks ${JSON.stringify(question.title)}`);
    const preset = PRESETS[this.config.titles];
    const options = question.kind === 'rating' ? preset.ratingLabels : (question.options ?? []);
    if ((question.kind === 'multi' || question.kind === 'single') && options.length === 0) {
      throw new Error(`a ${question.kind} question needs options`);
    }
    q.splice(at, 0, {kind: question.kind, title: question.title, options, hasOther: false, askedFrom: now});
  }

  /** All rows, including added rows whose creation time has not come yet. */
  get count(): number {
    return this.initialRows + this.added.length;
  }

  createdAt(i: number): number {
    if (this.table) return this.table.times[i];
    if (i < this.initialRows) {
      if (this.explicit) return this.explicit[i];
      if (this.initialRows === 1) return this.firstMs;
      return this.firstMs + Math.floor((i * this.spanMs) / (this.initialRows - 1));
    }
    return this.added[i - this.initialRows];
  }

  /**
   * Adds responses created from `now` on, one millisecond apart at least; a batch larger than one
   * therefore "arrives" over the next milliseconds (rows exist only once their time has come).
   */
  addResponses(count: number, now: number): void {
    if (this.table) throw new Error(`quest ${this.config.id} is a table: give its rows when starting the simulator`);
    let t = Math.max(now, this.count > 0 ? this.createdAt(this.count - 1) + 1 : now);
    for (let k = 0; k < count; k++) this.added.push(t++);
  }

  /** Index range [lo, hi) of rows with since < createdAt <= until (bounds in epoch ms). */
  range(since: number | undefined, until: number): [number, number] {
    const at = (i: number): number => this.createdAt(i);
    const lo = since === undefined ? 0 : firstGreater(this.count, at, since);
    const hi = firstGreater(this.count, at, until);
    return [lo, Math.max(lo, hi)];
  }

  /** Renames a column: every header from now on has `to` where it had `from`. */
  renameColumn(from: string, to: string): void {
    this.renamed.set(from, to);
  }

  header(s: ResolvedSettings): string[] {
    return this.texts(s).map((text) => this.renamed.get(text) ?? text);
  }

  private texts(s: ResolvedSettings): string[] {
    if (this.table) return [...this.table.header];
    const header = [this.dialect.options.responseIdTitle ?? RESPONSE_ID, this.dialect.options.createdTitle ?? CREATED];
    if (s.includeRespondentInformation) header.push(EMAIL, PHONE);
    const questionStart = header.length;
    header.push(...questionHeader(this.layout, s));
    if (this.config.corruption === 'duplicate-header') {
      // Two columns share a name; prefer two question columns, else Created and the last one.
      const first = header.length - questionStart >= 2 ? questionStart : 1;
      header[first] = DUPLICATE_NAME;
      header[header.length - 1] = DUPLICATE_NAME;
    }
    return header;
  }

  /**
   * Column of the cell the stray-quote corruption replaces: the first free-text question (a cell
   * where a quote is plausible), else the last column.
   */
  strayQuoteColumn(s: ResolvedSettings): number {
    if (this.table) return this.table.header.length - 1;
    const text = this.layout.findIndex((q) => q.kind === 'text');
    const before = s.includeRespondentInformation ? 4 : 2;
    if (text < 0) return before + questionHeader(this.layout, s).length - 1;
    return before + questionHeader(this.layout.slice(0, text), s).length;
  }

  /** Row i as an export of rows [lo, hi) holds it: with the stray-quote cell in its middle row. */
  exportRow(i: number, lo: number, hi: number, s: ResolvedSettings): string[] {
    const cells = this.row(i, s);
    if (this.config.corruption === 'stray-quote' && i === middleRow(lo, hi, this.config.corruptRow)) {
      cells[this.strayQuoteColumn(s)] = STRAY_QUOTE_CELL;
    }
    return cells;
  }

  /** repeatedIds: whether row i is the second of a pair listed under one Response ID. */
  repeatsId(i: number): boolean {
    const rate = this.config.repeatedIds ?? 0;
    return rate > 0 && i % 2 === 1 && mix32(this.pairSeed ^ mix32((i - 1) / 2)) / 2 ** 32 < rate;
  }

  /**
   * The row listed at position i of an export of rows [lo, hi): row i, or with `swapped` the other
   * row of its repeated pair when both lie in the export (repeatedIds).
   */
  listed(i: number, lo: number, hi: number, swapped: boolean): number {
    if (!swapped) return i;
    if (this.repeatsId(i) && i - 1 >= lo) return i - 1;
    if (i + 1 < hi && this.repeatsId(i + 1)) return i + 1;
    return i;
  }

  /** Row i's Response ID: a number, or a UUID drawn from (seed, quest, i); or row i - 1's (repeatedIds). */
  responseId(i: number): string {
    if (this.repeatsId(i)) return this.responseId(i - 1);
    if (this.config.responseIds !== 'uuid') return String(this.idBase + i);
    let hex = '';
    for (let k = 0; k < 4; k++)
      hex += mix32(this.idBase ^ mix32(i * 4 + k))
        .toString(16)
        .padStart(8, '0');
    const variant = '89ab'[parseInt(hex[16], 16) & 3];
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20)}`;
  }

  row(i: number, s: ResolvedSettings): string[] {
    if (this.table) return [...this.table.rows[i]];
    this.rng.reseed(mix32(this.rowSeed ^ mix32(i + 0x9e3779b9)));
    const r = drawResponse(this.layout, this.rng, this.createdAt(i));
    const cells = [this.responseId(i), this.dialect.createdCell(this.createdAt(i))];
    if (s.includeRespondentInformation) cells.push(r.email, r.phone);
    renderAnswers(this.layout, r, s, cells);
    return cells;
  }
}
