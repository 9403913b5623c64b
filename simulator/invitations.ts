// A quest's invitations (GET /v1/quests/{questId}/invitations), as the vendor's Invitation model
// describes them. Each invitation is computed from the seed and its index when a page asks for it,
// so 100,000 of them cost a few numbers each. Its statuses follow the clock: an invitation is sent,
// replied to or opted out of at seeded times, so `sent`, `replied` and `optedOut` change after it
// was first listed, as the vendor says they do.

import {formatTime, TimeFormat} from './dialect';
import {deriveSeed, hashString, mix32, Prng} from './prng';

/** How the list answers where the vendor's docs leave it open (SimulatorOptions.invitationList). */
export interface InvitationListOptions {
  /**
   * The items inside an object under this property (with `totalCount`) instead of a bare array; a
   * dotted path (`data.items`) nests them deeper, an answer with no list at its top.
   */
  wrapper?: string;
  /**
   * The order of the list: 'added' (by addedAt, the default), 'newest-first', 'shuffled' (a seeded
   * order of no use to a reader, the same in every request), 'unstable' (another seeded order in every
   * request, as a query without ORDER BY may give), 'changed' (by the last change of status).
   */
  order?: 'added' | 'newest-first' | 'shuffled' | 'unstable' | 'changed';
  /** Pages hold at most this many items, whatever `take` asks (take is still checked against 1000). */
  maxTake?: number;
  /** The timestamp `since`/`until` filter on: 'added' (addedAt, the default) or 'changed' (the last change). */
  filterOn?: 'added' | 'changed';
  /** Added invitations are queued: they show up this long after their addedAt (default 0). */
  queueMs?: number;
  /** Every invitation also carries fields the documented model does not list. */
  extraFields?: boolean;
  /** The API login may not read invitations: 403 naming the permission (exports still work). */
  denied?: boolean;
  /** Fields of the model the service leaves out of every invitation (a required one, say). */
  omit?: string[];
  /** How addedAt, sentAt and scheduledSendAt are written (default 'iso-ms'). */
  times?: TimeFormat;
}

/** The permission the 403 of a login without it names. */
export const INVITATIONS_PERMISSION = 'invitations:read';

export const ORIGINS = ['ESSENTIALS', 'INTEGRATION', 'DYNAMIC_LINK_INVITE', 'DYNAMIC_LINK_ANSWER', 'SURVEY_LOGIN'];
const SENT_CHANNELS = ['EMAIL', 'EMAIL', 'EMAIL', 'SMS'];
const OTHER_CHANNELS = ['EXTERNALLY_MANAGED', 'LINK', 'LINK_WITH_EMAIL', 'DYNAMIC_LINK'];
const HOUR_MS = 3_600_000;

/** One invitation as the list answers it (camelCase, the model's names). */
export type InvitationItem = Record<string, unknown> & {invitationId: string; questId: string};

/** What is fixed about invitation k: drawn from the seed, then only the clock moves its statuses. */
interface Drawn {
  id: string;
  origin: string;
  enabled: boolean;
  channel?: string;
  language: string;
  ident?: string;
  scheduledMs?: number;
  /** When it is sent (distribution enabled only). */
  sendMs?: number;
  repliedMs?: number;
  optedOutMs?: number;
}

export interface InvitationQuest {
  questId: string;
  /** Invitations at start. */
  count: number;
  /** The first this many invitations share one addedAt (a bulk import in one millisecond). */
  burst: number;
  firstMs: number;
  lastMs: number;
  languages: readonly string[];
  /** The quest hides identities: `replied` is null. */
  hiddenIdentity: boolean;
}

export class Invitations {
  private readonly base: number;
  private readonly rng = new Prng(0);
  /** addedAt of invitations added after start (Simulator.addInvitations), non-decreasing. */
  private readonly added: number[] = [];
  private shuffled?: {count: number; order: Int32Array};
  /** Lists answered so far: each 'unstable' request orders by another seed. */
  private requests = 0;

  constructor(
    seed: number,
    private readonly quest: InvitationQuest
  ) {
    this.base = deriveSeed(seed, `invitations:${quest.questId}`);
  }

  get total(): number {
    return this.quest.count + this.added.length;
  }

  /** Adds `n` invitations at `now`, 1 ms apart. */
  add(n: number, now: number): void {
    const last = this.total > 0 ? this.addedAt(this.total - 1) : now;
    for (let i = 0; i < n; i++) this.added.push(Math.max(last, now + i));
  }

  /** addedAt of invitation k: non-decreasing in k. */
  addedAt(k: number): number {
    const {count, burst, firstMs, lastMs} = this.quest;
    if (k >= count) return this.added[k - count];
    if (k < burst) return firstMs;
    const spread = count - burst;
    return firstMs + Math.floor(((k - burst + 1) * (lastMs - firstMs)) / spread);
  }

  private draw(k: number): Drawn {
    const rng = this.rng;
    rng.reseed(hashString(String(k), this.base));
    const added = this.addedAt(k);
    const id = rng.uuid();
    const origin = rng.pick(ORIGINS);
    const enabled = rng.chance(0.8);
    const channel = enabled ? rng.pick(SENT_CHANNELS) : rng.chance(0.9) ? rng.pick(OTHER_CHANNELS) : undefined;
    const language = rng.pick(this.quest.languages);
    const ident =
      channel === 'SMS'
        ? `+47${rng.range(40000000, 99999999)}`
        : channel === 'EMAIL' || channel === 'LINK_WITH_EMAIL' || rng.chance(0.5)
          ? `invitee${k + 1}.${rng.hex(4)}@example.org`
          : undefined;
    const scheduledMs = enabled && rng.chance(0.2) ? added + rng.range(1, 72) * HOUR_MS : undefined;
    const sendMs = enabled ? (scheduledMs ?? added + rng.range(60_000, 30 * 60_000)) : undefined;
    const from = sendMs ?? added;
    const repliedMs = rng.chance(0.45) ? from + rng.range(HOUR_MS, 240 * HOUR_MS) : undefined;
    const optedOutMs = enabled && rng.chance(0.05) ? from + rng.range(HOUR_MS, 480 * HOUR_MS) : undefined;
    return {id, origin, enabled, channel, language, ident, scheduledMs, sendMs, repliedMs, optedOutMs};
  }

  /** When invitation k last changed by `now`: added, sent, replied to or opted out of. */
  private changedAt(k: number, now: number): number {
    const d = this.draw(k);
    let t = this.addedAt(k);
    for (const at of [d.sendMs, d.repliedMs, d.optedOutMs]) if (at !== undefined && at <= now && at > t) t = at;
    return t;
  }

  /** Invitation k as the list answers it at `now`. */
  item(k: number, now: number, options: InvitationListOptions): InvitationItem {
    const d = this.draw(k);
    const time = (ms: number): string => formatTime(ms, options.times);
    const happened = (ms: number | undefined): boolean => ms !== undefined && ms <= now;
    const sent = happened(d.sendMs);
    const item: InvitationItem = {
      invitationId: d.id,
      questId: this.quest.questId,
      addedAt: time(this.addedAt(k)),
      distributionEnabled: d.enabled,
      languageCode: d.language,
      optedOut: happened(d.optedOutMs),
      origin: d.origin,
      replied: this.quest.hiddenIdentity ? null : happened(d.repliedMs),
      sent,
    };
    if (d.channel !== undefined) item.distributionChannel = d.channel;
    if (d.ident !== undefined) item.respondentIdent = d.ident;
    if (d.scheduledMs !== undefined) item.scheduledSendAt = time(d.scheduledMs);
    if (sent) item.sentAt = time(d.sendMs as number);
    for (const name of options.omit ?? []) delete item[name];
    if (options.extraFields) {
      item.reminderCount = sent ? mix32(k) % 3 : 0;
      item.tags = {batch: `b${1 + (k % 4)}`};
    }
    return item;
  }

  /** The invitations visible at `now` in the list's order, filtered to (since, until], paged. */
  list(
    window: {since?: number; until?: number},
    skip: number,
    take: number,
    now: number,
    options: InvitationListOptions
  ): InvitationItem[] {
    const size = Math.min(take, options.maxTake ?? take);
    const visibleUntil = now - (options.queueMs ?? 0);
    const order = options.order ?? 'added';
    const byAdded = (options.filterOn ?? 'added') === 'added';
    const upper = Math.min(window.until ?? Infinity, visibleUntil);
    if (byAdded && (order === 'added' || order === 'newest-first')) {
      // A range of indexes: addedAt grows with k.
      const lo = this.firstAfter(window.since ?? -Infinity);
      const hi = Math.max(lo, this.firstAfter(upper));
      const picked: number[] = [];
      for (let i = skip; i < Math.min(hi - lo, skip + size); i++) picked.push(order === 'added' ? lo + i : hi - 1 - i);
      return picked.map((k) => this.item(k, now, options));
    }
    this.requests++;
    const key = (k: number): number => (byAdded ? this.addedAt(k) : this.changedAt(k, now));
    const since = window.since ?? -Infinity;
    const until = window.until ?? Infinity;
    const chosen: {k: number; key: number}[] = [];
    for (const k of this.ordered(order)) {
      if (this.addedAt(k) > visibleUntil) continue;
      const at = key(k);
      if (at > since && at <= until) chosen.push({k, key: order === 'changed' ? this.changedAt(k, now) : 0});
    }
    if (order === 'changed') chosen.sort((a, b) => a.key - b.key || a.k - b.k);
    return chosen.slice(skip, skip + size).map(({k}) => this.item(k, now, options));
  }

  /** Every invitation visible at `now`, in addedAt order, with its current statuses: what a whole read must give. */
  all(now: number, options: InvitationListOptions): InvitationItem[] {
    const out: InvitationItem[] = [];
    const visibleUntil = now - (options.queueMs ?? 0);
    for (let k = 0; k < this.total && this.addedAt(k) <= visibleUntil; k++) out.push(this.item(k, now, options));
    return out;
  }

  /** The indexes in the list's order before filtering ('changed' is sorted after filtering). */
  private ordered(order: NonNullable<InvitationListOptions['order']>): Iterable<number> {
    const n = this.total;
    if (order === 'unstable') {
      const salt = mix32(this.base ^ this.requests);
      return Int32Array.from({length: n}, (_, k) => k).sort((a, b) => mix32(a ^ salt) - mix32(b ^ salt) || a - b);
    }
    if (order !== 'shuffled') {
      return (function* () {
        for (let k = 0; k < n; k++) yield order === 'newest-first' ? n - 1 - k : k;
      })();
    }
    if (this.shuffled?.count !== n) {
      const keys = new Uint32Array(n);
      for (let k = 0; k < n; k++) keys[k] = mix32(k ^ this.base);
      const order32 = Int32Array.from({length: n}, (_, k) => k).sort((a, b) => keys[a] - keys[b] || a - b);
      this.shuffled = {count: n, order: order32};
    }
    return this.shuffled.order;
  }

  /** The first index whose addedAt lies after `t` (binary search: addedAt grows with k). */
  private firstAfter(t: number): number {
    let lo = 0;
    let hi = this.total;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.addedAt(mid) > t) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}

/** The switches, checked: a bad value is the caller's mistake, said at once. */
export function checkListOptions(options: InvitationListOptions): InvitationListOptions {
  const {order, filterOn, maxTake, queueMs, wrapper} = options;
  if (order !== undefined && !['added', 'newest-first', 'shuffled', 'unstable', 'changed'].includes(order))
    throw new Error('invitationList.order must be added, newest-first, shuffled, unstable or changed');
  if (filterOn !== undefined && !['added', 'changed'].includes(filterOn))
    throw new Error('invitationList.filterOn must be added or changed');
  if (maxTake !== undefined && !(Number.isInteger(maxTake) && maxTake >= 1))
    throw new Error('invitationList.maxTake must be an integer >= 1');
  if (queueMs !== undefined && !(Number.isFinite(queueMs) && queueMs >= 0))
    throw new Error('invitationList.queueMs must be >= 0');
  if (wrapper !== undefined && wrapper.split('.').some((name) => name === ''))
    throw new Error('invitationList.wrapper must name a property (or a dotted path of them)');
  return {...options};
}
