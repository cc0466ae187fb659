/**
 * Signed payloads: the one signing API of reckon (break transitions now; the pipeline's manifests
 * and the web console's actions after). A payload is a UTF-8 string — in reckon always canonical
 * JSON (RFC 8785) — and every signature of it is an SSH signature over exactly those bytes, kept
 * beside it with who signed, with which key, in which namespace and under which registry version:
 *
 *   { "payload": "<canonical JSON>", "signatures": [ { role, signer, key, namespace, registry_sha256, signed_at, sshsig } ] }
 *
 * so that `jq -j .payload` and `jq -j '.signatures[0].sshsig'` hand an auditor the two files
 * `ssh-keygen -Y verify -f allowed_signers -I <signer> -n <namespace> -s sig < payload` checks.
 * Signing checks the key against the registry first (unknown key, a key of another signer, a key
 * not allowed in the namespace), so a refused signature is never made.
 */
import { SignatureError } from '../core/errors.js';
import { BREAK_NAMESPACE, type RegistryEntry, type SignerRegistry } from './registry.js';
import type { SigningKey } from './signing-key.js';
import { sshsigSign, sshsigVerify } from './sshsig.js';
import type { SshPublicKey } from './ssh-keys.js';

export { BREAK_NAMESPACE };

/** What a signature stands for: the person making the change, or the one countersigning it. */
export type SignerRole = 'actor' | 'approver';

/** One signature of a payload, as stored beside it. */
export interface SignatureRecord {
  readonly role: SignerRole;
  /** The registry's name of the signer. */
  readonly signer: string;
  /** The key's SHA-256 fingerprint (`SHA256:…`, as `ssh-keygen -l` prints it). */
  readonly key: string;
  readonly namespace: string;
  /** SHA-256 of the registry that verified the signature when it was made (`signers/<sha>.allowed_signers`). */
  readonly registry_sha256: string;
  /** Wall-clock time of signing, ISO-8601 UTC; not covered by the signature (the payload's own time is). */
  readonly signed_at: string;
  /** The armoured SSH signature (`-----BEGIN SSH SIGNATURE-----` …). */
  readonly sshsig: string;
}

/** A payload and its signatures. */
export interface SignedPayload {
  readonly payload: string;
  readonly signatures: readonly SignatureRecord[];
}

/** A key with the registry it is judged by. */
export interface Signer {
  readonly key: SigningKey;
  readonly registry: SignerRegistry;
}

/** The refusal rules of who may sign (SignatureError, exit 2). */
export const SIGNER_RULES = {
  SIGNER_UNKNOWN_KEY: 'the key is not in the signer registry',
  SIGNER_KEY_OF_ANOTHER: 'the key belongs to another signer than the one named',
  SIGNER_NAMESPACE_NOT_ALLOWED: 'the registry does not allow this key to sign in this namespace (its namespaces= option)',
  SIGNATURE_RECORD_MISMATCH: 'the signature record does not describe its signature (key fingerprint or namespace differ)',
} as const;

const refuse = (rule: keyof typeof SIGNER_RULES, detail: string): never => {
  throw new SignatureError(rule, `${SIGNER_RULES[rule]} (${detail})`);
};

/**
 * The registry entry of `key` for signing in `namespace`, checked against `claimed` (a name the
 * caller says the key is, e.g. `--actor`). Throws SignatureError: SIGNER_UNKNOWN_KEY,
 * SIGNER_KEY_OF_ANOTHER, SIGNER_NAMESPACE_NOT_ALLOWED.
 */
export function signerOf(key: SshPublicKey, registry: SignerRegistry, namespace: string, claimed?: string): RegistryEntry {
  const entry = registry.entryOf(key);
  if (!entry) return refuse('SIGNER_UNKNOWN_KEY', `${key.fingerprint} is not in ${registry.source} (registry ${registry.sha256.slice(0, 12)}…)`);
  if (claimed !== undefined && claimed.trim() !== '' && claimed.trim().toLowerCase() !== entry.signer.toLowerCase()) {
    refuse('SIGNER_KEY_OF_ANOTHER', `${key.fingerprint} is ${entry.signer}'s key, not ${claimed.trim()}'s`);
  }
  if (!registry.allows(entry, namespace)) refuse('SIGNER_NAMESPACE_NOT_ALLOWED', `${entry.signer}'s key ${key.fingerprint} may sign in ${entry.namespaces!.join(', ')}, not ${namespace}`);
  return entry;
}

/**
 * Signs `payload` with `signer`'s key after checking it against the registry (signerOf); returns
 * the signature record. Throws SignatureError when the key may not sign.
 */
export async function signPayload(payload: string, signer: Signer, opts: { role: SignerRole; namespace?: string; claimed?: string; now?: Date }): Promise<SignatureRecord> {
  const namespace = opts.namespace ?? BREAK_NAMESPACE;
  const entry = signerOf(signer.key.publicKey, signer.registry, namespace, opts.claimed);
  const sshsig = await sshsigSign(Buffer.from(payload, 'utf8'), signer.key, namespace);
  return {
    role: opts.role, signer: entry.signer, key: signer.key.publicKey.fingerprint, namespace,
    registry_sha256: signer.registry.sha256, signed_at: (opts.now ?? new Date()).toISOString(), sshsig,
  };
}

/** A signature that verified: who signed, with which key. */
export interface VerifiedSignature {
  readonly signer: string;
  readonly key: string;
  readonly role: SignerRole;
}

/**
 * Verifies one signature record of `payload` against `registry` (the one its record names, looked
 * up by the caller): the SSH signature over the payload's bytes in the record's namespace, which
 * must be `namespace`; the key in the registry, allowed in the namespace, belonging to the
 * record's signer. Throws SignatureError naming the rule broken.
 */
export function verifyRecord(payload: string, rec: SignatureRecord, registry: SignerRegistry, namespace: string = BREAK_NAMESPACE): VerifiedSignature {
  const sig = sshsigVerify(Buffer.from(payload, 'utf8'), rec.sshsig, namespace);
  if (rec.namespace !== namespace) refuse('SIGNATURE_RECORD_MISMATCH', `the record says namespace ${rec.namespace}`);
  if (rec.key !== sig.publicKey.fingerprint) refuse('SIGNATURE_RECORD_MISMATCH', `the record says key ${rec.key}, the signature is by ${sig.publicKey.fingerprint}`);
  const entry = signerOf(sig.publicKey, registry, namespace, rec.signer);
  return { signer: entry.signer, key: sig.publicKey.fingerprint, role: rec.role };
}

/** The `ssh-keygen -Y verify` command line that checks one signature without reckon (paths as given). */
export function sshKeygenVerifyCommand(a: { registryPath: string; signer: string; namespace: string; signaturePath: string; payloadPath: string }): string {
  const q = (s: string) => (/^[A-Za-z0-9._/@+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
  return `ssh-keygen -Y verify -f ${q(a.registryPath)} -I ${q(a.signer)} -n ${q(a.namespace)} -s ${q(a.signaturePath)} < ${q(a.payloadPath)}`;
}
