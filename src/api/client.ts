import {AxiosInstance, AxiosRequestConfig, AxiosResponse, isAxiosError} from 'axios';
import {IncomingMessage} from 'http';
import {Readable} from 'stream';
import VError from 'verror';

import {QuestbackConfig} from '../core/config';
import {isLoopbackHost} from '../core/config-rules';
import {connectorError} from '../core/errors';
import {LIMITS} from '../core/limits';
import {formatUtcTimestamp, TimeWindow} from '../core/time';
import {apiError, redactUrl, RequestContext} from './api-error';
import {Download, downloadTransport, ExportFile} from './download';
import {classifyStatus, ExportStatus} from './export-status';
import {bodyExcerpt, describeProblem, looksLikeHtml, parseProblemDetails} from './problem-details';

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

export type CreateResult =
  | {kind: 'created'; exportId: string}
  /** 409: the service is generating another export of this quest and takes one at a time. */
  | {kind: 'conflict'; explanation: string};

export type DownloadResult = {kind: 'file'; download: ExportFile} | {kind: 'gone'; httpStatus: number};

/** The export endpoints, as the sync layer uses them (tests give a fake). */
export interface ExportApi {
  createExport(questId: string, window: TimeWindow, signal?: AbortSignal): Promise<CreateResult>;
  exportStatus(questId: string, exportId: string, signal?: AbortSignal): Promise<ExportStatus>;
  openDownload(questId: string, exportId: string, url: string, signal?: AbortSignal): Promise<DownloadResult>;
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

interface Call {
  context: RequestContext;
  config: AxiosRequestConfig;
  /** Statuses the caller handles itself, returned instead of thrown. */
  accept?: readonly number[];
  /** Turns a failure the caller can say more about into a better error; undefined keeps it. */
  rejected?: (err: VError) => VError | undefined;
}

/**
 * Questback's export API, every endpoint on one class (the token aside): create an export for a
 * window, read its status, open its file, and the cheap list request `check` uses. One private
 * method sends every request; it attaches the context and turns failures into errors a person can
 * act on. Outcomes the caller acts on (a conflict, a vanished export, a gone file) come back typed.
 */
export class QuestbackApi implements ExportApi {
  constructor(
    private readonly http: AxiosInstance,
    readonly apiUrl: string,
    private readonly settings: ExportSettings,
    private readonly idleTimeoutMs: number
  ) {}

  async createExport(questId: string, window: TimeWindow, signal?: AbortSignal): Promise<CreateResult> {
    const context: RequestContext = {operation: 'Creating an export', questId};
    const body = {
      settings: this.settings,
      filter: {since: formatUtcTimestamp(window.since), until: formatUtcTimestamp(window.until)},
    };
    const response = await this.request({
      context,
      accept: [409],
      rejected: (err) => futureFilter(err, body.filter, questId),
      config: {
        method: 'POST',
        url: this.exportsPath(questId),
        data: body,
        signal,
        headers: {'Content-Type': 'application/json', Accept: 'application/json'},
      },
    });
    if (response.status === 409) {
      return {
        kind: 'conflict',
        explanation: describeProblem(parseProblemDetails(response.data)) ?? 'HTTP 409 Conflict',
      };
    }
    const exportId = this.jsonObject(response, context).exportId;
    if (typeof exportId !== 'string' || exportId === '') {
      throw connectorError('transient_error', `Creating an export for quest ${questId} returned no exportId.`, {
        ...context,
        status: response.status,
      });
    }
    return {kind: 'created', exportId};
  }

  async exportStatus(questId: string, exportId: string, signal?: AbortSignal): Promise<ExportStatus> {
    const context: RequestContext = {operation: 'Checking export status', questId};
    const statusUrl = `${this.exportPath(questId, exportId)}/status`;
    const response = await this.request({
      context,
      accept: [404, 410],
      config: {method: 'GET', url: statusUrl, signal, headers: {Accept: 'application/json'}},
    });
    if (response.status === 404 || response.status === 410) return {kind: 'vanished', httpStatus: response.status};
    if (response.status >= 300) {
      const location = response.headers['location'];
      if (typeof location !== 'string' || location === '') {
        throw connectorError(
          'transient_error',
          `Export ${exportId} of quest ${questId} completed (HTTP ${response.status}) but the service gave no download location.`,
          {...context, exportId}
        );
      }
      // A relative Location is relative to the status address it came with.
      return {kind: 'completed', downloadUrl: new URL(location, statusUrl).toString()};
    }
    const status = classifyStatus(this.jsonObject(response, context).status);
    if (status.kind !== 'done') return status;
    // A record instead of the documented redirect: its Location, when it has one, is where the file
    // is (the service may serve it nowhere else); else the documented download path.
    const location = response.headers['location'];
    const downloadUrl =
      typeof location === 'string' && location !== ''
        ? new URL(location, statusUrl).toString()
        : `${this.exportPath(questId, exportId)}/download`;
    return {kind: 'completed', downloadUrl};
  }

  /**
   * Opens the file of a completed export. Redirects are followed (to a CDN, say) only over https and
   * never in a loop; only a 200 is a file. A 404 or 410 means the export is gone and must be created again.
   */
  async openDownload(questId: string, exportId: string, url: string, signal?: AbortSignal): Promise<DownloadResult> {
    const context: RequestContext = {operation: 'Downloading an export', questId};
    const seen = new Set<string>();
    let target = url;
    for (let hop = 0; hop <= LIMITS.downloadRedirects; hop++) {
      const fail = (what: string): never => {
        throw connectorError(
          'transient_error',
          `Downloading export ${exportId} of quest ${questId}: ${what}. Nothing of this window is saved; the next attempt retries it.`,
          {...context, exportId}
        );
      };
      if (seen.has(target)) fail(`the service redirected in a loop (back to ${redactUrl(target)})`);
      seen.add(target);
      const parsed = new URL(target);
      if (parsed.protocol !== 'https:' && !(parsed.protocol === 'http:' && isLoopbackHost(parsed.hostname))) {
        fail(`the service redirected to ${parsed.protocol}//${parsed.host}, but files are downloaded over https only`);
      }
      const response = await this.request({
        context,
        accept: [404, 410],
        config: {
          method: 'GET',
          url: target,
          signal,
          responseType: 'stream',
          decompress: false,
          headers: {'Accept-Encoding': 'gzip, deflate, br'},
          transport: downloadTransport,
        },
      });
      const status = response.status;
      if (status === 404 || status === 410) {
        discard(response.data);
        return {kind: 'gone', httpStatus: status};
      }
      if (status >= 300 && status < 400) {
        discard(response.data);
        const location = response.headers['location'];
        if (typeof location !== 'string' || location === '')
          fail(`the service answered HTTP ${status} without a Location to follow`);
        target = new URL(location as string, target).toString();
        continue;
      }
      if (status !== 200) {
        discard(response.data);
        fail(`the service answered HTTP ${status} instead of the file`);
      }
      const type = String(response.headers['content-type'] ?? '');
      if (/html|json/i.test(type)) {
        const text = await readSmallBody(response.data);
        fail(
          `the service answered a ${/html/i.test(type) ? 'HTML page' : 'JSON document'} (${type}) instead of CSV${text && !looksLikeHtml(text) ? `: ${describeProblem(parseProblemDetails(text)) ?? bodyExcerpt(text)}` : ''}`
        );
      }
      return {
        kind: 'file',
        download: new Download(response.data as IncomingMessage, {
          questId,
          exportId,
          idleTimeoutMs: this.idleTimeoutMs,
        }),
      };
    }
    throw connectorError(
      'transient_error',
      `Downloading export ${exportId} of quest ${questId}: more than ${LIMITS.downloadRedirects} redirects.`,
      {...context, exportId}
    );
  }

  /** The cheapest read of a quest: proves the token works and the quest is readable; needs a well-formed answer. */
  async checkAccess(questId: string, signal?: AbortSignal): Promise<void> {
    const context: RequestContext = {operation: 'Checking access', questId, setting: 'api_url', baseUrl: this.apiUrl};
    const response = await this.request({
      context,
      config: {method: 'GET', url: `${this.questPath(questId)}/invitations`, params: {skip: 0, take: 0}, signal},
    });
    if (response.status !== 200) {
      throw connectorError(
        'config_error',
        `Checking access for quest ${questId}: api_url (${this.apiUrl}) answered HTTP ${response.status}${response.headers['location'] ? ` (a redirect to ${response.headers['location']})` : ''} instead of the quest's invitations. Check api_url.`,
        {...context, status: response.status}
      );
    }
    let data: unknown = response.data;
    if (typeof data === 'string') {
      const text = data;
      if (looksLikeHtml(text)) {
        throw connectorError(
          'config_error',
          `Checking access for quest ${questId}: api_url (${this.apiUrl}) answered an HTML page instead of the API's JSON. Check api_url (it must be the API, not the web application).`,
          {...context, status: 200}
        );
      }
      try {
        data = JSON.parse(text);
      } catch {
        data = undefined;
      }
    }
    if (!data || typeof data !== 'object') {
      throw connectorError(
        'config_error',
        `Checking access for quest ${questId}: api_url (${this.apiUrl}) did not answer with the API's JSON. Check api_url.`,
        {...context, status: 200}
      );
    }
  }

  private questPath(questId: string): string {
    return `${this.apiUrl}/v1/quests/${encodeURIComponent(questId)}`;
  }

  private exportsPath(questId: string): string {
    return `${this.questPath(questId)}/exports`;
  }

  private exportPath(questId: string, exportId: string): string {
    return `${this.exportsPath(questId)}/${encodeURIComponent(exportId)}`;
  }

  private async request(call: Call): Promise<AxiosResponse> {
    try {
      return await this.http.request({...call.config, context: call.context});
    } catch (err) {
      if (isAxiosError(err) && err.response && call.accept?.includes(err.response.status)) {
        if (call.config.responseType === 'stream' || err.response.data instanceof Readable) {
          err.response.data = await readSmallBody(err.response.data);
        }
        return err.response;
      }
      const body =
        isAxiosError(err) && err.response?.data instanceof Readable
          ? await readSmallBody(err.response.data)
          : undefined;
      const error = apiError(err, call.context, body);
      throw call.rejected?.(error) ?? error;
    }
  }

  /** A JSON object from a 2xx answer, or an error saying what came instead (HTML, nothing). */
  private jsonObject(response: AxiosResponse, ctx: RequestContext): Record<string, unknown> {
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
      `${ctx.operation} for quest ${ctx.questId} failed: HTTP ${response.status} came with ${what} instead of JSON. This is usually a gateway problem.`,
      {...ctx, status: response.status}
    );
  }
}

/** Drops a body not read (an error answer's was already read into text). */
function discard(data: unknown): void {
  if (data instanceof Readable) data.destroy();
}

/**
 * A 400 on create whose validation errors say that since or until lies in the future: the service's
 * clock is behind this machine's by more than settle_seconds. Said as such, naming the setting,
 * instead of the general "check the export settings".
 */
function futureFilter(err: VError, filter: {since: string; until: string}, questId: string): VError | undefined {
  const info = VError.info(err);
  if (info.status !== 400) return undefined;
  const errors = (info.validationErrors ?? {}) as Record<string, string[]>;
  const texts = Object.entries(errors).map(([field, messages]) => `${field} ${messages.join(' ')}`);
  if (typeof info.explanation === 'string') texts.push(info.explanation);
  const fields = (['until', 'since'] as const).filter((name) =>
    texts.some((text) => new RegExp(`\\b${name}\\b`, 'i').test(text) && /future/i.test(text))
  );
  if (!fields.length) return undefined;
  const asked = fields.map((name) => `${name} ${filter[name]}`).join(' and ');
  const serverDate = typeof info.serverDate === 'string' ? Date.parse(info.serverDate) : NaN;
  const clock = Number.isNaN(serverDate)
    ? ''
    : ` (its clock said ${new Date(serverDate).toISOString()} when it answered)`;
  return connectorError(
    'config_error',
    `Creating an export for quest ${questId} failed: the service rejected ${asked} as in the future${clock}, so its clock is behind this machine's. Raise settle_seconds above the difference (the connector asks only for responses older than settle_seconds), or have the clocks synchronised. The service answered: HTTP 400${info.explanation ? ` - ${String(info.explanation)}` : ''}.`,
    info,
    err
  );
}
