import {plural} from '../core/quantities';
import {FileSample, SeparatorFit} from './file-sample';
import {AnswerLog} from './observer';
import {mediaType, tally} from './shapes';
import {confirmed, contradicted, counts, ExportRun, ProbeFacts, unique, unknown, Verdict} from './verdict';

// The verdicts on the file: the download's headers and framing, and the CSV in it (encoding, separator,
// quoting, rows, the columns the connector needs, an export without responses).

const DECODED_CODINGS = new Set(['', 'identity', 'gzip', 'x-gzip', 'deflate', 'br']);
const SEPARATOR_NAMES: Record<string, string> = {'|': 'PIPE', ',': 'COMMA', ';': 'SEMICOLON', '\t': 'TAB'};

const separatorName = (char: string): string =>
  `\`${char === '\t' ? '\\t' : char}\`${SEPARATOR_NAMES[char] ? ` (${SEPARATOR_NAMES[char]})` : ''}`;

export function downloadVerdicts(log: AnswerLog, files: FileSample[]): Verdict[] {
  const answers = log.of('download').filter((a) => a.status === 200);
  if (!answers.length) {
    const why = 'no file was downloaded';
    return [
      unknown('download.content-type', why),
      unknown('download.content-encoding', why),
      unknown('download.length', why),
    ];
  }
  const types = answers.map((a) => a.contentType);
  const typeOk = types.every((t) => /csv/i.test(t ?? ''));
  const codings = answers.map((a) => (a.contentEncoding ?? '').trim().toLowerCase());
  const codingOk = codings.every((c) => DECODED_CODINGS.has(c));
  return [
    (typeOk ? confirmed : contradicted)('download.content-type', tally(counts(types.map((t) => mediaType(t))))),
    (codingOk ? confirmed : contradicted)('download.content-encoding', tally(counts(codings.map((c) => c || 'none')))),
    lengthVerdict(files),
  ];
}

function lengthVerdict(files: FileSample[]): Verdict {
  const seen: string[] = [];
  let ok = 0;
  let bad = 0;
  for (const f of files) {
    if (f.framing === 'close') {
      bad++;
      seen.push('no Content-Length and no chunked framing: the body ends where the connection does');
    } else if (f.readProblem && /declared|bytes|ended/i.test(f.readProblem) && !f.stoppedEarly) {
      bad++;
      seen.push(
        `Content-Length ${f.contentLength ?? 'none'}, ${f.receivedBytes} bytes received: ${f.readProblem.replace(/\d{5,}/g, 'N')}`
      );
    } else if (f.complete) {
      ok++;
      seen.push(f.framing === 'length' ? 'Content-Length, matched by the bytes received' : 'chunked framing');
    }
  }
  if (bad) return contradicted('download.length', tally(counts(seen)));
  if (ok) return confirmed('download.length', tally(counts(seen)));
  return unknown('download.length', 'no file was read to its end (the probe reads at most its row limit)');
}

export function csvVerdicts(facts: ProbeFacts, files: {run: ExportRun; file: FileSample}[]): Verdict[] {
  const read = files.map((f) => f.file).filter((f) => f.encoding !== undefined);
  if (!read.length) {
    const why = 'no file was read';
    return (
      [
        'csv.encoding',
        'csv.separator',
        'csv.quoting',
        'csv.rows',
        'csv.response-id',
        'csv.created',
        'csv.empty-export',
      ] as const
    ).map((id) => unknown(id, why));
  }
  const encodings = read.map(
    (f) =>
      `${f.encoding?.toUpperCase()} (${f.encodingBasis === 'bom' ? 'byte-order mark' : f.encodingBasis === 'sniffed' ? 'told by its bytes' : 'no byte-order mark'})`
  );
  const encodingOk = read.every((f) => f.encoding === 'utf-8');
  const headers = read.flatMap((f) => (f.header ? [f.header] : []));
  const separator = separatorVerdict(read, facts.separator.char);
  const quoteErrors = read.filter((f) => f.csvError && f.csvError.problem !== 'width');
  const widthErrors = read.filter((f) => f.csvError?.problem === 'width');
  const rowCount = read.reduce((n, f) => n + f.rows, 0);
  const quoted = read.reduce((n, f) => n + (f.quotedCells ?? 0), 0);
  const quoting = quoteErrors.length
    ? contradicted('csv.quoting', quoteErrors.map((f) => `${describeCsvProblem(f)}`).join('; '))
    : confirmed('csv.quoting', `${plural(quoted, 'quoted cell')} in ${plural(rowCount, 'row')}, as RFC 4180 says`);
  const ends = read.reduce(
    (sum, f) => ({
      crlf: sum.crlf + (f.lineEnds?.crlf ?? 0),
      lf: sum.lf + (f.lineEnds?.lf ?? 0),
      cr: sum.cr + (f.lineEnds?.cr ?? 0),
    }),
    {crlf: 0, lf: 0, cr: 0}
  );
  const endText =
    Object.entries(ends)
      .filter(([, n]) => n > 0)
      .map(([kind, n]) => `${kind.toUpperCase()} ×${n}`)
      .join(', ') || 'none';
  const unterminated = read.filter((f) => f.terminated === false).length;
  const rowsSeen = `${plural(rowCount, 'row')}; line ends ${endText}${unterminated ? `; ${plural(unterminated, 'file')} without a final line end` : ''}`;
  const rows = widthErrors.length
    ? contradicted('csv.rows', `${widthErrors.map(describeCsvProblem).join('; ')}; ${rowsSeen}`)
    : confirmed('csv.rows', rowsSeen);
  const column = (
    id: 'csv.response-id' | 'csv.created',
    has: (h: (typeof headers)[number]) => boolean,
    title: string
  ): Verdict => {
    if (!headers.length) return unknown(id, 'no file had a header');
    if (separator.state !== 'confirmed')
      return unknown(id, 'the header does not split with `field_separator` (see `csv.separator`)');
    return headers.every(has)
      ? confirmed(id, `a \`${title}\` column among ${unique(headers.map((h) => h.columns)).join(' or ')}`)
      : contradicted(
          id,
          `no column the connector takes for \`${title}\` among ${unique(headers.map((h) => h.columns)).join(' or ')}`
        );
  };
  return [
    (encodingOk ? confirmed : contradicted)('csv.encoding', tally(counts(encodings))),
    separator,
    quoting,
    rows,
    column('csv.response-id', (h) => h.responseId, 'Response ID'),
    column('csv.created', (h) => h.created, 'Created'),
    emptyExportVerdict(files),
  ];
}

/**
 * Whether the configured separator reads the file's start as a header of several columns with rows of
 * the same width; if not, the separator that does, with the most columns.
 */
function separatorVerdict(files: FileSample[], configured: string): Verdict {
  const fits = files.map((f) => f.separators).filter((s) => s.length);
  if (!fits.length) return unknown('csv.separator', 'no file had a header');
  const ours = fits.map((s) => s[0]);
  const reads = (fit: SeparatorFit): string =>
    `${plural(fit.columns, 'column')}${fit.consistent ? `, ${plural(Math.max(0, fit.rows - 1), 'row')} after it alike` : ', the rows after it unlike it'}`;
  if (ours.every((fit) => fit.consistent && fit.columns >= 2)) {
    const rows = ours.reduce((n, fit) => n + fit.rows - 1, 0);
    const columns = unique(ours.map((fit) => fit.columns)).join(' or ');
    return confirmed(
      'csv.separator',
      `with ${separatorName(configured)} the header reads as ${columns} columns, and ${plural(rows, 'row')} after it alike`
    );
  }
  const best = fits[0]
    .slice(1)
    .filter((fit) => fit.consistent && fit.columns >= 2)
    .sort((x, y) => y.columns - x.columns)[0];
  const seen = `with ${separatorName(configured)} the header reads as ${reads(fits[0][0])}`;
  return best
    ? contradicted(
        'csv.separator',
        `${seen}; with ${separatorName(best.separator)} as ${reads(best)}: the file seems separated by ${separatorName(best.separator)}`
      )
    : unknown('csv.separator', `${seen}, and no other separator reads it better`);
}

function describeCsvProblem(file: FileSample): string {
  const error = file.csvError;
  if (!error) return '';
  const what: Record<string, string> = {
    'stray-quote': 'a quote inside an unquoted cell',
    'after-quote': 'a character right after a closing quote',
    'open-quote': 'a quote that is never closed',
    width: 'a row with another number of cells than the header',
  };
  return `${what[error.problem] ?? error.problem} on line ${error.line}`;
}

function emptyExportVerdict(files: {run: ExportRun; file: FileSample}[]): Verdict {
  const empty = files.filter((f) => f.file.rows === 0 && f.file.complete);
  if (!empty.length) return unknown('csv.empty-export', 'no export without responses was read');
  const withHeader = empty.filter((f) => f.file.header);
  if (withHeader.length === empty.length) {
    return confirmed(
      'csv.empty-export',
      `a header row of ${unique(withHeader.map((f) => f.file.header?.columns)).join(' or ')} columns and no row`
    );
  }
  const bytes = unique(empty.filter((f) => !f.file.header).map((f) => f.file.receivedBytes));
  return contradicted('csv.empty-export', `no header row: a file of ${bytes.join(' or ')} bytes`);
}
