import fs from 'fs';
import path from 'path';

import {tempDir} from './connector';

/**
 * Measures the peak RSS of a connector process exactly, whatever runs it: a preload (NODE_OPTIONS
 * --require) writes the process's maximum resident set size (getrusage, what /usr/bin/time -v calls
 * "Maximum resident set size") to a file as the process exits. Polling /proc from outside could miss
 * a peak in the last moments before exit, which is where a failing read peaks.
 */
export function peakRssProbe(): {env: Record<string, string>; peakMiB(): number} {
  const dir = tempDir('questback-rss-');
  const out = path.join(dir, 'peak-rss-kb');
  const preload = path.join(dir, 'peak-rss.js');
  fs.writeFileSync(
    preload,
    `process.on('exit', () => require('fs').writeFileSync(${JSON.stringify(out)}, String(process.resourceUsage().maxRSS)));\n`
  );
  const inherited = process.env.NODE_OPTIONS ? `${process.env.NODE_OPTIONS} ` : '';
  return {
    env: {NODE_OPTIONS: `${inherited}--require ${preload}`},
    peakMiB: () => Number(fs.readFileSync(out, 'utf8')) / 1024,
  };
}
