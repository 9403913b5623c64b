// The API simulator in its own process (started by the benchmark with fork()), so that generating
// and serving a 400 MB export does not take event-loop time from the connector being measured.
// Options come as JSON in BENCH_SIM_OPTIONS; it reports 'ready' with its URLs and the quests' export
// headers over IPC, answers 'stats' with the request log and 'exports' with the created exports,
// adds responses and changes faults on request, and closes on 'close' or when the benchmark goes away.

import {QuestConfig, startSimulator, Simulator} from '../../simulator';
import {SimCommand, SimProcessOptions, SimReply} from './types';

function send(reply: SimReply): void {
  process.send?.(reply);
}

/**
 * The export header of each quest. It follows from the quest's columns and titles only, not from its
 * rows, so a throwaway simulator with one row a quest gives it without generating a large quest's rows.
 */
async function headersOf(quests: readonly QuestConfig[]): Promise<Record<string, string[]>> {
  const probe = await startSimulator({
    quests: quests.map((q) => {
      const rest: QuestConfig = {...q, rows: 1};
      delete rest.createdAt;
      delete rest.firstCreatedAt;
      return rest;
    }),
  });
  try {
    return Object.fromEntries(quests.map((q) => [q.id, probe.groundTruth(q.id).header]));
  } finally {
    await probe.close();
  }
}

async function main(): Promise<void> {
  if (!process.send) throw new Error('sim-process must be started with an IPC channel (fork)');
  const options = JSON.parse(process.env.BENCH_SIM_OPTIONS ?? '') as SimProcessOptions;
  const headers = await headersOf(options.quests);
  const sim: Simulator = await startSimulator({
    seed: options.seed ?? 42,
    quests: options.quests,
    exportDurationMs: options.exportDurationMs,
    exportMsPerThousandRows: options.exportMsPerThousandRows,
    tokenLifetimeSeconds: options.tokenLifetimeSeconds,
    faults: options.faults,
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
    try {
      switch (message.type) {
        case 'stats':
          send({type: 'stats', stats: sim.stats(), requests: sim.requests()});
          break;
        case 'exports':
          send({type: 'exports', exports: sim.exports()});
          break;
        case 'addResponses':
          sim.addResponses(message.questId, message.count);
          send({type: 'done', command: message.type});
          break;
        case 'setFaults':
          sim.setFaults(message.faults);
          send({type: 'done', command: message.type});
          break;
        case 'close':
          close();
          break;
      }
    } catch (err) {
      send({type: 'error', message: err instanceof Error ? err.message : String(err)});
    }
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
      headers,
    },
  });
}

main().catch((err: unknown) => {
  send({type: 'error', message: err instanceof Error ? err.message : String(err)});
  process.exit(2);
});
