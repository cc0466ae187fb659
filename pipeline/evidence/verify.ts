/**
 * `reckon evidence verify`: checks an evidence bag (folder or ZIP) in two layers.
 *
 * 1. BagIt (RFC 8493): structure, every payload and tag checksum, completeness, Payload-Oxum
 *    (`bagit.ts`). A payload file changed, removed or added is named here.
 * 2. reckon's own records, which hold even against someone who rewrote the bag's manifests: every
 *    payload file belongs to the layout; each manifest matches its `.sha256`, is canonical,
 *    version 1, and links into `chain.json` (its `previous_manifest_sha256` is the SHA-256 of the
 *    preceding manifest in the bag where that one is present, and of the chain's link otherwise);
 *    outputs and inputs match the digests their manifest recorded; each break's event log is
 *    contiguous (versions 1..n, each `from_state` the previous `to_state`, one identity that hashes
 *    to the break id) and replays to the state `break.json` records; observations and lineage
 *    events agree with their runs; and the break log holds against the bag's manifests and signer
 *    registries (breaks/verify-log.ts: hash chains, signatures, bindings, recorded heads), with the
 *    signature files and VERIFYING.txt exactly what the bag's objects give.
 *
 * Problems are returned in the order found; the command prints the first and exits 1.
 */
import { canonicalJson } from '../core/canonical.js';
import { sha256Hex } from '../core/digest.js';
import { breakId as computeBreakId } from '../breaks/break-id.js';
import { decodeObject, keyKind, ObjectFormatError, type DecodedObject } from '../breaks/break-objects.js';
import { eventOf } from '../breaks/break-store.js';
import { verifyBreakLogs, type ManifestRef } from '../breaks/verify-log.js';
import { signatureFiles, verifyingText } from './signature-files.js';
import { parseManifest, type ManifestV1 } from '../../manifests/v1/schema.js';
import { openBag, TAG_SIGNATURE, verifyStructure, type BagReader } from './bagit.js';
import { SignatureError } from '../core/errors.js';
import { EVIDENCE_NAMESPACE, isPipelineKey, MANIFEST_NAMESPACE, PIPELINE_SIGNER, verifyPipelineSignature } from '../signing/pipeline-signer.js';
import { archivedRegistry, type ObjectReader, type SignerRegistry } from '../signing/registry.js';
import { LAYOUT, safeBagPath } from './layout.js';
import { uuidV5 } from './openlineage.js';
import type { ChainLink } from './pack.js';

/** Outcome of verifying a bag. */
export interface EvidenceVerification {
  readonly ok: boolean;
  readonly problems: readonly string[];
  readonly payloadFiles: number;
  readonly payloadBytes: number;
  readonly manifests: number;
  readonly breaks: number;
  /** True when the bag's manifests and tag manifest are signed by the pipeline (issue 18). */
  readonly signed?: boolean;
  /** The SHA-256 of the registry the tag manifest's key was checked against when one was trusted (`--signers`); null when the bag's own registry was taken as it says. */
  readonly trustedRegistry?: string | null;
}

/** How to verify: `trusted`, the registry the auditor keeps, whose pipeline key must have signed the bag. */
export interface VerifyOptions {
  readonly trusted?: SignerRegistry | null;
}

const D = 'data/';
const PAYLOAD_LAYOUT: readonly RegExp[] = [
  /^report\.html$/, /^README\.txt$/, /^chain\.json$/,
  /^manifests\/[0-9]{8}-[a-z0-9_-]+\.(json|json\.sig|sha256)$/,
  /^outputs\/[a-z0-9_]+\/window_date=[0-9]{4}-[0-9]{2}-[0-9]{2}\/run=[a-z0-9_-]+\/[A-Za-z0-9_.-]+$/,
  /^breaks\/brk-[0-9a-f]{24}\/(events\/[0-9]{6}\.json|observations\/[a-z0-9_-]+\.json|proposals\/[0-9]{6}-[0-9a-f]{16}(\.withdrawal)?\.json|break\.json)$/,
  /^heads\/[a-z0-9_-]+\.json$/, /^signers\/[0-9a-f]{64}\.allowed_signers$/, /^VERIFYING\.txt$/,
  /^signatures\/brk-[0-9a-f]{24}\/[a-z0-9.-]+\.(payload|sig)$/,
  /^inputs\/[a-z0-9_-]+\/(objects\.json|checksums\.sha256|files\/[A-Za-z0-9._%/-]+)$/,
  /^lineage\/[a-z0-9_-]+\.openlineage\.json$/,
];

/**
 * Verifies the bag at `location` (a folder or a `.zip`). With `opts.trusted`, the key that signed
 * the tag manifest — which covers every payload file — must be that registry's pipeline key, and an
 * unsigned bag is a problem: a bag built with a registry and key of its own does not pass. Never
 * throws for a bad bag: problems are returned.
 */
export async function verifyEvidence(location: string, opts: VerifyOptions = {}): Promise<EvidenceVerification> {
  let bag: BagReader;
  try {
    bag = await openBag(location);
  } catch (e) {
    return { ok: false, problems: [`${location} cannot be read as a bag: ${(e as Error).message}`], payloadFiles: 0, payloadBytes: 0, manifests: 0, breaks: 0 };
  }
  try {
    const s = await verifyStructure(bag);
    const counts = { payloadFiles: s.payloadFiles, payloadBytes: s.payloadBytes };
    if (s.problems.length) return { ok: false, problems: s.problems, ...counts, manifests: 0, breaks: 0 };
    const c = await verifyContent(bag, opts.trusted ?? null);
    return { ok: c.problems.length === 0, problems: c.problems, ...counts, manifests: c.manifests, breaks: c.breaks, signed: c.signed, trustedRegistry: opts.trusted?.sha256 ?? null };
  } finally {
    await bag.close();
  }
}

async function readJson(bag: BagReader, path: string, problems: string[]): Promise<unknown> {
  try {
    return JSON.parse((await bag.read(path)).toString('utf8'));
  } catch (e) {
    problems.push(`${path} is not readable JSON: ${(e as Error).message}`);
    return undefined;
  }
}

/** The reckon-level checks of a bag whose BagIt layer is already valid. */
async function verifyContent(bag: BagReader, trusted: SignerRegistry | null): Promise<{ problems: string[]; manifests: number; breaks: number; signed: boolean }> {
  const problems: string[] = [];
  const payload = [...bag.files.keys()].filter((p) => p.startsWith(D)).map((p) => p.slice(D.length)).sort();
  for (const p of payload) if (!PAYLOAD_LAYOUT.some((re) => re.test(p))) problems.push(`${D}${p} is not part of a reckon evidence package`);
  if (!bag.files.has(D + LAYOUT.report)) problems.push(`${D}${LAYOUT.report} is missing`);
  const { links, scope } = await readChainLinks(bag, problems);

  // Manifests.
  const manifestFiles = payload.filter((p) => /^manifests\/[0-9]{8}-[a-z0-9_-]+\.json$/.test(p));
  const bySeq = new Map<number, { path: string; sha256: string }>();
  const docs = new Map<string, ManifestV1>();
  for (const p of manifestFiles) {
    const bytes = await bag.read(D + p);
    bySeq.set(Number(p.slice(10, 18)), { path: D + p, sha256: sha256Hex(bytes) });
  }
  for (const p of manifestFiles) await checkManifest(bag, p, links, bySeq, scope, docs, problems);

  // Breaks.
  const breakIds = [...new Set(payload.filter((p) => p.startsWith('breaks/')).map((p) => p.split('/')[1]))].sort();
  for (const id of breakIds) await checkBreak(bag, id, payload, docs, problems);
  const refs: ManifestRef[] = [];
  for (const p of manifestFiles) {
    const runId = /^manifests\/[0-9]{8}-([a-z0-9_-]+)\.json$/.exec(p)![1];
    const doc = docs.get(runId);
    if (doc) refs.push({ key: p, sha256: bySeq.get(Number(p.slice(10, 18)))!.sha256, manifest: doc });
  }
  const reader = bagObjects(bag);
  const log = await verifyBreakLogs(reader, { manifests: refs, breakIds, trusted });
  for (const f of log.problems) problems.push(`${D}${f.key}: ${f.problem}`);
  await checkSignatureFiles(bag, payload, breakIds, reader, { unsigned: log.counts.unsigned, legacy: log.counts.legacy, byRun: log.counts.by_run }, problems);
  const signed = await checkPipelineSignatures(bag, reader, refs, problems, trusted);
  return { problems, manifests: manifestFiles.length, breaks: breakIds.length, signed };
}

/**
 * The chain links recorded at packing time, each checked to follow the one before, and the runs
 * in scope: they carry outputs, inputs and lineage; other manifests in the bag prove break objects
 * only (null: every manifest is in scope).
 */
async function readChainLinks(bag: BagReader, problems: string[]): Promise<{ links: ChainLink[]; scope: Set<string> | null }> {
  if (!bag.files.has(D + LAYOUT.chain)) {
    problems.push(`${D}${LAYOUT.chain} is missing: the manifests cannot be linked to their chain`);
    return { links: [], scope: null };
  }
  const doc = (await readJson(bag, D + LAYOUT.chain, problems)) as { links?: ChainLink[]; scope_runs?: string[] } | undefined;
  const links = Array.isArray(doc?.links) ? doc!.links : [];
  const scope = Array.isArray(doc?.scope_runs) ? new Set(doc!.scope_runs) : null;
  if (doc && !Array.isArray(doc.links)) problems.push(`${D}${LAYOUT.chain} has no links list`);
  links.forEach((l, i) => {
    if (l.sequence !== i + 1) problems.push(`${D}${LAYOUT.chain}: link ${i + 1} records sequence ${l.sequence}`);
    const prev = i === 0 ? null : links[i - 1].sha256;
    if (l.previous_manifest_sha256 !== prev) problems.push(`${D}${LAYOUT.chain}: link ${i + 1} (${l.run_id}) points to ${l.previous_manifest_sha256}, the preceding link is ${prev}: the chain is broken`);
  });
  return { links, scope };
}

/**
 * One packed manifest: its sidecar, canonical form and schema, its name against its run and
 * sequence, its place in the chain; for a run in scope also its outputs, inputs and lineage.
 * A readable manifest is added to `docs` by run id.
 */
async function checkManifest(
  bag: BagReader, p: string, links: readonly ChainLink[], bySeq: ReadonlyMap<number, { path: string; sha256: string }>, scope: Set<string> | null,
  docs: Map<string, ManifestV1>, problems: string[],
): Promise<void> {
  const path = D + p;
  const [, seqText, runId] = /^manifests\/([0-9]{8})-([a-z0-9_-]+)\.json$/.exec(p)!;
  const seq = Number(seqText);
  const bytes = await bag.read(path);
  const sha = sha256Hex(bytes);
  const sidecarPath = path.replace(/\.json$/, '.sha256');
  if (!bag.files.has(sidecarPath)) problems.push(`${sidecarPath} is missing`);
  else if ((await bag.read(sidecarPath)).toString('utf8').split(/\s+/)[0] !== sha) problems.push(`${path}: SHA-256 ${sha} differs from ${sidecarPath}: the manifest was edited`);
  let doc: ManifestV1 | undefined;
  try {
    const parsed = JSON.parse(bytes.toString('utf8'));
    if (canonicalJson(parsed) !== bytes.toString('utf8')) problems.push(`${path} is not canonical JSON (RFC 8785)`);
    doc = parseManifest(parsed);
  } catch (e) {
    problems.push(`${path} is not a readable version-1 manifest: ${(e as Error).message.split('\n')[0]}`);
  }
  if (!doc) return;
  docs.set(runId, doc);
  if (doc.run_id !== runId) problems.push(`${path} records run ${doc.run_id}, its name says ${runId}`);
  if (doc.chain.sequence !== seq) problems.push(`${path} records sequence ${doc.chain.sequence}, its name says ${seq}`);
  const link = links[seq - 1];
  if (!link) problems.push(`${path}: sequence ${seq} is beyond the ${links.length} link(s) of ${D}${LAYOUT.chain}`);
  else if (link.sha256 !== sha) problems.push(`${path}: SHA-256 ${sha} is not link ${seq} of the chain (${link.sha256})`);
  const preceding = bySeq.get(seq - 1);
  const expectedPrev = seq === 1 ? null : preceding ? preceding.sha256 : links[seq - 2]?.sha256 ?? null;
  if (doc.chain.previous_manifest_sha256 !== expectedPrev) {
    problems.push(`${path}: previous_manifest_sha256 ${doc.chain.previous_manifest_sha256} ≠ ${expectedPrev}, the SHA-256 of ${preceding ? preceding.path : `chain link ${seq - 1}`}: the chain is broken`);
  }
  if (scope && !scope.has(runId)) return;
  for (const o of doc.outputs) {
    const op = D + o.key;
    if (!bag.files.has(op)) problems.push(`${op}, an output of run ${runId}, is missing`);
    else if ((await bag.digest(op, ['sha256'])).sha256 !== o.sha256) problems.push(`${op} does not have the SHA-256 ${o.sha256} that run ${runId} recorded`);
  }
  await checkInputs(bag, runId, doc, problems);
  await checkLineage(bag, runId, doc, sha, problems);
}

/**
 * The pipeline's signatures in a bag (issue 18): each signed manifest's `.json.sig` over its bytes
 * against the bag's copy of the registry it records, and, when any manifest is signed, the tag
 * manifest's signature by the pipeline key of the newest signed manifest's registry. The tag
 * manifest lists bag-info.txt and both payload manifests, which list every payload file, so the
 * one signature covers the files the bag derives when packed (report.html, break.json, chain.json,
 * README.txt, VERIFYING.txt …). Returns whether the bag is signed.
 */
async function checkPipelineSignatures(bag: BagReader, reader: ObjectReader, refs: readonly ManifestRef[], problems: string[], trusted: SignerRegistry | null): Promise<boolean> {
  let newest: { ref: ManifestRef; registry: Awaited<ReturnType<typeof archivedRegistry>> } | null = null;
  for (const ref of refs) {
    const s = ref.manifest.manifest_signing;
    if (s?.mode !== 'signed') continue;
    const path = `${D}${ref.key}.sig`;
    const registry = await archivedRegistry(reader, s.registry_sha256 ?? '').catch(() => undefined);
    if (!registry) { problems.push(`${D}${ref.key} names registry ${s.registry_sha256}, which the bag does not hold (signers/)`); continue; }
    if (!bag.files.has(path)) { problems.push(`${path} is missing: ${D}${ref.key} is a signed manifest`); continue; }
    try { verifyPipelineSignature(await bag.read(D + ref.key), (await bag.read(path)).toString('utf8'), registry, MANIFEST_NAMESPACE, s.key); } catch (e) {
      if (!(e instanceof SignatureError)) throw e;
      problems.push(`${D}${ref.key}: its signature does not verify it as the pipeline's: ${e.message}`);
    }
    if (!newest || ref.manifest.chain.sequence > newest.ref.manifest.chain.sequence) newest = { ref, registry };
  }
  if (!newest?.registry) {
    if (trusted) problems.push(`the bag is not signed (its manifests are unsigned), and a trusted registry (${trusted.source}) was given: nothing binds the bag to its pipeline key`);
    return false;
  }
  if (!bag.files.has('tagmanifest-sha256.txt')) { problems.push('tagmanifest-sha256.txt is missing: the bag\'s manifests are signed, so its tag manifest is signed too'); return true; }
  if (!bag.files.has(TAG_SIGNATURE)) { problems.push(`${TAG_SIGNATURE} is missing: the bag's manifests are signed, so its tag manifest is signed too`); return true; }
  try {
    const key = verifyPipelineSignature(await bag.read('tagmanifest-sha256.txt'), (await bag.read(TAG_SIGNATURE)).toString('utf8'), newest.registry, EVIDENCE_NAMESPACE);
    if (trusted && !isPipelineKey(trusted, key)) problems.push(`${TAG_SIGNATURE} is signed by ${key}, which the trusted registry ${trusted.source} does not name as the pipeline's key (${PIPELINE_SIGNER}): the bag's own registry vouches for a key you do not trust`);
  } catch (e) {
    if (!(e instanceof SignatureError)) throw e;
    problems.push(`tagmanifest-sha256.txt: ${TAG_SIGNATURE} does not verify it as the pipeline's (the bag-info, payload manifests or payload were rewritten): ${e.message}`);
  }
  return true;
}

/** The bag's payload read as a store (keys without `data/`). */
function bagObjects(bag: BagReader): ObjectReader {
  return {
    get: async (key) => (bag.files.has(D + key) ? bag.read(D + key) : undefined),
    list: async (prefix) => [...bag.files.keys()].filter((p) => p.startsWith(D + prefix)).map((p) => p.slice(D.length)).sort(),
  };
}

/** data/signatures/ and data/VERIFYING.txt must be exactly what the bag's break objects give. */
async function checkSignatureFiles(bag: BagReader, payload: readonly string[], breakIds: readonly string[], reader: ObjectReader, counts: { unsigned: number; legacy: number; byRun: number }, problems: string[]): Promise<void> {
  const objects: DecodedObject[] = [];
  for (const id of breakIds) {
    for (const k of await reader.list(`breaks/${id}/`)) {
      if (keyKind(k) === null) continue;
      try { objects.push(decodeObject(k, (await reader.get(k))!)); } catch (e) { if (!(e instanceof ObjectFormatError)) throw e; }
    }
  }
  const expected = new Map(signatureFiles(objects).map((f) => [f.path, f.bytes]));
  for (const p of payload.filter((x) => x.startsWith('signatures/'))) {
    const want = expected.get(p);
    if (!want) problems.push(`${D}${p} is not the payload or a signature of a break object in the bag`);
    else if (!(await bag.read(D + p)).equals(want)) problems.push(`${D}${p} is not the bytes of the object it is taken from`);
    expected.delete(p);
  }
  for (const p of expected.keys()) problems.push(`${D}${p} is missing: it is the payload or a signature of a break object in the bag`);
  const verifying = D + LAYOUT.verifying;
  if (!bag.files.has(verifying)) { if (breakIds.length) problems.push(`${verifying} is missing`); return; }
  if ((await bag.read(verifying)).toString('utf8') !== verifyingText(objects, counts)) problems.push(`${verifying} is not the text the bag's break objects give: it was edited`);
}

/** Reads a break object of the bag (either form); a problem and undefined when it is neither. */
async function readObject(bag: BagReader, path: string, problems: string[]): Promise<DecodedObject | undefined> {
  try { return decodeObject(path, await bag.read(D + path)); } catch (e) {
    if (e instanceof ObjectFormatError) { problems.push(`${D}${e.message}`); return undefined; }
    throw e;
  }
}

async function checkInputs(bag: BagReader, runId: string, doc: ManifestV1, problems: string[]): Promise<void> {
  const path = D + LAYOUT.inputObjects(runId);
  if (!bag.files.has(path)) { problems.push(`${path}, the input checksum list of run ${runId}, is missing`); return; }
  const list = (await readJson(bag, path, problems)) as { objects?: { path: string; bag_path: string; sha256: string; size: number }[] } | undefined;
  if (!list) return;
  const recorded = Object.values(doc.sources.datasets).flatMap((d) => d.objects.map((o) => `${o.path}\u0000${o.sha256}\u0000${o.size}`)).sort();
  const listed = (list.objects ?? []).map((o) => `${o.path}\u0000${o.sha256}\u0000${o.size}`).sort();
  if (canonicalJson(recorded) !== canonicalJson(listed)) problems.push(`${path} does not list exactly the input objects run ${runId} recorded`);
  const byBagPath = new Map((list.objects ?? []).map((o) => [o.bag_path, o]));
  const prefix = `${D}inputs/${runId}/files/`;
  for (const f of [...bag.files.keys()].filter((p) => p.startsWith(prefix)).sort()) {
    const o = byBagPath.get(f.slice(prefix.length));
    if (!o || safeBagPath(o.path) !== o.bag_path) { problems.push(`${f} is not an input of run ${runId}`); continue; }
    if ((await bag.digest(f, ['sha256'])).sha256 !== o.sha256) problems.push(`${f} does not have the SHA-256 ${o.sha256} that run ${runId} recorded for ${o.path}`);
  }
}

async function checkLineage(bag: BagReader, runId: string, doc: ManifestV1, sha: string, problems: string[]): Promise<void> {
  const path = D + LAYOUT.lineage(runId);
  if (!bag.files.has(path)) { problems.push(`${path}, the OpenLineage event of run ${runId}, is missing`); return; }
  const ev = (await readJson(bag, path, problems)) as { run?: { runId?: string; facets?: Record<string, any> } } | undefined;
  if (!ev) return;
  const f = ev.run?.facets ?? {};
  if (ev.run?.runId !== uuidV5(runId)) problems.push(`${path}: runId ${ev.run?.runId} is not the UUID of run ${runId}`);
  if (f.nominalTime?.nominalStartTime !== doc.window.start || f.nominalTime?.nominalEndTime !== doc.window.end) problems.push(`${path}: nominalTime does not match the run's window [${doc.window.start}, ${doc.window.end})`);
  if (doc.parent_run_id === null ? f.parent !== undefined : f.parent?.run?.runId !== uuidV5(doc.parent_run_id)) problems.push(`${path}: the parent facet does not match the run's parent_run_id ${doc.parent_run_id}`);
  if (f.reckon_run?.manifest_sha256 !== sha) problems.push(`${path}: reckon_run.manifest_sha256 is not the SHA-256 of the run's manifest`);
}

async function checkBreak(bag: BagReader, id: string, payload: readonly string[], docs: ReadonlyMap<string, ManifestV1>, problems: string[]): Promise<void> {
  const base = `breaks/${id}/`;
  const eventFiles = payload.filter((p) => p.startsWith(`${base}events/`)).sort();
  const events: Record<string, any>[] = [];
  for (const p of eventFiles) {
    const e = await readObject(bag, p, problems);
    if (!e) return;
    events.push(eventOf(e) as unknown as Record<string, any>);
  }
  let prevState: string | null = null;
  let identity: string | undefined;
  for (const [i, e] of events.entries()) {
    const file = D + eventFiles[i];
    const v = i + 1;
    if (file !== D + LAYOUT.breakEvent(id, v)) { problems.push(`break ${id}: ${file} where version ${v} was expected: its versions are not contiguous from 1`); return; }
    if (e.version !== v) { problems.push(`break ${id}: ${file} records version ${e.version}, expected ${v}: its versions are not contiguous`); return; }
    if (e.expected_version !== v - 1) problems.push(`break ${id}: ${file} expected version ${e.expected_version}, not ${v - 1}`);
    if (e.break_id !== id) problems.push(`break ${id}: ${file} belongs to break ${e.break_id}`);
    if ((e.from_state ?? null) !== prevState) problems.push(`break ${id}: ${file} moves from ${e.from_state} but the previous event left it ${prevState}`);
    const ident = `${e.control_id}\u0000${e.kind}\u0000${e.key}`;
    if (identity !== undefined && ident !== identity) problems.push(`break ${id}: ${file} names a different control, kind or key than version 1`);
    identity ??= ident;
    if (v === 1 && computeBreakId(String(e.control_id), String(e.kind), String(e.key)) !== id) problems.push(`break ${id}: (${e.control_id}, ${e.kind}, ${e.key}) does not hash to this break id`);
    prevState = e.to_state ?? null;
  }
  const summaryPath = D + LAYOUT.breakSummary(id);
  if (!bag.files.has(summaryPath)) problems.push(`${summaryPath} is missing: the recorded state of break ${id} cannot be checked`);
  else {
    const s = (await readJson(bag, summaryPath, problems)) as { state?: string | null; version?: number; events?: number } | undefined;
    if (s && typeof s.version === 'number' && s.version > events.length) {
      problems.push(`${D}${LAYOUT.breakEvent(id, events.length + 1)} is missing: ${summaryPath} records break ${id} at version ${s.version}, the log in the bag ends at version ${events.length} (the newest event was removed)`);
    } else if (s && ((s.state ?? null) !== prevState || s.version !== events.length || s.events !== events.length)) {
      problems.push(`break ${id}: its event log replays to ${prevState ?? 'no state'} at version ${events.length}, but ${summaryPath} records ${s.state ?? 'no state'} at version ${s.version}`);
    }
  }
  for (const p of payload.filter((x) => x.startsWith(`${base}observations/`))) {
    const o = (await readObject(bag, p, problems))?.body as { break_id?: string; run_id?: string } | undefined;
    if (!o) continue;
    const runId = p.slice(`${base}observations/`.length, -'.json'.length);
    if (o.break_id !== id || o.run_id !== runId) problems.push(`${D}${p} is not an observation of break ${id} by run ${runId}`);
    const m = docs.get(runId);
    if (m && !m.breaks.some((b) => b.break_id === id)) problems.push(`${D}${p}: run ${runId} observed break ${id} but its manifest does not list it`);
  }
}
