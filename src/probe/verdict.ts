import {TimeWindow} from '../core/time';
import {AssumptionId} from './assumptions';
import {FileSample} from './file-sample';
import {InvitationFacts} from './invitation-probe';
import {AnswerLog} from './observer';

// A verdict on one assumption, the facts the verdicts are judged from, and the means every judge shares.

export type VerdictState = 'confirmed' | 'contradicted' | 'unknown';

export interface Verdict {
  id: AssumptionId;
  state: VerdictState;
  /** What the probe saw: shapes and counts, never a value of a response, a secret or a token. */
  seen: string;
}

export type ExportPurpose = 'sample' | 'wider sample' | 'boundary' | 'empty window';

/** One export the probe made, and how far it got. */
export interface ExportRun {
  purpose: ExportPurpose;
  window: TimeWindow;
  exportId?: string;
  /** How far it got: read (its file, or part of it), or where it stopped. */
  outcome: 'read' | 'not created' | 'failed' | 'vanished' | 'not ready in time' | 'gone' | 'not read';
  problem?: string;
  generationMs?: number;
  polls: number;
  file?: FileSample;
}

/** The two responses of the boundary export: whether the one at `since` and the one at `until` were in it. */
export type BoundaryFacts = {tested: true; sinceRow: boolean; untilRow: boolean} | {tested: false; why: string};

export interface ProbeFacts {
  apiUrl: string;
  /** The configured field_separator's name and character. */
  separator: {name: string; char: string};
  log: AnswerLog;
  exports: ExportRun[];
  boundary: BoundaryFacts;
  /** What the invitations list showed (invitation-probe.ts). */
  invitations: InvitationFacts;
}

export const confirmed = (id: AssumptionId, seen: string): Verdict => ({id, state: 'confirmed', seen});
export const contradicted = (id: AssumptionId, seen: string): Verdict => ({id, state: 'contradicted', seen});
export const unknown = (id: AssumptionId, seen: string): Verdict => ({id, state: 'unknown', seen});

export const unique = <T>(items: readonly T[]): T[] => [...new Set(items)];

/** How often each item occurs, for `tally` (shapes.ts). */
export const counts = (items: readonly string[]): Map<string, number> => {
  const map = new Map<string, number>();
  for (const item of items) map.set(item, (map.get(item) ?? 0) + 1);
  return map;
};

export function isRecord(value: unknown): value is Record<string, unknown> {
  return !!value && typeof value === 'object' && !Array.isArray(value);
}
