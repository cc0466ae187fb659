/**
 * The check of a break object's signatures for a reader (breaks show, the console's break page):
 * each signature record against the registry version it names, kept in the store (the one in
 * force when it was made), and, when the reader trusts a registry of its own (the configuration's
 * `signing.registry`), against that one too: a key the trusted registry does not give the signer
 * is accepted only when the registry version it names is the trusted one or one a published run
 * recorded (`break_log.signing.registry_sha256`, a rotation on record). A registry an attacker
 * wrote into `signers/` with a key of their own therefore does not verify.
 */
import { archivedRegistry, type ObjectReader, type SignerRegistry } from '../signing/registry.js';
import { verifyRecord, type SignatureRecord } from '../signing/signatures.js';

/** One signature's check: who, which key, role, and whether it verified (and why not). */
export interface SignatureCheck {
  readonly role: string;
  readonly signer: string;
  readonly key: string;
  readonly ok: boolean;
  readonly problem: string | null;
}

/** What a reader trusts beyond the store: its own registry, and the registry versions published runs recorded. */
export interface TrustedSigners {
  readonly registry: SignerRegistry | null;
  /** SHA-256 of every registry version a published manifest records. */
  readonly recorded: ReadonlySet<string>;
}

/** What a reader trusts: `registry` (null: none of its own) and every registry version the published `manifests` record. */
export function trustedSigners(registry: SignerRegistry | null, manifests: readonly { readonly manifest: { readonly break_log?: { readonly signing: { readonly registry_sha256?: string | null } } | null } }[]): TrustedSigners {
  const recorded = new Set(manifests.map((m) => m.manifest.break_log?.signing.registry_sha256).filter((x): x is string => typeof x === 'string'));
  return { registry, recorded };
}

/** Verifies each signature record of `payload` (see the module comment); `trusted` null checks against the store only. */
export async function checkSignatures(store: ObjectReader, payload: string, sigs: readonly SignatureRecord[], trusted: TrustedSigners | null = null): Promise<SignatureCheck[]> {
  const out: SignatureCheck[] = [];
  for (const s of sigs) {
    let problem: string | null = null;
    try {
      const reg = await archivedRegistry(store, s.registry_sha256);
      if (!reg) problem = `the registry ${s.registry_sha256.slice(0, 12)}… it names is not kept in the store`;
      else {
        verifyRecord(payload, s, reg);
        problem = trusted ? untrustedKey(s, trusted) : null;
      }
    } catch (e) { problem = (e as Error).message; }
    out.push({ role: s.role, signer: s.signer, key: s.key, ok: problem === null, problem });
  }
  return out;
}

/**
 * Why a signature that verified against the registry it names is not trusted by a reader with a
 * registry of its own (see the module comment); null when it is, or when `trusted` has no registry.
 * Shared by breaks show, the console and manifest/evidence verify (verify-log.ts).
 */
export function untrustedKey(s: SignatureRecord, trusted: TrustedSigners): string | null {
  const reg = trusted.registry;
  if (!reg) return null;
  const mine = reg.entries.some((e) => e.signer.toLowerCase() === s.signer.toLowerCase() && e.key.fingerprint === s.key);
  if (mine || s.registry_sha256 === reg.sha256 || trusted.recorded.has(s.registry_sha256)) return null;
  return `key ${s.key} is not ${s.signer}'s in the trusted registry ${reg.source}, and the registry ${s.registry_sha256.slice(0, 12)}… the signature names is recorded by no published run: a registry written into the store`;
}

/** A signature the break log's check refused (verify-log.ts RefusedSignature): the object's key, the signer and why. */
export interface LogRefusal {
  readonly key: string;
  readonly signer: string;
  readonly problem: string;
}

/**
 * `checks` (the signatures of the object `key`) with each one the break log's check refused
 * marked not verified, with the log's problem — a signer revoked before it signed, which only the
 * published runs' checkpoints show (registry-timeline.ts): one decision for the log and each line.
 */
export function withLogRefusals(key: string, checks: readonly SignatureCheck[], refused: readonly LogRefusal[]): SignatureCheck[] {
  return checks.map((x) => {
    const r = x.ok ? refused.find((f) => f.key === key && f.signer === x.signer) : undefined;
    return r ? { ...x, ok: false, problem: r.problem } : x;
  });
}
