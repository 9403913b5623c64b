import {AxiosError, isAxiosError} from 'axios';
import VError from 'verror';

import {connectorError, FailureType} from './errors';
import {bodyExcerpt, describeProblem, parseProblemDetails} from './problem-details';

/** Where a request came from, so that a failure names what a person needs to find it. */
export interface RequestContext {
  operation: string;
  questId?: string;
}

const CONFIG_STATUSES = new Set([400, 401, 403, 404, 422]);
const DNS_ERRORS = new Set(['ENOTFOUND', 'EAI_AGAIN']);

function hintFor(status: number, ctx: RequestContext): string {
  const quest = ctx.questId ? `quest ${ctx.questId}` : 'the resource';
  switch (status) {
    case 400:
      return 'The service rejected the request; check the export settings named above.';
    case 401:
      return 'The credentials or token were rejected: check client_id, client_secret and project_id.';
    case 403:
      return `The API client has no permission for ${quest}: ask your Questback account owner to grant access, or remove it from quest_ids.`;
    case 404:
      return ctx.questId
        ? `Quest ${ctx.questId} was not found: check the id in quest_ids.`
        : 'Check api_url and auth_url.';
    case 410:
      return 'The export file is gone (deleted or older than 30 days).';
    case 429:
      return 'The service kept throttling requests; the next sync resumes from the last checkpoint.';
    default:
      return status >= 500
        ? 'The service failed; this is usually temporary and the next sync resumes from the last checkpoint.'
        : '';
  }
}

/** The ids Questback support asks for, as "traceId X, requestId Y" (empty when the service gave none). */
export function supportIds(traceId: unknown, requestId: unknown): string {
  return [traceId && `traceId ${traceId}`, requestId && `requestId ${requestId}`].filter(Boolean).join(', ');
}

export function failureTypeForStatus(status: number): FailureType {
  if (CONFIG_STATUSES.has(status)) return 'config_error';
  if (status === 410 || status === 429 || status === 408 || status >= 500) return 'transient_error';
  return 'system_error';
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
  const axiosErr = err as AxiosError;
  const response = axiosErr.response;
  if (!response) {
    const code = axiosErr.code ?? 'network error';
    const type: FailureType = DNS_ERRORS.has(code) ? 'config_error' : 'transient_error';
    const hint =
      type === 'config_error' ? ' Check api_url and auth_url.' : ' The next sync resumes from the last checkpoint.';
    return connectorError(type, `${where} failed: could not get an answer from the service (${code}).${hint}`, {
      ...ctx,
      code,
    });
  }
  const status = response.status;
  const data = body ?? response.data;
  const problem = parseProblemDetails(data);
  const explanation = describeProblem(problem) ?? bodyExcerpt(data);
  const ids = supportIds(problem?.traceId, problem?.requestId);
  const message = [
    `${where} failed: HTTP ${status}${explanation ? ` - ${explanation}` : ''}.`,
    hintFor(status, ctx),
    ids ? `(${ids})` : '',
  ]
    .filter(Boolean)
    .join(' ');
  return connectorError(failureTypeForStatus(status), message, {
    ...ctx,
    status,
    traceId: problem?.traceId,
    requestId: problem?.requestId,
    validationErrors: problem?.errors,
    explanation,
  });
}
