import {setMaxListeners} from 'events';
import {AirbyteLogger} from 'faros-airbyte-cdk';

import {findQuestInaccessible, RequestContext} from '../api/api-error';
import {exportSettings} from '../api/client';
import {QuestbackConfig, SEPARATORS} from '../core/config';
import {Cancelled, connectorError, errorMessage, isAuthFailure} from '../core/errors';
import {LIMITS} from '../core/limits';
import {Runtime} from '../core/runtime';
import {DAY_MS, formatUtcTimestamp} from '../core/time';
import {QuestCheckpoints, StreamCheckpoints} from './checkpoints';
import {Connection} from './connection';
import {StreamRef, SyncOutput} from './output-port';
import {QuestPlan, QuestSync} from './quest-sync';
import {ExportSlots} from './scheduler';
import {CONNECTOR_FIELDS, questIdFromStreamName} from './schema';
import {cursorOf, densityOf, exportFingerprint, perQuestState, recordedExportsOf} from './state';
import {sinceForStartDate} from './windows';

/** A stream of the configured catalog, as far as the reader needs it. */
export interface ConfiguredStream {
  stream: {
    name: string;
    namespace?: string | null;
    json_schema?: {properties?: Record<string, {title?: unknown}>};
    source_defined_primary_key?: string[][];
  };
  sync_mode: string;
  primary_key?: string[][];
}

/** What a read needs from outside, wired by the source. */
export interface ReadContext {
  config: QuestbackConfig;
  runtime: Runtime;
  logger: AirbyteLogger;
  /** The API client for this read; reports waits for the rate limit to the listener. */
  connect(onThrottle: (ctx: RequestContext | undefined, waitMs: number, resetAt: number) => void): Connection;
  /** The newest moment this read exports (now less settle_seconds). */
  syncEnd: number;
  /** Aborts the read (the process is told to stop, or the consumer went away). */
  signal: AbortSignal;
}

interface StreamPlan {
  ref: StreamRef;
  plan?: QuestPlan;
  checkpoints?: QuestCheckpoints;
  /** Why the stream cannot be read at all. */
  error?: Error;
}

/** A catalog that names a stream twice would read it twice into one table: refused before any request. */
export function checkCatalog(streams: readonly ConfiguredStream[]): void {
  const seen = new Set<string>();
  for (const s of streams) {
    const key = `${s.stream.namespace ?? ''}/${s.stream.name}`;
    if (seen.has(key)) {
      throw connectorError(
        'config_error',
        `The configured catalog lists stream ${s.stream.name} more than once. Each quest is one stream: list it once (in Airbyte, refresh the source schema and save the connection).`,
        {stream: s.stream.name}
      );
    }
    seen.add(key);
  }
}

/** A state that names nothing this read knows is not silently dropped: everything it covered is read again. */
function warnIgnoredState(
  logger: AirbyteLogger,
  catalog: readonly ConfiguredStream[],
  states: ReadonlyMap<string, unknown> & {ignored?: readonly string[]}
): void {
  const names = new Set(catalog.map((c) => c.stream.name));
  // A state for a stream deselected since is normal; one that matches no configured stream at all is not.
  const matched = [...states.keys()].some((name) => names.has(name));
  const strangers = matched ? [] : [...states.keys()];
  const ignored = [
    ...(states.ignored ?? []),
    ...(strangers.length
      ? [
          `the state of ${strangers.length} stream(s) not in this connection's catalog (${strangers
            .slice(0, 5)
            .map((n) => JSON.stringify(n))
            .join(', ')}${strangers.length > 5 ? ', ...' : ''})`,
        ]
      : []),
  ];
  if (!ignored.length) return;
  logger.warn(
    `The input state holds what this connector does not use, and it is ignored: ${ignored.join('; ')}. Streams without a state of their own are read from start_date. If this state came from another connector or an older setup, nothing is wrong; otherwise check the connection's state in Airbyte.`
  );
}

/** Where each stream starts and what its configured schema holds; a bad state fails the whole read here. */
function planStream(
  ctx: ReadContext,
  configured: ConfiguredStream,
  states: ReadonlyMap<string, unknown>,
  out: SyncOutput
): StreamPlan {
  const {config, logger} = ctx;
  const ref: StreamRef = {
    name: configured.stream.name,
    ...(configured.stream.namespace ? {namespace: configured.stream.namespace} : {}),
  };
  const questId = questIdFromStreamName(ref.name);
  if (!questId || !config.quest_ids.includes(questId)) {
    return {
      ref,
      error: connectorError(
        'config_error',
        `Stream ${ref.name} is not one of this source's quests (${config.quest_ids.join(', ')}). Refresh the source schema in Airbyte, or add the quest id to quest_ids.`,
        {stream: ref.name}
      ),
    };
  }
  const properties = configured.stream.json_schema?.properties ?? {};
  const names = Object.keys(properties).filter((c) => !CONNECTOR_FIELDS.has(c));
  const titles = names.map((n) => (typeof properties[n]?.title === 'string' ? (properties[n].title as string) : n));
  const startSince = sinceForStartDate(Date.parse(config.start_date));
  const streamState = states.get(ref.name);
  const incremental = configured.sync_mode === 'incremental';
  const stateCursor = incremental ? cursorOf(streamState, ref.name) : undefined;
  let cursor = stateCursor ?? startSince;
  if (stateCursor !== undefined && stateCursor < startSince) {
    logger.info(
      `Stream ${ref.name}: the state's cursor ${formatUtcTimestamp(stateCursor)} lies before start_date; reading from start_date ${config.start_date}.`
    );
    cursor = startSince;
  }
  let from = cursor;
  if (stateCursor !== undefined && config.lookback_days > 0) {
    from = Math.max(startSince, cursor - config.lookback_days * DAY_MS);
    logger.info(
      `Stream ${ref.name}: re-reading the ${config.lookback_days} day(s) before the cursor for late answers (lookback_days).`
    );
  }
  const density = incremental ? densityOf(streamState) : undefined;
  const primaryKey = (configured.primary_key ?? configured.stream.source_defined_primary_key)?.[0]?.[0];
  return {
    ref,
    plan: {
      questId,
      stream: ref,
      configuredNames: new Set(names),
      configuredTitles: new Set(titles),
      ...(primaryKey !== undefined ? {primaryKey} : {}),
      from,
      end: ctx.syncEnd,
      density,
    },
    checkpoints: new StreamCheckpoints(out, ref, perQuestState).quest(questId, {
      cursor,
      ...(density ? {density} : {}),
      exports: incremental ? recordedExportsOf(streamState) : [],
    }),
  };
}

/**
 * The read command: every configured stream through STARTED, RUNNING, then COMPLETE, or INCOMPLETE
 * with an error trace. Streams run side by side, sharing the export slots, and their records
 * interleave window by window. A failing stream does not stop the others; a failure of the
 * credentials or the token service stops all of them and is reported once. Resolves to false if any
 * stream failed.
 */
export async function readStreams(
  ctx: ReadContext,
  catalog: readonly ConfiguredStream[],
  states: ReadonlyMap<string, unknown> & {ignored?: readonly string[]},
  out: SyncOutput
): Promise<boolean> {
  const {config, logger, runtime} = ctx;
  checkCatalog(catalog);
  warnIgnoredState(logger, catalog, states);
  const plans = catalog.map((configured) => planStream(ctx, configured, states, out));
  const byQuest = new Map(plans.filter((p) => p.plan).map((p) => [p.plan?.questId as string, p.ref]));
  const connection = ctx.connect((request, waitMs, resetAt) => {
    const ref = request?.questId ? byQuest.get(request.questId) : undefined;
    if (!ref) return;
    logger.warn(`Stream ${ref.name} is rate limited for ${Math.round(waitMs / 1000)} s`);
    out.rateLimited(ref, resetAt);
  });
  const slots = new ExportSlots(config.max_concurrent_exports);
  const stopAll = new AbortController();
  // Every quest's sync listens for the stop: as many listeners as quests is the design, not a leak.
  setMaxListeners(0, stopAll.signal);
  const onStop = (): void => stopAll.abort(new Cancelled('the read was stopped'));
  ctx.signal.addEventListener('abort', onStop, {once: true});
  let authError: Error | undefined;
  let ok = true;
  const inaccessible: string[] = [];
  const fingerprint = exportFingerprint(config.api_url, exportSettings(config));

  for (const p of plans) out.status(p.ref, 'STARTED');
  const runOne = async (p: StreamPlan): Promise<void> => {
    try {
      if (p.error || !p.plan || !p.checkpoints) throw p.error;
      out.status(p.ref, 'RUNNING');
      logger.info(
        `Stream ${p.ref.name}: reading from ${formatUtcTimestamp(p.plan.from)} to ${formatUtcTimestamp(p.plan.end)}`
      );
      const sync = new QuestSync(
        {
          api: connection.api,
          slots,
          runtime,
          logger,
          output: out,
          sizing: {
            targetRows: config.target_rows_per_export,
            maxSpanMs: config.window_days ? config.window_days * DAY_MS : undefined,
          },
          exportTimeoutMs: config.export_timeout_minutes * 60_000,
          stallBudgetMs: Math.max(LIMITS.window.stallMs, 2 * config.request_timeout_seconds * 1000),
          fingerprint,
          csv: {separator: SEPARATORS[config.field_separator], acceptStrayQuotes: config.accept_stray_quotes},
          columnNames: config.column_names,
        },
        p.plan,
        p.checkpoints,
        stopAll.signal
      );
      const records = await sync.run();
      logger.info(`Stream ${p.ref.name}: complete, ${records} records`);
      out.status(p.ref, 'COMPLETE');
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err));
      if (stopAll.signal.aborted || isAuthFailure(error)) {
        // Stopped from outside, or the credentials failed: reported once for the whole read.
        if (!authError && isAuthFailure(error)) authError = error;
        if (!stopAll.signal.aborted) stopAll.abort(new Cancelled('the credentials failed'));
      } else if (findQuestInaccessible(error) && config.skip_inaccessible_quests) {
        inaccessible.push(`${p.ref.name}: ${errorMessage(error)}`);
        logger.warn(
          `Stream ${p.ref.name} skipped: ${errorMessage(error)} (skip_inaccessible_quests is on, so the other quests sync and the sync succeeds; this stream's state does not move).`
        );
      } else {
        ok = false;
        logger.error(`Stream ${p.ref.name} failed: ${errorMessage(error)}`);
        await out.error(error, p.ref);
      }
      out.status(p.ref, 'INCOMPLETE');
    }
  };
  try {
    await Promise.all(plans.map(runOne));
  } finally {
    ctx.signal.removeEventListener('abort', onStop);
  }
  if (authError) {
    await out.error(authError);
    return false;
  }
  if (ctx.signal.aborted) return false;
  if (plans.length > 0 && inaccessible.length === plans.length) {
    // A login whose access was withdrawn must not pass as a successful sync with no data.
    await out.error(
      connectorError(
        'config_error',
        `None of the ${plans.length} configured quest(s) could be read, so this sync read nothing (skip_inaccessible_quests skips some quests, not all): ${inaccessible.slice(0, 3).join('; ')}${inaccessible.length > 3 ? '; ...' : ''}. Check that the API login still has access to the quests (ask your Questback account owner), and the quest ids.`,
        {quests: inaccessible.length}
      )
    );
    return false;
  }
  return ok;
}
