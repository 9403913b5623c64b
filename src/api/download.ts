import {IncomingMessage} from 'http';
import {pipeline, Readable} from 'stream';
import zlib from 'zlib';

import {connectorError} from '../core/errors';
import {formatDuration} from '../core/time';
import {looksLikeHtml} from './problem-details';

/** How the end of a body is known: by its length, by chunked framing, or only by the server closing. */
export type Framing = 'length' | 'chunked' | 'close';

/**
 * The body did not arrive whole: the connection closed early, no byte came for the idle timeout, or
 * a compressed body ended in the middle. The same export may be downloaded again.
 */
export class DownloadCutOff extends Error {
  constructor(readonly reason: string) {
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

function asCutOff(err: unknown): DownloadCutOff | undefined {
  if (err instanceof DownloadCutOff) return err;
  const code = (err as {code?: string})?.code;
  if (
    (code && CUT_CODES.has(code)) ||
    (err instanceof Error && /aborted|socket hang up|terminated|premature|unexpected end/i.test(err.message))
  ) {
    return new DownloadCutOff(`the connection ended early (${code ?? (err as Error).message})`);
  }
  return undefined;
}

export interface DownloadInfo {
  questId: string;
  exportId: string;
  /** Longest silence of the body before the download counts as cut off. */
  idleTimeoutMs: number;
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
 * compared with the bytes received on the wire, compressed with compressed), watched for silence,
 * and checked to be data rather than an HTML page. Iterating it throws DownloadCutOff when the body
 * is incomplete.
 */
export class Download implements ExportFile {
  /** Bytes received on the wire so far (compressed when the body is). */
  receivedBytes = 0;
  readonly contentLength?: number;
  readonly framing: Framing;
  readonly contentEncoding?: string;

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
  }

  /**
   * The decoded bytes of the body, in order. The idle timeout runs only while the next bytes are
   * awaited: a consumer that is slow to take them (a slow destination) is not a stalled download.
   */
  async *chunks(): AsyncGenerator<Buffer> {
    const {idleTimeoutMs} = this.info;
    this.body.on('data', (chunk: Buffer) => (this.receivedBytes += chunk.length));
    const source: Readable = this.contentEncoding
      ? pipeline(this.body, this.decoder(this.contentEncoding), () => undefined)
      : this.body;
    const iterator = (source as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
    const stalled = (): void => {
      this.body.destroy(new DownloadCutOff(`the download stalled: no data for ${formatDuration(idleTimeoutMs)}`));
    };
    let first = true;
    try {
      for (;;) {
        const timer = setTimeout(stalled, idleTimeoutMs);
        let next: IteratorResult<Buffer>;
        try {
          next = await iterator.next();
        } finally {
          clearTimeout(timer);
        }
        if (next.done) break;
        if (first) {
          first = false;
          this.checkData(next.value);
        }
        yield next.value;
      }
    } catch (err) {
      throw asCutOff(err) ?? err;
    } finally {
      this.close();
    }
    if (this.contentLength !== undefined && this.receivedBytes < this.contentLength) {
      throw new DownloadCutOff(`the body ended after ${this.receivedBytes} of ${this.contentLength} bytes`);
    }
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
