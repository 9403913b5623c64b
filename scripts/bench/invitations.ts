// The "Invitations" section: one quest's invitations read whole by `bin/main read` (the invitations
// stream alone, full refresh) into a counting consumer: invitations per second, the list requests per
// 1,000 invitations, and the connector's peak RSS, which must stay flat in the number of invitations.

import path from 'path';

import {binMainArgv} from '../../harness/bin-main';
import {runPiped, SimChild} from './proc';
import {iso, mib, Row, s, thousands} from './report';
import {checkRun, connectorConfig, DAY_MS, discoverCatalog, writeJson} from './scenario';
import type {BenchContext, Section} from './types';

const TITLE = 'Invitations';
const INVITATIONS = Number(process.env.BENCH_INVITATIONS ?? 100_000);
const QUICK_INVITATIONS = 5_000;

async function invitations(ctx: BenchContext, rows: Row[]): Promise<void> {
  const {tmpDir, progress} = ctx;
  const count = ctx.quick ? QUICK_INVITATIONS : INVITATIONS;
  const questId = 'b16e0000-0000-4000-8000-0000000000b1';
  progress(`invitations: starting a simulator with one quest of ${thousands(count)} invitations`);
  const sim = await SimChild.start({
    quests: [{id: questId, rows: 10, invitations: count, firstCreatedAt: iso(Date.now() - 30 * DAY_MS)}],
    dataDir: path.join(tmpDir, 'sim-invitations'),
  });
  try {
    const config = writeJson(
      tmpDir,
      'invitations-config.json',
      connectorConfig(sim.info, {start_date: '2020-01-01T00:00:00Z', stream_layout: 'combined'})
    );
    const {catalog} = await discoverCatalog(config, 120_000);
    const only = {
      streams: catalog.streams.filter((x) => (x as {stream: {name: string}}).stream.name === 'invitations'),
    };
    const catalogFile = writeJson(tmpDir, 'invitations-catalog.json', only);
    const before = (await sim.stats()).requests.filter((r) => r.route === 'invitations').length;
    progress('invitations: bin/main read');
    const run = await runPiped(binMainArgv(['read', '--config', config, '--catalog', catalogFile]), {
      timeoutMs: 20 * 60_000,
      label: 'invitations read',
      tmpDir,
    });
    checkRun('invitations read', run, count);
    const requests = (await sim.stats()).requests.filter((r) => r.route === 'invitations').length - before;
    const c = run.consumer;
    const streamMs = Math.max(1, c.endAt - (c.firstRecordAt ?? c.endAt));
    const p = run.producer;
    const section = TITLE;
    rows.push(
      {section, metric: 'invitations (one quest)', value: thousands(count)},
      {section, metric: 'first record to end', value: s(streamMs)},
      {section, metric: 'invitations/s', value: thousands((count / streamMs) * 1000)},
      {section, metric: 'list requests', value: String(requests)},
      {section, metric: 'list requests per 1,000 invitations', value: ((requests / count) * 1000).toFixed(2)},
      {
        section,
        metric: 'CPU time, user + sys',
        value: p.userS !== undefined && p.sysS !== undefined ? `${(p.userS + p.sysS).toFixed(1)} s` : 'n/a',
      },
      ...(ctx.quick
        ? [{section, metric: 'peak RSS', value: mib(p.peakRssKb)}]
        : [
            {
              section,
              metric: 'peak RSS',
              value: mib(p.peakRssKb),
              target: '<= 150 MiB',
              ...(p.peakRssKb !== undefined ? {met: p.peakRssKb <= 150 * 1024} : {}),
            },
          ])
    );
  } finally {
    await sim.close();
  }
}

function method(ctx: BenchContext): string {
  return [
    `One quest of ${thousands(ctx.quick ? QUICK_INVITATIONS : INVITATIONS)} invitations (the simulator's seeded Invitation model, added over 30 days),`,
    'read by `bin/main read` with the invitations stream alone (full refresh: every invitation, its statuses as of',
    'the sync) into a counting consumer process. invitations/s is the records over the time from the first RECORD line',
    'to the end of the output; list requests are the requests of the invitations list the simulator counted during the',
    'read (pages of 1,000, each after the first asking again for the last 50 of the one before, until a page brings',
    'nothing beyond them); peak RSS is the connector process.',
  ].join('\n');
}

export const INVITATIONS_SECTION: Section = {key: 'invitations', title: TITLE, method, run: invitations};
