// The OAuth 2.0 client-credentials token endpoint (ZITADEL-like) and bearer-token checks.
// Tokens look like ES256 JWTs; the signature is an HMAC under a key derived from the seed, so
// tokens are deterministic per seed yet not guessable without knowing the scheme and the seed.

import {createHmac} from 'crypto';
import {Problem} from './problem';
import {Prng} from './prng';

export interface TokenConfig {
  clientId: string;
  clientSecret: string;
  projectId: string;
  lifetimeSeconds: number;
  issuer: string;
  seed: number;
  /** token_type of the answer (default Bearer). */
  tokenType?: string;
  /** expires_in counts milliseconds instead of seconds (the exp claim stays right). */
  expiresInMs?: boolean;
}

export type TokenResult =
  {ok: true; body: {access_token: string; token_type: string; expires_in: number}} | {ok: false; problem: Problem};

function b64url(data: string | Buffer): string {
  return Buffer.from(data).toString('base64url');
}

function oauthProblem(status: number, error: string, description: string): TokenResult {
  return {ok: false, problem: {status, detail: description, error, error_description: description}};
}

export class TokenService {
  /** Access token -> expiry (epoch ms). */
  private readonly tokens = new Map<string, number>();
  private readonly order: string[] = [];
  private readonly key: Buffer;
  private readonly kid: string;

  constructor(
    private readonly config: TokenConfig,
    private readonly rng: Prng
  ) {
    this.key = createHmac('sha256', 'questback-simulator').update(`signing-key:${config.seed}`).digest();
    this.kid = rng.int(2 ** 31).toString() + rng.int(2 ** 31).toString();
  }

  get clientId(): string {
    return this.config.clientId;
  }

  get scope(): string {
    return `urn:zitadel:iam:org:project:id:${this.config.projectId}:aud`;
  }

  /** Handles POST /oauth/v2/token given the request's Content-Type and raw body. */
  handle(contentType: string | undefined, rawBody: string, now: number): TokenResult {
    const mediaType = (contentType ?? '').split(';')[0].trim().toLowerCase();
    if (mediaType !== 'application/x-www-form-urlencoded') {
      return oauthProblem(400, 'invalid_request', 'Content-Type must be application/x-www-form-urlencoded');
    }
    const form = new URLSearchParams(rawBody);
    const grant = form.get('grant_type');
    if (!grant) return oauthProblem(400, 'invalid_request', 'grant_type is missing');
    if (grant !== 'client_credentials') {
      return oauthProblem(
        400,
        'unsupported_grant_type',
        `grant_type '${grant}' is not supported; use client_credentials`
      );
    }
    const clientId = form.get('client_id');
    const secret = form.get('client_secret');
    if (!clientId || !secret) return oauthProblem(401, 'invalid_client', 'client_id and client_secret are required');
    if (clientId !== this.config.clientId || secret !== this.config.clientSecret) {
      return oauthProblem(401, 'invalid_client', 'client authentication failed');
    }
    const scopes = (form.get('scope') ?? '').split(/\s+/).filter((s) => s.length > 0);
    if (!scopes.includes(this.scope)) {
      return oauthProblem(400, 'invalid_scope', `scope must include ${this.scope}`);
    }
    return {
      ok: true,
      body: {
        access_token: this.issue(now),
        token_type: this.config.tokenType ?? 'Bearer',
        expires_in: this.config.lifetimeSeconds * (this.config.expiresInMs ? 1000 : 1),
      },
    };
  }

  private issue(now: number): string {
    const iat = Math.floor(now / 1000);
    const header = b64url(JSON.stringify({alg: 'ES256', typ: 'JWT', kid: this.kid}));
    const payload = b64url(
      JSON.stringify({
        iss: this.config.issuer,
        sub: this.config.clientId,
        aud: [this.config.projectId, this.config.clientId],
        client_id: this.config.clientId,
        iat,
        nbf: iat,
        exp: iat + this.config.lifetimeSeconds,
        jti: this.rng.hex(24),
      })
    );
    const first = createHmac('sha256', this.key).update(`${header}.${payload}`).digest();
    const second = createHmac('sha256', this.key).update(first).digest();
    const token = `${header}.${payload}.${b64url(Buffer.concat([first, second]))}`;
    this.tokens.set(token, now + this.config.lifetimeSeconds * 1000);
    this.order.push(token);
    return token;
  }

  /** True when `authorization` is "Bearer <token>" with a token issued here and not expired. */
  check(authorization: string | undefined, now: number): boolean {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    if (!m) return false;
    const expires = this.tokens.get(m[1]);
    return expires !== undefined && now < expires;
  }

  issued(): string[] {
    return [...this.order];
  }
}
