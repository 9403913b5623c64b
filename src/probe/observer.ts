import {AxiosResponse} from 'axios';

/** What the probe was doing when an answer came: the verdicts look at the answers of one step. */
type Step = 'create' | 'status' | 'download' | 'unknown-export' | 'invitations';

/** One answer of the API, as the probe keeps it: never a header or body that could carry a credential. */
export interface ApiAnswer {
  step: Step;
  status: number;
  contentType?: string;
  contentEncoding?: string;
  /** The Location header as sent (a download link may carry a signature: reports show its shape only). */
  location?: string;
  /** Headers named like rate limits (`X-RateLimit-*`, `RateLimit-*`, `Retry-After`), by name as sent. */
  rateLimit: Record<string, string>;
  /** A JSON body (create, status and error answers); a file's body is a stream and not kept. */
  json?: unknown;
  bodyKind: 'json' | 'text' | 'empty' | 'stream';
  /** The request's URL, its query left out. */
  url: string;
  at: number;
}

/** What the token service answered, without the token. */
interface TokenAnswer {
  status: number;
  /** Member names of the answer. */
  members: string[];
  tokenType?: unknown;
  expiresIn?: unknown;
  /** The token's own lifetime, exp - iat in seconds, when it is a JWT that carries both. */
  claimLifetimeS?: number;
}

const RATE_LIMIT_HEADER = /ratelimit|rate-limit|retry-after/i;

function header(response: AxiosResponse, name: string): string | undefined {
  const value = (response.headers as Record<string, unknown>)[name];
  return value === undefined || value === null ? undefined : String(value);
}

function body(data: unknown): Pick<ApiAnswer, 'json' | 'bodyKind'> {
  if (data === undefined || data === null || data === '') return {bodyKind: 'empty'};
  if (typeof data === 'object' && typeof (data as {pipe?: unknown}).pipe === 'function') return {bodyKind: 'stream'};
  if (typeof data === 'string') {
    try {
      return {json: JSON.parse(data), bodyKind: 'json'};
    } catch {
      return {bodyKind: 'text'};
    }
  }
  return {json: data, bodyKind: 'json'};
}

/** exp - iat of a JWT's payload, read without checking the signature (nothing else of the token is kept). */
function claimLifetime(token: unknown): number | undefined {
  if (typeof token !== 'string') return undefined;
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8')) as {iat?: unknown; exp?: unknown};
    return typeof claims.iat === 'number' && typeof claims.exp === 'number' ? claims.exp - claims.iat : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Records what the service answers while the probe runs, through the HTTP clients' onAnswer hook: every
 * answer of the API (before retries, so a 429 is seen too), and the token service's answers reduced to
 * their shape at once.
 */
export class AnswerLog {
  readonly answers: ApiAnswer[] = [];
  readonly tokens: TokenAnswer[] = [];
  step: Step = 'create';

  constructor(private readonly now: () => number) {}

  readonly api = (response: AxiosResponse): void => {
    const rateLimit: Record<string, string> = {};
    for (const [name, value] of Object.entries(response.headers as Record<string, unknown>)) {
      if (RATE_LIMIT_HEADER.test(name) && value !== undefined && value !== null) rateLimit[name] = String(value);
    }
    const url = String(response.config.url ?? '');
    this.answers.push({
      step: this.step,
      status: response.status,
      contentType: header(response, 'content-type'),
      contentEncoding: header(response, 'content-encoding'),
      location: header(response, 'location'),
      rateLimit,
      ...body(response.data),
      url: url.split('?')[0],
      at: this.now(),
    });
  };

  readonly token = (response: AxiosResponse): void => {
    const {json} = body(response.data);
    const members = json && typeof json === 'object' && !Array.isArray(json) ? (json as Record<string, unknown>) : {};
    this.tokens.push({
      status: response.status,
      members: Object.keys(members),
      tokenType: members.token_type,
      expiresIn: members.expires_in,
      claimLifetimeS: claimLifetime(members.access_token),
    });
  };

  of(step: Step): ApiAnswer[] {
    return this.answers.filter((a) => a.step === step);
  }
}
