// Runs the probe in-process against an in-process simulator: each variant starts its own simulator
// with the dialect switches, faults and quest settings it names.

import {AirbyteLogLevel} from 'faros-airbyte-cdk/lib/protocol';
import {PassThrough} from 'stream';

import {mapLimited} from '../../src/core/concurrency';
import {parseConfig} from '../../src/core/config';
import {LIMITS} from '../../src/core/limits';
import {AssumptionId} from '../../src/probe/assumptions';
import {Verdict} from '../../src/probe/verdict';
import {ProbeResult, runProbe} from '../../src/probe/probe';
import {renderReport} from '../../src/probe/report';
import {ConnectorLogger} from '../../src/protocol/logger';
import {MessageWriter} from '../../src/protocol/output';
import {
  DialectOptions,
  FaultOptions,
  InvitationListOptions,
  QuestConfig,
  SimulatorOptions,
  startSimulator,
} from '../../simulator';
import {TestClock} from './clock';
import {simConfig} from './fixtures';

export const PROBED_QUEST = 'b0b0b0b0-0000-4000-8000-000000000001';

export interface Variant {
  dialect?: DialectOptions;
  faults?: FaultOptions;
  quest?: Partial<QuestConfig>;
  simulator?: Pick<SimulatorOptions, 'relativeLocation' | 'exportDurationMs'>;
  invitationList?: InvitationListOptions;
}

export interface ProbeRun {
  result: ProbeResult;
  report: string;
  logs: string[];
  verdict(id: AssumptionId): Verdict;
  /** What must never reach a report or a log: the client secret, the client id, every token, every cell. */
  secrets: {clientId: string; clientSecret: string; tokens: string[]; cells: string[]};
}

/**
 * A probe of a quest of 60 responses over the last three days, on a simulator answering as `variant`
 * says, its files kept in memory. Both run on one virtual clock: an export takes a second of it unless
 * the variant says otherwise, so polls see the status records of its generation (PENDING, then
 * INPROGRESS) however busy the machine, and the waits take no real time.
 */
export async function probe(variant: Variant = {}): Promise<ProbeRun> {
  const clock = new TestClock(11);
  const sim = await startSimulator({
    seed: 11,
    clock,
    files: 'memory',
    exportDurationMs: 1000,
    quests: [
      {
        id: PROBED_QUEST,
        rows: 60,
        columns: 8,
        firstCreatedAt: new Date(Date.now() - 3 * 86_400_000).toISOString(),
        // More than a page of invitations: the probe can tell whether take is honoured up to 1000.
        invitations: 1200,
        ...variant.quest,
      },
    ],
    faults: variant.faults,
    dialect: variant.dialect,
    invitationList: variant.invitationList,
    ...variant.simulator,
  });
  try {
    const out = new PassThrough();
    const text: string[] = [];
    out.on('data', (chunk: Buffer) => text.push(chunk.toString('utf8')));
    const writer = new MessageWriter(out);
    const logger = new ConnectorLogger(writer, AirbyteLogLevel.DEBUG);
    const {config} = parseConfig(simConfig(sim), clock.now());
    // The longest budget: the clock runs at least as fast as real time, and a busy machine (probes
    // side by side) used a shorter one up in real time, skipping the later exports.
    const result = await runProbe(
      config,
      {questId: PROBED_QUEST, budgetMs: LIMITS.probe.maxBudgetMs, maxRows: 10_000},
      {runtime: clock, logger, onSecret: () => undefined}
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
export interface ProbeCache {
  (variant: Variant): Promise<ProbeRun>;
  /**
   * Probes the variants `at once` at a time, ahead of the tests that ask for them: each probe mostly
   * waits (for answers, and for its clock to jump), so probes side by side take little more than one.
   * A probe that fails fails only the tests that ask for it.
   */
  prefetch(variants: readonly Variant[], atOnce: number): Promise<void>;
}

export function probeCache(): ProbeCache {
  const runs = new Map<string, Promise<ProbeRun>>();
  const run = (variant: Variant): Promise<ProbeRun> => {
    const key = JSON.stringify(variant);
    let started = runs.get(key);
    if (!started) {
      started = probe(variant);
      // Awaited by the tests that ask for it; until then a failure must not count as unhandled.
      started.catch(() => undefined);
      runs.set(key, started);
    }
    return started;
  };
  run.prefetch = async (variants: readonly Variant[], atOnce: number): Promise<void> => {
    await mapLimited(variants, atOnce, (variant) =>
      run(variant).then(
        () => undefined,
        () => undefined
      )
    );
  };
  return run;
}
