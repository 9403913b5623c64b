import {findQuestInaccessible} from '../../api/api-error';
import {connectorError, errorMessage, failureTypeOf, isAuthFailure} from '../../core/errors';
import {StreamCheckpoints} from '../state/checkpoints';
import {QuestPlan} from '../windows/quest-sync';
import {questStart, readQuest} from './quest-stream';
import {ANSWERS_FIELD, CURSOR_FIELD, JsonSchema, WINDOW_START_FIELD} from './record-columns';
import {combinedState, questStatesOf} from '../state/stream-state';
import {StreamDefinition, streamRef} from './stream-definition';

/** The combined layout's one stream: every quest's responses, their answers in one object. */
export const RESPONSES_STREAM = 'responses';
export const RESPONSES_KEY = [['quest_id'], ['response_id']];
export function responsesSchema(): JsonSchema {
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    additionalProperties: true,
    properties: {
      quest_id: {type: 'string', description: 'Id of the quest (survey) the response belongs to.'},
      response_id: {type: 'string', description: "The response's id (the export's Response ID column)."},
      created: {
        type: ['null', 'string'],
        format: 'date-time',
        description: "When the response was created (the export's Created column).",
      },
      [ANSWERS_FIELD]: {
        type: 'object',
        description:
          'Every column of the export, keyed by its header text exactly as exported (a repeated header text gets " (2)", " (3)" … by occurrence); values are strings, or null for an empty cell.',
        additionalProperties: {type: ['null', 'string']},
      },
      [WINDOW_START_FIELD]: {
        type: 'string',
        format: 'date-time',
        description: 'Start (exclusive) of the export time window the row came from.',
      },
      [CURSOR_FIELD]: {
        type: 'string',
        format: 'date-time',
        description: 'End (inclusive) of the export time window the row came from; the incremental cursor.',
      },
    },
  };
}

/**
 * The `responses` stream (stream_layout "combined"): every configured quest read by the same
 * machinery as a quest stream (adaptive windows, slots, export policy, resume), its rows written as
 * answers records into this one stream, its progress kept in the one stream state (a map of quests).
 * A quest added to quest_ids later starts from start_date alone; one removed keeps its entry, and
 * the others' cursors are untouched. Windows of the stream are read one at a time (StreamCheckpoints),
 * so that a STATE commits no half-read window. A quest that fails does not stop the others: the
 * stream ends INCOMPLETE naming it, and the next sync resumes it from its cursor.
 */
export const responsesStream: StreamDefinition = {
  plan(ctx, configured, state, out) {
    const ref = streamRef(configured);
    const {config, logger} = ctx;
    if (ref.name !== RESPONSES_STREAM || config.stream_layout !== 'combined') return undefined;
    const incremental = configured.sync_mode === 'incremental';
    const previous = incremental ? questStatesOf(state, ref.name) : {};
    const stream = new StreamCheckpoints(out, ref, combinedState(previous));
    const quests = config.quest_ids.map((questId) => {
      const {from, progress} = questStart(ctx, `Quest ${questId}`, previous[questId], incremental);
      if (incremental && previous[questId] === undefined && Object.keys(previous).length > 0) {
        logger.info(`Quest ${questId} is new to this connection: it is read from start_date ${config.start_date}.`);
      }
      const plan: QuestPlan = {
        questId,
        stream: ref,
        shape: 'answers',
        configuredNames: new Set(),
        configuredTitles: new Set(),
        from,
        end: ctx.syncEnd,
        ...(progress.density ? {density: progress.density} : {}),
      };
      return {plan, checkpoints: stream.quest(questId, progress)};
    });
    return {
      ref,
      questIds: config.quest_ids,
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
  },
};
