import {describeWindow, formatDuration, formatUtcTimestamp} from '../core/time';
import {ASSUMPTIONS, assumption, TOPICS} from './assumptions';
import {ExportRun, Verdict, VerdictState} from './verdict';
import {ProbeResult} from './probe';

const LABEL: Record<VerdictState, string> = {
  confirmed: 'confirmed',
  contradicted: '**contradicted**',
  unknown: 'unknown',
};

/** A table cell: pipes escaped, on one line. */
function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');
}

function table(head: string[], rows: string[][]): string[] {
  return [
    `| ${head.join(' | ')} |`,
    `| ${head.map(() => '---').join(' | ')} |`,
    ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`),
  ];
}

export function summary(verdicts: readonly Verdict[]): Record<VerdictState, number> {
  const count = {confirmed: 0, contradicted: 0, unknown: 0};
  for (const v of verdicts) count[v.state]++;
  return count;
}

export function summaryLine(verdicts: readonly Verdict[]): string {
  const n = summary(verdicts);
  return `${n.confirmed} confirmed, ${n.contradicted} contradicted, ${n.unknown} unknown`;
}

/** The exports the service made (those with an id to follow), of those asked for: the table's rows say what became of each. */
function exportCount(runs: readonly ExportRun[]): string {
  const made = runs.filter((run) => run.exportId).length;
  return made === runs.length ? `${made}` : `${made} of ${runs.length} asked for`;
}

function exportRow(run: ExportRun): string[] {
  // The boundary window lies between two responses' creation times: those are data, so only its length is shown.
  const window =
    run.purpose === 'boundary'
      ? `between two responses' creation times (${formatDuration(run.window.until - run.window.since)})`
      : describeWindow(run.window);
  const file = run.file;
  return [
    run.purpose,
    window,
    run.exportId ? `\`${run.exportId}\`` : '-',
    run.problem ? `${run.outcome}: ${run.problem}` : run.outcome,
    run.generationMs === undefined ? '-' : formatDuration(run.generationMs),
    String(run.polls),
    file ? `${file.rows}${file.stoppedEarly ? ' (row limit)' : ''}` : '-',
    file ? String(file.receivedBytes) : '-',
  ];
}

/**
 * The probe's report in Markdown, safe to send to Questback support: built from the verdicts (shapes
 * and counts) and the probe's own requests only, never from a response's value, a secret or a token.
 */
export function renderReport(result: ProbeResult, connector: string): string {
  const lines: string[] = [
    '# Questback export API: probe report',
    '',
    ...table(
      ['', ''],
      [
        ['Connector', connector],
        [
          'Probed',
          `${formatUtcTimestamp(result.startedAt)}, for ${formatDuration(result.finishedAt - result.startedAt)}`,
        ],
        ['api_url', result.apiUrl],
        ['Quest', `\`${result.questId}\``],
        ['Exports', exportCount(result.exports)],
      ]
    ),
    '',
    'This report holds no secret, no token and no value of any response: only shapes and counts. It may be sent to',
    "Questback support or to the connector's maintainers as it is.",
    '',
    `**${summaryLine(result.verdicts)}.**`,
    '',
  ];
  const contradicted = result.verdicts.filter((v) => v.state === 'contradicted');
  if (contradicted.length) {
    lines.push('## Contradicted, and what to do', '');
    for (const v of contradicted) {
      const a = assumption(v.id);
      lines.push(
        `### \`${v.id}\``,
        '',
        `- Assumed: ${a.assumption}`,
        `- Seen: ${v.seen}`,
        `- What to do: ${a.ifContradicted}`,
        ''
      );
    }
  }
  lines.push('## Every verdict', '');
  for (const topic of TOPICS) {
    const rows = ASSUMPTIONS.filter((a) => a.topic === topic).flatMap((a) => {
      const v = result.verdicts.find((x) => x.id === a.id);
      return v ? [[`\`${a.id}\``, LABEL[v.state], a.assumption, v.seen]] : [];
    });
    if (rows.length)
      lines.push(`### ${topic}`, '', ...table(['assumption', 'verdict', 'the connector assumes', 'seen'], rows), '');
  }
  lines.push(
    '## Exports',
    '',
    ...table(
      ['purpose', 'window', 'export id', 'outcome', 'generated in', 'polls', 'rows read', 'bytes'],
      result.exports.map(exportRow)
    ),
    ''
  );
  if (result.skipped.length) lines.push('## Left out', '', ...result.skipped.map((s) => `- ${s}`), '');
  return lines.join('\n');
}

/** The table of what to do about each contradicted verdict, on the probe's page (docs/probe.md). */
export function adviceTable(): string {
  return table(
    ['verdict', 'the connector assumes', 'when contradicted'],
    ASSUMPTIONS.map((a) => [`\`${a.id}\``, a.assumption, a.ifContradicted])
  ).join('\n');
}
