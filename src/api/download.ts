import http, {ClientRequest, IncomingMessage, RequestOptions} from 'http';
import https from 'https';
import {pipeline, Readable} from 'stream';
import zlib from 'zlib';

import {connectorError} from '../core/errors';
import {LIMITS} from '../core/limits';
import {Runtime} from '../core/runtime';
import {formatDuration} from '../core/time';
import {looksLikeHtml} from './problem-details';

/** How soon a time rule that came due while the download was at work looks again (real time). */
const AT_WORK_RECHECK_MS = 10;

/** How the end of a body is known: by its length, by chunked framing, or only by the server closing. */
export type Framing = 'length' | 'chunked' | 'close';

/** How far a download had come when it was cut off, for a bound on "no progress" across setbacks. */
interface DownloadProgress {
  /** Bytes received on the wire (compressed when the body is). */
  receivedBytes: number;
  /** Time from the last byte received (or from the start of the body, when none came) to the cut-off. */
  silentMs: number;
}

/**
 * The body did not arrive whole, or cannot be trusted to be whole: the connection closed early, no
 * byte came for the idle timeout, the bytes came too slowly, a compressed body ended in the middle,
 * or more bytes came than the Content-Length declared. The same export may be downloaded again.
 */
export class DownloadCutOff extends Error {
  constructor(
    readonly reason: string,
    /** Undefined only for cut-offs made outside a Download (test doubles). */
    readonly progress?: DownloadProgress
  ) {
    super(reason);
    this.name = 'DownloadCutOff';
  }
}

const CUT_CODES = new Set([
  'ECONNRESET',
  'ERR_STREAM_PREMATURE_CLOSE',
  'EPIPE',
  'ECONNABORTED',
  'ETIMEDOUT',
  'Z_BUF_ERROR',
]);

function cutReason(err: unknown): string | undefined {
  const code = (err as {code?: string})?.code;
  if (
    (code && CUT_CODES.has(code)) ||
    (err instanceof Error && /aborted|socket hang up|terminated|premature|unexpected end/i.test(err.message))
  ) {
    return `the connection ended early (${code ?? (err as Error).message})`;
  }
  return undefined;
}

/**
 * Errors of a download's request that come after its answer began: Node's HTTP parser raises one
 * (HPE_INVALID_CONSTANT, HPE_CLOSED_CONNECTION) when bytes follow the declared end of the body.
 */
const lateErrors = new WeakMap<ClientRequest, Error>();

/**
 * The transport of download requests (axios' `transport` option): Node's http and https, with a
 * listener on every request from its start, so that a parse error raised while the body is read
 * (in the same socket read as its last bytes) is seen; a listener added later would miss it.
 */
export const downloadTransport = {
  request(options: RequestOptions, callback?: (res: IncomingMessage) => void): ClientRequest {
    const request = (options.protocol === 'https:' ? https : http).request(options, callback);
    request.on('error', (err) => lateErrors.set(request, err));
    return request;
  },
};

/** The clock a download's time rules (the idle timeout, the progress floor) run on: the command's runtime. */
export type DownloadClock = Pick<Runtime, 'now' | 'sleep' | 'hold'>;

interface DownloadInfo {
  questId: string;
  exportId: string;
  clock: DownloadClock;
  /** Longest silence of the body before the download counts as cut off. */
  idleTimeoutMs: number;
  /** The floor on progress; by default LIMITS.downloadProgress scaled by the idle timeout. */
  progressFloor?: ProgressFloor;
}

/** At least minBytes of wire data in every spanMs spent waiting for the body. */
interface ProgressFloor {
  spanMs: number;
  minBytes: number;
}

/** A file being downloaded, as the readers use it. */
export interface ExportFile {
  readonly framing: Framing;
  /** Bytes announced for the body on the wire, when the service says. */
  readonly contentLength?: number;
  /** Bytes received on the wire so far. */
  readonly receivedBytes: number;
  /** The decoded bytes of the body; throws DownloadCutOff when the body is incomplete. */
  chunks(): AsyncGenerator<Buffer>;
  close(): void;
}

/**
 * The file of a completed export, as it arrives: decompressed here (so that the announced length is
 * compared with the bytes received on the wire, compressed with compressed), watched for silence and
 * for a trickle, checked to end where its Content-Length said (no byte short, none beyond), and
 * checked to be data rather than an HTML page. Iterating it throws DownloadCutOff when the body is
 * incomplete or cannot be trusted to be whole.
 */
export class Download implements ExportFile {
  /** Bytes received on the wire so far (compressed when the body is). */
  receivedBytes = 0;
  readonly contentLength?: number;
  readonly framing: Framing;
  readonly contentEncoding?: string;
  /**
   * Bytes came after the end the Content-Length declared (a server that counted characters, say):
   * the body read may be cut anywhere and is not delivered whole; chunks() throws DownloadCutOff.
   */
  overran = false;
  private startedAt: number;
  private lastByteAt: number | undefined;

  constructor(
    private readonly body: IncomingMessage,
    readonly info: DownloadInfo
  ) {
    const headers = body.headers;
    const length = Number(headers['content-length']);
    this.contentLength =
      headers['content-length'] !== undefined && Number.isFinite(length) && length >= 0 ? length : undefined;
    const chunked = /chunked/i.test(String(headers['transfer-encoding'] ?? ''));
    this.framing = this.contentLength !== undefined ? 'length' : chunked ? 'chunked' : 'close';
    const encoding = String(headers['content-encoding'] ?? '')
      .trim()
      .toLowerCase();
    this.contentEncoding = encoding && encoding !== 'identity' ? encoding : undefined;
    this.startedAt = info.clock.now();
  }

  /**
   * The decoded bytes of the body, in order. The idle timeout and the progress floor run only while
   * the next bytes are awaited: a consumer that is slow to take them (a slow destination) is not a
   * stalled download.
   */
  async *chunks(): AsyncGenerator<Buffer> {
    const {idleTimeoutMs, clock} = this.info;
    const floor = this.info.progressFloor ?? {
      spanMs: idleTimeoutMs * LIMITS.downloadProgress.spanIdleTimeouts,
      minBytes: LIMITS.downloadProgress.minBytes,
    };
    this.startedAt = clock.now();
    const decoder = this.contentEncoding ? this.decoder(this.contentEncoding) : undefined;
    const decoding = (): boolean =>
      decoder !== undefined && (decoder.writableLength > 0 || (decoder.writableEnded && !decoder.writableFinished));
    // While the decoder works on bytes that came, the clock is held (a virtual one must not jump over it).
    let release: (() => void) | undefined;
    const holdWhileDecoding = (): void => {
      if (release || !decoder || !clock.hold) return;
      release = clock.hold();
      const check = (): void => {
        if (release && !decoder.destroyed && decoding()) setTimeout(check, AT_WORK_RECHECK_MS).unref();
        else {
          release?.();
          release = undefined;
        }
      };
      setTimeout(check, AT_WORK_RECHECK_MS).unref();
    };
    this.body.on('data', (chunk: Buffer) => {
      this.receivedBytes += chunk.length;
      this.lastByteAt = clock.now();
      holdWhileDecoding();
    });
    const source: Readable = decoder ? pipeline(this.body, decoder, () => undefined) : this.body;
    // The wait for the next bytes under way: when it began (none while the consumer has the bytes), and the bytes received then.
    let waitFrom: number | undefined;
    let bytesAtWait = 0;
    /**
     * Bytes came since the wait began, or wait to be decoded (on another thread) or taken: the download is
     * at work, whatever the clock says (a test's virtual clock may jump while a thread decompresses).
     */
    const atWork = (): boolean => this.receivedBytes !== bytesAtWait || source.readableLength > 0 || decoding();
    const iterator = (source as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
    const stop = (reason: string) => (): void => {
      this.body.destroy(this.cutOff(reason));
    };
    const stalled = stop(`the download stalled: no data for ${formatDuration(idleTimeoutMs)}`);
    // The span in which minBytes must come: its first byte count, and the time spent waiting in it.
    let spanBytes = 0;
    let spanWaitedMs = 0;
    const trickle = (): string =>
      `the download slowed to a trickle: ${this.receivedBytes - spanBytes} bytes in ${formatDuration(spanWaitedMs)} of waiting, under the floor of ${floor.minBytes} bytes per ${formatDuration(floor.spanMs)} (${this.receivedBytes} bytes received in all)`;
    /*
     * One timer watches both rules for the whole download, not one per chunk (a timer made and
     * cancelled per chunk cost a tenth of the CPU of a fast read). The rules' due times only move later
     * as chunks come, so the timer is set for the earliest of them and, when it fires early, set again.
     * It runs on the command's clock (a test's virtual one too); firing while the consumer has the
     * bytes, it lapses, and the next wait sets it again.
     */
    const watching = new AbortController();
    let armed = false;
    const dueTimes = (from: number): {idleAt: number; floorAt: number} => ({
      idleAt: from + idleTimeoutMs,
      floorAt: from + floor.spanMs - spanWaitedMs,
    });
    const arm = (): void => {
      if (armed || waitFrom === undefined) return;
      armed = true;
      const {idleAt, floorAt} = dueTimes(waitFrom);
      clock.sleep(Math.min(idleAt, floorAt) - clock.now(), watching.signal).then(applyRules, () => undefined);
    };
    const applyRules = (): void => {
      armed = false;
      if (watching.signal.aborted || waitFrom === undefined) return;
      const now = clock.now();
      const {idleAt, floorAt} = dueTimes(waitFrom);
      if (now < Math.min(idleAt, floorAt)) arm();
      else if (atWork()) {
        // Whatever the clock says, a download at work is not stalled: the rules look again a little later.
        armed = true;
        setTimeout(applyRules, AT_WORK_RECHECK_MS).unref();
      } else if (idleAt <= floorAt) stalled();
      else {
        spanWaitedMs += now - waitFrom;
        stop(trickle())();
      }
    };
    let first = true;
    try {
      for (;;) {
        const from = clock.now();
        waitFrom = from;
        bytesAtWait = this.receivedBytes;
        arm();
        let next: IteratorResult<Buffer>;
        try {
          next = await iterator.next();
        } finally {
          waitFrom = undefined;
        }
        if (next.done) break;
        spanWaitedMs += clock.now() - from;
        if (this.receivedBytes - spanBytes >= floor.minBytes) {
          spanBytes = this.receivedBytes;
          spanWaitedMs = 0;
        } else if (spanWaitedMs >= floor.spanMs) {
          throw this.cutOff(trickle());
        }
        if (first) {
          first = false;
          this.checkData(next.value);
        }
        yield next.value;
      }
    } catch (err) {
      if (err instanceof DownloadCutOff) throw err;
      const reason = cutReason(err);
      throw reason ? this.cutOff(reason) : err;
    } finally {
      watching.abort();
      release?.();
      this.close();
    }
    if (this.contentLength !== undefined && this.receivedBytes < this.contentLength) {
      throw this.cutOff(`the body ended after ${this.receivedBytes} of ${this.contentLength} bytes`);
    }
    // Node sets `req` on the answers of its client; the type leaves it out.
    const request = (this.body as IncomingMessage & {req?: ClientRequest}).req;
    const late = request ? lateErrors.get(request) : undefined;
    if (late && /^HPE_/.test(String((late as {code?: string}).code))) {
      this.overran = true;
      throw this.cutOff(
        `the service sent more bytes than the body's declared end (Content-Length ${this.contentLength ?? 'none'}; ${(late as {code?: string}).code}): the file may be cut anywhere, even inside a cell, so it is not trusted`
      );
    }
  }

  /** How far the download came, as a cut-off reports it. */
  progress(): DownloadProgress {
    return {
      receivedBytes: this.receivedBytes,
      silentMs: this.info.clock.now() - (this.lastByteAt ?? this.startedAt),
    };
  }

  private cutOff(reason: string): DownloadCutOff {
    return new DownloadCutOff(reason, this.progress());
  }

  close(): void {
    if (!this.body.destroyed) this.body.destroy();
  }

  private decoder(encoding: string): zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress {
    if (encoding === 'gzip' || encoding === 'x-gzip') return zlib.createGunzip();
    if (encoding === 'deflate') return zlib.createInflate();
    if (encoding === 'br') return zlib.createBrotliDecompress();
    throw connectorError(
      'transient_error',
      `Downloading export ${this.info.exportId} of quest ${this.info.questId}: the service used Content-Encoding ${encoding}, which the connector cannot decode.`,
      {questId: this.info.questId, exportId: this.info.exportId}
    );
  }

  /** A login or error page served as a file is not an export, whatever its Content-Type said. */
  private checkData(first: Buffer): void {
    const head = first.subarray(0, 512).toString('latin1');
    if (looksLikeHtml(head)) {
      throw connectorError(
        'transient_error',
        `Downloading export ${this.info.exportId} of quest ${this.info.questId} returned an HTML page instead of CSV (Content-Type ${this.body.headers['content-type'] ?? 'none'}). This is usually a gateway or login page; the window is not saved.`,
        {questId: this.info.questId, exportId: this.info.exportId}
      );
    }
  }
}
