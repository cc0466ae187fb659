/**
 * Reading the published manifest chain of a store (CONTRACT §6): its head, one run's manifest,
 * every manifest in chain order. Writing is publish/manifest-chain.ts; checking is
 * publish/verify-chain.ts.
 */
import { sha256Hex } from '../core/digest.js';
import { ConfigError } from '../core/errors.js';
import { parseManifest, type ManifestV1 } from '../../manifests/v1/schema.js';
import type { ObjectStore } from './object-store.js';

/** A manifest key: `manifests/<8-digit sequence>-<run_id>.json`. */
export const MANIFEST_KEY = /^manifests\/[0-9]{8}-[^/]+\.json$/;

/** The chain head: last sequence number and its manifest's SHA-256 (0 and null for an empty store). */
export async function chainHead(store: ObjectStore): Promise<{ sequence: number; sha256: string | null; key: string | null }> {
  const keys = (await store.list('manifests')).filter((k) => MANIFEST_KEY.test(k)).sort();
  if (keys.length === 0) return { sequence: 0, sha256: null, key: null };
  const key = keys[keys.length - 1];
  const bytes = (await store.get(key))!;
  return { sequence: Number(key.split('/').pop()!.slice(0, 8)), sha256: sha256Hex(bytes), key };
}

/** The published manifest of `runId`, with its key and SHA-256, or undefined. */
export async function findManifest(store: ObjectStore, runId: string): Promise<{ key: string; sha256: string; manifest: ManifestV1 } | undefined> {
  const key = (await store.list('manifests')).find((k) => k.endsWith(`-${runId}.json`) && /\/[0-9]{8}-/.test(k));
  if (!key) return undefined;
  const bytes = (await store.get(key))!;
  return { key, sha256: sha256Hex(bytes), manifest: parseManifest(JSON.parse(bytes.toString('utf8'))) };
}

/**
 * Every published manifest in chain order (key, SHA-256, parsed document). Manifests of `known`
 * (an earlier answer) are taken as they are, not read again: a reader that polls reads only the
 * new ones (checking what is stored against its chain is verify-chain's work).
 */
export async function listManifests(store: ObjectStore, known: readonly { key: string; sha256: string; manifest: ManifestV1 }[] = []): Promise<{ key: string; sha256: string; manifest: ManifestV1 }[]> {
  const keys = (await store.list('manifests')).filter((k) => MANIFEST_KEY.test(k)).sort();
  const had = new Map(known.map((m) => [m.key, m]));
  const out = [];
  for (const key of keys) {
    const seen = had.get(key);
    if (seen) { out.push(seen); continue; }
    const bytes = (await store.get(key))!;
    out.push({ key, sha256: sha256Hex(bytes), manifest: parseManifest(JSON.parse(bytes.toString('utf8'))) });
  }
  return out;
}

/**
 * The run id a command line's `--run` names: `latest` is the run of the chain head (the last
 * published manifest), anything else is itself. Throws ConfigError when `latest` is asked of a
 * store with no published run.
 */
export async function resolveRunId(store: ObjectStore, run: string): Promise<string> {
  if (run !== 'latest') return run;
  const head = await chainHead(store);
  if (!head.key) throw new ConfigError(`--run latest: the store ${store.location} has no published run yet`);
  return /^manifests\/[0-9]{8}-(.+)\.json$/.exec(head.key)![1];
}
