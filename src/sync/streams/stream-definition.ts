import {AirbyteLogger} from 'faros-airbyte-cdk/lib/logger';

import {RequestContext} from '../../api/api-error';
import {QuestbackConfig} from '../../core/config';
import {Runtime} from '../../core/runtime';
import {Connection} from '../commands/connection';
import {StreamRef, SyncOutput} from '../output-port';
import {ExportSlots} from '../exports/export-slots';

/** A stream of the configured catalog, as far as the reader needs it. */
export interface ConfiguredStream {
  stream: {
    name: string;
    namespace?: string | null;
    json_schema?: {properties?: Record<string, {title?: unknown}>};
    source_defined_primary_key?: string[][];
  };
  sync_mode: string;
  primary_key?: string[][];
}

/** What a read needs from outside, wired by the source. */
export interface ReadContext {
  config: QuestbackConfig;
  runtime: Runtime;
  logger: AirbyteLogger;
  /** The API client for this read; reports waits for the rate limit to the listener. */
  connect(onThrottle: (ctx: RequestContext | undefined, waitMs: number, resetAt: number) => void): Connection;
  /** The newest moment this read exports (now less settle_seconds). */
  syncEnd: number;
  /** Aborts the read (the process is told to stop, or the consumer went away). */
  signal: AbortSignal;
}

/** The headers of the quests' exports as this read meets them, for the streams that describe columns. */
export class HeaderBoard {
  private readonly waiting = new Map<
    string,
    {promise: Promise<string[] | undefined>; settle: (h?: string[]) => void}
  >();

  private entry(questId: string) {
    let entry = this.waiting.get(questId);
    if (!entry) {
      let settle: (h?: string[]) => void = () => undefined;
      const promise = new Promise<string[] | undefined>((resolve) => (settle = resolve));
      entry = {promise, settle};
      this.waiting.set(questId, entry);
    }
    return entry;
  }

  /** A header of the quest's export was read (the first one counts). */
  seen(questId: string, header: string[]): void {
    this.entry(questId).settle(header);
  }

  /** The quest's read ended: no header will come if none came. */
  ended(questId: string): void {
    this.entry(questId).settle(undefined);
  }

  /** The header the quest's read meets, or undefined when it ends without one. */
  header(questId: string): Promise<string[] | undefined> {
    return this.entry(questId).promise;
  }
}

/** What the streams of one read share. */
export interface ReadEnv {
  ctx: ReadContext;
  connection: Connection;
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
  /**
   * Reads the stream; resolves to its record count. A quest that is inaccessible while
   * skip_inaccessible_quests is on is reported through `skipped`, not thrown, by streams of several quests.
   */
  read(env: ReadEnv, skipped: (questId: string, why: string) => void): Promise<number>;
}

/** A kind of stream the reader knows: it recognises its configured streams by name and plans their reads. */
export interface StreamDefinition {
  /** The configured stream's read, or undefined if it is not of this kind. Throws on a bad state. */
  plan(ctx: ReadContext, configured: ConfiguredStream, state: unknown, out: SyncOutput): StreamRead | undefined;
}

export function streamRef(configured: ConfiguredStream): StreamRef {
  return {
    name: configured.stream.name,
    ...(configured.stream.namespace ? {namespace: configured.stream.namespace} : {}),
  };
}
