import {AirbyteLogger} from 'faros-airbyte-cdk/lib/logger';
import {AirbyteStreamBase} from 'faros-airbyte-cdk/lib/sources/streams/stream-base';
import VError from 'verror';

import {QuestbackConfig} from '../../core/config';
import {COLUMNS_CURSOR, COLUMNS_KEY, COLUMNS_STREAM, columnsSchema} from './columns-stream';
import {RESPONSES_KEY, RESPONSES_STREAM, responsesSchema} from './responses-stream';
import {Column, CURSOR_FIELD, JsonSchema, questSchema, responseIdColumn, streamNameFor} from './record-columns';

// The streams as the kit sees them, for the catalog. The kit's stream base loads faros-js-client (about
// 0.3 s of CPU at every start), so index.ts loads this module only where a catalog is built.

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

/** The streams of a config, as the kit lists them (their quest streams without columns, which discover fills in). */
export function catalogStreams(logger: AirbyteLogger, config: QuestbackConfig): AirbyteStreamBase[] {
  return config.stream_layout === 'combined'
    ? [responsesStream(logger), columnsStream(logger)]
    : [...config.quest_ids.map((id) => new QuestStream(logger, id, [])), columnsStream(logger)];
}
