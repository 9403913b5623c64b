import {AirbyteLogger} from 'faros-airbyte-cdk/lib/logger';

import {ExportApi, ListApi} from '../../api/client';
import {QuestbackConfig} from '../../core/config';
import {connectorError} from '../../core/errors';
import {Runtime} from '../../core/runtime';
import {ExportSlots} from '../exports/export-slots';
import {StreamRef, SyncOutput} from '../output-port';
import {HeartbeatStream} from '../state/heartbeat';
import {JsonSchema} from './record-columns';

/** A stream of the configured catalog, as far as the reader needs it. */
export interface ConfiguredStream {
  stream: {
    name: string;
    namespace?: string | null;
    json_schema?: {properties?: Record<string, {title?: unknown; format?: unknown}>};
    source_defined_primary_key?: string[][];
  };
  sync_mode: string;
  primary_key?: string[][];
}

/** A stream as discover lists it (Airbyte's AirbyteStream). */
export interface CatalogStream {
  name: string;
  json_schema: JsonSchema;
  supported_sync_modes: string[];
  source_defined_cursor: boolean;
  default_cursor_field?: string[];
  source_defined_primary_key?: string[][];
  is_resumable: boolean;
}

type SyncMode = 'full_refresh' | 'incremental';

/**
 * What a kind of stream supports, as discover lists it and the read holds a configured catalog to:
 * its sync modes, its cursor (a stream that reads incrementally has one, which it defines itself),
 * its primary key and whether it resumes from its STATE.
 */
export type StreamSupport = {
  /** Its primary key, unless each stream of the kind finds its own (a quest's response id column). */
  primaryKey?: string[][];
  /**
   * It resumes from its STATE: the platform keeps a full refresh's state between the attempts of a
   * sync (is_resumable), so a stream that checkpoints picks up where the failed attempt stopped.
   */
  resumable: boolean;
} & ({syncModes: readonly ['full_refresh']; cursor?: undefined} | {syncModes: readonly SyncMode[]; cursor: string});

/** The support of a stream that reads both ways on its own cursor and resumes from its STATE. */
export function incrementalSupport(cursor: string, primaryKey?: string[][]): StreamSupport {
  return {syncModes: ['full_refresh', 'incremental'], cursor, resumable: true, ...(primaryKey ? {primaryKey} : {})};
}

/** A stream's catalog entry: its name and schema, and what its kind supports (its key, unless its own). */
export function catalogStream(
  name: string,
  schema: JsonSchema,
  support: StreamSupport,
  primaryKey: string[][] | undefined = support.primaryKey
): CatalogStream {
  return {
    name,
    json_schema: schema,
    supported_sync_modes: [...support.syncModes],
    source_defined_cursor: support.cursor !== undefined,
    ...(support.cursor !== undefined ? {default_cursor_field: [support.cursor]} : {}),
    ...(primaryKey?.length ? {source_defined_primary_key: primaryKey} : {}),
    is_resumable: support.resumable,
  };
}

/**
 * A configured stream asks for a sync mode its kind supports: anything else is the user's to fix,
 * refused before any request (Airbyte offers only the modes discover listed, so this is a catalog
 * edited by hand or saved before the stream changed).
 */
export function checkSyncMode(support: StreamSupport, configured: ConfiguredStream): Error | undefined {
  const mode = configured.sync_mode;
  if ((support.syncModes as readonly string[]).includes(mode)) return undefined;
  const modes = support.syncModes.join(' or ');
  return connectorError(
    'config_error',
    `Stream ${configured.stream.name} cannot be read in sync mode ${mode}: it supports ${modes} only. In Airbyte, set the stream's sync mode to ${modes} in the connection (refresh the source schema first if the connection was saved before), or deselect the stream.`,
    {stream: configured.stream.name, syncMode: mode}
  );
}

/** What a stream's plan may use: the settings and the sync's end, before any request. */
export interface PlanContext {
  config: QuestbackConfig;
  runtime: Runtime;
  logger: AirbyteLogger;
  /** The newest moment this read exports (now less settle_seconds). */
  syncEnd: number;
}

/** A header of a quest's export, and the field names the records of this read gave its columns. */
export interface NamedHeader {
  header: string[];
  names: string[];
}

/** The headers of the quests' exports as this read meets them, for the streams that describe columns. */
export class HeaderBoard {
  private readonly quests = new Map<
    string,
    {
      met: NamedHeader[];
      keys: Set<string>;
      promise: Promise<NamedHeader[]>;
      settle: (met: NamedHeader[]) => void;
      fail: (error: Error) => void;
    }
  >();

  private entry(questId: string) {
    let entry = this.quests.get(questId);
    if (!entry) {
      let settle: (met: NamedHeader[]) => void = () => undefined;
      let fail: (error: Error) => void = () => undefined;
      const promise = new Promise<NamedHeader[]>((resolve, reject) => {
        settle = resolve;
        fail = reject;
      });
      // A failure nobody waits for (no stream describes columns) is not an unhandled rejection.
      promise.catch(() => undefined);
      entry = {met: [], keys: new Set(), promise, settle, fail};
      this.quests.set(questId, entry);
    }
    return entry;
  }

  /** A header of the quest's export was read: kept, unless the same header came before. */
  seen(questId: string, met: NamedHeader): void {
    const entry = this.entry(questId);
    const key = JSON.stringify(met.header);
    if (entry.keys.has(key)) return;
    entry.keys.add(key);
    entry.met.push(met);
  }

  /** The quest's read ended: the headers it met are all there will be. */
  ended(questId: string): void {
    const entry = this.entry(questId);
    entry.settle(entry.met);
  }

  /**
   * The quest's read failed with the whole read (the credentials, or a stop): whoever waits for its
   * headers fails with it, rather than take the headers met so far for all of them.
   */
  failed(questId: string, error: Error): void {
    this.entry(questId).fail(error);
  }

  /**
   * Every distinct header the quest's read meets, in the order met, once it has ended (none: an empty
   * list); rejects with the error of a read that failed with the whole read.
   */
  headers(questId: string): Promise<NamedHeader[]> {
    return this.entry(questId).promise;
  }
}

/** What the streams of one read share. */
export interface ReadEnv {
  ctx: PlanContext;
  api: ExportApi & ListApi;
  slots: ExportSlots;
  out: SyncOutput;
  /** Stops every stream: the read was stopped, or the credentials failed. */
  stop: AbortSignal;
  /** The digest of the export settings, recorded with every export. */
  fingerprint: string;
  headers: HeaderBoard;
  /** Quests whose exports some stream of this read runs (their headers reach the board). */
  questsRead: ReadonlySet<string>;
}

/** A configured stream, planned: what it is, and how to read it. */
export interface StreamRead {
  ref: StreamRef;
  /** The quests whose exports it runs (rate-limit waits of their requests are this stream's). */
  questIds: readonly string[];
  /** It runs exports of its own (a stream that describes columns may only sample them). */
  readsResponses: boolean;
  /** Its checkpoints, which may repeat its STATE while it waits long (sync/state/heartbeat.ts). */
  heartbeat?: HeartbeatStream;
  /** Its state says its hashed cells were made under another hash_salt than this read's. */
  saltChanged?: boolean;
  /**
   * Reads the stream; resolves to its record count. A quest that is inaccessible while
   * skip_inaccessible_quests is on is reported through `skipped`, not thrown, by streams of several quests.
   */
  read(env: ReadEnv, skipped: (questId: string, why: string) => void): Promise<number>;
}

/** What discover may use: the settings, and the service (for sample exports, or a token alone). */
export interface DiscoverContext extends PlanContext {
  api: ExportApi;
  /** Gets a token: proves the addresses and the credentials without an export. */
  authenticate(): Promise<void>;
}

/**
 * A kind of stream: what it is (its catalog entries: schema, key, cursor), how it plans the read of a
 * configured stream of its kind, and (for the streams of responses) how a row becomes a record.
 */
export interface StreamDefinition {
  /** What every stream of this kind supports (sync modes, cursor, key, resumability). */
  readonly support: StreamSupport;
  /** The streams of this kind the config has, as discover lists them (none, for another layout). */
  discover(ctx: DiscoverContext): Promise<CatalogStream[]>;
  /** The configured stream's read, or undefined if it is not of this kind. Throws on a bad state. */
  plan(ctx: PlanContext, configured: ConfiguredStream, state: unknown, out: SyncOutput): StreamRead | undefined;
}

export function streamRef(configured: ConfiguredStream): StreamRef {
  return {
    name: configured.stream.name,
    ...(configured.stream.namespace ? {namespace: configured.stream.namespace} : {}),
  };
}
