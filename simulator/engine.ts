// The service without its HTTP front: quests, export jobs, faults and the clock, wired once. The
// server (server.ts, api.ts) answers requests with it; tests of the sync core drive it directly
// (createEngine), on their virtual clock, where HTTP would only cost time.

import {TokenService} from './auth';
import {systemClock} from './clock';
import {Dialect} from './dialect';
import {codecOf} from './encoding';
import {ExportJob, ExportStore, JobView} from './exports';
import {Faults} from './faults';
import {checkListOptions, Invitations} from './invitations';
import {ProblemFactory} from './problem';
import {deriveSeed, Prng} from './prng';
import {checkSettings, ResolvedSettings} from './settings';
import {QuestEntry, State} from './state';
import {ExportOutcome, ExportRecord, ExportSettings, ResolvedQuest, SimulatorOptions} from './types';
import {ExportRequest} from './validation';
import {QuestData} from './data';
import {resolveQuests} from './quests';

export const DEFAULT_SEED = 42;
export const DEFAULT_CLIENT_ID = '291846375018264733@questback-simulator';
export const DEFAULT_CLIENT_SECRET = 'sim-secret-7Qe2xVn4Kd9LpR3tWb6Y';
export const DEFAULT_PROJECT_ID = '314876184947078893';

/** The quests' data and invitations; throws on quests that cannot be served. */
export function createQuests(
  options: SimulatorOptions,
  quests: readonly ResolvedQuest[],
  startMs: number,
  dialect: Dialect
): Map<string, QuestEntry> {
  const seed = options.seed ?? DEFAULT_SEED;
  const questMap = new Map<string, QuestEntry>();
  for (const q of quests) {
    if (questMap.has(q.id)) throw new Error(`quest ${q.id} is configured twice`);
    const data = new QuestData(q, seed, startMs, dialect);
    const first = data.count > 0 ? data.createdAt(0) : startMs - 86_400_000;
    const invitations = new Invitations(seed, {
      questId: q.id,
      count: q.invitations ?? 3 + (deriveSeed(seed, `invitation-count:${q.id}`) % 6),
      burst: q.invitationBurst ?? 0,
      firstMs: first,
      lastMs: Math.max(first, startMs - 60_000),
      languages: q.languages,
      hiddenIdentity: q.hiddenIdentity ?? false,
    });
    questMap.set(q.id, {data, invitations});
  }
  return questMap;
}

/** The state every part of the service shares. */
export function createState(
  options: SimulatorOptions,
  quests: Map<string, QuestEntry>,
  io: {dataDir: string | undefined; issuer: string; pathPrefix: string; dialect: Dialect}
): State {
  const seed = options.seed ?? DEFAULT_SEED;
  const clock = options.clock ?? systemClock;
  const log = options.log ?? (() => undefined);
  const msPerThousandRows = options.exportMsPerThousandRows ?? 0;
  if (!(msPerThousandRows >= 0)) throw new Error('exportMsPerThousandRows must be >= 0');
  const faults = new Faults(new Prng(deriveSeed(seed, 'faults')));
  faults.set(options.faults ?? {});
  const tokenConfig = {
    clientId: options.clientId ?? DEFAULT_CLIENT_ID,
    clientSecret: options.clientSecret ?? DEFAULT_CLIENT_SECRET,
    projectId: options.projectId ?? DEFAULT_PROJECT_ID,
    lifetimeSeconds: options.tokenLifetimeSeconds ?? 3600,
    issuer: io.issuer,
    seed,
    tokenType: options.dialect?.tokenType,
    expiresInMs: options.dialect?.expiresIn === 'milliseconds',
  };
  return {
    quests,
    exports: new ExportStore(io.dataDir, new Prng(deriveSeed(seed, 'exports')), log, clock),
    tokens: new TokenService(tokenConfig, new Prng(deriveSeed(seed, 'tokens'))),
    faults,
    problems: new ProblemFactory(new Prng(deriveSeed(seed, 'problems')), options.dialect?.errorBodies === 'text'),
    stats: {
      tokens: 0,
      exportsCreated: 0,
      statusPolls: 0,
      downloads: 0,
      rateLimited: 0,
      serverErrors: 0,
      requests: 0,
      conflicts: 0,
    },
    records: [],
    exportDurationMs: options.exportDurationMs ?? 300,
    exportMsPerThousandRows: msPerThousandRows,
    pathPrefix: io.pathPrefix,
    relativeLocation: options.relativeLocation ?? false,
    dialect: io.dialect,
    log,
    clock,
    handlers: new Map(),
    decorators: [],
    invitationList: checkListOptions(options.invitationList ?? {}),
  };
}

export function questOf(state: State, questId: string): QuestEntry {
  const q = state.quests.get(questId);
  if (!q) throw new Error(`unknown quest ${questId}`);
  return q;
}

/**
 * Creates an export of the request's window, as a valid create request does: its rows are the
 * quest's rows at `now`; `outcome` says how it ends, else the faults decide. A quest with an export
 * running, under oneExportPerQuest, gets none: 'conflict'.
 */
export function startExport(
  state: State,
  quest: QuestEntry,
  asked: ExportRequest,
  now: number,
  outcome?: ExportOutcome
): ExportJob | 'conflict' {
  const {config} = quest.data;
  if (state.faults.oneExportPerQuest && state.exports.running(config.id, now)) {
    state.stats.conflicts++;
    return 'conflict';
  }
  const timing = {
    durationMs: config.exportDurationMs ?? state.exportDurationMs,
    msPerThousandRows: config.exportMsPerThousandRows ?? state.exportMsPerThousandRows,
  };
  // As the service reads the filter (its dialect: bounds, zone).
  const request = state.dialect.request(asked);
  const {since, until} = request.window;
  const [lo, hi] = quest.data.range(since, until ?? now);
  const job = state.exports.create(quest.data, request, now, timing, outcome ?? state.faults.exportOutcome(hi - lo));
  state.stats.exportsCreated++;
  return job;
}

/** The rows an export of (since, until] with `settings` holds, as its file lists them. */
export function exportRows(
  quest: QuestEntry,
  since: number | undefined,
  until: number,
  settings: ResolvedSettings
): string[][] {
  const [lo, hi] = quest.data.range(since, until);
  const rows: string[][] = [];
  for (let i = lo; i < hi; i++) rows.push(quest.data.exportRow(i, lo, hi, settings));
  return rows;
}

/** The content of a full export created now, as a correct decoder reads it (Simulator.groundTruth). */
export function groundTruth(
  state: State,
  questId: string,
  settings: ExportSettings
): {header: string[]; rows: string[][]} {
  const quest = questOf(state, questId);
  const {data} = quest;
  const checked = checkSettings(settings, data.config.languages);
  if ('errors' in checked) throw new Error(`invalid settings: ${JSON.stringify(checked.errors)}`);
  const rows = exportRows(quest, undefined, state.clock.now(), checked.settings);
  if (rows.length === 0 && !data.config.headerOnEmpty) return {header: [], rows: []};
  // What a correct decoder reads: the same as written, except for Latin-1's '?' replacements.
  const readable = codecOf(data.config.encoding).readable;
  return {header: data.header(checked.settings).map(readable), rows: rows.map((row) => row.map(readable))};
}

/**
 * The service driven directly, without HTTP: what a create, a status request and a download would
 * do, on the engine's clock. Files are kept in memory.
 */
export interface SimulatorEngine {
  groundTruth(questId: string, settings?: ExportSettings): {header: string[]; rows: string[][]};
  /** Creates an export of the quest's rows in (since, until] with default settings; `outcome` says how it ends, else the faults. */
  createExport(questId: string, window: {since?: number; until?: number}, outcome?: ExportOutcome): ExportRecord;
  /** The rows an export of the quest's (since, until] holds now, with default settings. */
  exportRows(questId: string, window: {since?: number; until: number}): string[][];
  /** The export's state now, as its status request sees it; vanished exports are unknown to the service. */
  exportState(exportId: string): JobView['state'] | 'VANISHED';
  /** The export's file, as a download of a COMPLETED export sends it whole. */
  exportFile(exportId: string): Buffer;
  /** Deletes the export: from now on it is GONE. */
  expireExport(exportId: string): void;
  exports(): ExportRecord[];
}

export function createEngine(options: SimulatorOptions = {}): SimulatorEngine {
  const clock = options.clock ?? systemClock;
  const startMs = clock.now();
  const dialect = new Dialect(options.dialect ?? {}, () => '');
  const quests = createQuests(options, resolveQuests(options.quests, startMs), startMs, dialect);
  const state = createState(options, quests, {dataDir: undefined, issuer: 'engine:', pathPrefix: '', dialect});
  const jobOf = (exportId: string): ExportJob => {
    const job = state.exports.byId(exportId);
    if (!job) throw new Error(`unknown export ${exportId}`);
    return job;
  };
  const defaults = (quest: QuestEntry): ResolvedSettings => {
    const checked = checkSettings({}, quest.data.config.languages);
    if ('errors' in checked) throw new Error(`invalid settings: ${JSON.stringify(checked.errors)}`);
    return checked.settings;
  };
  return {
    groundTruth: (questId, settings = {}) => groundTruth(state, questId, settings),
    exportRows(questId, window) {
      const quest = questOf(state, questId);
      return exportRows(quest, window.since, Math.min(window.until, clock.now()), defaults(quest));
    },
    createExport(questId, window, outcome) {
      const quest = questOf(state, questId);
      const job = startExport(state, quest, {settings: defaults(quest), window}, clock.now(), outcome);
      if (job === 'conflict') throw new Error(`quest ${questId} has an export running`);
      return state.exports.record(job);
    },
    exportState(exportId) {
      const job = jobOf(exportId);
      return job.outcome === 'vanished' ? 'VANISHED' : state.exports.view(job, clock.now()).state;
    },
    exportFile(exportId) {
      const content = jobOf(exportId).content;
      if (!content) throw new Error(`export ${exportId} has no file`);
      return content;
    },
    expireExport: (exportId) => state.exports.markGone(jobOf(exportId)),
    exports: () => state.exports.records(),
  };
}
