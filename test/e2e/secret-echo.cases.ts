// A service that quotes the credentials it was sent in its errors (the simulator's echoCredentials),
// the quote placed so that the connector's cut of the service's text (300 characters) falls inside
// it: no run of 8 characters of the client secret, the salt or any token issued may appear in any
// output of check, discover, read or probe (stdout, stderr, the probe's report), in any encoding the
// connector scrubs. test/unit/secret-cuts.cases.ts tries every offset of the cut; here a few per
// encoding go through the whole command line.

import fs from 'fs';
import path from 'path';

import {ECHO_ENCODINGS, EchoEncoding, Simulator} from '../../simulator';
import {RunResult} from '../helpers/connector';
import {simCatalog, withWorld, World} from '../helpers/fixtures';

const QUEST = 'e0e0e0e0-0000-4000-8000-000000000001';
const CLIENT_ID = '312345678901234567@questback';
const SECRET = 's3cr3t/with+special=chars&more "ø%"';
const SALT = 'pepper-and-salt-9f3k2m';
/** Where the connector cuts a service's explanation. */
const CUT = 300;

const ENCODE = (encoding: EchoEncoding, value: string): string => ECHO_ENCODINGS[encoding](value, CLIENT_ID);
const ENCODINGS = Object.keys(ECHO_ENCODINGS) as EchoEncoding[];

/** Every run of 8 characters of `value` in each of its encodings (HTTP Basic for the client secret only), as is and JSON-escaped. */
function runsOf(value: string, basic: boolean): Set<string> {
  const runs = new Set<string>();
  for (const encoding of ENCODINGS.filter((e) => basic || e !== 'basic')) {
    const form = ENCODE(encoding, value);
    for (const text of [form, JSON.stringify(form).slice(1, -1)])
      for (let i = 0; i + 8 <= text.length; i++) runs.add(text.slice(i, i + 8));
  }
  return runs;
}

/** The runs of 8 characters of a secret, the salt or an issued token that `text` holds. */
function leaked(sim: Simulator, text: string): string[] {
  const secrets: [string, Set<string>][] = [
    ['client secret', runsOf(SECRET, true)],
    ['salt', runsOf(SALT, false)],
    ...sim.issuedTokens().map((t, i): [string, Set<string>] => [`token #${i + 1}`, runsOf(t, false)]),
  ];
  const found = new Set<string>();
  for (let i = 0; i + 8 <= text.length; i++) {
    const run = text.slice(i, i + 8);
    for (const [name, runs] of secrets) if (runs.has(run)) found.add(`${name}: ${run}`);
  }
  return [...found];
}

/** Offsets of the quote that leave 8 characters of it before the cut, half of it, and all but one. */
function offsetsAcross(quoted: string): number[] {
  return [...new Set([CUT - 8, CUT - Math.floor(quoted.length / 2), CUT - quoted.length + 1])].filter((at) => at >= 0);
}

/** check, discover, read and probe against the world's service as it is now; every output of each. */
async function everyCommand(world: World): Promise<{outputs: string; results: RunResult[]}> {
  const config = world.config({client_id: CLIENT_ID, client_secret: SECRET, hash_salt: SALT, quest_ids: [QUEST]});
  const report = path.join(world.dir, `report-${Math.random().toString(36).slice(2)}.md`);
  const results = [
    await world.run(['check', '--config', config]),
    await world.run(['discover', '--config', config]),
    await world.run([
      'read',
      '--config',
      config,
      '--catalog',
      world.file(simCatalog(world.sim, [QUEST], 'incremental')),
    ]),
    await world.run(['probe', '--config', config, '--report', report]),
  ];
  const texts = results.flatMap((r) => [r.stdout, r.stderr]);
  if (fs.existsSync(report)) texts.push(fs.readFileSync(report, 'utf8'));
  return {outputs: texts.join('\n'), results};
}

const world = (fn: (world: World) => Promise<void>): Promise<void> =>
  withWorld(
    {
      seed: 41,
      clientId: CLIENT_ID,
      clientSecret: SECRET,
      exportDurationMs: 100,
      quests: [{id: QUEST, rows: 20, firstCreatedAt: new Date(Date.now() - 5 * 86_400_000).toISOString()}],
    },
    fn
  );

describe('a service that quotes the credentials in its errors, across the cut of its text', () => {
  test.concurrent.each(ENCODINGS)(
    'the client secret quoted by the token endpoint (%s): no 8 characters of it in any output',
    (encoding) =>
      world(async ({sim, ...rest}) => {
        const w = {sim, ...rest};
        for (const at of offsetsAcross(ENCODE(encoding, SECRET))) {
          sim.setFaults({echoCredentials: {what: 'client-secret', at, encoding}});
          const {outputs, results} = await everyCommand(w);
          // Each command failed with the service's text: the quote reached the connector.
          expect(results.map((r) => r.stdout.includes('HTTP 400 - The request could not be processed'))).toEqual([
            true,
            true,
            true,
            true,
          ]);
          expect({at, leaks: leaked(sim, outputs)}).toEqual({at, leaks: []});
        }
      }),
    120_000
  );

  test.concurrent.each(ENCODINGS.filter((e) => e !== 'basic'))(
    'an issued token quoted by the API (%s): no 8 characters of it in any output',
    (encoding) =>
      world(async (w) => {
        // A token is longer than the cut: a quote at 0 is cut inside it; later ones leave less of it.
        for (const at of [0, CUT - 9, CUT - 100]) {
          w.sim.setFaults({echoCredentials: {what: 'token', at, encoding}});
          const {outputs, results} = await everyCommand(w);
          expect(results.map((r) => r.stdout.includes('HTTP 400 - '))).toEqual([true, true, true, true]);
          expect({at, leaks: leaked(w.sim, outputs)}).toEqual({at, leaks: []});
        }
      }),
    120_000
  );
});
