// RFC 7807 problem details as the real service sends them (ASP.NET-style type URIs, traceId and
// requestId on every body). Ids come from the seeded PRNG so a run is reproducible.

import {Prng} from './prng';
import {FieldErrors} from './settings';

export const PROBLEM_JSON = 'application/problem+json';

const TYPES: Readonly<Record<number, [string, string]>> = {
  400: ['https://tools.ietf.org/html/rfc9110#section-15.5.1', 'One or more validation errors occurred.'],
  401: ['https://tools.ietf.org/html/rfc9110#section-15.5.2', 'Unauthorized'],
  403: ['https://tools.ietf.org/html/rfc9110#section-15.5.4', 'Forbidden'],
  404: ['https://tools.ietf.org/html/rfc9110#section-15.5.5', 'Not Found'],
  405: ['https://tools.ietf.org/html/rfc9110#section-15.5.6', 'Method Not Allowed'],
  409: ['https://tools.ietf.org/html/rfc9110#section-15.5.10', 'Conflict'],
  410: ['https://tools.ietf.org/html/rfc9110#section-15.5.11', 'Gone'],
  413: ['https://tools.ietf.org/html/rfc9110#section-15.5.14', 'Content Too Large'],
  415: ['https://tools.ietf.org/html/rfc9110#section-15.5.16', 'Unsupported Media Type'],
  429: ['https://tools.ietf.org/html/rfc6585#section-4', 'Too Many Requests'],
  500: ['InternalServerError', 'An unexpected error occurred'],
};

export interface Problem {
  status: number;
  detail?: string;
  title?: string;
  /** Overrides the standard type for the status (500 uses a plain label). */
  type?: string;
  instance?: string;
  errors?: FieldErrors;
  /** OAuth error members, used by the token endpoint only. */
  error?: string;
  error_description?: string;
}

export class ProblemFactory {
  constructor(
    private readonly rng: Prng,
    /** Error bodies are text/plain "<status> <title>" (the dialect's errorBodies 'text'). */
    readonly plainText = false
  ) {}

  text(p: Problem): string {
    return `${p.status} ${p.title ?? TYPES[p.status]?.[1] ?? 'Error'}`;
  }

  /** W3C trace-context style id, as ASP.NET puts in traceId. */
  traceId(): string {
    return `00-${this.rng.hex(32)}-${this.rng.hex(16)}-00`;
  }

  requestId(): string {
    return `0HN${this.rng.hex(9).toUpperCase()}:${this.rng.hex(8).toUpperCase()}`;
  }

  body(p: Problem): Record<string, unknown> {
    const [type, title] = TYPES[p.status] ?? ['about:blank', 'Error'];
    const out: Record<string, unknown> = {
      type: p.type ?? type,
      title: p.title ?? title,
      status: p.status,
    };
    if (p.detail !== undefined) out.detail = p.detail;
    if (p.instance !== undefined) out.instance = p.instance;
    if (p.errors !== undefined) out.errors = p.errors;
    if (p.error !== undefined) out.error = p.error;
    if (p.error_description !== undefined) out.error_description = p.error_description;
    out.traceId = this.traceId();
    out.requestId = this.requestId();
    return out;
  }
}
