import {AirbyteLogger} from 'faros-airbyte-cdk/lib/logger';

import {QuestbackConfig} from '../../core/config';
import {Runtime} from '../../core/runtime';
import {catalogStreams} from '../streams/catalog';
import {CatalogStream, StreamDefinition} from '../streams/stream-definition';
import {Connection} from '../../api/connection';

/** The most fields Airbyte accepts in one connection's catalog (all streams together). */
const AIRBYTE_MAX_FIELDS = 20_000;

/**
 * The discover command: the catalog of the config's streams, built from the stream definitions
 * (per_quest: a stream per quest, with the columns of a small export of each; combined: `responses`,
 * whose schema needs no export; `columns` either way).
 */
export async function discover(
  config: QuestbackConfig,
  connection: Connection,
  runtime: Runtime,
  logger: AirbyteLogger,
  syncEnd: number,
  definitions: readonly StreamDefinition[]
): Promise<{streams: CatalogStream[]}> {
  const streams = await catalogStreams(
    {
      config,
      runtime,
      logger,
      syncEnd,
      api: connection.api,
      authenticate: () => connection.authenticate(),
    },
    definitions
  );
  const widths = streams.map((s) => Object.keys(s.json_schema.properties ?? {}).length);
  const fields = widths.reduce((n, w) => n + w, 0);
  if (fields > AIRBYTE_MAX_FIELDS) {
    const widest = widths.indexOf(Math.max(...widths));
    logger.warn(
      `The catalog has ${fields} fields in ${streams.length} streams, more than the ${AIRBYTE_MAX_FIELDS} Airbyte accepts in one connection, so Airbyte will refuse to save it (the widest stream, ${streams[widest].name}, has ${widths[widest]}). Set stream_layout to combined (one responses stream, whose answers are one object whatever the number of questions) or long (one answers stream, a row per answer), or split quest_ids over several sources and connections, or deselect streams or columns until the connection has at most ${AIRBYTE_MAX_FIELDS}.`
    );
  }
  return {streams};
}
