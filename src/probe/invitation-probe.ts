import {AirbyteLogger} from 'faros-airbyte-cdk/lib/logger';

import {findQuestInaccessible} from '../api/api-error';
import {ListApi} from '../api/client';
import {errorMessage} from '../core/errors';
import {plural} from '../core/quantities';
import {rfc3339} from '../core/time-text';
import {AnswerLog} from './observer';
import {memberShapes, word} from './shapes';
import {confirmed, contradicted, isRecord, unknown, Verdict} from './verdict';

// What the probe learns about a quest's invitations list, in at most five requests: the first page of
// 1000 (its wrapper, size, order, fields), the page after a short one (is take honoured?), the first
// page again (one order?), and a window around one invitation's addedAt (which time the filter uses).

const REQUIRED = [
  'invitationId',
  'questId',
  'addedAt',
  'distributionEnabled',
  'languageCode',
  'optedOut',
  'origin',
  'replied',
  'sent',
];
const OPTIONAL = ['distributionChannel', 'respondentIdent', 'scheduledSendAt', 'sentAt'];
const TAKE = 1000;
const AGAIN = 50;

type FilterFact = {tested: true; kept: boolean} | {tested: false; why: string};

export type InvitationFacts =
  | {read: false; why: string}
  | {
      read: true;
      /** The first answer's shape: a JSON list, or an object's members. */
      wrapper: string;
      firstPage: number;
      /** Items of the page after a short first page. */
      secondPage?: number;
      /** The first page asked again gave the same invitations in the same order. */
      sameOrder?: boolean;
      order: string;
      filter: FilterFact;
      /** Invitations of the first page sent later than they were added: their `sent` changed. */
      changedAfterAdded: number;
      /** Required members some invitation of the first page lacks. */
      missing: string[];
      /** Members of the first page's invitations the model does not list. */
      extra: string[];
    };

const timeOf = (value: unknown): number | undefined => {
  const text = typeof value === 'string' ? rfc3339(value) : undefined;
  return text === undefined ? undefined : Date.parse(text);
};

/** The order of a page by addedAt, in words. */
function orderOf(items: Record<string, unknown>[]): string {
  const times = items.map((i) => timeOf(i.addedAt)).filter((t): t is number => t !== undefined);
  if (new Set(times).size < 2) return 'too few distinct addedAt times to tell an order';
  if (times.every((t, i) => i === 0 || t >= times[i - 1])) return 'oldest addedAt first';
  if (times.every((t, i) => i === 0 || t <= times[i - 1])) return 'newest addedAt first';
  return 'in no order of addedAt';
}

/** The first pages of a list read (one, or two when the first is short and `more`). */
async function firstPages(
  api: ListApi,
  questId: string,
  options: {take: number; since?: number; until?: number; more: boolean},
  signal: AbortSignal
): Promise<Record<string, unknown>[][]> {
  const pages: Record<string, unknown>[][] = [];
  const item = (raw: unknown): Record<string, unknown> => (isRecord(raw) ? raw : {});
  for await (const page of api.questList(questId, 'invitations', {...options, item}, signal)) {
    pages.push(page);
    if (!options.more || page.length >= options.take || pages.length === 2) break;
  }
  return pages;
}

export async function probeInvitations(
  api: ListApi,
  questId: string,
  log: AnswerLog,
  logger: AirbyteLogger,
  signal: AbortSignal
): Promise<InvitationFacts> {
  log.step = 'invitations';
  try {
    const [first = [], second] = await firstPages(api, questId, {take: TAKE, more: true}, signal);
    const answer = log.of('invitations')[0]?.json;
    const wrapper = Array.isArray(answer) ? 'a JSON list' : `an object: ${memberShapes(answer)}`;
    const again = first.length ? (await firstPages(api, questId, {take: AGAIN, more: false}, signal))[0] : undefined;
    const sameOrder = again && again.every((item, i) => item.invitationId === first[i]?.invitationId);
    // An invitation sent at least a second after it was added: is it in the window ending at its addedAt?
    const probe = first.find((i) => {
      const added = timeOf(i.addedAt);
      const sent = timeOf(i.sentAt);
      return added !== undefined && sent !== undefined && sent - added >= 1000;
    });
    let filter: FilterFact;
    if (probe) {
      const added = timeOf(probe.addedAt) as number;
      const [page = []] = await firstPages(
        api,
        questId,
        {take: TAKE, since: added - 1, until: added, more: false},
        signal
      );
      filter =
        page.length >= TAKE && !page.some((i) => i.invitationId === probe.invitationId)
          ? {tested: false, why: `the window around its addedAt held ${TAKE} or more invitations`}
          : {tested: true, kept: page.some((i) => i.invitationId === probe.invitationId)};
    } else {
      filter = {tested: false, why: 'no invitation of the first page was sent a second or more after it was added'};
    }
    const members = new Set(first.flatMap((i) => Object.keys(i)));
    const facts: InvitationFacts = {
      read: true,
      wrapper,
      firstPage: first.length,
      ...(second ? {secondPage: second.length} : {}),
      ...(sameOrder !== undefined ? {sameOrder} : {}),
      order: orderOf(first),
      filter,
      changedAfterAdded: first.filter((i) => (timeOf(i.sentAt) ?? 0) > (timeOf(i.addedAt) ?? Infinity)).length,
      missing: REQUIRED.filter((name) => first.some((i) => !(name in i))),
      extra: [...members].filter((name) => !REQUIRED.includes(name) && !OPTIONAL.includes(name)),
    };
    logger.info(`Probe: the invitations list gave ${plural(first.length, 'invitation')} on its first page`);
    return facts;
  } catch (err) {
    if (signal.aborted) throw err;
    const denied = findQuestInaccessible(err);
    const why = denied
      ? `the API login may not read the quest's invitations (HTTP ${denied.status})`
      : `the invitations list could not be read: ${errorMessage(err)}`;
    logger.warn(`Probe: ${why}`);
    return {read: false, why};
  }
}

/** The verdicts on the invitations list, in the order of INVITATION_ASSUMPTIONS. */
export function invitationVerdicts(facts: InvitationFacts): Verdict[] {
  if (!facts.read) {
    const ids = [
      'invitations.wrapper',
      'invitations.take',
      'invitations.order',
      'invitations.filter-field',
      'invitations.statuses-change',
      'invitations.model',
    ] as const;
    // A list the service answered in a shape without items contradicts the wrapper; a refusal tells nothing.
    const shape = /without a list of items/.test(facts.why);
    return ids.map((id) => (shape && id === 'invitations.wrapper' ? contradicted : unknown)(id, facts.why));
  }
  const {firstPage, secondPage, sameOrder, filter} = facts;
  const take =
    firstPage >= TAKE
      ? confirmed('invitations.take', `a page of ${TAKE} when ${TAKE} were asked for`)
      : secondPage
        ? contradicted(
            'invitations.take',
            `a page of ${firstPage} when ${TAKE} were asked for, and ${secondPage} more after it`
          )
        : unknown('invitations.take', `the quest has ${plural(firstPage, 'invitation')}, fewer than ${TAKE}`);
  const order =
    sameOrder === undefined
      ? unknown('invitations.order', 'the quest has no invitations')
      : (sameOrder ? confirmed : contradicted)(
          'invitations.order',
          `${sameOrder ? 'the same' : 'another'} order when the first page was asked for again; ${facts.order}`
        );
  const filterVerdict = !filter.tested
    ? unknown('invitations.filter-field', filter.why)
    : (filter.kept ? confirmed : contradicted)(
        'invitations.filter-field',
        filter.kept
          ? 'an invitation sent after it was added is in the window that ends at its addedAt'
          : 'an invitation sent after it was added is not in the window that ends at its addedAt: the filter selects by a later time (its last change?)'
      );
  const changed = facts.changedAfterAdded
    ? confirmed(
        'invitations.statuses-change',
        `${facts.changedAfterAdded} of ${firstPage} invitations were sent later than they were added`
      )
    : unknown('invitations.statuses-change', 'no invitation of the first page was sent after it was added');
  const extra = facts.extra.length ? `; other fields: ${facts.extra.map((n) => `\`${word(n)}\``).join(', ')}` : '';
  const model = !firstPage
    ? unknown('invitations.model', 'the quest has no invitations')
    : facts.missing.length
      ? contradicted('invitations.model', `missing on some: ${facts.missing.join(', ')}${extra}`)
      : confirmed('invitations.model', `every required field on all ${firstPage}${extra}`);
  return [confirmed('invitations.wrapper', facts.wrapper), take, order, filterVerdict, changed, model];
}
