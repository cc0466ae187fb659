/**
 * The pipeline's signer of a configuration (issue 18): which key signs the store's manifests and
 * evidence bags, and whether there is one.
 *
 *   signing.unsigned: true                   → no signature (mode unsigned, reason configured)
 *   no signing.registry                      → no signature (mode unsigned, reason no-registry):
 *                                              a store without a registry has no pipeline key to trust
 *   a registry                               → the pipeline key is required: RECKON_PIPELINE_KEY_FILE,
 *                                              RECKON_PIPELINE_KEY or signing.pipeline_key, and it must
 *                                              be the registry's `reconciler` in reckon-manifest and
 *                                              reckon-evidence (SignatureError, exit 2, before any lease)
 *
 * The key text and passphrase stay Secrets; messages name only the file or variable.
 */
import { pipelineKeyPath, type LoadedConfig } from '../config/config.js';
import type { Settings } from '../core/settings.js';
import { SignatureError } from '../core/errors.js';
import { manifestSigning, pipelineSigner, registryHasPipeline, MANIFEST_NAMESPACE, PIPELINE_SIGNER, type ManifestSigning, type PipelineSigner } from '../signing/pipeline-signer.js';
import type { SignerRegistry } from '../signing/registry.js';
import { loadSigningKey } from '../signing/signing-key.js';

/** The pipeline's signer and the signing record its manifests carry. */
export interface PipelineSigning {
  readonly signer: PipelineSigner | null;
  readonly record: ManifestSigning;
}

/**
 * The pipeline signing of `config` with `registry` (the configured one, or null). Throws
 * SignatureError when a registry is configured and the key is missing, unreadable or not the
 * registry's pipeline key.
 */
export async function pipelineSigning(config: LoadedConfig, settings: Settings, registry: SignerRegistry | null): Promise<PipelineSigning> {
  if (config.config.signing.unsigned) return { signer: null, record: manifestSigning(null, 'configured') };
  if (!registry) return { signer: null, record: manifestSigning(null, 'no-registry') };
  if (!registryHasPipeline(registry)) {
    throw new SignatureError('PIPELINE_SIGNER_MISSING', `the signer registry ${registry.source} names no pipeline key: add a line '${PIPELINE_SIGNER} namespaces="${MANIFEST_NAMESPACE},reckon-evidence" ssh-ed25519 …' (or say signing.unsigned: true)`);
  }
  const p = settings.signing.pipeline;
  const file = p.keyFile ?? (p.keyText ? null : pipelineKeyPath(config));
  if (!file && !p.keyText) throw new SignatureError('PIPELINE_KEY_MISSING', 'manifests are signed: give the pipeline key with RECKON_PIPELINE_KEY_FILE, RECKON_PIPELINE_KEY or signing.pipeline_key (or say signing.unsigned: true)');
  const key = await loadSigningKey({ file, text: p.keyText, passphrase: p.passphrase, agentSocket: settings.signing.agentSocket, variable: 'RECKON_PIPELINE_KEY' });
  const signer = pipelineSigner(key, registry);
  return { signer, record: manifestSigning(signer, null) };
}
