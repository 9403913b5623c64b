// Response helpers bound to one request: every send records the status for requests() and
// stamps problem bodies with traceId/requestId.

import {IncomingMessage, ServerResponse} from 'http';
import {Problem, PROBLEM_JSON, ProblemFactory} from './problem';
import {HeaderDecorator, RequestRecord, SimulatorClock} from './types';

export const MAX_BODY_BYTES = 10 * 1024 * 1024;

export class Ctx {
  /** The request body, read before any handler runs; undefined when it exceeds MAX_BODY_BYTES. */
  body: string | undefined = '';
  private release: (() => void) | undefined;

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly record: RequestRecord,
    private readonly problems: ProblemFactory,
    private readonly clock: SimulatorClock,
    private readonly decorators: readonly HeaderDecorator[] = []
  ) {
    this.working();
    res.once('close', () => this.idle());
  }

  /** The simulator works on this request (a virtual clock does not jump meanwhile). */
  working(): void {
    this.release ??= this.clock.hold?.();
  }

  /** The request waits on the clock, or is silent on purpose: the simulator is not working on it. */
  idle(): void {
    this.release?.();
    this.release = undefined;
  }

  /**
   * Resolves true after `ms` on the clock, or false as soon as the response is closed (client gone,
   * or close()). The simulator is not working on the request meanwhile.
   */
  async pause(ms: number): Promise<boolean> {
    const closed = new AbortController();
    const onClose = (): void => closed.abort();
    this.res.once('close', onClose);
    this.idle();
    try {
      await this.clock.sleep(ms, closed.signal);
      return true;
    } catch {
      return false;
    } finally {
      this.res.off('close', onClose);
      if (!closed.signal.aborted) this.working();
    }
  }

  get method(): string {
    return this.record.method;
  }

  get path(): string {
    return this.record.path;
  }

  /** Writes the status line and headers; used directly by streaming responses. */
  head(status: number, headers: Record<string, string | number>): void {
    this.record.status = status;
    const added = this.decorators.map((decorate) => decorate(this.record, status) ?? {});
    this.res.writeHead(status, Object.assign({}, headers, ...added));
  }

  send(
    status: number,
    contentType: string | undefined,
    body: string | Buffer,
    headers: Record<string, string | number> = {}
  ): void {
    const all: Record<string, string | number> = {...headers, 'Content-Length': Buffer.byteLength(body)};
    if (contentType) all['Content-Type'] = contentType;
    this.head(status, all);
    this.res.end(body);
  }

  json(status: number, body: unknown, headers: Record<string, string> = {}): void {
    this.send(status, 'application/json; charset=utf-8', JSON.stringify(body), headers);
  }

  problem(p: Problem, headers: Record<string, string | number> = {}): void {
    if (this.problems.plainText)
      return this.send(p.status, 'text/plain; charset=utf-8', this.problems.text(p), headers);
    this.send(p.status, PROBLEM_JSON, JSON.stringify(this.problems.body(p)), headers);
  }

  /** 404 naming the method and path, as the real service does. */
  notFound(what?: string): void {
    const detail = `No resource found for ${this.method} ${this.path}` + (what ? `: ${what}` : '');
    this.problem({status: 404, detail});
  }
}

/** Reads the whole request body; undefined when it exceeds `limit` bytes. */
export async function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > limit) return undefined;
    chunks.push(buf);
  }
  return Buffer.concat(chunks).toString('utf8');
}
