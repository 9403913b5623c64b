import {createHash} from 'crypto';

import {ExportSettings} from '../../api/client';
import {connectorError} from '../../core/errors';
import {formatUtcTimestamp, parseUtcTimestamp} from '../../core/time';
import {DensityHint, EmittedRows, QuestProgress, RecordedExport} from './checkpoints';
import {cut, quote} from '../../core/outside-text';

/**
 * A quest stream's state: every response created up to `cursor` (inclusive) has been emitted. It
 * names its cursor field, as Airbyte's tooling expects of a state beside a `cursor` value, and keeps
 * the density last seen so that the next sync sizes its first export right away (optional: states
 * written before it existed still read).
 */
interface QuestState {
  cursor: string;
  cursor_field: string[];
  density?: DensityHint;
  /** Exports created past the cursor and not yet read whole: a later attempt re-uses them while they last. */
  exports?: ExportState[];
  /** Rows past the cursor emitted already (see EmittedRows): a later read skips them. */
  emitted?: EmittedState;
  /** The check of the hash_salt of the quest's hashed cells: a later sync under another salt says so. */
  salt_check?: string;
  /** The sensitive_columns entries that hashed or dropped a column of the quest: one that matches none later fails it. */
  sensitive_matched?: string[];
}

interface EmittedState {
  until: string;
  /** Response IDs, or whole rows when `whole_rows`. */
  keys: string[];
  /** Beside Response IDs: each row's fingerprint ('': any row of the id). States written before them have none. */
  fingerprints?: string[];
  /** With fingerprints: the digest of the settings and header of the file they are of (EmittedRows). */
  header?: string;
  whole_rows?: boolean;
}

interface ExportState {
  export_id: string;
  since: string;
  until: string;
  settings: string;
}

/** A quest's progress as its state says it; `cursorField` is the records' field the cursor stands for. */
export function questState(progress: QuestProgress, cursorField: string): QuestState {
  const {cursor, density, exports, emitted, saltCheck, sensitiveMatched} = progress;
  return {
    cursor: formatUtcTimestamp(cursor),
    cursor_field: [cursorField],
    ...(density ? {density} : {}),
    ...(exports.length
      ? {
          exports: exports.map((e) => ({
            export_id: e.exportId,
            since: formatUtcTimestamp(e.window.since),
            until: formatUtcTimestamp(e.window.until),
            settings: e.fingerprint,
          })),
        }
      : {}),
    ...(emitted
      ? {
          emitted: {
            until: formatUtcTimestamp(emitted.until),
            keys: emitted.keys,
            ...(emitted.fingerprints ? {fingerprints: emitted.fingerprints} : {}),
            ...(emitted.header !== undefined ? {header: emitted.header} : {}),
            ...(emitted.wholeRows ? {whole_rows: true} : {}),
          },
        }
      : {}),
    ...(saltCheck ? {salt_check: saltCheck} : {}),
    ...(sensitiveMatched?.length ? {sensitive_matched: [...sensitiveMatched].sort()} : {}),
  };
}

/**
 * A short digest of what makes an export's file what it is (the API address and the export
 * settings): an export recorded with another digest was made with other settings and is not re-used.
 */
export function exportFingerprint(apiUrl: string, settings: ExportSettings): string {
  return createHash('sha256')
    .update(JSON.stringify([apiUrl, settings]))
    .digest('base64url')
    .slice(0, 16);
}

/**
 * What a recorded export's `settings` holds: the settings digest (exportFingerprint) bound to the
 * quest and the export id, so that an export is re-used only by the quest it was made for (a state
 * edited by hand that gives one quest another's export id re-uses nothing).
 */
export function exportSeal(settingsDigest: string, questId: string, exportId: string): string {
  return createHash('sha256')
    .update(JSON.stringify([settingsDigest, questId, exportId]))
    .digest('base64url')
    .slice(0, 16);
}

/** A state this connector cannot read: a config_error that says how to start again. */
export function invalidState(message: string): never {
  throw connectorError(
    'config_error',
    `Invalid state: ${message} Reset the connection's state in Airbyte to start again from start_date.`
  );
}

/** The state a read starts from: stream name -> stream state, and what of the input was ignored, for a warning. */
class StateInput extends Map<string, unknown> {
  readonly ignored: string[] = [];
}

/**
 * Reads the state file into stream name -> stream state. Accepts the per-stream messages Airbyte
 * passes (an array of STREAM states, or one of them) and the older name -> state object. A GLOBAL
 * state (another connector's) is ignored, and said so: everything it would cover is read again. A
 * LEGACY state and the compressed form of older builds are rejected with a message saying what to do.
 */
export function parseStateInput(raw: unknown): StateInput {
  const states = new StateInput();
  if (raw === undefined || raw === null) return states;
  const messages = Array.isArray(raw)
    ? raw
    : typeof raw === 'object' && typeof (raw as {type?: unknown}).type === 'string'
      ? [raw]
      : undefined;
  if (messages) {
    for (const [i, message] of messages.entries()) {
      const msg = (message ?? {}) as {
        type?: string;
        stream?: {stream_descriptor?: {name?: unknown}; stream_state?: unknown};
      };
      if (msg.type === 'LEGACY') {
        invalidState(
          `entry ${i} has type "LEGACY", which Airbyte no longer accepts; this connector keeps per-stream (STREAM) state.`
        );
      }
      if (msg.type !== 'STREAM' && !(msg.type === undefined && msg.stream)) {
        states.ignored.push(
          `a ${cut(String(msg.type))} state (entry ${i}; this connector keeps per-stream STREAM state)`
        );
        continue;
      }
      const name = msg.stream?.stream_descriptor?.name;
      if (typeof name !== 'string') invalidState(`entry ${i} has no stream_descriptor.name.`);
      states.set(name, msg.stream?.stream_state);
    }
    return states;
  }
  if (typeof raw !== 'object') invalidState('expected a JSON array of per-stream states.');
  const obj = raw as Record<string, unknown>;
  if ('format' in obj && 'data' in obj) {
    invalidState('it is in the compressed format of an older connector build, which this version does not read.');
  }
  for (const [name, value] of Object.entries(obj)) states.set(name, value);
  return states;
}

/** The cursor of a stream's state in epoch ms, or undefined for no state; `label` names its owner in messages ("Stream quest_…"). */
export function cursorOf(streamState: unknown, label: string): number | undefined {
  if (streamState === undefined || streamState === null) return undefined;
  const cursor = (streamState as {cursor?: unknown}).cursor;
  if (typeof streamState !== 'object' || cursor === undefined) {
    invalidState(`${label}: its state has no 'cursor' (got ${quote(streamState)}).`);
  }
  const ms = typeof cursor === 'string' ? parseUtcTimestamp(cursor) : undefined;
  if (ms === undefined)
    invalidState(`${label}: the cursor in its state is not an ISO 8601 UTC timestamp: ${quote(cursor)}.`);
  return ms;
}

/**
 * What a stream says when its state's cursor lies after the sync's own time (`now`): a state edited
 * by hand, or this machine's clock gone back. Kept, it would hide every response created before it
 * for good; the stream says so and, `instead`, what it does (in every sync that meets one).
 */
export function futureCursorWarning(label: string, cursor: number, now: number, instead: string): string {
  return `${label}: the state's cursor ${formatUtcTimestamp(cursor)} lies after this sync's time ${formatUtcTimestamp(now)}; kept, it would hide every response created before it. ${instead} If the state was edited, reset the connection's state in Airbyte to read everything from start_date again; if this machine's clock is behind, correct it.`;
}

/** The density a stream's state remembers, if it holds a sane one (anything else is ignored, not an error). */
export function densityOf(streamState: unknown): DensityHint | undefined {
  const density = (streamState as {density?: {rows_per_day?: unknown; bytes_per_row?: unknown}} | undefined)?.density;
  const rows = density?.rows_per_day;
  if (typeof rows !== 'number' || !Number.isFinite(rows) || rows < 0) return undefined;
  const bytes = density?.bytes_per_row;
  return {
    rows_per_day: rows,
    ...(typeof bytes === 'number' && Number.isFinite(bytes) && bytes > 0 ? {bytes_per_row: bytes} : {}),
  };
}

/** The hash_salt check a stream's state records, if it holds one (anything else is ignored, as if none). */
export function saltCheckOf(streamState: unknown): string | undefined {
  const check = (streamState as {salt_check?: unknown} | undefined)?.salt_check;
  return typeof check === 'string' && check ? check : undefined;
}

/** The sensitive_columns entries a stream's state says matched a column of the quest (anything else is ignored). */
export function sensitiveMatchedOf(streamState: unknown): string[] {
  const list = (streamState as {sensitive_matched?: unknown} | undefined)?.sensitive_matched;
  return Array.isArray(list) ? list.filter((entry): entry is string => typeof entry === 'string') : [];
}

/**
 * The exports a stream's state records past its cursor, in window order. Anything malformed is
 * left out (the window is then exported anew): a recorded export is an optimisation, never a must.
 */
export function recordedExportsOf(streamState: unknown): RecordedExport[] {
  const list = (streamState as {exports?: unknown} | undefined)?.exports;
  if (!Array.isArray(list)) return [];
  const found: RecordedExport[] = [];
  for (const item of list as Partial<ExportState>[]) {
    const since = typeof item?.since === 'string' ? parseUtcTimestamp(item.since) : undefined;
    const until = typeof item?.until === 'string' ? parseUtcTimestamp(item.until) : undefined;
    if (typeof item?.export_id !== 'string' || !item.export_id || since === undefined || until === undefined) continue;
    if (until <= since || typeof item.settings !== 'string') continue;
    found.push({exportId: item.export_id, window: {since, until}, fingerprint: item.settings});
  }
  return found.sort((a, b) => a.window.since - b.window.since);
}

/**
 * The rows past a quest's cursor its state lists as emitted, if it lists them soundly. Unlike a
 * recorded export, this list is a must: rows a STATE committed would otherwise come twice.
 */
export function emittedOf(streamState: unknown, stream: string): EmittedRows | undefined {
  const emitted = (streamState as {emitted?: Partial<EmittedState>} | undefined)?.emitted;
  if (emitted === undefined) return undefined;
  const until = typeof emitted?.until === 'string' ? parseUtcTimestamp(emitted.until) : undefined;
  const keys = emitted?.keys;
  if (until === undefined || !Array.isArray(keys) || !keys.every((k) => typeof k === 'string')) {
    invalidState(`the 'emitted' rows of ${stream} are not an 'until' timestamp and a list of 'keys'.`);
  }
  const prints = emitted.fingerprints;
  if (prints === undefined) return {until, keys, wholeRows: emitted.whole_rows === true};
  if (!Array.isArray(prints) || prints.length !== keys.length || !prints.every((p) => typeof p === 'string')) {
    invalidState(`the 'emitted' rows of ${stream} list 'fingerprints' that are not one text per key.`);
  }
  const header = emitted.header;
  if (header !== undefined && typeof header !== 'string') {
    invalidState(`the 'emitted' rows of ${stream} name a 'header' digest that is not a text.`);
  }
  return {
    until,
    keys,
    fingerprints: prints,
    ...(header !== undefined ? {header} : {}),
    wholeRows: emitted.whole_rows === true,
  };
}
