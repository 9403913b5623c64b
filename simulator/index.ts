// Public API of the Questback Public Data Export API simulator: startSimulator() wires the parts
// together and returns the control surface used by tests, the benchmark and the demo.

import * as fs from 'fs';
import * as http from 'http';
import {AddressInfo} from 'net';
import * as os from 'os';
import * as path from 'path';
import {TokenService} from './auth';
import {parseCreatedAt, QuestData} from './data';
import {codecOf, ENCODINGS} from './encoding';
import {ExportStore} from './exports';
import {Faults} from './faults';
import {Invitations} from './invitations';
import {ProblemFactory} from './problem';
import {deriveSeed, Prng} from './prng';
import {createHandler} from './server';
import {checkSettings} from './settings';
import {QuestEntry, State} from './state';
import {PRESETS} from './title-presets';
import {ExportSettings, InsertedQuestion, ResolvedQuest, Simulator, SimulatorOptions, QuestConfig} from './types';

export type {
  Corruption,
  ExportOutcome,
  ExportRecord,
  ExportSettings,
  FaultOptions,
  FileEncoding,
  InsertedQuestion,
  LineEnding,
  QuestConfig,
  RateLimitOptions,
  RequestRecord,
  Simulator,
  SimulatorOptions,
  SimulatorStats,
  TitlePreset,
} from './types';

export const DEFAULT_SEED = 42;
export const DEFAULT_CLIENT_ID = '291846375018264733@questback-simulator';
export const DEFAULT_CLIENT_SECRET = 'sim-secret-7Qe2xVn4Kd9LpR3tWb6Y';
export const DEFAULT_PROJECT_ID = '314876184947078893';
export const DEFAULT_QUEST_IDS = [
  '3f6c1a52-8d4e-4b7a-9c21-5e0d7f8a1b34',
  'a9e27c40-1b5d-4f83-8e6a-0c4d92b7f615',
] as const;
export const DEFAULT_COLUMNS = 6;
const DEFAULT_QUESTS: QuestConfig[] = [
  {id: DEFAULT_QUEST_IDS[0], rows: 25, columns: 7},
  {id: DEFAULT_QUEST_IDS[1], rows: 40, columns: 12, languages: ['en', 'no']},
];

function oneOf<T extends string>(questId: string, name: string, value: T | undefined, allowed: readonly T[]): void {
  if (value !== undefined && !allowed.includes(value)) {
    throw new Error(`quest ${questId}: ${name} must be one of ${allowed.join(', ')}`);
  }
}

function resolveQuest(q: QuestConfig, startMs: number): ResolvedQuest {
  // Explicit creation times define the rows; rows and firstCreatedAt, when given too, must agree.
  const {createdAt: given, ...rest} = q;
  const createdAt = given ? parseCreatedAt(q.id, given) : undefined;
  const rows = createdAt?.length ?? q.rows;
  if (!Number.isInteger(rows) || (rows as number) < 0) throw new Error(`quest ${q.id}: rows must be an integer >= 0`);
  if (createdAt && q.rows !== undefined && q.rows !== rows) {
    throw new Error(`quest ${q.id}: rows (${q.rows}) disagrees with createdAt (${rows} times)`);
  }
  let firstCreatedAt = q.firstCreatedAt ?? new Date(startMs - 30 * 24 * 3600 * 1000).toISOString();
  if (createdAt && createdAt.length > 0) {
    if (q.firstCreatedAt !== undefined && Date.parse(q.firstCreatedAt) !== createdAt[0]) {
      throw new Error(`quest ${q.id}: firstCreatedAt disagrees with the earliest createdAt`);
    }
    firstCreatedAt = new Date(createdAt[0]).toISOString();
  }
  const columns = q.columns ?? q.questionTitles?.length ?? DEFAULT_COLUMNS;
  if (!Number.isInteger(columns) || columns < 1) throw new Error(`quest ${q.id}: columns must be an integer >= 1`);
  if (q.questionTitles && q.questionTitles.length !== columns) {
    throw new Error(`quest ${q.id}: questionTitles needs one title per column (${columns})`);
  }
  oneOf(q.id, 'titles', q.titles, Object.keys(PRESETS) as ResolvedQuest['titles'][]);
  oneOf(q.id, 'encoding', q.encoding, ENCODINGS);
  oneOf(q.id, 'lineEnding', q.lineEnding, ['crlf', 'lf']);
  oneOf(q.id, 'responseIds', q.responseIds, ['numeric', 'uuid']);
  const perThousand = q.exportMsPerThousandRows;
  if (perThousand !== undefined && !(perThousand >= 0))
    throw new Error(`quest ${q.id}: exportMsPerThousandRows must be >= 0`);
  return {
    ...rest,
    rows: rows as number,
    ...(createdAt ? {createdAt} : {}),
    columns,
    languages: q.languages && q.languages.length > 0 ? [...q.languages] : ['en'],
    firstCreatedAt,
    headerOnEmpty: q.headerOnEmpty ?? true,
    titles: q.titles ?? 'english',
    encoding: q.encoding ?? 'utf8-bom',
    lineEnding: q.lineEnding ?? 'crlf',
    responseIds: q.responseIds ?? 'numeric',
  };
}

/** '' or '/a/b' (a leading slash, none at the end). */
function resolvePrefix(prefix: string | undefined): string {
  const p = (prefix ?? '').replace(/\/+$/, '');
  if (p !== '' && (!p.startsWith('/') || /[?#]/.test(p))) {
    throw new Error(`pathPrefix must be a path that starts with / (got ${JSON.stringify(prefix)})`);
  }
  return p;
}

export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const seed = options.seed ?? DEFAULT_SEED;
  const startMs = Date.now();
  const log = options.log ?? (() => undefined);
  const quests = (options.quests ?? DEFAULT_QUESTS).map((q) => resolveQuest(q, startMs));
  const pathPrefix = resolvePrefix(options.pathPrefix);
  const msPerThousandRows = options.exportMsPerThousandRows ?? 0;
  if (!(msPerThousandRows >= 0)) throw new Error('exportMsPerThousandRows must be >= 0');

  const questMap = new Map<string, QuestEntry>();
  for (const q of quests) {
    if (questMap.has(q.id)) throw new Error(`quest ${q.id} is configured twice`);
    const data = new QuestData(q, seed, startMs);
    const first = data.count > 0 ? data.createdAt(0) : startMs - 86_400_000;
    questMap.set(q.id, {data, invitations: new Invitations(seed, q.id, first, startMs - 60_000)});
  }

  const ownDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? (await fs.promises.mkdtemp(path.join(os.tmpdir(), 'questback-sim-')));
  if (!ownDir) await fs.promises.mkdir(dataDir, {recursive: true});

  const faults = new Faults(new Prng(deriveSeed(seed, 'faults')));
  faults.set(options.faults ?? {});

  const server = http.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}${pathPrefix}`;

  const clientId = options.clientId ?? DEFAULT_CLIENT_ID;
  const clientSecret = options.clientSecret ?? DEFAULT_CLIENT_SECRET;
  const projectId = options.projectId ?? DEFAULT_PROJECT_ID;
  const tokenConfig = {
    clientId,
    clientSecret,
    projectId,
    lifetimeSeconds: options.tokenLifetimeSeconds ?? 3600,
    issuer: baseUrl,
    seed,
  };
  const state: State = {
    quests: questMap,
    exports: new ExportStore(dataDir, new Prng(deriveSeed(seed, 'exports')), log),
    tokens: new TokenService(tokenConfig, new Prng(deriveSeed(seed, 'tokens'))),
    faults,
    problems: new ProblemFactory(new Prng(deriveSeed(seed, 'problems'))),
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
    pathPrefix,
    relativeLocation: options.relativeLocation ?? false,
    log,
  };
  server.on('request', createHandler(state));

  const questOf = (questId: string): QuestEntry => {
    const q = questMap.get(questId);
    if (!q) throw new Error(`unknown quest ${questId}`);
    return q;
  };

  let closing: Promise<void> | undefined;
  const close = async (): Promise<void> => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await state.exports.close();
    await closed;
    if (ownDir) await fs.promises.rm(dataDir, {recursive: true, force: true});
  };

  return {
    apiUrl: baseUrl,
    authUrl: baseUrl,
    clientId,
    clientSecret,
    projectId,
    // Copies, so a caller changing them cannot change the quests' data.
    quests: quests.map((q) => ({
      ...q,
      languages: [...q.languages],
      ...(q.createdAt ? {createdAt: [...q.createdAt]} : {}),
      ...(q.questionTitles ? {questionTitles: [...q.questionTitles]} : {}),
    })),

    groundTruth(questId: string, settings: ExportSettings = {}) {
      const quest = questOf(questId).data;
      const checked = checkSettings(settings, quest.config.languages);
      if ('errors' in checked) throw new Error(`invalid settings: ${JSON.stringify(checked.errors)}`);
      const [lo, hi] = quest.range(undefined, Date.now());
      if (hi === lo && !quest.config.headerOnEmpty) return {header: [], rows: []};
      // What a correct decoder reads: the same as written, except for Latin-1's '?' replacements.
      const readable = codecOf(quest.config.encoding).readable;
      const rows: string[][] = [];
      for (let i = lo; i < hi; i++) rows.push(quest.exportRow(i, lo, hi, checked.settings).map(readable));
      return {header: quest.header(checked.settings).map(readable), rows};
    },

    addResponses(questId: string, count: number) {
      if (!Number.isInteger(count) || count < 0) throw new Error('count must be an integer >= 0');
      questOf(questId).data.addResponses(count, Date.now());
    },

    insertQuestion(questId: string, at: number, question: InsertedQuestion) {
      questOf(questId).data.insertQuestion(at, question, Date.now());
    },

    issuedTokens: () => state.tokens.issued(),
    requests: () => state.records.map((r) => ({...r})),
    stats: () => ({...state.stats}),
    exports: () => state.exports.records(),

    setFaults(next) {
      faults.set(next);
    },

    expireExport(exportId: string) {
      const job = state.exports.byId(exportId);
      if (!job) throw new Error(`unknown export ${exportId}`);
      state.exports.markGone(job);
    },

    close() {
      closing ??= close();
      return closing;
    },
  };
}
