import {Command} from 'commander';
import fs from 'fs';
import path from 'path';

import {QuestbackConfig} from '../core/config';
import {connectorError, errorMessage} from '../core/errors';
import {LIMITS} from '../core/limits';
import {MINUTE_MS} from '../core/time';
import {renderReport, summary, summaryLine} from '../probe/report';
import type {CliEnvironment, Connector} from './cli';

/** Exit code of a probe that ran and found at least one assumption contradicted (1: it could not run). */
const PROBE_CONTRADICTED_EXIT = 3;

/** What the probe command shares with the others of the command line (cli.ts). */
export interface CommandParts {
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
    "check the connector's assumptions against the real service (a token, at most 3 small exports of one quest, a few minutes) and write a Markdown report that is safe to send to Questback support. stdout carries log messages only. Exit code 0: nothing contradicted; 3: an assumption contradicted (see the report); 1: the probe could not run"
  )
    .option('--quest <id>', 'the quest to export, one of quest_ids (default: the first)')
    .option('--report <path>', 'where to write the report', 'probe-report.md')
    .option('--minutes <n>', 'the longest the probe may take, 1 to 30', String(LIMITS.probe.budgetMs / MINUTE_MS))
    .action(async (opts: {config: string; quest?: string; report: string; minutes: string}) => {
      try {
        const config = loadConfig(opts.config);
        const questId = (opts.quest ?? config.quest_ids[0]).trim().toLowerCase();
        if (!config.quest_ids.includes(questId)) {
          throw connectorError(
            'config_error',
            `--quest ${opts.quest} is not one of quest_ids (${config.quest_ids.join(', ')}).`
          );
        }
        const minutes = Number(opts.minutes);
        if (!(minutes >= 1 && minutes <= LIMITS.probe.maxBudgetMs / MINUTE_MS)) {
          throw connectorError(
            'config_error',
            `--minutes must be a number from 1 to ${LIMITS.probe.maxBudgetMs / MINUTE_MS}, got ${JSON.stringify(opts.minutes)}.`
          );
        }
        const file = path.resolve(opts.report);
        try {
          fs.accessSync(path.dirname(file), fs.constants.W_OK);
        } catch (err) {
          throw connectorError(
            'config_error',
            `Cannot write the report to ${file}: ${(err as NodeJS.ErrnoException).code ?? errorMessage(err)}; pass --report <path>.`
          );
        }
        const result = await connector.probe(config, {
          questId,
          budgetMs: minutes * MINUTE_MS,
          maxRows: LIMITS.probe.maxRows,
        });
        fs.writeFileSync(file, env.scrub(renderReport(result, env.connectorName())));
        logger.info(
          `Probe finished: ${summaryLine(result.verdicts)}. Report, safe to send to Questback support: ${file}`
        );
        await finish(summary(result.verdicts).contradicted ? PROBE_CONTRADICTED_EXIT : 0);
      } catch (err) {
        await fail(err);
      }
    });
}
