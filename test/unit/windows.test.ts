import {describeWindow, formatUtcTimestamp, parseUtcTimestamp, planWindows, sinceForStartDate} from '../../src/windows';

const DAY = 86_400_000;

describe('time windows', () => {
  test('windows chain without gap or overlap and end exactly at the end', () => {
    const since = Date.parse('2026-01-01T00:00:00.000Z');
    const end = since + 10 * DAY + 123;
    const windows = planWindows(since, end, 3 * DAY);
    expect(windows).toHaveLength(4);
    expect(windows[0].since).toBe(since);
    for (let i = 1; i < windows.length; i++) expect(windows[i].since).toBe(windows[i - 1].until);
    expect(windows[windows.length - 1].until).toBe(end);
    expect(windows.every((w) => w.until - w.since <= 3 * DAY && w.until > w.since)).toBe(true);
  });

  test('no windows when the cursor is at or past the end (a state in the future)', () => {
    expect(planWindows(1000, 1000, DAY)).toEqual([]);
    expect(planWindows(5000, 1000, DAY)).toEqual([]);
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

  test('a non-positive window length is refused rather than looping forever', () => {
    expect(() => planWindows(0, 10, 0)).toThrow(RangeError);
  });
});
