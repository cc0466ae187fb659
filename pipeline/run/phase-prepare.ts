/**
 * Phase 1, prepare (and, at the end, release): everything a run does before it reads a source.
 * Order of effects: open the store, check `--rerun-of` and the sources (a folder must exist; a
 * sources file is read, its databases connected and its queries checked: sources/source-plan.ts), finish
 * earlier runs of the store (recovery.ts), take the window's leases (fault point `leased`), make
 * the scratch folder (after removing those of dead runs: scratch.ts). Release gives the leases
 * back, ends the database connections, closes DuckDB and removes the scratch folder.
 */
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { ConfigError } from '../core/errors.js';
import { NO_FAULTS, type FaultPoints } from '../core/fault.js';
import { checkInterrupt, NO_INTERRUPT } from '../core/interrupt.js';
import type { FaultPhase } from '../core/settings.js';
import { silentLogger, type RunLogger } from '../core/log.js';
import { acquireLeases, releaseLeases } from '../publish/lease.js';
import { datasetsRead } from '../controls/selection.js';
import { prepareSources } from '../sources/source-plan.js';
import { findManifest } from '../store/manifests.js';
import { openStore } from '../store/open-store.js';
import type { RunContext, RunRequest } from './context.js';
import { recoverEarlierRuns } from './recovery.js';
import { assertSigningKept } from '../publish/manifest-chain.js';
import { sendPendingAlerts, sendRolledForwardAlerts } from './phase-alerts.js';
import { makeScratch, scratchBase, sweepScratch } from './scratch.js';
import { cacheNotUsedNote, defaultCacheFolder, privateCacheFolder } from '../load/cache-folder.js';

/**
 * Fault points inside a step that must finish once begun: a database snapshot being read, the
 * manifest being written (its signature before it, its `.sha256` after). Every other one is a
 * safe point where an interrupted run stops (`stoppingFaults`).
 */
const UNSAFE_STOPS: ReadonlySet<FaultPhase> = new Set(['extracting', 'signed', 'manifest_written']);

/** `faults` that, after any pause, stop an interrupted run at the safe ones (InterruptedError). */
function stoppingFaults(faults: FaultPoints, interrupt: AbortSignal): FaultPoints {
  return async (phase) => {
    await faults(phase);
    if (!UNSAFE_STOPS.has(phase)) checkInterrupt(interrupt);
  };
}

/** A new run id: `run-<utc timestamp>-<random>`, lower-case so it is a valid partition value. */
export function newRunId(now = new Date()): string {
  const ts = now.toISOString().replace(/[-:]/g, '').replace(/\.[0-9]+Z$/, 'z').toLowerCase();
  return `run-${ts}-${randomBytes(4).toString('hex')}`;
}

/**
 * Prepares the run of `req` and returns its context. Throws ConfigError (exit 2) for an unusable
 * store, an unknown `--rerun-of` run, a missing sources folder, a sources file with mistakes, a
 * database that refuses the connection or the credentials or a query that does not run, a run
 * without the pipeline key on a signed store (publish/manifest-chain.ts assertSigningKept; all
 * before any lease), and ConcurrencyError (exit 5)
 * when another run holds a lease of the window. Nothing is held when it throws before the leases.
 */
export async function prepareRun(req: RunRequest): Promise<RunContext> {
  const t0 = performance.now();
  const startedAt = new Date();
  const runId = newRunId(startedAt);
  const logger = (req.logger ?? silentLogger).child({ run_id: runId, window: `${req.window.start}/${req.window.end}` });
  const store = await openStore(req.store, req.settings.s3);
  if (req.rerunOf && !(await findManifest(store, req.rerunOf))) throw new ConfigError(`--rerun-of ${req.rerunOf}: no published manifest of that run in ${store.location} (its runs: reckon runs --store ${store.location})`);
  const interrupt = req.interrupt ?? NO_INTERRUPT;
  const fault = stoppingFaults(req.faults ?? NO_FAULTS, interrupt);
  const sources = await prepareSources(req.sources, datasetsRead(req.controls.selected), { window: req.window, env: req.env, s3: req.settings.s3, fault, interrupt });
  let leases: Awaited<ReturnType<typeof acquireLeases>>;
  try {
    await assertSigningKept(store, req.pipeline?.signer);
    await recoverEarlierRuns(store, logger, (rolled) => sendRolledForwardAlerts(req, store, logger, rolled, runId));
    leases = await acquireLeases(store, req.controls.selected.map((c) => c.control_id), req.window, runId);
  } catch (e) {
    await sources.close();
    throw e;
  }
  // Holding its leases, so a run that loses the window to another (exit 5) has sent nothing.
  await sendPendingAlerts(req, store, logger, runId);
  // The pause only: holding leases, the run stops for an interrupt in runWindow, which releases them.
  await (req.faults ?? NO_FAULTS)('leased');
  await sweepScratch(scratchBase(), logger);
  const scratch = await makeScratch(scratchBase(), runId, startedAt);
  const cache = await usableCacheFolder(req, logger);
  const timings = { ...req.clock?.before, prepare_ms: Math.round(performance.now() - t0) };
  return { req, runId, startedAt, logger, fault, interrupt, store, sources, leases, scratch, ...cache, timings, originMs: req.clock?.originMs ?? t0, progress: { doing: 'loading' }, open: {} };
}

/**
 * The caches' folder for the run (RECKON_CACHE_DIR, else one per user beside the scratch folders),
 * when the cache is on and the folder is the run's user's own (load/cache-folder.ts); a warning
 * says when it was made private, or why the run goes without it.
 */
async function usableCacheFolder(req: RunRequest, logger: RunLogger): Promise<{ cacheDir?: string; cacheNote?: string }> {
  const c = req.settings.cache;
  if (!c.enabled) return {};
  const dir = c.dir ?? defaultCacheFolder(scratchBase());
  const folder = await privateCacheFolder(dir);
  if (!folder.use) {
    const note = cacheNotUsedNote(folder.why);
    logger.warn(note);
    return { cacheNote: note };
  }
  if (folder.note) logger.warn(folder.note);
  return { cacheDir: folder.dir, ...(folder.note ? { cacheNote: folder.note } : {}) };
}

/** Releases what the run holds, whatever happened: its leases, its DuckDB and its scratch folder. */
export async function releaseRun(ctx: RunContext): Promise<void> {
  await releaseLeases(ctx.store, ctx.leases);
  await ctx.sources.close();
  const { conn, engine } = ctx.open;
  // Unset first: an interrupt arriving now finds no connection to interrupt.
  ctx.open.conn = undefined;
  ctx.open.engine = undefined;
  conn?.closeSync();
  engine?.instance.closeSync();
  await rm(ctx.scratch, { recursive: true, force: true });
}
