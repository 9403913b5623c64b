// The figures as a console table and as docs/benchmarks.md.

import {execFileSync} from 'child_process';
import fs from 'fs';
import os from 'os';

export const iso = (ms: number): string => new Date(ms).toISOString();
/** Milliseconds as seconds with one decimal: "12.3 s". */
export const s = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
export const thousands = (n: number): string => Math.round(n).toLocaleString('en-US');
/** A peak RSS in KiB, as MiB. */
export const mib = (kb: number | undefined): string => (kb === undefined ? 'n/a' : `${(kb / 1024).toFixed(0)} MiB`);

export interface Row {
  section: string;
  metric: string;
  value: string;
  /** The goal, e.g. ">= 1.5x"; empty for figures without one. */
  target?: string;
  /** Whether the target is met; undefined for figures without a target. */
  met?: boolean;
}

export interface Machine {
  date: string;
  /** The commit the code was measured on ("+ changes" when the work tree differs from it). */
  commit: string;
  nproc: number;
  memoryGiB: number;
  cpuModel: string;
  node: string;
  kernel: string;
  loadAverage: string;
}

export function machine(): Machine {
  let nproc = os.availableParallelism();
  try {
    // nproc honours CPU affinity and quotas, which os.availableParallelism may not on older Node.
    nproc = Number(execFileSync('nproc', {encoding: 'utf8', timeout: 5000}).trim()) || nproc;
  } catch {
    // keep the Node figure
  }
  let cpuModel = os.cpus()[0]?.model ?? 'unknown';
  try {
    const m = /^model name\s*:\s*(.+)$/m.exec(fs.readFileSync('/proc/cpuinfo', 'utf8'));
    if (m) cpuModel = m[1].trim();
  } catch {
    // not Linux: os.cpus() is good enough
  }
  let commit = 'unknown (not a git checkout)';
  try {
    commit = execFileSync('git', ['rev-parse', 'HEAD'], {encoding: 'utf8', timeout: 5000}).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], {
      encoding: 'utf8',
      timeout: 5000,
    });
    if (dirty.trim()) commit += ' + uncommitted changes';
  } catch {
    // keep the placeholder
  }
  return {
    date: new Date().toISOString(),
    commit,
    nproc,
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    cpuModel,
    node: process.version,
    kernel: `${os.type()} ${os.release()}`,
    loadAverage: os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' '),
  };
}

function verdict(row: Row): string {
  if (row.met === undefined) return '';
  return row.met ? 'met' : 'MISSED';
}

export function consoleTable(rows: readonly Row[]): string {
  const cells = rows.map((r) => [r.section, r.metric, r.value, r.target ?? '', verdict(r)]);
  const head = ['section', 'figure', 'value', 'target', ''];
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (c: readonly string[]): string =>
    c
      .map((x, i) => x.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  const out = [line(head), widths.map((w) => '-'.repeat(w)).join('  ')];
  let section = '';
  for (const c of cells) {
    if (c[0] !== section && section !== '') out.push('');
    section = c[0];
    out.push(line(c));
  }
  return out.join('\n');
}

function mdTable(rows: readonly Row[]): string {
  const esc = (s: string): string => s.replace(/\|/g, '\\|');
  const out = ['| figure | value | target | |', '|---|---|---|---|'];
  for (const r of rows) out.push(`| ${esc(r.metric)} | ${esc(r.value)} | ${esc(r.target ?? '')} | ${verdict(r)} |`);
  return out.join('\n');
}

export interface DocInput {
  machine: Machine;
  command: string;
  durationS: number;
  rows: readonly Row[];
  /** The sections and options, as --help prints them. */
  usage: string;
  /** Section name -> how its figures were measured. */
  methods: ReadonlyMap<string, string>;
  notes: readonly string[];
}

export function markdown(input: DocInput): string {
  const {machine: m} = input;
  const parts = [
    '# Benchmarks',
    '',
    `Written by \`scripts/bench.ts\` on ${m.date.slice(0, 10)} (${m.date}) from commit ${m.commit}; the whole run took ${Math.round(input.durationS)} s.`,
    'Every figure below comes from that one run. The machine is shared and noisy: compare ratios measured in one run,',
    'not absolute figures across days.',
    '',
    '## Machine',
    '',
    `- CPU: ${m.cpuModel}, ${m.nproc} processor(s) (nproc)`,
    `- Memory: ${m.memoryGiB} GiB`,
    `- Node: ${m.node}; ${m.kernel}`,
    `- Load average when the run started: ${m.loadAverage}`,
    '',
    '## Command',
    '',
    '```sh',
    input.command,
    '```',
    '',
    'The benchmark reports figures. What the connector promises in counts and exactness (exports per sync,',
    'every row once across attempts, no Node warning, a check that passes on a slow service) the tests assert;',
    'a target column stays where no test may bound the figure (throughput and wall-time ratios) and on peak',
    'memory by rows per export, which no test measures at these sizes. `npm run bench -- --quick` is a smoke run',
    'of every section in a few minutes.',
    '',
    '```text',
    input.usage,
    '```',
    '',
  ];
  const sections = [...new Set(input.rows.map((r) => r.section))];
  for (const section of sections) {
    parts.push(`## ${section}`, '');
    const method = input.methods.get(section);
    if (method) parts.push(method, '');
    parts.push(mdTable(input.rows.filter((r) => r.section === section)), '');
  }
  if (input.notes.length) {
    parts.push('## Notes', '', ...input.notes.map((n) => `- ${n}`), '');
  }
  return parts.join('\n');
}
