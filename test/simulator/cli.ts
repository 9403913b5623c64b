#!/usr/bin/env node
// Runs the simulator as a standalone process:
//   node lib/test/simulator/cli.js [--port N] [--seed N] [--quests N] [--rows N] [--export-duration-ms N]
// Prints one JSON line with the connection details, then a human line, and runs until SIGINT/SIGTERM.

import {deriveSeed, Prng} from './prng';
import {DEFAULT_QUEST_IDS, QuestConfig, startSimulator} from './index';

const FLAGS = ['port', 'seed', 'quests', 'rows', 'export-duration-ms'] as const;
type Flag = (typeof FLAGS)[number];

function parseArgs(argv: readonly string[]): Partial<Record<Flag, number>> {
  const out: Partial<Record<Flag, number>> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const [name, inline] = arg.startsWith('--') ? arg.slice(2).split('=', 2) : [arg, undefined];
    if (!(FLAGS as readonly string[]).includes(name)) throw new Error(`unknown argument ${arg}`);
    const text = inline ?? argv[++i];
    const value = Number(text);
    if (text === undefined || !Number.isInteger(value) || value < 0) throw new Error(`--${name} needs an integer >= 0`);
    out[name as Flag] = value;
  }
  return out;
}

/** Quest configs for --quests/--rows: the default quest ids first, then seeded UUIDs. */
function questConfigs(count: number, rows: number, seed: number): QuestConfig[] {
  const rng = new Prng(deriveSeed(seed, 'cli-quests'));
  const out: QuestConfig[] = [];
  for (let k = 0; k < count; k++)
    out.push({id: k < DEFAULT_QUEST_IDS.length ? DEFAULT_QUEST_IDS[k] : rng.uuid(), rows});
  return out;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const seed = args.seed ?? 42;
  const quests =
    args.quests !== undefined || args.rows !== undefined
      ? questConfigs(args.quests ?? 2, args.rows ?? 25, seed)
      : undefined;
  const sim = await startSimulator({
    seed,
    port: args.port,
    quests,
    exportDurationMs: args['export-duration-ms'],
    log: (line) => process.stderr.write(`${line}\n`),
  });
  const info = {
    apiUrl: sim.apiUrl,
    authUrl: sim.authUrl,
    clientId: sim.clientId,
    clientSecret: sim.clientSecret,
    projectId: sim.projectId,
    questIds: sim.quests.map((q) => q.id),
  };
  process.stdout.write(`${JSON.stringify(info)}\n`);
  process.stdout.write(
    `Questback API simulator listening on ${sim.apiUrl} with ${info.questIds.length} quest(s); press Ctrl+C to stop.\n`
  );
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    sim.close().then(
      () => process.exit(0),
      (err: unknown) => {
        process.stderr.write(`close failed: ${String(err)}\n`);
        process.exit(1);
      }
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(2);
});
