/** A row of the console's read model (read-model.ts), shared by the queue's filters (queue.ts). */
import type { BreakSummary } from '../breaks/break-summary.js';

/** One observing run of a break: its run, the as-of it measured at, and whether the age then passed the SLA. */
export interface RowObservation {
  readonly run_id: string;
  readonly as_of: string | null;
  readonly breached: boolean | null;
}

/** A queue row: the break's summary and what the console filters, sorts and counts on. */
export interface QueueRow extends BreakSummary {
  /** Age in microseconds (exact), null when unknown. */
  readonly age_us: bigint | null;
  /** Pending proposals waiting for a countersignature (their approvers). */
  readonly pending: readonly { version: number; to_state: string; actor: string; approver: string | null }[];
  /** Wall-clock time of the first observation (first seen) and of the last one. */
  readonly first_seen: string | null;
  readonly last_observed: string | null;
  /** The last observation's difference detail (exact amounts and quantities as the control wrote them). */
  readonly detail: string | null;
  readonly observations: readonly RowObservation[];
}
