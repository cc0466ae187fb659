/**
 * Phase 4, breaks (CONTRACT §5, issue 17): for each control the run evaluated to CLEAN or BREAKS,
 * plan what the run does to each difference's break — open, reobserve, reopen — and which
 * corrected breaks it verifies, as break objects written only after the manifest is published
 * (breaks/break-plan.ts). The plan, the owner record and the checkpoint of every break's head are
 * staged under `_staging/<run_id>/`; nothing is written outside staging (fault point `planned`).
 * The results are then settled: each difference gets its break id and disposition, a control
 * whose TIMING difference opens a break (seen in an earlier window too) becomes BREAKS, and the
 * run's outcome and results digest follow.
 */
import type { ControlResult, ReportedDifference } from '../../manifests/v1/schema.js';
import { canonicalJson } from '../core/canonical.js';
import { sha256Hex } from '../core/digest.js';
import { runOutcome } from '../core/outcome.js';
import { thisProcess } from '../core/process.js';
import type { Window } from '../contract/window.js';
import { headsBytes, headsKey, planBytes, planKey } from '../breaks/break-plan.js';
import { headEntries, planBreaks, type BreakOutcome } from '../breaks/run-breaks.js';
import { resultsDigestOf } from '../publish/results-digest.js';
import { timed, type EvaluatedControls, type LoadedInputs, type RunContext, type SettledResults } from './context.js';
import type { StagingOwner } from './recovery.js';

/** Plans the breaks of every evaluated control, stages the plan and the heads, and settles the results (see the module comment). */
export async function settleBreaks(ctx: RunContext, inputs: LoadedInputs, evaluated: EvaluatedControls): Promise<SettledResults> {
  // Staging, settling and the results digest are timed with the plan: at 10^5 differences they are seconds, not noise.
  return timed(ctx.timings, 'breaks_ms', async () => {
    const { req, runId } = ctx;
    const plan = await planBreaks(ctx.store, {
      runId, window: req.window, controls: req.controls.selected, results: evaluated.results, config: req.config.config, startedAt: ctx.startedAt,
    });
    const heads = await headEntries(ctx.store, plan);
    const owner: StagingOwner = { ...thisProcess(), started_at: ctx.startedAt.toISOString() };
    await ctx.store.putOnce(`_staging/${runId}/_owner.json`, JSON.stringify(owner));
    const planText = planBytes(plan.objects);
    await ctx.store.putOnce(planKey(runId), planText);
    const headsText = headsBytes(runId, heads);
    await ctx.store.putOnce(`_staging/${runId}/${headsKey(runId)}`, headsText);
    await ctx.fault('planned');
    const byDifference = outcomesByDifference(plan.outcomes);
    const results = evaluated.results.map((r) => settle(r, byDifference));
    let events = 0;
    for (const o of plan.objects) if (o.kind === 'event') events += 1;
    return {
      results, breaks: plan.outcomes, outcome: runOutcome(results), resultsDigest: resultsDigestOf(req.window, results, inputs.loaded),
      plan: { objects: plan.objects, verified: plan.verified, sha256: sha256Hex(planText), events, observations: plan.objects.length - events },
      heads: { key: headsKey(runId), sha256: sha256Hex(headsText), breaks: heads.length },
    };
  });
}

/** The key of a difference among a run's break outcomes: control, kind and key (a key may hold any character, so JSON). */
const differenceId = (controlId: string, kind: string, key: string) => JSON.stringify([controlId, kind, key]);

/**
 * The run's break outcomes by control, kind and key, the first of each (what a search from the
 * start finds): one lookup per difference instead of a scan of every outcome, which at 163,000
 * differences was minutes.
 */
function outcomesByDifference(outcomes: readonly BreakOutcome[]): Map<string, BreakOutcome> {
  const byId = new Map<string, BreakOutcome>();
  for (const o of outcomes) {
    const id = differenceId(o.control_id, o.kind, o.key);
    if (!byId.has(id)) byId.set(id, o);
  }
  return byId;
}

/** A control's result with its breaks: a TIMING difference seen in an earlier window opens its break now, and its control is then BREAKS. */
function settle(r: ControlResult, breaks: ReadonlyMap<string, BreakOutcome>): ControlResult {
  const differences = r.differences.map((d) => ({ ...d, ...breakFor(breaks, r.control_id, d) }));
  const status = r.status === 'CLEAN' && differences.some((d) => d.disposition !== 'TIMING') ? 'BREAKS' : r.status;
  return { ...r, status, differences };
}

function breakFor(outcomes: ReadonlyMap<string, BreakOutcome>, controlId: string, d: ReportedDifference): Pick<ReportedDifference, 'break_id' | 'disposition'> {
  const b = outcomes.get(differenceId(controlId, d.kind, d.key));
  return b ? { break_id: b.break_id, disposition: b.disposition } : { break_id: d.break_id, disposition: d.disposition };
}
