#!/usr/bin/env node
// Writes the generated parts of the probe's page (docs/probe.md): the sample report, made by the probe
// itself against the bundled simulator (never written by hand), and the table of what to do about each
// contradicted verdict, made from the probe's list of assumptions. Each goes between its markers:
//   <!-- probe-sample:start --> … <!-- probe-sample:end -->   <!-- probe-advice:start --> … <!-- probe-advice:end -->
//
//   npm run docs:probe
//
// test/unit/probe-docs.cases.ts makes the sample again (on a virtual clock) and fails when the page's
// differs in anything but times, ids and counts: the page cannot fall behind the probe.
// The simulator answers as the spec reads, with rate-limit headers, except for one switch: `Created`
// with seven fractional digits, as a vendor example shows, so that the sample has a contradicted verdict.

import {AirbyteLogLevel} from 'faros-airbyte-cdk/lib/protocol';
import fs from 'fs';
import path from 'path';
import {PassThrough} from 'stream';

import {parseConfig} from '../src/core/config';
import {LIMITS} from '../src/core/limits';
import {Runtime, systemRuntime} from '../src/core/runtime';
import {runProbe} from '../src/probe/probe';
import {adviceTable, renderReport} from '../src/probe/report';
import {ConnectorLogger} from '../src/protocol/logger';
import {MessageWriter} from '../src/protocol/output';
import {DEFAULT_QUEST_IDS, SimulatorClock, startSimulator, systemClock} from '../simulator';
import {connectorConfig} from '../simulator/cli-app';

/** The project folder, from the compiled lib/scripts as from the sources (tests). */
const ROOT = [path.resolve(__dirname, '..'), path.resolve(__dirname, '..', '..')].find((dir) =>
  fs.existsSync(path.join(dir, 'package.json'))
) as string;
export const PROBE_PAGE = path.join(ROOT, 'docs', 'probe.md');

/** The text between a block's markers replaced by `content`. */
function replaceBlock(text: string, name: string, content: string): string {
  const start = `<!-- ${name}:start -->`;
  const end = `<!-- ${name}:end -->`;
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from === -1 || to < from) throw new Error(`${PROBE_PAGE} has no ${start} … ${end} block`);
  return `${text.slice(0, from + start.length)}\n\n${content.trim()}\n\n${text.slice(to)}`;
}

/** Markdown as the project's Prettier settings write it (the page is checked by `npm run lint`). */
async function formatMarkdown(text: string): Promise<string> {
  // Loaded here, not at the top: the page's test imports sampleReport, and Prettier does not load under jest.
  const prettier = await import('prettier');
  const options = (await prettier.resolveConfig(PROBE_PAGE)) ?? {};
  return prettier.format(text, {...options, parser: 'markdown'});
}

/** The sample report: the probe of a spec-faithful simulator whose `Created` has seven fractional digits. */
export async function sampleReport(
  clock: Runtime & SimulatorClock = {...systemRuntime, ...systemClock}
): Promise<string> {
  const sim = await startSimulator({
    clock,
    seed: 7,
    exportDurationMs: 1500,
    quests: [
      {
        id: DEFAULT_QUEST_IDS[0],
        rows: 400,
        columns: 12,
        firstCreatedAt: new Date(clock.now() - 14 * 86_400_000).toISOString(),
        invitations: 1500,
      },
    ],
    faults: {rateLimit: {limit: 600, windowMs: 60_000}},
    dialect: {created: 'iso-7'},
  });
  try {
    const {config} = parseConfig(connectorConfig(sim), clock.now());
    const logger = new ConnectorLogger(new MessageWriter(new PassThrough()), AirbyteLogLevel.ERROR);
    const result = await runProbe(
      config,
      {questId: DEFAULT_QUEST_IDS[0], budgetMs: LIMITS.probe.budgetMs, maxRows: LIMITS.probe.maxRows},
      {runtime: clock, logger, onSecret: () => undefined}
    );
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {name: string; version: string};
    return renderReport(result, `${pkg.name} ${pkg.version}`);
  } finally {
    await sim.close();
  }
}

async function main(): Promise<void> {
  const report = await sampleReport();
  let page = fs.readFileSync(PROBE_PAGE, 'utf8');
  // A fence longer than any run of backticks in the report.
  page = replaceBlock(page, 'probe-sample', `\`\`\`\`text\n${report.trim()}\n\`\`\`\``);
  page = replaceBlock(page, 'probe-advice', adviceTable());
  fs.writeFileSync(PROBE_PAGE, await formatMarkdown(page));
  process.stdout.write(`Wrote the sample probe report and the table of verdicts into ${PROBE_PAGE}\n`);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`probe-sample: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
