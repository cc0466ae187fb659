/**
 * Recovery of earlier runs of a store (issue 7), done by every run before it takes its leases:
 * a run killed after publishing its manifest but before promoting its outputs is rolled forward
 * (outputs promoted, corrected breaks verified as it would have), and the staging of a run that
 * died before publishing is dropped. A staging whose owner is still alive is left alone.
 */
import { hostname } from 'node:os';
import type { ControlDefinition } from '../controls/definitions.js';
import type { RunLogger } from '../core/log.js';
import { parseTimestamp } from '../contract/values.js';
import { verifyCorrectedBreaks } from '../breaks/run-breaks.js';
import { LEASE_TTL_MS } from '../publish/lease.js';
import { recoverStaging } from '../publish/staging.js';
import { findManifest } from '../store/manifests.js';
import type { ObjectStore } from '../store/object-store.js';

/** The staging owner record a run writes beside its staged outputs. */
export interface StagingOwner { readonly pid: number; readonly host: string; readonly started_at: string }

/** True while the run that wrote `_staging/<runId>/_owner.json` may still be running. */
async function ownerAlive(store: ObjectStore, runId: string): Promise<boolean> {
  const owner = await store.get(`_staging/${runId}/_owner.json`);
  if (!owner) return false;
  try {
    const o = JSON.parse(owner.toString('utf8')) as StagingOwner;
    if (o.host !== hostname()) return Date.now() - Date.parse(o.started_at) < LEASE_TTL_MS;
    process.kill(o.pid, 0);
    return true;
  } catch { return false; }
}

function micros(iso: string): bigint {
  const p = parseTimestamp(iso);
  if (!p.ok) throw new Error(`bad timestamp in a manifest: ${iso}`);
  return p.value;
}

/**
 * Finishes earlier runs of `store`: promotes the staged outputs of published runs (then verifies
 * their corrected breaks with `controls`, the definitions of this run) and drops the staging of
 * dead unpublished ones, with a warning for each.
 */
export async function recoverEarlierRuns(store: ObjectStore, controls: readonly ControlDefinition[], logger: RunLogger): Promise<void> {
  const r = await recoverStaging(store, async (runId) => (await findManifest(store, runId))?.manifest.outputs, (runId) => ownerAlive(store, runId));
  for (const id of r.promoted) {
    logger.warn(`rolled forward run ${id}: its manifest was published, its outputs are now promoted`);
    const m = await findManifest(store, id);
    if (!m) continue;
    const doc = m.manifest;
    const window = { start: doc.window.start, end: doc.window.end, startMicros: micros(doc.window.start), endMicros: micros(doc.window.end) };
    await verifyCorrectedBreaks(store, {
      runId: id, window, controls: controls.filter((c) => doc.controls.includes(c.control_id)), results: doc.results,
      manifestSha256: m.sha256, manifestKey: m.key, startedAt: doc.started_at,
    });
  }
  for (const id of r.discarded) logger.warn(`discarded staging of run ${id}: it stopped before publishing a manifest`);
}
