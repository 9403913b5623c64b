import {AxiosInstance, AxiosResponse} from 'axios';
import {randomUUID} from 'crypto';
import {IncomingMessage} from 'http';

import {QuestbackConfig} from '../core/config';
import {EXPORT_SETTING_OPTIONS, ExportSettingsFromSpec} from '../core/spec';
import {isLoopbackHost} from '../core/config-rules';
import {connectorError, errorMessage} from '../core/errors';
import {LIMITS} from '../core/limits';
import {cut, QUOTE_MAX} from '../core/outside-text';
import {formatUtcTimestamp, TimeWindow} from '../core/time';
import {findQuestInaccessible, futureFilter, redactUrl, RequestContext} from './api-error';
import {Download, DownloadClock, downloadTransport, ExportFile} from './download';
import {classifyStatus, ExportStatus} from './export-status';
import {bodyExcerpt, describeProblem, looksLikeHtml, parseProblemDetails} from './problem-details';
import {ListOptions, pagedList, requestPage} from './paged-list';
import {discard, jsonObject, readSmallBody, send} from './request';

/** The export settings the service takes (each from its option, spec-declaration.ts); only CSV is read by this connector. */
export type ExportSettings = {exportType: 'CSV'} & ExportSettingsFromSpec;

export function exportSettings(config: QuestbackConfig): ExportSettings {
  const settings = Object.fromEntries(EXPORT_SETTING_OPTIONS.map(([option, setting]) => [setting, config[option]]));
  return {exportType: 'CSV', ...settings} as ExportSettings;
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

/**
 * Questback's export API, every endpoint on one class (the token aside): create an export for a
 * window, read its status, open its file, and the cheap list request `check` uses. Every request
 * goes through `send` (request.ts), which attaches the context and turns failures into errors a
 * person can act on. Outcomes the caller acts on (a conflict, a vanished export, a gone file) come back typed.
 */
/** What a quest's access check found the login may not read, though the quest's exports are readable. */
export interface AccessNote {
  /** Why the invitations list was refused (the service's answer). */
  invitationsDenied: string;
}

/** A quest's list-style resources (`/v1/quests/<id>/<resource>`), a page at a time, as paged-list.ts reads lists. */
export interface ListApi {
  questList<T>(questId: string, resource: string, options: ListOptions<T>, signal?: AbortSignal): AsyncGenerator<T[]>;
}

export class QuestbackApi implements ExportApi, ListApi {
  constructor(
    private readonly http: AxiosInstance,
    readonly apiUrl: string,
    private readonly settings: ExportSettings,
    private readonly idleTimeoutMs: number,
    /** The clock of a download's time rules. */
    private readonly clock: DownloadClock
  ) {}

  async createExport(questId: string, window: TimeWindow, signal?: AbortSignal): Promise<CreateResult> {
    const context: RequestContext = {operation: 'Creating an export', questId};
    const body = {
      settings: this.settings,
      filter: {since: formatUtcTimestamp(window.since), until: formatUtcTimestamp(window.until)},
    };
    const response = await send(this.http, {
      context,
      accept: [409],
      rejected: (err) => futureFilter(err, body.filter, questId),
      config: {
        method: 'POST',
        url: this.exportsPath(questId),
        data: body,
        signal,
        headers: {'Content-Type': 'application/json', Accept: 'application/json'},
        expectJson: true,
      },
    });
    if (response.status === 409) {
      return {
        kind: 'conflict',
        explanation: describeProblem(parseProblemDetails(response.data)) ?? 'HTTP 409 Conflict',
      };
    }
    const exportId = jsonObject(response, context).exportId;
    // An id longer than any quotation is no id: it would go into every message and the state.
    if (typeof exportId !== 'string' || exportId === '' || exportId.length > QUOTE_MAX) {
      throw connectorError('transient_error', `Creating an export for quest ${questId} returned no usable exportId.`, {
        ...context,
        status: response.status,
      });
    }
    return {kind: 'created', exportId};
  }

  async exportStatus(questId: string, exportId: string, signal?: AbortSignal): Promise<ExportStatus> {
    const context: RequestContext = {operation: 'Checking export status', questId};
    const statusUrl = `${this.exportPath(questId, exportId)}/status`;
    const response = await send(this.http, {
      context,
      accept: [404, 410],
      config: {method: 'GET', url: statusUrl, signal, headers: {Accept: 'application/json'}, expectJson: true},
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
    const status = classifyStatus(jsonObject(response, context).status);
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
      const response = await send(this.http, {
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
          clock: this.clock,
        }),
      };
    }
    throw connectorError(
      'transient_error',
      `Downloading export ${exportId} of quest ${questId}: more than ${LIMITS.downloadRedirects} redirects.`,
      {...context, exportId}
    );
  }

  /**
   * The cheapest read of a quest: proves the token works and the quest is readable; needs a well-formed
   * answer. A 403 there may refuse the invitations only (their own permission): the status of an export
   * that does not exist then tells whether the quest's exports are readable (404) or not (403 again).
   * Resolves to what the login may not read, if the quest is readable otherwise.
   */
  async checkAccess(questId: string, signal?: AbortSignal): Promise<AccessNote | void> {
    const context: RequestContext = {operation: 'Checking access', questId, setting: 'api_url', baseUrl: this.apiUrl};
    const call = {url: `${this.questPath(questId)}/invitations`, context: {...context, questId}, signal};
    let response: AxiosResponse;
    try {
      response = await requestPage(this.http, call, {skip: 0, take: 0});
    } catch (err) {
      if (findQuestInaccessible(err)?.status !== 403) throw err;
      try {
        await this.exportStatus(questId, randomUUID(), signal);
      } catch (exports) {
        throw findQuestInaccessible(exports) ? err : exports;
      }
      return {invitationsDenied: errorMessage(err)};
    }
    if (response.status !== 200) {
      throw connectorError(
        'config_error',
        `Checking access for quest ${questId}: api_url (${this.apiUrl}) answered HTTP ${response.status}${response.headers['location'] ? ` (a redirect to ${cut(String(response.headers['location']))})` : ''} instead of the quest's invitations. Check api_url.`,
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

  /** A quest's list-style resource (`/v1/quests/<id>/<resource>`), a page at a time, as paged-list.ts reads lists. */
  questList<T>(questId: string, resource: string, options: ListOptions<T>, signal?: AbortSignal): AsyncGenerator<T[]> {
    const context = {operation: `Listing the ${resource}`, questId};
    return pagedList(this.http, {url: `${this.questPath(questId)}/${resource}`, context, signal}, options);
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
}
