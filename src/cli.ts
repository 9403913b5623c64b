import {Command} from 'commander';
import {AirbyteConfiguredCatalog, AirbyteConnectionStatus, AirbyteConnectionStatusMessage} from 'faros-airbyte-cdk';
import fs from 'fs';
import VError from 'verror';

import {parseConfig, QuestbackConfig} from './config';
import {connectorError, errorMessage, failureTypeOf} from './errors';
import {ConnectorLogger, SecretScrubber} from './logger';
import {MessageWriter} from './output';
import {errorTrace} from './protocol';
import {defaultEnvironment, QuestbackSource, SourceEnvironment} from './source';
import {parseStateInput} from './state';

function readJsonFile(file: string, what: string): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw connectorError(
      'config_error',
      `Cannot read the ${what} file ${file}: ${(err as NodeJS.ErrnoException).code ?? errorMessage(err)}.`
    );
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw connectorError('config_error', `The ${what} file ${file} is not valid JSON: ${errorMessage(err)}.`);
  }
}

function parseCatalog(raw: unknown): AirbyteConfiguredCatalog {
  const streams = (raw as {streams?: unknown})?.streams;
  if (!Array.isArray(streams))
    throw connectorError(
      'config_error',
      'The catalog file has no "streams" list; pass the configured catalog Airbyte produced.'
    );
  for (const [i, s] of streams.entries()) {
    const entry = s as {stream?: {name?: unknown}; sync_mode?: unknown};
    if (typeof entry?.stream?.name !== 'string')
      throw connectorError('config_error', `Catalog stream ${i} has no stream.name.`);
    if (entry.sync_mode !== 'full_refresh' && entry.sync_mode !== 'incremental') {
      throw connectorError(
        'config_error',
        `Catalog stream ${entry.stream.name} has sync_mode ${JSON.stringify(entry.sync_mode)}; use full_refresh or incremental.`
      );
    }
  }
  return raw as AirbyteConfiguredCatalog;
}

/**
 * The connector's command line: spec, check, discover, read, as the Airbyte protocol asks, with
 * every message through one batched writer. Replaces the kit's runner, which logs per message with
 * console.log, compresses state, and exits 0 when streams failed.
 */
export function mainCommand(
  env: SourceEnvironment = defaultEnvironment(),
  out: NodeJS.WritableStream = process.stdout
): Command {
  const scrubber: SecretScrubber = env.scrubber;
  const writer = new MessageWriter(out, (line) => scrubber.scrub(line));
  const logger = new ConnectorLogger(writer);
  const source = new QuestbackSource(logger, env);

  const finish = async (code: number): Promise<void> => {
    await writer.flush();
    process.exitCode = code;
  };
  /** A failure no stream handled: one error trace, exit 1. */
  const fail = async (err: unknown): Promise<void> => {
    const type = failureTypeOf(err);
    await writer.write(
      errorTrace(errorMessage(err), type, env.runtime.now(), {
        stackTrace: err instanceof Error ? VError.fullStack(err) : undefined,
      })
    );
    await finish(1);
  };
  const loadConfig = (file: string): QuestbackConfig => {
    const config = parseConfig(readJsonFile(file, 'config'), env.runtime.now());
    scrubber.add(config.client_secret);
    return config;
  };

  const program = new Command().name('main').description('Airbyte source for the Questback Public Data Export API');
  program.exitOverride();

  program
    .command('spec')
    .description('print the connector specification')
    .action(async () => {
      await writer.write(await source.spec());
      await finish(0);
    });

  program
    .command('check')
    .description('check the credentials and access to every quest')
    .requiredOption('--config <path>', 'config JSON file')
    .action(async (opts: {config: string}) => {
      let status: AirbyteConnectionStatusMessage;
      try {
        status = await source.check(loadConfig(opts.config));
      } catch (err) {
        status = new AirbyteConnectionStatusMessage({
          status: AirbyteConnectionStatus.FAILED,
          message: errorMessage(err),
        });
      }
      await writer.write(status);
      await finish(0);
    });

  program
    .command('discover')
    .description('list one stream per quest, with its columns')
    .requiredOption('--config <path>', 'config JSON file')
    .action(async (opts: {config: string}) => {
      try {
        await writer.write(await source.discover(loadConfig(opts.config)));
        await finish(0);
      } catch (err) {
        await fail(err);
      }
    });

  program
    .command('read')
    .description('export the configured quests as records with per-stream state')
    .requiredOption('--config <path>', 'config JSON file')
    .requiredOption('--catalog <path>', 'configured catalog JSON file')
    .option('--state <path>', 'state JSON file')
    .action(async (opts: {config: string; catalog: string; state?: string}) => {
      try {
        const config = loadConfig(opts.config);
        const catalog = parseCatalog(readJsonFile(opts.catalog, 'catalog'));
        const state = parseStateInput(opts.state ? readJsonFile(opts.state, 'state') : undefined);
        logger.info(
          `Reading ${catalog.streams.length} stream(s) of ${config.quest_ids.length} configured quest(s) from ${config.start_date}`
        );
        const ok = await source.readAll(config, catalog, state, writer);
        if (!ok)
          logger.error(
            'The sync finished with failed streams; see the error traces above. The next sync resumes each stream from its last state.'
          );
        await finish(ok ? 0 : 1);
      } catch (err) {
        await fail(err);
      }
    });

  return program;
}
