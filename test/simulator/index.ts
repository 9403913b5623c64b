// Public API of the Questback Public Data Export API simulator: startSimulator() wires the parts
// together and returns the control surface used by tests, the benchmark and the demo.

import * as fs from 'fs';
import * as http from 'http';
import {AddressInfo} from 'net';
import * as os from 'os';
import * as path from 'path';
import {TokenService} from './auth';
import {QuestData} from './data';
import {ExportStore} from './exports';
import {Faults} from './faults';
import {Invitations} from './invitations';
import {ProblemFactory} from './problem';
import {deriveSeed, Prng} from './prng';
import {createHandler} from './server';
import {checkSettings} from './settings';
import {QuestEntry, State} from './state';
import {ExportSettings, ResolvedQuest, Simulator, SimulatorOptions, QuestConfig} from './types';

export type {
  Corruption,
  ExportSettings,
  FaultOptions,
  QuestConfig,
  RateLimitOptions,
  RequestRecord,
  Simulator,
  SimulatorOptions,
  SimulatorStats,
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

function resolveQuest(q: QuestConfig, startMs: number): ResolvedQuest {
  if (!Number.isInteger(q.rows) || q.rows < 0) throw new Error(`quest ${q.id}: rows must be an integer >= 0`);
  const columns = q.columns ?? DEFAULT_COLUMNS;
  if (!Number.isInteger(columns) || columns < 1) throw new Error(`quest ${q.id}: columns must be an integer >= 1`);
  return {
    ...q,
    columns,
    languages: q.languages && q.languages.length > 0 ? [...q.languages] : ['en'],
    firstCreatedAt: q.firstCreatedAt ?? new Date(startMs - 30 * 24 * 3600 * 1000).toISOString(),
    headerOnEmpty: q.headerOnEmpty ?? true,
  };
}

export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const seed = options.seed ?? DEFAULT_SEED;
  const startMs = Date.now();
  const log = options.log ?? (() => undefined);
  const quests = (options.quests ?? DEFAULT_QUESTS).map((q) => resolveQuest(q, startMs));

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
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

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
    stats: {tokens: 0, exportsCreated: 0, statusPolls: 0, downloads: 0, rateLimited: 0, serverErrors: 0, requests: 0},
    records: [],
    exportDurationMs: options.exportDurationMs ?? 300,
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
    quests: quests.map((q) => ({...q})),

    groundTruth(questId: string, settings: ExportSettings = {}) {
      const quest = questOf(questId).data;
      const checked = checkSettings(settings, quest.config.languages);
      if ('errors' in checked) throw new Error(`invalid settings: ${JSON.stringify(checked.errors)}`);
      const [lo, hi] = quest.range(undefined, Date.now());
      if (hi === lo && !quest.config.headerOnEmpty) return {header: [], rows: []};
      const rows: string[][] = [];
      for (let i = lo; i < hi; i++) rows.push(quest.row(i, checked.settings));
      return {header: quest.header(checked.settings), rows};
    },

    addResponses(questId: string, count: number) {
      if (!Number.isInteger(count) || count < 0) throw new Error('count must be an integer >= 0');
      questOf(questId).data.addResponses(count, Date.now());
    },

    issuedTokens: () => state.tokens.issued(),
    requests: () => state.records.map((r) => ({...r})),
    stats: () => ({...state.stats}),

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
