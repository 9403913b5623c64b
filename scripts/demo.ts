/**
 * The quick-start demo: starts the bundled simulator of the Export API, runs the real connector
 * (bin/main) against it — check, discover, a first incremental sync, new responses, a second sync
 * from the saved state — and shows what a destination would receive.
 */
import {spawn} from 'child_process';
import fs from 'fs';
import os from 'os';
import path from 'path';

import {startSimulator} from '../test/simulator';

const MAIN = path.resolve(__dirname, '..', '..', 'bin', 'main');

interface Message {
  type: string;
  record?: {stream: string; data: Record<string, unknown>};
  state?: {stream: {stream_descriptor: {name: string}; stream_state: unknown}; sourceStats: {recordCount: number}};
  connectionStatus?: {status: string; message?: string};
  catalog?: {
    streams: {name: string; json_schema: {properties: Record<string, unknown>}; default_cursor_field?: string[]}[];
  };
  trace?: {type: string; error?: {message: string}};
  log?: {level: string; message: string};
}

function run(args: string[]): Promise<{code: number | null; messages: Message[]}> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, ...args], {stdio: ['ignore', 'pipe', 'inherit']});
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({
        code,
        messages: out
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Message),
      })
    );
  });
}

function summarize(title: string, messages: Message[]): unknown[] {
  const counts = new Map<string, number>();
  for (const m of messages) if (m.record) counts.set(m.record.stream, (counts.get(m.record.stream) ?? 0) + 1);
  const finalState = new Map<string, unknown>();
  for (const m of messages)
    if (m.state) finalState.set(m.state.stream.stream_descriptor.name, m.state.stream.stream_state);
  console.log(`\n== ${title}`);
  for (const [stream, state] of finalState) {
    console.log(`   ${stream}: ${counts.get(stream) ?? 0} records, final state ${JSON.stringify(state)}`);
  }
  for (const m of messages) if (m.trace?.error) console.log(`   ERROR: ${m.trace.error.message}`);
  return [...finalState.entries()].map(([name, stream_state]) => ({
    type: 'STREAM',
    stream: {stream_descriptor: {name}, stream_state},
  }));
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'questback-demo-'));
  const sim = await startSimulator({
    seed: 2026,
    exportDurationMs: 1500,
    quests: [
      {
        id: '3f6c1a52-8d4e-4b7a-9c21-5e0d7f8a1b34',
        rows: 120,
        firstCreatedAt: new Date(Date.now() - 45 * 86_400_000).toISOString(),
      },
      {
        id: 'a9e27c40-1b5d-4f83-8e6a-0c4d92b7f615',
        rows: 75,
        columns: 10,
        firstCreatedAt: new Date(Date.now() - 20 * 86_400_000).toISOString(),
      },
    ],
  });
  try {
    console.log(`Simulator of the Questback Export API at ${sim.apiUrl} (files in ${dir})`);
    const config = {
      client_id: sim.clientId,
      client_secret: sim.clientSecret,
      api_url: sim.apiUrl,
      auth_url: sim.authUrl,
      quest_ids: sim.quests.map((q) => q.id),
      start_date: new Date(Date.now() - 60 * 86_400_000).toISOString().replace(/\.\d+Z$/, 'Z'),
      settle_seconds: 0,
    };
    const configFile = path.join(dir, 'config.json');
    fs.writeFileSync(configFile, JSON.stringify(config, null, 2));

    const check = await run(['check', '--config', configFile]);
    const status = check.messages.find((m) => m.connectionStatus)?.connectionStatus;
    console.log(`\n== check: ${status?.status}${status?.message ? ` - ${status.message}` : ''}`);
    if (status?.status !== 'SUCCEEDED') throw new Error('check failed');

    const discover = await run(['discover', '--config', configFile]);
    const streams = discover.messages.find((m) => m.catalog)?.catalog?.streams ?? [];
    console.log('\n== discover');
    for (const s of streams)
      console.log(
        `   ${s.name}: ${Object.keys(s.json_schema.properties).length} fields, cursor ${s.default_cursor_field?.join('.')}`
      );
    const catalog = {
      streams: streams.map((stream) => ({
        stream,
        sync_mode: 'incremental',
        cursor_field: stream.default_cursor_field,
        destination_sync_mode: 'append',
      })),
    };
    const catalogFile = path.join(dir, 'catalog.json');
    fs.writeFileSync(catalogFile, JSON.stringify(catalog, null, 2));

    const first = await run(['read', '--config', configFile, '--catalog', catalogFile]);
    const state = summarize(`first sync (exit code ${first.code})`, first.messages);
    const sample = first.messages.find((m) => m.record)?.record;
    if (sample)
      console.log(`   a record of ${sample.stream}:\n${JSON.stringify(sample.data, null, 2).replace(/^/gm, '     ')}`);
    const stateFile = path.join(dir, 'state.json');
    fs.writeFileSync(stateFile, JSON.stringify(state, null, 2));

    sim.addResponses(sim.quests[0].id, 4);
    sim.addResponses(sim.quests[1].id, 2);
    console.log('\n== 4 + 2 new responses arrive on the service');
    await new Promise((r) => setTimeout(r, 20));
    const second = await run(['read', '--config', configFile, '--catalog', catalogFile, '--state', stateFile]);
    summarize(`second sync from the saved state (exit code ${second.code}): only the new responses`, second.messages);
    console.log(
      `\nThe config, catalog and state files are in ${dir}; run bin/main yourself with them while a simulator runs (npm run simulator).`
    );
    if (first.code !== 0 || second.code !== 0) process.exitCode = 1;
  } finally {
    await sim.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
