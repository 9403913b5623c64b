import {AirbyteLogger} from 'faros-airbyte-cdk';
import VError from 'verror';
import {findQuestInaccessible, supportIds} from '../api/api-error';
import {mapLimited} from '../core/concurrency';
import {QuestbackConfig} from '../core/config';
import {Cancelled, errorMessage, isAuthFailure} from '../core/errors';
import {LIMITS} from '../core/limits';
import {Runtime} from '../core/runtime';
import {formatDuration} from '../core/time';
import {Connection} from './connection';

export type CheckResult = {ok: true} | {ok: false; message: string};

/**
 * A token, then one cheap list request per quest: proves the addresses, the credentials and access
 * to every quest, within LIMITS.check.deadlineMs. What cannot heal in seconds fails at once, and the
 * message names the setting to look at: auth_url or the credentials when the token fails, api_url
 * when every quest fails alike, the quest ids that fail alone.
 */
export async function checkConnection(
  config: QuestbackConfig,
  connection: Connection,
  runtime: Runtime,
  logger: AirbyteLogger
): Promise<CheckResult> {
  const deadline = new AbortController();
  let timedOut = false;
  const timer = runtime.sleep(LIMITS.check.deadlineMs, deadline.signal).then(
    () => {
      timedOut = true;
      deadline.abort(new Cancelled('deadline'));
    },
    () => undefined
  );
  const failures = new Map<string, Error>();
  try {
    await mapLimited(config.quest_ids, 4, async (questId) => {
      if (deadline.signal.aborted) return;
      try {
        await connection.api.checkAccess(questId, deadline.signal);
      } catch (err) {
        const error = err instanceof Error ? err : new Error(String(err));
        failures.set(questId, error);
        // Credentials that do not work fail every quest the same way: stop at the first.
        if (isAuthFailure(error)) deadline.abort(error);
      }
    });
  } finally {
    if (!deadline.signal.aborted) deadline.abort(new Cancelled('done'));
    await timer;
  }
  const errors = [...failures.values()];
  const auth = errors.find(isAuthFailure);
  if (auth) return {ok: false, message: auth.message};
  if (timedOut) {
    return {
      ok: false,
      message: `The check did not finish within ${formatDuration(LIMITS.check.deadlineMs)}: the service at api_url (${config.api_url}) or auth_url (${config.auth_url}) is too slow to answer. Check both addresses, and try again.`,
    };
  }
  if (errors.length === 0) {
    logger.info(`Connection check passed: credentials accepted and ${config.quest_ids.length} quest(s) readable`);
    return {ok: true};
  }
  // No answer from api_url for any quest (refused, unknown host, TLS): said once, not once per quest.
  const noAnswer = errors.filter((e) => VError.info(e).setting === 'api_url' && VError.info(e).status === undefined);
  if (failures.size === config.quest_ids.length && noAnswer.length === errors.length) {
    return {
      ok: false,
      message: `No quest could be checked: ${errorMessage(noAnswer[0]).replace(/^.*? failed: /, '')}`,
    };
  }
  const notFound = [...failures.values()].filter((e) => findQuestInaccessible(e)?.status === 404);
  if (config.quest_ids.length > 1 && notFound.length === config.quest_ids.length) {
    // The service's answer, without the per-quest hint (check the quest id) that would mislead here.
    const info = VError.info(notFound[0]);
    const ids = supportIds(info.traceId, info.requestId);
    return {
      ok: false,
      message: `Every quest answered 404 Not Found. The quest ids are probably right and api_url (${config.api_url}) is wrong: it must be the API's base address (operations live under /v1), e.g. https://api.questback.com. The service answered: HTTP 404${info.explanation ? ` - ${String(info.explanation)}` : ''}${ids ? ` (${ids})` : ''}.`,
    };
  }
  // With skip_inaccessible_quests, quests the login may not read (or that do not exist) are what the option is for.
  const inaccessible = errors.filter((e) => findQuestInaccessible(e) !== undefined);
  if (
    config.skip_inaccessible_quests &&
    inaccessible.length === errors.length &&
    errors.length < config.quest_ids.length
  ) {
    for (const e of inaccessible)
      logger.warn(`${errorMessage(e)} It will be skipped (skip_inaccessible_quests is on).`);
    logger.info(
      `Connection check passed: credentials accepted; ${config.quest_ids.length - errors.length} of ${config.quest_ids.length} quest(s) readable, ${errors.length} skipped`
    );
    return {ok: true};
  }
  const lines = [...failures.entries()].map(([, e]) => errorMessage(e));
  return {
    ok: false,
    message: `${failures.size} of ${config.quest_ids.length} quest(s) cannot be read: ${lines.join(' ')}`,
  };
}
