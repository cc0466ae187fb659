/**
 * Phase 1, prepare (and, at the end, release): everything a run does before it reads a source.
 * Order of effects: open the store, check `--rerun-of` and the sources (a folder must exist; a
 * sources file is read, its databases connected and its queries checked: sources/source-plan.ts), finish
 * earlier runs of the store (recovery.ts), take the window's leases (fault point `leased`), make
 * the scratch folder. Release gives the leases back, ends the database connections, closes DuckDB
 * and removes the scratch folder.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../core/errors.js';
import { NO_FAULTS } from '../core/fault.js';
import { silentLogger } from '../core/log.js';
import { acquireLeases, releaseLeases } from '../publish/lease.js';
import { datasetsRead } from '../controls/selection.js';
import { prepareSources } from '../sources/source-plan.js';
import { findManifest } from '../store/manifests.js';
import { openStore } from '../store/open-store.js';
import type { RunContext, RunRequest } from './context.js';
import { recoverEarlierRuns } from './recovery.js';

/** DuckDB reads and writes scratch files by path: the path must hold no quote, space or glob. */
const SAFE_PATH = /^[A-Za-z0-9_\-/.]+$/;

/** A new run id: `run-<utc timestamp>-<random>`, lower-case so it is a valid partition value. */
export function newRunId(now = new Date()): string {
  const ts = now.toISOString().replace(/[-:]/g, '').replace(/\.[0-9]+Z$/, 'z').toLowerCase();
  return `run-${ts}-${randomBytes(4).toString('hex')}`;
}

/**
 * Prepares the run of `req` and returns its context. Throws ConfigError (exit 2) for an unusable
 * store, an unknown `--rerun-of` run, a missing sources folder, a sources file with mistakes, a
 * database that refuses the connection or the credentials or a query that does not run (all
 * before any lease), and ConcurrencyError (exit 5)
 * when another run holds a lease of the window. Nothing is held when it throws before the leases.
 */
export async function prepareRun(req: RunRequest): Promise<RunContext> {
  const t0 = performance.now();
  const startedAt = new Date();
  const runId = newRunId(startedAt);
  const logger = (req.logger ?? silentLogger).child({ run_id: runId, window: `${req.window.start}/${req.window.end}` });
  const store = await openStore(req.store, req.settings.s3);
  if (req.rerunOf && !(await findManifest(store, req.rerunOf))) throw new ConfigError(`--rerun-of ${req.rerunOf}: no published manifest of that run in ${store.location}`);
  const fault = req.faults ?? NO_FAULTS;
  const sources = await prepareSources(req.sources, datasetsRead(req.controls.selected), { window: req.window, env: req.env, s3: req.settings.s3, fault });
  let leases: Awaited<ReturnType<typeof acquireLeases>>;
  try {
    await recoverEarlierRuns(store, logger);
    leases = await acquireLeases(store, req.controls.selected.map((c) => c.control_id), req.window, runId);
  } catch (e) {
    await sources.close();
    throw e;
  }
  await fault('leased');
  const scratch = await mkdtemp(join(SAFE_PATH.test(tmpdir()) ? tmpdir() : '/tmp', 'reckon-'));
  const timings = { ...req.clock?.before, prepare_ms: Math.round(performance.now() - t0) };
  return { req, runId, startedAt, logger, fault, store, sources, leases, scratch, timings, originMs: req.clock?.originMs ?? t0, progress: { doing: 'loading' }, open: {} };
}

/** Releases what the run holds, whatever happened: its leases, its DuckDB and its scratch folder. */
export async function releaseRun(ctx: RunContext): Promise<void> {
  await releaseLeases(ctx.store, ctx.leases);
  await ctx.sources.close();
  ctx.open.conn?.closeSync();
  ctx.open.engine?.instance.closeSync();
  await rm(ctx.scratch, { recursive: true, force: true });
}
