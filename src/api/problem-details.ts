import {keyedByText} from '../core/outside-text';

/** RFC 7807 problem details as the Export API returns them (or a variation of it). */
interface ProblemDetails {
  type?: string;
  title?: string;
  status?: number;
  detail?: string;
  instance?: string;
  errors?: Record<string, string[]>;
  traceId?: string;
  requestId?: string;
  /** OAuth token endpoints use these instead. */
  error?: string;
  error_description?: string;
}

const MAX_TEXT = 300;

/** A text that is not blank, trimmed; anything else (no text, only white space) is undefined. */
export function nonBlank(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/** Reads a response body (object, JSON text, HTML page, nothing) into problem details, never throwing. */
export function parseProblemDetails(body: unknown): ProblemDetails | undefined {
  let value = body;
  if (Buffer.isBuffer(value)) value = value.toString('utf8');
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return undefined;
    }
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const raw = value as Record<string, unknown>;
  const problem: ProblemDetails = {
    type: nonBlank(raw.type),
    title: nonBlank(raw.title),
    status: typeof raw.status === 'number' ? raw.status : undefined,
    detail: nonBlank(raw.detail),
    instance: nonBlank(raw.instance),
    traceId: nonBlank(raw.traceId),
    requestId: nonBlank(raw.requestId),
    error: nonBlank(raw.error),
    error_description: nonBlank(raw.error_description),
  };
  if (raw.errors && typeof raw.errors === 'object' && !Array.isArray(raw.errors)) {
    const errors = keyedByText<string[]>();
    for (const [field, messages] of Object.entries(raw.errors as Record<string, unknown>)) {
      const list = Array.isArray(messages) ? messages : [messages];
      errors[field] = list.map((m) => String(m));
    }
    problem.errors = errors;
  }
  const known = Object.values(problem).some((v) => v !== undefined);
  return known ? problem : undefined;
}

/** One line a person can read: the service's explanation and its validation errors. */
export function describeProblem(problem: ProblemDetails | undefined): string | undefined {
  if (!problem) return undefined;
  const parts: string[] = [];
  const main = problem.detail ?? problem.error_description ?? problem.title ?? problem.error;
  if (main) parts.push(main);
  if (problem.errors) {
    const fields = Object.entries(problem.errors).map(([field, msgs]) => `${field}: ${msgs.join('; ')}`);
    if (fields.length) parts.push(`validation errors: ${fields.join(' | ')}`);
  }
  if (!parts.length) return undefined;
  const text = parts.join(' - ');
  return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}...` : text;
}

/** A short excerpt of a body that is not problem details (an HTML gateway page, say). */
export function bodyExcerpt(body: unknown): string | undefined {
  let text: string | undefined;
  if (Buffer.isBuffer(body)) text = body.toString('utf8');
  else if (typeof body === 'string') text = body;
  if (!text) return undefined;
  const title = /<title>([^<]*)<\/title>/i.exec(text)?.[1];
  const plain = (title ?? text.replace(/<[^>]*>/g, ' ')).replace(/\s+/g, ' ').trim();
  if (!plain) return undefined;
  return plain.length > 120 ? `${plain.slice(0, 120)}...` : plain;
}

/** An HTML page (a login page, a gateway error) where data was expected, whatever its Content-Type said. */
export function looksLikeHtml(text: string): boolean {
  return /^\s*(<!doctype html|<html[\s>]|<head[\s>]|<body[\s>])/i.test(text.replace(/^\uFEFF+/, ''));
}
