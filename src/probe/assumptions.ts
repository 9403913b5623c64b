import {INVITATION_ASSUMPTIONS} from './invitation-assumptions';

/**
 * What the connector assumes about the service where the API spec is silent or may be wrong, one
 * entry per verdict of the probe: the assumption in words, and what a contradiction means for a sync
 * and what to do about it. The report and the user guide's table both come from here.
 */
interface Assumption {
  id: string;
  topic: Topic;
  /** What the connector assumes, in one sentence. */
  assumption: string;
  /** What a contradiction means for syncs, and what to do. */
  ifContradicted: string;
}

type Topic =
  | 'Token'
  | 'Export job'
  | 'Download'
  | 'CSV file'
  | 'Created column'
  | 'Time filter'
  | 'Rate limits'
  | 'Errors'
  | 'Invitations';

export const TOPICS: readonly Topic[] = [
  'Token',
  'Export job',
  'Download',
  'CSV file',
  'Created column',
  'Time filter',
  'Rate limits',
  'Errors',
  'Invitations',
];

const MAINTAINERS = "send this report to the connector's maintainers";
const SEND_TO_MAINTAINERS = "Send this report to the connector's maintainers";

export const ASSUMPTIONS = [
  {
    id: 'token.type',
    topic: 'Token',
    assumption: 'The token service answers `token_type` Bearer: the connector sends `Authorization: Bearer <token>`.',
    ifContradicted: `Requests may be refused with 401 although the credentials are right. Tell Questback support which token type the API login gets, and ${MAINTAINERS}.`,
  },
  {
    id: 'token.expires-in',
    topic: 'Token',
    assumption: '`expires_in` counts seconds (OAuth 2): a token is renewed shortly before that many seconds pass.',
    ifContradicted: `Syncs still work: a token the service stops accepting early is renewed on its first 401, at the cost of one request. Nothing to change; ${MAINTAINERS} so that the unit can be fixed.`,
  },
  {
    id: 'create.status',
    topic: 'Export job',
    assumption: 'Creating an export answers 200, 201 or 202 (the spec does not say which).',
    ifContradicted: `The connector takes any answer below 400 that carries an exportId as a created export, so this alone breaks nothing; ${MAINTAINERS}.`,
  },
  {
    id: 'create.body',
    topic: 'Export job',
    assumption: 'The create answer is a JSON object with `exportId` (a string) and `message`.',
    ifContradicted: `Without an exportId the connector cannot follow its exports: every discover and sync fails creating them. Send this report to Questback support and to the connector's maintainers.`,
  },
  {
    id: 'status.words',
    topic: 'Export job',
    assumption: 'Status records spell the states as documented: PENDING, INPROGRESS (and ERROR), in capitals.',
    ifContradicted:
      'The connector reads status words without regard to case or spaces and knows common words for success and failure; a word it does not know counts as still being generated, with a warning, for at most `export_timeout_minutes`. If a word the report lists means that the export failed or is ready, ' +
      `${MAINTAINERS}.`,
  },
  {
    id: 'status.last-changed-at',
    topic: 'Export job',
    assumption: '`lastChangedAt` is an ISO 8601 UTC time with milliseconds (`yyyy-MM-ddTHH:mm:ss.fffZ`).',
    ifContradicted:
      'Nothing to do: the connector does not read `lastChangedAt`. It is reported because the service may write other times the same way (see the Created column).',
  },
  {
    id: 'completed.redirect',
    topic: 'Export job',
    assumption: "A completed export's status answers 302 Found with a `Location` header.",
    ifContradicted: `The connector also takes a status record saying the export is done: it downloads from the answer's \`Location\`, or else the documented download path. If downloads then fail, ${MAINTAINERS}.`,
  },
  {
    id: 'completed.location',
    topic: 'Export job',
    assumption:
      "The `Location` leads to the documented download path on `api_url`'s host (a relative or an absolute reference).",
    ifContradicted:
      "The connector follows it over https only, and sends the access token only to `api_url`'s host. Make sure Airbyte may reach the host the report names (firewall, proxy). If downloads there fail with 401 or 403, that host wants the token: " +
      `${MAINTAINERS}.`,
  },
  {
    id: 'download.content-type',
    topic: 'Download',
    assumption: 'The file is served as CSV (`Content-Type: text/csv`).',
    ifContradicted:
      'The connector reads any type as CSV except HTML and JSON, which are a login, gateway or error page rather than a file: then every download fails. With HTML or JSON, check `api_url` and any proxy between Airbyte and the service; with another type, nothing to do if the CSV verdicts below are confirmed.',
  },
  {
    id: 'download.content-encoding',
    topic: 'Download',
    assumption:
      'The file is sent as it is or compressed with gzip, deflate or br (`Content-Encoding`), which the connector decodes.',
    ifContradicted: `The connector cannot decode this coding: every download fails. ${SEND_TO_MAINTAINERS}.`,
  },
  {
    id: 'download.length',
    topic: 'Download',
    assumption:
      "The file's end is declared (`Content-Length`, or chunked framing), and the body is exactly as long as declared.",
    ifContradicted:
      'Without a declared end the connector cannot tell a whole file from one the network cut: a file whose last row has no line end counts as cut off and is downloaded again. A body longer or shorter than its `Content-Length` counts as cut off too. If that keeps happening, the window fails. Tell Questback support (a proxy may change the body).',
  },
  {
    id: 'csv.encoding',
    topic: 'CSV file',
    assumption: 'The file is UTF-8, with or without a byte-order mark.',
    ifContradicted:
      'The connector also reads UTF-16, and reads a file that has no byte-order mark and is not UTF-8 as Windows-1252, with a warning; characters the service could not write in such a file are lost there. Ask Questback support whether exports can be UTF-8.',
  },
  {
    id: 'csv.separator',
    topic: 'CSV file',
    assumption: 'Cells are separated by the `field_separator` of the config (`PIPE` is `|`).',
    ifContradicted:
      'Rows do not split into their columns: discover learns wrong columns, and reads fail at the first row of another width. Set `field_separator` to the separator the report names (`COMMA`, `SEMICOLON`, `TAB` or `PIPE`) and run the probe again; if the service uses another character, tell Questback support.',
  },
  {
    id: 'csv.quoting',
    topic: 'CSV file',
    assumption:
      'Cells are quoted as RFC 4180 says: a cell holding the separator, a quote or a line break is in quotes, a quote inside doubled.',
    ifContradicted:
      'A quote inside an unquoted cell stops the sync of that quest with an error naming the line. Set `accept_stray_quotes: true` to read such a quote as text.',
  },
  {
    id: 'csv.rows',
    topic: 'CSV file',
    assumption:
      'Every row has as many cells as the header (a line break inside a cell is quoted); rows may end with CRLF, LF or CR.',
    ifContradicted:
      "A row of another width stops the quest's sync with an error naming the line, and its state does not move past that window. Tell Questback support (the report names the line of the export).",
  },
  {
    id: 'csv.response-id',
    topic: 'CSV file',
    assumption:
      'The header has a `Response ID` column: the primary key of per-quest streams, and how a re-read file skips rows emitted already.',
    ifContradicted:
      'Per-quest streams fail with a config_error rather than load rows without their key; the `responses` stream of `stream_layout: combined` fails the same way. Tell Questback support that exports lack a response id column.',
  },
  {
    id: 'csv.created',
    topic: 'CSV file',
    assumption: 'The header has a `Created` column: the creation time the `since`/`until` filter compares.',
    ifContradicted: `Every layout fails the quest with a config_error (a first line without a \`Created\` column is not taken as a header), and this probe cannot check the filter. If another column holds the creation time, ${MAINTAINERS}.`,
  },
  {
    id: 'csv.empty-export',
    topic: 'CSV file',
    assumption: 'An export of a window without responses is a header row alone.',
    ifContradicted:
      "Nothing to do: discover widens its sample window until an export has a header, and a quest without any response since `start_date` lists only the connector's fields until it has responses (refresh the source schema then).",
  },
  {
    id: 'created.zone',
    topic: 'Created column',
    assumption: '`Created` is written in UTC (ending in `Z` or `+00:00`).',
    ifContradicted:
      'The connector keeps such a `Created` as text, not as a timestamp: destinations do not convert it. Whether windows still hold the right rows is the verdict on the time filter below.',
  },
  {
    id: 'created.precision',
    topic: 'Created column',
    assumption: '`Created` has millisecond precision (three fractional digits), like the time filter.',
    ifContradicted:
      'Nothing to change: the connector reads any number of fractional digits, and windows end on whole milliseconds, so each response falls into exactly one window. Destinations keep the digits they support.',
  },
  {
    id: 'filter.window',
    topic: 'Time filter',
    assumption: 'An export holds only responses whose `Created` lies inside its window, compared in UTC.',
    ifContradicted:
      'The filter compares another time (a last change) or another zone, so a window misses some responses and holds others: set `lookback_days` to cover the shift the report shows (1 covers hours), sync with Append + Deduped, and tell Questback support.',
  },
  {
    id: 'filter.since-exclusive',
    topic: 'Time filter',
    assumption: '`since` is exclusive: a response created exactly at `since` is not in the export.',
    ifContradicted:
      'A response created exactly on a window boundary is loaded twice, once by each window: harmless with Append + Deduped on the primary key; with Append, expect rare duplicates.',
  },
  {
    id: 'filter.until-inclusive',
    topic: 'Time filter',
    assumption: '`until` is inclusive: a response created exactly at `until` is in the export.',
    ifContradicted:
      'A response created exactly at the end of a window is in neither window and is lost. Set `lookback_days` to 1 and sync with Append + Deduped; tell Questback support.',
  },
  {
    id: 'ratelimit.headers',
    topic: 'Rate limits',
    assumption:
      'Rate limits come as `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset` (and `Retry-After`), the headers the connector reads.',
    ifContradicted: `The connector cannot slow down before the limit: it waits after each 429 by its own backoff, which costs time but loses nothing. ${SEND_TO_MAINTAINERS} so that it reads the names the report lists.`,
  },
  {
    id: 'ratelimit.reset',
    topic: 'Rate limits',
    assumption:
      '`X-RateLimit-Reset` says when the limit resets: seconds to wait, or an epoch in seconds or milliseconds (told apart by size), within the hour.',
    ifContradicted:
      'The connector ignores a reset time more than an hour ahead, with a warning, and backs off by its own schedule instead. Tell Questback support what the header holds (the report shows its size, not its value).',
  },
  {
    id: 'error.unknown-export',
    topic: 'Errors',
    assumption:
      'The status of an export the service does not know answers 404 or 410: the connector then exports the window again.',
    ifContradicted: `An export of an earlier attempt that the service has deleted is not recognised as gone: a sync resuming from such a state fails instead of exporting the window again. Nothing to change in the config; ${MAINTAINERS}.`,
  },
  {
    id: 'error.problem-details',
    topic: 'Errors',
    assumption: 'Errors are problem details: JSON with `status`, `title` or `detail`, `traceId` and `requestId`.',
    ifContradicted:
      "Nothing to change: error messages then lack the service's explanation and the ids Questback support asks for. Mention it to Questback support.",
  },
  ...INVITATION_ASSUMPTIONS,
] as const satisfies readonly Assumption[];

export type AssumptionId = (typeof ASSUMPTIONS)[number]['id'];

export function assumption(id: AssumptionId): Assumption {
  return ASSUMPTIONS.find((a) => a.id === id) as Assumption;
}
