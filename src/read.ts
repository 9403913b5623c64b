import {AirbyteConfiguredCatalog, AirbyteConfiguredStream, AirbyteLogger} from 'faros-airbyte-cdk';
import VError from 'verror';

import {RequestContext} from './api-error';
import {QuestbackConfig} from './config';
import {RecordEncoder} from './csv-records';
import {connectorError, errorContext, errorMessage, failureTypeOf} from './errors';
import {ExportScheduler} from './export-scheduler';
import {MessageWriter} from './output';
import {errorTrace, estimateTrace, rateLimitedReason, streamState, StreamDescriptor, streamStatus} from './protocol';
import {QuestStream} from './quest-stream';
import {Runtime} from './runtime';
import {CONNECTOR_FIELDS, questIdFromStreamName} from './schema';
import {questState} from './state';
import type {QuestbackSource} from './source';
import {describeWindow, TimeWindow} from './windows';

const PROGRESS_EVERY_BYTES = 50 * 1024 * 1024;

interface StreamPlan {
  descriptor: StreamDescriptor;
  configured: AirbyteConfiguredStream;
  stream?: QuestStream;
  windows: TimeWindow[];
  /** The cursor the stream starts from, kept when there is nothing to read. */
  startCursor: number;
  /** Why the stream cannot be read at all (e.g. not one of the configured quests). */
  planError?: Error;
}

/**
 * The read command: streams in catalog order, each through STARTED, RUNNING, COMPLETE (or
 * INCOMPLETE with an error trace), a STATE after every finished window, exports prepared ahead by
 * the scheduler. A failing stream does not stop the others. Resolves to false if any stream failed.
 */
export async function readStreams(
  source: QuestbackSource,
  config: QuestbackConfig,
  catalog: AirbyteConfiguredCatalog,
  state: Map<string, unknown>,
  writer: MessageWriter,
  logger: AirbyteLogger,
  runtime: Runtime
): Promise<boolean> {
  let current: StreamPlan | undefined;
  const onThrottle = (ctx: RequestContext | undefined, waitMs: number, resetAt: number): void => {
    if (current?.stream && ctx?.questId === current.stream.questId) {
      logger.warn(`Stream ${current.descriptor.name} is rate limited for ${(waitMs / 1000).toFixed(0)} s`);
      void writer.write(streamStatus(current.descriptor, 'RUNNING', runtime.now(), [rateLimitedReason(resetAt)]));
    }
  };
  const connection = source.connect(config, onThrottle);
  const scheduler = new ExportScheduler(connection.exports, config.max_concurrent_exports, logger);
  const end = source.syncEnd(config);

  // Plan every stream before any request: a bad state is reported before anything is read.
  const plans: StreamPlan[] = catalog.streams.map((configured) => {
    const descriptor: StreamDescriptor = {
      name: configured.stream.name,
      ...(configured.stream.namespace ? {namespace: configured.stream.namespace} : {}),
    };
    const questId = questIdFromStreamName(descriptor.name);
    if (!questId || !config.quest_ids.includes(questId)) {
      const planError = connectorError(
        'config_error',
        `Stream ${descriptor.name} is not one of this source's quests (${config.quest_ids.join(', ')}). Refresh the source schema in Airbyte, or add the quest id to quest_ids.`,
        {stream: descriptor.name}
      );
      return {descriptor, configured, windows: [], startCursor: 0, planError};
    }
    const columns = Object.keys((configured.stream.json_schema?.properties ?? {}) as object).filter(
      (c) => !CONNECTOR_FIELDS.has(c)
    );
    const stream = source.questStream(config, questId, columns, connection, scheduler);
    const streamStateIn = state.get(descriptor.name);
    const startCursor = stream.startCursor(configured.sync_mode, streamStateIn);
    const windows = stream.windows(configured.sync_mode, streamStateIn, end);
    return {descriptor, configured, stream, windows, startCursor};
  });
  for (const plan of plans) if (plan.stream) scheduler.enqueue(plan.stream.questId, plan.windows);

  let ok = true;
  for (const plan of plans) {
    current = plan;
    ok = (await readStream(plan, scheduler, writer, logger, runtime)) && ok;
  }
  current = undefined;
  return ok;
}

async function readStream(
  plan: StreamPlan,
  scheduler: ExportScheduler,
  writer: MessageWriter,
  logger: AirbyteLogger,
  runtime: Runtime
): Promise<boolean> {
  const {descriptor, stream} = plan;
  await writer.write(streamStatus(descriptor, 'STARTED', runtime.now()));
  let running = false;
  let total = 0;
  try {
    if (plan.planError || !stream) throw plan.planError;
    logger.info(`Stream ${descriptor.name}: ${plan.windows.length} window(s) to read (${plan.configured.sync_mode})`);
    const known = new Set(stream.knownColumns);
    let warnedNewColumns = false;
    for (const window of plan.windows) {
      let encoder: RecordEncoder | undefined;
      let count = 0;
      let nextProgress = PROGRESS_EVERY_BYTES;
      let downloaded = 0;
      let estimated = false;
      await stream.readWindow(window, {
        begin: (columns) => {
          encoder = new RecordEncoder(descriptor.name, columns, stream.connectorFields(window));
          const added = known.size ? columns.filter((c) => !known.has(c)) : [];
          if (added.length && !warnedNewColumns) {
            warnedNewColumns = true;
            logger.warn(
              `Stream ${descriptor.name}: the export has ${added.length} column(s) not in the configured schema (${added
                .slice(0, 5)
                .map((c) => JSON.stringify(c))
                .join(
                  ', '
                )}${added.length > 5 ? ', ...' : ''}). They are emitted; refresh the source schema in Airbyte to give them their own columns.`
            );
          }
        },
        rows: (rows) => {
          if (!running) {
            running = true;
            void writer.write(streamStatus(descriptor, 'RUNNING', runtime.now()));
          }
          const enc = encoder as RecordEncoder;
          const at = runtime.now();
          let wait: Promise<void> | undefined;
          for (const row of rows) wait = writer.writeLine(enc.encode(row, at));
          count += rows.length;
          return wait;
        },
        progress: (bytes, totalBytes) => {
          downloaded = bytes;
          if (!estimated && totalBytes !== undefined) {
            estimated = true;
            void writer.write(estimateTrace(descriptor, runtime.now(), undefined, totalBytes));
          }
          if (bytes >= nextProgress) {
            nextProgress += PROGRESS_EVERY_BYTES;
            const of = totalBytes ? ` of ${(totalBytes / 1048576).toFixed(1)}` : '';
            logger.info(
              `Stream ${descriptor.name}: downloaded ${(bytes / 1048576).toFixed(1)}${of} MB, ${count} rows so far in ${describeWindow(window)}`
            );
          }
        },
      });
      total += count;
      logger.info(
        `Stream ${descriptor.name}: window ${describeWindow(window)} done, ${count} rows, ${(downloaded / 1048576).toFixed(1)} MB downloaded`
      );
      await writer.write(streamState(descriptor, {...questState(window.until)}, count));
    }
    if (!plan.windows.length) {
      logger.info(`Stream ${descriptor.name}: nothing new to read (the cursor is at or past the sync's end)`);
      await writer.write(streamState(descriptor, {...questState(plan.startCursor)}, 0));
    }
    logger.info(`Stream ${descriptor.name}: complete, ${total} records`);
    await writer.write(streamStatus(descriptor, 'COMPLETE', runtime.now()));
    return true;
  } catch (err) {
    if (stream) scheduler.cancel(stream.questId);
    const error = err instanceof Error ? err : new Error(String(err));
    const context = errorContext(error);
    delete context.failureType;
    logger.error(`Stream ${descriptor.name} failed after ${total} records: ${errorMessage(error)}`);
    await writer.write(
      errorTrace(errorMessage(error), failureTypeOf(error), runtime.now(), {
        stream: descriptor,
        internalMessage: JSON.stringify(context),
        stackTrace: VError.fullStack(error),
      })
    );
    await writer.write(streamStatus(descriptor, 'INCOMPLETE', runtime.now()));
    return false;
  }
}
