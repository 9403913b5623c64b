/**
 * The quick-start demo: starts the bundled simulator of the Export API, runs the real connector
 * (bin/main) against it — check, discover, a first incremental sync, new responses, a second sync
 * from the saved state — and shows what a destination would receive. It then saves the config, the
 * configured catalog and the final state in ./demo-output/ and prints the commands that continue
 * from there against the long-running simulator (`npm run simulator`).
 *
 * The demo's simulator is the one `npm run simulator` starts (same port 8717, seed, credentials,
 * quest ids and columns), so the saved files work against it unchanged. `npm run demo -- --port N`
 * takes another port, as `npm run simulator -- --port N` does (0: a free one); the next steps then
 * name it.
 */
import fs from 'fs';
import path from 'path';
import {parseArgs} from 'util';

import {exited, ROOT, spawnBinMain} from '../harness/bin-main';
import {Simulator, startSimulator} from '../simulator';
import {connectorConfig, DEFAULT_PORT} from '../simulator/cli-app';

/** Where the files for the next steps go, relative to the project root (in .gitignore). */
const OUTPUT = 'demo-output';
const FILES = {
  config: `${OUTPUT}/config.json`,
  catalog: `${OUTPUT}/configured_catalog.json`,
  state: `${OUTPUT}/state.json`,
};

/** A failure the demo explains itself: printed without a stack. */
class DemoError extends Error {}

const USAGE = `usage: npm run demo [-- --port N] (the simulator's port: default ${DEFAULT_PORT}, 0 = a free one)`;

/** The simulator's port from the command line: `--port N` or `--port=N`, checked as the simulator checks it. */
function portArg(argv: string[]): number {
  let text: string | undefined;
  try {
    text = parseArgs({args: argv, options: {port: {type: 'string'}}, strict: true}).values.port;
  } catch (err) {
    throw new DemoError(`${(err as Error).message}\n${USAGE}`);
  }
  if (text === undefined) return DEFAULT_PORT;
  const port = Number(text);
  if (text.trim() === '' || !Number.isInteger(port) || port < 0 || port > 65_535)
    throw new DemoError(`--port needs an integer from 0 to 65535, not ${JSON.stringify(text)}\n${USAGE}`);
  return port;
}

interface Message {
  type: string;
  record?: {stream: string; data: Record<string, unknown>};
  state?: {stream: {stream_descriptor: {name: string}; stream_state: unknown}; sourceStats: {recordCount: number}};
  connectionStatus?: {status: string; message?: string};
  catalog?: {
    streams: {
      name: string;
      json_schema: {properties: Record<string, unknown>};
      supported_sync_modes: string[];
      default_cursor_field?: string[];
      source_defined_primary_key?: string[][];
    }[];
  };
  trace?: {type: string; error?: {message: string}};
  log?: {level: string; message: string};
}

interface StreamState {
  type: 'STREAM';
  stream: {stream_descriptor: {name: string}; stream_state: unknown};
}

async function run(args: string[]): Promise<{code: number | null; messages: Message[]}> {
  // From the project root (spawnBinMain's cwd), with the same relative paths the printed next steps use.
  const child = spawnBinMain(args, {stdio: ['ignore', 'pipe', 'inherit']});
  let out = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (out += d));
  const {code} = await exited(child);
  const messages = out
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Message);
  return {code, messages};
}

/** Prints records and the last state per stream; returns the state file `previous` updated by this sync. */
function summarize(title: string, messages: Message[], previous: StreamState[] = []): StreamState[] {
  const counts = new Map<string, number>();
  for (const m of messages) if (m.record) counts.set(m.record.stream, (counts.get(m.record.stream) ?? 0) + 1);
  const synced = new Map<string, unknown>();
  for (const m of messages) if (m.state) synced.set(m.state.stream.stream_descriptor.name, m.state.stream.stream_state);
  console.log(`\n== ${title}`);
  for (const [stream, state] of synced) {
    // A long state (the columns stream remembers every column) is cut for the screen; state.json has it whole.
    const text = JSON.stringify(state);
    const shown = text.length > 240 ? `${text.slice(0, 240)}… (${text.length} characters)` : text;
    console.log(`   ${stream}: ${counts.get(stream) ?? 0} records, final state ${shown}`);
  }
  for (const m of messages) if (m.trace?.error) console.log(`   ERROR: ${m.trace.error.message}`);
  const merged = new Map(previous.map((s) => [s.stream.stream_descriptor.name, s.stream.stream_state]));
  for (const [name, state] of synced) merged.set(name, state);
  return [...merged.entries()].map(([name, stream_state]) => ({
    type: 'STREAM',
    stream: {stream_descriptor: {name}, stream_state},
  }));
}

function write(file: string, value: unknown): void {
  fs.writeFileSync(path.join(ROOT, file), `${JSON.stringify(value, null, 2)}\n`);
}

async function start(port: number): Promise<Simulator> {
  try {
    // What `npm run simulator` starts: default seed, quests and credentials, on its port.
    return await startSimulator({port});
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      throw new DemoError(
        `Port ${port} is in use, perhaps by a simulator started with npm run simulator. The demo runs its own simulator on that port: stop the other one (Ctrl+C in its terminal), or give the demo another port (npm run demo -- --port N; 0 = a free one).`
      );
    }
    throw err;
  }
}

/** What to run next; `port` is the demo simulator's, which the saved config names. */
function nextSteps(port: number): string[] {
  const portFlag = port === DEFAULT_PORT ? '' : ` --port ${port}`;
  const read = `bin/main read --config ${FILES.config} --catalog ${FILES.catalog} --state ${FILES.state}`;
  return [
    '',
    `== Saved in ${OUTPUT}/ (in the project root, ${ROOT})`,
    `   ${FILES.config.padEnd(38)} the connection settings (client id and secret of the simulator, its address on port ${port}, the quest ids)`,
    `   ${FILES.catalog.padEnd(38)} the streams to sync, as discover listed them (what Airbyte passes to read)`,
    `   ${FILES.state.padEnd(38)} where each stream stopped after the second sync above`,
    '',
    '== Next steps: run the connector yourself. From the project root:',
    '',
    `   1. Start the simulator, in a second terminal (it runs until Ctrl+C; port ${port}, same data setup as the demo):`,
    '',
    `        npm run simulator --${portFlag} --write-config ${FILES.config}`,
    '',
    '   2. Back in this terminal, check the connection and sync from where the demo stopped:',
    '',
    `        bin/main check --config ${FILES.config}`,
    `        ${read}`,
    '',
    "      The read continues from the saved state: it takes only responses newer than the demo's last sync. The simulator",
    '      makes its data afresh when it starts, so expect few or none; leave out --state … to read everything again.',
    '',
    '   3. Before a first sync of the real service, the probe checks what the connector assumes about it and writes a',
    '      report to send to Questback support; try it on the simulator:',
    '',
    `        bin/main probe --config ${FILES.config} --report ${OUTPUT}/probe-report.md`,
    '',
    '   4. Then:',
    '      - read the user guide, docs/questback.md: every option, sync modes, troubleshooting by error message;',
    '      - build the Docker image:   docker build -t airbyte/source-questback:dev .',
    '      - add it to Airbyte as a custom connector: Settings → Sources → + New connector → Add a new Docker connector,',
    '        with image airbyte/source-questback and tag dev (the image must be where your Airbyte can pull it from),',
    '        then create a source with your Questback API login and quest ids.',
  ];
}

async function main(): Promise<void> {
  const sim = await start(portArg(process.argv.slice(2)));
  let ok = false;
  try {
    console.log(`Simulator of the Questback Export API at ${sim.apiUrl} (stopped when the demo ends)`);
    fs.mkdirSync(path.join(ROOT, OUTPUT), {recursive: true});
    // The same config `npm run simulator -- --write-config FILE` writes, so the saved one keeps working.
    write(FILES.config, connectorConfig(sim));

    const check = await run(['check', '--config', FILES.config]);
    const status = check.messages.find((m) => m.connectionStatus)?.connectionStatus;
    console.log(`\n== check: ${status?.status}${status?.message ? ` - ${status.message}` : ''}`);
    if (status?.status !== 'SUCCEEDED') throw new DemoError('The check failed (see above).');

    const discover = await run(['discover', '--config', FILES.config]);
    const streams = discover.messages.find((m) => m.catalog)?.catalog?.streams ?? [];
    console.log('\n== discover');
    for (const s of streams) {
      const fields = Object.keys(s.json_schema.properties).length;
      const modes = s.default_cursor_field ? `cursor ${s.default_cursor_field.join('.')}` : 'full refresh only';
      console.log(`   ${s.name}: ${fields} fields, ${modes}`);
    }
    if (streams.length === 0) throw new DemoError('discover returned no streams (see the errors above).');
    // As the guide recommends: Incremental | Append + Deduped for every stream with a cursor (Append without a
    // primary key); Full refresh | Overwrite for a stream that offers only full refresh (invitations).
    write(FILES.catalog, {
      streams: streams.map((stream) =>
        stream.supported_sync_modes.includes('incremental')
          ? {
              stream,
              sync_mode: 'incremental',
              cursor_field: stream.default_cursor_field,
              ...(stream.source_defined_primary_key?.length
                ? {destination_sync_mode: 'append_dedup', primary_key: stream.source_defined_primary_key}
                : {destination_sync_mode: 'append'}),
            }
          : {stream, sync_mode: 'full_refresh', destination_sync_mode: 'overwrite'}
      ),
    });

    const first = await run(['read', '--config', FILES.config, '--catalog', FILES.catalog]);
    const firstState = summarize(`first sync (exit code ${first.code})`, first.messages);
    const sample = first.messages.find((m) => m.record)?.record;
    if (sample)
      console.log(`   a record of ${sample.stream}:\n${JSON.stringify(sample.data, null, 2).replace(/^/gm, '     ')}`);
    write(FILES.state, firstState);

    sim.addResponses(sim.quests[0].id, 4);
    sim.addResponses(sim.quests[1].id, 2);
    console.log('\n== 4 + 2 new responses arrive on the service');
    await new Promise((r) => setTimeout(r, 20));
    const second = await run(['read', '--config', FILES.config, '--catalog', FILES.catalog, '--state', FILES.state]);
    const finalState = summarize(
      `second sync from the saved state (exit code ${second.code}): only the new responses`,
      second.messages,
      firstState
    );
    // The state after the last sync: the next read continues from here.
    write(FILES.state, finalState);
    ok = first.code === 0 && second.code === 0;
  } finally {
    await sim.close();
  }
  if (!ok) {
    console.log('\nA sync failed (see the errors above); the files in demo-output/ may be incomplete.');
    process.exitCode = 1;
    return;
  }
  console.log(nextSteps(Number(new URL(sim.apiUrl).port)).join('\n'));
}

main().catch((err) => {
  console.error(err instanceof DemoError ? err.message : err);
  process.exitCode = 1;
});
