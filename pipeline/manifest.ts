/**
 * Publishing and verifying run manifests (CONTRACT §6). A manifest is canonical JSON (RFC 8785)
 * hashed with SHA-256, written once under `manifests/<sequence>-<run_id>.json` with its digest in
 * a write-once `.sha256` beside it. The chain is linear per store: publication holds a store-wide
 * lock, reads the head, and records the head's SHA-256 as `previous_manifest_sha256`.
 */
import { hostname } from 'node:os';
import { join } from 'node:path';
import { hashFile } from './sources/files.js';
import { canonicalJson, sha256Hex } from './canonical.js';
import { ConcurrencyError } from './errors.js';
import { AlreadyExistsError, type ObjectStore } from './store/object-store.js';
import { parseManifest, type ManifestV1 } from '../manifests/v1/schema.js';

const LOCK_PREFIX = '_locks/publish';
const LOCK_TTL_MS = 120_000;

/** The chain head: last sequence number and its manifest's SHA-256 (0 and null for an empty store). */
export async function chainHead(store: ObjectStore): Promise<{ sequence: number; sha256: string | null; key: string | null }> {
  const keys = (await store.list('manifests')).filter((k) => /\/[0-9]{8}-[^/]+\.json$/.test(k)).sort();
  if (keys.length === 0) return { sequence: 0, sha256: null, key: null };
  const key = keys[keys.length - 1];
  const bytes = (await store.get(key))!;
  return { sequence: Number(key.split('/').pop()!.slice(0, 8)), sha256: sha256Hex(bytes), key };
}

function alive(pid: number): boolean {
  try { process.kill(pid, 0); return true; } catch (e) { return (e as NodeJS.ErrnoException).code === 'EPERM'; }
}

interface LockGrant { readonly pid: number; readonly host: string; readonly acquired_at: string; readonly expires_at: string }

/**
 * Runs `fn` holding the store-wide publish lock. The lock is a sequence of write-once grants
 * `_locks/publish/<generation>.json`; a grant is held until its `.released` marker exists, its
 * process is gone (same host) or it expires. To take the lock a publisher writes generation n+1
 * once the latest generation n is free — a conditional create, so of two publishers that both saw
 * n free exactly one gets n+1. Nothing is ever deleted to break a lock, so a stale lock cannot be
 * broken twice (the race that could fork the chain).
 */
export async function withPublishLock<T>(store: ObjectStore, fn: (generation: number) => Promise<T>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const keys = await store.list(LOCK_PREFIX);
    const gens = keys.map((k) => /\/([0-9]{10})\.json$/.exec(k)).filter((m): m is RegExpExecArray => m !== null).map((m) => Number(m[1]));
    const latest = gens.length ? Math.max(...gens) : 0;
    let free = latest === 0 || keys.includes(`${LOCK_PREFIX}/${String(latest).padStart(10, '0')}.released`);
    if (!free) {
      const body = await store.get(`${LOCK_PREFIX}/${String(latest).padStart(10, '0')}.json`);
      try {
        const g = JSON.parse(body!.toString('utf8')) as LockGrant;
        free = Date.parse(g.expires_at) < Date.now() || (g.host === hostname() && !alive(g.pid));
      } catch { free = true; }
    }
    if (free) {
      const gen = latest + 1;
      const now = Date.now();
      const grant: LockGrant = { pid: process.pid, host: hostname(), acquired_at: new Date(now).toISOString(), expires_at: new Date(now + LOCK_TTL_MS).toISOString() };
      try {
        await store.putOnce(`${LOCK_PREFIX}/${String(gen).padStart(10, '0')}.json`, JSON.stringify(grant));
      } catch (e) {
        if (!(e instanceof AlreadyExistsError)) throw e;
        // Another publisher took generation gen first: look again, within the deadline.
        if (Date.now() > deadline) throw new ConcurrencyError('the store-wide publish lock is held by another run', 'lock');
        await new Promise((r) => setTimeout(r, 10 + Math.random() * 50));
        continue;
      }
      try {
        return await fn(gen);
      } finally {
        await store.putOnce(`${LOCK_PREFIX}/${String(gen).padStart(10, '0')}.released`, new Date().toISOString()).catch(() => undefined);
        // Old generations are history nobody needs: keep the last few.
        for (const k of keys) {
          const m = /\/([0-9]{10})\.(json|released)$/.exec(k);
          if (m && Number(m[1]) < gen - 4) await store.deleteScratch(k).catch(() => undefined);
        }
      }
    }
    if (Date.now() > deadline) throw new ConcurrencyError('the store-wide publish lock is held by another run', 'lock');
    await new Promise((r) => setTimeout(r, 25 + Math.random() * 100));
  }
}

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

/** The published manifest of `runId`, with its key and SHA-256, or undefined. */
export async function findManifest(store: ObjectStore, runId: string): Promise<{ key: string; sha256: string; manifest: ManifestV1 } | undefined> {
  const key = (await store.list('manifests')).find((k) => k.endsWith(`-${runId}.json`) && /\/[0-9]{8}-/.test(k));
  if (!key) return undefined;
  const bytes = (await store.get(key))!;
  return { key, sha256: sha256Hex(bytes), manifest: parseManifest(JSON.parse(bytes.toString('utf8'))) };
}

/** Every published manifest in chain order (key, SHA-256, parsed document). */
export async function listManifests(store: ObjectStore): Promise<{ key: string; sha256: string; manifest: ManifestV1 }[]> {
  const keys = (await store.list('manifests')).filter((k) => /\/[0-9]{8}-[^/]+\.json$/.test(k)).sort();
  const out = [];
  for (const key of keys) {
    const bytes = (await store.get(key))!;
    out.push({ key, sha256: sha256Hex(bytes), manifest: parseManifest(JSON.parse(bytes.toString('utf8'))) });
  }
  return out;
}

/**
 * Re-hashes the inputs a manifest lists, where they are still present in a local source folder:
 * an input that exists but no longer matches its recorded SHA-256 is a problem; a missing one is not
 * (extracts are not kept forever).
 */
async function verifyInputs(key: string, doc: ManifestV1): Promise<VerifyProblem[]> {
  const root = doc.sources.location;
  if (root.startsWith('s3://')) return [];
  const problems: VerifyProblem[] = [];
  for (const d of Object.values(doc.sources.datasets)) {
    const listed = [...d.objects, ...(((d as { control_files?: { path: string; sha256: string }[] }).control_files) ?? [])];
    for (const o of listed) {
      let actual: string;
      try { actual = (await hashFile(join(root, ...o.path.split('/')))).sha256; } catch { continue; }
      if (o.sha256 && actual !== o.sha256) problems.push({ key, problem: `input ${o.path} changed since the run: SHA-256 ${actual} ≠ recorded ${o.sha256}` });
    }
  }
  return problems;
}

/** One finding of `manifest verify`. */
export interface VerifyProblem {
  readonly key: string;
  readonly problem: string;
}

/**
 * Verifies every manifest of the store in chain order (or up to and including `runId`): canonical
 * bytes, recorded digest, schema, contiguous sequence, previous-manifest links, and the SHA-256 of
 * every output object it lists. Returns the problems found, first broken link first.
 */
export async function verifyManifests(store: ObjectStore, runId?: string, opts: { inputs?: boolean } = {}): Promise<{ checked: number; problems: VerifyProblem[] }> {
  const keys = (await store.list('manifests')).filter((k) => k.endsWith('.json')).sort();
  const problems: VerifyProblem[] = [];
  let previous: string | null = null;
  let expectedSeq = 1;
  let checked = 0;
  for (const key of keys) {
    const name = key.split('/').pop()!;
    const m = /^([0-9]{8})-(.+)\.json$/.exec(name);
    if (!m) { problems.push({ key, problem: 'name is not <sequence>-<run_id>.json' }); continue; }
    const bytes = (await store.get(key))!;
    const sha = sha256Hex(bytes);
    checked += 1;
    const seq = Number(m[1]);
    if (seq !== expectedSeq) problems.push({ key, problem: `sequence ${seq} where ${expectedSeq} was expected: a manifest is missing or out of order` });
    const side = await store.get(key.replace(/\.json$/, '.sha256'));
    if (!side) problems.push({ key, problem: 'its .sha256 digest file is missing' });
    else if (side.toString('utf8').split(/\s+/)[0] !== sha) problems.push({ key, problem: `SHA-256 ${sha} differs from the published digest ${side.toString('utf8').split(/\s+/)[0]}: the manifest was edited` });
    let doc: ManifestV1 | undefined;
    try {
      const parsed = JSON.parse(bytes.toString('utf8'));
      if (canonicalJson(parsed) !== bytes.toString('utf8')) problems.push({ key, problem: 'bytes are not canonical JSON (RFC 8785)' });
      doc = parseManifest(parsed);
    } catch (e) {
      problems.push({ key, problem: `not a readable version-1 manifest: ${(e as Error).message.split('\n')[0]}` });
    }
    if (doc) {
      if (doc.run_id !== m[2]) problems.push({ key, problem: `run_id ${doc.run_id} does not match the file name` });
      if (doc.chain.sequence !== seq) problems.push({ key, problem: `records sequence ${doc.chain.sequence}, file name says ${seq}` });
      if (doc.chain.previous_manifest_sha256 !== previous) problems.push({ key, problem: `previous_manifest_sha256 ${doc.chain.previous_manifest_sha256} does not match the preceding manifest ${previous}: the chain is broken` });
      for (const o of doc.outputs) {
        const body = await store.get(o.key);
        // A run stopped between its manifest and the promotion of its outputs leaves them staged
        // until the next run rolls it forward: intact, just not promoted yet.
        const staged = body ? undefined : await store.get(`_staging/${doc.run_id}/${o.key}`);
        if (!body && staged && sha256Hex(staged) === o.sha256) continue;
        if (!body) problems.push({ key, problem: `output ${o.key} is missing` });
        else if (sha256Hex(body) !== o.sha256) problems.push({ key, problem: `output ${o.key} was edited: SHA-256 ${sha256Hex(body)} ≠ ${o.sha256}` });
      }
    }
    if (doc && opts.inputs !== false) for (const p of await verifyInputs(key, doc)) problems.push(p);
    previous = sha;
    expectedSeq = seq + 1;
    if (runId && m[2] === runId) break;
  }
  return { checked, problems };
}
