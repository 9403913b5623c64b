import {Command} from 'commander';
import {
  AirbyteCatalogMessage,
  AirbyteConfig,
  AirbyteConfiguredCatalog,
  AirbyteLogger,
  AirbyteMessage,
  AirbyteSourceBase,
  AirbyteSpec,
  AirbyteState,
  AirbyteStreamBase,
} from 'faros-airbyte-cdk';
import fs from 'fs';
import path from 'path';
import VError from 'verror';

import {QuestbackConfig} from './core/config';
import {Runtime, systemRuntime} from './core/runtime';
import {buildCommand, Connector} from './protocol/cli';
import {ConnectorLogger, SecretScrubber} from './protocol/logger';
import {MessageQueue} from './protocol/message-queue';
import {MessageWriter} from './protocol/output';
import {checkConnection, CheckResult} from './sync/check';
import {COLUMNS_CURSOR, COLUMNS_KEY, COLUMNS_STREAM, columnsSchema} from './sync/columns-stream';
import {RESPONSES_KEY, RESPONSES_STREAM, responsesSchema} from './sync/responses-stream';
import {connect, Environment} from './sync/connection';
import {discoverQuests} from './sync/discover';
import {SyncOutput} from './sync/output-port';
import {ConfiguredStream, readStreams} from './sync/reader';
import {Column, CURSOR_FIELD, JsonSchema, questSchema, responseIdColumn, streamNameFor} from './sync/schema';
import {parseStateInput} from './sync/state';

/** The spec file, from the compiled lib/src as from the sources (tests). */
function specFile(): string {
  const candidates = [
    path.resolve(__dirname, '..', 'resources', 'spec.json'),
    path.resolve(__dirname, '..', '..', 'resources', 'spec.json'),
  ];
  const found = candidates.find((file) => fs.existsSync(file));
  if (!found) throw new VError('resources/spec.json not found beside %s', __dirname);
  return found;
}

/**
 * A quest as the kit sees a stream: its name, schema, cursor and primary key, for the catalog.
 * Its records are not read through the kit's per-record interface: reads run through the
 * connector's reader (QuestbackSource.read), which exports each quest in adaptive windows.
 */
export class QuestStream extends AirbyteStreamBase {
  constructor(
    logger: AirbyteLogger,
    readonly questId: string,
    readonly columns: readonly Column[]
  ) {
    super(logger);
  }

  override get name(): string {
    return streamNameFor(this.questId);
  }

  get primaryKey(): string | undefined {
    return responseIdColumn(this.columns);
  }

  override get cursorField(): string[] {
    return [CURSOR_FIELD];
  }

  getJsonSchema(): JsonSchema {
    return questSchema(this.columns);
  }

  // eslint-disable-next-line require-yield
  async *readRecords(): AsyncGenerator<Record<string, unknown>> {
    throw new VError(
      'Stream %s is not read record by record: reads run through QuestbackSource.read (the connector reader), which exports each quest in windows sized to its data.',
      this.name
    );
  }
}

/** A stream whose schema does not depend on any export, as the kit sees it (read by the connector's reader). */
class StaticStream extends AirbyteStreamBase {
  constructor(
    logger: AirbyteLogger,
    private readonly definition: {name: string; primaryKey: string[][]; cursor: string; schema: () => JsonSchema}
  ) {
    super(logger);
  }

  override get name(): string {
    return this.definition.name;
  }

  get primaryKey(): string[][] {
    return this.definition.primaryKey;
  }

  override get cursorField(): string[] {
    return [this.definition.cursor];
  }

  getJsonSchema(): JsonSchema {
    return this.definition.schema();
  }

  // eslint-disable-next-line require-yield
  async *readRecords(): AsyncGenerator<Record<string, unknown>> {
    throw new VError('Stream %s is read through QuestbackSource.read (the connector reader).', this.name);
  }
}

/** The map from every quest's columns to their header texts. */
export function columnsStream(logger: AirbyteLogger): AirbyteStreamBase {
  return new StaticStream(logger, {
    name: COLUMNS_STREAM,
    primaryKey: COLUMNS_KEY,
    cursor: COLUMNS_CURSOR,
    schema: columnsSchema,
  });
}

/** Every quest's responses in one stream (stream_layout "combined"). */
export function responsesStream(logger: AirbyteLogger): AirbyteStreamBase {
  return new StaticStream(logger, {
    name: RESPONSES_STREAM,
    primaryKey: RESPONSES_KEY,
    cursor: CURSOR_FIELD,
    schema: responsesSchema,
  });
}

/**
 * The source as the Faros kit knows it: a thin adapter between the kit's entry points and the
 * connector's parts (check, discover and the reader in src/sync, the protocol in src/protocol).
 */
export class QuestbackSource extends AirbyteSourceBase<QuestbackConfig> {
  constructor(
    logger: AirbyteLogger,
    private readonly env: Environment
  ) {
    super(logger);
  }

  get type(): string {
    return 'questback';
  }

  override async spec(): Promise<AirbyteSpec> {
    return new AirbyteSpec(JSON.parse(fs.readFileSync(specFile(), 'utf8')));
  }

  async runCheck(config: QuestbackConfig): Promise<CheckResult> {
    return checkConnection(config, connect(config, this.env, this.logger, 'check'), this.env.runtime, this.logger);
  }

  async checkConnection(config: QuestbackConfig): Promise<[boolean, VError | undefined]> {
    const result = await this.runCheck(config);
    return result.ok ? [true, undefined] : [false, new VError('%s', result.message)];
  }

  streams(config: QuestbackConfig): AirbyteStreamBase[] {
    return config.stream_layout === 'combined'
      ? [responsesStream(this.logger), columnsStream(this.logger)]
      : [...config.quest_ids.map((id) => new QuestStream(this.logger, id, [])), columnsStream(this.logger)];
  }

  /**
   * per_quest: one stream per quest, with the columns of a small export of each, and the columns
   * stream. combined: the responses and columns streams, whose schemas need no export; a token proves
   * the credentials.
   */
  override async discover(config: QuestbackConfig): Promise<AirbyteCatalogMessage> {
    if (config.stream_layout === 'combined') {
      await connect(config, this.env, this.logger, 'sync').authenticate();
      return new AirbyteCatalogMessage({streams: this.streams(config).map((s) => s.asAirbyteStream())});
    }
    const quests = await discoverQuests({
      config,
      connection: connect(config, this.env, this.logger, 'sync'),
      runtime: this.env.runtime,
      logger: this.logger,
      end: this.syncEnd(config),
    });
    return new AirbyteCatalogMessage({
      streams: [
        ...quests.map((q) => new QuestStream(this.logger, q.questId, q.columns).asAirbyteStream()),
        columnsStream(this.logger).asAirbyteStream(),
      ],
    });
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

  /** The newest moment a sync may ask for: a little before now, so responses being written settle. */
  syncEnd(config: QuestbackConfig): number {
    return this.env.runtime.now() - config.settle_seconds * 1000;
  }
}

/** The connector's command line on stdout, with a runtime and an output tests may replace. */
export function mainCommand(runtime: Runtime = systemRuntime, out: NodeJS.WritableStream = process.stdout): Command {
  const scrubber = new SecretScrubber();
  const writer = new MessageWriter(out, (line) => scrubber.scrub(line));
  const logger = new ConnectorLogger(writer);
  const onSecret = (secret: string, clientId?: string): void => scrubber.add(secret, clientId);
  const source = new QuestbackSource(logger, {runtime, onSecret});
  const connector: Connector = {
    spec: () => source.spec(),
    check: (config) => source.runCheck(config),
    discover: (config) => source.discover(config),
    read: (config, catalog, state, output, signal) => source.runRead(config, catalog, state, output, signal),
  };
  return buildCommand(connector, {runtime, writer, logger, onSecret});
}
