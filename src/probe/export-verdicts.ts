import {classifyStatus} from '../api/export-status';
import {plural} from '../core/quantities';
import {AnswerLog, ApiAnswer} from './observer';
import {timeShape} from '../core/time-text';
import {memberShapes, tally, word} from './shapes';
import {confirmed, contradicted, counts, isRecord, ProbeFacts, unique, unknown, Verdict} from './verdict';

// The verdicts on the export job: the create answer, the status records, the completed answer and its Location.

const DOCUMENTED_WORDS = new Set(['PENDING', 'INPROGRESS', 'COMPLETED', 'ERROR']);

export function createVerdicts(log: AnswerLog): Verdict[] {
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

export function statusVerdicts(log: AnswerLog): Verdict[] {
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

export function completedVerdicts(facts: ProbeFacts): Verdict[] {
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
