import {Command} from 'commander';
import {AirbyteLogger} from 'faros-airbyte-cdk/lib/logger';
import {
  AirbyteCatalogMessage,
  AirbyteConfig,
  AirbyteLogLevel,
  AirbyteConfiguredCatalog,
  AirbyteConnectionStatusMessage,
  AirbyteMessage,
  AirbyteSpec,
  AirbyteState,
  AirbyteStream,
} from 'faros-airbyte-cdk/lib/protocol';
import {AirbyteSource} from 'faros-airbyte-cdk/lib/sources/source';
import fs from 'fs';

import {QuestbackConfig} from './core/config';
import {projectFile} from './core/project-file';
import {connectorSpec} from './core/spec';
import {Runtime, systemRuntime} from './core/runtime';
import {wholeSecond} from './core/time';
import {runProbe} from './probe/probe';
import {buildCommand, Connector, Host, processHost} from './protocol/cli';
import {ConnectorLogger, SecretScrubber} from './protocol/logger';
import {connectionStatus} from './protocol/messages';
import {MessageQueue} from './protocol/message-queue';
import {MessageWriter} from './protocol/output';
import {checkConnection, CheckResult} from './sync/commands/check';
import {connect, Environment} from './sync/commands/connection';
import {discover} from './sync/commands/discover';
import {SyncOutput} from './sync/output-port';
import {ConfiguredStream, readStreams} from './sync/commands/read';
import {parseStateInput} from './sync/state/stream-state';
import {STREAM_DEFINITIONS} from './sync/streams/catalog';
import {StreamDefinition} from './sync/streams/stream-definition';

/** The connector's name and version, from package.json. */
function connectorName(): string {
  const pkg = JSON.parse(fs.readFileSync(projectFile('package.json'), 'utf8')) as {name: string; version: string};
  return `${pkg.name} ${pkg.version}`;
}

/**
 * The source as the Faros kit knows it: a thin adapter between the kit's entry points and the
 * connector's parts (check, discover and the reader in src/sync, the protocol in src/protocol). It
 * offers the kit no stream classes: the streams are defined in src/sync/streams, and read by the
 * connector's reader, never record by record.
 */
export class QuestbackSource extends AirbyteSource<QuestbackConfig> {
  constructor(
    private readonly logger: AirbyteLogger,
    private readonly env: Environment
  ) {
    super();
  }

  override async spec(): Promise<AirbyteSpec> {
    return new AirbyteSpec(connectorSpec());
  }

  async runCheck(config: QuestbackConfig): Promise<CheckResult> {
    return checkConnection(config, connect(config, this.env, this.logger, 'check'), this.env.runtime, this.logger);
  }

  override async check(config: QuestbackConfig): Promise<AirbyteConnectionStatusMessage> {
    return connectionStatus(await this.runCheck(config));
  }

  /** The catalog, built from the stream definitions (src/sync/streams). */
  override async discover(config: QuestbackConfig): Promise<AirbyteCatalogMessage> {
    const connection = connect(config, this.env, this.logger, 'sync');
    const {runtime} = this.env;
    const catalog = await discover(config, connection, runtime, this.logger, this.syncEnd(config), this.definitions);
    return new AirbyteCatalogMessage({streams: catalog.streams as AirbyteStream[]});
  }

  /** Reads the configured streams into `output`; resolves to false when any stream failed. */
  runRead(
    config: QuestbackConfig,
    catalog: readonly ConfiguredStream[],
    state: ReadonlyMap<string, unknown>,
    output: SyncOutput,
    signal: AbortSignal
  ): Promise<boolean> {
    return readStreams(
      {
        config,
        runtime: this.env.runtime,
        logger: this.logger,
        connect: (onThrottle) => connect(config, this.env, this.logger, 'sync', onThrottle),
        syncEnd: this.syncEnd(config),
        signal,
        definitions: this.definitions,
      },
      catalog,
      state,
      output
    );
  }

  /**
   * The kit's read, as its runner calls it: the same reader, its messages pulled one at a time.
   * A consumer that stops early stops the read: its exports are abandoned and their slots freed.
   */
  override async *read(
    config: QuestbackConfig,
    _redactedConfig: AirbyteConfig,
    catalog: AirbyteConfiguredCatalog,
    state: AirbyteState
  ): AsyncGenerator<AirbyteMessage> {
    const stop = new AbortController();
    const queue = new MessageQueue(this.env.runtime);
    const done = this.runRead(
      config,
      catalog.streams as ConfiguredStream[],
      parseStateInput(state),
      queue,
      stop.signal
    );
    done.catch(() => undefined);
    try {
      yield* queue.drain(done);
      await done;
    } finally {
      stop.abort();
      await done.catch(() => undefined);
    }
  }

  /** The kinds of stream this source has (src/sync/streams/catalog.ts). */
  private get definitions(): readonly StreamDefinition[] {
    return this.env.definitions ?? STREAM_DEFINITIONS;
  }

  /** The newest moment a sync may ask for: a little before now, so responses being written settle. */
  syncEnd(config: QuestbackConfig): number {
    return wholeSecond(this.env.runtime.now() - config.settle_seconds * 1000);
  }
}

export interface MainOptions {
  runtime?: Runtime;
  /** Where the protocol messages go: stdout by default. */
  out?: NodeJS.WritableStream;
  /** The process the command runs in: bin/main's own by default; tests run many commands in one. */
  host?: Host;
  /** The least level logged; by default LOG_LEVEL from the environment, else info. */
  logLevel?: AirbyteLogLevel;
  /** The kinds of stream the source has: STREAM_DEFINITIONS; a test may add a kind of its own. */
  definitions?: readonly StreamDefinition[];
}

/** The connector's command line, and what bin/main says of a failure none of its commands caught. */
export type MainCommand = Command & {
  /** The stderr line (without bin/main's prefix) for a failure that escaped every command; the stack at debug level. */
  failureLine(err: unknown, debug: boolean): string;
};

/**
 * What escaped every command, for stderr: through the scrubber once the config's secrets are known.
 * Before that, nothing can mask them, and a message may quote the config (a JSON parser's does): only
 * the error's class is said, and at debug level where it happened (the stack's frames, not its message).
 */
function failureLine(err: unknown, debug: boolean, scrubber: SecretScrubber): string {
  const error = err instanceof Error ? err : undefined;
  if (scrubber.holdsSecrets) {
    const text = debug && error?.stack ? error.stack : String(error?.message ?? err).split('\n')[0];
    return scrubber.scrub(text);
  }
  const kind = error ? error.constructor.name : typeof err;
  const said = `the connector failed unexpectedly (${kind}) before its config was read; the message is not shown, as it may hold a secret.`;
  if (!debug) return `${said} Run with LOG_LEVEL=debug to see where it failed.`;
  const frames = (error?.stack ?? '').split('\n').filter((line) => /^\s+at /.test(line));
  return [said, ...frames].join('\n');
}

/** The connector's command line on stdout, with a runtime, an output and a host tests may replace. */
export function mainCommand(options: MainOptions = {}): MainCommand {
  const {runtime = systemRuntime, out = process.stdout, host = processHost, logLevel, definitions} = options;
  const scrubber = new SecretScrubber();
  const writer = new MessageWriter(out, (line) => scrubber.scrub(line));
  const logger = new ConnectorLogger(writer, logLevel);
  const onSecret = (secret: string, clientId?: string): void => scrubber.add(secret, clientId);
  const source = new QuestbackSource(logger, {runtime, onSecret, ...(definitions ? {definitions} : {})});
  const connector: Connector = {
    spec: () => source.spec(),
    check: (config) => source.runCheck(config),
    discover: (config) => source.discover(config),
    read: (config, catalog, state, output, signal) => source.runRead(config, catalog, state, output, signal),
    probe: (config, options) => runProbe(config, options, {runtime, logger, onSecret}),
  };
  const scrub = (text: string): string => scrubber.scrub(text);
  const command = buildCommand(connector, {runtime, writer, logger, onSecret, scrub, connectorName, host, out});
  return Object.assign(command, {failureLine: (err: unknown, debug: boolean) => failureLine(err, debug, scrubber)});
}
