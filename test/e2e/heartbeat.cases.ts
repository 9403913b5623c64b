// The heartbeat: during a long wait with no record, a stream repeats its STATE after 5 min of the
// clock, only where the exactly-once rule allows one (no record since its last STATE), so the
// platform sees life; a read stopped after a heartbeat resumes with every row committed once. In
// process, on a virtual clock: waits of minutes take a few seconds (test/unit/heartbeat.cases.ts
// holds a wait of hours, the heartbeat alone).

import {committed, LiveLine, records, RecordMessage, StateMessage, stateFile, states} from '../helpers/connector';
import {responses} from '../helpers/combined';
import {streamOf} from '../helpers/fixtures';
import {
  catalogOf,
  launch,
  logs,
  recordsOf,
  runHostile,
  stateMessages,
  streamDataProblems,
  withServer,
} from '../helpers/hostile';
import {AirbyteMessageJson} from '../helpers/protocol';
import {ExportRecord, RouteContext, Simulator} from '../../simulator';
import {responsesCatalogStream} from '../../src/sync/streams/responses-stream';

const A = '1b4e28ba-2fa1-41d2-883f-0016d3cca427';
const B = '2c5f39cb-3ab2-42e3-994f-1127d4ddb538';
const MINUTE = 60_000;
const HEARTBEAT = 5 * MINUTE;
/** How long the slow exports take to generate. */
const SLOW = 7 * MINUTE;

/** A length-delimited answer whose connection closes 3 bytes short of its end: a download cut off. */
function cutShort(body: string): Buffer {
  const bytes = Buffer.from(body, 'utf8');
  return Buffer.concat([
    Buffer.from(`HTTP/1.1 200 OK\r\nContent-Type: text/csv\r\nContent-Length: ${bytes.length}\r\n\r\n`, 'latin1'),
    bytes.subarray(0, bytes.length - 3),
  ]);
}

/**
 * Quest A's window writes rows, then cannot end for a long while: its first download is cut off
 * after most rows, the second finds the file gone (410), and the export made anew takes SLOW to
 * generate. Quest B's export takes SLOW to generate, with nothing written meanwhile. Every later
 * download is served whole.
 */
function slowService(server: Simulator): void {
  const downloadsOfA = {n: 0};
  const slow = (job: ExportRecord): boolean =>
    job.questId === B || server.exports().filter((e) => e.questId === A)[1]?.exportId === job.exportId;
  server.on('status', (ctx: RouteContext) => {
    const job = ctx.job;
    if (job && slow(job) && ctx.now() < Date.parse(job.createdAt) + SLOW) ctx.jobStatus('INPROGRESS');
    else return ctx.next();
  });
  server.on('download', (ctx: RouteContext) => {
    if (ctx.questId !== A) return ctx.next();
    downloadsOfA.n++;
    if (downloadsOfA.n === 1) ctx.raw(cutShort(ctx.csv()), true);
    else if (downloadsOfA.n === 2) ctx.problem(410, 'The export file has expired.');
    else return ctx.next();
  });
}

const stateOf = (line: LiveLine): StateMessage | undefined => {
  const m = JSON.parse(line.line) as AirbyteMessageJson;
  return m.type === 'STATE' ? (m as unknown as StateMessage) : undefined;
};

/** The STATE lines of a stream, with their time on the clock. */
const stateLines = (lines: LiveLine[], stream: string): {at: number; state: StateMessage['state']}[] =>
  lines.flatMap((line) => {
    const s = stateOf(line);
    return s && s.state.stream.stream_descriptor.name === stream ? [{at: line.at, state: s.state}] : [];
  });

/** Position of the first RECORD of `stream` among the messages, and of every STATE of it. */
function positions(messages: AirbyteMessageJson[], stream: string): {firstRecord: number; states: number[]} {
  let firstRecord = -1;
  const at: number[] = [];
  messages.forEach((m, i) => {
    if (m.type === 'RECORD' && (m as unknown as RecordMessage).record.stream === stream && firstRecord < 0)
      firstRecord = i;
    if (m.type === 'STATE' && (m as unknown as StateMessage).state.stream.stream_descriptor.name === stream) at.push(i);
  });
  return {firstRecord, states: at};
}

const heartbeatLogs = (messages: AirbyteMessageJson[]): string[] =>
  logs({messages} as Parameters<typeof logs>[0])
    .map((l) => l.message)
    .filter((m) => /^No record or STATE for /.test(m));

describe('heartbeat during long waits', () => {
  test('per quest: the waiting quest repeats its STATE after 5 min, the quest with uncommitted rows does not; stopped after a heartbeat, the read resumes with each row committed once', async () => {
    await withServer({quests: [A, B]}, async (server) => {
      slowService(server);
      const options = {config: {export_timeout_minutes: 60}};
      const {live, done} = launch(server, 'read', options);
      // Stop after B's repeated STATE: its export's creation, then a heartbeat.
      const stop = await live.waitForLine(() => stateLines(live.lines, streamOf(B)).length >= 2, 90_000);
      expect(stop).toBeDefined();
      live.kill('SIGTERM');
      const first = await done;

      const ofB = stateLines(live.lines, streamOf(B));
      expect(ofB.length).toBeGreaterThanOrEqual(2);
      // The heartbeat repeats B's state as it was (its export recorded), committing no record, after 5 min.
      for (const s of ofB.slice(1)) {
        expect(s.state.stream.stream_state).toEqual(ofB[0].state.stream.stream_state);
        expect(s.state.sourceStats.recordCount).toBe(0);
      }
      expect(ofB[1].at - ofB[0].at).toBeGreaterThanOrEqual(HEARTBEAT);
      expect(ofB[1].at - ofB[0].at).toBeLessThan(HEARTBEAT + MINUTE);
      // A wrote rows that its window has not committed: no STATE of A after its first record.
      const a = positions(first.messages, streamOf(A));
      expect(a.firstRecord).toBeGreaterThan(-1);
      expect(a.states.filter((i) => i > a.firstRecord)).toEqual([]);
      expect(heartbeatLogs(first.messages).some((m) => /1 stream with records not yet committed/.test(m))).toBe(true);

      // The next attempt re-uses the exports the STATEs recorded (A's first, B's slow one: downloaded
      // now) and commits every row once, over both attempts.
      const [a1, , b1] = [
        ...server.exports().filter((e) => e.questId === A),
        ...server.exports().filter((e) => e.questId === B),
      ];
      const second = await runHostile(server, 'read', {
        ...options,
        config: first.config,
        state: stateFile(first.messages),
      });
      expect(second.code).toBe(0);
      const downloads = (id: string): number | undefined => server.exports().find((e) => e.exportId === id)?.downloads;
      expect([downloads(a1.exportId), downloads(b1.exportId)]).toEqual([3, 1]);
      for (const q of [A, B]) {
        expect(streamDataProblems(second, server, q)).toEqual([]);
        const once = [...committed(first.messages), ...committed(second.messages)].filter(
          (r) => r.record.stream === streamOf(q)
        );
        expect(once.length).toBe(recordsOf(second, q).length);
      }
    });
  });

  test('combined: no STATE of responses while quest A has rows not committed, though quest B waits; stopped then, the read resumes with each row committed once', async () => {
    await withServer({quests: [A, B]}, async (server) => {
      slowService(server);
      const options = {
        config: {export_timeout_minutes: 60, stream_layout: 'combined'},
        catalog: {
          streams: [{stream: responsesCatalogStream(), sync_mode: 'incremental', destination_sync_mode: 'append'}],
        },
      };
      const {live, done} = launch(server, 'read', options);
      // Stop after the heartbeat found no STATE it could repeat.
      const stop = await live.waitForLine(
        () => heartbeatLogs(live.lines.map((l) => JSON.parse(l.line))).length >= 1,
        90_000
      );
      expect(stop).toBeDefined();
      live.kill('SIGTERM');
      const first = await done;
      const beats = heartbeatLogs(first.messages);
      expect(beats.length).toBeGreaterThanOrEqual(1);
      for (const m of beats) expect(m).toMatch(/no STATE repeated; 1 stream with records not yet committed/);
      const r = positions(first.messages, 'responses');
      expect(r.firstRecord).toBeGreaterThan(-1);
      expect(r.states.filter((i) => i > r.firstRecord)).toEqual([]);

      const second = await runHostile(server, 'read', {
        ...options,
        config: first.config,
        state: stateFile(first.messages),
      });
      expect(second.code).toBe(0);
      const all = [...responses(committed(first.messages)), ...responses(committed(second.messages))];
      for (const q of [A, B]) {
        const ids = all.filter((x) => x.quest_id === q).map((x) => x.response_id);
        const truth = server
          .groundTruth(q)
          .rows.filter((row) => Date.parse(row[1]) >= second.startMs)
          .map((row) => row[0]);
        expect(ids.sort()).toEqual(truth.sort());
      }
    });
  });

  test('a long wait for the rate limit before any record repeats the STATE the stream starts from, moving nothing', async () => {
    await withServer({quests: [A]}, async (server) => {
      server.on('create', (ctx) =>
        ctx.n <= 2 ? ctx.problem(429, 'Too many exports', {'Retry-After': '300'}) : ctx.next()
      );
      const run = await runHostile(server, 'read', {catalog: catalogOf(server, [A])});
      expect(run.code).toBe(0);
      expect(streamDataProblems(run, server, A)).toEqual([]);
      const before = states(run.messages).slice(
        0,
        run.messages.filter((m) => m.type === 'STATE' || m.type === 'RECORD').findIndex((m) => m.type === 'RECORD')
      );
      expect(before.length).toBeGreaterThanOrEqual(1);
      // The heartbeat's STATE: the cursor where the read starts (start_date less 1 ms), no export, no record.
      const heartbeat = stateMessages(run, A)[0].state;
      expect(heartbeat).toMatchObject({
        sourceStats: {recordCount: 0},
        stream: {stream_state: {cursor: new Date(run.startMs - 1).toISOString()}},
      });
      expect(heartbeat.stream.stream_state).not.toHaveProperty('exports');
      expect(heartbeatLogs(run.messages)[0]).toMatch(/repeated the STATE of 1 stream \(quest_/);
      expect(records(run.messages).length).toBeGreaterThan(0);
    });
  });
});
