import {AxiosInstance, AxiosRequestConfig, AxiosResponse, isAxiosError} from 'axios';
import {Readable} from 'stream';
import VError from 'verror';

import {connectorError} from '../core/errors';
import {apiError, RequestContext} from './api-error';
import {asJsonObject, UNREADABLE_ANSWER} from './http';
import {nonBlank} from './problem-details';

// How every request of the export API is sent, and what its answer's body is made into.

const MAX_ERROR_BODY = 64 * 1024;

/** At most MAX_ERROR_BODY of a body that is not the file (an error's explanation). */
export async function readSmallBody(stream: unknown): Promise<string | undefined> {
  if (!(stream instanceof Readable)) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of stream) {
      const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
      chunks.push(buf);
      size += buf.length;
      if (size >= MAX_ERROR_BODY) break;
    }
  } catch {
    // A body we cannot read only loses the explanation, not the status.
  }
  stream.destroy();
  return Buffer.concat(chunks).toString('utf8');
}

interface ApiCall {
  context: RequestContext;
  config: AxiosRequestConfig;
  /** Statuses the caller handles itself, returned instead of thrown. */
  accept?: readonly number[];
  /** Turns a failure the caller can say more about into a better error; undefined keeps it. */
  rejected?: (err: VError) => VError | undefined;
}

/**
 * Sends one request of the API with its context; a status the caller handles itself comes back as
 * the response, any other failure as an error a person can act on (see api-error.ts).
 */
export async function send(http: AxiosInstance, call: ApiCall): Promise<AxiosResponse> {
  try {
    return await http.request({...call.config, context: call.context});
  } catch (err) {
    // An answer still unreadable after the retries: the caller says what came (jsonObject).
    if (isAxiosError(err) && err.code === UNREADABLE_ANSWER && err.response) return err.response;
    if (isAxiosError(err) && err.response && call.accept?.includes(err.response.status)) {
      if (call.config.responseType === 'stream' || err.response.data instanceof Readable) {
        err.response.data = await readSmallBody(err.response.data);
      }
      return err.response;
    }
    const body =
      isAxiosError(err) && err.response?.data instanceof Readable ? await readSmallBody(err.response.data) : undefined;
    const error = apiError(err, call.context, body);
    throw call.rejected?.(error) ?? error;
  }
}

/** A JSON object from a 2xx answer, or an error saying what came instead (HTML, nothing). */
export function jsonObject(response: AxiosResponse, ctx: RequestContext): Record<string, unknown> {
  const data = asJsonObject(response.data);
  if (data) return data;
  const kind = String(response.headers['content-type'] ?? 'no content type');
  const what = nonBlank(response.data) ? `a ${kind} body` : 'an empty body';
  throw connectorError(
    'transient_error',
    `${ctx.operation} for quest ${ctx.questId} failed: HTTP ${response.status} came with ${what} instead of JSON. This is usually a gateway problem.`,
    {...ctx, status: response.status}
  );
}

/** Drops a body not read (an error answer's was already read into text). */
export function discard(data: unknown): void {
  if (data instanceof Readable) data.destroy();
}
