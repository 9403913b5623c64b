import {exportSettings} from '../../src/api/client';
import {parseConfig, QuestbackConfig} from '../../src/core/config';
import {warehouseNames} from '../../src/sync/streams/column-names';
import {CONNECTOR_FIELDS} from '../../src/sync/streams/record-columns';
import {Simulator, SimulatorClock, SimulatorOptions, startSimulator} from '../../simulator';
import {connectorConfig} from '../../simulator/cli-app';
import {Runtime, systemRuntime} from '../../src/core/runtime';
import {TestClock} from './clock';
import {
  InProcessOptions,
  LiveResult,
  LiveRun,
  runConnector,
  RunResult,
  startBinMain,
  startConnector,
  stateFile,
} from './connector';
import {AirbyteMessageJson} from './protocol';
import {tempDir, writeJson} from './temp';

/** The stream the connector names after a quest. */
export const streamOf = (questId: string): string => `quest_${questId.toLowerCase().replace(/-/g, '_')}`;

/** A config of the required options only (no service behind it). */
export const REQUIRED_OPTIONS = {
  client_id: 'id',
  client_secret: 'secret',
  quest_ids: ['1b4e28ba-2fa1-11d2-883f-0016d3cca427'],
  start_date: '2024-01-01T00:00:00Z',
};

/** The parsed config of the required options and these (defaults applied), for tests of the sync layer. */
export function parsedConfig(overrides: Record<string, unknown> = {}): QuestbackConfig {
  return parseConfig({...REQUIRED_OPTIONS, ...overrides}, Date.now()).config;
}

/** The export settings a config of the defaults sends: the tests' one copy of them. */
export const DEFAULT_EXPORT_SETTINGS = exportSettings(parsedConfig());

/** A connector config for a running simulator, with the connector's defaults and a start_date 40 days back. */
export function simConfig(sim: Simulator, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {...connectorConfig(sim), start_date: new Date(Date.now() - 40 * 86_400_000).toISOString(), ...overrides};
}

/**
 * The configured catalog Airbyte would build from a discover output: every stream in `preferred`
 * mode when it supports it, else in the one it declares (a full-refresh-only stream in full refresh).
 */
export function configuredCatalog(
  discover: AirbyteMessageJson[],
  preferred: 'full_refresh' | 'incremental'
): Record<string, unknown> {
  const catalog = discover.find((m) => m.type === 'CATALOG') as
    {catalog: {streams: {name: string; supported_sync_modes: string[]; default_cursor_field?: string[]}[]}} | undefined;
  if (!catalog) throw new Error('discover returned no CATALOG');
  return {
    streams: catalog.catalog.streams.map((stream) => {
      const mode = stream.supported_sync_modes.includes(preferred) ? preferred : stream.supported_sync_modes[0];
      return {
        stream,
        sync_mode: mode,
        ...(mode === 'incremental' ? {cursor_field: stream.default_cursor_field} : {}),
        destination_sync_mode: mode === 'incremental' ? 'append' : 'overwrite',
      };
    }),
  };
}

/**
 * A configured catalog for simulator quests without running discover: each stream lists the quest's
 * columns under their warehouse names (the connector's default), as discover would.
 */
export function simCatalog(
  sim: Simulator,
  questIds: readonly string[],
  syncMode: 'full_refresh' | 'incremental'
): Record<string, unknown> {
  return {
    streams: questIds.map((id) => {
      const header = sim.groundTruth(id).header;
      const properties: Record<string, unknown> = {};
      warehouseNames(header).forEach((name, i) => (properties[name] = {type: ['null', 'string'], title: header[i]}));
      for (const field of CONNECTOR_FIELDS) properties[field] = {type: 'string'};
      return {
        stream: {
          name: streamOf(id),
          json_schema: {type: 'object', properties},
          supported_sync_modes: ['full_refresh', 'incremental'],
        },
        sync_mode: syncMode,
        destination_sync_mode: syncMode === 'incremental' ? 'append' : 'overwrite',
      };
    }),
  };
}

/**
 * A simulator and the connector run in this process on one clock (a TestClock unless the options
 * give another), with a folder for their files: what most end-to-end tests set up first.
 */
export interface World {
  sim: Simulator;
  /** The simulator's clock, which the connector's runs share. */
  clock: SimulatorClock;
  /** The connector's runtime in this world: the simulator's clock when a TestClock, else the system's. */
  runtime: Runtime;
  dir: string;
  /** Writes `value` as JSON in the world's folder, under a name of its own; returns the path. */
  file(value: unknown): string;
  /** A config file for the simulator: the connector's defaults, start_date 40 days back, and `overrides`. */
  config(overrides?: Record<string, unknown>): string;
  /** Runs a command of the connector on the world's clock. */
  run(args: string[], options?: Omit<InProcessOptions, 'runtime'>): Promise<RunResult>;
  start(args: string[], options?: Omit<InProcessOptions, 'runtime'>): LiveRun;
  /** discover with `config`, then the configured catalog Airbyte would make of it, as a file. */
  discoveredCatalog(config: string, mode: 'full_refresh' | 'incremental'): Promise<string>;
  close(): Promise<void>;
}

/** The connector's runtime for runs against `sim`: its clock when that is a TestClock, else the system's. */
export function runtimeOf(sim: Simulator): TestClock | undefined {
  return sim.clock instanceof TestClock ? sim.clock : undefined;
}

export async function startWorld(options: SimulatorOptions = {}): Promise<World> {
  const sim = await startSimulator({clock: new TestClock(options.seed), ...options});
  const dir = tempDir();
  let files = 0;
  const runtime = runtimeOf(sim) ?? systemRuntime;
  const world: World = {
    sim,
    clock: sim.clock,
    runtime,
    dir,
    file: (value) => writeJson(dir, `file-${++files}.json`, value),
    config: (overrides = {}) => world.file(simConfig(sim, overrides)),
    run: (args, more = {}) => runConnector(args, {runtime, ...more}),
    start: (args, more = {}) => startConnector(args, {runtime, ...more}),
    async discoveredCatalog(config, mode) {
      const discover = await world.run(['discover', '--config', config]);
      if (discover.code !== 0) throw new Error(`discover failed: ${discover.stdout.slice(-2000)}`);
      return world.file(configuredCatalog(discover.messages, mode));
    },
    close: () => sim.close(),
  };
  return world;
}

/** Runs `fn` with what `opening` opens, always closed afterwards. */
export async function using<T extends {close(): Promise<void>}>(
  opening: Promise<T>,
  fn: (opened: T) => Promise<void>
): Promise<void> {
  const opened = await opening;
  try {
    await fn(opened);
  } finally {
    await opened.close();
  }
}

/** Runs `fn` in a world of its own, always closed afterwards. */
export const withWorld = (options: SimulatorOptions, fn: (world: World) => Promise<void>): Promise<void> =>
  using(startWorld(options), fn);

/** The STATEs a read left, as the state file of the next attempt. */
export type StateFile = ReturnType<typeof stateFile>;

export interface Attempts {
  /** The first attempt, stopped. */
  first: LiveResult;
  /** The last STATE of each stream the first attempt wrote. */
  state: StateFile;
  /** Exports the simulator had when the first attempt was stopped. */
  createdByFirst: number;
  /** The second attempt, from `state`. */
  second: RunResult;
}

/**
 * A read stopped at the first STATE that `stopAt` picks, then a second read, in-process, from the
 * STATEs the first wrote: SIGTERM stops an in-process read, SIGKILL a bin/main process (no goodbye).
 * A TestClock keeps real time while bin/main runs: nothing in this process waits on it then.
 * `between` runs in between, on the state of the first.
 */
export async function stopThenResume(
  world: World,
  options: {
    config: string;
    catalog: string;
    stopAt: (message: AirbyteMessageJson) => boolean;
    signal: 'SIGTERM' | 'SIGKILL';
    between?: (state: StateFile) => void;
  }
): Promise<Attempts> {
  const args = ['read', '--config', options.config, '--catalog', options.catalog];
  const live =
    options.signal === 'SIGKILL' ? startBinMain(args, {killAfterMs: 90_000}) : world.start(args, {killAfterMs: 90_000});
  const line = await live.waitForLine(options.stopAt, 80_000);
  if (!line)
    throw new Error(`the first attempt ended before the STATE to stop at: ${(await live.done).stdout.slice(-2000)}`);
  live.kill(options.signal);
  const first = await live.done;
  const state = stateFile(first.messages);
  const createdByFirst = world.sim.exports().length;
  options.between?.(state);
  const second = await world.run([...args, '--state', world.file(state)]);
  return {first, state, createdByFirst, second};
}
