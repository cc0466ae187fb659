/**
 * The pipeline's own signature (issue 18): every run manifest is signed by the pipeline's key, and
 * every evidence bag's tag manifest by the same key, so that someone who can write to the store or
 * to a bag but does not hold the key cannot rewrite either consistently. The pipeline is the
 * registry's principal `reconciler` (the name break events give it), on a line limited to the
 * manifest and evidence namespaces — the registry refuses that name in `reckon-break` — so a
 * person's key cannot sign a manifest and the pipeline's key cannot sign a break transition.
 * The signature is an SSHSIG over the manifest's canonical bytes, kept beside it as
 * `<manifest>.json.sig`, which `ssh-keygen -Y verify -I reconciler -n reckon-manifest` checks.
 */
import { SignatureError } from '../core/errors.js';
import { RESERVED_SIGNER, type SignerRegistry } from './registry.js';
import { signerOf } from './signatures.js';
import type { SigningKey } from './signing-key.js';
import { sshsigSign, sshsigVerify } from './sshsig.js';

/** The namespace of run manifests. */
export const MANIFEST_NAMESPACE = 'reckon-manifest';
/** The namespace of an evidence bag's tag manifest. */
export const EVIDENCE_NAMESPACE = 'reckon-evidence';
/** The registry principal of the pipeline. */
export const PIPELINE_SIGNER = RESERVED_SIGNER;

/** The pipeline's key with the registry it is judged by (checked by pipelineSigner). */
export interface PipelineSigner {
  readonly key: SigningKey;
  readonly registry: SignerRegistry;
}

/** What the manifest records of its own signature (covered by it): signer, key, namespace, registry. */
export interface ManifestSigning {
  readonly mode: 'signed' | 'unsigned';
  /** Why a manifest is unsigned: the configuration said so, or it names no signer registry. */
  readonly reason: 'configured' | 'no-registry' | null;
  readonly namespace: string;
  readonly signer: string | null;
  readonly key: string | null;
  readonly registry_sha256: string | null;
}

/**
 * Checks that `key` is the pipeline's in `registry`: the key of principal `reconciler`, allowed
 * in the manifest and evidence namespaces. Throws SignatureError (SIGNER_UNKNOWN_KEY,
 * SIGNER_KEY_OF_ANOTHER, SIGNER_NAMESPACE_NOT_ALLOWED) before anything is signed.
 */
export function pipelineSigner(key: SigningKey, registry: SignerRegistry): PipelineSigner {
  for (const ns of [MANIFEST_NAMESPACE, EVIDENCE_NAMESPACE]) {
    const entry = signerOf(key.publicKey, registry, ns, PIPELINE_SIGNER);
    if (entry.signer !== PIPELINE_SIGNER) throw new SignatureError('SIGNER_KEY_OF_ANOTHER', `the pipeline signs as ${PIPELINE_SIGNER}, and ${key.publicKey.fingerprint} is ${entry.signer}'s key`);
  }
  return { key, registry };
}

/** The manifest's signing record for `signer` (null: unsigned, for `reason`). */
export function manifestSigning(signer: PipelineSigner | null, reason: ManifestSigning['reason']): ManifestSigning {
  if (!signer) return { mode: 'unsigned', reason, namespace: MANIFEST_NAMESPACE, signer: null, key: null, registry_sha256: null };
  return { mode: 'signed', reason: null, namespace: MANIFEST_NAMESPACE, signer: PIPELINE_SIGNER, key: signer.key.publicKey.fingerprint, registry_sha256: signer.registry.sha256 };
}

/** Signs `bytes` (a manifest's canonical JSON, a tag manifest) in `namespace`; returns the armoured signature. */
export async function pipelineSign(bytes: Buffer | string, signer: PipelineSigner, namespace: string): Promise<string> {
  return sshsigSign(Buffer.from(bytes), signer.key, namespace);
}

/**
 * Verifies the pipeline's signature `armoured` over `bytes` in `namespace` against `registry`: the
 * SSH signature, the key being `reconciler`'s there and allowed in the namespace, and (when given)
 * the key the signed document names. Returns the key's fingerprint; throws SignatureError naming the rule.
 */
export function verifyPipelineSignature(bytes: Buffer | string, armoured: string, registry: SignerRegistry, namespace: string, expectedKey?: string | null): string {
  const sig = sshsigVerify(Buffer.from(bytes), armoured, namespace);
  const entry = signerOf(sig.publicKey, registry, namespace);
  if (entry.signer !== PIPELINE_SIGNER) throw new SignatureError('SIGNER_KEY_OF_ANOTHER', `signed by ${entry.signer}'s key ${sig.publicKey.fingerprint}, not by the pipeline (${PIPELINE_SIGNER})`);
  if (expectedKey && expectedKey !== sig.publicKey.fingerprint) throw new SignatureError('SIGNATURE_RECORD_MISMATCH', `the manifest names key ${expectedKey}, the signature is by ${sig.publicKey.fingerprint}`);
  return sig.publicKey.fingerprint;
}

/** True when `fingerprint` is a pipeline key of `registry` (a `reconciler` line allowed in `reckon-manifest`). */
export function isPipelineKey(registry: SignerRegistry, fingerprint: string): boolean {
  return registry.entries.some((e) => e.signer === PIPELINE_SIGNER && e.key.fingerprint === fingerprint && registry.allows(e, MANIFEST_NAMESPACE));
}

/** True when `registry` names a pipeline key (a `reconciler` line). */
export function registryHasPipeline(registry: SignerRegistry): boolean {
  return registry.entries.some((e) => e.signer === PIPELINE_SIGNER);
}
