/**
 * Phase 4, breaks (CONTRACT §5): for each control the run evaluated to CLEAN or BREAKS, open,
 * reobserve or reopen the break of each difference, writing its events and observations to the
 * store. These writes come before the manifest that lists them (the order of effects a rerun and
 * recovery rely on today). The results are then settled: each difference gets its break id and
 * disposition, a control whose TIMING difference opened a break (seen in an earlier window too)
 * becomes BREAKS, and the run's outcome and results digest follow.
 */
import type { ControlResult, ReportedDifference } from '../../manifests/v1/schema.js';
import { canonicalJson } from '../core/canonical.js';
import { sha256Hex } from '../core/digest.js';
import { runOutcome } from '../core/outcome.js';
import type { Window } from '../contract/window.js';
import { recordBreaks, type BreakOutcome } from '../breaks/run-breaks.js';
import type { LoadResult } from '../load/load.js';
import { timed, type EvaluatedControls, type LoadedInputs, type RunContext, type SettledResults } from './context.js';

/** Records the breaks of every evaluated control and settles the results (see the module comment). */
export async function settleBreaks(ctx: RunContext, inputs: LoadedInputs, evaluated: EvaluatedControls): Promise<SettledResults> {
  const { req } = ctx;
  const breaks = await timed(ctx.timings, 'breaks_ms', async () => {
    const all: BreakOutcome[] = [];
    for (const r of evaluated.results) {
      const control = req.controls.selected.find((c) => c.control_id === r.control_id)!;
      // Loop, not push(...spread): a day can hold hundreds of thousands of differences.
      for (const o of await recordBreaks(ctx.store, { runId: ctx.runId, window: req.window, control, result: r, config: req.config.config })) all.push(o);
    }
    return all;
  });
  const results = evaluated.results.map((r) => settle(r, breaks));
  return { results, breaks, outcome: runOutcome(results), resultsDigest: resultsDigestOf(req.window, results, inputs.loaded) };
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

/** The digest of the results alone: equal for two runs on equal inputs and code (CONTRACT §6). */
export function resultsDigestOf(window: Window, results: readonly ControlResult[], loaded: LoadResult): string {
  return sha256Hex(canonicalJson({
    window: { start: window.start, end: window.end },
    controls: results.map((r) => ({
      control_id: r.control_id, status: r.status, as_of: r.as_of, totals: r.totals, ...(r.large_totals ? { large_totals: r.large_totals } : {}),
      differences: r.differences.map((d) => ({ kind: d.kind, key: d.key, detail: d.detail, record_time: d.record_time })),
    })),
    quarantine: loaded.quarantine.map((q) => ({ dataset: q.dataset, file: q.file, row: q.row, column: q.column, rule: q.rule })),
  }));
}
