import {describeWindow, formatDuration, formatUtcTimestamp, parseUtcTimestamp} from '../../src/core/time';
import {decide, PieceRecord, WindowBudget} from '../../src/sync/exports/export-policy';
import {BYTE_CEILING, WindowSizer} from '../../src/sync/windows/window-sizer';
import {sinceForStartDate, splittable, splitWindow} from '../../src/core/time';

const DAY = 86_400_000;

describe('time windows', () => {
  test('a window splits into two halves that chain exactly', () => {
    const [a, b] = splitWindow({since: 1000, until: 1000 + 7 * DAY + 3});
    expect(a.since).toBe(1000);
    expect(a.until).toBe(b.since);
    expect(b.until).toBe(1000 + 7 * DAY + 3);
    expect(a.until - a.since).toBeGreaterThan(0);
  });

  test('windows end on whole seconds: a split, a sized window, a partition', () => {
    const since = Date.parse('2026-01-01T00:00:00.000Z') - 1;
    const [a, b] = splitWindow({since, until: since + 3001});
    expect([a.until, b.since, b.until]).toEqual([since + 1001, since + 1001, since + 3001]);
    // since lies 1 ms before a whole second: (since, since + 1 ms] has none strictly inside, (since, since + 1001 ms] has one.
    expect(splittable({since, until: since + 1})).toBe(false);
    expect(splittable({since, until: since + 1001})).toBe(true);
    expect(splittable({since: since + 1, until: since + 1001})).toBe(false);
    const sizer = new WindowSizer({targetRows: 100, exportTimeoutMs: 3_600_000}, {rows_per_day: (100 * 86_400) / 2.5});
    const next = sizer.next(since, since + 60_001);
    expect(next.window).toEqual({since, until: since + 2001});
    expect(sizer.partition({since, until: since + 10_001}).map((w) => w.until % 1000)).toEqual([0, 0, 0, 0]);
  });

  test('start_date is inclusive: since is one millisecond before it', () => {
    expect(sinceForStartDate(Date.parse('2026-01-01T00:00:00.000Z'))).toBe(Date.parse('2025-12-31T23:59:59.999Z'));
  });

  test('timestamps are sent with three fractional digits and read with any precision', () => {
    expect(formatUtcTimestamp(Date.parse('2026-03-04T05:06:07.000Z'))).toBe('2026-03-04T05:06:07.000Z');
    expect(parseUtcTimestamp('2026-03-04T05:06:07.1234567Z')).toBe(Date.parse('2026-03-04T05:06:07.123Z'));
    expect(parseUtcTimestamp('2026-03-04T05:06:07Z')).toBe(Date.parse('2026-03-04T05:06:07.000Z'));
    expect(parseUtcTimestamp('2026-03-04')).toBe(Date.parse('2026-03-04T00:00:00.000Z'));
    expect(parseUtcTimestamp('2026-03-04T05:06:07+00:00')).toBe(Date.parse('2026-03-04T05:06:07.000Z'));
  });

  test.each([
    '2026-13-01T00:00:00Z',
    '2026-02-30T00:00:00Z',
    '2026-03-04T05:06:07',
    '2026-03-04T05:06:07+02:00',
    'yesterday',
    '',
  ])('rejects %j (not a UTC timestamp)', (value) => expect(parseUtcTimestamp(value)).toBeUndefined());

  test('a window is described as a half-open interval', () => {
    expect(describeWindow({since: 0, until: 1000})).toBe('(1970-01-01T00:00:00.000Z, 1970-01-01T00:00:01.000Z]');
  });

  test('durations read well in log lines', () => {
    expect([350, 3100, 270_000, 7_200_000, 240 * DAY].map(formatDuration)).toEqual([
      '350 ms',
      '3.1 s',
      '4.5 min',
      '2.0 h',
      '240 d',
    ]);
  });
});

describe('window sizing', () => {
  const opts = {targetRows: 100_000, exportTimeoutMs: 3_600_000};
  const NOW = Date.parse('2026-11-26T00:00:00.000Z');

  test('a first sync probes an eighth of a long span, or reads a short one in one export', () => {
    const sizer = new WindowSizer(opts);
    const long = sizer.next(NOW - 6 * 365 * DAY, NOW);
    expect(long.window.until - long.window.since).toBe(Math.floor((6 * 365 * DAY) / 8));
    expect(long.reason).toMatch(/first probe of 1\/8/);
    expect(new WindowSizer(opts).next(NOW - 3 * DAY, NOW).window).toEqual({since: NOW - 3 * DAY, until: NOW});
  });

  test('an empty window lets the next grow eight times at most; the rest is taken when little would be left', () => {
    const sizer = new WindowSizer(opts);
    const first = sizer.next(NOW - 6 * 365 * DAY, NOW).window;
    sizer.observe({window: first, rows: 0, generationMs: 3100});
    const second = sizer.next(first.until, NOW);
    expect(second.window.until).toBe(NOW);
    const capped = new WindowSizer(opts);
    const w = capped.next(0, 10_000 * DAY).window;
    capped.observe({window: w, rows: 0});
    const next = capped.next(w.until, 100_000 * DAY);
    expect(next.window.until - next.window.since).toBe((w.until - w.since) * 8);
    expect(next.reason).toMatch(/grown ×8, because the last window \(1250 d\) held 0 rows/);
  });

  test('a dense window sizes the next for the target; bytes, slow generation and window_days cap it', () => {
    const sizer = new WindowSizer(opts);
    sizer.observe({window: {since: 0, until: DAY}, rows: 50_000, bytes: 50_000 * 400});
    expect((sizer.next(DAY, 100 * DAY).window.until - DAY) / DAY).toBeCloseTo(2, 3);
    const wide = new WindowSizer(opts);
    wide.observe({window: {since: 0, until: DAY}, rows: 50_000, bytes: 50_000 * 20_000});
    const byBytes = wide.next(DAY, 100 * DAY);
    expect(byBytes.reason).toMatch(/capped at 256 MiB/);
    expect((byBytes.window.until - DAY) * (50_000 / DAY) * 20_000).toBeLessThanOrEqual(BYTE_CEILING * 1.01);
    const slow = new WindowSizer(opts);
    slow.observe({window: {since: 0, until: DAY}, rows: 10_000, generationMs: 30 * 60_000});
    expect(slow.next(DAY, 100 * DAY).reason).toMatch(/took 30.0 min to generate/);
    const capped = new WindowSizer({...opts, maxSpanMs: 30 * DAY});
    expect(capped.next(0, 1000 * DAY).window.until).toBe(125 * DAY > 30 * DAY ? 30 * DAY : 125 * DAY);
  });

  test('a few rows in a short window are pooled with what was seen before: the next window is not made tiny', () => {
    const sizer = new WindowSizer(opts, {rows_per_day: 2});
    sizer.observe({window: {since: NOW - 1600, until: NOW}, rows: 4});
    expect(sizer.hint()?.rows_per_day).toBeLessThan(3);
    expect(sizer.next(NOW, NOW + 2 * DAY).window.until).toBe(NOW + 2 * DAY);
  });

  test('a density from the state sizes the first window without a probe, and the state keeps it', () => {
    const sizer = new WindowSizer(opts, {rows_per_day: 2740, bytes_per_row: 410});
    expect(sizer.ahead).toBe('density');
    expect(sizer.next(NOW - 2 * DAY, NOW).window.until).toBe(NOW);
    expect(sizer.hint()).toEqual({rows_per_day: 2740, bytes_per_row: 410});
  });
});

describe('the export policy', () => {
  const piece = (): PieceRecord => ({window: {since: 0, until: DAY}, failedInRow: 0, cutOffsInRow: 0});
  const budget = (): WindowBudget => ({setbacks: 0, timeouts: 0, stalledMs: 0});

  test('a failed export is created again, then split after two failures in a row; its halves split at their first', () => {
    const p = piece();
    const b = budget();
    expect(decide({kind: 'failed', exportId: 'e1', status: 'ERROR'}, p, b)).toEqual({action: 'recreate'});
    expect(decide({kind: 'failed', exportId: 'e2', status: 'ERROR'}, p, b)).toEqual({action: 'split'});
    const half = {...piece(), halfOfFailed: true};
    expect(decide({kind: 'failed', exportId: 'e3', status: 'ERROR'}, half, b)).toEqual({action: 'split'});
  });

  test('a cut-off download is downloaded again, and split after three in a row', () => {
    const p = piece();
    const b = budget();
    const cut = {kind: 'cut-off' as const, exportId: 'e1', reason: 'stalled'};
    expect([decide(cut, p, b), decide(cut, p, b), decide(cut, p, b)].map((d) => d.action)).toEqual([
      'redownload',
      'redownload',
      'split',
    ]);
  });

  test('a timeout splits at once, at most twice; a vanished or gone export is created again', () => {
    const b = budget();
    const timeout = {kind: 'timeout' as const, exportId: 'e', status: 'PENDING', waitedMs: 60_000, timeoutMs: 60_000};
    expect(decide(timeout, piece(), b).action).toBe('split');
    expect(decide(timeout, piece(), b).action).toBe('split');
    expect(decide(timeout, piece(), b)).toMatchObject({
      action: 'fail',
      why: expect.stringMatching(/still PENDING after 1.0 min/),
    });
    expect(decide({kind: 'vanished', exportId: 'e', httpStatus: 404}, piece(), budget()).action).toBe('recreate');
    expect(decide({kind: 'gone', exportId: 'e', httpStatus: 410}, piece(), budget()).action).toBe('recreate');
  });

  test('a window and its pieces share one budget; a piece of 1 ms is never split', () => {
    const b = budget();
    const p = piece();
    const gone = {kind: 'gone' as const, exportId: 'e', httpStatus: 410};
    for (let i = 0; i < 16; i++) expect(decide(gone, p, b).action).toBe('recreate');
    expect(decide(gone, p, b)).toMatchObject({action: 'fail', why: expect.stringMatching(/16 setbacks in one window/)});
    const tiny = {window: {since: 0, until: 1}, failedInRow: 5, cutOffsInRow: 0};
    expect(decide({kind: 'failed', exportId: 'e', status: 'ERROR'}, tiny, budget()).action).toBe('recreate');
  });
});
