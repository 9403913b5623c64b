// The API simulator in its own process (started by the benchmark with fork()), so that generating
// and serving a 400 MB export does not take event-loop time from the connector being measured.
// Options come as JSON in BENCH_SIM_OPTIONS; it reports 'ready' with its URLs over IPC, answers
// 'stats' with the request log, and closes on 'close' or when the benchmark goes away.

import {startSimulator, Simulator} from '../../test/simulator';
import {SimCommand, SimProcessOptions, SimReply} from './types';

function send(reply: SimReply): void {
  process.send?.(reply);
}

async function main(): Promise<void> {
  if (!process.send) throw new Error('sim-process must be started with an IPC channel (fork)');
  const options = JSON.parse(process.env.BENCH_SIM_OPTIONS ?? '') as SimProcessOptions;
  const sim: Simulator = await startSimulator({
    seed: options.seed ?? 42,
    quests: options.quests,
    exportDurationMs: options.exportDurationMs,
    dataDir: options.dataDir,
  });
  let closing = false;
  const close = (): void => {
    if (closing) return;
    closing = true;
    sim.close().then(
      () => process.exit(0),
      () => process.exit(1)
    );
  };
  process.on('message', (message: SimCommand) => {
    if (message.type === 'stats') send({type: 'stats', stats: sim.stats(), requests: sim.requests()});
    else if (message.type === 'close') close();
  });
  // The benchmark died or dropped us: do not linger.
  process.on('disconnect', close);
  process.on('SIGTERM', close);
  send({
    type: 'ready',
    info: {
      apiUrl: sim.apiUrl,
      authUrl: sim.authUrl,
      clientId: sim.clientId,
      clientSecret: sim.clientSecret,
      projectId: sim.projectId,
      questIds: sim.quests.map((q) => q.id),
    },
  });
}

main().catch((err: unknown) => {
  send({type: 'error', message: err instanceof Error ? err.message : String(err)});
  process.exit(2);
});
