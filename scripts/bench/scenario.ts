// Building blocks of the scenarios: connector configs and catalogs, tokens, and reading the
// simulator's request log.

import fs from 'fs';
import path from 'path';

import {binMainArgv} from '../../harness/bin-main';
import {questSchema} from '../../src/sync/streams/quest-stream';
import {CURSOR_FIELD, recordColumns} from '../../src/sync/streams/record-columns';
import type {RequestRecord} from '../../simulator';
import {PipedRun, runNode} from './proc';
import {ConsumerReport, SimInfo} from './types';

export const DAY_MS = 86_400_000;

export function writeJson(dir: string, name: string, value: unknown): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, JSON.stringify(value, null, 2));
  return file;
}

/** A connector config for a simulator; settle_seconds 0 so the rows just written count. */
export function connectorConfig(info: SimInfo, overrides: Record<string, unknown>): Record<string, unknown> {
  return {
    client_id: info.clientId,
    client_secret: info.clientSecret,
    project_id: info.projectId,
    api_url: info.apiUrl,
    auth_url: info.authUrl,
    quest_ids: info.questIds,
    settle_seconds: 0,
    ...overrides,
  };
}

export function streamName(questId: string): string {
  return `quest_${questId.replace(/-/g, '_')}`;
}

interface CatalogStream {
  name: string;
}

/** Runs `discover` and turns its CATALOG into a full_refresh configured catalog, as Airbyte would. */
export async function discoverCatalog(
  configFile: string,
  timeoutMs: number
): Promise<{catalog: {streams: unknown[]}; wallMs: number}> {
  const run = await runNode(binMainArgv(['discover', '--config', configFile]), timeoutMs, 'discover');
  const messages = run.stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as {type: string; catalog?: {streams: CatalogStream[]}});
  const found = messages.find((m) => m.type === 'CATALOG')?.catalog;
  if (run.code !== 0 || !found)
    throw new Error(`discover failed (exit ${run.code}): ${run.stdout.slice(-2000)} ${run.stderr}`);
  return {
    catalog: {
      streams: found.streams.map((stream) => ({stream, sync_mode: 'full_refresh', destination_sync_mode: 'overwrite'})),
    },
    wallMs: run.wallMs,
  };
}

/** Keeps the streams of the given quests, in that order. */
export function selectStreams(catalog: {streams: unknown[]}, questIds: readonly string[]): {streams: unknown[]} {
  const byName = new Map(catalog.streams.map((s) => [(s as {stream: CatalogStream}).stream.name, s]));
  return {
    streams: questIds.map((id) => {
      const s = byName.get(streamName(id));
      if (!s) throw new Error(`discover returned no stream for quest ${id}`);
      return s;
    }),
  };
}

/**
 * A configured catalog without running discover, for scenarios where discover would cost more long
 * exports: each stream's schema is what discover would list for the quest's export header (the
 * simulator reports the headers; warehouse column names, the connector's default). The connector
 * refuses a schema that lists none of the file's columns, so an empty schema will not do.
 */
export function catalogFor(
  info: SimInfo,
  questIds: readonly string[],
  syncMode: 'full_refresh' | 'incremental' = 'full_refresh'
): {streams: unknown[]} {
  return {
    streams: questIds.map((id) => {
      const header = info.headers[id];
      if (!header) throw new Error(`the simulator reported no header for quest ${id}`);
      return {
        stream: {
          name: streamName(id),
          json_schema: questSchema(recordColumns(header, 'warehouse')),
          supported_sync_modes: ['full_refresh', 'incremental'],
          source_defined_cursor: true,
          default_cursor_field: [CURSOR_FIELD],
        },
        sync_mode: syncMode,
        destination_sync_mode: syncMode === 'incremental' ? 'append' : 'overwrite',
        ...(syncMode === 'incremental' ? {cursor_field: [CURSOR_FIELD]} : {}),
      };
    }),
  };
}

/** A state file as Airbyte passes it: the per-stream states of a run's last STATE messages. */
export function stateInput(lastStates: Record<string, unknown>): unknown[] {
  return Object.values(lastStates).map((state) => ({type: 'STREAM', ...(state as object)}));
}

export async function fetchToken(info: SimInfo): Promise<string> {
  const form = new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: info.clientId,
    client_secret: info.clientSecret,
    scope: `urn:zitadel:iam:org:project:id:${info.projectId}:aud`,
  });
  const res = await fetch(`${info.authUrl}/oauth/v2/token`, {
    method: 'POST',
    headers: {'Content-Type': 'application/x-www-form-urlencoded'},
    body: form.toString(),
    signal: AbortSignal.timeout(10_000),
  });
  const body = (await res.json()) as {access_token?: string};
  if (!res.ok || !body.access_token) throw new Error(`token request failed: HTTP ${res.status}`);
  return body.access_token;
}

export interface RequestCounts {
  token: number;
  create: number;
  status: number;
  download: number;
  other: number;
  total: number;
  /** From the first export created to the first status answer that points at the file (302), ms. */
  readySeenAfterMs?: number;
}

export function kindOf(r: RequestRecord): keyof Omit<RequestCounts, 'total' | 'readySeenAfterMs'> {
  if (r.method === 'POST' && r.path === '/oauth/v2/token') return 'token';
  if (r.method === 'POST' && /^\/v1\/quests\/[^/]+\/exports$/.test(r.path)) return 'create';
  if (r.method === 'GET' && r.path.endsWith('/status')) return 'status';
  if (r.method === 'GET' && r.path.endsWith('/download')) return 'download';
  return 'other';
}

/** Counts the requests that arrived at or after `since` (the start of one connector run). */
export function countRequests(records: readonly RequestRecord[], since: number): RequestCounts {
  const counts: RequestCounts = {token: 0, create: 0, status: 0, download: 0, other: 0, total: 0};
  let createdAt: number | undefined;
  for (const r of records) {
    if (r.at < since) continue;
    const kind = kindOf(r);
    counts[kind]++;
    counts.total++;
    if (kind === 'create') createdAt ??= r.at;
    if (kind === 'status' && r.status === 302 && createdAt !== undefined) counts.readySeenAfterMs ??= r.at - createdAt;
  }
  return counts;
}

/** The non-RECORD lines of a run that say something went wrong. */
export function problems(report: ConsumerReport): string[] {
  const out: string[] = [];
  for (const line of report.others) {
    try {
      const m = JSON.parse(line) as {
        type?: string;
        trace?: {type?: string; error?: {message?: string}};
        log?: {level?: string; message?: string};
      };
      if (m.type === 'TRACE' && m.trace?.type === 'ERROR') out.push(`error trace: ${m.trace.error?.message ?? line}`);
      else if (m.type === 'LOG' && (m.log?.level === 'ERROR' || m.log?.level === 'FATAL'))
        out.push(`error log: ${m.log.message ?? line}`);
    } catch {
      out.push(`not JSON: ${line.slice(0, 300)}`);
    }
  }
  return out;
}

/** Fails loudly when a run did not deliver every row cleanly: a fast wrong answer is no figure. */
export function checkRun(label: string, run: PipedRun, expectedRecords: number): void {
  const trouble = problems(run.consumer);
  if (run.producer.code !== 0 || run.consumer.records !== expectedRecords || trouble.length) {
    throw new Error(
      `${label}: exit ${run.producer.code ?? run.producer.signal}, ${run.consumer.records} of ${expectedRecords} records` +
        `${trouble.length ? `; ${trouble.slice(0, 5).join('; ')}` : ''}${run.producer.stderr ? `; stderr: ${run.producer.stderr.slice(-2000)}` : ''}`
    );
  }
}
