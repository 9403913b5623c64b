import {Command} from 'commander';
import {AirbyteLogger} from 'faros-airbyte-cdk/lib/logger';
import {AirbyteCatalogMessage, AirbyteSpec} from 'faros-airbyte-cdk/lib/protocol';
import VError from 'verror';

import {parseConfig, QuestbackConfig} from '../core/config';
import {connectorError, errorMessage, failureTypeOf} from '../core/errors';
import {LIMITS} from '../core/limits';
import {Runtime} from '../core/runtime';
import {ProbeOptions, ProbeResult} from '../probe/probe';
import {CheckResult} from '../sync/commands/check';
import {SyncOutput} from '../sync/output-port';
import {ConfiguredStream} from '../sync/commands/read';
import {parseStateInput} from '../sync/state/stream-state';
import {AirbyteOutput} from './airbyte-output';
import {readJsonFile} from './json-file';
import {connectionStatus, errorTrace} from './messages';
import {MessageWriter} from './output';
import {addProbeCommand} from './probe-command';
import {cut, quote} from '../core/outside-text';

/** The connector's operations, as the command line runs them. */
export interface Connector {
  spec(): Promise<AirbyteSpec>;
  check(config: QuestbackConfig): Promise<CheckResult>;
  discover(config: QuestbackConfig): Promise<AirbyteCatalogMessage>;
  read(
    config: QuestbackConfig,
    catalog: readonly ConfiguredStream[],
    state: ReadonlyMap<string, unknown>,
    output: SyncOutput,
    signal: AbortSignal
  ): Promise<boolean>;
  probe(config: QuestbackConfig, options: ProbeOptions): Promise<ProbeResult>;
}

export type StopSignal = 'SIGTERM' | 'SIGINT';

/** Exit codes of a read stopped by a signal, as shells report them. */
const SIGNAL_EXIT: Record<StopSignal, number> = {SIGTERM: 143, SIGINT: 130};
const STOP_SIGNALS = Object.keys(SIGNAL_EXIT) as StopSignal[];

/**
 * What the command line takes from the process it runs in. bin/main runs one command per process
 * (`processHost`); tests run many side by side in one process, each with a host of its own.
 */
export interface Host {
  /** The exit code the process ends with once the command is done. */
  setExitCode(code: number): void;
  /** Ends the process at once (stdout is gone, or a stopped read outlived its grace). */
  exit(code: number): void;
  /** Text for stderr: what cannot go on stdout. */
  stderr(text: string): void;
  /**
   * Calls `listener` on SIGTERM and SIGINT until the returned function is called. A process given
   * a stop signal ends LIMITS.stopGraceMs later anyway, with the signal's exit code.
   */
  onStop(listener: (signal: StopSignal) => void): () => void;
  /** Records may be encoded on a worker thread (a process of its own has the cores for it). */
  worker: boolean;
}

export const processHost: Host = {
  setExitCode: (code) => void (process.exitCode = code),
  exit: (code) => process.exit(code),
  stderr: (text) => void process.stderr.write(text),
  onStop(listener) {
    const handlers = STOP_SIGNALS.map((name) => {
      const handler = (): void => {
        setTimeout(() => process.exit(SIGNAL_EXIT[name]), LIMITS.stopGraceMs).unref();
        listener(name);
      };
      return [name, handler] as const;
    });
    for (const [name, handler] of handlers) process.once(name, handler);
    return () => {
      for (const [name, handler] of handlers) process.removeListener(name, handler);
    };
  },
  worker: true,
};

export interface CliEnvironment {
  runtime: Runtime;
  writer: MessageWriter;
  logger: AirbyteLogger;
  /** Registers a secret for redaction. */
  onSecret(secret: string, clientId?: string): void;
  /** Masks every registered secret in a text that leaves the process by another way than stdout (the probe's report). */
  scrub(text: string): string;
  /** The connector's name and version, as a report names it. */
  connectorName(): string;
  host: Host;
  /** Where commander writes help text (stdout). */
  out: NodeJS.WritableStream;
}

/**
 * Exit code when stdout's reader went away (`main read … | head -5`): what a shell reports for a
 * writer killed by SIGPIPE (128 + 13), as `yes | head` gives. Not 0: the read did not finish, and a
 * script with `set -o pipefail` should see that; the exports it made are simply left unread.
 */
const CLOSED_STDOUT_EXIT = 141;

function parseCatalog(raw: unknown): ConfiguredStream[] {
  const streams = (raw as {streams?: unknown})?.streams;
  if (!Array.isArray(streams)) {
    throw connectorError(
      'config_error',
      'The catalog file has no "streams" list; pass the configured catalog Airbyte produced.'
    );
  }
  for (const [i, s] of streams.entries()) {
    const entry = s as {stream?: {name?: unknown}; sync_mode?: unknown};
    if (typeof entry?.stream?.name !== 'string')
      throw connectorError('config_error', `Catalog stream ${i} has no stream.name.`);
    if (entry.sync_mode !== 'full_refresh' && entry.sync_mode !== 'incremental') {
      throw connectorError(
        'config_error',
        `Catalog stream ${cut(entry.stream.name)} has sync_mode ${quote(entry.sync_mode)}; use full_refresh or incremental.`
      );
    }
  }
  return streams as ConfiguredStream[];
}

/**
 * The connector's command line: spec, check, discover, read, as the Airbyte protocol asks, with
 * every message through one batched writer. Replaces the kit's runner, which logs per message with
 * console.log, compresses state, and exits 0 when streams failed. A read told to stop (SIGTERM,
 * SIGINT) ends its streams, says so in an error trace, and exits non-zero.
 */
export function buildCommand(connector: Connector, env: CliEnvironment): Command {
  const {writer, logger, runtime, host} = env;
  // Nobody reads what would be written: stop at once, with nothing on stderr (a closed pipe is the
  // reader's choice, not a failure to explain). Anything else failing stdout is said on stderr.
  writer.onBroken((err) => {
    if (err.code !== 'EPIPE')
      host.stderr(
        env.scrub(
          `Cannot write to stdout (${err.code ?? err.message}); nothing more is written and the read stops. Check the disk or the pipe the output goes to.\n`
        )
      );
    host.exit(err.code === 'EPIPE' ? CLOSED_STDOUT_EXIT : 1);
  });
  const finish = async (code: number): Promise<void> => {
    await writer.flush();
    host.setExitCode(code);
  };
  /** A failure no stream handled: one error trace, exit 1. */
  const fail = async (err: unknown): Promise<void> => {
    await writer.write(
      errorTrace(errorMessage(err), failureTypeOf(err), runtime.now(), {
        stackTrace: err instanceof Error ? VError.fullStack(err) : undefined,
      })
    );
    await finish(1);
  };
  const loadConfig = (file: string): QuestbackConfig => {
    const {config, warnings} = parseConfig(readJsonFile(file, 'config'), runtime.now());
    env.onSecret(config.client_secret, config.client_id);
    if (config.hash_salt) env.onSecret(config.hash_salt);
    for (const warning of warnings) logger.warn(warning);
    return config;
  };

  const program = new Command().name('main').description('Airbyte source for the Questback Public Data Export API');
  program.exitOverride();
  // Before the subcommands are made: they inherit it.
  program.configureOutput({writeOut: (text) => void env.out.write(text), writeErr: (text) => host.stderr(text)});

  /** A command that reads the config file. */
  const withConfig = (name: string, description: string): Command =>
    program.command(name).description(description).requiredOption('--config <path>', 'config JSON file');

  program
    .command('spec')
    .description('print the connector specification')
    .action(async () => {
      await writer.write(await connector.spec());
      await finish(0);
    });

  withConfig('check', 'check the addresses, the credentials and access to every quest').action(
    async (opts: {config: string}) => {
      let result: CheckResult;
      try {
        result = await connector.check(loadConfig(opts.config));
      } catch (err) {
        result = {ok: false, message: errorMessage(err)};
      }
      await writer.write(connectionStatus(result));
      await finish(0);
    }
  );

  withConfig(
    'discover',
    'list the streams and their schemas: with stream_layout per_quest, quest_<id> for each quest (its columns learnt from a small export of it) and columns; with combined, responses and columns (no export)'
  ).action(async (opts: {config: string}) => {
    try {
      await writer.write(await connector.discover(loadConfig(opts.config)));
      await finish(0);
    } catch (err) {
      await fail(err);
    }
  });

  withConfig('read', 'export the configured quests as records with per-stream state')
    .requiredOption('--catalog <path>', 'configured catalog JSON file')
    .option('--state <path>', 'state JSON file')
    .action(async (opts: {config: string; catalog: string; state?: string}) => {
      const stop = new AbortController();
      let signal: StopSignal | undefined;
      const stopListening = host.onStop((name) => {
        if (signal) return;
        signal = name;
        logger.warn(`Received ${name}: stopping the sync`);
        stop.abort();
      });
      // Parsing on this thread, encoding records on another: the read uses two cores.
      if (host.worker) writer.encodeInWorker();
      try {
        const config = loadConfig(opts.config);
        const catalog = parseCatalog(readJsonFile(opts.catalog, 'catalog'));
        const state = parseStateInput(opts.state ? readJsonFile(opts.state, 'state') : undefined);
        // Each stream says where it starts itself; this line must not name start_date for streams that resume.
        const resuming = catalog.some((s) => state.has(s.stream.name));
        const from = resuming
          ? `from the cursor in the state (streams without a state: from start_date ${config.start_date})`
          : `from start_date ${config.start_date}`;
        logger.info(`Reading ${catalog.length} stream(s) of ${config.quest_ids.length} configured quest(s) ${from}`);
        const ok = await connector.read(config, catalog, state, new AirbyteOutput(writer, runtime), stop.signal);
        if (signal) {
          await writer.write(
            errorTrace(
              `The sync was stopped (${signal}) before it finished. Every stream's last STATE above is kept; the next sync resumes from there.`,
              'transient_error',
              runtime.now()
            )
          );
          await finish(SIGNAL_EXIT[signal]);
          return;
        }
        if (!ok) {
          logger.error(
            'The sync finished with failed streams; see the error traces above. A config_error needs a change of the configuration first; otherwise the next sync resumes each stream from its last STATE.'
          );
        }
        await finish(ok ? 0 : 1);
      } catch (err) {
        await fail(err);
      } finally {
        stopListening();
        writer.close();
      }
    });

  addProbeCommand(withConfig, {connector, env, loadConfig, finish, fail});

  return program;
}
