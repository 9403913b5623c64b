import {Command, CommanderError, InvalidArgumentError} from 'commander';
import fs from 'fs';
import path from 'path';

import {QuestbackConfig} from '../core/config';
import {questIdOf} from '../core/config-rules';
import {connectorError, fileProblem} from '../core/errors';
import {LIMITS} from '../core/limits';
import {MINUTE_MS} from '../core/time';
import {renderReport, summary, summaryLine} from '../probe/report';
import type {CliEnvironment, Connector} from './cli';

/** Exit code of a probe that ran and found at least one assumption contradicted (1: it could not run). */
const PROBE_CONTRADICTED_EXIT = 3;

const MAX_MINUTES = LIMITS.probe.maxBudgetMs / MINUTE_MS;

/** The report's place unless --report says: a folder of its own, which the project's .gitignore lists. */
const DEFAULT_REPORT = path.join('probe-output', 'probe-report.md');

/** --minutes, checked as commander parses it, so that a mistake is said on stderr like commander's own. */
function minutesArg(text: string): number {
  const minutes = Number(text);
  if (text.trim() === '' || !(minutes >= 1 && minutes <= MAX_MINUTES))
    throw new InvalidArgumentError(`--minutes must be a number from 1 to ${MAX_MINUTES}.`);
  return minutes;
}

/** What the probe command shares with the others of the command line (cli.ts). */
interface CommandParts {
  connector: Connector;
  env: CliEnvironment;
  loadConfig(file: string): QuestbackConfig;
  /** Flushes the output and sets the exit code. */
  finish(code: number): Promise<void>;
  /** A failure: one error trace, exit 1. */
  fail(err: unknown): Promise<void>;
}

/**
 * `probe`: checks the connector's assumptions against the service (probe/) and writes the report,
 * safe to send to Questback support, to a file; the exit code says whether anything was contradicted.
 */
export function addProbeCommand(
  withConfig: (name: string, description: string) => Command,
  {connector, env, loadConfig, finish, fail}: CommandParts
): void {
  const {logger} = env;
  withConfig(
    'probe',
    "check the connector's assumptions against the real service (a token, at most 3 small exports of one quest, a few minutes) and write a Markdown report that is safe to send to Questback support. stdout carries log messages only; a mistake on the command line is said on stderr"
  )
    .option('--quest <id>', 'the quest to export, one of quest_ids (default: the first)')
    .option('--report <path>', `where to write the report (default: ${DEFAULT_REPORT}, its folder made if missing)`)
    .option(
      '--minutes <n>',
      `the longest the probe may take, 1 to ${MAX_MINUTES}`,
      minutesArg,
      LIMITS.probe.budgetMs / MINUTE_MS
    )
    .addHelpText(
      'after',
      [
        '',
        'Exit codes:',
        '  0  the probe ran and nothing was contradicted',
        `  ${PROBE_CONTRADICTED_EXIT}  at least one assumption was contradicted: the report says which, and what to do`,
        '  1  the probe could not run: an error trace on stdout says why (a mistake on the command line: on stderr)',
      ].join('\n')
    )
    .action(async (opts: {config: string; quest?: string; report?: string; minutes: number}, command: Command) => {
      try {
        const config = loadConfig(opts.config);
        const questId = opts.quest === undefined ? config.quest_ids[0] : questIdOf(opts.quest);
        if (questId === undefined || !config.quest_ids.includes(questId)) {
          command.error(
            `error: option '--quest <id>' argument ${JSON.stringify(opts.quest)} is not one of quest_ids in ${opts.config} (${config.quest_ids.join(', ')}).`,
            {exitCode: 1, code: 'commander.invalidArgument'}
          );
        }
        const file = path.resolve(opts.report ?? DEFAULT_REPORT);
        const folder = path.dirname(file);
        try {
          if (opts.report === undefined) fs.mkdirSync(folder, {recursive: true});
          fs.accessSync(folder, fs.constants.W_OK);
        } catch (err) {
          throw connectorError(
            'config_error',
            `Cannot write the report to ${file}: ${fileProblem(err, 'folder')} (${folder}); pass --report <path>.`
          );
        }
        const result = await connector.probe(config, {
          questId,
          budgetMs: opts.minutes * MINUTE_MS,
          maxRows: LIMITS.probe.maxRows,
        });
        fs.writeFileSync(file, env.scrub(renderReport(result, env.connectorName())));
        logger.info(
          `Probe finished: ${summaryLine(result.verdicts)}. Report, safe to send to Questback support: ${file}`
        );
        await finish(summary(result.verdicts).contradicted ? PROBE_CONTRADICTED_EXIT : 0);
      } catch (err) {
        // Said on stderr already (command.error above); bin/main sets the exit code.
        if (err instanceof CommanderError) throw err;
        await fail(err);
      }
    });
}
