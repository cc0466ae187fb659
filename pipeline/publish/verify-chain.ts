/**
 * `reckon manifest verify` (CONTRACT §6): every manifest of a store checked in chain order —
 * canonical bytes, published digest, schema, sequence, links, outputs and still-present inputs —
 * and then the break log against them (breaks/verify-log.ts: chains, signatures, bindings, heads).
 */
import { join } from 'node:path';
import { stagedPlan } from '../breaks/break-plan.js';
import { verifyBreakLogs, type LogCounts, type LogFinding, type ManifestRef } from '../breaks/verify-log.js';
import { canonicalJson } from '../core/canonical.js';
import { hashFile, sha256Hex } from '../core/digest.js';
import { StoreError } from '../core/errors.js';
import type { ObjectStore } from '../store/object-store.js';
import { proveManifest } from './manifest-chain.js';
import { parseManifest, type ManifestV1 } from '../../manifests/v1/schema.js';
import type { SignerRegistry } from '../signing/registry.js';
import { checkOutputListing, checkResultsDigest, SignatureWalk } from './verify-signatures.js';

/**
 * Re-hashes the inputs a manifest lists, where they are still present in a local source folder:
 * an input that exists but no longer matches its recorded SHA-256 is reported (`inputsChanged`); a
 * missing one is not (extracts are not kept forever). Neither is a problem of the store: the
 * sources are outside it (a corrected delivery replaces a file in place), and the run's results
 * stand on the bytes its manifest records.
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
      if (o.sha256 && actual !== o.sha256) problems.push({ key, problem: `input ${o.path} in ${root} changed since the run: SHA-256 ${actual} ≠ recorded ${o.sha256} (outside the store: its records cannot be read back, nor packed with --include-inputs)` });
    }
  }
  return problems;
}

/**
 * The finding for a manifest without its `.sha256`: whether its bytes are still proven (a run
 * stopped between the two writes; the next run completes it: a notice, not a broken link) or not
 * (a problem; manifest-chain.ts).
 */
async function missingSidecar(store: ObjectStore, keys: readonly string[], key: string, sha: string): Promise<{ proven: boolean; text: string }> {
  const next = keys[keys.indexOf(key) + 1];
  let nextPrevious: string | null | undefined;
  try { nextPrevious = next ? (JSON.parse((await store.get(next))!.toString('utf8')) as ManifestV1).chain?.previous_manifest_sha256 : undefined; } catch { nextPrevious = undefined; }
  const proof = await proveManifest(store, key, sha, nextPrevious);
  return proof.proven
    ? { proven: true, text: `its .sha256 digest file is missing: its run stopped between the manifest and its digest; the bytes (SHA-256 ${sha}) are proven by ${proof.by}, and the next 'reckon run' on this store writes it` }
    : { proven: false, text: `its .sha256 digest file is missing and nothing proves its bytes: ${proof.why}` };
}

/** One finding of `manifest verify`. */
export interface VerifyProblem {
  readonly key: string;
  readonly problem: string;
}

/**
 * Verifies every manifest of the store in chain order (or up to and including `runId`): canonical
 * bytes, recorded digest, schema, contiguous sequence, previous-manifest links, and the SHA-256 of
 * every output object it lists. Returns the problems found, first broken link first, and apart
 * from them the inputs changed in their source folders since their runs.
 */
export async function verifyManifests(store: ObjectStore, runId?: string, opts: { inputs?: boolean; trusted?: SignerRegistry | null } = {}): Promise<ManifestVerification> {
  const all = await store.list('manifests');
  // Only objects directly under manifests/ can be manifests; anything deeper is a stray object.
  const keys = all.filter((k) => /^manifests\/[^/]+\.json$/.test(k)).sort();
  const problems: VerifyProblem[] = [];
  const inputsChanged: VerifyProblem[] = [];
  const sidecarNotices: VerifyProblem[] = [];
  const walk = new SignatureWalk(store, opts.trusted ?? null, problems);
  const refs: ManifestRef[] = [];
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
    if (!side) {
      const missing = await missingSidecar(store, keys, key, sha);
      (missing.proven ? sidecarNotices : problems).push({ key, problem: missing.text });
    }
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
      refs.push({ key, sha256: sha, manifest: doc });
      await walk.check(key, bytes, doc);
      await checkChainedManifest(store, key, doc, seq, m[2], previous, problems);
    }
    if (doc && opts.inputs !== false) inputsChanged.push(...await verifyInputs(key, doc));
    previous = sha;
    expectedSeq = seq + 1;
    if (runId && m[2] === runId) break;
  }
  walk.finish();
  if (!runId) problems.push(...(await checkOutputListing(store, refs)), ...strayManifestObjects(all));
  const notices = [...sidecarNotices, ...walk.notices, ...strayManifestSignatures(all)];
  // A staged plan that fails its checks is a problem of its own; the log is then checked without it.
  const planProblems: VerifyProblem[] = [];
  const readPlan = (run: string, sha256: string) => stagedPlan(store, run, sha256).catch((e: unknown) => {
    if (!(e instanceof StoreError)) throw e;
    planProblems.push({ key: e.path, problem: e.message });
    return undefined;
  });
  const breaks = await verifyBreakLogs(store, { manifests: refs, stagedPlan: readPlan, trusted: opts.trusted ?? null });
  for (const p of [...planProblems, ...breaks.problems]) problems.push(p);
  return { checked, problems, notices, inputsChanged, signed: walk.signed, unsigned: walk.unsigned, breaks: { counts: breaks.counts, notices: breaks.notices, registries: breaks.registries } };
}

/**
 * A readable manifest against its file name (run id, sequence) and the preceding manifest's
 * SHA-256, then every output it lists and, when they all match, its results digest.
 */
async function checkChainedManifest(store: ObjectStore, key: string, doc: ManifestV1, seq: number, runIdOfName: string, previous: string | null, problems: VerifyProblem[]): Promise<void> {
  if (doc.run_id !== runIdOfName) problems.push({ key, problem: `run_id ${doc.run_id} does not match the file name` });
  if (doc.chain.sequence !== seq) problems.push({ key, problem: `records sequence ${doc.chain.sequence}, file name says ${seq}` });
  if (doc.chain.previous_manifest_sha256 !== previous) problems.push({ key, problem: `previous_manifest_sha256 ${doc.chain.previous_manifest_sha256} does not match the preceding manifest ${previous}: the chain is broken` });
  const before = problems.length;
  for (const o of doc.outputs) {
    const body = await store.get(o.key);
    // A run stopped between its manifest and the promotion of its outputs leaves them staged
    // until the next run rolls it forward: intact, just not promoted yet.
    const staged = body ? undefined : await store.get(`_staging/${doc.run_id}/${o.key}`);
    if (!body && staged && sha256Hex(staged) === o.sha256) continue;
    if (!body) problems.push({ key, problem: `output ${o.key} is missing` });
    else if (sha256Hex(body) !== o.sha256) problems.push({ key, problem: `output ${o.key} was edited: SHA-256 ${sha256Hex(body)} ≠ ${o.sha256}` });
  }
  // Recomputed only over outputs that match their digests: an edited object is named as such.
  if (problems.length === before) {
    const digest = await checkResultsDigest(store, key, doc);
    if (digest) problems.push(digest);
  }
}

/** What `manifest verify` found: problems (first broken link first), notices, how many manifests were signed. */
export interface ManifestVerification {
  readonly checked: number;
  readonly problems: VerifyProblem[];
  readonly notices: VerifyProblem[];
  /** Inputs still in their local source folder whose bytes are no longer those the run read (not a problem of the store). */
  readonly inputsChanged: VerifyProblem[];
  readonly signed: number;
  readonly unsigned: number;
  readonly breaks: BreakLogReport;
}

/**
 * Objects under `manifests/` that reckon never writes: anything but `<sequence>-<run_id>.json`, its
 * `.sha256` beside it, and `.json.sig` (a signature without its manifest is a notice, above). An
 * object placed there by hand is refused like one under outputs/ that no manifest lists.
 */
function strayManifestObjects(keys: readonly string[]): VerifyProblem[] {
  const manifests = new Set(keys.filter((k) => k.endsWith('.json')));
  return keys.filter((k) => {
    if (/^manifests\/[0-9]{8}-[^/]+\.json(\.sig)?$/.test(k)) return false;
    return !(/^manifests\/[0-9]{8}-[^/]+\.sha256$/.test(k) && manifests.has(k.replace(/\.sha256$/, '.json')));
  }).map((k) => (/^manifests\/[0-9]{8}-[^/]+\.sha256$/.test(k)
    // A .sha256 is written only after its manifest: alone, it is what a deleted manifest leaves.
    ? { key: k, problem: `is the digest of ${k.replace(/\.sha256$/, '.json')}, which is not there: that manifest was published and deleted since (restore it; keep this file and its .json.sig, the next run refuses until then), unless this file was placed there by hand` }
    : { key: k, problem: 'is not an object reckon writes under manifests/ (<sequence>-<run_id>.json with its .sha256 and .json.sig): it was placed there by hand' }));
}

/** A signature whose manifest never appeared: a run killed between the two writes (fault point `signed`), never published. */
function strayManifestSignatures(keys: readonly string[]): VerifyProblem[] {
  const manifests = new Set(keys.filter((k) => k.endsWith('.json')));
  const sidecars = new Set(keys.filter((k) => k.endsWith('.sha256')));
  // With its .sha256 there the manifest was published (and deleted): strayManifestObjects names that.
  return keys.filter((k) => k.endsWith('.json.sig') && !manifests.has(k.slice(0, -4)) && !sidecars.has(k.replace(/\.json\.sig$/, '.sha256')))
    .map((k) => ({ key: k, problem: 'a signature of a manifest that was never published (a run stopped before its manifest): ignored' }));
}

/** What the break-log check counted and noticed (legacy, unsigned, superseded, pending, unattested registries). */
export interface BreakLogReport {
  readonly counts: LogCounts;
  readonly notices: readonly LogFinding[];
  readonly registries: readonly string[];
}
