// Peak memory and CPU time of a node process, as the process itself measures them when it exits: a
// preload (NODE_OPTIONS --require) writes process.resourceUsage() (getrusage: the maximum resident
// set size /usr/bin/time reports, and the CPU time of all threads) to a file. Exact, whatever runs
// the process; polling /proc from outside could miss a peak in the last moments before exit, which
// is where a failing read peaks. For the tests that bound memory and the benchmark.

import fs from 'fs';
import path from 'path';

export interface Usage {
  peakRssKb: number;
  userS: number;
  sysS: number;
}

export interface UsageProbe {
  /** The environment that makes a node process report its usage. */
  env: Record<string, string>;
  /** What the process reported as it exited; undefined if it did not get to (SIGKILL). */
  read(): Usage | undefined;
}

/** A probe whose preload and report live in `dir`. */
export function usageProbe(dir: string): UsageProbe {
  const out = path.join(dir, `usage-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}.json`);
  const preload = `${out}.js`;
  fs.writeFileSync(
    preload,
    `process.on('exit', () => {
  const u = process.resourceUsage();
  require('fs').writeFileSync(${JSON.stringify(out)}, JSON.stringify({peakRssKb: u.maxRSS, userS: u.userCPUTime / 1e6, sysS: u.systemCPUTime / 1e6}));
});\n`
  );
  const inherited = process.env.NODE_OPTIONS ? `${process.env.NODE_OPTIONS} ` : '';
  return {
    env: {NODE_OPTIONS: `${inherited}--require ${preload}`},
    read: () => (fs.existsSync(out) ? (JSON.parse(fs.readFileSync(out, 'utf8')) as Usage) : undefined),
  };
}
