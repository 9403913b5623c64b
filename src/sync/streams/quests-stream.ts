import {AirbyteLogger} from 'faros-airbyte-cdk/lib/logger';

import {findQuestInaccessible} from '../../api/api-error';
import {QuestbackConfig} from '../../core/config';
import {connectorError, errorMessage, failureTypeOf, isAuthFailure} from '../../core/errors';
import {quote} from '../../core/outside-text';
import {formatUtcTimestamp, TimeWindow} from '../../core/time';
import {isCreatedHeader, isResponseIdHeader} from '../../csv/header';
import {RecordField, RecordShape, StreamRef, SyncOutput} from '../output-port';
import {StateCodec, StreamCheckpoints} from '../state/checkpoints';
import {invalidState, questState} from '../state/stream-state';
import {QuestPlan, QuestRecords} from '../windows/quest-plan';
import {questStart, readQuest} from './quest-read';
import {CURSOR_FIELD, WINDOW_START_FIELD} from './record-columns';
import {QuestSensitivity, Treatment} from './sensitive-columns';
import {
  catalogStream,
  ConfiguredStream,
  PlanContext,
  StreamDefinition,
  StreamRead,
  streamRef,
  StreamSupport,
} from './stream-definition';

// What every stream of all quests shares (the combined layout's `responses`, the long layout's
// `answers`; `columns` names a combined column by answerKeys): a quest's rows as records keyed by
// quest and Response ID, the progress of every quest in one state (a map of quests), and the read
// of every configured quest into one stream.

/**
 * The keys of the answers object: each header text exactly as exported. A text repeated byte for
 * byte in one export gets " (2)", " (3)" … by occurrence (and a further number should that key be
 * taken by another header), so that no cell is lost to a duplicate key.
 */
export function answerKeys(header: readonly string[]): string[] {
  const taken = new Set(header);
  const seen = new Set<string>();
  return header.map((text) => {
    if (!seen.has(text)) {
      seen.add(text);
      return text;
    }
    let n = 2;
    while (taken.has(`${text} (${n})`) || seen.has(`${text} (${n})`)) n++;
    const key = `${text} (${n})`;
    seen.add(key);
    return key;
  });
}

/**
 * The stream state maps each quest to its own state. Quests the state knows but this read does not
 * (removed from quest_ids) keep their entry.
 */
export function combinedState(previous: Readonly<Record<string, unknown>>): StateCodec {
  return (quests) => {
    const states: Record<string, unknown> = {...previous};
    for (const [questId, progress] of quests) states[questId] = questState(progress, CURSOR_FIELD);
    return {quests: states};
  };
}

/** The quests' states in the stream's state (quest id -> its state). */
export function questStatesOf(streamState: unknown, stream: string): Record<string, unknown> {
  if (streamState === undefined || streamState === null) return {};
  const quests = (streamState as {quests?: unknown}).quests;
  if (typeof streamState !== 'object' || !quests || typeof quests !== 'object' || Array.isArray(quests)) {
    invalidState(`the state of stream ${stream} has no 'quests' map (got ${quote(streamState)}).`);
  }
  return quests as Record<string, unknown>;
}

/**
 * A quest's rows as records of a stream of every quest (`responses`, `answers`): each record has the
 * quest id, the response id and the creation time, then the answers in the form
 * of the layout (`cells`, `answerField`).
 */
export abstract class QuestResponseRecords<Cell> implements QuestRecords {
  private answers: {cells: Cell[]; idIndex: number; createdIndex: number} | undefined;
  private readonly sensitivity: QuestSensitivity;

  constructor(
    private readonly stream: StreamRef,
    private readonly questId: string,
    protected readonly config: QuestbackConfig,
    logger: AirbyteLogger,
    /** The sensitive_columns entries that protected a column of the quest before (QuestSensitivity). */
    sensitiveMatched: string[] = []
  ) {
    this.sensitivity = new QuestSensitivity(config, questId, logger, sensitiveMatched);
  }

  /** The answer cells of the header (a dropped sensitive column gives none). */
  protected abstract cells(header: string[], treatments: Treatment[], idIndex: number, createdIndex: number): Cell[];

  /** The names of the header's columns in the records (QuestRecords). */
  abstract names(header: readonly string[]): string[];

  /** The field that writes the answers. */
  protected abstract answerField(cells: Cell[]): RecordField;

  header(header: string[]): number {
    // Every header has a Response ID column (file-reader.ts assertHeader): the key of a stream of all quests.
    const idIndex = header.findIndex(isResponseIdHeader);
    const createdIndex = header.findIndex(isCreatedHeader);
    const cells = this.cells(header, this.sensitivity.treatments(header), idIndex, createdIndex);
    this.answers = {cells, idIndex, createdIndex};
    return idIndex;
  }

  shape(window: TimeWindow): RecordShape {
    const {cells, idIndex, createdIndex} = this.answers ?? {cells: [], idIndex: 0, createdIndex: -1};
    return {
      stream: this.stream,
      ...(this.config.hash_salt ? {hashSalt: this.config.hash_salt} : {}),
      fields: [
        {kind: 'constant', name: 'quest_id', value: this.questId},
        {kind: 'text', name: 'response_id', index: idIndex},
        createdIndex < 0
          ? {kind: 'constant', name: 'created', value: null}
          : {kind: 'time', name: 'created', index: createdIndex},
        this.answerField(cells),
        {kind: 'constant', name: WINDOW_START_FIELD, value: formatUtcTimestamp(window.since)},
        {kind: 'constant', name: CURSOR_FIELD, value: formatUtcTimestamp(window.until)},
      ],
    };
  }
}

/**
 * The definition of a stream of every quest, offered under `layout`: no export at discover (the
 * schema is the same for every quest, and a token proves the credentials), each quest's rows
 * written as the records `Records` makes (a QuestResponseRecords of the layout).
 */
export function questsStream(
  layout: QuestbackConfig['stream_layout'],
  name: string,
  support: StreamSupport,
  catalogStreamOf: (config: QuestbackConfig) => ReturnType<typeof catalogStream>,
  Records: new (
    ref: StreamRef,
    questId: string,
    config: QuestbackConfig,
    logger: AirbyteLogger,
    sensitiveMatched: string[]
  ) => QuestRecords
): StreamDefinition {
  return {
    support,
    async discover(ctx) {
      if (ctx.config.stream_layout !== layout) return [];
      await ctx.authenticate();
      return [catalogStreamOf(ctx.config)];
    },

    plan(ctx, configured, state, out) {
      const ref = streamRef(configured);
      if (ref.name !== name || ctx.config.stream_layout !== layout) return undefined;
      return planQuestsStream(
        ctx,
        configured,
        state,
        out,
        (questId, sensitiveMatched) => new Records(ref, questId, ctx.config, ctx.logger, sensitiveMatched)
      );
    },
  };
}

/**
 * The read of a stream of every configured quest (the combined and long layouts): each quest read by
 * the same machinery as a quest stream (adaptive windows, slots, export policy, resume), its rows
 * written as the records `records` makes, its progress kept in the one stream state (a map of quests).
 * A quest added to quest_ids later starts from start_date alone; one removed keeps its entry, and
 * the others' cursors are untouched. Windows of the stream are read one at a time (StreamCheckpoints),
 * so that a STATE commits no half-read window. A quest that fails does not stop the others: the
 * stream ends INCOMPLETE naming it, and the next sync resumes it from its cursor.
 */
function planQuestsStream(
  ctx: PlanContext,
  configured: ConfiguredStream,
  state: unknown,
  out: SyncOutput,
  recordsOf: (questId: string, sensitiveMatched: string[]) => QuestRecords
): StreamRead {
  const ref = streamRef(configured);
  const {config, logger} = ctx;
  const incremental = configured.sync_mode === 'incremental';
  const previous = incremental ? questStatesOf(state, ref.name) : {};
  const stream = new StreamCheckpoints(out, ref, combinedState(previous));
  let saltChanged = false;
  const quests = config.quest_ids.map((questId) => {
    const start = questStart(ctx, `Quest ${questId}`, previous[questId], incremental);
    const {from, progress, saltChanged: changed} = start;
    saltChanged ||= changed;
    if (incremental && previous[questId] === undefined && Object.keys(previous).length > 0) {
      logger.info(`Quest ${questId} is new to this connection: it is read from start_date ${config.start_date}.`);
    }
    const plan: QuestPlan = {
      questId,
      stream: ref,
      records: recordsOf(questId, start.sensitiveMatched),
      from,
      end: ctx.syncEnd,
      ...(progress.density ? {density: progress.density} : {}),
    };
    return {plan, checkpoints: stream.quest(questId, progress)};
  });
  return {
    ref,
    questIds: config.quest_ids,
    readsResponses: true,
    heartbeat: stream,
    saltChanged,
    read: async (env, skipped) => {
      const results = await Promise.allSettled(quests.map((q) => readQuest(env, q.plan, q.checkpoints)));
      const failed: string[] = [];
      let first: unknown;
      let records = 0;
      results.forEach((result, i) => {
        const {questId} = quests[i].plan;
        if (result.status === 'fulfilled') records += result.value;
        else if (isAuthFailure(result.reason) || env.stop.aborted) throw result.reason;
        else if (config.skip_inaccessible_quests && findQuestInaccessible(result.reason)) {
          skipped(questId, errorMessage(result.reason));
        } else {
          logger.error(`Stream ${ref.name}: quest ${questId} failed: ${errorMessage(result.reason)}`);
          failed.push(`${questId}: ${errorMessage(result.reason)}`);
          first ??= result.reason;
        }
      });
      if (failed.length) {
        throw connectorError(
          failureTypeOf(first),
          `Stream ${ref.name}: ${failed.length} of ${quests.length} quest(s) failed (${failed.slice(0, 3).join('; ')}${failed.length > 3 ? '; ...' : ''}). The others were read; the next sync resumes the failed ones from their last checkpoint.`,
          {stream: ref.name, failed: failed.length},
          first instanceof Error ? first : undefined
        );
      }
      // A STATE even when no quest had anything to read, so the stream's state always exists.
      await stream.commit();
      return records;
    },
  };
}
