// Public API of the Questback Public Data Export API simulator: startSimulator() wires the parts
// together and returns the control surface used by tests, the benchmark and the demo.

import * as fs from 'fs';
import * as http from 'http';
import {AddressInfo} from 'net';
import * as os from 'os';
import * as path from 'path';
import {systemClock} from './clock';
import {Dialect} from './dialect';
import {
  createQuests,
  createState,
  DEFAULT_CLIENT_ID,
  DEFAULT_CLIENT_SECRET,
  DEFAULT_PROJECT_ID,
  groundTruth,
  questOf,
} from './engine';
import {checkListOptions} from './invitations';
import {resolveQuests} from './quests';
import {createHandler} from './server';
import {State} from './state';
import {ExportSettings, InsertedQuestion, Simulator, SimulatorOptions} from './types';
export type {DialectOptions, TimeFormat} from './dialect';
export type {InvitationItem, InvitationListOptions} from './invitations';
export {INVITATIONS_PERMISSION} from './invitations';

export {csvText} from './csv';
export {systemClock} from './clock';
export {ECHO_ENCODINGS} from './faults';
export {createEngine, DEFAULT_CLIENT_ID, DEFAULT_CLIENT_SECRET, DEFAULT_PROJECT_ID, DEFAULT_SEED} from './engine';
export type {SimulatorEngine} from './engine';
export {DEFAULT_COLUMNS, DEFAULT_QUEST_IDS} from './quests';
export type {
  Corruption,
  CsvOptions,
  HeaderDecorator,
  ExportOutcome,
  ExportRecord,
  ExportSettings,
  EchoEncoding,
  FaultOptions,
  FileEncoding,
  InsertedQuestion,
  LineEnding,
  QuestConfig,
  RateLimitOptions,
  QuestTable,
  RequestRecord,
  Route,
  RouteContext,
  RouteHandler,
  Simulator,
  SimulatorClock,
  SimulatorOptions,
  SimulatorStats,
  TitlePreset,
} from './types';

/** '' or '/a/b' (a leading slash, none at the end). */
function resolvePrefix(prefix: string | undefined): string {
  const p = (prefix ?? '').replace(/\/+$/, '');
  if (p !== '' && (!p.startsWith('/') || /[?#]/.test(p))) {
    throw new Error(`pathPrefix must be a path that starts with / (got ${JSON.stringify(prefix)})`);
  }
  return p;
}

export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const clock = options.clock ?? systemClock;
  const startMs = clock.now();
  const quests = resolveQuests(options.quests, startMs);
  // The other host name of 'other-host' download links: localhost, for the server's 127.0.0.1.
  let otherOrigin = '';
  const dialect = new Dialect(options.dialect ?? {}, () => otherOrigin);
  const questMap = createQuests(options, quests, startMs, dialect);
  const pathPrefix = resolvePrefix(options.pathPrefix);

  const inMemory = options.files === 'memory';
  if (inMemory && options.dataDir !== undefined) throw new Error("dataDir has no use with files: 'memory'");
  const ownDir = options.dataDir === undefined && !inMemory;
  const dataDir = inMemory
    ? undefined
    : (options.dataDir ?? (await fs.promises.mkdtemp(path.join(os.tmpdir(), 'questback-sim-'))));
  if (dataDir !== undefined && !ownDir) await fs.promises.mkdir(dataDir, {recursive: true});

  const server = http.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const baseUrl = `${origin}${pathPrefix}`;
  otherOrigin = `http://localhost:${(server.address() as AddressInfo).port}`;
  let state: State;
  try {
    state = createState(options, questMap, {dataDir, issuer: baseUrl, pathPrefix, dialect});
  } catch (err) {
    // Options it refuses (a fault rate out of range, say) leave nothing behind.
    await new Promise((resolve) => server.close(resolve));
    if (ownDir && dataDir !== undefined) await fs.promises.rm(dataDir, {recursive: true, force: true});
    throw err;
  }
  server.on('request', createHandler(state));

  let closing: Promise<void> | undefined;
  const close = async (): Promise<void> => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await state.exports.close();
    await closed;
    if (ownDir && dataDir !== undefined) await fs.promises.rm(dataDir, {recursive: true, force: true});
  };

  return {
    apiUrl: baseUrl,
    authUrl: baseUrl,
    origin,
    clock,
    clientId: options.clientId ?? DEFAULT_CLIENT_ID,
    clientSecret: options.clientSecret ?? DEFAULT_CLIENT_SECRET,
    projectId: options.projectId ?? DEFAULT_PROJECT_ID,
    // Copies, so a caller changing them cannot change the quests' data.
    quests: quests.map((q) => ({
      ...q,
      languages: [...q.languages],
      ...(q.createdAt ? {createdAt: [...q.createdAt]} : {}),
      ...(q.questionTitles ? {questionTitles: [...q.questionTitles]} : {}),
    })),

    groundTruth: (questId: string, settings: ExportSettings = {}) => groundTruth(state, questId, settings),

    addResponses(questId: string, count: number) {
      if (!Number.isInteger(count) || count < 0) throw new Error('count must be an integer >= 0');
      questOf(state, questId).data.addResponses(count, clock.now());
    },

    insertQuestion(questId: string, at: number, question: InsertedQuestion) {
      questOf(state, questId).data.insertQuestion(at, question, clock.now());
    },

    renameColumn(questId: string, from: string, to: string) {
      // The texts of the quest's header under either layout of its columns.
      const layouts = [{}, {includeRespondentInformation: true, expandMultipleChoiceToColumns: true}];
      const texts = new Set(layouts.flatMap((settings) => groundTruth(state, questId, settings).header));
      if (!texts.has(from)) throw new Error(`quest ${questId} has no column ${JSON.stringify(from)}`);
      if (!to || texts.has(to)) throw new Error(`the new text must be new to quest ${questId}, and not empty`);
      questOf(state, questId).data.renameColumn(from, to);
    },

    addInvitations(questId: string, count: number) {
      if (!Number.isInteger(count) || count < 0) throw new Error('count must be an integer >= 0');
      questOf(state, questId).invitations.add(count, clock.now());
    },

    invitations: (questId: string) => questOf(state, questId).invitations.all(clock.now(), state.invitationList),

    setInvitationList(options) {
      state.invitationList = checkListOptions(options);
    },

    issuedTokens: () => state.tokens.issued(),
    requests: (route) => state.records.filter((r) => route === undefined || r.route === route).map((r) => ({...r})),
    stats: () => ({...state.stats}),
    exports: () => state.exports.records(),

    setFaults(next) {
      state.faults.set(next);
    },

    on(route, handler) {
      state.handlers.set(route, handler);
    },

    decorate(decorate) {
      state.decorators.push(decorate);
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
