import {MINUTE_MS} from './time';

/**
 * Every bound on attempts and waits, in one place, so that "how often" and "how long at most" have
 * one answer. The rules that apply them live with their owners, named beside each group. The
 * longest wait for an answer or for the next bytes of a download is the user's setting
 * request_timeout_seconds; the longest wait for an export to be generated is export_timeout_minutes.
 */
export const LIMITS = {
  /** api/http.ts: one HTTP request. */
  http: {
    /** Retries of network errors, timeouts and 5xx answers. */
    retries: 6,
    backoffBaseMs: 1000,
    backoffMaxMs: MINUTE_MS,
    /** Retries after 429 answers. */
    throttleRetries: 20,
    /** Longest single wait on a 429 or a low remaining budget. */
    throttleWaitMaxMs: 5 * MINUTE_MS,
    /** Longest time one request may spend waiting on 429s in all. */
    throttleTotalMaxMs: 15 * MINUTE_MS,
    /** An X-RateLimit-Reset further ahead than this is not a sane reading: it is logged and ignored. */
    resetHorizonMs: 60 * MINUTE_MS,
    /** A throttle wait at least this long is reported as a RATE_LIMITED stream status. */
    reportThrottleAfterMs: 10_000,
  },
  /** api/rate-limit.ts: what one answer's rate-limit headers may decide. */
  rateLimitGate: {
    /** Requests are held when the remaining budget falls under this share of the limit. */
    lowWaterFraction: 0.05,
    /** A reading is forgotten after this long even if its reset time says otherwise. */
    readingMaxAgeMs: 5 * MINUTE_MS,
  },
  /** sync/commands/check.ts: check fails fast on what cannot heal in seconds. */
  check: {
    /** Retries of a timeout or 5xx (refused connections, unknown hosts and TLS errors are not retried). */
    retries: 1,
    /** The whole check, all quests included. */
    deadlineMs: MINUTE_MS,
    /**
     * Quests checked at once. 500 quests on a service answering in 1.3 s take 16 rounds, about 21 s:
     * a third of the deadline, leaving room for one 429 wait of a check (at most half the deadline).
     * No more than a sync at max_concurrent_exports 32 may have in flight, so a check asks no more of
     * the service's (unpublished) rate limit at once than the connector's busiest sync.
     */
    concurrency: 32,
  },
  /** sync/exports/export-job.ts: waiting for the service to generate an export. */
  poll: {
    initialMs: 500,
    factor: 1.5,
    maxMs: 10_000,
    /**
     * While an export is generated, no two lines further apart than this: a line is written at the
     * poll after which the next poll would come later (so no extra request is made for it).
     */
    logEveryMs: 30_000,
  },
  /** sync/exports/export-job.ts: 409 "an export for this quest is already being generated" (within export_timeout_minutes). */
  conflict: {initialMs: 2000, maxMs: 30_000},
  /** sync/exports/export-policy.ts: the setbacks one planned window may meet before its stream fails. */
  window: {
    /** All setbacks of a window and of the pieces it was split into. */
    setbacks: 16,
    /** Exports of one piece ending in ERROR, in a row, before the piece is split. */
    failedBeforeSplit: 2,
    /** Downloads of one export cut off, in a row, before the piece is split. */
    cutOffsBeforeSplit: 3,
    /** Exports still not generated after export_timeout_minutes; each splits its piece. */
    timeouts: 2,
    /**
     * Time a window's downloads may go without a new row, summed over its cut-offs, before its
     * stream fails (at least twice request_timeout_seconds, so that two stalls are always retried).
     */
    stallMs: 5 * MINUTE_MS,
    /** A window re-planned at a known density is cut into at most this many pieces. */
    maxPartitions: 64,
  },
  /**
   * api/download.ts: the floor on a download's progress. The idle timeout (request_timeout_seconds)
   * is reset by every byte, so a body trickling one byte a minute would hold a sync for ever: a
   * download must also bring minBytes of wire data in every span of waiting, where the span is this
   * many idle timeouts (4 min at the default of 120 s). Time the consumer spends on the rows does not count.
   */
  downloadProgress: {spanIdleTimeouts: 2, minBytes: 64 * 1024},
  /**
   * sync/state/heartbeat.ts: after this long without a RECORD or STATE, every stream still reading
   * repeats its STATE where the exactly-once rule allows one, so that the platform's heartbeat (reset
   * by RECORD and STATE only; 3 h by default) sees the sync alive during long waits for the service.
   */
  heartbeat: {silenceMs: 5 * MINUTE_MS},
  /** sync/windows/download-progress.ts: while a file downloads, a line on its progress at most this often. */
  downloadLogEveryMs: 30_000,
  /** api/client.ts: redirects a download may follow (to a CDN, say) before it must have arrived at the file. */
  downloadRedirects: 5,
  /**
   * csv/bound-cuts.ts: the longest cell and row (in UTF-16 units, separators included) a file may hold.
   * A longer one is a CsvFormatError, not memory that grows with a hostile or corrupt body (a 1 MB
   * gzip body can expand into a 1 GiB cell).
   */
  csv: {maxCellChars: 4 * 1024 * 1024, maxRowChars: 8 * 1024 * 1024},
  /**
   * sync/state/checkpoints.ts: the identities of rows a failed quest emitted past its cursor, listed in
   * its stream's STATEs (stream_layouts combined and long): about 5,100 UUIDs or 10,000 9-digit ids
   * with their fingerprints. Rows past it are not listed: the next sync sends them again, and says so.
   */
  state: {emittedKeyBytes: 256 * 1024},
  /**
   * protocol/json-file.ts and core/config-rules.ts: the most an input file or a setting may hold. Far
   * above any real one (a state listing 2.5 million emitted rows is 40 MB; the bench syncs 500 quests):
   * a damaged or hostile input is refused at once, by its size, instead of taking memory or time
   * without end (a state file /dev/zero; 100,000 quest ids; an api_url of 250,000 slashes).
   */
  input: {fileMaxBytes: 256 * 1024 * 1024, questIds: 10_000, urlChars: 2048},
  /** sync/streams/header-sample.ts: exports of one sample window tried before discover fails. */
  sampleAttempts: 3,
  /** protocol/output.ts: no record waits in the output buffer longer than this (a STATE is written at once). */
  flushEveryMs: 1000,
  /** protocol/output.ts: a log line or a status waits no longer than this: it says what the connector does now. */
  messageFlushMs: 100,
  /** protocol/cli.ts: after SIGTERM or SIGINT, the read has this long to end its streams before the process ends anyway. */
  stopGraceMs: 10_000,
  /** probe/: `bin/main probe`, which a person waits for. */
  probe: {
    /** The longest the probe takes, every wait included (its --minutes: 1 to 30). */
    budgetMs: 5 * MINUTE_MS,
    maxBudgetMs: 30 * MINUTE_MS,
    /** Exports made at most, of one quest. */
    exports: 3,
    /** Rows read of one export at most: the rest of a large file is not downloaded. */
    maxRows: 10_000,
    /** An export is not started with less of the budget left: it could not finish. */
    minExportMs: 10_000,
    /** The longest wait for one answer, and for the next bytes of a download. */
    answerTimeoutMs: MINUTE_MS,
  },
} as const;
