import {setMaxListeners} from 'events';
import {AirbyteLogger} from 'faros-airbyte-cdk/lib/logger';

import {findQuestInaccessible, RequestContext} from '../../api/api-error';
import {exportSettings} from '../../api/client';
import {Cancelled, connectorError, errorMessage, isAuthFailure} from '../../core/errors';
import {ExportSlots} from '../exports/export-slots';
import {StreamRef, SyncOutput} from '../output-port';
import {Heartbeat} from '../state/heartbeat';
import {exportFingerprint} from '../state/stream-state';
import {layoutOfStream} from '../streams/catalog';
import {
  checkSyncMode,
  ConfiguredStream,
  HeaderBoard,
  PlanContext,
  ReadEnv,
  StreamDefinition,
  StreamRead,
  streamRef,
} from '../streams/stream-definition';
import {Connection} from '../../api/connection';
import {plural} from '../../core/quantities';
import {cut, quote} from '../../core/outside-text';

export type {ConfiguredStream} from '../streams/stream-definition';

/** What a read needs from outside, wired by the source. */
interface ReadContext extends PlanContext {
  /** The API client for this read; reports waits for the rate limit to the listener. */
  connect(onThrottle: (ctx: RequestContext | undefined, waitMs: number, resetAt: number) => void): Connection;
  /** Aborts the read (the process is told to stop, or the consumer went away). */
  signal: AbortSignal;
  /** The kinds of stream the source has (catalog.ts); a configured stream is read by the one it belongs to. */
  definitions: readonly StreamDefinition[];
}

interface PlannedStream {
  ref: StreamRef;
  read?: StreamRead;
  /** Why the stream cannot be read at all. */
  error?: Error;
}

/** A catalog that names a stream twice would read it twice into one table: refused before any request. */
function checkCatalog(streams: readonly ConfiguredStream[]): void {
  const seen = new Set<string>();
  for (const s of streams) {
    const key = `${s.stream.namespace ?? ''}/${s.stream.name}`;
    if (seen.has(key)) {
      throw connectorError(
        'config_error',
        `The configured catalog lists stream ${cut(s.stream.name)} more than once. Each quest is one stream: list it once (in Airbyte, refresh the source schema and save the connection).`,
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
            .map((n) => quote(n))
            .join(', ')}${strangers.length > 5 ? ', ...' : ''})`,
        ]
      : []),
  ];
  if (!ignored.length) return;
  logger.warn(
    `The input state holds what this connector does not use, and it is ignored: ${ignored.slice(0, 5).join('; ')}${ignored.length > 5 ? `; and ${ignored.length - 5} more` : ''}. Streams without a state of their own are read from start_date. If this state came from another connector or an older setup, nothing is wrong; otherwise check the connection's state in Airbyte.`
  );
}

/** Once for the read: hashes under another hash_salt than the earlier syncs' no longer match theirs. */
function warnSaltChanged(logger: AirbyteLogger, plans: readonly PlannedStream[]): void {
  const changed = plans.filter((p) => p.read?.saltChanged).map((p) => p.ref.name);
  if (!changed.length) return;
  const named = `${changed.slice(0, 5).join(', ')}${changed.length > 5 ? ', ...' : ''}`;
  logger.warn(
    `hash_salt is not the one the earlier syncs hashed with (the state of ${plural(changed.length, 'stream')} says so: ${named}): from this sync on, a value of a column that sensitive_columns hashes gets another hash than the same value had before, so hashed values no longer match across syncs (joins, distinct counts). If the change was not intended, set the earlier hash_salt back before the next sync. If it was, records read from now on carry the new hashes; a full refresh of the streams re-hashes the earlier ones.`
  );
}

/**
 * The configured stream's read, as the definition of its kind plans it; a stream of no kind, of a
 * quest not configured, or in a sync mode its kind does not support, is an error of its own.
 */
function planStream(
  ctx: ReadContext,
  configured: ConfiguredStream,
  states: ReadonlyMap<string, unknown>,
  out: SyncOutput
): PlannedStream {
  const ref = streamRef(configured);
  const {quest_ids} = ctx.config;
  for (const definition of ctx.definitions) {
    const read = definition.plan(ctx, configured, states.get(ref.name), out);
    if (!read) continue;
    const stranger = read.questIds.find((q) => !quest_ids.includes(q));
    if (stranger !== undefined) break;
    const error = checkSyncMode(definition.support, configured);
    return error ? {ref, error} : {ref, read};
  }
  const layout = layoutOfStream(ref.name);
  const {stream_layout} = ctx.config;
  const what =
    layout && layout !== stream_layout
      ? `Stream ${cut(ref.name)} is a stream of stream_layout "${layout}", and this source's stream_layout is "${stream_layout}". To read it, set stream_layout to "${layout}"; to read the streams of "${stream_layout}" instead, refresh the source schema in Airbyte and save the connection.`
      : `Stream ${cut(ref.name)} is not one of this source's streams (stream_layout ${stream_layout}, quests ${quest_ids.slice(0, 5).join(', ')}${quest_ids.length > 5 ? ', ...' : ''}). Refresh the source schema in Airbyte, or add the quest id to quest_ids.`;
  return {ref, error: connectorError('config_error', what, {stream: ref.name})};
}

/**
 * The read command: every configured stream through STARTED, RUNNING, then COMPLETE, or INCOMPLETE
 * with an error trace. Streams run side by side, sharing the export slots, and their records
 * interleave window by window. A failing stream does not stop the others; a failure of the
 * credentials or the token service stops all of them and is reported once. When no quest at all
 * could be read (every one inaccessible), the read fails as a config_error. Resolves to false if
 * any stream failed.
 */
export async function readStreams(
  ctx: ReadContext,
  catalog: readonly ConfiguredStream[],
  states: ReadonlyMap<string, unknown> & {ignored?: readonly string[]},
  out: SyncOutput
): Promise<boolean> {
  const {config, logger} = ctx;
  checkCatalog(catalog);
  warnIgnoredState(logger, catalog, states);
  // Every record and STATE goes through the heartbeat, which notices long silences.
  const heartbeat = new Heartbeat(ctx.runtime, logger);
  const output = heartbeat.output(out);
  const plans = catalog.map((configured) => planStream(ctx, configured, states, output));
  warnSaltChanged(logger, plans);
  const byQuest = new Map<string, StreamRef>();
  for (const p of plans) for (const q of p.read?.questIds ?? []) if (!byQuest.has(q)) byQuest.set(q, p.ref);
  const connection = ctx.connect((request, waitMs, resetAt) => {
    const ref = request?.questId ? byQuest.get(request.questId) : undefined;
    if (!ref) return;
    logger.warn(`Stream ${ref.name} is rate limited for ${Math.round(waitMs / 1000)} s`);
    out.rateLimited(ref, resetAt);
  });
  const stopAll = new AbortController();
  // Every quest's sync listens for the stop: as many listeners as quests is the design, not a leak.
  setMaxListeners(0, stopAll.signal);
  const onStop = (): void => stopAll.abort(new Cancelled('the read was stopped'));
  ctx.signal.addEventListener('abort', onStop, {once: true});
  const env: ReadEnv = {
    ctx,
    api: connection.api,
    slots: new ExportSlots(config.max_concurrent_exports),
    out: output,
    stop: stopAll.signal,
    fingerprint: exportFingerprint(config.api_url, exportSettings(config)),
    headers: new HeaderBoard(),
    questsRead: new Set(plans.flatMap((p) => (p.read?.readsResponses ? p.read.questIds : []))),
  };
  let authError: Error | undefined;
  let ok = true;
  const quests = new Set(plans.flatMap((p) => p.read?.questIds ?? []));
  // A quest could not be read when every stream that has it skipped it (a stream of another resource,
  // such as invitations, may be refused where the responses are not).
  const readers = new Map<string, number>();
  for (const q of plans.flatMap((p) => p.read?.questIds ?? [])) readers.set(q, (readers.get(q) ?? 0) + 1);
  const skippedBy = new Map<string, Set<string>>();
  const inaccessible = new Map<string, string>();
  const skipped = (ref: StreamRef) => (questId: string, why: string) => {
    if (!skippedBy.has(questId)) skippedBy.set(questId, new Set());
    skippedBy.get(questId)?.add(ref.name);
    if (skippedBy.get(questId)?.size === readers.get(questId)) inaccessible.set(questId, why);
    logger.warn(
      `Stream ${ref.name}: quest ${questId} skipped: ${why} (skip_inaccessible_quests is on, so the other quests sync; this quest's state does not move).`
    );
  };

  for (const p of plans) out.status(p.ref, 'STARTED');
  const runOne = async (p: PlannedStream): Promise<void> => {
    const unwatch = p.read?.heartbeat && heartbeat.watch(p.read.heartbeat);
    try {
      if (p.error || !p.read) throw p.error;
      out.status(p.ref, 'RUNNING');
      const records = await p.read.read(env, skipped(p.ref));
      logger.info(`Stream ${p.ref.name}: complete, ${plural(records, 'record')}`);
      out.status(p.ref, 'COMPLETE');
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err));
      const questId = p.read?.questIds.length === 1 ? p.read.questIds[0] : undefined;
      if (stopAll.signal.aborted || isAuthFailure(error)) {
        // Stopped from outside, or the credentials failed: reported once for the whole read.
        if (!authError && isAuthFailure(error)) authError = error;
        if (!stopAll.signal.aborted) stopAll.abort(new Cancelled('the credentials failed'));
      } else if (questId !== undefined && findQuestInaccessible(error) && config.skip_inaccessible_quests) {
        skipped(p.ref)(questId, errorMessage(error));
      } else {
        ok = false;
        logger.error(`Stream ${cut(p.ref.name)} failed: ${errorMessage(error)}`);
        await out.error(error, p.ref);
      }
      out.status(p.ref, 'INCOMPLETE');
    } finally {
      unwatch?.();
    }
  };
  // The heartbeat ends with the streams, or as soon as they are told to stop.
  const beating = new AbortController();
  stopAll.signal.addEventListener('abort', () => beating.abort(), {once: true, signal: beating.signal});
  const heart = heartbeat.run(beating.signal);
  try {
    await Promise.all(plans.map(runOne));
  } finally {
    ctx.signal.removeEventListener('abort', onStop);
    beating.abort();
    await heart;
  }
  if (authError) {
    await out.error(authError);
    return false;
  }
  if (ctx.signal.aborted) return false;
  if (quests.size > 0 && inaccessible.size === quests.size) {
    // A login whose access was withdrawn must not pass as a successful sync with no data.
    const reasons = [...inaccessible].map(([q, why]) => `${q}: ${why}`);
    await out.error(
      connectorError(
        'config_error',
        `None of the ${quests.size} configured quest(s) could be read, so this sync read nothing (skip_inaccessible_quests skips some quests, not all): ${reasons.slice(0, 3).join('; ')}${reasons.length > 3 ? '; ...' : ''}. Check that the API login still has access to the quests (ask your Questback account owner), and the quest ids.`,
        {quests: quests.size}
      )
    );
    return false;
  }
  return ok;
}
