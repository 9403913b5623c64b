import {AirbyteLogger} from 'faros-airbyte-cdk/lib/logger';

import {QuestbackConfig} from '../../core/config';
import {Runtime} from '../../core/runtime';
import {catalogStreams} from '../streams/catalog';
import {CatalogStream} from '../streams/stream-definition';
import {Connection} from '../../api/connection';

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
  syncEnd: number
): Promise<{streams: CatalogStream[]}> {
  const streams = await catalogStreams({
    config,
    runtime,
    logger,
    syncEnd,
    api: connection.api,
    authenticate: () => connection.authenticate(),
  });
  return {streams};
}
