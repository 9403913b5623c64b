// What the probe writes instead of values: shapes of times, outlines of texts, and a download link
// described without its ids, signature or query.

import {AnswerLog} from '../../src/probe/observer';
import {judge} from '../../src/probe/judge';
import {outline, readTime, timeShape} from '../../src/core/time-text';
import {mediaType, word} from '../../src/probe/shapes';

describe('shapes of times', () => {
  test.each([
    [
      '2026-11-26T10:00:00.123Z',
      'yyyy-MM-ddTHH:mm:ss.fffZ',
      {ms: Date.UTC(2026, 10, 26, 10, 0, 0, 123), beyondMs: false, zone: 'utc', digits: 3},
    ],
    [
      '2026-11-26T10:00:00.1234567Z',
      'yyyy-MM-ddTHH:mm:ss.fffffffZ',
      {ms: Date.UTC(2026, 10, 26, 10, 0, 0, 123), beyondMs: true, zone: 'utc', digits: 7},
    ],
    [
      '2026-11-26T12:00:00.1230000+02:00',
      'yyyy-MM-ddTHH:mm:ss.fffffff+hh:mm',
      {ms: Date.UTC(2026, 10, 26, 10, 0, 0, 123), beyondMs: false, zone: 'offset', digits: 7},
    ],
    [
      '2026-11-26 05:00:00-0500',
      'yyyy-MM-dd HH:mm:ss+hhmm',
      {ms: Date.UTC(2026, 10, 26, 10), beyondMs: false, zone: 'offset', digits: 0},
    ],
    [
      '2026-11-26T10:00:00+00:00',
      'yyyy-MM-ddTHH:mm:ss+hh:mm',
      {ms: Date.UTC(2026, 10, 26, 10), beyondMs: false, zone: 'utc', digits: 0},
    ],
    [
      '2026-11-26T10:00',
      'yyyy-MM-ddTHH:mm',
      {ms: Date.UTC(2026, 10, 26, 10), beyondMs: false, zone: 'none', digits: 0},
    ],
  ])('%s', (text, shape, time) => {
    expect(timeShape(text)).toBe(shape);
    expect(readTime(text)).toEqual(time);
  });

  test('anything else by its outline: digits as 9, letters as a, at most 40 characters', () => {
    expect(timeShape('26.11.2026 10:00')).toBe('99.99.9999 99:99');
    expect(readTime('26.11.2026 10:00')).toBeUndefined();
    expect(readTime('2026-02-30T10:00:00Z')).toBeUndefined();
    expect(outline('Ærlig talt, 42 ganger!')).toBe('aaaaa aaaa, 99 aaaaaa!');
    expect(outline('x'.repeat(50))).toBe(`${'a'.repeat(40)}… (50 characters)`);
    expect(word('INPROGRESS')).toBe('INPROGRESS');
    expect(word('eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln')).toBe(
      'a text shaped aaaaaaaaaaaaaaa9aaa9.aaaaaaaaaaa9aa9.a9a… (41 characters)'
    );
    expect(word('Bearer')).toBe('Bearer');
    expect(mediaType('text/csv; charset=utf-8')).toBe('text/csv; …');
    expect(mediaType('application/problem+json')).toBe('application/problem+json');
  });
});

test('a Location on another host and path: its host, and the path without ids, signature or query', () => {
  const log = new AnswerLog(() => 0);
  log.step = 'status';
  log.api({
    status: 302,
    headers: {location: 'https://cdn.example.com/files/Ab12cd34ef56ab12cd34ef56ab12cd34/export-9f1c.csv?sig=s3cr3t'},
    data: '',
    config: {url: 'https://api.example.com/v1/quests/q/exports/e/status'},
  } as never);
  const verdict = judge({
    apiUrl: 'https://api.example.com',
    separator: {name: 'PIPE', char: '|'},
    log,
    exports: [],
    boundary: {tested: false, why: 'not run'},
    invitations: {read: false, why: 'not run'},
  }).find((v) => v.id === 'completed.location');
  expect(verdict).toEqual({
    id: 'completed.location',
    state: 'contradicted',
    seen: '`an absolute URL on another host, https://cdn.example.com, to another path (/files/{…}/export-9f1c.csv), with a query (not shown)` ×1',
  });
  expect(verdict?.seen).not.toMatch(/Ab12|s3cr3t/);
});
