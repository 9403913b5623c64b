import {classifyStatus} from '../api/export-status';
import {parseRateLimit, resetMeaning, resetToEpochMs} from '../api/rate-limit';
import {formatDuration, TimeWindow} from '../core/time';
import {AssumptionId} from './assumptions';
import {FileSample, SeparatorFit} from './file-sample';
import {AnswerLog, ApiAnswer} from './observer';
import {timeShape} from '../core/time-text';
import {mediaType, memberShapes, tally, word} from './shapes';

export type VerdictState = 'confirmed' | 'contradicted' | 'unknown';

export interface Verdict {
  id: AssumptionId;
  state: VerdictState;
  /** What the probe saw: shapes and counts, never a value of a response, a secret or a token. */
  seen: string;
}

export type ExportPurpose = 'sample' | 'wider sample' | 'boundary' | 'empty window';

/** One export the probe made, and how far it got. */
export interface ExportRun {
  purpose: ExportPurpose;
  window: TimeWindow;
  exportId?: string;
  /** How far it got: read (its file, or part of it), or where it stopped. */
  outcome: 'read' | 'not created' | 'failed' | 'vanished' | 'not ready in time' | 'gone' | 'not read';
  problem?: string;
  generationMs?: number;
  polls: number;
  file?: FileSample;
}

/** The two responses of the boundary export: whether the one at `since` and the one at `until` were in it. */
export type BoundaryFacts = {tested: true; sinceRow: boolean; untilRow: boolean} | {tested: false; why: string};

export interface ProbeFacts {
  apiUrl: string;
  /** The configured field_separator's name and character. */
  separator: {name: string; char: string};
  log: AnswerLog;
  exports: ExportRun[];
  boundary: BoundaryFacts;
}

const DOCUMENTED_WORDS = new Set(['PENDING', 'INPROGRESS', 'COMPLETED', 'ERROR']);
const DECODED_CODINGS = new Set(['', 'identity', 'gzip', 'x-gzip', 'deflate', 'br']);
const OUR_RATE_LIMIT_HEADERS = new Set([
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'retry-after',
]);
const SEPARATOR_NAMES: Record<string, string> = {'|': 'PIPE', ',': 'COMMA', ';': 'SEMICOLON', '\t': 'TAB'};

const confirmed = (id: AssumptionId, seen: string): Verdict => ({id, state: 'confirmed', seen});
const contradicted = (id: AssumptionId, seen: string): Verdict => ({id, state: 'contradicted', seen});
const unknown = (id: AssumptionId, seen: string): Verdict => ({id, state: 'unknown', seen});

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;
const unique = <T>(items: readonly T[]): T[] => [...new Set(items)];
const counts = (items: readonly string[]): Map<string, number> => {
  const map = new Map<string, number>();
  for (const item of items) map.set(item, (map.get(item) ?? 0) + 1);
  return map;
};
const separatorName = (char: string): string =>
  `\`${char === '\t' ? '\\t' : char}\`${SEPARATOR_NAMES[char] ? ` (${SEPARATOR_NAMES[char]})` : ''}`;

function isRecord(value: unknown): value is Record<string, unknown> {
  return !!value && typeof value === 'object' && !Array.isArray(value);
}

/** Every verdict, in the order of the assumptions. */
export function judge(facts: ProbeFacts): Verdict[] {
  const files = facts.exports.flatMap((run) => (run.file ? [{run, file: run.file}] : []));
  return [
    ...tokenVerdicts(facts.log),
    ...createVerdicts(facts.log),
    ...statusVerdicts(facts.log),
    ...completedVerdicts(facts),
    ...downloadVerdicts(
      facts.log,
      files.map((f) => f.file)
    ),
    ...csvVerdicts(facts, files),
    ...createdVerdicts(files.map((f) => f.file)),
    ...filterVerdicts(facts, files),
    ...rateLimitVerdicts(facts.log.answers),
    ...errorVerdicts(facts.log.of('unknown-export')),
  ];
}

function tokenVerdicts(log: AnswerLog): Verdict[] {
  const token = log.tokens.find((t) => t.status === 200);
  if (!token) {
    const why = 'the token service gave no token';
    return [unknown('token.type', why), unknown('token.expires-in', why)];
  }
  const type = typeof token.tokenType === 'string' && /^bearer$/i.test(token.tokenType);
  const typeVerdict = (type ? confirmed : contradicted)('token.type', `\`token_type\` ${word(token.tokenType)}`);
  const expires = token.expiresIn;
  const lifetime = token.claimLifetimeS;
  let expiresVerdict: Verdict;
  if (typeof expires !== 'number' || !(expires > 0)) {
    expiresVerdict = contradicted(
      'token.expires-in',
      `\`expires_in\` is ${word(expires)}: the connector then assumes 3600 s`
    );
  } else if (lifetime === undefined) {
    expiresVerdict = unknown(
      'token.expires-in',
      `\`expires_in\` ${expires}; the token carries no exp and iat claims to compare it with`
    );
  } else {
    const near = (a: number, b: number): boolean => Math.abs(a - b) <= Math.max(5, b * 0.02);
    const seen = `\`expires_in\` ${expires}; the token's own claims give it ${lifetime} s (exp − iat)`;
    if (near(expires, lifetime)) expiresVerdict = confirmed('token.expires-in', seen);
    else if (near(expires / 1000, lifetime))
      expiresVerdict = contradicted('token.expires-in', `${seen}: \`expires_in\` counts milliseconds`);
    else expiresVerdict = contradicted('token.expires-in', seen);
  }
  return [typeVerdict, expiresVerdict];
}

function createVerdicts(log: AnswerLog): Verdict[] {
  const answers = log.of('create');
  const created = answers.filter((a) => a.status < 400 && a.status !== 409);
  if (!created.length) {
    const last = answers[answers.length - 1];
    const why = last ? `no export was created (the last answer: HTTP ${last.status})` : 'no export was created';
    return [unknown('create.status', why), unknown('create.body', why)];
  }
  const statuses = tally(counts(created.map((a) => `HTTP ${a.status}`)));
  const statusOk = created.every((a) => a.status >= 200 && a.status <= 202);
  const bodies = unique(created.map((a) => (a.bodyKind === 'json' ? memberShapes(a.json) : `a ${a.bodyKind} body`)));
  const bodyOk = created.every(
    (a) => isRecord(a.json) && typeof a.json.exportId === 'string' && a.json.exportId !== ''
  );
  return [
    (statusOk ? confirmed : contradicted)('create.status', `${statuses} (${plural(created.length, 'export')})`),
    (bodyOk ? confirmed : contradicted)('create.body', `members: ${bodies.join('; ')}`),
  ];
}

/** Status answers that are records (not redirects), with their status word. */
function statusRecords(log: AnswerLog): {answer: ApiAnswer; word: unknown; record: Record<string, unknown>}[] {
  return log
    .of('status')
    .filter((a) => a.status === 200 && isRecord(a.json))
    .map((a) => ({
      answer: a,
      word: (a.json as Record<string, unknown>).status,
      record: a.json as Record<string, unknown>,
    }));
}

function statusVerdicts(log: AnswerLog): Verdict[] {
  const records = statusRecords(log);
  if (!records.length) {
    const why = 'no status record was seen (every poll found the export completed, or none was made)';
    return [unknown('status.words', why), unknown('status.last-changed-at', why)];
  }
  const words = records.map((r) => word(r.word));
  const wordsOk = records.every((r) => typeof r.word === 'string' && DOCUMENTED_WORDS.has(r.word));
  const times = records.map((r) =>
    typeof r.record.lastChangedAt === 'string' ? timeShape(r.record.lastChangedAt) : '(none)'
  );
  const timesOk = times.every((t) => t === 'yyyy-MM-ddTHH:mm:ss.fffZ');
  return [
    (wordsOk ? confirmed : contradicted)(
      'status.words',
      `${tally(counts(words))} in ${plural(records.length, 'record')}`
    ),
    (timesOk ? confirmed : contradicted)('status.last-changed-at', tally(counts(times))),
  ];
}

function completedVerdicts(facts: ProbeFacts): Verdict[] {
  const log = facts.log;
  const redirects = log.of('status').filter((a) => a.status >= 300 && a.status < 400);
  const doneRecords = statusRecords(log).filter((r) => classifyStatus(r.word).kind === 'done');
  if (!redirects.length && !doneRecords.length) {
    const why = 'no export completed while the probe waited';
    return [unknown('completed.redirect', why), unknown('completed.location', why)];
  }
  const kinds = [
    ...redirects.map((a) => `HTTP ${a.status}${a.location ? ' with a Location' : ' without a Location'}`),
    ...doneRecords.map((r) => `HTTP ${r.answer.status}, a record with status ${word(r.word)}`),
  ];
  const redirectOk = !doneRecords.length && redirects.every((a) => a.status === 302 && a.location);
  const located = [...redirects, ...doneRecords.map((r) => r.answer)].filter((a) => a.location);
  let location: Verdict;
  if (!located.length) {
    location = unknown('completed.location', 'no Location was sent: the connector used the documented download path');
  } else {
    const described = located.map((a) => describeLocation(a, facts.apiUrl));
    const ok = described.every((d) => d.documented);
    location = (ok ? confirmed : contradicted)('completed.location', tally(counts(described.map((d) => d.text))));
  }
  return [(redirectOk ? confirmed : contradicted)('completed.redirect', tally(counts(kinds))), location];
}

/** A Location as a reference kind, its host against api_url's, and its path against the documented one. */
function describeLocation(answer: ApiAnswer, apiUrl: string): {documented: boolean; text: string} {
  const raw = answer.location ?? '';
  const statusUrl = new URL(answer.url, apiUrl);
  const target = new URL(raw, statusUrl);
  const kind = /^[a-z][a-z0-9+.-]*:/i.test(raw)
    ? 'an absolute URL'
    : raw.startsWith('/')
      ? 'an absolute path'
      : 'a relative reference';
  const sameOrigin = target.origin === new URL(apiUrl).origin;
  const documentedPath = statusUrl.pathname.replace(/\/status$/, '/download');
  const samePath = target.pathname === documentedPath;
  const where = sameOrigin ? "on api_url's host" : `on another host, ${target.protocol}//${target.host}`;
  // Segments that are not short words (ids, a signature in a CDN's path) are left out.
  const shape = target.pathname
    .split('/')
    .map((segment) => (segment === '' || /^[a-z][a-z0-9_.-]{0,19}$/i.test(segment) ? segment : '{…}'))
    .join('/');
  const path = samePath ? 'the documented download path' : `another path (${shape})`;
  const query = target.search ? ', with a query (not shown)' : '';
  return {documented: sameOrigin && samePath, text: `${kind} ${where}, to ${path}${query}`};
}

function downloadVerdicts(log: AnswerLog, files: FileSample[]): Verdict[] {
  const answers = log.of('download').filter((a) => a.status === 200);
  if (!answers.length) {
    const why = 'no file was downloaded';
    return [
      unknown('download.content-type', why),
      unknown('download.content-encoding', why),
      unknown('download.length', why),
    ];
  }
  const types = answers.map((a) => a.contentType);
  const typeOk = types.every((t) => /csv/i.test(t ?? ''));
  const codings = answers.map((a) => (a.contentEncoding ?? '').trim().toLowerCase());
  const codingOk = codings.every((c) => DECODED_CODINGS.has(c));
  return [
    (typeOk ? confirmed : contradicted)('download.content-type', tally(counts(types.map((t) => mediaType(t))))),
    (codingOk ? confirmed : contradicted)('download.content-encoding', tally(counts(codings.map((c) => c || 'none')))),
    lengthVerdict(files),
  ];
}

function lengthVerdict(files: FileSample[]): Verdict {
  const seen: string[] = [];
  let ok = 0;
  let bad = 0;
  for (const f of files) {
    if (f.framing === 'close') {
      bad++;
      seen.push('no Content-Length and no chunked framing: the body ends where the connection does');
    } else if (f.readProblem && /declared|bytes|ended/i.test(f.readProblem) && !f.stoppedEarly) {
      bad++;
      seen.push(
        `Content-Length ${f.contentLength ?? 'none'}, ${f.receivedBytes} bytes received: ${f.readProblem.replace(/\d{5,}/g, 'N')}`
      );
    } else if (f.complete) {
      ok++;
      seen.push(f.framing === 'length' ? 'Content-Length, matched by the bytes received' : 'chunked framing');
    }
  }
  if (bad) return contradicted('download.length', tally(counts(seen)));
  if (ok) return confirmed('download.length', tally(counts(seen)));
  return unknown('download.length', 'no file was read to its end (the probe reads at most its row limit)');
}

function csvVerdicts(facts: ProbeFacts, files: {run: ExportRun; file: FileSample}[]): Verdict[] {
  const read = files.map((f) => f.file).filter((f) => f.encoding !== undefined);
  if (!read.length) {
    const why = 'no file was read';
    return (
      [
        'csv.encoding',
        'csv.separator',
        'csv.quoting',
        'csv.rows',
        'csv.response-id',
        'csv.created',
        'csv.empty-export',
      ] as const
    ).map((id) => unknown(id, why));
  }
  const encodings = read.map(
    (f) =>
      `${f.encoding?.toUpperCase()} (${f.encodingBasis === 'bom' ? 'byte-order mark' : f.encodingBasis === 'sniffed' ? 'told by its bytes' : 'no byte-order mark'})`
  );
  const encodingOk = read.every((f) => f.encoding === 'utf-8');
  const headers = read.flatMap((f) => (f.header ? [f.header] : []));
  const separator = separatorVerdict(read, facts.separator.char);
  const quoteErrors = read.filter((f) => f.csvError && f.csvError.problem !== 'width');
  const widthErrors = read.filter((f) => f.csvError?.problem === 'width');
  const rowCount = read.reduce((n, f) => n + f.rows, 0);
  const quoted = read.reduce((n, f) => n + (f.quotedCells ?? 0), 0);
  const quoting = quoteErrors.length
    ? contradicted('csv.quoting', quoteErrors.map((f) => `${describeCsvProblem(f)}`).join('; '))
    : confirmed('csv.quoting', `${plural(quoted, 'quoted cell')} in ${plural(rowCount, 'row')}, as RFC 4180 says`);
  const ends = read.reduce(
    (sum, f) => ({
      crlf: sum.crlf + (f.lineEnds?.crlf ?? 0),
      lf: sum.lf + (f.lineEnds?.lf ?? 0),
      cr: sum.cr + (f.lineEnds?.cr ?? 0),
    }),
    {crlf: 0, lf: 0, cr: 0}
  );
  const endText =
    Object.entries(ends)
      .filter(([, n]) => n > 0)
      .map(([kind, n]) => `${kind.toUpperCase()} ×${n}`)
      .join(', ') || 'none';
  const unterminated = read.filter((f) => f.terminated === false).length;
  const rowsSeen = `${plural(rowCount, 'row')}; line ends ${endText}${unterminated ? `; ${plural(unterminated, 'file')} without a final line end` : ''}`;
  const rows = widthErrors.length
    ? contradicted('csv.rows', `${widthErrors.map(describeCsvProblem).join('; ')}; ${rowsSeen}`)
    : confirmed('csv.rows', rowsSeen);
  const column = (
    id: 'csv.response-id' | 'csv.created',
    has: (h: (typeof headers)[number]) => boolean,
    title: string
  ): Verdict => {
    if (!headers.length) return unknown(id, 'no file had a header');
    if (separator.state !== 'confirmed')
      return unknown(id, 'the header does not split with `field_separator` (see `csv.separator`)');
    return headers.every(has)
      ? confirmed(id, `a \`${title}\` column among ${unique(headers.map((h) => h.columns)).join(' or ')}`)
      : contradicted(
          id,
          `no column the connector takes for \`${title}\` among ${unique(headers.map((h) => h.columns)).join(' or ')}`
        );
  };
  return [
    (encodingOk ? confirmed : contradicted)('csv.encoding', tally(counts(encodings))),
    separator,
    quoting,
    rows,
    column('csv.response-id', (h) => h.responseId, 'Response ID'),
    column('csv.created', (h) => h.created, 'Created'),
    emptyExportVerdict(files),
  ];
}

/**
 * Whether the configured separator reads the file's start as a header of several columns with rows of
 * the same width; if not, the separator that does, with the most columns.
 */
function separatorVerdict(files: FileSample[], configured: string): Verdict {
  const fits = files.map((f) => f.separators).filter((s) => s.length);
  if (!fits.length) return unknown('csv.separator', 'no file had a header');
  const ours = fits.map((s) => s[0]);
  const reads = (fit: SeparatorFit): string =>
    `${plural(fit.columns, 'column')}${fit.consistent ? `, ${plural(Math.max(0, fit.rows - 1), 'row')} after it alike` : ', the rows after it unlike it'}`;
  if (ours.every((fit) => fit.consistent && fit.columns >= 2)) {
    const rows = ours.reduce((n, fit) => n + fit.rows - 1, 0);
    const columns = unique(ours.map((fit) => fit.columns)).join(' or ');
    return confirmed(
      'csv.separator',
      `with ${separatorName(configured)} the header reads as ${columns} columns, and ${plural(rows, 'row')} after it alike`
    );
  }
  const best = fits[0]
    .slice(1)
    .filter((fit) => fit.consistent && fit.columns >= 2)
    .sort((x, y) => y.columns - x.columns)[0];
  const seen = `with ${separatorName(configured)} the header reads as ${reads(fits[0][0])}`;
  return best
    ? contradicted(
        'csv.separator',
        `${seen}; with ${separatorName(best.separator)} as ${reads(best)}: the file seems separated by ${separatorName(best.separator)}`
      )
    : unknown('csv.separator', `${seen}, and no other separator reads it better`);
}

function describeCsvProblem(file: FileSample): string {
  const error = file.csvError;
  if (!error) return '';
  const what: Record<string, string> = {
    'stray-quote': 'a quote inside an unquoted cell',
    'after-quote': 'a character right after a closing quote',
    'open-quote': 'a quote that is never closed',
    width: 'a row with another number of cells than the header',
  };
  return `${what[error.problem] ?? error.problem} on line ${error.line}`;
}

function emptyExportVerdict(files: {run: ExportRun; file: FileSample}[]): Verdict {
  const empty = files.filter((f) => f.file.rows === 0 && f.file.complete);
  if (!empty.length) return unknown('csv.empty-export', 'no export without responses was read');
  const withHeader = empty.filter((f) => f.file.header);
  if (withHeader.length === empty.length) {
    return confirmed(
      'csv.empty-export',
      `a header row of ${unique(withHeader.map((f) => f.file.header?.columns)).join(' or ')} columns and no row`
    );
  }
  const bytes = unique(empty.filter((f) => !f.file.header).map((f) => f.file.receivedBytes));
  return contradicted('csv.empty-export', `no header row: a file of ${bytes.join(' or ')} bytes`);
}

function createdVerdicts(files: FileSample[]): Verdict[] {
  const shapes = new Map<string, number>();
  for (const f of files) for (const [shape, n] of f.createdShapes) shapes.set(shape, (shapes.get(shape) ?? 0) + n);
  const times = files.flatMap((f) => f.createdTimes);
  if (!shapes.size) {
    const why = 'no response with a Created value was read';
    return [unknown('created.zone', why), unknown('created.precision', why)];
  }
  const unread = [...shapes.values()].reduce((a, b) => a + b, 0) - times.length;
  const zoneOk = unread === 0 && times.every((t) => t.zone === 'utc');
  const digits = counts(times.map((t) => `${t.digits} fractional digits`));
  const precisionOk = times.length > 0 && times.every((t) => t.digits === 3);
  const zones = counts(times.map((t) => ({utc: 'UTC', offset: 'an offset from UTC', none: 'no zone'})[t.zone]));
  if (unread) zones.set('not a time', unread);
  return [
    (zoneOk ? confirmed : contradicted)('created.zone', `${tally(zones)}; written ${tally(shapes)}`),
    times.length
      ? (precisionOk ? confirmed : contradicted)('created.precision', tally(digits))
      : unknown('created.precision', `no Created value reads as a time: ${tally(shapes)}`),
  ];
}

function filterVerdicts(facts: ProbeFacts, files: {run: ExportRun; file: FileSample}[]): Verdict[] {
  // The boundary export is judged by its own verdicts: its edge rows lie exactly at since and until.
  const samples = files.filter((f) => f.run.purpose !== 'boundary').map((f) => f.file);
  const fit = samples.reduce(
    (s, f) => ({
      inside: s.inside + f.fit.inside,
      before: s.before + f.fit.before,
      after: s.after + f.fit.after,
      maxBeforeMs: Math.max(s.maxBeforeMs, f.fit.maxBeforeMs),
      maxAfterMs: Math.max(s.maxAfterMs, f.fit.maxAfterMs),
    }),
    {inside: 0, before: 0, after: 0, maxBeforeMs: 0, maxAfterMs: 0}
  );
  const total = fit.inside + fit.before + fit.after;
  let window: Verdict;
  if (!total) window = unknown('filter.window', 'no Created value was read as a time');
  else if (fit.before + fit.after === 0) {
    window = confirmed(
      'filter.window',
      `all ${plural(total, 'row')} of ${plural(samples.length, 'export')} inside their windows`
    );
  } else {
    const parts = [
      fit.before ? `${fit.before} before its window (by up to ${formatDuration(fit.maxBeforeMs)})` : '',
      fit.after ? `${fit.after} after it (by up to ${formatDuration(fit.maxAfterMs)})` : '',
    ].filter(Boolean);
    window = contradicted(
      'filter.window',
      `${fit.before + fit.after} of ${plural(total, 'row')} outside: ${parts.join(', ')}`
    );
  }
  const b = facts.boundary;
  if (!b.tested) return [window, unknown('filter.since-exclusive', b.why), unknown('filter.until-inclusive', b.why)];
  return [
    window,
    b.sinceRow
      ? contradicted('filter.since-exclusive', 'the response created exactly at `since` was in the export')
      : confirmed('filter.since-exclusive', 'the response created exactly at `since` was not in the export'),
    b.untilRow
      ? confirmed('filter.until-inclusive', 'the response created exactly at `until` was in the export')
      : contradicted('filter.until-inclusive', 'the response created exactly at `until` was not in the export'),
  ];
}

function rateLimitVerdicts(answers: ApiAnswer[]): Verdict[] {
  const named = answers.filter((a) => Object.keys(a.rateLimit).length);
  if (!named.length) {
    const why = `none of ${plural(answers.length, 'answer')} carried rate-limit headers (they may come with a 429 only, which the probe does not provoke)`;
    return [unknown('ratelimit.headers', why), unknown('ratelimit.reset', why)];
  }
  const names = unique(named.flatMap((a) => Object.keys(a.rateLimit)));
  const foreign = names.filter((n) => !OUR_RATE_LIMIT_HEADERS.has(n.toLowerCase()));
  const headers = foreign.length
    ? contradicted(
        'ratelimit.headers',
        `${foreign.join(', ')}: names the connector does not read (on ${named.length} of ${plural(answers.length, 'answer')})`
      )
    : confirmed('ratelimit.headers', `${names.join(', ')} on ${named.length} of ${plural(answers.length, 'answer')}`);
  const resets = named.flatMap((a) => {
    const raw = Object.entries(a.rateLimit).find(([n]) => n.toLowerCase() === 'x-ratelimit-reset')?.[1];
    const value = Number(raw);
    return raw === undefined || raw.trim() === '' || !Number.isFinite(value) ? [] : [{value, answer: a}];
  });
  if (!resets.length) return [headers, unknown('ratelimit.reset', 'no X-RateLimit-Reset was seen')];
  const meanings = {
    'epoch-ms': 'an epoch in milliseconds',
    'epoch-seconds': 'an epoch in seconds',
    seconds: 'seconds to wait',
  };
  let absurd = 0;
  let minAhead = Infinity;
  let maxAhead = -Infinity;
  for (const {value, answer} of resets) {
    const reading = parseRateLimit({'x-ratelimit-reset': String(value)}, answer.at);
    if (reading.absurdReset !== undefined || reading.resetAt === undefined) absurd++;
    const ahead = resetToEpochMs(value, answer.at) - answer.at;
    minAhead = Math.min(minAhead, ahead);
    maxAhead = Math.max(maxAhead, ahead);
  }
  const kinds = unique(resets.map((r) => meanings[resetMeaning(r.value)])).join(' or ');
  const digits = unique(resets.map((r) => String(Math.trunc(Math.abs(r.value))).length)).join(' or ');
  const span = (ms: number): string => (ms < 0 ? `${formatDuration(-ms)} past` : `${formatDuration(ms)} ahead`);
  const seen = `${plural(resets.length, 'value')} of ${digits} digits, read as ${kinds}: ${span(minAhead)}${maxAhead !== minAhead ? ` to ${span(maxAhead)}` : ''}`;
  return [headers, (absurd ? contradicted : confirmed)('ratelimit.reset', seen)];
}

function errorVerdicts(answers: ApiAnswer[]): Verdict[] {
  const answer = answers[answers.length - 1];
  if (!answer) {
    const why = 'the status of an unknown export was not asked';
    return [unknown('error.unknown-export', why), unknown('error.problem-details', why)];
  }
  const statusOk = answer.status === 404 || answer.status === 410;
  const body = answer.json;
  const problemOk =
    isRecord(body) &&
    typeof body.status === 'number' &&
    (typeof body.title === 'string' || typeof body.detail === 'string') &&
    typeof body.traceId === 'string' &&
    typeof body.requestId === 'string';
  const shape = answer.bodyKind === 'json' ? memberShapes(body) : `a ${answer.bodyKind} body`;
  return [
    (statusOk ? confirmed : contradicted)('error.unknown-export', `HTTP ${answer.status}`),
    (problemOk ? confirmed : contradicted)(
      'error.problem-details',
      `${answer.contentType === undefined ? 'no Content-Type' : mediaType(answer.contentType.split(';')[0])}: ${shape}`
    ),
  ];
}
