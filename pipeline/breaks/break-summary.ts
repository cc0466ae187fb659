/**
 * A break's current picture derived from its log and observations (CONTRACT §5): state, owner,
 * classification, window, age and SLA. Pure: the configuration and control definitions are passed
 * in, and the clock is the as-of recorded by the runs, never the wall clock, so that two readers of
 * one store see the same ages.
 *
 * Age = as-of − first observation's record time, exact to the microsecond, where as-of is the
 * largest as-of among the runs that observed the break (the latest point at which it was known to
 * persist). The SLA is breached only when the age is strictly greater than it.
 */
import { slaSeconds, type Config } from '../config/config.js';
import { ownershipOf, type Ownership } from '../config/ownership.js';
import type { ControlDefinition } from '../controls/definitions.js';
import { formatMicros, formatScaled, parseTimestamp } from '../contract/values.js';
import type { BreakLog, BreakRecord, WindowText } from './break-store.js';
import { breakWindow, currentClassification, currentOwner } from './transitions.js';

/** What `reckon breaks list --json` prints per break, and the `breaks` output table holds. */
export interface BreakSummary extends Pick<BreakLog, 'break_id' | 'control_id' | 'kind' | 'key' | 'state' | 'version'> {
  /** The owner decided at triage; before triage, the configured owner of the control and kind (the team paged). */
  readonly owner: string | null;
  /** The configured owner of the control and kind: team, contact, paging route, runbook and its first step (config/ownership.ts); null for an unknown control. */
  readonly routing: Ownership | null;
  /** True once triage assigned the owner in the current cycle. */
  readonly owner_assigned: boolean;
  readonly classification: string | null;
  /** Wall-clock time of the first OPEN event. */
  readonly opened_at: string;
  /** Wall-clock time of the latest event (when the break entered its current state). */
  readonly state_since: string;
  /** How often a run reopened the break after VERIFIED or CLOSED. */
  readonly reopen_count: number;
  /** The window of the observation that opened or last reopened the break. */
  readonly window: WindowText | null;
  /** The first observation's record time (the window column of the record its key names). */
  readonly first_record_time: string | null;
  /** The clock of the age: the largest as-of among the observing runs. */
  readonly as_of: string | null;
  /** as_of − first_record_time in seconds, exact decimal text (`"270"`, `"0.000001"`). */
  readonly age_s: string | null;
  readonly sla_s: number | null;
  /** age > SLA, strictly; null when the age or the SLA is unknown. */
  readonly sla_breached: boolean | null;
  readonly observation_count: number;
  readonly last_observed_run_id: string | null;
  readonly last_disposition: string | null;
}

function micros(ts: string | null | undefined): bigint | null {
  if (!ts) return null;
  const p = parseTimestamp(ts);
  return p.ok ? p.value : null;
}

/** The age of a break in microseconds and its clock (null parts when unknown). */
export function breakAge(rec: BreakRecord): { first_record_us: bigint | null; as_of_us: bigint | null; age_us: bigint | null } {
  const firstObs = rec.observations[0];
  const opening = rec.events[0];
  // The record time of the first observation; a difference naming no record falls back to the
  // start of the window that first observed it (the earliest it can have existed there).
  const first = micros(firstObs?.record_time) ?? micros(opening.record_time) ?? micros(firstObs?.window.start) ?? micros(opening.window?.start);
  let asOf: bigint | null = null;
  for (const o of rec.observations) {
    const m = micros(o.as_of ?? o.window.end);
    if (m !== null && (asOf === null || m > asOf)) asOf = m;
  }
  asOf ??= micros(breakWindow(rec)?.end);
  return { first_record_us: first, as_of_us: asOf, age_us: first !== null && asOf !== null ? asOf - first : null };
}

/** Summarizes one break under the given configuration and control definitions. */
export function summarizeBreak(rec: BreakRecord, ctx: { readonly config: Config; readonly controls: readonly ControlDefinition[] }): BreakSummary {
  const def = ctx.controls.find((c) => c.control_id === rec.control_id);
  const owner = currentOwner(rec);
  const { first_record_us, as_of_us, age_us } = breakAge(rec);
  const sla = slaSeconds(ctx.config, def, rec.kind);
  const lastObs = rec.observations[rec.observations.length - 1];
  const w = breakWindow(rec);
  const routing = def ? ownershipOf(ctx.config, def, rec.kind) : null;
  return {
    break_id: rec.break_id, control_id: rec.control_id, kind: rec.kind, key: rec.key, state: rec.state, version: rec.version,
    owner: owner ?? routing?.owner ?? null, routing, owner_assigned: owner !== null, classification: currentClassification(rec),
    opened_at: rec.events[0].at, state_since: rec.events[rec.events.length - 1].at,
    reopen_count: rec.events.filter((e) => e.to_state === 'OPEN' && e.from_state !== null).length,
    window: w ? { start: w.start, end: w.end } : null,
    first_record_time: first_record_us === null ? null : formatMicros(first_record_us),
    as_of: as_of_us === null ? null : formatMicros(as_of_us),
    age_s: age_us === null ? null : formatScaled(age_us, 6),
    sla_s: sla,
    sla_breached: age_us === null || sla === null ? null : age_us > BigInt(sla) * 1_000_000n,
    observation_count: rec.observations.length,
    last_observed_run_id: lastObs?.run_id ?? null,
    last_disposition: lastObs?.disposition ?? null,
  };
}

/**
 * The owner filter of `reckon breaks list --owner` and of the console's queue, one rule for both:
 * a break matches when the owner triage assigned, or the team its control and kind are routed to
 * (the configuration's ownership), is one of `owners`, compared without regard to case. So a team's
 * filter keeps the breaks its people took at triage (in signed mode the owner is a signer, not a
 * team), and a person's filter shows the breaks assigned to them. No filter (undefined or empty)
 * matches every break.
 */
export function ownedBy(owners: readonly string[] | undefined, s: Pick<BreakSummary, 'owner' | 'routing'>): boolean {
  if (!owners || owners.length === 0) return true;
  const names = [s.owner, s.routing?.owner].filter((n): n is string => !!n).map((n) => n.toLowerCase());
  return owners.some((o) => names.includes(o.toLowerCase()));
}
