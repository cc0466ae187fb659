/**
 * The signer registry an auditor trusts, given from outside the store or bag being verified:
 * `--signers FILE` (an allowed_signers file), or the one `--config FILE` names
 * (`signing.registry`). Used by `manifest verify` and `evidence verify`.
 */
import { resolve } from 'node:path';
import { ConfigError } from '../core/errors.js';
import { loadConfig, registryPath } from '../config/config.js';
import { loadControls } from '../controls/definitions.js';
import { loadRegistry, type SignerRegistry } from '../signing/registry.js';

/** The trusted registry of `--signers` / `--config`; null when neither is given. Throws ConfigError when both are, or the config names none. */
export async function trustedRegistry(signers: string | undefined, config: string | undefined, cwd: string): Promise<SignerRegistry | null> {
  if (signers !== undefined && config !== undefined) throw new ConfigError('--signers and --config exclude each other: give the trusted registry one way');
  if (signers !== undefined) return loadRegistry(resolve(cwd, signers));
  if (config === undefined) return null;
  const path = registryPath(await loadConfig(config, await loadControls(), { cwd }));
  if (!path) throw new ConfigError(`--config ${config} names no signer registry (signing.registry) to trust`);
  return loadRegistry(path);
}
