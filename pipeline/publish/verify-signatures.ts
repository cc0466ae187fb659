/**
 * What `manifest verify` adds against a consistent rewrite (issue 18), beside the chain checks of
 * verify-chain.ts:
 *   - each signed manifest's `.json.sig` verifies over its bytes in `reckon-manifest` against the
 *     registry version it records (kept under signers/), by that registry's `reconciler` key, the
 *     key the manifest names; a registry change is only accepted when the key that signs under
 *     the new version is the pipeline's in the version before too (rotation overlaps), and with a
 *     trusted registry given (`--signers`, `--config`) the head's key must be the pipeline's there;
 *   - an unsigned manifest after a signed one is a downgrade, refused; unsigned ones before are noted;
 *   - the results digest recomputed from the run's Parquet outputs equals the manifest's;
 *   - every object under `outputs/` is listed by the manifest of the run its `run=` names, and
 *     every `run=` partition has a published manifest.
 */
import { SignatureError } from '../core/errors.js';
import type { ManifestV1 } from '../../manifests/v1/schema.js';
import { isPipelineKey, MANIFEST_NAMESPACE, PIPELINE_SIGNER, verifyPipelineSignature } from '../signing/pipeline-signer.js';
import { archivedRegistry, type SignerRegistry } from '../signing/registry.js';
import type { ObjectStore } from '../store/object-store.js';
import { signatureKey } from './manifest-chain.js';
import { recomputeResultsDigest } from './recompute-digest.js';

/** One finding: the object (first one that fails) and what is wrong with it. */
export interface Finding { readonly key: string; readonly problem: string }

/** Walks the chain's signatures in order; one per verification. */
export class SignatureWalk {
  readonly notices: Finding[] = [];
  signed = 0;
  unsigned = 0;
  private lastSigned: { key: string; registry: SignerRegistry; fingerprint: string } | null = null;

  /** Problems are pushed to `problems` as found, so they stay in chain order with the caller's. */
  constructor(private readonly store: ObjectStore, private readonly trusted: SignerRegistry | null, private readonly problems: Finding[]) {}

  /** Checks one manifest's signature (or its absence), in chain order. */
  async check(key: string, bytes: Buffer, doc: ManifestV1): Promise<void> {
    const s = doc.manifest_signing;
    if (!s || s.mode === 'unsigned') {
      this.unsigned += 1;
      if (this.lastSigned) this.problems.push({ key, problem: `is unsigned after the signed manifest ${this.lastSigned.key}: a store does not go back to unsigned (a manifest rewritten without the pipeline's key)` });
      return;
    }
    const sigKey = signatureKey(key);
    const sig = await this.store.get(sigKey);
    if (!sig) { this.problems.push({ key: sigKey, problem: `the signature of ${key} is missing: a signed manifest always has one` }); return; }
    let registry: SignerRegistry | undefined;
    try { registry = s.registry_sha256 ? await archivedRegistry(this.store, s.registry_sha256) : undefined; } catch (e) {
      this.problems.push({ key, problem: (e as Error).message }); return;
    }
    if (!registry) { this.problems.push({ key, problem: `names registry ${s.registry_sha256}, which the store does not keep (signers/)` }); return; }
    let fingerprint: string;
    try { fingerprint = verifyPipelineSignature(bytes, sig.toString('utf8'), registry, MANIFEST_NAMESPACE, s.key); } catch (e) {
      if (!(e instanceof SignatureError)) throw e;
      this.problems.push({ key, problem: `its signature ${sigKey} does not verify it as the pipeline's: ${e.message}` }); return;
    }
    const prev = this.lastSigned;
    if (prev && prev.registry.sha256 !== registry.sha256 && !isPipelineKey(prev.registry, fingerprint)) {
      this.problems.push({ key, problem: `is signed under registry ${short(registry.sha256)} by ${fingerprint}, which the registry before it (${short(prev.registry.sha256)}, ${prev.key}) does not name as the pipeline's key: a pipeline key is rotated with a registry version that lists both` });
    }
    this.signed += 1;
    this.lastSigned = { key, registry, fingerprint };
  }

  /** Ends the walk: the head against the trusted registry, a note on unsigned manifests. */
  finish(): void {
    if (this.trusted && this.lastSigned && !isPipelineKey(this.trusted, this.lastSigned.fingerprint)) {
      this.problems.push({ key: this.lastSigned.key, problem: `is signed by ${this.lastSigned.fingerprint}, which the trusted registry ${this.trusted.source} does not name as the pipeline's key (${PIPELINE_SIGNER})` });
    }
    if (this.trusted && !this.lastSigned && (this.signed + this.unsigned) > 0) this.problems.push({ key: 'manifests', problem: `no manifest is signed, and a trusted registry (${this.trusted.source}) was given` });
    if (this.unsigned) this.notices.push({ key: 'manifests', problem: `${this.unsigned} manifest(s) NOT signed (signing.unsigned or no signer registry): a consistent rewrite of those cannot be detected` });
    if (!this.trusted && this.lastSigned) this.notices.push({ key: this.lastSigned.key, problem: 'the pipeline key is trusted as the store\'s own registry archive says: give --signers FILE (or --config) to anchor it outside the store' });
  }
}

const short = (s: string) => `${s.slice(0, 12)}…`;

/** The results digest of `doc` recomputed from its outputs, compared with the recorded one. */
export async function checkResultsDigest(store: ObjectStore, key: string, doc: ManifestV1): Promise<Finding | undefined> {
  let digest: string | undefined;
  try { digest = await recomputeResultsDigest(store, doc); } catch (e) {
    return { key, problem: `its outputs cannot be read back to recompute the results digest: ${(e as Error).message.split('\n')[0]}` };
  }
  if (digest === undefined || digest === doc.results_digest) return undefined;
  const runs = doc.outputs.find((o) => o.table === 'runs')?.key ?? key;
  return { key: runs, problem: `the results digest recomputed from ${doc.run_id}'s outputs is ${digest}, the manifest ${key} records ${doc.results_digest}: outputs and manifest disagree` };
}

/**
 * Every object under `outputs/` must be listed by a published manifest: one under a published
 * run's `run=` partition that its manifest does not list, a `run=` partition of no published run,
 * and an object outside any run's partition are each refused, in key order.
 */
export async function checkOutputListing(store: ObjectStore, docs: readonly { key: string; manifest: ManifestV1 }[]): Promise<Finding[]> {
  const listed = new Set(docs.flatMap((d) => d.manifest.outputs.map((o) => o.key)));
  const byRun = new Map(docs.map((d) => [d.manifest.run_id, d.key]));
  const out: Finding[] = [];
  for (const k of await store.list('outputs')) {
    if (listed.has(k)) continue;
    const run = /\/run=([^/]+)\//.exec(k)?.[1];
    if (run && byRun.has(run)) out.push({ key: k, problem: `is under run ${run}'s output partition but its manifest ${byRun.get(run)} does not list it` });
    else if (run) out.push({ key: k, problem: `is in a run=${run} partition, and no published manifest is of run ${run} (a deleted manifest, or a partition that was never published)` });
    else out.push({ key: k, problem: 'is under outputs/ but in no run= partition of a published run' });
  }
  return out;
}
