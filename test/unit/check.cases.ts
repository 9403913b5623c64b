// check with hundreds of quests, on a fake API whose answers take time on a virtual clock: the check
// keeps within its deadline by checking quests side by side, and tells the quests that fail alike once.

import {AxiosError, AxiosHeaders} from 'axios';
import {getEventListeners, getMaxListeners} from 'events';
import {AirbyteLogLevel} from 'faros-airbyte-cdk/lib/protocol';
import {PassThrough} from 'stream';

import {apiError} from '../../src/api/api-error';
import {parseConfig, QuestbackConfig} from '../../src/core/config';
import {LIMITS} from '../../src/core/limits';
import {Runtime} from '../../src/core/runtime';
import {ConnectorLogger} from '../../src/protocol/logger';
import {MessageWriter} from '../../src/protocol/output';
import {AccessChecker, checkConnection} from '../../src/sync/commands/check';

const START = Date.parse('2026-11-26T00:00:00.000Z');

/**
 * A virtual clock with a timer queue: once nothing else can run, time jumps to the next timer due.
 * Unlike a clock whose sleeps end at once, waits running side by side overlap as they would in real
 * time, so the deadline and hundreds of slow answers race as they do against a real service.
 */
function timerClock(): Runtime & {elapsed(): number} {
  let clock = START;
  let order = 0;
  const timers: {due: number; order: number; fire: () => void}[] = [];
  let scheduled = false;
  const advance = (): void => {
    scheduled = false;
    timers.sort((a, b) => a.due - b.due || a.order - b.order);
    const due = timers[0]?.due;
    if (due === undefined) return;
    clock = Math.max(clock, due);
    // An abort fired by one timer removes others from the queue: take them one at a time.
    while (timers.length && timers[0].due === due) (timers.shift() as (typeof timers)[number]).fire();
    if (timers.length) schedule();
  };
  const schedule = (): void => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(advance);
  };
  return {
    now: () => clock,
    random: () => 0.5,
    elapsed: () => clock - START,
    sleep: (ms, signal) => {
      if (signal?.aborted) return Promise.reject(signal.reason);
      return new Promise<void>((resolve, reject) => {
        const timer = {
          due: clock + Math.max(0, ms),
          order: order++,
          fire: () => {
            signal?.removeEventListener('abort', onAbort);
            resolve();
          },
        };
        const onAbort = (): void => {
          const i = timers.indexOf(timer);
          if (i !== -1) timers.splice(i, 1);
          reject(signal?.reason);
        };
        signal?.addEventListener('abort', onAbort, {once: true});
        timers.push(timer);
        schedule();
      });
    },
  };
}

/** Well-formed, distinct quest ids. */
const questIds = (n: number): string[] =>
  Array.from({length: n}, (_, i) => `c4ec0000-0000-4000-8000-${String(i).padStart(12, '0')}`);

function configOf(ids: string[], overrides: Record<string, unknown> = {}): QuestbackConfig {
  const raw = {
    client_id: 'client',
    client_secret: 'secret',
    api_url: 'https://api.example.test',
    auth_url: 'https://auth.example.test',
    quest_ids: ids,
    start_date: '2026-01-01T00:00:00Z',
    ...overrides,
  };
  return parseConfig(raw, START).config;
}

/** The error the API client makes of the service's 403 or 404 problem for a quest. */
function questError(questId: string, status: 403 | 404, n: number): Error {
  const detail = status === 403 ? `No access to quest '${questId}'` : `Quest '${questId}' does not exist`;
  const data = {title: status === 403 ? 'Forbidden' : 'Not Found', status, detail, traceId: `trace-${n}`};
  const config = {headers: new AxiosHeaders()};
  const response = {status, statusText: data.title, data, headers: {}, config};
  return apiError(
    new AxiosError(`Request failed with status code ${status}`, 'ERR_BAD_REQUEST', config, undefined, response),
    {operation: 'Checking access', questId, setting: 'api_url', baseUrl: 'https://api.example.test'}
  );
}

interface Service extends AccessChecker {
  maxInFlight: number;
  /** The most 'abort' listeners seen on a signal above its max (Node's leak warning fires past the max): 0 is right. */
  listenersOverMax: number;
}

/** Answers each quest after `latencyMs(id)` on the clock; `fails(id)` says which quests fail, and how. */
function slowService(
  rt: Runtime,
  latencyMs: (questId: string) => number,
  fails: (questId: string) => 403 | 404 | undefined = () => undefined
): Service {
  let inFlight = 0;
  let calls = 0;
  const service = {
    maxInFlight: 0,
    listenersOverMax: 0,
    async checkAccess(questId: string, signal?: AbortSignal): Promise<void> {
      const n = ++calls;
      inFlight++;
      service.maxInFlight = Math.max(service.maxInFlight, inFlight);
      try {
        const waiting = rt.sleep(latencyMs(questId), signal);
        if (signal) {
          const over = getEventListeners(signal, 'abort').length - getMaxListeners(signal);
          service.listenersOverMax = Math.max(service.listenersOverMax, over);
        }
        await waiting;
      } finally {
        inFlight--;
      }
      const status = fails(questId);
      if (status) throw questError(questId, status, n);
    },
  };
  return service;
}

/** A logger whose lines the test reads. */
function capturingLogger(): {logger: ConnectorLogger; lines(): Promise<{level: string; message: string}[]>} {
  const out = new PassThrough();
  const text: string[] = [];
  out.on('data', (chunk: Buffer) => text.push(chunk.toString('utf8')));
  const writer = new MessageWriter(out);
  return {
    logger: new ConnectorLogger(writer, AirbyteLogLevel.INFO),
    lines: async () => {
      await writer.flush();
      return text
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as {log?: {level: string; message: string}}).log)
        .filter((l): l is {level: string; message: string} => l !== undefined);
    },
  };
}

const count = (text: string, part: string): number => text.split(part).length - 1;

describe('check of hundreds of quests', () => {
  test('500 quests on a service answering in 1.3 s: passes within the deadline, checked side by side, without a Node warning', async () => {
    const rt = timerClock();
    const ids = questIds(500);
    const api = slowService(rt, () => 1300);
    const {logger, lines} = capturingLogger();
    const result = await checkConnection(configOf(ids), {api}, rt, logger);
    expect(result).toEqual({ok: true});
    expect(api.maxInFlight).toBe(LIMITS.check.concurrency);
    // Rounds of LIMITS.check.concurrency answers, one after the other: 16 rounds of 1.3 s.
    expect(rt.elapsed()).toBe(Math.ceil(500 / LIMITS.check.concurrency) * 1300);
    expect(rt.elapsed()).toBeLessThan(LIMITS.check.deadlineMs / 2);
    expect(api.listenersOverMax).toBeLessThanOrEqual(0);
    expect((await lines()).map((l) => l.message)).toContain(
      'Connection check passed: credentials accepted and 500 quest(s) readable'
    );
  });

  test('a service too slow for 500 quests: the check fails at its deadline and says how far it got', async () => {
    const rt = timerClock();
    const ids = questIds(500);
    const api = slowService(rt, () => 4700);
    const {logger} = capturingLogger();
    const result = await checkConnection(configOf(ids), {api}, rt, logger);
    const rounds = Math.floor(LIMITS.check.deadlineMs / 4700);
    expect(result).toEqual({
      ok: false,
      message: expect.stringMatching(
        new RegExp(
          `^The check did not finish within 1\\.0 min \\(${rounds * LIMITS.check.concurrency} of 500 quest\\(s\\) checked\\): .*too slow.*Check both addresses`
        )
      ),
    });
    expect(rt.elapsed()).toBe(LIMITS.check.deadlineMs);
  });

  test('3 of 500 quests forbidden: one message names the three in config order, and the service text once', async () => {
    const rt = timerClock();
    const ids = questIds(500);
    const bad = [ids[7], ids[250], ids[499]];
    // The later quests answer first: the message keeps the order of quest_ids all the same.
    const api = slowService(
      rt,
      (id) => (bad.includes(id) ? 100 * (3 - bad.indexOf(id)) : 1300),
      (id) => (bad.includes(id) ? 403 : undefined)
    );
    const {logger} = capturingLogger();
    const result = await checkConnection(configOf(ids), {api}, rt, logger);
    expect(result.ok).toBe(false);
    const message = result.ok ? '' : result.message;
    expect(message).toBe(
      `3 of 500 quest(s) cannot be read: Checking access for 3 quests (${bad.join(', ')}) failed: HTTP 403 - No access to quest '…'. ` +
        `The API login has no permission for this quest: ask your Questback account owner to grant access, remove the quest from quest_ids, or set skip_inaccessible_quests. ` +
        `(quest ${bad[0]}: traceId trace-8)`
    );
  });

  test('hundreds failing alike and one otherwise: one part each, in config order, 20 ids named and all of them in the log', async () => {
    const rt = timerClock();
    const ids = questIds(500);
    const missing = ids[3];
    const forbidden = ids.filter((_, i) => i >= 100 && i < 300);
    const api = slowService(
      rt,
      () => 50,
      (id) => (id === missing ? 404 : forbidden.includes(id) ? 403 : undefined)
    );
    const {logger, lines} = capturingLogger();
    const result = await checkConnection(configOf(ids), {api}, rt, logger);
    const message = result.ok ? '' : result.message;
    expect(message).toMatch(
      new RegExp(
        `^201 of 500 quest\\(s\\) cannot be read: Checking access for quest ${missing} failed: HTTP 404 - .*check its id in quest_ids.* Checking access for 200 quests \\(${forbidden.slice(0, 20).join(', ')} and 180 more \\(all named in the log\\)\\) failed: HTTP 403`
      )
    );
    expect(count(message, 'HTTP 403')).toBe(1);
    expect(message).not.toContain(forbidden[20]);
    expect(message.length).toBeLessThan(2000);
    const logged = (await lines()).filter((l) => l.level === 'WARN');
    expect(logged).toHaveLength(1);
    for (const id of forbidden) expect(logged[0].message).toContain(id);
  });

  test('with skip_inaccessible_quests, quests that fail alike are warned about once', async () => {
    const rt = timerClock();
    const ids = questIds(300);
    const forbidden = ids.slice(0, 120);
    const api = slowService(
      rt,
      () => 50,
      (id) => (forbidden.includes(id) ? 403 : undefined)
    );
    const {logger, lines} = capturingLogger();
    const result = await checkConnection(configOf(ids, {skip_inaccessible_quests: true}), {api}, rt, logger);
    expect(result).toEqual({ok: true});
    const logged = await lines();
    const warned = logged.filter((l) => l.level === 'WARN');
    expect(warned).toHaveLength(1);
    expect(warned[0].message).toMatch(/^Checking access for 120 quests \(.*\) failed: HTTP 403.*They will be skipped/);
    expect(logged.map((l) => l.message)).toContain(
      'Connection check passed: credentials accepted; 180 of 300 quest(s) readable, 120 skipped'
    );
  });
});
