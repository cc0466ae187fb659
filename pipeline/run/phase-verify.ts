/**
 * Phase 7, verify (CONTRACT §5), after the manifest is published: every CORRECTED break of a
 * control the run evaluated to CLEAN or BREAKS, whose window the run covered and which the run no
 * longer observes, is VERIFIED by `reconciler` with the manifest as proof (breaks/run-breaks.ts).
 */
import { verifyCorrectedBreaks } from '../breaks/run-breaks.js';
import type { RunContext, SettledResults } from './context.js';
import type { Published } from './phase-publish.js';

/** Verifies the corrected breaks the published run no longer observes; returns their ids. */
export async function verifyBreaks(ctx: RunContext, settled: SettledResults, published: Published): Promise<string[]> {
  const { req } = ctx;
  return verifyCorrectedBreaks(ctx.store, {
    runId: ctx.runId, window: req.window, controls: req.controls.selected, results: settled.results,
    manifestSha256: published.sha256, manifestKey: published.key, startedAt: ctx.startedAt.toISOString(),
  });
}
