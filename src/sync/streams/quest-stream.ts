import {SEPARATORS} from '../../core/config';
import {LIMITS} from '../../core/limits';
import {DAY_MS, formatUtcTimestamp, sinceForStartDate} from '../../core/time';
import {QuestCheckpoints, QuestProgress, StreamCheckpoints} from '../state/checkpoints';
import {QuestPlan, QuestSync} from '../windows/quest-sync';
import {CONNECTOR_FIELDS, questIdFromStreamName} from './record-columns';
import {cursorOf, densityOf, perQuestState, recordedExportsOf} from '../state/stream-state';
import {ConfiguredStream, ReadContext, ReadEnv, StreamDefinition, streamRef} from './stream-definition';

/** Where a quest's read starts: from its state (less any lookback), or just before start_date. */
export function questStart(
  ctx: ReadContext,
  label: string,
  state: unknown,
  incremental: boolean
): {from: number; progress: QuestProgress} {
  const {config, logger} = ctx;
  const startSince = sinceForStartDate(Date.parse(config.start_date));
  const stateCursor = incremental ? cursorOf(state, label) : undefined;
  let cursor = stateCursor ?? startSince;
  if (stateCursor !== undefined && stateCursor < startSince) {
    logger.info(
      `${label}: the state's cursor ${formatUtcTimestamp(stateCursor)} lies before start_date; reading from start_date ${config.start_date}.`
    );
    cursor = startSince;
  }
  let from = cursor;
  if (stateCursor !== undefined && config.lookback_days > 0) {
    from = Math.max(startSince, cursor - config.lookback_days * DAY_MS);
    logger.info(
      `${label}: re-reading the ${config.lookback_days} day(s) before the cursor for late answers (lookback_days).`
    );
  }
  const density = incremental ? densityOf(state) : undefined;
  return {
    from,
    progress: {cursor, ...(density ? {density} : {}), exports: incremental ? recordedExportsOf(state) : []},
  };
}

/** Reads one quest of a stream: its exports in adaptive windows, its rows as the plan's shape, its progress in `checkpoints`. */
export async function readQuest(env: ReadEnv, plan: QuestPlan, checkpoints: QuestCheckpoints): Promise<number> {
  const {config, runtime, logger} = env.ctx;
  logger.info(
    `Stream ${plan.stream.name}: reading quest ${plan.questId} from ${formatUtcTimestamp(plan.from)} to ${formatUtcTimestamp(plan.end)}`
  );
  try {
    return await new QuestSync(
      {
        api: env.connection.api,
        slots: env.slots,
        runtime,
        logger,
        output: env.out,
        sizing: {
          targetRows: config.target_rows_per_export,
          maxSpanMs: config.window_days ? config.window_days * DAY_MS : undefined,
        },
        exportTimeoutMs: config.export_timeout_minutes * 60_000,
        stallBudgetMs: Math.max(LIMITS.window.stallMs, 2 * config.request_timeout_seconds * 1000),
        fingerprint: env.fingerprint,
        csv: {separator: SEPARATORS[config.field_separator], acceptStrayQuotes: config.accept_stray_quotes},
        columnNames: config.column_names,
        onHeader: (header) => env.headers.seen(plan.questId, header),
      },
      plan,
      checkpoints,
      env.stop
    ).run();
  } finally {
    env.headers.ended(plan.questId);
  }
}

/** The configured schema's field names (the connector's own left out) and the header texts they stand for. */
function configuredColumns(configured: ConfiguredStream): {names: Set<string>; titles: Set<string>} {
  const properties = configured.stream.json_schema?.properties ?? {};
  const names = Object.keys(properties).filter((c) => !CONNECTOR_FIELDS.has(c));
  const titles = names.map((n) => (typeof properties[n]?.title === 'string' ? (properties[n].title as string) : n));
  return {names: new Set(names), titles: new Set(titles)};
}

/** The per_quest layout: one stream per quest, `quest_<id>`, its answers as columns, its own state. */
export const questStreams: StreamDefinition = {
  plan(ctx, configured, state, out) {
    const ref = streamRef(configured);
    const questId = questIdFromStreamName(ref.name);
    if (!questId || ctx.config.stream_layout !== 'per_quest') return undefined;
    const incremental = configured.sync_mode === 'incremental';
    const {from, progress} = questStart(ctx, `Stream ${ref.name}`, state, incremental);
    const {names, titles} = configuredColumns(configured);
    const primaryKey = (configured.primary_key ?? configured.stream.source_defined_primary_key)?.[0]?.[0];
    const plan: QuestPlan = {
      questId,
      stream: ref,
      shape: 'columns',
      configuredNames: names,
      configuredTitles: titles,
      ...(primaryKey !== undefined ? {primaryKey} : {}),
      from,
      end: ctx.syncEnd,
      ...(progress.density ? {density: progress.density} : {}),
    };
    const checkpoints = new StreamCheckpoints(out, ref, perQuestState).quest(questId, progress);
    return {
      ref,
      questIds: [questId],
      read: (env) => readQuest(env, plan, checkpoints),
    };
  },
};
