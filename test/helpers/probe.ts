// Runs the probe in-process against an in-process simulator: each variant starts its own simulator
// with the dialect switches, faults and quest settings it names.

import {AirbyteLogLevel} from 'faros-airbyte-cdk/lib/protocol';
import {PassThrough} from 'stream';

import {parseConfig} from '../../src/core/config';
import {abortableSleep, Runtime} from '../../src/core/runtime';
import {AssumptionId} from '../../src/probe/assumptions';
import {Verdict} from '../../src/probe/judge';
import {ProbeResult, runProbe} from '../../src/probe/probe';
import {renderReport} from '../../src/probe/report';
import {ConnectorLogger} from '../../src/protocol/logger';
import {MessageWriter} from '../../src/protocol/output';
import {DialectOptions, FaultOptions, QuestConfig, SimulatorOptions, startSimulator} from '../../simulator';
import {simConfig} from './fixtures';

export const PROBED_QUEST = 'b0b0b0b0-0000-4000-8000-000000000001';

export interface Variant {
  dialect?: DialectOptions;
  faults?: FaultOptions;
  quest?: Partial<QuestConfig>;
  simulator?: Pick<SimulatorOptions, 'relativeLocation' | 'exportDurationMs'>;
}

export interface ProbeRun {
  result: ProbeResult;
  report: string;
  logs: string[];
  verdict(id: AssumptionId): Verdict;
  /** What must never reach a report or a log: the client secret, the client id, every token, every cell. */
  secrets: {clientId: string; clientSecret: string; tokens: string[]; cells: string[]};
}

/** Real time, but sleeps of at most 15 ms: polls see PENDING and INPROGRESS of short exports quickly. */
const quickRuntime: Runtime = {
  now: () => Date.now(),
  sleep: (ms, signal) => abortableSleep(Math.min(ms, 15), signal),
  random: () => Math.random(),
};

/**
 * A probe of a quest of 60 responses over the last three days, on a simulator answering as `variant`
 * says. Exports take 90 ms unless the variant says otherwise (status records are seen only while an
 * export is being generated).
 */
export async function probe(variant: Variant = {}): Promise<ProbeRun> {
  const sim = await startSimulator({
    seed: 11,
    exportDurationMs: 90,
    quests: [
      {
        id: PROBED_QUEST,
        rows: 60,
        columns: 8,
        firstCreatedAt: new Date(Date.now() - 3 * 86_400_000).toISOString(),
        ...variant.quest,
      },
    ],
    faults: variant.faults,
    dialect: variant.dialect,
    ...variant.simulator,
  });
  try {
    const out = new PassThrough();
    const text: string[] = [];
    out.on('data', (chunk: Buffer) => text.push(chunk.toString('utf8')));
    const writer = new MessageWriter(out);
    const logger = new ConnectorLogger(writer, AirbyteLogLevel.DEBUG);
    const {config} = parseConfig(simConfig(sim), Date.now());
    const result = await runProbe(
      config,
      {questId: PROBED_QUEST, budgetMs: 60_000, maxRows: 10_000},
      {runtime: quickRuntime, logger, onSecret: () => undefined}
    );
    await writer.flush();
    const truth = sim.groundTruth(PROBED_QUEST);
    return {
      result,
      report: renderReport(result, 'source-questback test'),
      logs: text.join('').split('\n').filter(Boolean),
      verdict: (id) => {
        const v = result.verdicts.find((x) => x.id === id);
        if (!v) throw new Error(`no verdict ${id}`);
        return v;
      },
      secrets: {
        clientId: sim.clientId,
        clientSecret: sim.clientSecret,
        tokens: sim.issuedTokens(),
        cells: truth.rows.flat(),
      },
    };
  } finally {
    await sim.close();
  }
}

/** Probes each distinct variant once, however many tests ask for it. */
export function probeCache(): (variant: Variant) => Promise<ProbeRun> {
  const runs = new Map<string, Promise<ProbeRun>>();
  return (variant) => {
    const key = JSON.stringify(variant);
    let run = runs.get(key);
    if (!run) {
      run = probe(variant);
      runs.set(key, run);
    }
    return run;
  };
}
