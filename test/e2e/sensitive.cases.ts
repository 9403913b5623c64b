// sensitive_columns end to end, in every layout: a hashed column arrives as the HMAC-SHA-256 of its
// value under hash_salt (computed here with node:crypto, not with the connector's code), the same for
// the same value in two quests and in two syncs; a dropped column arrives nowhere; discover says what
// happens to each; a third sync under another salt says so once, and hashes under the new one. No
// cleartext value of either column, and neither salt, is anywhere in the output of discover, three reads
// and a failing read (records, STATEs, logs, errors), in any encoding.

import {createHmac} from 'crypto';

import {errorTraces, records, runConnector, stateFile} from '../helpers/connector';
import {configuredCatalog, runtimeOf} from '../helpers/fixtures';
import {DAY_MS, hostileConfig, logs, runHostile, withServer} from '../helpers/hostile';
import {writeJson, tempDir} from '../helpers/temp';
import {Simulator} from '../../simulator';

const Q1 = '5e0c8a3b-9f1d-4c27-b6e2-7a1d3c9f0e21';
const Q2 = '5e0c8a3b-9f1d-4c27-b6e2-7a1d3c9f0e22';
/** Serves a row with a cell too few after its sensitive rows: the read fails. */
const BROKEN = '5e0c8a3b-9f1d-4c27-b6e2-7a1d3c9f0e23';
const SALT = 'pepper/with+special=chars ø 0123';
/** The salt of a later sync, changed against advice. */
const OTHER_SALT = 'another pepper, 16+ characters';
const HEADER = ['Response ID', 'Created', 'E-mail', 'Phone', 'Q1 Comment', 'Q2 Rating'];
const SHARED = 'ola.nordmann@example.com';
const EMAILS = [SHARED, 'kari+survey@example.no', 'ÆØÅ.blåbær@example.com', 'per "the boss" <per@example.org>'];
const PHONES = ['+47 412 34 567', '98765432', '+47 900 00 000'];
const SENSITIVE = {
  sensitive_columns: [
    {column: 'E-mail', action: 'hash'},
    // By its column name: the same column.
    {column: 'phone', action: 'drop'},
    {column: 'Q2 Rating', action: 'keep'},
  ],
  hash_salt: SALT,
};

function rows(emails: string[], phones: string[], base: number): string[][] {
  const at = (daysAgo: number) => new Date(Date.now() - daysAgo * DAY_MS).toISOString();
  return emails.map((email, i) => [
    `R-${base + i}`,
    at(2.5 - i * 0.4),
    email,
    phones[i % phones.length],
    `comment ${i}`,
    String((i % 5) + 1),
  ]);
}

const QUESTS = [
  {id: Q1, header: HEADER, rows: rows(EMAILS, PHONES, 100)},
  {id: Q2, header: HEADER, rows: rows([SHARED, 'someone.else@example.com', ''], ['', '+47 555 12 345'], 200)},
  {
    id: BROKEN,
    header: HEADER,
    rows: [
      ...rows(['broken.quest@example.com'], ['+47 111 22 333'], 300),
      ['R-399', new Date(Date.now() - DAY_MS).toISOString(), 'x'],
    ],
  },
];

const hmac = (value: string, salt = SALT) => createHmac('sha256', salt).update(value, 'utf8').digest('hex');

/** Every form in which a value could travel: as is, JSON-escaped, URL- and form-encoded, base64, hex. */
function forms(value: string): string[] {
  const bytes = Buffer.from(value, 'utf8');
  const all = [
    value,
    JSON.stringify(value).slice(1, -1),
    encodeURIComponent(value),
    new URLSearchParams({v: value}).toString().slice(2),
    bytes.toString('base64'),
    bytes.toString('base64').replace(/=+$/, ''),
    bytes.toString('base64url'),
    bytes.toString('hex'),
    bytes.toString('hex').toUpperCase(),
  ];
  return [...new Set(all.flatMap((f) => [f, JSON.stringify(f).slice(1, -1)]))];
}

/** The values that must not leave the connector: every e-mail and phone served, and the salt. */
function secretsOf(server: Simulator): string[] {
  const values = server.quests.flatMap((q) => server.groundTruth(q.id).rows.flatMap((r) => [r[2], r[3]]));
  return [...new Set([...values, SALT, OTHER_SALT])].filter((v) => v && v.length >= 8);
}

/** What each layout's records make of the e-mail column: [quest, response, value] for each response with an e-mail. */
function emailsOf(layout: string, messages: Parameters<typeof records>[0]): [string, string, unknown][] {
  return records(messages).flatMap(({record: {stream, data}}): [string, string, unknown][] => {
    if (layout === 'per_quest' && stream.startsWith('quest_')) {
      return data.e_mail === null ? [] : [[String(data._questback_quest_id), String(data.response_id), data.e_mail]];
    }
    if (layout === 'combined' && stream === 'responses') {
      const value = (data.answers as Record<string, unknown>)['E-mail'];
      return value === null ? [] : [[String(data.quest_id), String(data.response_id), value]];
    }
    if (layout === 'long' && stream === 'answers' && data.column === 'e_mail') {
      expect(data.value_number).toBeNull();
      return [[String(data.quest_id), String(data.response_id), data.value]];
    }
    return [];
  });
}

/** Whether any record of the data carries the phone column, under any name (`columns` describes it as dropped). */
function phonesOf(messages: Parameters<typeof records>[0]): unknown[] {
  const described = records(messages).filter(
    (r) => r.record.stream === 'columns' && /^phone$/i.test(String(r.record.data.column))
  );
  expect(described.map((r) => r.record.data.sensitive)).toEqual(described.map(() => 'dropped'));
  expect(described.length).toBeGreaterThan(0);
  return records(messages).flatMap(({record: {stream, data}}) =>
    stream === 'columns'
      ? []
      : [
          ...Object.keys(data).filter((k) => /phone/i.test(k)),
          ...Object.keys((data.answers as object | undefined) ?? {}).filter((k) => /phone/i.test(k)),
          ...(typeof data.column === 'string' && /phone/i.test(data.column) ? [data.column] : []),
        ]
  );
}

describe('sensitive columns', () => {
  test.each(['per_quest', 'combined', 'long'])(
    '%s: hashed the same across quests and syncs, dropped everywhere, shown by discover, and no cleartext anywhere',
    async (layout) => {
      await withServer({quests: QUESTS}, async (server) => {
        const dir = tempDir('questback-sensitive-');
        const overrides = {stream_layout: layout, ...SENSITIVE, quest_ids: [Q1, Q2]};
        const config = writeJson(dir, 'config.json', hostileConfig(server, overrides));
        const runtime = runtimeOf(server);
        const discover = await runConnector(['discover', '--config', config], {runtime});
        expect(discover.code).toBe(0);
        const catalog = configuredCatalog(discover.messages, 'incremental');
        const schemas = JSON.stringify(catalog);
        // Discover shows it: a per-quest schema lists no phone and says the e-mail is hashed; the
        // other layouts' schemas say what the config does.
        if (layout === 'per_quest') {
          const properties = (catalog.streams as {stream: {json_schema: {properties: Record<string, object>}}}[])[0]
            .stream.json_schema.properties;
          expect(Object.keys(properties)).not.toContain('phone');
          expect(JSON.stringify(properties.e_mail)).toMatch(/HMAC-SHA-256/);
          const said = discover.messages.map((m) => JSON.stringify(m)).join('\n');
          expect(said).toMatch(/sensitive columns \\"E-mail\\": hashed \(HMAC-SHA-256\); \\"Phone\\": dropped/);
        } else {
          expect(schemas).toMatch(/\\"E-mail\\" hashed \(HMAC-SHA-256\); \\"phone\\" dropped/);
        }

        const first = await runHostile(server, 'read', {config: overrides, catalog});
        expect(errorTraces(first.messages)).toEqual([]);
        expect(first.code).toBe(0);
        // A second sync reads the same responses again (a lookback of 3 days).
        const second = await runHostile(server, 'read', {
          config: {...overrides, lookback_days: 3},
          catalog,
          state: stateFile(first.messages),
        });
        expect(second.code).toBe(0);
        // A third under another hash_salt: said once, naming the streams whose state knows the earlier one.
        const third = await runHostile(server, 'read', {
          config: {...overrides, hash_salt: OTHER_SALT, lookback_days: 3},
          catalog,
          state: stateFile(second.messages, stateFile(first.messages)),
        });
        expect(third.code).toBe(0);
        const saltWarnings = (run: typeof first) =>
          logs(run).filter((l) => /hash_salt is not the one the earlier syncs hashed with/.test(l.message));
        expect([first, second].flatMap(saltWarnings)).toEqual([]);
        const streams = layout === 'per_quest' ? '2 streams' : `1 stream`;
        expect(saltWarnings(third)).toEqual([
          {level: 'WARN', message: expect.stringContaining(`(the state of ${streams} says so: `)},
        ]);

        const truth = new Map(
          [Q1, Q2].flatMap((q) =>
            server
              .groundTruth(q)
              .rows.filter((r) => r[2])
              .map((r) => [`${q} ${r[0]}`, r[2]])
          )
        );
        for (const run of [first, second]) {
          const got = emailsOf(layout, run.messages);
          expect(got.map(([q, id]) => `${q} ${id}`).sort()).toEqual([...truth.keys()].sort());
          expect(got.filter(([q, id, value]) => value !== hmac(truth.get(`${q} ${id}`) as string))).toEqual([]);
          expect(phonesOf(run.messages)).toEqual([]);
        }
        const rehashed = emailsOf(layout, third.messages);
        expect(rehashed.length).toBeGreaterThan(0);
        expect(
          rehashed.filter(([q, id, value]) => value !== hmac(truth.get(`${q} ${id}`) as string, OTHER_SALT))
        ).toEqual([]);
        // The shared address: one hash in both quests and both syncs.
        const shared = [first, second].flatMap((run) =>
          emailsOf(layout, run.messages).filter(([q, id]) => truth.get(`${q} ${id}`) === SHARED)
        );
        expect(shared.map(([q]) => q).sort()).toEqual([Q1, Q1, Q2, Q2]);
        expect(new Set(shared.map(([, , value]) => value))).toEqual(new Set([hmac(SHARED)]));

        // A read that fails after the sensitive cells of its quest were read.
        const failing = await runHostile(server, 'read', {
          config: {...overrides, quest_ids: [BROKEN]},
          catalog:
            layout === 'per_quest'
              ? {
                  streams: [
                    {
                      ...(catalog.streams as object[])[0],
                      stream: {
                        ...(catalog.streams as {stream: object}[])[0].stream,
                        name: 'quest_5e0c8a3b_9f1d_4c27_b6e2_7a1d3c9f0e23',
                      },
                    },
                  ],
                }
              : catalog,
        });
        expect(failing.code).not.toBe(0);
        expect(errorTraces(failing.messages).length).toBeGreaterThan(0);

        const output = [discover, first, second, third, failing]
          .map((run) => `${run.stdout}\n${run.stderr}`)
          .join('\n');
        const leaked = secretsOf(server).flatMap((value) =>
          forms(value)
            .filter((form) => output.includes(form))
            .map((form) => `${value} as ${form}`)
        );
        expect(leaked).toEqual([]);
      });
    },
    60_000
  );
});
