#!/usr/bin/env node
// Runs the simulator as a standalone process (see cli-app.ts for the arguments):
//   node lib/simulator/cli.js [--port N] [--seed N] [--quests N] [--rows N] [--export-duration-ms N] [--latency-ms N]
//                                  [--write-config FILE]
// Prints one JSON line with the connection details, then lines for people, logs requests to
// stderr, and runs until SIGINT/SIGTERM.

import {runCli} from './cli-app';

async function main(): Promise<void> {
  const sim = await runCli(
    process.argv.slice(2),
    (line) => process.stdout.write(`${line}\n`),
    (line) => process.stderr.write(`${line}\n`)
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
