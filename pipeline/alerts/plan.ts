/**
 * Which breaks of a published run are alerted, and where (docs/alerts.md). A break is alerted
 * when the run opened it (`opened`), reopened it (`reopened`), or re-observed it and its age
 * crossed its SLA since the run before (`past_sla`: the previous observation was within the SLA,
 * or had no as-of); a break the run VERIFIED is resolved (`resolved`). A re-observed break within
 * its SLA, a TIMING or a PROVISIONAL difference is not alerted. Each alert goes to its owner's
 * route (config/ownership.ts), else to `alerts.default_route`, else it is recorded as unrouted.
 * Per route at most `max_per_route` alerts are sent, past SLA and oldest first; the rest are
 * counted in one `summary` alert of that route (unrouted alerts are bounded the same way).
 */
import type { ControlResult } from '../../manifests/v1/schema.js';
import type { AlertsConfig } from '../config/alerts-config.js';
import type { ResolvedRoute } from '../config/alert-routes.js';
import type { Config } from '../config/config.js';
import { ownershipOf, type Ownership } from '../config/ownership.js';
import type { ControlDefinition } from '../controls/definitions.js';
import { secondsTextToMicros } from '../core/duration.js';
import { parseTimestamp } from '../contract/values.js';
import type { BreakObservation } from '../breaks/break-store.js';
import type { BreakOutcome } from '../breaks/run-breaks.js';

/** Why a break is alerted. `summary` stands for the alerts of a route beyond `max_per_route`. */
export type AlertEvent = 'opened' | 'reopened' | 'past_sla' | 'resolved' | 'summary';

/** One alert about one break (or, for `summary`, about the breaks left over on a route). */
export interface PlannedAlert {
  readonly event: AlertEvent;
  readonly break_id: string;
  readonly control_id: string;
  readonly kind: string;
  readonly key: string;
  readonly detail: string;
  readonly state: string | null;
  readonly version: number | null;
  readonly age_s: string | null;
  readonly sla_s: number | null;
  readonly sla_breached: boolean | null;
  readonly owner: Ownership;
  /** The route it goes to, or null when neither the owner's route nor a default route is configured. */
  readonly route: string | null;
  /** For `summary`: how many alerts it stands for, by control and kind. */
  readonly more?: { readonly count: number; readonly by: Readonly<Record<string, number>> };
}

/** What the plan reads: the run's results and break outcomes, the breaks it verified, and each re-observed break's observations. */
export interface PlanInput {
  readonly results: readonly ControlResult[];
  readonly breaks: readonly BreakOutcome[];
  /** Breaks the run verified, with their identity. */
  readonly verified: readonly { readonly break_id: string; readonly control_id: string; readonly kind: string; readonly key: string; readonly version: number }[];
  /** Observations of the breaks the run re-observed past their SLA (to tell whether the SLA was crossed in this run). */
  readonly observations: ReadonlyMap<string, readonly BreakObservation[]>;
  readonly runId: string;
  readonly config: Config;
  readonly controls: readonly ControlDefinition[];
  readonly routes: ReadonlyMap<string, ResolvedRoute>;
}

const micros = (ts: string | null | undefined): bigint | null => {
  if (!ts) return null;
  const p = parseTimestamp(ts);
  return p.ok ? p.value : null;
};

/** Break outcomes re-observed past their SLA: the ones whose observations the plan needs. */
export function pastSlaCandidates(breaks: readonly BreakOutcome[]): BreakOutcome[] {
  return breaks.filter((b) => b.disposition === 'REOBSERVED' && b.sla_breached === true);
}

/**
 * True when the age crossed the SLA since the previous observation: the latest observation by
 * another run was within the SLA at its own as-of (first record time = this as-of − this age).
 */
function crossedSla(b: BreakOutcome, asOf: bigint | null, observations: readonly BreakObservation[], runId: string): boolean {
  const age = secondsTextToMicros(b.age_s);
  const earlier = observations.filter((o) => o.run_id !== runId && o.disposition !== 'TIMING');
  const prev = earlier[earlier.length - 1];
  const prevAsOf = micros(prev?.as_of ?? null);
  if (age === null || asOf === null || b.sla_s === null || prevAsOf === null) return true;
  return prevAsOf - (asOf - age) <= BigInt(b.sla_s) * 1_000_000n;
}

/** The alerts of a run, routed and bounded per route (see the module comment). */
export function planAlerts(input: PlanInput, alerts: AlertsConfig): PlannedAlert[] {
  const defs = new Map(input.controls.map((c) => [c.control_id, c]));
  const results = new Map(input.results.map((r) => [r.control_id, r]));
  const routeOf = (o: Ownership) => (input.routes.has(o.route) ? o.route : alerts.default_route && input.routes.has(alerts.default_route) ? alerts.default_route : null);
  const details = detailsByDifference(input.results);
  const planned: PlannedAlert[] = [];
  for (const b of input.breaks) {
    const def = defs.get(b.control_id);
    const r = results.get(b.control_id);
    if (!def || !r) continue;
    const event: AlertEvent | null = b.disposition === 'OPENED' ? 'opened' : b.disposition === 'REOPENED' ? 'reopened'
      : b.disposition === 'REOBSERVED' && b.sla_breached === true && crossedSla(b, micros(r.as_of), input.observations.get(b.break_id) ?? [], input.runId) ? 'past_sla' : null;
    if (!event) continue;
    const owner = ownershipOf(input.config, def, b.kind);
    const detail = details.get(differenceId(b.control_id, b.kind, b.key)) ?? '';
    planned.push({ event, break_id: b.break_id, control_id: b.control_id, kind: b.kind, key: b.key, detail, state: b.state, version: b.version, age_s: b.age_s, sla_s: b.sla_s, sla_breached: b.sla_breached, owner, route: routeOf(owner) });
  }
  for (const v of input.verified) {
    const def = defs.get(v.control_id);
    if (!def) continue;
    const owner = ownershipOf(input.config, def, v.kind);
    planned.push({ event: 'resolved', break_id: v.break_id, control_id: v.control_id, kind: v.kind, key: v.key, detail: 'verified: the run no longer observes the difference', state: 'VERIFIED', version: v.version, age_s: null, sla_s: null, sla_breached: null, owner, route: routeOf(owner) });
  }
  return bounded(planned, alerts.max_per_route);
}

const differenceId = (controlId: string, kind: string, key: string) => JSON.stringify([controlId, kind, key]);

/** Each difference's detail by control, kind and key, the first of each (one lookup per break, not a scan of the control's differences). */
function detailsByDifference(results: readonly ControlResult[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const r of results) {
    for (const d of r.differences) {
      const id = differenceId(r.control_id, d.kind, d.key);
      if (!out.has(id)) out.set(id, d.detail);
    }
  }
  return out;
}

/** Past SLA first, then the oldest, then by break id: the order alerts are sent and cut in (each age parsed once, not per comparison). */
function byUrgency(planned: readonly PlannedAlert[]): PlannedAlert[] {
  const aged = planned.map((a) => ({ a, age: secondsTextToMicros(a.age_s) ?? -1n }));
  aged.sort((p, q) => {
    const past = Number(q.a.sla_breached === true) - Number(p.a.sla_breached === true);
    if (past) return past;
    if (p.age !== q.age) return q.age > p.age ? 1 : -1;
    return p.a.break_id < q.a.break_id ? -1 : p.a.break_id > q.a.break_id ? 1 : 0;
  });
  return aged.map((x) => x.a);
}

/** At most `max` alerts per route (resolves included; unrouted ones count as one route), the rest as one summary alert of the route. */
function bounded(planned: readonly PlannedAlert[], max: number): PlannedAlert[] {
  const byRoute = new Map<string | null, PlannedAlert[]>();
  for (const a of byUrgency(planned)) {
    const list = byRoute.get(a.route);
    if (list) list.push(a);
    else byRoute.set(a.route, [a]);
  }
  const out: PlannedAlert[] = [];
  for (const [route, list] of byRoute) {
    if (list.length <= max) { for (const a of list) out.push(a); continue; }
    const kept = list.slice(0, max - 1);
    const rest = list.slice(max - 1);
    const by: Record<string, number> = {};
    for (const a of rest) by[`${a.control_id} ${a.kind}`] = (by[`${a.control_id} ${a.kind}`] ?? 0) + 1;
    const first = rest[0];
    for (const a of kept) out.push(a);
    out.push({
      ...first, event: 'summary', break_id: `more-${route ?? 'unrouted'}`, kind: 'SUMMARY', key: `${rest.length} more`, detail: `${rest.length} more alert(s) on this route in this run: ${Object.entries(by).map(([k, n]) => `${k}×${n}`).join(', ')}`,
      state: null, version: null, more: { count: rest.length, by },
    });
  }
  return out;
}
