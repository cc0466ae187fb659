/**
 * Crash-safe publication (CONTRACT §6, issues 7 and 17). A run stages its output objects, its
 * checkpoint of break heads and its break plan under `_staging/<run_id>/` (readers and Athena
 * ignore names starting with `_`), publishes its manifest — the commit point — and only then
 * promotes each staged object to its final key and writes its planned break objects, bound to the
 * manifest. A run killed before the manifest leaves only staging, which the next run removes; a
 * run killed after it is rolled forward by the next run (finishPublication), which promotes and
 * writes what is missing. Nothing published is rewritten.
 */
import { sha256Hex } from '../core/digest.js';
import { NO_FAULTS, type FaultPoints } from '../core/fault.js';
import { planKey, stagedPlan, writePlanned, type PlannedObject, type RollForward } from '../breaks/break-plan.js';
import type { ManifestV1 } from '../../manifests/v1/schema.js';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { AlreadyExistsError, type ObjectStore } from '../store/object-store.js';
import { reckonCommand } from '../core/shell.js';
import { LocalObjectStore } from '../store/local-store.js';
import { findManifest } from '../store/manifests.js';
import type { OutputObject } from '../outputs/outputs.js';

/** Stages local output files under `_staging/<run_id>/<final key>`. */
export async function stageOutputs(store: ObjectStore, runId: string, outputs: readonly OutputObject[]): Promise<void> {
  for (const o of outputs) await store.putFileOnce(`_staging/${runId}/${o.key}`, o.localPath);
}

/** Promotes staged objects to their final keys, checking each SHA-256. Idempotent: an existing equal object is fine. Staging is left for clearStaging. */
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
}

/** A published manifest as finishPublication needs it. */
export interface PublishedRun {
  readonly key: string;
  readonly sha256: string;
  readonly manifest: Pick<ManifestV1, 'run_id' | 'outputs' | 'break_log'>;
}

/**
 * Completes the publication of a published run: promotes its staged outputs and heads checkpoint
 * (fault point `promoted`), writes its staged break plan bound to the manifest (break-plan.ts
 * writePlanned: fault points `writing-breaks`, `breaks-written`), then clears its staging.
 * Idempotent, so the run itself and, after a crash, the next run call it alike. Throws
 * StoreError (`corrupt_object`, exit 2) when the staged plan does not match the manifest's digest.
 */
export async function finishPublication(
  store: ObjectStore, run: PublishedRun, fault: FaultPoints = NO_FAULTS,
  /** The run's own plan, in memory: the objects whose bytes it staged and whose SHA-256 its manifest lists (recovery reads the staged plan instead). */
  ownPlan?: readonly PlannedObject[],
): Promise<RollForward | null> {
  const runId = run.manifest.run_id;
  const log = run.manifest.break_log;
  const heads = log ? [{ key: log.heads.key, sha256: log.heads.sha256 }] : [];
  await promoteOutputs(store, runId, [...run.manifest.outputs, ...heads]);
  await fault('promoted');
  let rolled: RollForward | null = null;
  if (log) {
    // clearStaging removes the plan last: a plan that is gone was written in full.
    // The run that made the plan does not read back and parse what it staged (at 10^5 differences, seconds).
    const plan = ownPlan ?? await stagedPlan(store, runId, log.plan.sha256);
    if (plan) rolled = await writePlanned(store, plan, { manifest_key: run.key, manifest_sha256: run.sha256 }, fault);
  }
  await clearStaging(store, runId);
  return rolled;
}

/** Deletes a run's staging objects, its break plan last (finishPublication reads a missing plan as written in full). */
export async function clearStaging(store: ObjectStore, runId: string): Promise<void> {
  const keys = await store.list(`_staging/${runId}`);
  const plan = planKey(runId);
  for (const k of [...keys.filter((x) => x !== plan), ...keys.filter((x) => x === plan)]) await store.deleteScratch(k);
  // A local store also drops the run's now empty staging folders.
  if (store instanceof LocalObjectStore) await rm(join(store.root, '_staging', runId), { recursive: true, force: true });
}

/**
 * Rolls earlier runs forward or back, those whose owner is no longer alive (`isLive` false): staged
 * runs with a published manifest are finished (finishPublication: outputs promoted, break plan
 * written); staged runs without one are removed with their plan. A live run's staging is left to
 * it, published or not (it promotes, writes its breaks and sends its alerts itself). Returns what it did.
 */
export async function recoverStaging(
  store: ObjectStore,
  published: (runId: string) => Promise<PublishedRun | undefined>,
  isLive: (runId: string) => Promise<boolean>,
): Promise<{ promoted: { runId: string; rolled: RollForward | null }[]; discarded: string[] }> {
  const runIds = [...new Set((await store.list('_staging')).map((k) => k.split('/')[1]))].sort();
  const promoted: { runId: string; rolled: RollForward | null }[] = [];
  const discarded: string[] = [];
  for (const runId of runIds) {
    // A live run finishes its own publication (and sends its own alerts): only the dead are taken over.
    if (await isLive(runId)) continue;
    const run = await published(runId);
    if (run) promoted.push({ runId, rolled: await finishPublication(store, run) });
    else { await clearStaging(store, runId); discarded.push(runId); }
  }
  return { promoted, discarded };
}

/** A published run whose staging is still there: its outputs and break objects are not all written yet. */
export interface PendingRollForward {
  readonly run_id: string;
  readonly manifest_key: string;
  readonly window: { readonly start: string; readonly end: string };
  /** The sources location the run read, as recorded in its manifest. */
  readonly sources: string;
}

/**
 * The published runs of `store` whose publication is not finished (a run stopped after its
 * manifest), in run id order: the next run on the store rolls them forward (recoverStaging)
 * before it does anything else. A staging without a manifest is not pending: it is dropped. Never
 * throws for a manifest that does not parse (it is left out).
 */
export async function pendingRollForwards(store: ObjectStore): Promise<PendingRollForward[]> {
  const runIds = [...new Set((await store.list('_staging')).map((k) => k.split('/')[1]))].sort();
  const pending: PendingRollForward[] = [];
  for (const runId of runIds) {
    // A manifest that does not parse is not read here: `manifest verify` names it, and no run publishes over it.
    const found = await findManifest(store, runId).catch(() => undefined);
    if (found) pending.push({ run_id: runId, manifest_key: found.key, window: { start: found.manifest.window.start, end: found.manifest.window.end }, sources: found.manifest.sources.location });
  }
  return pending;
}

/**
 * The line readers print for a pending roll-forward (`reckon manifest verify`, `breaks list`,
 * `records`): what is pending and the command that finishes it (any run on the store does), shell-quoted,
 * with `configFile` (the reader's --config), else a word to add it: a signed store refuses a run without it.
 */
export function pendingText(p: PendingRollForward, storeLocation: string, configFile?: string): string {
  const again = reckonCommand(['run', '--window', `${p.window.start}/${p.window.end}`, '--sources', p.sources, '--store', storeLocation, ...(configFile ? ['--config', configFile] : [])]);
  return `pending roll-forward: run ${p.run_id} published ${p.manifest_key} but its outputs and break objects are not all written yet; the next run on this store writes them first: run again (${again}${configFile ? '' : ', adding the --config its runs use, if any'})`;
}
