/**
 * Crash-safe publication (CONTRACT §6, issue 7). A run stages its output objects under
 * `_staging/<run_id>/` (readers and Athena ignore names starting with `_`), publishes its manifest
 * — the commit point — and only then promotes each staged object to its final key. A run killed
 * before the manifest leaves only staging, which the next run removes; a run killed after it is
 * rolled forward by the next run, which promotes what is missing. Nothing published is rewritten.
 */
import { sha256Hex } from '../core/digest.js';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { AlreadyExistsError, type ObjectStore } from '../store/object-store.js';
import { LocalObjectStore } from '../store/local-store.js';
import type { OutputObject } from '../outputs/outputs.js';

/** Stages local output files under `_staging/<run_id>/<final key>`. */
export async function stageOutputs(store: ObjectStore, runId: string, outputs: readonly OutputObject[]): Promise<void> {
  for (const o of outputs) await store.putFileOnce(`_staging/${runId}/${o.key}`, o.localPath);
}

/** Promotes staged objects to their final keys, checking each SHA-256. Idempotent: an existing equal object is fine. */
export async function promoteOutputs(store: ObjectStore, runId: string, outputs: readonly { key: string; sha256: string }[]): Promise<void> {
  for (const o of outputs) {
    const staged = await store.get(`_staging/${runId}/${o.key}`);
    if (!staged) {
      const existing = await store.get(o.key);
      if (existing && sha256Hex(existing) === o.sha256) continue;
      throw new Error(`staged output ${o.key} of ${runId} is missing and the final object is ${existing ? 'different' : 'absent'}`);
    }
    if (sha256Hex(staged) !== o.sha256) throw new Error(`staged output ${o.key} of ${runId} does not match its manifest digest`);
    try {
      await store.putOnce(o.key, staged);
    } catch (e) {
      if (!(e instanceof AlreadyExistsError)) throw e;
      const existing = await store.get(o.key);
      if (!existing || sha256Hex(existing) !== o.sha256) throw new Error(`${o.key} exists with different content; it is never overwritten`);
    }
  }
  await clearStaging(store, runId);
}

/** Deletes a run's staging objects. */
export async function clearStaging(store: ObjectStore, runId: string): Promise<void> {
  for (const k of await store.list(`_staging/${runId}`)) await store.deleteScratch(k);
  // A local store also drops the run's now empty staging folders.
  if (store instanceof LocalObjectStore) await rm(join(store.root, '_staging', runId), { recursive: true, force: true });
}

/**
 * Rolls earlier runs forward or back: staged runs with a published manifest are promoted; staged
 * runs without one, whose leases are no longer held (`isLive` false), are removed. Returns what it did.
 */
export async function recoverStaging(
  store: ObjectStore,
  manifestOutputs: (runId: string) => Promise<readonly { key: string; sha256: string }[] | undefined>,
  isLive: (runId: string) => Promise<boolean>,
): Promise<{ promoted: string[]; discarded: string[] }> {
  const runIds = [...new Set((await store.list('_staging')).map((k) => k.split('/')[1]))].sort();
  const promoted: string[] = [];
  const discarded: string[] = [];
  for (const runId of runIds) {
    const outs = await manifestOutputs(runId);
    if (outs) { await promoteOutputs(store, runId, outs); promoted.push(runId); }
    else if (!(await isLive(runId))) { await clearStaging(store, runId); discarded.push(runId); }
  }
  return { promoted, discarded };
}
