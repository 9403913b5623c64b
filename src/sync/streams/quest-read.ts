import {SEPARATORS} from '../../core/config';
import {isAuthFailure} from '../../core/errors';
import {LIMITS} from '../../core/limits';
import {resumeSecret, saltCheck} from '../../core/keyed-hash';
import {DAY_MS, formatUtcTimestamp, sinceForStartDate} from '../../core/time';
import {QuestCheckpoints, QuestProgress} from '../state/checkpoints';
import {
  cursorOf,
  densityOf,
  emittedOf,
  futureCursorWarning,
  recordedExportsOf,
  saltCheckOf,
  sensitiveMatchedOf,
} from '../state/stream-state';
import {QuestPlan} from '../windows/quest-plan';
import {QuestSync} from '../windows/quest-sync';
import {FingerprintKey} from '../windows/resume';
import {PlanContext, ReadEnv} from './stream-definition';

// What the streams of responses (a stream per quest, or one for all) share: where a quest starts, and its read.

/**
 * Where a quest's read starts: from its state (less any lookback), or just before start_date.
 * `saltChanged`: its state says its cells were hashed under another hash_salt than this read's.
 * `sensitiveMatched`: the sensitive_columns entries that protected a column of it before (the list
 * the progress carries, which its read's QuestSensitivity adds to).
 */
export function questStart(
  ctx: PlanContext,
  label: string,
  state: unknown,
  incremental: boolean
): {from: number; progress: QuestProgress; saltChanged: boolean; sensitiveMatched: string[]} {
  const {config, logger} = ctx;
  const startSince = sinceForStartDate(Date.parse(config.start_date));
  const stateCursor = incremental ? cursorOf(state, label) : undefined;
  // A cursor after this sync's time is moved back to the sync's end: this sync reads nothing, the
  // next one reads what was created since, and what the state recorded past it is not used.
  const now = ctx.runtime.now();
  const future = stateCursor !== undefined && stateCursor > now;
  if (future) {
    logger.warn(
      futureCursorWarning(
        label,
        stateCursor,
        now,
        `This sync reads nothing of it and moves the cursor back to ${formatUtcTimestamp(ctx.syncEnd)}, from where the next sync reads.`
      )
    );
  }
  let cursor = future ? ctx.syncEnd : (stateCursor ?? startSince);
  if (stateCursor !== undefined && stateCursor < startSince) {
    logger.info(
      `${label}: the state's cursor ${formatUtcTimestamp(stateCursor)} lies before start_date; reading from start_date ${config.start_date}.`
    );
    cursor = startSince;
  }
  let from = cursor;
  if (stateCursor !== undefined && !future && config.lookback_days > 0) {
    from = Math.max(startSince, cursor - config.lookback_days * DAY_MS);
    logger.info(
      `${label}: re-reading the ${config.lookback_days} day(s) before the cursor for late answers (lookback_days).`
    );
  }
  const density = incremental ? densityOf(state) : undefined;
  const emitted = incremental && !future ? emittedOf(state, label) : undefined;
  // An export holds a slot from its creation until it is read or dropped: a state this connector
  // wrote lists at most max_concurrent_exports of a quest. More (a state edited by hand) are not used.
  const recorded = incremental && !future ? recordedExportsOf(state) : [];
  const most = config.max_concurrent_exports;
  if (recorded.length > most) {
    logger.warn(
      `${label}: the state lists ${recorded.length} exports of earlier attempts, more than max_concurrent_exports (${most}) allows this connector to record (was the state edited?); the first ${most} are re-used where they still serve, the others are ignored.`
    );
  }
  // The state keeps the check of the salt last hashed with, also through syncs that hash nothing.
  const current =
    config.hash_salt !== undefined && config.sensitive_columns.some((c) => c.action === 'hash')
      ? saltCheck(config.hash_salt)
      : undefined;
  const earlier = incremental ? saltCheckOf(state) : undefined;
  const check = current ?? earlier;
  // The entries that protected a column of the quest before, as long as the config still has them.
  const protecting = new Set(config.sensitive_columns.filter((c) => c.action !== 'keep').map((c) => c.column));
  const sensitiveMatched = incremental ? sensitiveMatchedOf(state).filter((entry) => protecting.has(entry)) : [];
  return {
    from,
    progress: {
      cursor,
      ...(density ? {density} : {}),
      exports: recorded.slice(0, most),
      ...(emitted && emitted.until > cursor ? {emitted} : {}),
      ...(check ? {saltCheck: check} : {}),
      sensitiveMatched,
    },
    saltChanged: current !== undefined && earlier !== undefined && current !== earlier,
    sensitiveMatched,
  };
}

/** Reads one quest of a stream: its exports in adaptive windows, its rows as the plan's records, its progress in `checkpoints`. */
export async function readQuest(env: ReadEnv, plan: QuestPlan, checkpoints: QuestCheckpoints): Promise<number> {
  const {config, runtime, logger} = env.ctx;
  logger.info(
    `Stream ${plan.stream.name}: reading quest ${plan.questId} from ${formatUtcTimestamp(plan.from)} to ${formatUtcTimestamp(plan.end)}`
  );
  try {
    return await new QuestSync(
      {
        api: env.api,
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
        resumeKey: new FingerprintKey(resumeSecret(config.hash_salt, config.client_secret)),
        csv: {separator: SEPARATORS[config.field_separator], acceptStrayQuotes: config.accept_stray_quotes},
        onHeader: (header) => env.headers.seen(plan.questId, {header, names: plan.records.names(header)}),
      },
      plan,
      checkpoints,
      env.stop
    ).run();
  } catch (err) {
    if (err instanceof Error && (isAuthFailure(err) || env.stop.aborted)) env.headers.failed(plan.questId, err);
    throw err;
  } finally {
    env.headers.ended(plan.questId);
  }
}
