/**
 * Phase 7, write breaks (issue 17), after the manifest is published: the staged outputs and the
 * checkpoint of break heads are promoted (fault point `promoted`), then the run's planned break
 * objects — its OPEN, REOPENED and automatic VERIFIED events and its observations — are written,
 * each bound to the manifest (fault points `writing-breaks`, `breaks-written`), and the staging
 * is cleared (publish/staging.ts finishPublication, which recovery runs too after a crash). The
 * signer registry in force is kept in the store.
 */
import { finishPublication } from '../publish/staging.js';
import { archiveRegistry } from '../signing/registry.js';
import type { PlannedObject, RollForward } from '../breaks/break-plan.js';
import type { RunContext } from './context.js';
import type { Published } from './phase-publish.js';

/** Finishes the run's publication; returns what was written and which planned events were superseded. */
export async function writeBreaks(ctx: RunContext, published: Published, plan: readonly PlannedObject[]): Promise<RollForward | null> {
  const t0 = performance.now();
  if (ctx.req.signers) await archiveRegistry(ctx.store, ctx.req.signers);
  const rolled = await finishPublication(ctx.store, published, ctx.fault, plan);
  // After the manifest, so not in its timings_ms: the log says how long the break objects took.
  const ms = Math.round(performance.now() - t0);
  ctx.logger.info(`break objects written: ${rolled?.written ?? 0} written, ${rolled?.present ?? 0} already there, outputs promoted, staging cleared, in ${ms} ms`, { phase: 'write-breaks', written: rolled?.written ?? 0, present: rolled?.present ?? 0, write_breaks_ms: ms });
  for (const s of rolled?.superseded ?? []) {
    ctx.logger.warn(`planned event ${s.key} was superseded: another transition landed first (planned ${s.planned.slice(0, 12)}…, found ${s.found.slice(0, 12)}…)`, { phase: 'write-breaks' });
  }
  return rolled;
}
