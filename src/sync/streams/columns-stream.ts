import {createHash} from 'crypto';

import {mapLimited} from '../../core/concurrency';
import {QuestbackConfig} from '../../core/config';
import {keyedByText} from '../../core/outside-text';
import {formatUtcTimestamp, parseUtcTimestamp} from '../../core/time';
import {probeHeader} from './header-sample';
import {StreamRef} from '../output-port';
import {Priority} from '../exports/export-slots';
import {objectSchema, stringProperty, questionParts, recordColumns} from './record-columns';
import {answerKeys} from './quests-stream';
import {sensitiveHeader} from './sensitive-columns';
import {cursorOf, futureCursorWarning} from '../state/stream-state';
import {
  catalogStream,
  incrementalSupport,
  NamedHeader,
  ReadEnv,
  StreamDefinition,
  streamRef,
} from './stream-definition';

/** The stream that maps every column of every quest to the header text it came from. */
export const COLUMNS_STREAM = 'columns';
const COLUMNS_CURSOR = 'seen_at';
const COLUMNS_SUPPORT = incrementalSupport(COLUMNS_CURSOR, [['quest_id'], ['column']]);

/** One column of one quest's export. */
interface ColumnRecord {
  quest_id: string;
  /** The field name of the column in the quest's records. */
  column: string;
  /** The header text exactly as exported. */
  header: string;
  /** 1-based position in the export. */
  position: number;
  /** For an expanded multiple-choice column ("Question: Option"), the question; else the header. */
  question: string;
  option: string | null;
  first_seen_at: string;
  seen_at: string;
  /** What sensitive_columns does to it: hashed, dropped, or nothing (null). */
  sensitive: 'hashed' | 'dropped' | null;
}

/** The stream as discover lists it: the same schema for every quest; its cursor is the sync's time. */
function columnsCatalogStream() {
  return catalogStream(
    COLUMNS_STREAM,
    objectSchema({
      quest_id: stringProperty('Id of the quest (survey).'),
      column: stringProperty("The column's field name in the quest's records (the warehouse column)."),
      header: stringProperty("The column's header text exactly as the export has it: the question (and option)."),
      position: {type: 'integer', description: 'Position of the column in the export, from 1.'},
      question: stringProperty(
        'The question: the header without the option part of an expanded multiple-choice column.'
      ),
      option: {
        type: ['null', 'string'],
        description: 'The option of an expanded multiple-choice column ("Question: Option" headers), else null.',
      },
      first_seen_at: {
        type: 'string',
        format: 'date-time',
        description: 'When this connection first saw the column in the export.',
      },
      seen_at: {type: 'string', format: 'date-time', description: 'When this sync saw the column; the cursor.'},
      sensitive: {
        type: ['null', 'string'],
        description:
          'What sensitive_columns does to the column\'s values: "hashed" (HMAC-SHA-256 under hash_salt), "dropped" (in no record), else null.',
      },
    }),
    COLUMNS_SUPPORT
  );
}

/** What the stream's state remembers of a column between syncs: when it was first seen, and a digest of its header. */
type Seen = [firstSeen: string, digest: string];
/** quest id -> column -> what was seen; keyed by outside text (the state's keys, header texts): keyedByText. */
type SeenColumns = Record<string, Record<string, Seen>>;

function digest(text: string): string {
  return createHash('sha256').update(text).digest('base64url').slice(0, 8);
}

function seenOf(state: unknown): SeenColumns {
  const raw = (state as {columns?: unknown} | undefined)?.columns;
  const out: SeenColumns = keyedByText();
  if (!raw || typeof raw !== 'object') return out;
  for (const [quest, columns] of Object.entries(raw as Record<string, unknown>)) {
    if (!columns || typeof columns !== 'object') continue;
    for (const [column, seen] of Object.entries(columns as Record<string, unknown>)) {
      const [at, hash] = Array.isArray(seen) ? seen : [];
      if (typeof at === 'string' && parseUtcTimestamp(at) !== undefined && typeof hash === 'string') {
        (out[quest] ??= keyedByText())[column] = [at, hash];
      }
    }
  }
  return out;
}

/**
 * The names the layout's rule gives a header no stream of this read exported (a sampled quest): a
 * field of its own, or a key of the answers object. A header a read met is named as its records named it.
 */
function namesByRule(config: QuestbackConfig, header: readonly string[]): string[] {
  return config.stream_layout === 'combined'
    ? answerKeys(header)
    : recordColumns(header, config.column_names).map((c) => c.name);
}

/** The records of one quest's columns, each under the name the quest's records give it, first seen as the state remembers. */
function columnRecords(
  config: QuestbackConfig,
  questId: string,
  {header, names}: NamedHeader,
  seen: SeenColumns,
  seenAt: string
): ColumnRecord[] {
  const parts = questionParts(header);
  const {treatments} = sensitiveHeader(header, config, questId);
  const known = (seen[questId] ??= keyedByText());
  return header.map((text, i) => {
    // A column whose header text changed under the same name (survey naming) is a new column.
    const before = known[names[i]];
    const firstSeen = before && before[1] === digest(text) ? before[0] : seenAt;
    known[names[i]] = [firstSeen, digest(text)];
    return {
      quest_id: questId,
      column: names[i],
      header: text,
      position: i + 1,
      question: parts[i].question,
      option: parts[i].option,
      first_seen_at: firstSeen,
      seen_at: seenAt,
      sensitive: treatments[i] === 'hash' ? 'hashed' : treatments[i] === 'drop' ? 'dropped' : null,
    };
  });
}

/**
 * The `columns` stream: one record per configured quest and export column, in every sync (its
 * cursor is the sync's time; one after it is moved back, and nothing listed in that sync). A quest whose records this
 * read also exports gives every header its read meets (no export of its own; a question added
 * while the sync ran is listed too); any other quest's header comes from a small sample export, as
 * discover takes it. A quest whose export has no header (no
 * responses in what was read) gives no record in this sync: the columns earlier syncs reported stay.
 */
export const columnsStream: StreamDefinition = {
  support: COLUMNS_SUPPORT,
  async discover() {
    return [columnsCatalogStream()];
  },

  plan(ctx, configured, state, out) {
    const ref: StreamRef = streamRef(configured);
    if (ref.name !== COLUMNS_STREAM) return undefined;
    const {config, runtime, logger} = ctx;
    const incremental = configured.sync_mode === 'incremental';
    const seen = incremental ? seenOf(state) : keyedByText<Record<string, Seen>>();
    const cursor = incremental ? cursorOf(state, `Stream ${ref.name}`) : undefined;
    return {
      ref,
      questIds: config.quest_ids,
      readsResponses: false,
      read: async (env: ReadEnv, skipped) => {
        const now = runtime.now();
        if (cursor !== undefined && cursor > now) {
          logger.warn(
            futureCursorWarning(
              `Stream ${ref.name}`,
              cursor,
              now,
              'This sync lists no columns and moves the cursor back to its own time; the next sync lists them.'
            )
          );
          await out.state(ref, {cursor: formatUtcTimestamp(now), cursor_field: [COLUMNS_CURSOR], columns: seen}, 0);
          return 0;
        }
        const seenAt = formatUtcTimestamp(now);
        let count = 0;
        await mapLimited(config.quest_ids, config.max_concurrent_exports, async (questId) => {
          const headers: NamedHeader[] = env.questsRead.has(questId)
            ? await env.headers.headers(questId)
            : [await probeWithSlot(env, questId, skipped)]
                .filter((h): h is string[] => h !== undefined)
                .map((header) => ({header, names: namesByRule(config, header)}));
          if (!headers.length) return;
          // Every column of every header met (a question added while the sync ran); its last position.
          const byColumn = new Map<string, ColumnRecord>();
          for (const header of headers) {
            for (const record of columnRecords(config, questId, header, seen, seenAt))
              byColumn.set(record.column, record);
          }
          const records = [...byColumn.values()];
          count += records.length;
          await out.records(ref, records);
        });
        await out.state(ref, {cursor: seenAt, cursor_field: [COLUMNS_CURSOR], columns: seen}, count);
        return count;
      },
    };
  },
};

/** A header probe of a quest no other stream of this read exports, holding an export slot while it runs. */
async function probeWithSlot(
  env: ReadEnv,
  questId: string,
  skipped: (questId: string, why: string) => void
): Promise<string[] | undefined> {
  const slot = await env.slots.acquire(Priority.Needed, env.stop);
  try {
    const sample = await probeHeader(
      {
        config: env.ctx.config,
        api: env.api,
        runtime: env.ctx.runtime,
        logger: env.ctx.logger,
        end: env.ctx.syncEnd,
        signal: env.stop,
        onInaccessible: (why) => skipped(questId, why),
      },
      questId
    );
    return sample.header;
  } finally {
    slot.release();
  }
}
