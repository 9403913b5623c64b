import {AxiosInstance, AxiosResponse, isAxiosError} from 'axios';
import {AirbyteLogger} from 'faros-airbyte-cdk';
import {Readable} from 'stream';
import VError from 'verror';

import {apiError, RequestContext} from './api-error';
import {QuestbackConfig} from './config';
import {connectorError} from './errors';
import {ApiRequestConfig} from './http-client';
import {Runtime} from './runtime';
import {describeWindow, formatUtcTimestamp, TimeWindow} from './windows';

/** The export settings the service takes; only CSV is read by this connector. */
export interface ExportSettings {
  exportType: 'CSV';
  valueType: string;
  expandMultipleChoiceToColumns: boolean;
  includeRespondentInformation: boolean;
  fieldSeparator: string;
  showOtherAsText: boolean;
}

export function exportSettings(config: QuestbackConfig): ExportSettings {
  return {
    exportType: 'CSV',
    valueType: config.value_type,
    expandMultipleChoiceToColumns: config.expand_multiple_choice_to_columns,
    includeRespondentInformation: config.include_respondent_information,
    fieldSeparator: config.field_separator,
    showOtherAsText: config.show_other_as_text,
  };
}

export interface PollPolicy {
  initialMs: number;
  factor: number;
  maxMs: number;
  timeoutMs: number;
}

/** Quick for small exports, about a dozen polls a minute at most for long ones. */
export const DEFAULT_POLL_POLICY: Omit<PollPolicy, 'timeoutMs'> = {initialMs: 500, factor: 1.5, maxMs: 10_000};

/** An export job of one window whose file is ready to download. */
export interface ReadyExport {
  questId: string;
  exportId: string;
  window: TimeWindow;
  downloadUrl: string;
}

export interface Download {
  body: Readable;
  /** Bytes announced by the service, when it says. */
  contentLength?: number;
}

const MAX_ERROR_BODY = 64 * 1024;

async function readSmallBody(stream: unknown): Promise<string | undefined> {
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

/** A JSON object from a 2xx answer, or an error saying what came instead (HTML, nothing). */
function jsonObject(response: AxiosResponse, ctx: RequestContext): Record<string, unknown> {
  let data: unknown = response.data;
  if (typeof data === 'string') {
    try {
      data = JSON.parse(data);
    } catch {
      // reported below
    }
  }
  if (data && typeof data === 'object' && !Array.isArray(data)) return data as Record<string, unknown>;
  const kind = String(response.headers['content-type'] ?? 'no content type');
  const what = typeof response.data === 'string' && response.data.trim() ? `a ${kind} body` : 'an empty body';
  throw connectorError(
    'transient_error',
    `${ctx.operation} for quest ${ctx.questId} failed: HTTP ${response.status} came with ${what} instead of JSON. This is usually a gateway problem; the next attempt retries.`,
    {...ctx, status: response.status}
  );
}

/** The export job API: create a job for a window, poll its status, download its file. */
export class ExportJobs {
  constructor(
    private readonly http: AxiosInstance,
    private readonly apiUrl: string,
    private readonly settings: ExportSettings,
    private readonly runtime: Runtime,
    private readonly logger: AirbyteLogger,
    private readonly poll: PollPolicy
  ) {}

  async create(questId: string, window: TimeWindow): Promise<string> {
    const context: RequestContext = {operation: 'Creating an export', questId};
    const body = {
      settings: this.settings,
      filter: {since: formatUtcTimestamp(window.since), until: formatUtcTimestamp(window.until)},
    };
    let response: AxiosResponse;
    try {
      response = await this.http.post(`/v1/quests/${encodeURIComponent(questId)}/exports`, body, {
        context,
        headers: {'Content-Type': 'application/json', Accept: 'application/json'},
      } as ApiRequestConfig);
    } catch (err) {
      throw apiError(err, context);
    }
    const exportId = jsonObject(response, context).exportId;
    if (typeof exportId !== 'string' || exportId === '') {
      throw connectorError('transient_error', `Creating an export for quest ${questId} returned no exportId.`, {
        ...context,
        status: response.status,
      });
    }
    this.logger.info(`Quest ${questId}: created export ${exportId} for window ${describeWindow(window)}`);
    return exportId;
  }

  /** Polls with capped exponential backoff until the file is ready; fails on a failure status or timeout. */
  async waitUntilReady(questId: string, exportId: string, window: TimeWindow): Promise<ReadyExport> {
    const context: RequestContext = {operation: 'Checking export status', questId};
    const startedAt = this.runtime.now();
    let delay = this.poll.initialMs;
    let last = 'PENDING';
    for (;;) {
      let response: AxiosResponse;
      try {
        response = await this.http.get(
          `/v1/quests/${encodeURIComponent(questId)}/exports/${encodeURIComponent(exportId)}/status`,
          {
            context,
            headers: {Accept: 'application/json'},
          } as ApiRequestConfig
        );
      } catch (err) {
        throw apiError(err, context);
      }
      const elapsed = this.runtime.now() - startedAt;
      if (response.status >= 300) {
        const location = response.headers['location'];
        if (typeof location !== 'string' || location === '') {
          throw connectorError(
            'transient_error',
            `Export ${exportId} of quest ${questId} completed but the service gave no download location.`,
            {...context}
          );
        }
        this.logger.info(`Quest ${questId}: export ${exportId} completed after ${(elapsed / 1000).toFixed(1)} s`);
        return {questId, exportId, window, downloadUrl: new URL(location, this.apiUrl).toString()};
      }
      const record = jsonObject(response, context);
      const status = String(record.status ?? '').toUpperCase();
      if (status === 'COMPLETED') {
        // A record instead of the documented redirect: the download path is documented, use it.
        return {
          questId,
          exportId,
          window,
          downloadUrl: new URL(`/v1/quests/${questId}/exports/${exportId}/download`, this.apiUrl).toString(),
        };
      }
      if (status !== 'PENDING' && status !== 'INPROGRESS') {
        throw connectorError(
          'transient_error',
          `Export ${exportId} of quest ${questId} for window ${describeWindow(window)} ended with status ${status || 'unknown'} on the service after ${(elapsed / 1000).toFixed(1)} s.`,
          {...context, exportId, exportStatus: status, window: describeWindow(window)}
        );
      }
      if (status !== last) {
        this.logger.info(`Quest ${questId}: export ${exportId} is ${status} (${(elapsed / 1000).toFixed(1)} s)`);
        last = status;
      }
      if (elapsed + delay > this.poll.timeoutMs) {
        throw connectorError(
          'transient_error',
          `Export ${exportId} of quest ${questId} for window ${describeWindow(window)} was still ${status} after ${Math.round(elapsed / 1000)} s (export_timeout_minutes is ${this.poll.timeoutMs / 60_000}). The service may be busy; the next sync retries this window.`,
          {...context, exportId, window: describeWindow(window)}
        );
      }
      await this.runtime.sleep(delay);
      delay = Math.min(this.poll.maxMs, delay * this.poll.factor);
    }
  }

  /** Opens the file as a stream; a 410 error means the export must be created again. */
  async download(ready: ReadyExport): Promise<Download> {
    const context: RequestContext = {operation: 'Downloading an export', questId: ready.questId};
    let response: AxiosResponse;
    try {
      response = await this.http.get(ready.downloadUrl, {
        context,
        responseType: 'stream',
        decompress: true,
      } as ApiRequestConfig);
    } catch (err) {
      const body = isAxiosError(err) ? await readSmallBody(err.response?.data) : undefined;
      throw apiError(err, context, body);
    }
    const body = response.data as Readable;
    const type = String(response.headers['content-type'] ?? '');
    if (/html/i.test(type)) {
      await readSmallBody(body);
      throw connectorError(
        'transient_error',
        `Downloading export ${ready.exportId} of quest ${ready.questId} returned an HTML page instead of CSV (HTTP ${response.status}). This is usually a gateway problem; the next attempt retries.`,
        {...context, status: response.status}
      );
    }
    const length = Number(response.headers['content-length']);
    return {body, contentLength: Number.isFinite(length) && length >= 0 ? length : undefined};
  }
}

export function isGone(err: unknown): boolean {
  return err instanceof Error && VError.info(err).status === 410;
}
