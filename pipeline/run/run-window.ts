/**
 * `reckon run`: one window, end to end (CONTRACT §3–§7), as named phases in the order of their
 * effects, each a function of the run's context (context.ts) and the parts before it:
 *
 *   prepare   store, checks, recovery of earlier runs, leases          (phase-prepare.ts; fault point leased)
 *   load      sources located and loaded into DuckDB                   (phase-load.ts; loading, computing)
 *   evaluate  every selected control: totals, differences, status      (phase-evaluate.ts)
 *   breaks    break events and observations planned and staged         (phase-breaks.ts; planned)
 *   outputs   Parquet outputs written and staged                       (phase-outputs.ts; staged)
 *   publish   the manifest written once: the commit point              (phase-publish.ts; published)
 *   write     outputs promoted, planned break objects written          (phase-write-breaks.ts; promoted,
 *                                                                        writing-breaks, breaks-written)
 *   alerts    new, reopened and past-SLA breaks to their owners' routes; resolves (phase-alerts.ts)
 *
 * and, whatever happened, release (leases, DuckDB, scratch folder).
 *
 * Interrupted (SIGINT, SIGTERM: core/interrupt.ts), the run stops at the next safe point — between
 * phases, before each dataset's load and each control, at the fault points outside the manifest's
 * write — with DuckDB's running statement interrupted; no store write of the run is then in
 * flight, so its leases are released as at any end. Stopped before its manifest, it drops its
 * staging: nothing is published. Stopped after, the next run rolls it forward (recovery.ts). Once
 * its break objects are written the run is done and finishes as usual (its alerts are sent).
 */
import { join } from 'node:path';
import { Trigger, type ControlResult, type ManifestV1 } from '../../manifests/v1/schema.js';
import { InterruptedError } from '../core/errors.js';
import { checkInterrupt, interruptedBy } from '../core/interrupt.js';
import type { Condition, ExitCode } from '../core/outcome.js';
import { explainOutOfMemory } from '../load/engine.js';
import { clearStaging } from '../publish/staging.js';
import { findManifest } from '../store/manifests.js';
import type { ObjectStore } from '../store/object-store.js';
import type { RunContext, RunRequest, SettledResults } from './context.js';
import { settleBreaks } from './phase-breaks.js';
import { evaluateControls } from './phase-evaluate.js';
import { loadInputs } from './phase-load.js';
import { writeRunOutputs } from './phase-outputs.js';
import { prepareRun, releaseRun } from './phase-prepare.js';
import { publishRun } from './phase-publish.js';
import { writeBreaks } from './phase-write-breaks.js';
import { sendAlerts, type AlertOutcome } from './phase-alerts.js';
import { BREAK_KEYS } from '../breaks/break-objects.js';
import type { RollForward } from '../breaks/break-plan.js';
import type { BreakOutcome, VerifiedOutcome } from '../breaks/run-breaks.js';

export type { RunRequest } from './context.js';
export type { ControlResult, ReportedDifference, Trigger } from '../../manifests/v1/schema.js';
export { newRunId } from './phase-prepare.js';
export { resultsDigestOf } from '../publish/results-digest.js';

/** The triggers of CONTRACT §6 (`--trigger`). */
export const TRIGGERS = Trigger.options;

/** The run's result: what `--json` prints, plus the manifest. */
export interface RunResult {
  readonly run_id: string;
  /** The overall status: the highest-ranked control status (core/outcome.ts). */
  readonly status: ControlResult['status'];
  readonly exit_code: ExitCode;
  /** Every status other than CLEAN present, highest first, with its controls. */
  readonly conditions: readonly Condition[];
  readonly window: { start: string; end: string };
  readonly manifest: { path: string; sha256: string };
  readonly results_digest: string;
  readonly controls: readonly ControlResult[];
  /** What the run did to each break: disposition, state, age and SLA (CONTRACT §5). */
  readonly breaks: readonly BreakOutcome[];
  /** Breaks the run verified (CONTRACT §5 automatic verification). */
  readonly verified: readonly string[];
  /** What became of the run's alerts; never changes its status or exit code. */
  readonly alerts: AlertOutcome;
  /** The sources location the run read, as given. */
  readonly sources: string;
  readonly quarantine_count: number;
  readonly manifestDoc: ManifestV1;
}

/**
 * Runs one window. Returns the result (a business outcome is never an exception); throws
 * ConfigError, ConcurrencyError (another run holds the window: exit 5), InputError or
 * InternalError when the run cannot produce a result; no manifest is then written. Throws
 * InterruptedError (exit 130, 143) when interrupted, saying what was published.
 */
export async function runWindow(req: RunRequest): Promise<RunResult> {
  const ctx = await prepareRun(req);
  const stop = () => checkInterrupt(ctx.interrupt);
  try {
    stop();
    const inputs = await loadInputs(ctx);
    stop();
    const evaluated = await evaluateControls(ctx, inputs);
    stop();
    const settled = await settleBreaks(ctx, inputs, evaluated);
    stop();
    const outputs = await writeRunOutputs(ctx, inputs, settled);
    stop();
    const published = await publishRun(ctx, inputs, evaluated, settled, outputs);
    stop();
    const rolled = await writeBreaks(ctx, published, settled.plan.objects);
    const verified = landedVerifications(settled, rolled);
    ctx.logger.info(`published ${published.key} sha256 ${published.sha256}`, { phase: 'publish', manifest: published.key, status: settled.outcome.status });
    const alerts = await sendAlerts(ctx, settled, published, verified);
    return {
      run_id: ctx.runId, ...settled.outcome, window: { start: req.window.start, end: req.window.end },
      manifest: { path: storePath(ctx.store, published.key), sha256: published.sha256 }, results_digest: settled.resultsDigest,
      controls: settled.results, breaks: settled.breaks, verified: verified.map((v) => v.break_id), alerts, sources: req.sources,
      quarantine_count: inputs.loaded.quarantine.length, manifestDoc: published.manifest,
    };
  } catch (e) {
    if (interruptedBy(ctx.interrupt)) throw await interrupted(ctx, e);
    await dropUnpublishedStaging(ctx);
    throw failure(ctx, e);
  } finally {
    await releaseRun(ctx);
  }
}

/**
 * A run that failed before publishing its manifest leaves nothing to roll forward: its staging is
 * dropped now, instead of by the next run with a warning that reads like a crash. Kept when the
 * manifest is there (the next run rolls it forward: said, since the error will not) or the store
 * cannot say.
 */
async function dropUnpublishedStaging(ctx: RunContext): Promise<void> {
  const manifest = await publishedOrDropped(ctx);
  // Failed after its commit point: the error alone would read as "nothing published".
  if (manifest) ctx.logger.warn(`run ${ctx.runId} published its manifest ${manifest.key} before it failed: its outputs and break objects are not all written yet, and the next run on this store rolls them forward (run again once the cause below is fixed)`);
}

/**
 * The run's published manifest, or, when it published none, undefined with its staging dropped
 * (nothing is left to roll forward). Undefined and the staging kept when the store cannot say.
 */
async function publishedOrDropped(ctx: RunContext): Promise<{ key: string } | undefined> {
  const manifest = await findManifest(ctx.store, ctx.runId).catch(() => 'unknown' as const);
  if (manifest === undefined) await clearStaging(ctx.store, ctx.runId).catch(() => undefined);
  return manifest === 'unknown' ? undefined : manifest;
}

/** Whether `e` is the run stopping for its interrupt: at a safe point, or DuckDB's statement interrupted (also as a load error's cause). */
function stoppedByInterrupt(e: unknown): boolean {
  return e instanceof InterruptedError || (e instanceof Error && /INTERRUPT Error/.test(e.message));
}

/**
 * The InterruptedError of an interrupted run that stopped with `e`, saying what it published:
 * nothing (its staging is dropped now), or its manifest, whose outputs and break objects the next
 * run rolls forward. An error other than the stop itself (a run failing as it was stopping) is
 * named after it: the run is stopped either way, and run again.
 */
async function interrupted(ctx: RunContext, e: unknown): Promise<InterruptedError> {
  const signal = interruptedBy(ctx.interrupt)!;
  const failed = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  const also = stoppedByInterrupt(e) ? '' : ` (it failed as it was stopping: ${failed.replace(/\s*\n\s*/g, ' ')})`;
  const manifest = await publishedOrDropped(ctx);
  if (manifest) {
    return new InterruptedError(signal, `interrupted by ${signal}: run ${ctx.runId} published its manifest ${manifest.key}; its outputs and break objects are not all written yet and the next run of this store rolls them forward (\`reckon run\` again, or any run on the store); the leases are released${also}`);
  }
  return new InterruptedError(signal, `interrupted by ${signal}: nothing published; the leases are released; run again${also}`);
}

/** The run's automatic verifications that were written (a planned VERIFIED event superseded by another transition was not). */
function landedVerifications(settled: SettledResults, rolled: RollForward | null): readonly VerifiedOutcome[] {
  const superseded = new Set((rolled?.superseded ?? []).map((s) => s.key));
  return settled.plan.verified.filter((v) => !superseded.has(BREAK_KEYS.event(v.break_id, v.event.version)));
}

/** The error to throw for `e`: DuckDB out of memory is explained (what the run was doing, what to change). */
function failure(ctx: RunContext, e: unknown): unknown {
  return ctx.open.engine ? explainOutOfMemory(e, ctx.progress.doing, ctx.open.engine) : e;
}

/** Where a published key is, as a path or an `s3://` URL. */
function storePath(store: ObjectStore, key: string): string {
  return store.location.startsWith('s3://') ? `${store.location.replace(/\/$/, '')}/${key}` : join(store.location, key);
}
