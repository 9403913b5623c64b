import {randomUUID} from 'crypto';
import VError from 'verror';

import {findQuestInaccessible} from '../api/api-error';
import {ExportJobContext, ExportJobEnd, runExportJob} from '../api/export-job';
import {QuestbackConfig, SEPARATORS} from '../core/config';
import {connectorError, errorMessage, failureTypeOf} from '../core/errors';
import {LIMITS} from '../core/limits';
import {DAY_MS, formatDuration, MINUTE_MS, TimeWindow} from '../core/time';
import {probeConnection, ProbeEnvironment} from './connection';
import {sampleFile} from './file-sample';
import {probeInvitations} from './invitation-probe';
import {judge} from './judge';
import {BoundaryFacts, ExportPurpose, ExportRun, Verdict} from './verdict';
import {AnswerLog} from './observer';
import {word} from './shapes';

export interface ProbeOptions {
  /** The quest to export: one of quest_ids. */
  questId: string;
  /** The longest the probe may take, every wait included. */
  budgetMs: number;
  /** Rows read of one export at most: the rest of a large file is not downloaded. */
  maxRows: number;
}

export interface ProbeResult {
  questId: string;
  apiUrl: string;
  startedAt: number;
  finishedAt: number;
  exports: ExportRun[];
  verdicts: Verdict[];
  /** Steps the probe left out, and why. */
  skipped: string[];
}

/** Sample windows, widened once when the first holds too few responses: the last day, then the last 30. */
const SAMPLE_SPANS_MS = [DAY_MS, 30 * DAY_MS];
/** A window no quest has responses in: the probe's export without responses. */
const EMPTY_WINDOW: TimeWindow = {since: Date.UTC(2000, 0, 1), until: Date.UTC(2000, 0, 1) + 1};

/**
 * Checks the connector's assumptions about the service against the real one, with the user's
 * credentials: a token, at most three small exports of one quest (a sample, a window between two of
 * its responses for the filter's boundaries, a window without responses), and the status of an export
 * that does not exist, for the error format. Every answer is recorded by shape (observer.ts) and
 * judged (judge.ts). Every wait is bounded by the budget and logged. A failure of the credentials or
 * of access to the quest ends the probe (nothing would be learnt); any other failure leaves the
 * verdicts that needed that step unknown.
 */
export async function runProbe(
  config: QuestbackConfig,
  options: ProbeOptions,
  env: ProbeEnvironment
): Promise<ProbeResult> {
  const {runtime, logger} = env;
  const signal = env.signal ?? new AbortController().signal;
  const {questId} = options;
  const startedAt = runtime.now();
  const deadline = startedAt + options.budgetMs;
  const log = new AnswerLog(() => runtime.now());
  const {api, authenticate} = probeConnection(config, env, log);
  const separator = {name: config.field_separator, char: SEPARATORS[config.field_separator]};
  const runs: ExportRun[] = [];
  const skipped: string[] = [];
  /** Why the first export the service did not make was not made: the probe's reason if it made none. */
  let firstRefusal: unknown;
  let unknownAsked = false;

  logger.info(
    `Probe of ${config.api_url} with quest ${questId}: at most ${LIMITS.probe.exports} small exports, ${formatDuration(options.budgetMs)} at most`
  );
  await authenticate(signal);
  logger.info('Probe: the token service gave an access token');

  /** The status of an export that does not exist: harmless, and shows how the service answers errors. */
  const askUnknownExport = async (): Promise<void> => {
    unknownAsked = true;
    log.step = 'unknown-export';
    try {
      const status = await api.exportStatus(questId, randomUUID(), signal);
      const answer = status.kind === 'vanished' ? `HTTP ${status.httpStatus}` : `as ${status.kind}`;
      logger.info(`Probe: the status of an export that does not exist answered ${answer}`);
    } catch (err) {
      logger.info(`Probe: the status of an export that does not exist failed: ${errorMessage(err)}`);
    }
  };

  /** The export lifecycle every sync runs (api/export-job.ts), said in the probe's words and recorded in `run`. */
  const lifecycle = (run: ExportRun): ExportJobContext => ({
    api,
    runtime,
    timeoutMs: config.export_timeout_minutes * MINUTE_MS,
    deadline,
    observer: {
      conflict: (explanation, waitMs) =>
        logger.info(
          `Probe: the service is generating another export of quest ${questId} (409: ${explanation}); asking again in ${formatDuration(waitMs)}`
        ),
      created: async (exportId) => {
        run.exportId = exportId;
        run.outcome = 'not read';
        logger.info(`Probe: created the ${run.purpose} export ${exportId}`);
        if (!unknownAsked) await askUnknownExport();
        logger.info(
          `Probe: waiting for export ${exportId} to be generated, polling every ${formatDuration(LIMITS.poll.initialMs)} to ${formatDuration(LIMITS.poll.maxMs)}, for at most ${formatDuration(Math.min(deadline - runtime.now(), config.export_timeout_minutes * MINUTE_MS))}`
        );
        log.step = 'status';
      },
      polled: () => run.polls++,
      running: ({exportId, status, elapsedMs, timeoutMs}, news) =>
        logger.info(
          news
            ? `Probe: export ${exportId} is ${word(status.status)} (${formatDuration(elapsedMs)})`
            : `Probe: export ${exportId} is still ${word(status.status)} after ${formatDuration(elapsedMs)}; waiting at most ${formatDuration(timeoutMs - elapsedMs)} more`
        ),
      completed: (exportId, elapsedMs) => {
        run.generationMs = elapsedMs;
        logger.info(`Probe: export ${exportId} completed after ${formatDuration(elapsedMs)}`);
        log.step = 'download';
      },
    },
  });

  /** Where an export that gave no file stopped, in the run's words. */
  const stopped = (run: ExportRun, end: Exclude<ExportJobEnd, {kind: 'file' | 'conflicts'}>): void => {
    switch (end.kind) {
      case 'failed':
        run.outcome = 'failed';
        run.problem = `the export ended with status ${word(end.status)}`;
        break;
      case 'vanished':
        run.outcome = 'vanished';
        run.problem = `its status answered HTTP ${end.httpStatus}`;
        break;
      case 'timeout':
        run.outcome = 'not ready in time';
        run.problem = `not generated within ${formatDuration(end.timeoutMs)} (the probe's budget; --minutes gives it more)`;
        break;
      case 'gone':
        run.outcome = 'gone';
        run.problem = `its download answered HTTP ${end.httpStatus}`;
        return;
    }
    logger.warn(`Probe: the ${run.purpose} export ${end.exportId}: ${run.problem}`);
  };

  const exportAndRead = async (purpose: ExportPurpose, window: TimeWindow): Promise<ExportRun> => {
    const run: ExportRun = {purpose, window, outcome: 'not created', polls: 0};
    runs.push(run);
    try {
      log.step = 'create';
      const end = await runExportJob(lifecycle(run), questId, window, signal);
      if (end.kind === 'conflicts') {
        throw connectorError('transient_error', `the service kept answering 409 (${end.explanation})`, {questId});
      }
      if (end.kind !== 'file') {
        stopped(run, end);
        return run;
      }
      run.file = await sampleFile(end.download, {separator: separator.char, window, maxRows: options.maxRows});
      run.outcome = 'read';
      const {rows, receivedBytes, stoppedEarly, readProblem} = run.file;
      logger.info(
        `Probe: read ${rows} row(s) of the ${purpose} export (${receivedBytes} bytes${stoppedEarly ? ', stopped at the row limit' : ''})${readProblem ? `: ${readProblem}` : ''}`
      );
    } catch (err) {
      const inaccessible = findQuestInaccessible(err);
      if (inaccessible) {
        throw connectorError(
          'config_error',
          `Quest ${questId} cannot be probed: ${errorMessage(err)} Probe a quest the API login can read: --quest <id>, one of quest_ids.`,
          {questId, status: inaccessible.status},
          err instanceof Error ? err : undefined
        );
      }
      if (signal.aborted) throw err;
      if (!run.exportId) firstRefusal ??= err;
      run.problem = errorMessage(err);
      logger.warn(`Probe: the ${purpose} export: ${run.problem}`);
    }
    return run;
  };

  /** Whether another export may start: fewer than the most, and time enough left for it. */
  const mayExport = (what: string): boolean => {
    if (runs.length >= LIMITS.probe.exports) {
      skipped.push(`${what}: the probe makes at most ${LIMITS.probe.exports} exports`);
      return false;
    }
    if (deadline - runtime.now() < LIMITS.probe.minExportMs) {
      skipped.push(`${what}: the probe's budget of ${formatDuration(options.budgetMs)} was used up`);
      return false;
    }
    return true;
  };

  const end = runtime.now() - config.settle_seconds * 1000;
  // start_date is inclusive, since exclusive.
  const startSince = Date.parse(config.start_date) - 1;
  const spanWindow = (ms: number): TimeWindow => ({since: Math.max(startSince, end - ms), until: end});
  const samples = [await exportAndRead('sample', spanWindow(SAMPLE_SPANS_MS[0]))];
  const wider = spanWindow(SAMPLE_SPANS_MS[1]);
  if (boundaryWindow(samples).window === undefined && wider.since < samples[0].window.since) {
    if (mayExport('a wider sample')) samples.push(await exportAndRead('wider sample', wider));
  }
  const pair = boundaryWindow(samples);
  let boundary: BoundaryFacts = {tested: false, why: pair.why ?? ''};
  if (pair.window && mayExport('the export between two responses (the filter boundaries)')) {
    const run = await exportAndRead('boundary', pair.window);
    boundary = run.file
      ? {
          tested: true,
          sinceRow: run.file.createdTimes.some((t) => t.ms === pair.window.since && !t.beyondMs),
          untilRow: run.file.createdTimes.some((t) => t.ms === pair.window.until && !t.beyondMs),
        }
      : {tested: false, why: `the export between two responses was not read: ${run.problem ?? run.outcome}`};
  } else if (pair.window) {
    boundary = {tested: false, why: skipped[skipped.length - 1]};
  }
  const emptySeen = samples.some((run) => run.file?.complete && run.file.rows === 0);
  if (!emptySeen && mayExport('the export of a window without responses'))
    await exportAndRead('empty window', EMPTY_WINDOW);
  // A create answered in a way the connector does not expect (another status, no exportId) is a verdict to
  // report, not a refusal.
  const accepted = log.of('create').some((answer) => answer.status < 400);
  if (!accepted) throw couldNotExport(questId, runs.length, firstRefusal);
  if (!unknownAsked) skipped.push('the status of an unknown export: no export was created first');

  const invitations = await probeInvitations(api, questId, log, logger, signal);
  const verdicts = judge({apiUrl: config.api_url, separator, log, exports: runs, boundary, invitations});
  for (const v of verdicts) {
    const line = `Probe: ${v.state.toUpperCase()} ${v.id}: ${v.seen}`;
    if (v.state === 'contradicted') logger.warn(line);
    else logger.info(line);
  }
  return {questId, apiUrl: config.api_url, startedAt, finishedAt: runtime.now(), exports: runs, verdicts, skipped};
}

/**
 * The window (a, b] between the two closest distinct creation times of the samples, to the
 * millisecond, so that the boundary export shows whether the response at `since` is left out and the
 * one at `until` is in. Only when every sampled response lay inside its window, and times are written
 * to the millisecond at least (a time shown in seconds may hide milliseconds that decide).
 */
function boundaryWindow(
  samples: readonly ExportRun[]
): {window: TimeWindow; why?: undefined} | {window?: undefined; why: string} {
  const files = samples.flatMap((run) => (run.file ? [run.file] : []));
  if (files.some((f) => f.fit.before || f.fit.after)) {
    return {why: 'the sample held responses outside its window (see the verdict on the time filter)'};
  }
  const times = [
    ...new Set(files.flatMap((f) => f.createdTimes.filter((t) => t.digits >= 3 && !t.beyondMs).map((t) => t.ms))),
  ].sort((a, b) => a - b);
  if (times.length < 2) {
    return {why: 'the samples held fewer than two responses with a Created time to the millisecond'};
  }
  let best = 1;
  for (let i = 2; i < times.length; i++) if (times[i] - times[i - 1] < times[best] - times[best - 1]) best = i;
  return {window: {since: times[best - 1], until: times[best]}};
}

/**
 * The service refused every export the probe asked for: every verdict about exports, files and filters
 * would be unknown, so the probe did not run, and says why (the first refusal, with its failure type).
 */
function couldNotExport(questId: string, asked: number, refusal: unknown): VError {
  return connectorError(
    failureTypeOf(refusal),
    `The probe could not run: the service refused all ${asked} export(s) of quest ${questId} it was asked for, so nothing about exports, their files and their filters could be checked. The first refusal: ${errorMessage(refusal)} Run the probe again when the service creates exports of this quest (a sync needs that too); if it keeps refusing, send this message to Questback support.`,
    {questId},
    refusal instanceof Error ? refusal : undefined
  );
}
