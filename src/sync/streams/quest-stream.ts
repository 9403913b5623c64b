import {AirbyteLogger} from 'faros-airbyte-cdk/lib/logger';

import {mapLimited} from '../../core/concurrency';
import {QuestbackConfig} from '../../core/config';
import {connectorError} from '../../core/errors';
import {keyedByText, quote} from '../../core/outside-text';
import {formatUtcTimestamp, TimeWindow} from '../../core/time';
import {RecordField, RecordShape, StreamRef} from '../output-port';
import {StateCodec, StreamCheckpoints} from '../state/checkpoints';
import {questState} from '../state/stream-state';
import {QuestPlan, QuestRecords} from '../windows/quest-plan';
import {probeHeader} from './header-sample';
import {questStart, readQuest} from './quest-read';
import {
  Column,
  CONNECTOR_FIELDS,
  CURSOR_FIELD,
  JsonSchema,
  objectSchema,
  QUEST_ID_FIELD,
  recordColumns,
  responseIdColumn,
  typeColumns,
  WINDOW_PROPERTIES,
  WINDOW_START_FIELD,
} from './record-columns';
import {QuestSensitivity, sensitiveHeader, sensitiveNotes, Treatment} from './sensitive-columns';
import {
  CatalogStream,
  catalogStream,
  ConfiguredStream,
  incrementalSupport,
  StreamDefinition,
  streamRef,
} from './stream-definition';
import {plural} from '../../core/quantities';

// The per_quest layout: one stream per quest, `quest_<id>`, each export column a field of its own
// (named by column_names), the connector's fields beside them, and the quest's own state.

/** A warehouse-safe table name that still shows the quest id: quest_<uuid with underscores>. */
function streamNameFor(questId: string): string {
  return `quest_${questId.toLowerCase().replace(/-/g, '_')}`;
}

export function questIdFromStreamName(name: string): string | undefined {
  const m = /^quest_([0-9a-f]{8})_([0-9a-f]{4})_([0-9a-f]{4})_([0-9a-f]{4})_([0-9a-f]{12})$/.exec(name);
  return m ? m.slice(1).join('-') : undefined;
}

/**
 * The stream's schema: every CSV column as a nullable string (the export does not say which are
 * numbers; destinations cast later) unless it is a known timestamp column, plus the connector's
 * fields. The platform keeps only the fields listed here, so a column missing from it never reaches
 * the warehouse: discover must see every column, and a schema refresh picks up new ones.
 */
export function questSchema(columns: readonly Column[], treatments: readonly Treatment[] = []): JsonSchema {
  // Keyed by column names, which survey naming takes from header texts as they are ("__proto__" too).
  const properties: JsonSchema['properties'] = keyedByText();
  columns.forEach((column, i) => {
    if (treatments[i] === 'drop') return;
    properties[column.name] = {
      type: ['null', 'string'],
      ...(column.format ? {format: column.format} : {}),
      ...(column.title !== column.name ? {title: column.title} : {}),
      ...(treatments[i] === 'hash' ? {description: HASHED_DESCRIPTION} : {}),
    };
  });
  properties[QUEST_ID_FIELD] = {type: 'string', description: 'Id of the quest (survey) the response belongs to.'};
  return objectSchema({...properties, ...WINDOW_PROPERTIES});
}

const HASHED_DESCRIPTION =
  'Sensitive column (sensitive_columns): the HMAC-SHA-256 of the value keyed by hash_salt, 64 hex digits; null for an empty cell.';

/** Every quest stream reads both ways on the window's end; its key is its quest's response id column. */
const QUEST_SUPPORT = incrementalSupport(CURSOR_FIELD);

/**
 * The quest's stream as discover lists it: its columns (from a sample export), the response id its
 * key; a dropped sensitive column is not listed, a hashed one says so.
 */
function questCatalogStream(
  questId: string,
  columns: readonly Column[],
  treatments: readonly Treatment[] = []
): CatalogStream {
  const key = responseIdColumn(columns);
  return catalogStream(
    streamNameFor(questId),
    questSchema(columns, treatments),
    QUEST_SUPPORT,
    key ? [[key]] : undefined
  );
}

/** The stream state is the quest's own. */
export const perQuestState: StateCodec = (quests) => {
  const [only] = quests.values();
  return questState(only, CURSOR_FIELD);
};

/** What the configured schema of a quest stream says: its fields (the connector's left out), their header texts, its key. */
interface ConfiguredColumns {
  names: ReadonlySet<string>;
  /** The configured primary key's field, if any: an export without it would give records without their key. */
  primaryKey?: string;
  /** Fields the configured schema types as date-time: their values are written as RFC 3339. */
  times: ReadonlySet<string>;
  /** Header text -> the configured fields it has, in the schema's order (one per occurrence): names that must not move. */
  pinned?: ReadonlyMap<string, readonly string[]>;
}

function configuredColumns(configured: ConfiguredStream): ConfiguredColumns {
  const properties = configured.stream.json_schema?.properties ?? {};
  const names = Object.keys(properties).filter((c) => !CONNECTOR_FIELDS.has(c));
  const titles = names.map((n) => (typeof properties[n]?.title === 'string' ? (properties[n].title as string) : n));
  const primaryKey = (configured.primary_key ?? configured.stream.source_defined_primary_key)?.[0]?.[0];
  const times = names.filter((n) => properties[n]?.format === 'date-time');
  const pinned = new Map<string, string[]>();
  titles.forEach((t, i) => pinned.set(t, [...(pinned.get(t) ?? []), names[i]]));
  return {
    names: new Set(names),
    times: new Set(times),
    ...(primaryKey !== undefined ? {primaryKey} : {}),
    pinned,
  };
}

/**
 * A quest's rows as records of its stream: each window's header is checked against the configured
 * schema before any row (no column known: fail; the key missing: fail; columns the schema lacks: a
 * warning, once per column), and each row becomes a field per column plus the connector's fields.
 */
export class QuestColumns implements QuestRecords {
  /** The columns of the header read last (dropped sensitive columns left out), and the names of every column seen since the sync began. */
  private columns: (Column & {index: number; hash: boolean})[] | undefined;
  private readonly seenNames = new Set<string>();
  private readonly sensitivity: QuestSensitivity;
  /** Configured columns the naming rule would now name otherwise, said once a sync. */
  private readonly told = new Set<string>();

  constructor(
    private readonly stream: StreamRef,
    private readonly questId: string,
    private readonly configured: ConfiguredColumns,
    private readonly config: QuestbackConfig,
    private readonly logger: AirbyteLogger,
    /** The sensitive_columns entries that protected a column of the quest before (QuestSensitivity). */
    sensitiveMatched: string[] = []
  ) {
    this.sensitivity = new QuestSensitivity(config, questId, logger, sensitiveMatched);
  }

  header(header: string[]): number {
    const {stream, questId} = this;
    const {names, primaryKey} = this.configured;
    const treatments = this.sensitivity.treatments(header);
    const named = this.columnsOf(header);
    this.tellMoved(header, named);
    const columns = named.flatMap((c, index) =>
      treatments[index] === 'drop' ? [] : [{...c, index, hash: treatments[index] === 'hash'}]
    );
    const missing = columns.filter((c) => !names.has(c.name));
    if (columns.length > 0 && missing.length === columns.length) {
      throw connectorError(
        'config_error',
        `Stream ${stream.name}: the configured schema lists none of the ${plural(columns.length, 'column')} of the quest's export (e.g. ${quote(columns[0].name)}), so Airbyte would drop every answer. Refresh the source schema in Airbyte (connection → Schema → Refresh source schema) and save the connection.`,
        {questId, stream: stream.name}
      );
    }
    if (primaryKey !== undefined && !columns.some((c) => c.name === primaryKey)) {
      throw connectorError(
        'config_error',
        `Stream ${stream.name}: the quest's export has no column ${quote(primaryKey)}, the stream's primary key, so its records would reach the warehouse without their key (a deduplicating destination would merge or drop them). Nothing of this window was emitted. Refresh the source schema in Airbyte to see the export's columns now, and tell Questback support (quest ${questId}) that the export lost its response id column.`,
        {questId, stream: stream.name, column: primaryKey}
      );
    }
    const unseen = missing.filter((c) => !this.seenNames.has(c.name));
    if (unseen.length) {
      const list = `${unseen
        .slice(0, 5)
        .map((c) => quote(c.name))
        .join(', ')}${unseen.length > 5 ? ', ...' : ''}`;
      this.logger.warn(
        this.columns === undefined
          ? `Stream ${stream.name}: ${unseen.length} column(s) of the export are not in the configured schema (${list}); Airbyte drops them. If they are new, refresh the source schema in Airbyte to add them; if you deselected them, nothing is wrong.`
          : `Stream ${stream.name}: ${unseen.length} column(s) appeared in the export of a later window (${list}): the survey was edited during the sync. Airbyte drops them until the source schema is refreshed (connection → Schema → Refresh source schema); the next sync after the refresh reads them.`
      );
    }
    for (const c of columns) this.seenNames.add(c.name);
    this.columns = columns;
    const key = responseIdColumn(columns);
    return columns.find((c) => c.name === key)?.index ?? -1;
  }

  names(header: readonly string[]): string[] {
    return this.columnsOf(header).map((c) => c.name);
  }

  /** The header's columns as the records name them: a configured column keeps its name (`pinned`). */
  private columnsOf(header: readonly string[]): Column[] {
    return recordColumns(header, this.config.column_names, this.configured.pinned);
  }

  /**
   * A configured column keeps its name (recordColumns' `pinned`), but when the survey gained a
   * question whose name collides with it, a schema refresh would rename it: said, with what to do.
   */
  private tellMoved(header: readonly string[], columns: readonly Column[]): void {
    const rule = recordColumns(header, this.config.column_names);
    columns.forEach((c, i) => {
      if (c.name === rule[i].name || !this.configured.pinned?.get(c.title)?.includes(c.name) || this.told.has(c.name))
        return;
      this.told.add(c.name);
      // Plain texts that differ only in letter case or separators claim one name (column-names.ts).
      const plain = (t: string) => t.toLowerCase().replace(/[ _-]/g, '');
      const rival = columns.find((o) => !this.configured.names.has(o.name) && plain(o.title) === plain(c.title));
      this.logger.warn(
        `Stream ${this.stream.name}: column ${quote(c.name)} (header ${quote(c.title)}) keeps its name and its answers, but the survey now has a question whose name collides with it${rival ? ` (${quote(rival.title)}, read as ${quote(rival.name)})` : ''}. A refresh of the source schema would rename it to ${quote(rule[i].name)}: after a refresh, its answers go to that new column and ${quote(c.name)} gets no more. Until then the new question's column is not in the configured schema and Airbyte drops it; refresh when you are ready to map ${quote(c.name)} to ${quote(rule[i].name)} in the warehouse.`
      );
    });
  }

  shape(window: TimeWindow): RecordShape {
    // A column the configured schema types as date-time is written as RFC 3339 (or null, said in meta.changes).
    const cells: RecordField[] = (this.columns ?? []).map(({name, index, hash}) =>
      hash ? {kind: 'cell', name, index, hash} : {kind: this.configured.times.has(name) ? 'time' : 'cell', name, index}
    );
    const constant = (name: string, value: string): RecordField => ({kind: 'constant', name, value});
    return {
      stream: this.stream,
      ...(this.config.hash_salt ? {hashSalt: this.config.hash_salt} : {}),
      fields: [
        ...cells,
        constant(QUEST_ID_FIELD, this.questId),
        constant(WINDOW_START_FIELD, formatUtcTimestamp(window.since)),
        constant(CURSOR_FIELD, formatUtcTimestamp(window.until)),
      ],
    };
  }
}

/** The per_quest layout's streams: one per quest, read in adaptive windows into its own state. */
export const questStreams: StreamDefinition = {
  support: QUEST_SUPPORT,
  /** A stream per quest, with the columns of the header of a small export of each (header-sample.ts). */
  async discover(ctx) {
    const {config, logger} = ctx;
    if (config.stream_layout !== 'per_quest') return [];
    return mapLimited(config.quest_ids, config.max_concurrent_exports, async (questId) => {
      const sample = await probeHeader({...ctx, end: ctx.syncEnd}, questId);
      if (!sample.header) return questCatalogStream(questId, []);
      const columns = typeColumns(recordColumns(sample.header, config.column_names), sample.rows);
      const sensitive = sensitiveHeader(sample.header, config, questId);
      for (const note of sensitiveNotes(sample.header, config, questId, sensitive)) {
        if (note.warn) logger.warn(note.text);
        else logger.info(note.text);
      }
      const renamed = columns.filter((c) => c.name !== c.title).length;
      if (renamed && config.column_names === 'warehouse') {
        logger.info(
          `Quest ${questId}: ${renamed} of ${plural(columns.length, 'column')} renamed to warehouse-safe names; the header texts are kept as titles and in the columns stream`
        );
      }
      return questCatalogStream(questId, columns, sensitive.treatments);
    });
  },

  plan(ctx, configured, state, out) {
    const ref = streamRef(configured);
    const questId = questIdFromStreamName(ref.name);
    if (!questId || ctx.config.stream_layout !== 'per_quest') return undefined;
    const incremental = configured.sync_mode === 'incremental';
    const {from, progress, saltChanged, sensitiveMatched} = questStart(ctx, `Stream ${ref.name}`, state, incremental);
    const records = new QuestColumns(
      ref,
      questId,
      configuredColumns(configured),
      ctx.config,
      ctx.logger,
      sensitiveMatched
    );
    const plan: QuestPlan = {
      questId,
      stream: ref,
      records,
      from,
      end: ctx.syncEnd,
      ...(progress.density ? {density: progress.density} : {}),
    };
    const stream = new StreamCheckpoints(out, ref, perQuestState);
    const checkpoints = stream.quest(questId, progress);
    return {
      ref,
      questIds: [questId],
      readsResponses: true,
      heartbeat: stream,
      saltChanged,
      read: (env) => readQuest(env, plan, checkpoints),
    };
  },
};
