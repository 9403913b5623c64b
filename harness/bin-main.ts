// bin/main as a process of its own, started as the image starts it: for the tests that need a
// process (signals, SIGKILL, a closed stdout, peak memory), the benchmark and the demo. This is
// the one place that knows where bin/main is, which node flags its first line gives node, and how
// a child's end is awaited. Outside test/ so that the benchmark does not import the tests.

import {ChildProcess, spawn, SpawnOptions} from 'child_process';
import fs from 'fs';
import path from 'path';

/** The project's root: the folder holding bin/main, from the sources (tests) as from the compiled lib/. */
function projectRoot(): string {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'bin', 'main'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`bin/main not found above ${__dirname}`);
  }
}

export const ROOT = projectRoot();
export const MAIN = path.join(ROOT, 'bin', 'main');

/** The node flags bin/main's first line gives node (`#!/usr/bin/env -S node …`): what the image runs it with. */
function mainNodeFlags(): string[] {
  const shebang = fs.readFileSync(MAIN, 'utf8').split('\n', 1)[0];
  return shebang
    .replace(/^#!\S+\s+-S\s+node\b/, '')
    .split(/\s+/)
    .filter(Boolean);
}

/** The arguments of node that run bin/main with `args`, as the image does. */
export function binMainArgv(args: readonly string[]): string[] {
  return [...mainNodeFlags(), MAIN, ...args];
}

/** Starts bin/main with `args` in a process of its own (node with bin/main's flags), in the project's root. */
export function spawnBinMain(args: readonly string[], options: SpawnOptions = {}): ChildProcess {
  return spawn(process.execPath, binMainArgv(args), {cwd: ROOT, ...options});
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** The child's end (once its stdio closed); at once if it has ended already. Fails if it could not start. */
export function exited(child: ChildProcess): Promise<Exit> {
  if (child.exitCode !== null || child.signalCode !== null)
    return Promise.resolve({code: child.exitCode, signal: child.signalCode});
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({code, signal}));
  });
}
