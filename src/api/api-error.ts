import {AxiosError, isAxiosError} from 'axios';
import VError from 'verror';

import {connectorError, FailureType} from '../core/errors';
import {bodyExcerpt, describeProblem, parseProblemDetails} from './problem-details';

/**
 * What a request serves. A check diagnoses the settings: no answer from an address is a config_error
 * naming the setting. A sync (read, discover) runs after a check passed on the same addresses: there
 * a refused connection or a failed name lookup is a network problem that may heal, a transient_error.
 */
export type Purpose = 'sync' | 'check';

/** Where a request came from, so that a failure names what a person needs to find it. */
export interface RequestContext {
  operation: string;
  questId?: string;
  /** The setting whose address the request went to, named when it cannot be reached. */
  setting?: 'api_url' | 'auth_url';
  /** The base address of that setting. */
  baseUrl?: string;
}

const CONFIG_STATUSES = new Set([400, 401, 403, 404, 422]);
const ADDRESS_ERRORS: Record<string, string> = {
  ENOTFOUND: 'the host name is unknown',
  EAI_AGAIN: 'the host name could not be looked up',
  ECONNREFUSED: 'the connection was refused',
  EHOSTUNREACH: 'the host cannot be reached',
  ENETUNREACH: 'the network cannot be reached',
};

/**
 * A URL for a log line or a message: its query string is left out, since a presigned download link
 * (a CDN's, say) carries its credentials there.
 */
export function redactUrl(url: string | undefined): string {
  if (!url) return '';
  const at = url.indexOf('?');
  return at === -1 ? url : `${url.slice(0, at)}?…`;
}

/** A certificate or TLS failure: retrying does not heal it soon. */
export function isTlsError(code: string | undefined): boolean {
  return code !== undefined && /CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY|EPROTO/.test(code);
}

function hintFor(status: number, ctx: RequestContext): string {
  switch (status) {
    case 400:
      return 'The service rejected the request; check the export settings named above.';
    case 401:
      return 'The credentials or token were rejected: check client_id, client_secret and project_id.';
    case 403:
      return ctx.questId
        ? 'The API login has no permission for this quest: ask your Questback account owner to grant access, remove the quest from quest_ids, or set skip_inaccessible_quests.'
        : 'The API login has no permission for this operation.';
    case 404:
      return ctx.questId
        ? 'The quest was not found: check its id in quest_ids (if every quest fails like this, check api_url).'
        : 'Check api_url and auth_url.';
    case 410:
      return 'The export file is gone (deleted or older than 30 days).';
    case 429:
      return 'The service kept throttling requests.';
    default:
      return status >= 500 ? 'The service failed; this is usually temporary.' : '';
  }
}

/** The ids Questback support asks for, as "traceId X, requestId Y" (empty when the service gave none). */
export function supportIds(traceId: unknown, requestId: unknown): string {
  return [traceId && `traceId ${traceId}`, requestId && `requestId ${requestId}`].filter(Boolean).join(', ');
}

function failureTypeForStatus(status: number): FailureType {
  if (CONFIG_STATUSES.has(status)) return 'config_error';
  if (status === 410 || status === 429 || status === 408 || status === 409 || status >= 500) return 'transient_error';
  return 'system_error';
}

/** The service answered 403 or 404 for a quest: the API login may not read it, or it does not exist. */
export class QuestInaccessible extends VError.WError {
  constructor(
    readonly questId: string,
    readonly status: number,
    message: string,
    info: Record<string, unknown>
  ) {
    super({name: 'QuestInaccessible', info: {...info, failureType: 'config_error'}}, '%s', message);
  }
}

export function findQuestInaccessible(err: unknown): QuestInaccessible | undefined {
  for (let e: unknown = err; e instanceof Error; e = VError.cause(e)) {
    if (e instanceof QuestInaccessible) return e;
  }
  return undefined;
}

/** An error for a request that got no answer: which setting to look at, and why. */
function noAnswer(err: AxiosError, ctx: RequestContext, where: string): VError {
  const purpose: Purpose = err.config?.purpose ?? 'sync';
  const code = err.code ?? 'network error';
  const target = ctx.setting ? `${ctx.setting} (${ctx.baseUrl ?? 'its address'})` : 'api_url and auth_url';
  if (isTlsError(code)) {
    // OpenSSL's text ("write EPROTO 80…:error:0A00010B:SSL routines:ssl3_get_record:wrong version
    // number:../deps/…:350:") holds one phrase a person can use: the reason.
    const reason = /SSL routines:[^:]*:([^:]+)/.exec(err.message)?.[1]?.trim() ?? err.message.trim();
    const hint = /wrong version number|packet length too long|http request/i.test(reason)
      ? 'The server there does not answer in TLS: check the scheme and the port of the address.'
      : 'Check the address, or a proxy that intercepts TLS.';
    return connectorError(
      'config_error',
      `${where} failed: a TLS problem with ${target}: ${reason} (${code}). ${hint}`,
      {...ctx, code}
    );
  }
  if (code in ADDRESS_ERRORS) {
    return purpose === 'check'
      ? connectorError('config_error', `${where} failed: ${ADDRESS_ERRORS[code]} (${code}). Check ${target}.`, {
          ...ctx,
          code,
        })
      : connectorError(
          'transient_error',
          `${where} failed: ${ADDRESS_ERRORS[code]} (${code}), after every retry. This is usually a network problem that passes; if it persists, check ${target}.`,
          {...ctx, code}
        );
  }
  if (code === 'ECONNABORTED' || code === 'ETIMEDOUT') {
    return connectorError(
      'transient_error',
      `${where} failed: ${target} did not answer in time (${code}, ${err.message}).`,
      {...ctx, code}
    );
  }
  return connectorError('transient_error', `${where} failed: no answer from ${target} (${code}).`, {...ctx, code});
}

/** Turns an HTTP failure into a VError with status, traceId and requestId, and no header or token. */
export function apiError(err: unknown, ctx: RequestContext, body?: unknown): VError {
  const where = ctx.questId ? `${ctx.operation} for quest ${ctx.questId}` : ctx.operation;
  if (!isAxiosError(err)) {
    // Already ours (a token failure raised inside a request): keep its type and message.
    if (err instanceof VError && VError.info(err).failureType) return err;
    const cause = err instanceof Error ? err : undefined;
    return connectorError('system_error', `${where} failed: ${cause?.message ?? String(err)}`, {...ctx}, cause);
  }
  const response = err.response;
  if (!response) return noAnswer(err, ctx, where);
  const status = response.status;
  const data = body ?? response.data;
  const problem = parseProblemDetails(data);
  let explanation = describeProblem(problem) ?? bodyExcerpt(data);
  // The message names the quest once; the service's own text often repeats it in paths and quotes.
  if (explanation && ctx.questId) explanation = explanation.split(ctx.questId).join('…');
  const ids = supportIds(problem?.traceId, problem?.requestId);
  const message = [
    `${where} failed: HTTP ${status}${explanation ? ` - ${explanation}` : ''}.`,
    hintFor(status, ctx),
    ids ? `(${ids})` : '',
  ]
    .filter(Boolean)
    .join(' ');
  const info = {
    operation: ctx.operation,
    questId: ctx.questId,
    status,
    traceId: problem?.traceId,
    requestId: problem?.requestId,
    validationErrors: problem?.errors,
    explanation,
    /** The service's clock (its Date header), for a request it rejected as in the future. */
    serverDate: typeof response.headers?.date === 'string' ? response.headers.date : undefined,
  };
  if (ctx.questId && (status === 403 || status === 404))
    return new QuestInaccessible(ctx.questId, status, message, info);
  return connectorError(failureTypeForStatus(status), message, info);
}

/**
 * A 400 on create (or on a list request with a time filter) whose validation errors say that since or until lies in the future: the service's
 * clock is behind this machine's by more than settle_seconds. Said as such, naming the setting,
 * instead of the general "check the export settings".
 */
export function futureFilter(
  err: VError,
  filter: {since?: string; until?: string},
  questId: string,
  operation = 'Creating an export'
): VError | undefined {
  const info = VError.info(err);
  if (info.status !== 400) return undefined;
  const errors = (info.validationErrors ?? {}) as Record<string, string[]>;
  const texts = Object.entries(errors).map(([field, messages]) => `${field} ${messages.join(' ')}`);
  if (typeof info.explanation === 'string') texts.push(info.explanation);
  const fields = (['until', 'since'] as const).filter((name) =>
    texts.some((text) => new RegExp(`\\b${name}\\b`, 'i').test(text) && /future/i.test(text))
  );
  if (!fields.length) return undefined;
  const asked = fields.map((name) => `${name} ${filter[name]}`).join(' and ');
  const serverDate = typeof info.serverDate === 'string' ? Date.parse(info.serverDate) : NaN;
  const clock = Number.isNaN(serverDate)
    ? ''
    : ` (its clock said ${new Date(serverDate).toISOString()} when it answered)`;
  return connectorError(
    'config_error',
    `${operation} for quest ${questId} failed: the service rejected ${asked} as in the future${clock}, so its clock is behind this machine's. Raise settle_seconds above the difference (the connector asks only for responses older than settle_seconds), or have the clocks synchronised. The service answered: HTTP 400${info.explanation ? ` - ${String(info.explanation)}` : ''}.`,
    info,
    err
  );
}
