import {AirbyteLogger} from 'faros-airbyte-cdk/lib/logger';

import {mapLimited} from '../../core/concurrency';
import {QuestbackConfig} from '../../core/config';
import {Runtime} from '../../core/runtime';
import {Connection} from './connection';
import {probeHeader} from '../streams/header-sample';
import {Column, recordColumns, typeColumns} from '../streams/record-columns';

export interface DiscoveredQuest {
  questId: string;
  columns: Column[];
}

export interface DiscoverContext {
  config: QuestbackConfig;
  connection: Connection;
  runtime: Runtime;
  logger: AirbyteLogger;
  end: number;
}

/** The columns of every configured quest, learned from the header of a small export of each (header-probe.ts). */
export async function discoverQuests(ctx: DiscoverContext): Promise<DiscoveredQuest[]> {
  const {config, logger} = ctx;
  return mapLimited(config.quest_ids, config.max_concurrent_exports, async (questId) => {
    const sample = await probeHeader(ctx, questId);
    if (!sample.header) return {questId, columns: []};
    const columns = typeColumns(recordColumns(sample.header, config.column_names), sample.rows);
    const renamed = columns.filter((c) => c.name !== c.title).length;
    if (renamed && config.column_names === 'warehouse') {
      logger.info(
        `Quest ${questId}: ${renamed} of ${columns.length} columns renamed to warehouse-safe names; the header texts are kept as titles and in the columns stream`
      );
    }
    return {questId, columns};
  });
}
