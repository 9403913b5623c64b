import {setMaxListeners} from 'events';
import {AirbyteLogger} from 'faros-airbyte-cdk/lib/logger';
import VError from 'verror';
import {findQuestInaccessible, supportIds} from '../../api/api-error';
import {AccessNote} from '../../api/client';
import {mapLimited} from '../../core/concurrency';
import {QuestbackConfig} from '../../core/config';
import {Cancelled, errorMessage, isAuthFailure} from '../../core/errors';
import {LIMITS} from '../../core/limits';
import {Runtime} from '../../core/runtime';
import {formatDuration} from '../../core/time';
import {plural} from '../../core/quantities';

export type CheckResult = {ok: true} | {ok: false; message: string};

/** What check needs of the API client (a Connection's api has it). */
export interface AccessChecker {
  checkAccess(questId: string, signal?: AbortSignal): Promise<AccessNote | void>;
}

/** Quest ids a grouped failure names in the message; the log line names all of them. */
const IDS_IN_MESSAGE = 20;

/** Failures told once for the quests that fail alike: the quests in config order, and the first one's error. */
interface FailureGroup {
  questIds: string[];
  first: Error;
}

/** The failure's text without its quest and without the support ids of its one request. */
function failureKind(questId: string, error: Error): string {
  const info = VError.info(error);
  const ids = supportIds(info.traceId, info.requestId);
  const text = ids ? errorMessage(error).replace(` (${ids})`, '') : errorMessage(error);
  return text.split(questId).join('<quest>');
}

function groupFailures(failures: ReadonlyMap<string, Error>, questIds: readonly string[]): FailureGroup[] {
  const groups = new Map<string, FailureGroup>();
  for (const questId of questIds) {
    const error = failures.get(questId);
    if (!error) continue;
    const kind = failureKind(questId, error);
    const group = groups.get(kind);
    if (group) group.questIds.push(questId);
    else groups.set(kind, {questIds: [questId], first: error});
  }
  return [...groups.values()];
}

/**
 * One failure as the quest's own message; several alike as one message naming their quests (the
 * first IDS_IN_MESSAGE of them when `limit`), with the support ids of the first.
 */
function describeGroup({questIds, first}: FailureGroup, limit: boolean): string {
  const message = errorMessage(first);
  if (questIds.length === 1) return message;
  const [firstId] = questIds;
  const shown = limit ? questIds.slice(0, IDS_IN_MESSAGE) : questIds;
  const more = questIds.length - shown.length;
  const list = `${shown.join(', ')}${more > 0 ? ` and ${more} more (all named in the log)` : ''}`;
  const info = VError.info(first);
  const ids = supportIds(info.traceId, info.requestId);
  const text = ids ? message.replace(` (${ids})`, '') : message;
  // The first quest's id stands for all of them where the message names it; elsewhere it goes.
  const marker = `quest ${firstId}`;
  const at = text.indexOf(marker);
  const others = (part: string): string => part.split(firstId).join('…');
  const quests = `${plural(questIds.length, 'quest')} (${list})`;
  const named =
    at === -1
      ? `${quests}: ${others(text)}`
      : `${others(text.slice(0, at))}${quests}${others(text.slice(at + marker.length))}`;
  return `${named}${ids ? ` (quest ${firstId}: ${ids})` : ''}`;
}

/**
 * A token, then one cheap list request per quest: proves the addresses, the credentials and access
 * to every quest, within LIMITS.check.deadlineMs. What cannot heal in seconds fails at once, and the
 * message names the setting to look at: auth_url or the credentials when the token fails, api_url
 * when every quest fails alike, the quest ids that fail alone. Quests are checked LIMITS.check.concurrency
 * at a time; quests that fail alike are told once, naming them all.
 */
export async function checkConnection(
  config: QuestbackConfig,
  connection: {api: AccessChecker},
  runtime: Runtime,
  logger: AirbyteLogger
): Promise<CheckResult> {
  const deadline = new AbortController();
  // Each check in flight listens on the deadline (its request, or the wait before its retry), and so
  // does the deadline's own timer: a known number, not a leak.
  setMaxListeners(LIMITS.check.concurrency + 1, deadline.signal);
  let timedOut = false;
  const timer = runtime.sleep(LIMITS.check.deadlineMs, deadline.signal).then(
    () => {
      timedOut = true;
      deadline.abort(new Cancelled('deadline'));
    },
    () => undefined
  );
  const failures = new Map<string, Error>();
  /** Quests whose exports are readable but whose invitations the login may not read. */
  const invitationsDenied = new Map<string, string>();
  let checked = 0;
  try {
    await mapLimited(config.quest_ids, LIMITS.check.concurrency, async (questId) => {
      if (deadline.signal.aborted) return;
      try {
        const note = await connection.api.checkAccess(questId, deadline.signal);
        if (note) invitationsDenied.set(questId, note.invitationsDenied);
        checked++;
      } catch (err) {
        const error = err instanceof Error ? err : new Error(String(err));
        if (!timedOut) checked++;
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
      message: `The check did not finish within ${formatDuration(LIMITS.check.deadlineMs)} (${checked} of ${config.quest_ids.length} quest(s) checked): the service at api_url (${config.api_url}) or auth_url (${config.auth_url}) is too slow to answer. Check both addresses, and try again.`,
    };
  }
  if (invitationsDenied.size) {
    const [first] = invitationsDenied.values();
    logger.warn(
      `The API login may not read the invitations of ${plural(invitationsDenied.size, 'quest')} (${[...invitationsDenied.keys()].slice(0, IDS_IN_MESSAGE).join(', ')}), though their responses are readable: the invitations stream will fail for them. Ask your Questback account owner to give the API login permission to read invitations, or deselect the invitations stream. The service answered: ${first}`
    );
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
    for (const group of groupFailures(failures, config.quest_ids))
      logger.warn(
        `${describeGroup(group, false)} ${group.questIds.length === 1 ? 'It' : 'They'} will be skipped (skip_inaccessible_quests is on).`
      );
    logger.info(
      `Connection check passed: credentials accepted; ${config.quest_ids.length - errors.length} of ${config.quest_ids.length} quest(s) readable, ${errors.length} skipped`
    );
    return {ok: true};
  }
  const groups = groupFailures(failures, config.quest_ids);
  for (const group of groups) if (group.questIds.length > IDS_IN_MESSAGE) logger.warn(describeGroup(group, false));
  return {
    ok: false,
    message: `${failures.size} of ${config.quest_ids.length} quest(s) cannot be read: ${groups.map((g) => describeGroup(g, true)).join(' ')}`,
  };
}
