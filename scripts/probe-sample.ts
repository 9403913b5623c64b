#!/usr/bin/env node
// Writes the probe's part of the user guide (docs/questback.md): the sample report, made by the probe
// itself against the bundled simulator (never written by hand), and the table of what to do about each
// contradicted verdict, made from the probe's list of assumptions. Each goes between its markers:
//   <!-- probe-sample:start --> … <!-- probe-sample:end -->   <!-- probe-advice:start --> … <!-- probe-advice:end -->
//
//   npm run docs:probe
//
// The simulator answers as the spec reads, with rate-limit headers, except for one switch: `Created`
// with seven fractional digits, as a vendor example shows, so that the sample has a contradicted verdict.

import {AirbyteLogLevel} from 'faros-airbyte-cdk/lib/protocol';
import fs from 'fs';
import path from 'path';
import * as prettier from 'prettier';
import {PassThrough} from 'stream';

import {parseConfig} from '../src/core/config';
import {LIMITS} from '../src/core/limits';
import {systemRuntime} from '../src/core/runtime';
import {runProbe} from '../src/probe/probe';
import {adviceTable, renderReport} from '../src/probe/report';
import {ConnectorLogger} from '../src/protocol/logger';
import {MessageWriter} from '../src/protocol/output';
import {DEFAULT_QUEST_IDS, startSimulator} from '../simulator';
import {connectorConfig} from '../simulator/cli-app';

/** The project folder, from the compiled lib/scripts as from the sources (tests). */
const ROOT = [path.resolve(__dirname, '..'), path.resolve(__dirname, '..', '..')].find((dir) =>
  fs.existsSync(path.join(dir, 'package.json'))
) as string;
const GUIDE = path.join(ROOT, 'docs', 'questback.md');

/** The text between a block's markers replaced by `content`. */
function replaceBlock(text: string, name: string, content: string): string {
  const start = `<!-- ${name}:start -->`;
  const end = `<!-- ${name}:end -->`;
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from === -1 || to < from) throw new Error(`${GUIDE} has no ${start} … ${end} block`);
  return `${text.slice(0, from + start.length)}\n\n${content.trim()}\n\n${text.slice(to)}`;
}

/** Markdown as the project's Prettier settings write it (the guide is checked by `npm run lint`). */
async function formatMarkdown(text: string): Promise<string> {
  const options = (await prettier.resolveConfig(GUIDE)) ?? {};
  return prettier.format(text, {...options, parser: 'markdown'});
}

async function sampleReport(): Promise<string> {
  const sim = await startSimulator({
    seed: 7,
    exportDurationMs: 1500,
    quests: [
      {
        id: DEFAULT_QUEST_IDS[0],
        rows: 400,
        columns: 12,
        firstCreatedAt: new Date(Date.now() - 14 * 86_400_000).toISOString(),
      },
    ],
    faults: {rateLimit: {limit: 600, windowMs: 60_000}},
    dialect: {created: 'iso-7'},
  });
  try {
    const {config} = parseConfig(connectorConfig(sim), Date.now());
    const logger = new ConnectorLogger(new MessageWriter(new PassThrough()), AirbyteLogLevel.ERROR);
    const result = await runProbe(
      config,
      {questId: DEFAULT_QUEST_IDS[0], budgetMs: LIMITS.probe.budgetMs, maxRows: LIMITS.probe.maxRows},
      {runtime: systemRuntime, logger, onSecret: () => undefined}
    );
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {name: string; version: string};
    return renderReport(result, `${pkg.name} ${pkg.version}`);
  } finally {
    await sim.close();
  }
}

async function main(): Promise<void> {
  const report = await sampleReport();
  let guide = fs.readFileSync(GUIDE, 'utf8');
  // A fence longer than any run of backticks in the report.
  guide = replaceBlock(guide, 'probe-sample', `\`\`\`\`text\n${report.trim()}\n\`\`\`\``);
  guide = replaceBlock(guide, 'probe-advice', adviceTable());
  fs.writeFileSync(GUIDE, await formatMarkdown(guide));
  process.stdout.write(`Wrote the sample probe report and the table of verdicts into ${GUIDE}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`probe-sample: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
