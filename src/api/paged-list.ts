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
}

export interface ListOptions<T> {
  /** Items per request, at most MAX_TAKE (the default). */
  take?: number;
  since?: number;
  until?: number;
  /** Makes an item of the answer's raw one (checks its shape; throws on one it cannot use). */
  item(raw: unknown): T;
  /** Each page, as it is read. */
  onPage?(page: PageReport): void;
}

/**
 * Every item of a list, a page at a time (memory holds one page). The seed says a page shorter than
 * `take` is only "likely" the last; the vendor does not say whether it honours `take` up to 1000. A
 * service that returns fewer items per page than asked would look finished after its first page, and
 * the rest of the list would be lost without a word. So only an empty page ends the list: a short page
 * costs one more request, and `skip` moves on by the items received, not by `take`. A service that
 * ignores `skip` answers the same page again: that is an error, not a list that never ends.
 */
export async function* pagedList<T>(
  http: AxiosInstance,
  call: ListCall,
  options: ListOptions<T>
): AsyncGenerator<T[], void, undefined> {
  const take = options.take ?? MAX_TAKE;
  if (take < 1) throw new RangeError(`a list read takes at least one item per page (got take ${take})`);
  let skip = 0;
  let previous: string | undefined;
  for (let index = 0; ; index++) {
    const query = {skip, take, since: options.since, until: options.until};
    const raw = pageItems(await requestPage(http, call, query), call.context);
    options.onPage?.({index, skip, take, count: raw.length});
    if (!raw.length) return;
    const text = JSON.stringify(raw);
    if (text === previous) {
      throw connectorError(
        'transient_error',
        `${call.context.operation} for quest ${call.context.questId} failed: the service answered the same ${raw.length} items at skip ${skip} as at the page before, so it ignores skip and the list would never end. Tell Questback support.`,
        {...call.context, skip, take}
      );
    }
    previous = text;
    yield raw.map((item) => options.item(item));
    skip += raw.length;
  }
}
