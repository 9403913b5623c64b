// The standalone simulator's behaviour, apart from the process it runs in (cli.ts), so tests can
// run it in-process: argument parsing, the ready-made connector config, and what it prints.

import * as fs from 'fs';
import * as path from 'path';
import {deriveSeed, Prng} from './prng';
import {DEFAULT_QUEST_IDS, QuestConfig, Simulator, startSimulator} from './index';

/** Fixed, so a config written by --write-config keeps working after a restart (same seed, same ids). */
export const DEFAULT_PORT = 8717;

const NUMBER_FLAGS = ['port', 'seed', 'quests', 'rows', 'export-duration-ms', 'latency-ms'] as const;
const TEXT_FLAGS = ['write-config'] as const;
type NumberFlag = (typeof NUMBER_FLAGS)[number];
type TextFlag = (typeof TEXT_FLAGS)[number];

export interface CliArgs {
  port: number;
  seed: number;
  quests?: number;
  rows?: number;
  exportDurationMs?: number;
  /** Every answer waits this long (faults.latencyMs): a slow service. */
  latencyMs?: number;
  /** Where to write a connector config for this simulator. */
  writeConfig?: string;
}

export const USAGE =
  'usage: simulator [--port N (default 8717, 0 = random)] [--seed N] [--quests N] [--rows N] ' +
  '[--export-duration-ms N] [--latency-ms N] [--write-config FILE]';

export function parseArgs(argv: readonly string[]): CliArgs {
  const numbers: Partial<Record<NumberFlag, number>> = {};
  const texts: Partial<Record<TextFlag, string>> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const [name, inline] = arg.startsWith('--') ? arg.slice(2).split('=', 2) : [arg, undefined];
    const text = inline ?? argv[++i];
    if ((TEXT_FLAGS as readonly string[]).includes(name)) {
      if (text === undefined || text === '') throw new Error(`--${name} needs a value`);
      texts[name as TextFlag] = text;
      continue;
    }
    if (!(NUMBER_FLAGS as readonly string[]).includes(name)) throw new Error(`unknown argument ${arg}\n${USAGE}`);
    const value = Number(text);
    if (text === undefined || !Number.isInteger(value) || value < 0) throw new Error(`--${name} needs an integer >= 0`);
    numbers[name as NumberFlag] = value;
  }
  return {
    port: numbers.port ?? DEFAULT_PORT,
    seed: numbers.seed ?? 42,
    quests: numbers.quests,
    rows: numbers.rows,
    exportDurationMs: numbers['export-duration-ms'],
    latencyMs: numbers['latency-ms'],
    writeConfig: texts['write-config'],
  };
}

/** Quest configs for --quests/--rows: the default quest ids first, then seeded UUIDs. */
function questConfigs(count: number, rows: number, seed: number): QuestConfig[] {
  const rng = new Prng(deriveSeed(seed, 'cli-quests'));
  const out: QuestConfig[] = [];
  for (let k = 0; k < count; k++)
    out.push({id: k < DEFAULT_QUEST_IDS.length ? DEFAULT_QUEST_IDS[k] : rng.uuid(), rows});
  return out;
}

/** A connector config for `sim`; start_date 90 days back, to the second (the spec's pattern). */
export function connectorConfig(sim: Simulator, now = Date.now()): Record<string, unknown> {
  return {
    client_id: sim.clientId,
    client_secret: sim.clientSecret,
    project_id: sim.projectId,
    api_url: sim.apiUrl,
    auth_url: sim.authUrl,
    quest_ids: sim.quests.map((q) => q.id),
    start_date: new Date(now - 90 * 86_400_000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    settle_seconds: 0,
  };
}

/** Quotes a path for a POSIX shell when it needs it. */
function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * Starts the simulator for `argv` and prints, through `out`, first the JSON line other tools parse,
 * then lines for people. `cwd` resolves a relative --write-config (npm runs scripts in the
 * project root; INIT_CWD is where the user typed the command).
 */
export async function runCli(
  argv: readonly string[],
  out: (line: string) => void,
  log: (line: string) => void,
  cwd = process.env.INIT_CWD ?? process.cwd()
): Promise<Simulator> {
  const args = parseArgs(argv);
  const quests =
    args.quests !== undefined || args.rows !== undefined
      ? questConfigs(args.quests ?? 2, args.rows ?? 25, args.seed)
      : undefined;
  let sim: Simulator;
  try {
    sim = await startSimulator({
      seed: args.seed,
      port: args.port,
      quests,
      exportDurationMs: args.exportDurationMs,
      ...(args.latencyMs === undefined ? {} : {faults: {latencyMs: args.latencyMs}}),
      log,
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      throw new Error(`port ${args.port} is in use (another simulator?); pass --port N, or --port 0 for a random one`);
    }
    throw err;
  }
  const configFile = args.writeConfig === undefined ? undefined : path.resolve(cwd, args.writeConfig);
  if (configFile) {
    await fs.promises.mkdir(path.dirname(configFile), {recursive: true});
    await fs.promises.writeFile(configFile, `${JSON.stringify(connectorConfig(sim), null, 2)}\n`);
  }
  const questIds = sim.quests.map((q) => q.id);
  out(
    JSON.stringify({
      apiUrl: sim.apiUrl,
      authUrl: sim.authUrl,
      clientId: sim.clientId,
      clientSecret: sim.clientSecret,
      projectId: sim.projectId,
      questIds,
      ...(configFile ? {configFile} : {}),
    })
  );
  out(`Questback API simulator listening on ${sim.apiUrl} with ${questIds.length} quest(s); press Ctrl+C to stop.`);
  if (configFile) {
    const file = shellWord(configFile);
    out(`Connector config written to ${configFile}`);
    out('Try the connector against it, from the project root in another terminal:');
    out(`  bin/main check --config ${file}`);
    out(`  bin/main discover --config ${file}`);
  } else {
    out('For a ready connector config, start with --write-config <file>; then, from the project root:');
    out('  bin/main check --config <file>');
    out('  bin/main discover --config <file>');
  }
  out('A read needs a configured catalog (discover prints only the catalog): npm run demo shows a whole sync.');
  return sim;
}
