/**
 * Publishing run manifests (CONTRACT §6). A manifest is canonical JSON (RFC 8785)
 * hashed with SHA-256, written once under `manifests/<sequence>-<run_id>.json` with its digest in
 * a write-once `.sha256` beside it. The chain is linear per store: publication holds a store-wide
 * lock, reads the head, and records the head's SHA-256 as `previous_manifest_sha256`.
 *
 * The manifest's bytes are the commit point; its `.sha256` is derived from them, so a run killed
 * between the two writes leaves a published manifest without its digest file. Before writing the
 * manifest a run records the digest it is about to publish under its staging prefix
 * (`_staging/<run_id>/_manifest.json`); the next run completes such a publication by writing the
 * `.sha256` — but only when something other than the manifest itself proves the bytes are the ones
 * published: that digest record, or the next manifest's `previous_manifest_sha256`. A manifest
 * edited after it was written matches neither and is never "repaired"; a chain whose head cannot
 * be proven is never extended (StoreError, exit 2), so an edit is not buried under later links.
 *
 * A signed manifest's signature (signing/pipeline-signer.ts) is written first, as
 * `<manifest>.json.sig` (fault point `signed`): a run killed there leaves a signature of a
 * manifest that never appeared, which the next run ignores and `manifest verify` notes; once the
 * manifest is there, its signature is too.
 */
import { canonicalJson } from '../core/canonical.js';
import { sha256Hex } from '../core/digest.js';
import { NO_FAULTS, type FaultPoints } from '../core/fault.js';
import { ConcurrencyError, ConfigError, SignatureError, StoreError } from '../core/errors.js';
import { isPipelineKey, MANIFEST_NAMESPACE, pipelineSign, verifyPipelineSignature, type PipelineSigner } from '../signing/pipeline-signer.js';
import { archivedRegistry } from '../signing/registry.js';
import { chainHead, MANIFEST_KEY } from '../store/manifests.js';
import { AlreadyExistsError, type ObjectStore } from '../store/object-store.js';
import { parseManifest, type ManifestV1 } from '../../manifests/v1/schema.js';
import { withPublishLock } from './publish-lock.js';

/** The `.sha256` key beside a manifest key. */
export const sidecarKey = (manifestKey: string): string => manifestKey.replace(/\.json$/, '.sha256');

/** The digest record a run writes before its manifest (deleted with its staging once the run is finished). */
export const digestRecordKey = (runId: string): string => `_staging/${runId}/_manifest.json`;

const sidecarText = (key: string, sha256: string) => `${sha256}  ${key.split('/').pop()}\n`;
/** The digest a `.sha256` body records (its first word). */
const sidecarDigest = (body: Buffer): string => body.toString('utf8').split(/\s+/)[0];
const runIdOf = (key: string) => /\/[0-9]{8}-(.+)\.json$/.exec(key)?.[1] ?? '';

/** Writes a manifest's `.sha256` once; one that exists with the same digest is fine (another run completed it first). */
async function putSidecar(store: ObjectStore, key: string, sha256: string): Promise<void> {
  try {
    await store.putOnce(sidecarKey(key), sidecarText(key, sha256));
  } catch (e) {
    if (!(e instanceof AlreadyExistsError)) throw e;
    const existing = await store.get(sidecarKey(key));
    if (!existing || sidecarDigest(existing) !== sha256) throw new StoreError(`${sidecarKey(key)} exists with another digest than ${sha256}; it is never overwritten`, { path: sidecarKey(key), reason: 'corrupt_object' });
  }
}

/** What proves a manifest's bytes without its `.sha256`, or why nothing does. */
export type ManifestProof =
  | { readonly proven: true; readonly by: string }
  | { readonly proven: false; readonly why: string };

/** The digest record a run wrote under its staging before its manifest (`{key, sha256}` as stored), or undefined when absent or not JSON. */
async function readDigestRecord(store: ObjectStore, runId: string): Promise<{ key?: unknown; sha256?: unknown } | undefined> {
  const record = await store.get(digestRecordKey(runId));
  try { return record ? (JSON.parse(record.toString('utf8')) as { key?: unknown; sha256?: unknown }) ?? undefined : undefined; } catch { return undefined; }
}

/**
 * Proves the bytes of the manifest `key` (SHA-256 `sha256`) without its `.sha256`: its run's
 * digest record names the same key and digest, or `nextPrevious` (the next manifest's
 * `previous_manifest_sha256`, when there is one) equals it. Read-only.
 */
export async function proveManifest(store: ObjectStore, key: string, sha256: string, nextPrevious?: string | null): Promise<ManifestProof> {
  const recorded = await readDigestRecord(store, runIdOf(key));
  if (recorded?.key === key && recorded.sha256 === sha256) return { proven: true, by: `the digest its run recorded before publishing (${digestRecordKey(runIdOf(key))})` };
  if (nextPrevious === sha256) return { proven: true, by: 'the next manifest\'s previous_manifest_sha256' };
  if (recorded?.key === key) return { proven: false, why: `its run recorded the digest ${String(recorded.sha256)} before publishing, but the bytes hash to ${sha256}: the manifest was changed after it was written` };
  if (nextPrevious) return { proven: false, why: `the next manifest links to ${nextPrevious}, but the bytes hash to ${sha256}: the manifest was changed after the next one was published` };
  return { proven: false, why: 'no digest record of its run and no later manifest prove its bytes' };
}

/**
 * The published manifest of run `runId` (key, SHA-256, parsed document), only when its `.sha256` proves its bytes:
 * a stopped run's manifest changed after publication (or left without a provable digest) is never
 * rolled forward, nor are alerts sent on its word. Undefined when the run published none. Throws
 * StoreError `unverifiable_head` (exit 2) naming both digests and, where the digest its run
 * recorded before publishing tells, which of the two files changed.
 */
export async function provenManifest(store: ObjectStore, runId: string): Promise<{ key: string; sha256: string; manifest: ManifestV1 } | undefined> {
  const key = (await store.list('manifests')).find((k) => MANIFEST_KEY.test(k) && k.endsWith(`-${runId}.json`));
  if (!key) return assertNotDeleted(store, runId);
  const [bytes, side] = await Promise.all([store.get(key), store.get(sidecarKey(key))]);
  const sha256 = bytes ? sha256Hex(bytes) : '(missing)';
  const recorded = side ? sidecarDigest(side) : undefined;
  if (recorded === sha256) return { key, sha256, manifest: parseManifest(JSON.parse(bytes!.toString('utf8'))) };
  const which = (await proveManifest(store, key, sha256)).proven ? 'its .sha256 was changed after publication (the bytes match the digest its run recorded before publishing)' : 'it was changed after publication';
  const why = recorded
    ? `but the manifest's bytes hash to ${sha256} and its .sha256 says ${recorded}: ${which}`
    : `which has no ${sidecarKey(key).split('/').pop()} and nothing proves its bytes (they hash to ${sha256})`;
  throw new StoreError(`run ${runId} stopped after publishing ${key}, ${why}, so it is not rolled forward (nothing promoted, no break object written, no alert sent); run 'reckon manifest verify'`, { path: key, reason: 'unverifiable_head' });
}

/**
 * For a run with no manifest: throws StoreError `unverifiable_head` (exit 2) when the manifest its
 * digest record names has its `.sha256` in the store, so it was published and deleted since (a run
 * writes the `.sha256` only after its manifest); its staging is then kept and its sequence is not
 * reused. Returns undefined otherwise (the run stopped before publishing).
 */
async function assertNotDeleted(store: ObjectStore, runId: string): Promise<undefined> {
  const recorded = await readDigestRecord(store, runId);
  const key = typeof recorded?.key === 'string' ? recorded.key : undefined;
  if (key && await store.get(sidecarKey(key))) throw new StoreError(`run ${runId} published ${key} (its ${sidecarKey(key).split('/').pop()} is there), but the manifest is gone: it was deleted after publication; its staging is kept and nothing is published until it is restored (run 'reckon manifest verify')`, { path: key, reason: 'unverifiable_head' });
  return undefined;
}

/** One manifest whose publication was completed (or could not be), for the run's log. */
export interface SidecarRepair {
  readonly key: string;
  readonly completed: boolean;
  readonly message: string;
}

/**
 * Completes publications stopped between a manifest and its `.sha256` (a run killed there): for
 * every manifest without one, writes it when proveManifest proves the bytes, and reports the
 * others, which stay unverifiable (`manifest verify` names them) and are never given a digest of
 * their current bytes. Idempotent; one listing, and reads only for manifests without a digest file.
 */
export async function completeSidecars(store: ObjectStore): Promise<SidecarRepair[]> {
  const listed = await store.list('manifests');
  const has = new Set(listed);
  const keys = listed.filter((k) => MANIFEST_KEY.test(k)).sort();
  const repairs: SidecarRepair[] = [];
  for (const [i, key] of keys.entries()) {
    if (has.has(sidecarKey(key))) continue;
    const bytes = await store.get(key);
    if (!bytes) continue;
    const sha256 = sha256Hex(bytes);
    const next = keys[i + 1] ? await store.get(keys[i + 1]) : undefined;
    let nextPrevious: string | null | undefined;
    try { nextPrevious = next ? (JSON.parse(next.toString('utf8')) as { chain?: { previous_manifest_sha256?: string | null } }).chain?.previous_manifest_sha256 : undefined; } catch { nextPrevious = undefined; }
    const proof = await proveManifest(store, key, sha256, nextPrevious);
    if (proof.proven) {
      await putSidecar(store, key, sha256);
      repairs.push({ key, completed: true, message: `completed the publication of ${key}: its run stopped before writing ${sidecarKey(key)}, now written with SHA-256 ${sha256}, proven by ${proof.by}` });
    } else {
      repairs.push({ key, completed: false, message: `${key} has no ${sidecarKey(key).split('/').pop()} and it is not written: ${proof.why}` });
    }
  }
  return repairs;
}

/**
 * Throws StoreError (exit 2) unless the chain head's bytes match its published `.sha256`: a
 * chain is extended only from a head that verifies, so an edited or unproven head is never
 * covered by a new link.
 */
async function assertHeadVerifies(store: ObjectStore, head: { key: string | null; sha256: string | null }): Promise<void> {
  if (!head.key) return;
  const side = await store.get(sidecarKey(head.key));
  if (!side) throw new StoreError(`the chain head ${head.key} has no ${sidecarKey(head.key).split('/').pop()} and nothing proves its bytes; no manifest is published on top of it (run 'reckon manifest verify' and restore the head)`, { path: head.key, reason: 'unverifiable_head' });
  if (sidecarDigest(side) !== head.sha256) throw new StoreError(`the chain head ${head.key} hashes to ${head.sha256}, its .sha256 says ${sidecarDigest(side)}: it was changed after publication; no manifest is published on top of it (run 'reckon manifest verify')`, { path: head.key, reason: 'unverifiable_head' });
}

/**
 * Throws ConfigError (exit 2) when a run without the pipeline's key would extend a signed chain:
 * an unsigned manifest after a signed one is what `manifest verify` reports as a manifest
 * rewritten without the key (a store never goes back to unsigned), and a manifest once
 * published stays. The head is signed when its own bytes say so (`manifest_signing.mode`) or its
 * `.json.sig` is there. Also ConfigError when `signer` signs under another registry version than
 * the head's and the head's registry does not name its key as the pipeline's (a rotation must list
 * both keys first: verify-signatures.ts). Throws StoreError `unverifiable_head` (exit 2) for any
 * run when the head says it is signed and its signature is missing: such a head does not verify,
 * and is never extended. Checked before the leases (prepare) and again under the publish lock.
 */
export async function assertSigningKept(store: ObjectStore, signer: PipelineSigner | null | undefined, head?: { key: string | null }): Promise<void> {
  const { key } = head ?? await chainHead(store);
  if (!key) return;
  const [bytes, sig] = await Promise.all([store.get(key), store.get(signatureKey(key))]);
  let signing: { mode?: string; registry_sha256?: string | null } | undefined;
  try { signing = (JSON.parse(bytes?.toString('utf8') ?? '{}') as { manifest_signing?: typeof signing }).manifest_signing; } catch { signing = undefined; }
  const says = signing?.mode === 'signed';
  if (says && !sig) throw new StoreError(`the chain head ${key} is a signed manifest but its signature ${signatureKey(key).split('/').pop()} is missing: no manifest is published on top of it (restore the signature; run 'reckon manifest verify')`, { path: signatureKey(key), reason: 'unverifiable_head' });
  if (says && sig && bytes) await assertHeadSignature(store, key, bytes, sig, signing as { registry_sha256?: string | null; key?: string | null });
  if (!signer) {
    if (says || sig) throw new ConfigError(`the store ${store.location} is signed (its chain head ${key} is a signed manifest) and no pipeline key was given, so a run would publish an unsigned manifest on a signed chain, which never verifies again; give the configuration the store's runs use (--config FILE naming signing.registry and signing.pipeline_key; RECKON_PIPELINE_KEY_FILE supplies the key only with such a configuration); nothing was published`);
    return;
  }
  // A new registry version must name this run's key as the pipeline's in the head's registry too (rotation), or the link never verifies.
  const headRegistry = says ? signing?.registry_sha256 : null;
  if (!headRegistry || headRegistry === signer.registry.sha256) return;
  const before = await archivedRegistry(store, headRegistry);
  const fingerprint = signer.key.publicKey.fingerprint;
  if (before && !isPipelineKey(before, fingerprint)) throw new ConfigError(`the store's chain head ${key} is signed under registry ${headRegistry.slice(0, 12)}…, which does not name this run's pipeline key ${fingerprint}: a manifest signed with it would never verify; rotate the pipeline key with a registry version that lists both keys, or give the configuration the store's runs use; nothing was published`);
}

/**
 * Throws StoreError `unverifiable_head` (exit 2) when the signed head's signature does not verify
 * as the pipeline's under the registry version it names (kept under `signers/`): a forged or
 * damaged signature is not extended. A registry the store does not keep is left to `manifest
 * verify`, which names it.
 */
async function assertHeadSignature(store: ObjectStore, key: string, bytes: Buffer, sig: Buffer, signing: { registry_sha256?: string | null; key?: string | null }): Promise<void> {
  const registry = signing.registry_sha256 ? await archivedRegistry(store, signing.registry_sha256).catch(() => undefined) : undefined;
  if (!registry) return;
  try { verifyPipelineSignature(bytes, sig.toString('utf8'), registry, MANIFEST_NAMESPACE, signing.key); } catch (e) {
    if (!(e instanceof SignatureError)) throw e;
    throw new StoreError(`the chain head ${key}'s signature ${signatureKey(key).split('/').pop()} does not verify as the pipeline's: ${e.message}; no manifest is published on top of it (run 'reckon manifest verify')`, { path: signatureKey(key), reason: 'unverifiable_head' });
  }
}

/**
 * Publishes a manifest: under the publish lock, completes any half-written publication, checks
 * that the head verifies, fills in the chain link, records the digest under the run's staging
 * prefix, then writes the canonical bytes once and the digest beside them. `build` receives the
 * chain fields; `onRepair` hears of each half-written publication completed (or not), `fault` is
 * the crash-test seam (`manifest_written`, between the manifest and its digest). Returns the key
 * and SHA-256. A second write of the same key fails (AlreadyExistsError); an unverifiable head is
 * StoreError (exit 2).
 */
export async function publishManifest(
  store: ObjectStore,
  runId: string,
  build: (chain: { sequence: number; previous_manifest_sha256: string | null }) => ManifestV1 | Promise<ManifestV1>,
  opts: { readonly signer?: PipelineSigner | null; readonly onRepair?: (r: SidecarRepair) => void; readonly fault?: FaultPoints } = {},
): Promise<{ key: string; sha256: string; manifest: ManifestV1 }> {
  return withPublishLock(store, async () => {
    for (const r of await completeSidecars(store)) opts.onRepair?.(r);
    const head = await chainHead(store);
    await assertHeadVerifies(store, head);
    await assertSigningKept(store, opts.signer, head);
    const manifest = await build({ sequence: head.sequence + 1, previous_manifest_sha256: head.sha256 });
    // Belt and braces: the sequence must still be free (a lock holder that outlived its expiry
    // could otherwise fork the chain).
    const seqPrefix = `manifests/${String(head.sequence + 1).padStart(8, '0')}-`;
    // Only manifests count: a signature left by a run killed before its manifest (fault point `signed`) does not take the sequence.
    const taken = (await store.list('manifests')).filter((k) => k.startsWith(seqPrefix));
    if (taken.some((k) => k.endsWith('.json'))) throw new ConcurrencyError(`manifest sequence ${head.sequence + 1} was taken while this run held an expired publish lock`, 'lock');
    // A .sha256 is written only after its manifest: one without it means the manifest was deleted.
    const orphan = taken.find((k) => k.endsWith('.sha256'));
    if (orphan) throw new StoreError(`${orphan} is there but its manifest is not: manifest ${head.sequence + 1} was deleted after publication; no manifest takes its sequence (restore it; run 'reckon manifest verify')`, { path: orphan, reason: 'unverifiable_head' });
    parseManifest(manifest);
    const bytes = canonicalJson(manifest);
    const sha256 = sha256Hex(bytes);
    const key = `${seqPrefix}${runId}.json`;
    await store.putOnce(digestRecordKey(runId), canonicalJson({ key, sha256 }));
    if (opts.signer) {
      await store.putOnce(signatureKey(key), await pipelineSign(bytes, opts.signer, MANIFEST_NAMESPACE));
      await (opts.fault ?? NO_FAULTS)('signed');
    }
    await store.putOnce(key, bytes);
    await (opts.fault ?? NO_FAULTS)('manifest_written');
    await putSidecar(store, key, sha256);
    return { key, sha256, manifest };
  });
}

/** The key of a manifest's signature: `manifests/<seq>-<run>.json.sig`. */
export function signatureKey(manifestKey: string): string {
  return `${manifestKey}.sig`;
}
