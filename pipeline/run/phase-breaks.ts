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
  const { req, runId } = ctx;
  const { plan, heads } = await timed(ctx.timings, 'breaks_ms', async () => {
    const p = await planBreaks(ctx.store, {
      runId, window: req.window, controls: req.controls.selected, results: evaluated.results, config: req.config.config, startedAt: ctx.startedAt,
    });
    return { plan: p, heads: await headEntries(ctx.store, p) };
  });
  const owner: StagingOwner = { ...thisProcess(), started_at: ctx.startedAt.toISOString() };
  await ctx.store.putOnce(`_staging/${runId}/_owner.json`, JSON.stringify(owner));
  const planText = planBytes(plan.objects);
  await ctx.store.putOnce(planKey(runId), planText);
  const headsText = headsBytes(runId, heads);
  await ctx.store.putOnce(`_staging/${runId}/${headsKey(runId)}`, headsText);
  await ctx.fault('planned');
  const results = evaluated.results.map((r) => settle(r, plan.outcomes));
  return {
    results, breaks: plan.outcomes, outcome: runOutcome(results), resultsDigest: resultsDigestOf(req.window, results, inputs.loaded),
    plan: {
      objects: plan.objects, verified: plan.verified, sha256: sha256Hex(planText),
      events: plan.objects.filter((o) => o.kind === 'event').length, observations: plan.objects.filter((o) => o.kind === 'observation').length,
    },
    heads: { key: headsKey(runId), sha256: sha256Hex(headsText), breaks: heads.length },
  };
}

/** A control's result with its breaks: a TIMING difference seen in an earlier window opens its break now, and its control is then BREAKS. */
function settle(r: ControlResult, breaks: readonly BreakOutcome[]): ControlResult {
  const differences = r.differences.map((d) => ({ ...d, ...breakFor(breaks, r.control_id, d) }));
  const status = r.status === 'CLEAN' && differences.some((d) => d.disposition !== 'TIMING') ? 'BREAKS' : r.status;
  return { ...r, status, differences };
}

function breakFor(outcomes: readonly BreakOutcome[], controlId: string, d: ReportedDifference): Pick<ReportedDifference, 'break_id' | 'disposition'> {
  const b = outcomes.find((o) => o.control_id === controlId && o.kind === d.kind && o.key === d.key);
  return b ? { break_id: b.break_id, disposition: b.disposition } : { break_id: d.break_id, disposition: d.disposition };
}
