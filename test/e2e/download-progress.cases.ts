// A long wait is visible while it lasts. A download: a progress line at most every 30 s of the clock, with
// rows, size and rate so far, and the share done when the size is announced. In-process on a virtual
// clock with the simulator's slow-download switch, so a download of minutes takes a second or two.
// An export being generated: a line at most 30 s after the one before, until it completes.

import {DAY_MS, HostileRun, logs, Row, runHostile, streamDataProblems, withServer} from '../helpers/hostile';
import {Simulator} from '../../simulator';

const Q = '1b4e28ba-2fa1-41d2-883f-0016d3cca427';
/**
 * The download's idle timeout and progress floor run on the same clock as the pace: with a request timeout of
 * 120 s the floor is 64 KB per 240 s, so a download of 600 B/s is slow but sound.
 */
const SLOW_BUT_SOUND = {request_timeout_seconds: 120};

/** 400 responses over the last two days, each about 150 bytes: a file of about 60 KB. */
function manyRows(): Row[] {
  const now = Date.now();
  return Array.from({length: 400}, (_, i) => [
    `R-${10001 + i}`,
    new Date(now - 2 * DAY_MS + i * 60_000).toISOString(),
    `Answer ${i}: ${'the service was friendly and quick to answer, '.repeat(2)}`,
    String((i % 5) + 1),
  ]);
}

/** The read succeeded and emitted every row once. */
function expectWhole(run: HostileRun, server: Simulator): void {
  expect({code: run.code, problems: streamDataProblems(run, server, Q)}).toEqual({code: 0, problems: []});
}

const progressLines = (messages: {level: string; message: string}[]): string[] =>
  messages.map((l) => l.message).filter((m) => / downloading export /.test(m));

/** Seconds from a formatted duration such as "2 ms", "31.0 s" or "1.5 min", and how far its rounding may be off. */
const seconds = (text: string): {value: number; off: number} => {
  const [figure, unit] = text.split(' ');
  if (unit === 'min') return {value: Number(figure) * 60, off: 3};
  return unit === 'ms' ? {value: Number(figure) / 1000, off: 0.0005} : {value: Number(figure), off: 0.05};
};

describe('progress while downloading', () => {
  test('a download of about 100 s logs a line every 30 s or more with rows, size, rate and the share done', async () => {
    await withServer({quests: [{id: Q, rows: manyRows()}]}, async (server) => {
      server.setFaults({downloadBytesPerSecond: 600});
      const run = await runHostile(server, 'read', {config: SLOW_BUT_SOUND});
      expectWhole(run, server);
      const lines = progressLines(logs(run));
      // About 100 s of download: a line after 30, 60 and 90 s (the last one may fall after the end).
      expect(lines.length).toBeGreaterThanOrEqual(2);
      expect(lines.length).toBeLessThanOrEqual(3);
      const parsed = lines.map((line) => {
        const m =
          /downloading export \S+ of window .+ for (\S+ (?:s|min)): ([\d,]+) rows? and (\d+) KB so far, (\d+)% of (\d+) KB, at (\d+) B\/s and ([\d,]+) rows?\/s$/.exec(
            line
          );
        if (!m) throw new Error(`unexpected progress line: ${line}`);
        return {
          after: seconds(m[1]),
          rows: Number(m[2].replace(/,/g, '')),
          kb: Number(m[3]),
          percent: Number(m[4]),
          totalKb: Number(m[5]),
          rate: Number(m[6]),
        };
      });
      parsed.forEach((p, i) => {
        // At most one line every 30 s of the clock (the durations are rounded to 0.1 s or 0.1 min).
        expect(p.after.value + p.after.off).toBeGreaterThanOrEqual(30 * (i + 1));
        if (i > 0) {
          const before = parsed[i - 1].after;
          expect(p.after.value - before.value + p.after.off + before.off).toBeGreaterThanOrEqual(30);
          expect(p.rows).toBeGreaterThan(parsed[i - 1].rows);
          expect(p.percent).toBeGreaterThan(parsed[i - 1].percent);
        }
        expect(p.rows).toBeGreaterThan(0);
        expect(p.rows).toBeLessThan(400);
        expect(p.percent).toBeGreaterThan(0);
        expect(p.percent).toBeLessThan(100);
        // The share is the bytes so far of the announced length; the rate is the bytes over the time.
        expect(Math.abs(p.percent - (100 * p.kb) / p.totalKb)).toBeLessThanOrEqual(2);
        expect(p.rate).toBeGreaterThanOrEqual(450);
        expect(p.rate).toBeLessThanOrEqual(650);
      });
    });
  });

  test('a slow download of unknown size says so instead of a share', async () => {
    await withServer({quests: [{id: Q, rows: manyRows()}]}, async (server) => {
      server.setFaults({downloadBytesPerSecond: 1500, framing: 'chunked'});
      const run = await runHostile(server, 'read', {config: SLOW_BUT_SOUND});
      expectWhole(run, server);
      const lines = progressLines(logs(run));
      expect(lines.length).toBeGreaterThanOrEqual(1);
      for (const line of lines) expect(line).toMatch(/ so far \(the size is not announced\), at \d+ K?B\/s /);
    });
  });

  test('a short download logs no progress line', async () => {
    await withServer({quests: [{id: Q, rows: manyRows()}]}, async (server) => {
      const run = await runHostile(server, 'read');
      expectWhole(run, server);
      expect(progressLines(logs(run))).toEqual([]);
      expect(logs(run).some((l) => /done, 400 rows emitted/.test(l.message))).toBe(true);
    });
  });
});

describe('progress while an export is generated', () => {
  test('an export generated for about 55 s logs its wait at most 30 s apart, from creation to completion', async () => {
    await withServer({quests: [Q]}, async (server) => {
      server.on('status', (ctx) => {
        const age = ctx.job ? ctx.now() - Date.parse(ctx.job.createdAt) : 0;
        if (age < 3000) return ctx.jobStatus('PENDING');
        if (age < 52_000) return ctx.jobStatus('INPROGRESS');
        return ctx.next();
      });
      const run = await runHostile(server, 'read');
      expect(run.code).toBe(0);
      // Every line of the wait says how long the export has been generated: "(4.1 s)", "after 31.2 s".
      const afters = logs(run)
        .map((l) => / export \S+ (?:is \w+ \(|is still \w+ after |completed after )([\d.]+ m?s)\b/.exec(l.message))
        .filter((m): m is RegExpExecArray => m !== null)
        .map((m) => seconds(m[1]).value);
      // The first poll's PENDING, the last one's completion (a minute or less: durations in seconds).
      expect(afters[0]).toBeLessThan(1);
      expect(afters[afters.length - 1]).toBeGreaterThanOrEqual(52);
      const gaps = afters.slice(1).map((at, i) => at - afters[i]);
      expect(gaps.filter((gap) => gap > 30)).toEqual([]);
    });
  });
});
