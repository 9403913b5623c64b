import {parseRateLimit, resetMeaning, resetToEpochMs} from '../api/rate-limit';
import {plural} from '../core/quantities';
import {formatDuration} from '../core/time';
import {AnswerLog, ApiAnswer} from './observer';
import {mediaType, memberShapes, word} from './shapes';
import {confirmed, contradicted, isRecord, unique, unknown, Verdict} from './verdict';

// The verdicts on the service around the exports: the token, the rate-limit headers, and the shape of an error.

const OUR_RATE_LIMIT_HEADERS = new Set([
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'retry-after',
]);

export function tokenVerdicts(log: AnswerLog): Verdict[] {
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

export function rateLimitVerdicts(answers: ApiAnswer[]): Verdict[] {
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

export function errorVerdicts(answers: ApiAnswer[]): Verdict[] {
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
