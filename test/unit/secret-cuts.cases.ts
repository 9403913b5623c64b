// A secret echoed by the service and cut short on its way to the output: a problem's text is cut to
// 300 characters, a page's excerpt to 120, wherever the secret lies. No run of 8 characters of the
// secret, in any encoding the connector scrubs, may survive the scrubber, at any offset of the cut.

import {AxiosError, AxiosHeaders} from 'axios';

import {apiError} from '../../src/api/api-error';
import {errorMessage} from '../../src/core/errors';
import {SecretScrubber} from '../../src/core/secrets';
import {ECHO_ENCODINGS} from '../../simulator';

const CLIENT_ID = '312345678901234567@questback';
const SECRET = 's3cr3t/with+special=chars&more ø%"\\';
/** A JWT's length and alphabet: longer than the 300 characters a problem's text is cut to. */
const TOKEN = `eyJhbGciOiJFUzI1NiIsInR5cCI6IkpXVCJ9.${'eyJpc3MiOiJodHRwczovL2F1dGgiLCJzdWIiOiIzMTIzNDU2Nzg5MDEyMzQ1NjcifQ'.repeat(4)}.${'MEUCIQDx7_k-Qw'.repeat(6)}`;

/** The encodings a credential comes back in (the simulator's echoCredentials encodings). */
const ENCODINGS = Object.fromEntries(
  Object.entries(ECHO_ENCODINGS).map(([name, encode]) => [name, (v: string) => encode(v, CLIENT_ID)])
);

/** The encodings of a secret: HTTP Basic credentials carry the client secret only, never a token. */
const encodingsOf = (secret: string): [string, (v: string) => string][] =>
  Object.entries(ENCODINGS).filter(([name]) => secret === SECRET || name !== 'basic');

/** Every run of 8 characters of every encoding of `value`, and of each as a JSON line escapes it. */
function runsOf(value: string): Set<string> {
  const runs = new Set<string>();
  for (const [, encode] of encodingsOf(value)) {
    const form = encode(value);
    for (const text of [form, JSON.stringify(form).slice(1, -1)])
      for (let i = 0; i + 8 <= text.length; i++) runs.add(text.slice(i, i + 8));
  }
  return runs;
}

function found(runs: Set<string>, text: string): string[] {
  const hits = new Set<string>();
  for (let i = 0; i + 8 <= text.length; i++) if (runs.has(text.slice(i, i + 8))) hits.add(text.slice(i, i + 8));
  return [...hits];
}

function failure(status: number, data: unknown): AxiosError {
  const config = {headers: new AxiosHeaders(), url: '/v1/quests/q/exports'};
  return new AxiosError(
    'Request failed',
    'ERR_BAD_RESPONSE',
    config,
    {},
    {status, statusText: '', data, headers: {}, config}
  );
}

const filler = (n: number): string => 'The request could not be processed. '.repeat(20).slice(0, n);

/** The bodies a service may quote a text in: a problem's detail (cut to 300), a page's title (cut to 120). */
const BODIES: [string, number, (text: string) => unknown][] = [
  ['a problem detail', 300, (text) => ({title: 'Bad Request', status: 400, detail: text})],
  ['an HTML page', 120, (text) => `<html><head><title>${text}</title></head><body></body></html>`],
];

describe.each([
  ['the client secret', SECRET],
  ['an issued token', TOKEN],
])('%s echoed across a cut', (_name, secret) => {
  const scrubber = new SecretScrubber();
  scrubber.add(SECRET, CLIENT_ID);
  scrubber.add(TOKEN);
  const runs = runsOf(secret);

  test.each(BODIES)('in %s, in every encoding, at every offset around the cut', (_body, cut, body) => {
    const leaks: string[] = [];
    let cutSeen = 0;
    for (const [encoding, encode] of encodingsOf(secret)) {
      const form = encode(secret);
      for (let at = Math.max(0, cut - form.length - 2); at <= cut + 1; at++) {
        const message = errorMessage(
          apiError(failure(400, body(`${filler(at)}${form} was not accepted`)), {operation: 'Creating an export'})
        );
        // The message as it goes out: a JSON line through the scrubber.
        const line = scrubber.scrub(JSON.stringify({type: 'LOG', log: {level: 'ERROR', message}}));
        if (found(runs, message).length && !message.includes(form)) cutSeen++;
        for (const run of found(runs, line)) leaks.push(`${encoding} at ${at}: ${run}`);
      }
    }
    // The cut did fall inside the secret: the message held a piece of it before the scrubber.
    expect(cutSeen).toBeGreaterThan(10);
    expect(leaks).toEqual([]);
  });
});

test('the scrubber masks a whole secret, a piece of it, and leaves other text and short pieces alone', () => {
  const scrubber = new SecretScrubber();
  scrubber.add('hunter2-secret-value');
  expect(scrubber.scrub('a hunter2-secret-value b')).toBe('a ********** b');
  expect(scrubber.scrub('cut: hunter2-sec...')).toBe('cut: **********...');
  expect(scrubber.scrub('…cret-value, then')).toBe('…**********, then');
  expect(scrubber.scrub('hunter2 is not eight')).toBe('hunter2 is not eight');
  expect(scrubber.scrub('nothing here')).toBe('nothing here');
  const short = new SecretScrubber();
  short.add('abc123');
  expect(short.scrub('x abc123 y abc12')).toBe('x ********** y abc12');
});
