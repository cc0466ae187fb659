/**
 * Publishing run manifests (CONTRACT §6). A manifest is canonical JSON (RFC 8785)
 * hashed with SHA-256, written once under `manifests/<sequence>-<run_id>.json` with its digest in
 * a write-once `.sha256` beside it. The chain is linear per store: publication holds a store-wide
 * lock, reads the head, and records the head's SHA-256 as `previous_manifest_sha256`.
 */
import { canonicalJson } from '../core/canonical.js';
import { sha256Hex } from '../core/digest.js';
import { ConcurrencyError } from '../core/errors.js';
import { chainHead } from '../store/manifests.js';
import type { ObjectStore } from '../store/object-store.js';
import { parseManifest, type ManifestV1 } from '../../manifests/v1/schema.js';
import { withPublishLock } from './publish-lock.js';

/**
 * Publishes a manifest: under the publish lock, fills in the chain link, writes the canonical
 * bytes once and the digest beside them. `build` receives the chain fields. Returns the key and
 * SHA-256. A second write of the same key fails (AlreadyExistsError).
 */
export async function publishManifest(
  store: ObjectStore,
  runId: string,
  build: (chain: { sequence: number; previous_manifest_sha256: string | null }) => ManifestV1 | Promise<ManifestV1>,
): Promise<{ key: string; sha256: string; manifest: ManifestV1 }> {
  return withPublishLock(store, async () => {
    const head = await chainHead(store);
    const manifest = await build({ sequence: head.sequence + 1, previous_manifest_sha256: head.sha256 });
    // Belt and braces: the sequence must still be free (a lock holder that outlived its expiry
    // could otherwise fork the chain).
    const seqPrefix = `manifests/${String(head.sequence + 1).padStart(8, '0')}-`;
    if ((await store.list('manifests')).some((k) => k.startsWith(seqPrefix))) throw new ConcurrencyError(`manifest sequence ${head.sequence + 1} was taken while this run held an expired publish lock`, 'lock');
    parseManifest(manifest);
    const bytes = canonicalJson(manifest);
    const sha256 = sha256Hex(bytes);
    const key = `manifests/${String(head.sequence + 1).padStart(8, '0')}-${runId}.json`;
    await store.putOnce(key, bytes);
    await store.putOnce(key.replace(/\.json$/, '.sha256'), `${sha256}  ${key.split('/').pop()}\n`);
    return { key, sha256, manifest };
  });
}
