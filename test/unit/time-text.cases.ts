// One reader of the service's times (core/time-text.ts): what the probe shapes, what a read keeps
// in a window, and what the records carry as RFC 3339.

import {placeInWindow, readTime, rfc3339} from '../../src/core/time-text';

describe('times as RFC 3339 in UTC, with the precision written', () => {
  test.each([
    ['2026-11-25 04:15:00', '2026-11-25T04:15:00Z'],
    ['2026-11-25T04:15:00.123Z', '2026-11-25T04:15:00.123Z'],
    ['2026-11-25T04:15:00.1234567Z', '2026-11-25T04:15:00.1234567Z'],
    ['2026-11-25T06:15:00.1230000+02:00', '2026-11-25T04:15:00.1230000Z'],
    ['2026-11-24 23:15:00,5-0500', '2026-11-25T04:15:00.5Z'],
    ['2026-01-01T01:30+0200', '2025-12-31T23:30:00Z'],
    ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00Z'],
    ['2024-03-01T00:30:00+01:00', '2024-02-29T23:30:00Z'],
    ['  2026-11-25t04:15:00z ', '2026-11-25T04:15:00Z'],
    // Already RFC 3339 but for white space around it: never copied with the tab (a raw tab breaks the JSON record).
    ['\t2026-11-25T04:15:00Z', '2026-11-25T04:15:00Z'],
    ['2026-11-25T04:15:00.5Z\t', '2026-11-25T04:15:00.5Z'],
    ['1999-12-31T23:59:59.999-00:01', '2000-01-01T00:00:59.999Z'],
  ])('%s', (text, expected) => {
    expect(rfc3339(text)).toBe(expected);
    expect(Date.parse(expected)).toBe(readTime(text)?.ms);
  });

  test.each([
    '25/11/2026 04:15',
    '11/25/2026 04:15:00',
    '2026-11-25',
    '2025-04-07T12Z',
    '2026-02-29T00:00:00Z',
    '2026-11-25T24:00:00Z',
    '2026-11-25T04:15:60Z',
    '2026-11-25T04:15:00.Z',
    '2026-11-25T04:15:00+2',
    '2026-11-25T04:15:00 Z',
    '0026-11-25T04:15:00Z',
    '1764044100',
    '',
  ])('not a time, so nothing is guessed: %j', (text) => {
    expect(rfc3339(text)).toBeUndefined();
    expect(readTime(text)).toBeUndefined();
  });

  test('a window holds the times after its start, up to and with its end; digits beyond the millisecond count', () => {
    const window = {since: Date.parse('2026-11-25T00:00:00Z'), until: Date.parse('2026-11-26T00:00:00Z')};
    const place = (text: string): number =>
      placeInWindow(readTime(text) ?? {ms: NaN, beyondMs: false, zone: 'none', digits: 0}, window);
    expect(
      [
        '2026-11-25T00:00:00Z',
        '2026-11-25T00:00:00.0000001Z',
        '2026-11-25T02:00:00+02:00',
        '2026-11-26T00:00:00.0000000Z',
        '2026-11-26T00:00:00.0001Z',
        '2026-11-26T01:00:00+02:00',
      ].map(place)
    ).toEqual([-1, 0, -1, 0, 1, 0]);
  });
});
