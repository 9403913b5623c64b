// Every verdict of the probe, both ways: for each assumption, a simulator that answers as the
// connector assumes (confirmed) and one that answers otherwise (contradicted), each with what the
// report says it saw. The probe runs in-process against an in-process simulator.

import {ASSUMPTIONS, AssumptionId} from '../../src/probe/assumptions';
import {probeCache, Variant} from '../helpers/probe';

const run = probeCache();
const RATE_LIMIT = {limit: 1000, windowMs: 60_000};

interface Case {
  id: AssumptionId;
  confirmed: {variant: Variant; seen: RegExp}[];
  contradicted: {variant: Variant; seen: RegExp}[];
}

/** The spec-faithful simulator. */
const DEFAULT: Variant = {};

const CASES: Case[] = [
  {
    id: 'token.type',
    confirmed: [{variant: DEFAULT, seen: /`token_type` Bearer/}],
    contradicted: [{variant: {dialect: {tokenType: 'mac'}}, seen: /`token_type` mac/}],
  },
  {
    id: 'token.expires-in',
    confirmed: [{variant: DEFAULT, seen: /`expires_in` 3600; the token's own claims give it 3600 s/}],
    contradicted: [
      {variant: {dialect: {expiresIn: 'milliseconds'}}, seen: /`expires_in` 3600000; .*3600 s.*counts milliseconds/},
    ],
  },
  {
    id: 'create.status',
    confirmed: [
      {variant: DEFAULT, seen: /`HTTP 202` ×3 \(3 exports\)/},
      {variant: {dialect: {createStatus: 201}}, seen: /`HTTP 201` ×3/},
    ],
    contradicted: [{variant: {dialect: {createStatus: 303}}, seen: /`HTTP 303` ×3/}],
  },
  {
    id: 'create.body',
    confirmed: [{variant: DEFAULT, seen: /members: exportId \(string\), message \(string\)/}],
    contradicted: [{variant: {dialect: {createBody: 'batch'}}, seen: /members: batchId \(string\), status \(string\)/}],
  },
  {
    id: 'status.words',
    // PENDING for the first third of the generation, then INPROGRESS: which of them the polls see depends on the load.
    confirmed: [{variant: DEFAULT, seen: /^(`(PENDING|INPROGRESS)` ×\d+(, )?)+ in \d+ records?$/}],
    contradicted: [
      {
        variant: {dialect: {statusWords: 'lower'}},
        seen: /^(`(pending|inprogress)` ×\d+(, )?)+ in \d+ records?$/,
      },
    ],
  },
  {
    id: 'status.last-changed-at',
    confirmed: [{variant: DEFAULT, seen: /^`yyyy-MM-ddTHH:mm:ss\.fffZ` ×\d+$/}],
    contradicted: [{variant: {dialect: {lastChangedAt: 'iso-7'}}, seen: /`yyyy-MM-ddTHH:mm:ss\.fffffffZ`/}],
  },
  {
    id: 'completed.redirect',
    confirmed: [{variant: DEFAULT, seen: /`HTTP 302 with a Location` ×3/}],
    contradicted: [{variant: {dialect: {completed: 'record'}}, seen: /`HTTP 200, a record with status COMPLETED` ×3/}],
  },
  {
    id: 'completed.location',
    confirmed: [
      {variant: DEFAULT, seen: /an absolute path on api_url's host, to the documented download path/},
      {
        variant: {simulator: {relativeLocation: true}},
        seen: /a relative reference on api_url's host, to the documented download path/,
      },
    ],
    contradicted: [
      {
        variant: {dialect: {downloadHost: 'other-host'}},
        seen: /an absolute URL on another host, http:\/\/localhost:\d+, to the documented download path, with a query \(not shown\)/,
      },
    ],
  },
  {
    id: 'download.content-type',
    confirmed: [{variant: DEFAULT, seen: /`text\/csv; …`/}],
    contradicted: [{variant: {dialect: {fileType: 'application/octet-stream'}}, seen: /`application\/octet-stream`/}],
  },
  {
    id: 'download.content-encoding',
    confirmed: [
      {variant: DEFAULT, seen: /`none` ×3/},
      {variant: {faults: {compression: 'gzip'}}, seen: /`gzip` ×3/},
    ],
    contradicted: [{variant: {dialect: {fileEncodingLabel: 'zstd'}}, seen: /`zstd`/}],
  },
  {
    id: 'download.length',
    confirmed: [
      {variant: DEFAULT, seen: /Content-Length, matched by the bytes received/},
      {variant: {faults: {framing: 'chunked'}}, seen: /chunked framing/},
    ],
    contradicted: [{variant: {faults: {framing: 'close'}}, seen: /no Content-Length and no chunked framing/}],
  },
  {
    id: 'csv.encoding',
    confirmed: [
      {variant: DEFAULT, seen: /`UTF-8 \(byte-order mark\)`/},
      {variant: {quest: {encoding: 'utf8'}}, seen: /`UTF-8 \(no byte-order mark\)`/},
    ],
    contradicted: [
      {variant: {quest: {encoding: 'latin1', titles: 'norwegian'}}, seen: /`WINDOWS-1252 \(told by its bytes\)`/},
    ],
  },
  {
    id: 'csv.separator',
    confirmed: [
      {variant: DEFAULT, seen: /^with `\|` \(PIPE\) the header reads as 10 columns, and \d+ rows after it alike$/},
    ],
    contradicted: [
      {
        variant: {dialect: {fileSeparator: ','}},
        seen: /with `\|` \(PIPE\) the header reads as \d+ columns?, the rows after it unlike it; with `,` \(COMMA\) as 10 columns, \d+ rows after it alike: the file seems separated by `,` \(COMMA\)/,
      },
    ],
  },
  {
    id: 'csv.quoting',
    confirmed: [{variant: DEFAULT, seen: /\d+ quoted cells in \d+ rows, as RFC 4180 says/}],
    contradicted: [
      {variant: {quest: {corruption: 'stray-quote'}}, seen: /a quote inside an unquoted cell on line \d+/},
    ],
  },
  {
    id: 'csv.rows',
    confirmed: [
      {variant: DEFAULT, seen: /rows; line ends CRLF ×\d+$/},
      {variant: {quest: {lineEnding: 'lf'}}, seen: /rows; line ends LF ×\d+$/},
    ],
    contradicted: [
      {
        variant: {quest: {corruption: 'ragged-row'}},
        seen: /a row with another number of cells than the header on line \d+/,
      },
    ],
  },
  {
    id: 'csv.response-id',
    confirmed: [{variant: DEFAULT, seen: /a `Response ID` column among 10/}],
    contradicted: [
      {variant: {dialect: {responseIdTitle: 'Respondent'}}, seen: /no column the connector takes for `Response ID`/},
    ],
  },
  {
    id: 'csv.created',
    confirmed: [{variant: DEFAULT, seen: /a `Created` column among 10/}],
    contradicted: [
      {variant: {dialect: {createdTitle: 'Submitted'}}, seen: /no column the connector takes for `Created`/},
    ],
  },
  {
    id: 'csv.empty-export',
    confirmed: [{variant: DEFAULT, seen: /a header row of 10 columns and no row/}],
    contradicted: [{variant: {quest: {headerOnEmpty: false}}, seen: /no header row: a file of 0 bytes/}],
  },
  {
    id: 'created.zone',
    confirmed: [{variant: DEFAULT, seen: /^`UTC` ×\d+; written `yyyy-MM-ddTHH:mm:ss\.fffZ` ×\d+$/}],
    contradicted: [
      {
        variant: {dialect: {created: 'offset'}},
        seen: /`an offset from UTC` ×\d+; written `yyyy-MM-ddTHH:mm:ss\.fff\+hh:mm`/,
      },
      {variant: {dialect: {created: 'no-zone'}}, seen: /`no zone` ×\d+; written `yyyy-MM-ddTHH:mm:ss\.fff`/},
    ],
  },
  {
    id: 'created.precision',
    confirmed: [{variant: DEFAULT, seen: /^`3 fractional digits` ×\d+$/}],
    contradicted: [{variant: {dialect: {created: 'iso-7'}}, seen: /^`7 fractional digits` ×\d+$/}],
  },
  {
    id: 'filter.window',
    confirmed: [
      {variant: DEFAULT, seen: /all \d+ rows of 2 exports inside their windows/},
      // The same instants written as local time with an offset: still inside.
      {variant: {dialect: {created: 'offset'}}, seen: /all \d+ rows of 2 exports inside their windows/},
    ],
    contradicted: [
      {
        variant: {dialect: {filterOffsetMinutes: 120}},
        seen: /\d+ of \d+ rows outside: \d+ before its window \(by up to \d\.\d h\)/,
      },
      {variant: {dialect: {created: 'no-zone'}}, seen: /\d+ after it \(by up to \d\.\d h\)/},
    ],
  },
  {
    id: 'filter.since-exclusive',
    confirmed: [{variant: DEFAULT, seen: /at `since` was not in the export/}],
    contradicted: [{variant: {dialect: {sinceInclusive: true}}, seen: /at `since` was in the export/}],
  },
  {
    id: 'filter.until-inclusive',
    confirmed: [{variant: DEFAULT, seen: /at `until` was in the export/}],
    contradicted: [{variant: {dialect: {untilExclusive: true}}, seen: /at `until` was not in the export/}],
  },
  {
    id: 'ratelimit.headers',
    confirmed: [
      {
        variant: {faults: {rateLimit: RATE_LIMIT}},
        seen: /x-ratelimit-limit, x-ratelimit-remaining, x-ratelimit-reset on \d+ of \d+ answers/,
      },
    ],
    contradicted: [
      {
        variant: {faults: {rateLimit: RATE_LIMIT}, dialect: {rateLimitNames: 'ietf'}},
        seen: /ratelimit-limit, ratelimit-remaining, ratelimit-reset: names the connector does not read/,
      },
    ],
  },
  {
    id: 'ratelimit.reset',
    confirmed: [
      {
        variant: {faults: {rateLimit: RATE_LIMIT}},
        seen: /values of \d+( or \d+)? digits, read as seconds to wait: .* ahead/,
      },
      {
        variant: {faults: {rateLimit: {...RATE_LIMIT, resetFormat: 'epoch-ms'}}},
        seen: /values of 13 digits, read as an epoch in milliseconds: .* ahead/,
      },
    ],
    contradicted: [
      {
        variant: {faults: {rateLimit: RATE_LIMIT}, dialect: {rateLimitReset: 'epoch-us'}},
        seen: /values of 16 digits, read as an epoch in milliseconds: \d+ d ahead/,
      },
    ],
  },
  {
    id: 'error.unknown-export',
    confirmed: [{variant: DEFAULT, seen: /^HTTP 404$/}],
    contradicted: [{variant: {dialect: {unknownExportStatus: 400}}, seen: /^HTTP 400$/}],
  },
  {
    id: 'error.problem-details',
    confirmed: [
      {
        variant: DEFAULT,
        seen: /application\/problem\+json: type \(string\), title \(string\), status \(number\), detail \(string\), traceId \(string\), requestId \(string\)/,
      },
    ],
    contradicted: [{variant: {dialect: {errorBodies: 'text'}}, seen: /text\/plain: a text body/}],
  },
  {
    id: 'invitations.wrapper',
    confirmed: [
      {variant: DEFAULT, seen: /^a JSON list$/},
      {variant: {invitationList: {wrapper: 'items'}}, seen: /^an object: items \(list\), totalCount \(number\)$/},
    ],
    contradicted: [{variant: {invitationList: {wrapper: 'data.items'}}, seen: /without a list of items/}],
  },
  {
    id: 'invitations.take',
    confirmed: [{variant: DEFAULT, seen: /^a page of 1000 when 1000 were asked for$/}],
    contradicted: [
      {variant: {invitationList: {maxTake: 100}}, seen: /^a page of 100 when 1000 were asked for, and 100 more/},
    ],
  },
  {
    id: 'invitations.order',
    confirmed: [
      {variant: DEFAULT, seen: /^the same order .*; oldest addedAt first$/},
      {variant: {invitationList: {order: 'shuffled'}}, seen: /^the same order .*; in no order of addedAt$/},
    ],
    contradicted: [{variant: {invitationList: {order: 'unstable'}}, seen: /^another order/}],
  },
  {
    id: 'invitations.filter-field',
    confirmed: [{variant: DEFAULT, seen: /is in the window that ends at its addedAt/}],
    contradicted: [{variant: {invitationList: {filterOn: 'changed'}}, seen: /is not in the window .*last change/}],
  },
  {
    id: 'invitations.statuses-change',
    confirmed: [{variant: DEFAULT, seen: /^\d+ of 1000 invitations were sent later than they were added$/}],
    // Statuses that never change cannot be seen in one probe: the verdict is confirmed or unknown.
    contradicted: [],
  },
  {
    id: 'invitations.model',
    confirmed: [
      {variant: DEFAULT, seen: /^every required field on all 1000$/},
      {variant: {invitationList: {extraFields: true}}, seen: /; other fields: `reminderCount`, `tags`$/},
    ],
    contradicted: [{variant: {invitationList: {omit: ['languageCode']}}, seen: /^missing on some: languageCode$/}],
  },
];

beforeAll(() =>
  run.prefetch([DEFAULT, ...CASES.flatMap((c) => [...c.confirmed, ...c.contradicted].map((v) => v.variant))], 8)
);

test('every assumption has a case both ways', () => {
  expect(CASES.map((c) => c.id)).toEqual(ASSUMPTIONS.map((a) => a.id));
});

describe.each(CASES)('$id', ({id, confirmed, contradicted}) => {
  test.each(confirmed)('confirmed by $variant', async ({variant, seen}) => {
    const verdict = (await run(variant)).verdict(id);
    expect(verdict).toEqual({id, state: 'confirmed', seen: expect.stringMatching(seen)});
  });
  if (contradicted.length)
    test.each(contradicted)('contradicted by $variant', async ({variant, seen}) => {
      const verdict = (await run(variant)).verdict(id);
      expect(verdict).toEqual({id, state: 'contradicted', seen: expect.stringMatching(seen)});
    });
});

describe('unknown, and what one contradiction leaves alone', () => {
  test('a service without rate-limit headers: both rate-limit verdicts unknown, saying why', async () => {
    const {verdict} = await run(DEFAULT);
    for (const id of ['ratelimit.headers', 'ratelimit.reset'] as const) {
      expect(verdict(id)).toMatchObject({state: 'unknown', seen: expect.stringMatching(/carried rate-limit headers/)});
    }
  });

  test('the default simulator: every other verdict confirmed, three exports, nothing left out', async () => {
    const {result} = await run(DEFAULT);
    const notConfirmed = result.verdicts.filter((v) => v.state !== 'confirmed').map((v) => v.id);
    expect(notConfirmed).toEqual(['ratelimit.headers', 'ratelimit.reset']);
    expect(result.exports.map((e) => e.purpose)).toEqual(['sample', 'boundary', 'empty window']);
    expect(result.skipped).toEqual([]);
  });

  test('a service whose filter is shifted does not test the boundaries on it', async () => {
    const {verdict} = await run({dialect: {filterOffsetMinutes: 120}});
    expect(verdict('filter.since-exclusive')).toMatchObject({
      state: 'unknown',
      seen: expect.stringMatching(/outside its window/),
    });
    expect(verdict('filter.until-inclusive').state).toBe('unknown');
  });

  test('a contradicted separator leaves the column verdicts unknown rather than contradicted', async () => {
    const {verdict} = await run({dialect: {fileSeparator: ','}});
    expect(verdict('csv.response-id')).toMatchObject({state: 'unknown', seen: expect.stringMatching(/does not split/)});
    expect(verdict('csv.created').state).toBe('unknown');
  });

  test('a create answer without exportId: the probe goes on, and says which verdicts it could not reach', async () => {
    const {result, verdict} = await run({dialect: {createBody: 'batch'}});
    expect(result.exports.every((e) => e.outcome === 'not created')).toBe(true);
    expect(verdict('status.words').state).toBe('unknown');
    expect(verdict('error.unknown-export').state).toBe('unknown');
    expect(result.skipped).toContain('the status of an unknown export: no export was created first');
  });
});
