// Seeded fault decisions. Each decision draws from the fault PRNG only when its rate is > 0, so a
// run without faults is not perturbed and a given seed and request sequence repeat exactly.

import {Prng} from './prng';
import {RateLimiter} from './rate-limit';
import {EchoEncoding, ExportOutcome, FaultOptions} from './types';

export type ServerFault = {kind: 'problem'} | {kind: 'gateway'; status: 502 | 503};
export type Framing = NonNullable<FaultOptions['framing']>;

const RATES = [
  'serverErrorRate',
  'exportErrorRate',
  'stuckExportRate',
  'truncatedDownloadRate',
  'cutFirstDownloadAt',
  'goneRate',
  'stallDownloadRate',
  'stallAfterFraction',
  'vanishRate',
] as const;
const FRAMINGS: readonly Framing[] = ['length', 'chunked', 'close'];
/** Each way an echoed credential is written (echoCredentials' encoding). */
export const ECHO_ENCODINGS: Readonly<Record<EchoEncoding, (value: string, clientId: string) => string>> = {
  raw: (v) => v,
  json: (v) => JSON.stringify(v).slice(1, -1),
  url: (v) => encodeURIComponent(v),
  'url-lower': (v) => encodeURIComponent(v).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
  form: (v) => new URLSearchParams({v}).toString().slice(2),
  base64: (v) => Buffer.from(v, 'utf8').toString('base64'),
  base64url: (v) => Buffer.from(v, 'utf8').toString('base64url'),
  basic: (v, clientId) => Buffer.from(`${clientId}:${v}`, 'utf8').toString('base64'),
};
const ECHO_FILLER = 'The request could not be processed as it was sent. ';

export const SERVER_ERROR_DETAIL = 'Object reference not set to an instance of an object.';

export function gatewayPage(status: 502 | 503): string {
  const title = status === 502 ? '502 Bad Gateway' : '503 Service Temporarily Unavailable';
  return `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n<center><h1>${title}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n`;
}

export class Faults {
  private options: FaultOptions = {};
  private limiter?: RateLimiter;
  private unreadableGiven = 0;

  constructor(private readonly rng: Prng) {}

  set(options: FaultOptions): void {
    for (const name of RATES) {
      const rate = options[name];
      if (rate !== undefined && !(rate >= 0 && rate <= 1)) throw new Error(`${name} must lie in [0, 1]`);
    }
    const bad = options.badStatusAnswers;
    if (bad !== undefined && !(Number.isInteger(bad) && bad >= 0))
      throw new Error('badStatusAnswers must be an integer >= 0');
    if (options.framing !== undefined && !FRAMINGS.includes(options.framing)) {
      throw new Error(`framing must be one of ${FRAMINGS.join(', ')}`);
    }
    if (options.compression !== undefined && options.compression !== 'gzip')
      throw new Error("compression must be 'gzip'");
    const rate = options.downloadBytesPerSecond;
    if (rate !== undefined && !(Number.isInteger(rate) && rate >= 1))
      throw new Error('downloadBytesPerSecond must be a whole number >= 1');
    const latency = options.latencyMs;
    if (latency !== undefined && !(Number.isFinite(latency) && latency >= 0)) throw new Error('latencyMs must be >= 0');
    const refuse = options.refuseCreates;
    if (refuse !== undefined && !(Number.isInteger(refuse) && refuse >= 400 && refuse <= 599))
      throw new Error('refuseCreates must be an HTTP status from 400 to 599');
    const echo = options.echoCredentials;
    if (echo !== undefined) {
      if (echo.what !== 'client-secret' && echo.what !== 'token')
        throw new Error("echoCredentials.what must be 'client-secret' or 'token'");
      if (!(Number.isInteger(echo.at) && echo.at >= 0)) throw new Error('echoCredentials.at must be an integer >= 0');
      if (echo.encoding !== undefined && !(echo.encoding in ECHO_ENCODINGS))
        throw new Error(`echoCredentials.encoding must be one of ${Object.keys(ECHO_ENCODINGS).join(', ')}`);
    }
    this.limiter = options.rateLimit ? new RateLimiter(options.rateLimit) : undefined;
    this.options = {...options};
  }

  get rateLimiter(): RateLimiter | undefined {
    return this.limiter;
  }

  get latencyMs(): number {
    return this.options.latencyMs ?? 0;
  }

  /** Every whole download's body arrives at this pace on the clock (undefined: at once). */
  get downloadBytesPerSecond(): number | undefined {
    return this.options.downloadBytesPerSecond;
  }

  get framing(): Framing {
    return this.options.framing ?? 'length';
  }

  get gzip(): boolean {
    return this.options.compression === 'gzip';
  }

  /** The body of an unreadable status answer to give now (badStatusAnswers), or undefined. */
  unreadableStatus(): string | undefined {
    const left = this.options.badStatusAnswers ?? 0;
    if (left <= 0) return undefined;
    this.options.badStatusAnswers = left - 1;
    this.unreadableGiven++;
    return this.unreadableGiven % 2 === 1 ? '' : '{"exportId": "';
  }

  /** The status every export create is refused with, if any (refuseCreates). */
  get refusedCreate(): number | undefined {
    return this.options.refuseCreates;
  }

  /**
   * The detail of an error that quotes `credential` (echoCredentials), when the switch echoes that
   * kind: `at` characters of other text, the credential in its encoding, a few words after it.
   */
  echo(what: 'client-secret' | 'token', credential: string, clientId: string): string | undefined {
    const echo = this.options.echoCredentials;
    if (echo?.what !== what) return undefined;
    const filler = ECHO_FILLER.repeat(Math.ceil(echo.at / ECHO_FILLER.length)).slice(0, echo.at);
    return `${filler}${ECHO_ENCODINGS[echo.encoding ?? 'raw'](credential, clientId)} was not accepted.`;
  }

  get oneExportPerQuest(): boolean {
    return this.options.oneExportPerQuest ?? false;
  }

  private roll(rate: number | undefined): boolean {
    return rate !== undefined && rate > 0 && this.rng.next() < rate;
  }

  /** Whether this /v1 request is answered with a 5xx, and which kind. */
  serverError(): ServerFault | undefined {
    if (!this.roll(this.options.serverErrorRate)) return undefined;
    if (this.rng.chance(0.5)) return {kind: 'problem'};
    return {kind: 'gateway', status: this.rng.chance(0.5) ? 502 : 503};
  }

  /** How an export of `rows` rows ends. */
  exportOutcome(rows: number): ExportOutcome {
    if (this.options.maxExportRows !== undefined && rows > this.options.maxExportRows) return 'error';
    if (this.roll(this.options.vanishRate)) return 'vanished';
    if (this.roll(this.options.exportErrorRate)) return 'error';
    if (this.roll(this.options.stuckExportRate)) return 'stuck';
    return 'ok';
  }

  gone(): boolean {
    return this.roll(this.options.goneRate);
  }

  /**
   * Byte count after which to cut a download of `size` bytes, or undefined for a full body;
   * `download` counts the downloads of the export, this one included.
   */
  truncateAt(size: number, download: number): number | undefined {
    const first = this.options.cutFirstDownloadAt;
    if (first !== undefined && download === 1 && size >= 2) return Math.max(1, Math.floor(size * first));
    if (size < 2 || !this.roll(this.options.truncatedDownloadRate)) return undefined;
    return Math.max(1, Math.floor(size * (0.1 + 0.8 * this.rng.next())));
  }

  /** Byte count after which a download of `size` bytes stalls for good, or undefined. */
  stallAt(size: number): number | undefined {
    if (!this.roll(this.options.stallDownloadRate)) return undefined;
    return Math.floor(size * (this.options.stallAfterFraction ?? 0.5));
  }
}
