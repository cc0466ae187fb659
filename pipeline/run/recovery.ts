/**
 * Recovery of earlier runs of a store (issues 7 and 17), done by every run before it takes its
 * leases: a run killed after publishing its manifest is rolled forward (outputs promoted, its
 * planned break objects written, bound to its manifest: publish/staging.ts finishPublication), and
 * the staging of a run that died before publishing — its outputs and its break plan — is dropped,
 * so the store holds no break object of a run that never published. A staging whose owner is still
 * alive is left alone. A manifest left without its `.sha256` is completed first, when the digest its
 * run recorded under staging (or the next manifest's link) proves its bytes (issue 18).
 */
import { hostname } from 'node:os';
import type { RunLogger } from '../core/log.js';
import { holderAlive, type Holder } from '../core/process.js';
import { LEASE_TTL_MS } from '../publish/lease.js';
import { completeSidecars, provenManifest } from '../publish/manifest-chain.js';
import { recoverStaging } from '../publish/staging.js';
import type { ObjectStore } from '../store/object-store.js';

/** The staging owner record a run writes beside its staged plan and outputs (core/process.ts names the holder). */
export interface StagingOwner extends Holder { readonly started_at: string }

/** True while the run that wrote `_staging/<runId>/_owner.json` may still be running (`reckon runs` says so too). */
export async function ownerAlive(store: ObjectStore, runId: string): Promise<boolean> {
  const owner = await store.get(`_staging/${runId}/_owner.json`);
  if (!owner) return false;
  try {
    const o = JSON.parse(owner.toString('utf8')) as StagingOwner;
    if (o.host !== hostname()) return Date.now() - Date.parse(o.started_at) < LEASE_TTL_MS;
    return holderAlive(o);
  } catch { return false; }
}

/**
 * Finishes earlier runs of `store`: completes publications stopped between a manifest and its
 * `.sha256` (issue 18), rolls published runs forward and drops the staging of dead unpublished
 * ones, with a warning for each; `onRolledForward` then does what the rolled run did not (its alerts).
 */
export async function recoverEarlierRuns(store: ObjectStore, logger: RunLogger, onRolledForward?: (runId: string) => Promise<void>): Promise<void> {
  // A run stopped between its manifest and the manifest's .sha256 first (publish/manifest-chain.ts):
  // its digest record is in its staging, which the roll-forward below clears.
  for (const c of await completeSidecars(store)) logger.warn(c.message);
  const r = await recoverStaging(store, (runId) => provenManifest(store, runId), (runId) => ownerAlive(store, runId));
  for (const { runId, rolled } of r.promoted) {
    const breaks = rolled ? `; ${rolled.written} break object(s) written, ${rolled.present} already there, ${rolled.superseded.length} planned event(s) superseded` : '';
    logger.warn(`rolled forward run ${runId}: its manifest was published, its outputs are now promoted${breaks}`);
    await onRolledForward?.(runId);
  }
  for (const id of r.discarded) logger.warn(`discarded staging of run ${id}: it stopped before publishing a manifest (its break plan is dropped with it)`);
}
