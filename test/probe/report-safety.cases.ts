// The probe's report is meant to be sent to Questback support as it is: it must hold no secret, no
// token and no value of any response, in any encoding; the probe's log lines neither.

import {secretForms} from '../../src/core/secrets';
import {probeCache, ProbeRun, Variant} from '../helpers/probe';

/** Every form a value may take in a text: as is, JSON-escaped, URL-encoded, base64 (standard, unpadded, URL-safe). */
function forms(value: string): string[] {
  const base64 = Buffer.from(value, 'utf8').toString('base64');
  return [
    ...new Set([
      value,
      JSON.stringify(value).slice(1, -1),
      encodeURIComponent(value),
      encodeURIComponent(value).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
      new URLSearchParams({v: value}).toString().slice(2),
      base64,
      base64.replace(/=+$/, ''),
      Buffer.from(value, 'utf8').toString('base64url'),
    ]),
  ];
}

/** What of the secrets, tokens and cells of a run a text holds, by kind. */
function leaks(run: ProbeRun, text: string): string[] {
  const {clientId, clientSecret, tokens, cells} = run.secrets;
  const found: string[] = [];
  for (const form of secretForms(clientSecret, clientId))
    if (text.includes(form)) found.push(`client secret as ${form}`);
  for (const form of forms(clientId)) if (text.includes(form)) found.push(`client id as ${form}`);
  for (const token of tokens) {
    // A token's payload alone (its claims) is as telling as the token.
    for (const part of [token, ...token.split('.')]) {
      for (const form of secretForms(part)) if (text.includes(form)) found.push(`a token as ${form.slice(0, 12)}…`);
    }
  }
  // Values of six characters or more: shorter ones (1, 3, Red) are ordinary counts and words.
  for (const cell of new Set(cells.filter((c) => c.length >= 6))) {
    for (const form of forms(cell)) if (text.includes(form)) found.push(`the cell ${JSON.stringify(cell)} as ${form}`);
  }
  if (/sig=[0-9a-f]/i.test(text)) found.push("a download link's signature");
  return found;
}

const VARIANTS: [string, Variant][] = [
  ['the spec-faithful simulator, rate limited', {faults: {rateLimit: {limit: 1000, windowMs: 60_000}}}],
  [
    'a service that differs wherever the spec is silent',
    {
      dialect: {
        downloadHost: 'other-host',
        created: 'iso-7',
        statusWords: 'pascal',
        tokenType: 'bearer',
        sinceInclusive: true,
        errorBodies: 'text',
      },
      quest: {titles: 'norwegian', encoding: 'utf8'},
    },
  ],
  ['a file that breaks off in a stray quote', {quest: {corruption: 'stray-quote'}}],
  ['a service that echoes the request in its errors', {dialect: {unknownExportStatus: 400}}],
];

const probe = probeCache();
beforeAll(() => probe.prefetch([...VARIANTS.map(([, variant]) => variant), {}], VARIANTS.length + 1));

describe.each(VARIANTS)('%s', (_name, variant) => {
  let run: ProbeRun;
  beforeAll(async () => {
    run = await probe(variant);
  });

  test('the report holds no secret, token or response value, in any encoding', () => {
    expect(run.report).toMatch(/^# Questback export API: probe report/);
    expect(run.secrets.cells.length).toBeGreaterThan(100);
    expect(leaks(run, run.report)).toEqual([]);
  });

  test("the probe's log lines neither, before any redaction", () => {
    expect(run.logs.length).toBeGreaterThan(10);
    expect(leaks(run, run.logs.join('\n'))).toEqual([]);
  });
});

test('the scan finds what it looks for (a report with a token, a secret and a cell in disguise)', async () => {
  const run = await probe({});
  const cell = run.secrets.cells.find((c) => c.length >= 6 && /[^\x20-\x7e]/.test(c)) as string;
  const token = run.secrets.tokens[0];
  const planted = [
    `${run.report}\n${Buffer.from(`${run.secrets.clientId}:${run.secrets.clientSecret}`).toString('base64')}`,
    `${run.report}\n${token.split('.')[1]}`,
    `${run.report}\n${encodeURIComponent(cell)}`,
    `${run.report}\n${JSON.stringify(cell)}`,
  ];
  for (const text of planted) expect(leaks(run, text).length).toBeGreaterThan(0);
});
