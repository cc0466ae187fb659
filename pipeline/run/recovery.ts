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
import { StoreError } from '../core/errors.js';
import { sha256Hex } from '../core/digest.js';
import { completeSidecars, sidecarDigest, sidecarKey } from '../publish/manifest-chain.js';
import { recoverStaging } from '../publish/staging.js';
import { findManifest, MANIFEST_KEY } from '../store/manifests.js';
import type { ObjectStore } from '../store/object-store.js';

/** The staging owner record a run writes beside its staged plan and outputs (core/process.ts names the holder). */
export interface StagingOwner extends Holder { readonly started_at: string }

/** True while the run that wrote `_staging/<runId>/_owner.json` may still be running. */
async function ownerAlive(store: ObjectStore, runId: string): Promise<boolean> {
  const owner = await store.get(`_staging/${runId}/_owner.json`);
  if (!owner) return false;
  try {
    const o = JSON.parse(owner.toString('utf8')) as StagingOwner;
    if (o.host !== hostname()) return Date.now() - Date.parse(o.started_at) < LEASE_TTL_MS;
    return holderAlive(o);
  } catch { return false; }
}

/**
 * The published manifest of a stopped run, only when its `.sha256` proves its bytes: a manifest
 * changed after publication (or left without a provable digest) is never rolled forward, so no
 * output is promoted, no break object written and no alert sent on its word. Undefined when the
 * run published none. Throws StoreError `unverifiable_head` (exit 2) naming both digests.
 */
async function provenManifest(store: ObjectStore, runId: string): Promise<Awaited<ReturnType<typeof findManifest>>> {
  const key = (await store.list('manifests')).find((k) => MANIFEST_KEY.test(k) && k.endsWith(`-${runId}.json`));
  if (!key) return undefined;
  const [bytes, side] = await Promise.all([store.get(key), store.get(sidecarKey(key))]);
  const sha256 = bytes ? sha256Hex(bytes) : '(missing)';
  const recorded = side ? sidecarDigest(side) : undefined;
  if (recorded === sha256) return findManifest(store, runId);
  const why = recorded
    ? `but the manifest's bytes hash to ${sha256} and its .sha256 says ${recorded}: it was changed after publication`
    : `which has no ${sidecarKey(key).split('/').pop()} and nothing proves its bytes (they hash to ${sha256})`;
  throw new StoreError(`run ${runId} stopped after publishing ${key}, ${why}, so it is not rolled forward (nothing promoted, no break object written, no alert sent); run 'reckon manifest verify'`, { path: key, reason: 'unverifiable_head' });
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
