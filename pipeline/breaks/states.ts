/**
 * Break states (CONTRACT §5), difference dispositions (CONTRACT §7) and classifications. These are
 * published values: they never change meaning once written into a break log or an output table.
 *
 * The lifecycle is strictly ordered. A person (or, for VERIFIED only, the pipeline) moves a break
 * exactly one step forward: OPEN → TRIAGED → CONTAINED → CORRECTED → VERIFIED → CLOSED. No step is
 * skipped (not even CONTAINED: a break that needs no containment records that under dual control),
 * nothing moves backward, and only a run that observes the difference again moves VERIFIED or
 * CLOSED back to OPEN. See docs/breaks.md for why.
 */
import { BreakState, Disposition } from '../../manifests/v1/schema.js';

export type { BreakState, Disposition } from '../../manifests/v1/schema.js';

/** Break states in lifecycle order; the manifest schema (manifests/v1/schema.ts) defines them. */
export const BREAK_STATES = BreakState.options;

/** Dispositions of a difference (CONTRACT §7); the manifest schema defines them. */
export const DISPOSITIONS = Disposition.options;

export const CLASSIFICATIONS = ['TIMING', 'DUPLICATE', 'MISSING', 'VALUE', 'EXTERNAL'] as const;
export type Classification = (typeof CLASSIFICATIONS)[number];

/** The one state a person may move a break to from each state; CLOSED has none (only a run reopens it). */
export const NEXT_STATE: Readonly<Record<BreakState, BreakState | null>> = {
  OPEN: 'TRIAGED',
  TRIAGED: 'CONTAINED',
  CONTAINED: 'CORRECTED',
  CORRECTED: 'VERIFIED',
  VERIFIED: 'CLOSED',
  CLOSED: null,
};

/** States from which a new observation of the difference reopens the break as OPEN (CONTRACT §5). */
export const REOPENABLE_STATES: readonly BreakState[] = ['VERIFIED', 'CLOSED'];

/** True when `s` is one of BREAK_STATES. */
export function isBreakState(s: string): s is BreakState {
  return (BREAK_STATES as readonly string[]).includes(s);
}

/** True when `s` is one of CLASSIFICATIONS. */
export function isClassification(s: string): s is Classification {
  return (CLASSIFICATIONS as readonly string[]).includes(s);
}
