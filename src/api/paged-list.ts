import {AxiosInstance, AxiosResponse} from 'axios';

import {connectorError} from '../core/errors';
import {formatUtcTimestamp} from '../core/time';
import {futureFilter, RequestContext} from './api-error';
import {asJsonValue} from './http';
import {send} from './request';

// The seed's paging rules for list-style endpoints, once: `skip` items bypassed, at most `take`
// (0..1000) returned, `since` exclusive and `until` inclusive, both in the past. Every request goes
// through `send` on the connection's client, so rate limits, retries and tokens are the API's own.

/** The most items the service returns per request. */
const MAX_TAKE = 1000;

/** One request of a list: where it starts, how many it asks for, and the time filter, if the endpoint takes one. */
interface PageQuery {
  skip: number;
  take: number;
  /** Only items after this moment (ms; exclusive). */
  since?: number;
  /** Only items at or before this moment (ms; inclusive). Must not lie in the future: the service refuses it. */
  until?: number;
}

/** What a list request needs besides its query: the endpoint's address, and what the request is for. */
interface ListCall {
  url: string;
  context: RequestContext & {questId: string};
  signal?: AbortSignal;
}

function checkQuery({skip, take, since, until}: PageQuery): void {
  // The service answers a negative value with a 400: a caller's mistake, said before any request.
  const whole = (n: number) => Number.isSafeInteger(n) && n >= 0;
  if (!whole(skip) || !whole(take) || take > MAX_TAKE) {
    throw new RangeError(
      `a list request takes skip >= 0 and take 0..${MAX_TAKE}, whole numbers (got ${skip}, ${take})`
    );
  }
  if (since !== undefined && until !== undefined && since > until) {
    throw new RangeError(`a list request's since (${since}) lies after its until (${until})`);
  }
}

/**
 * One request of a list-style endpoint, its answer as it came (a status the caller handles, such as
 * the access check's, is the caller's to read). Timestamps go out with milliseconds, as the service documents them.
 */
export async function requestPage(http: AxiosInstance, call: ListCall, query: PageQuery): Promise<AxiosResponse> {
  checkQuery(query);
  const filter = {
    ...(query.since !== undefined ? {since: formatUtcTimestamp(query.since)} : {}),
    ...(query.until !== undefined ? {until: formatUtcTimestamp(query.until)} : {}),
  };
  return send(http, {
    context: call.context,
    rejected: (err) => futureFilter(err, filter, call.context.questId, call.context.operation),
    config: {
      method: 'GET',
      url: call.url,
      params: {skip: query.skip, take: query.take, ...filter},
      signal: call.signal,
      headers: {Accept: 'application/json'},
    },
  });
}

/**
 * The items of a page: the answer is a JSON array, or an object holding exactly one array (the
 * service does not document its wrapper: `{items: [...], total: n}` and a bare list both read).
 */
function pageItems(response: AxiosResponse, context: RequestContext): unknown[] {
  const data = asJsonValue(response.data);
  if (Array.isArray(data)) return data;
  const lists = data && typeof data === 'object' ? Object.values(data).filter(Array.isArray) : [];
  if (lists.length === 1) return lists[0] as unknown[];
  throw connectorError(
    'transient_error',
    `${context.operation} for quest ${context.questId} failed: HTTP ${response.status} came without a list of items (${lists.length ? 'several lists' : Array.isArray(data) || data === undefined ? 'no JSON' : 'no list'} in the answer). This is usually a gateway problem; if it persists, tell Questback support.`,
    {...context, status: response.status}
  );
}

/** A page as the reader met it, for the log. */
export interface PageReport {
  /** 0 for the first request. */
  index: number;
  skip: number;
  take: number;
  /** Items the page had. */
  count: number;
  /** Items of the page before that this request asked for again (ListOptions.key). */
  overlap: number;
}

export interface ListOptions<T> {
  /** Items per request, at most MAX_TAKE (the default). */
  take?: number;
  since?: number;
  until?: number;
  /** Makes an item of the answer's raw one (checks its shape; throws on one it cannot use). */
  item(raw: unknown): T;
  /**
   * The item's identity. With it, each request after the first asks again for the last items of the
   * page before (OVERLAP), so a list that moves left while it is read loses nothing; the caller
   * drops the items it has already met.
   */
  key?(item: T): string;
  /** Each page, as it is read. */
  onPage?(page: PageReport): void;
  /**
   * A page that did not begin with items of the page before, in its order (key only): the list
   * moved by more than the overlap, or was ordered otherwise, since that page, so items may have been
   * passed over. The read goes on to the end of the list.
   */
  onGap?(page: PageReport): void;
}

/**
 * Items of the page before that each request asks for again, when the caller gives a key. A list
 * in an order that changes while it is read (by the last change of status, say) moves an item read
 * to its end and every item after it one to the left, so the item at the next page boundary would be
 * passed over. 50 such moves between two requests (a second or so apart) are covered, for 5% more
 * items in pages of 1000; a larger move is reported (onGap).
 */
const OVERLAP = 50;
/** The first items of an overlapping page that are checked against the page before (onGap). */
const CHECKED = 3;

/**
 * The overlap of the request after a page of `count` items, where the service's largest page was
 * `largest`: a service that caps its pages below take re-reads at most a quarter of its page (a third
 * more requests at worst), and every request moves on by at least one item, so the read ends.
 */
function overlapAfter(count: number, largest: number): number {
  return Math.max(0, Math.min(OVERLAP, Math.ceil(largest / 4), count - 1));
}

/**
 * Whether a page that re-read `overlap` items begins where the page before (its keys and their places)
 * said it would: its first item is one of that page, and so are the next few up to the first that is
 * not, in that page's order. A left move smaller than the overlap keeps them so (the items after
 * them are new), as do items added at the front (the page repeats more of the one before).
 */
function continues<T>(items: T[], overlap: number, before: Map<string, number>, key: (item: T) => string): boolean {
  let last = -1;
  for (const item of items.slice(0, Math.min(CHECKED, overlap))) {
    const at = before.get(key(item));
    if (at === undefined) break;
    if (at <= last) return false;
    last = at;
  }
  return last >= 0;
}

/**
 * Every item of a list, a page at a time (memory holds one page). The seed says a page shorter than
 * `take` is only "likely" the last; the vendor does not say whether it honours `take` up to 1000. A
 * service that returns fewer items per page than asked would look finished after its first page, and
 * the rest of the list would be lost without a word. So only a page with nothing new ends the list:
 * an empty one, or with a key one no longer than the overlap it re-read (every request re-reads the
 * list's last items, so its end never answers an empty page). A short page costs one more request,
 * and `skip` moves on by the items received (less the overlap), not by `take`. A service that ignores
 * `skip` answers the same page again: that is an error, not a list that never ends.
 */
export async function* pagedList<T>(
  http: AxiosInstance,
  call: ListCall,
  options: ListOptions<T>
): AsyncGenerator<T[], void, undefined> {
  const take = options.take ?? MAX_TAKE;
  if (take < 1) throw new RangeError(`a list read takes at least one item per page (got take ${take})`);
  const {key} = options;
  let skip = 0;
  let overlap = 0;
  let largest = 0;
  let previous: string | undefined;
  /** The keys of the page before, with their places in it (only when the next request overlaps it). */
  let before: Map<string, number> | undefined;
  for (let index = 0; ; index++) {
    const query = {skip, take, since: options.since, until: options.until};
    const raw = pageItems(await requestPage(http, call, query), call.context);
    const report = {index, skip, take, count: raw.length, overlap};
    options.onPage?.(report);
    const text = JSON.stringify(raw);
    if (raw.length && text === previous) {
      throw connectorError(
        'transient_error',
        `${call.context.operation} for quest ${call.context.questId} failed: the service answered the same ${raw.length} items at skip ${skip} as at the page before, so it ignores skip and the list would never end. Tell Questback support.`,
        {...call.context, skip, take}
      );
    }
    const items = raw.map((item) => options.item(item));
    if (key && before && !continues(items, overlap, before, key)) options.onGap?.(report);
    if (items.length) yield items;
    if (items.length <= overlap) return;
    largest = Math.max(largest, items.length);
    overlap = key ? overlapAfter(items.length, largest) : 0;
    before = key && overlap ? new Map(items.map((item, i) => [key(item), i])) : undefined;
    previous = text;
    skip += items.length - overlap;
  }
}
