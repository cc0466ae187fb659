/**
 * `reckon evidence pack`: assembles the evidence of a run, a break or a window into a BagIt bag
 * (see `layout.ts` for the payload and `bagit.ts` for the bag). Everything is copied byte for byte
 * from the store (manifests, sidecars, break events, observations, outputs) and checked against
 * the digests recorded for it before it is packed: a store whose chain, sidecars or outputs no
 * longer match is refused (EvidenceIntegrityError, exit 1) rather than packed into a bag that would
 * not verify. Scope:
 *   --run R            that run's manifest, its outputs and inputs list, and every break it
 *                      opened, observed, reopened or verified;
 *   --break B          that break's log and observations, and every run that observed or verified it;
 *   --window S/E [-c]  every run whose window overlaps [S, E) (and ran control C), with their breaks
 *                      (of control C only, with --control).
 */
import { join } from 'node:path';
import { stat } from 'node:fs/promises';
import { canonicalJson } from '../core/canonical.js';
import { ConfigError, EvidenceIntegrityError, InternalError, StoreError } from '../core/errors.js';
import type { BreakRecord } from '../breaks/break-store.js';
import { BreakStore } from '../breaks/break-store.js';
import { type ObjectStore } from '../store/object-store.js';
import { LocalObjectStore } from '../store/local-store.js';
import type { Window } from '../contract/window.js';
import { reportHtml, reckonVersion } from '../report/report.js';
import { loadControls } from '../controls/definitions.js';
import { loadBreakIndex, loadRunBreaks, manifestKeys, readStoredManifest, runLookups, type BreakView, type RunView, type StoredManifest } from '../report/run-view.js';
import { assertSafeRelativePath, bagTarget, digests, writeBag, type BagInfo, type PayloadEntry, type WrittenBag } from './bagit.js';
import { LAYOUT, README, safeBagPath, sha256sumLine } from './layout.js';
import { runEvent } from './openlineage.js';
import { decodeObject, keyKind, type DecodedObject } from '../breaks/break-objects.js';
import { verifyBreakLogs } from '../breaks/verify-log.js';
import { archivedRegistry, registryKey, type SignerRegistry } from '../signing/registry.js';
import { EVIDENCE_NAMESPACE, pipelineSign, pipelineSigner, type PipelineSigner } from '../signing/pipeline-signer.js';
import type { SigningKey } from '../signing/signing-key.js';
import { SignatureError } from '../core/errors.js';
import { signatureKey } from '../publish/manifest-chain.js';
import { SignatureWalk } from '../publish/verify-signatures.js';
import { signatureFiles, verifyingText } from './signature-files.js';

/** What to pack. */
export type EvidenceScope =
  | { readonly kind: 'run'; readonly runId: string }
  | { readonly kind: 'break'; readonly breakId: string }
  | { readonly kind: 'window'; readonly window: Window; readonly control: string | null };

/** Options of `packEvidence`. */
export interface PackOptions {
  readonly scope: EvidenceScope;
  readonly store: ObjectStore;
  /** `FILE.zip` or a folder path that must not exist yet. */
  readonly out: string;
  readonly includeInputs: boolean;
  /** bag-info Source-Organization. */
  readonly organization: string;
  /** Packing time (Bagging-Date and the report's generation time). */
  readonly now?: Date;
  /** The pipeline's key: signs the tag manifest of a bag whose manifests are signed (required then). */
  readonly pipelineKey?: SigningKey | null;
  /** The registry the packer trusts (the `--config`'s signing.registry): a break signature it does not back is refused as by `manifest verify --config`. */
  readonly trusted?: SignerRegistry | null;
}

/** The store no longer matches what it recorded, so no verifiable bag can be made (core/errors.ts; exit 1). */
export { EvidenceIntegrityError };

/** One link of the manifest chain as recorded in `chain.json`. */
export interface ChainLink {
  readonly sequence: number;
  readonly run_id: string;
  readonly key: string;
  readonly sha256: string;
  readonly previous_manifest_sha256: string | null;
}

/** What was packed. */
export interface PackResult extends WrittenBag {
  readonly runs: readonly string[];
  readonly breaks: readonly string[];
  readonly externalIdentifier: string;
}

/** Describes a scope as the bag's External-Identifier. */
export function externalIdentifier(scope: EvidenceScope): string {
  if (scope.kind === 'run') return `reckon:run:${scope.runId}`;
  if (scope.kind === 'break') return `reckon:break:${scope.breakId}`;
  return `reckon:window:${scope.window.start}/${scope.window.end}${scope.control ? `:control:${scope.control}` : ''}`;
}

function integrity(message: string): never {
  throw new EvidenceIntegrityError(`${message}; run 'reckon manifest verify' on the store. No bag was written.`);
}

/** Reads every manifest and checks the chain, sidecars and signatures (publish/verify-signatures.ts), returning all manifests and the chain links. */
async function readChain(store: ObjectStore): Promise<{ manifests: StoredManifest[]; links: ChainLink[] }> {
  const manifests: StoredManifest[] = [];
  const links: ChainLink[] = [];
  let previous: string | null = null;
  // The bag is signed with the pipeline's key: it must not vouch for a manifest whose own signature fails.
  const unsigned: { key: string; problem: string }[] = [];
  const signatures = new SignatureWalk(store, null, unsigned);
  for (const key of await manifestKeys(store)) {
    const m = await readStoredManifest(store, key);
    await signatures.check(key, m.bytes, m.manifest);
    if (unsigned.length) integrity(`${unsigned[0].key} ${unsigned[0].problem}`);
    if (m.sequence !== links.length + 1) integrity(`manifest ${key} has sequence ${m.sequence} where ${links.length + 1} was expected`);
    if (m.manifest.run_id !== m.run_id) integrity(`manifest ${key} records run ${m.manifest.run_id}`);
    if (m.manifest.chain.previous_manifest_sha256 !== previous) integrity(`manifest ${key} links to ${m.manifest.chain.previous_manifest_sha256}, not to the preceding manifest ${previous}`);
    if (!m.sidecar) throw new EvidenceIntegrityError(`manifest ${key} has no .sha256 beside it; if 'reckon manifest verify' says its bytes are proven (a run stopped between the two), run again on the store to complete the publication, then pack; otherwise the manifest cannot be vouched for. No bag was written.`);
    if (m.sidecar.toString('utf8').split(/\s+/)[0] !== m.sha256) integrity(`manifest ${key} has SHA-256 ${m.sha256}, its .sha256 says ${m.sidecar.toString('utf8').split(/\s+/)[0]}`);
    if (canonicalJson(JSON.parse(m.bytes.toString('utf8'))) !== m.bytes.toString('utf8')) integrity(`manifest ${key} is not canonical JSON`);
    manifests.push(m);
    links.push({ sequence: m.sequence, run_id: m.run_id, key, sha256: m.sha256, previous_manifest_sha256: m.manifest.chain.previous_manifest_sha256 });
    previous = m.sha256;
  }
  return { manifests, links };
}

/** ISO-8601 UTC texts compared as instants (fractions normalised to six digits). */
function isoKey(s: string): string {
  const m = /^(.{19})(?:\.([0-9]{1,6}))?Z$/.exec(s);
  return m ? `${m[1]}.${(m[2] ?? '').padEnd(6, '0')}` : s;
}

/** The runs and breaks in scope. Throws ConfigError when the scope names nothing in the store. */
async function resolveScope(
  scope: EvidenceScope, all: readonly StoredManifest[], index: ReadonlyMap<string, BreakRecord>, store: ObjectStore,
): Promise<{ runs: StoredManifest[]; breakFilter: (b: BreakView) => boolean; extraBreak?: string }> {
  if (scope.kind === 'run') {
    const m = all.find((x) => x.run_id === scope.runId);
    if (!m) throw new ConfigError(`the store ${store.location} has no published manifest for run ${scope.runId}`);
    return { runs: [m], breakFilter: () => true };
  }
  if (scope.kind === 'break') {
    if (!/^brk-[0-9a-f]{24}$/.test(scope.breakId)) throw new ConfigError(`'${scope.breakId}' is not a break id (brk-<24 hex digits>)`);
    const rec = index.get(scope.breakId);
    const observations = rec?.observations ?? (await new BreakStore(store).observations(scope.breakId));
    if (!rec && observations.length === 0) throw new ConfigError(`the store ${store.location} has no break ${scope.breakId}`);
    const runIds = new Set<string>(observations.map((o) => o.run_id));
    for (const e of rec?.events ?? []) if (typeof e.evidence?.run_id === 'string') runIds.add(e.evidence.run_id);
    const runs = all.filter((m) => runIds.has(m.run_id));
    return { runs, breakFilter: (b: BreakView) => b.break_id === scope.breakId, extraBreak: scope.breakId };
  }
  const s = isoKey(scope.window.start), e = isoKey(scope.window.end);
  const control = scope.control;
  const runs = all.filter((m) => isoKey(m.manifest.window.start) < e && isoKey(m.manifest.window.end) > s && (control === null || m.manifest.controls.includes(control)));
  if (runs.length === 0) throw new ConfigError(`no published run in ${store.location} overlaps [${scope.window.start}, ${scope.window.end})${control ? ` and ran ${control}` : ''}`);
  return { runs, breakFilter: (b: BreakView) => control === null || b.control_id === control };
}

/** Where an object's bytes come from: the file itself for a local store (streamed), else its bytes. */
async function objectSource(store: ObjectStore, key: string): Promise<PayloadEntry['source'] | undefined> {
  if (store instanceof LocalObjectStore) {
    const path = join(store.root, ...key.split('/'));
    const isFile = await stat(path).then((s) => s.isFile(), () => false);
    return isFile ? { kind: 'file', path } : undefined;
  }
  const b = await store.get(key);
  return b ? { kind: 'bytes', bytes: b } : undefined;
}

/** Adds one payload file (the path is checked to stay inside the bag), or a text as its UTF-8 bytes. */
type AddEntry = (path: string, source: PayloadEntry['source']) => void;
type AddText = (path: string, s: string) => void;

/**
 * Packs the evidence of a scope into a bag at `out`. Throws ConfigError (exit 2) for an unknown
 * run, break or empty window, or an existing `out`; EvidenceIntegrityError (exit 1) when the store
 * does not match its own records or an input changed since its run.
 */
export async function packEvidence(opts: PackOptions): Promise<PackResult> {
  const { store, scope } = opts;
  const now = opts.now ?? new Date();
  const { manifests: all, links } = await readChain(store);
  const index = await readBreakIndex(store);
  const { runs, breakFilter, extraBreak } = await resolveScope(scope, all, index, store);

  const payload: PayloadEntry[] = [];
  const add: AddEntry = (path, source) => { assertSafeRelativePath(path); payload.push({ path, source }); };
  const text: AddText = (path, s) => add(path, { kind: 'bytes', bytes: Buffer.from(s, 'utf8') });

  const { views, breakIds } = await packRuns(store, runs, index, breakFilter, extraBreak, opts.includeInputs, add, text);
  const decoded = await packBreaks(store, [...breakIds].sort(), index, now, add, text);
  const breakLog = await packBreakLog(store, all, runs, [...breakIds].sort(), decoded, add, opts.trusted ?? null);
  text(LAYOUT.verifying, verifyingText(decoded, breakLog));
  text(LAYOUT.chain, `${JSON.stringify({ store: store.location, head_sequence: links.length, links, scope_runs: runs.map((r) => r.run_id) }, null, 2)}\n`);
  text(LAYOUT.readme, README);
  const title = scope.kind === 'run' ? undefined : `reckon evidence ${externalIdentifier(scope)}`;
  text(LAYOUT.report, reportHtml(views, store, now, title));

  const info: BagInfo = [
    ['Source-Organization', opts.organization],
    ['External-Identifier', externalIdentifier(scope)],
    ['External-Description', `reckon evidence: ${runs.length} run(s), ${breakIds.size} break(s), manifests ${runs.map((r) => r.sequence).join(',') || 'none'} of a chain of ${links.length}`],
    ['Bagging-Date', now.toISOString().slice(0, 10)],
    ['Bag-Group-Identifier', links.length ? `reckon-chain:${links[0].sha256}` : 'reckon-chain:empty'],
    ['Bag-Software-Agent', `reckon ${reckonVersion()}`],
    ['Break-Signatures', `${breakLog.signed} signed step(s), ${breakLog.countersigned} countersigned; ${breakLog.byRun} by runs; ${breakLog.unsigned} UNSIGNED by configuration; ${breakLog.legacy} legacy object(s) from before signing`],
  ];
  try {
    const signer = await bagSigner(store, runs, opts.pipelineKey ?? null);
    const signTags = signer ? (bytes: Buffer) => pipelineSign(bytes, signer, EVIDENCE_NAMESPACE) : undefined;
    const written = await writeBag(bagTarget(opts.out), payload, [...info, ['Manifest-Signatures', signer ? `signed by the pipeline (${signer.key.publicKey.fingerprint}); the tag manifest too` : 'NOT signed: the packed manifests are unsigned']], { signTags });
    return { ...written, runs: runs.map((r) => r.run_id), breaks: [...breakIds].sort(), externalIdentifier: externalIdentifier(scope) };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') throw new ConfigError((e as Error).message);
    throw e;
  }
}

/** The break store's index; an inconsistent break store is an integrity failure, not a crash. */
async function readBreakIndex(store: ObjectStore): Promise<ReadonlyMap<string, BreakRecord>> {
  try {
    return await loadBreakIndex(store);
  } catch (e) {
    if (e instanceof InternalError || (e instanceof StoreError && e.reason === 'corrupt_object')) integrity(`the break store is inconsistent: ${e.message}`);
    throw e;
  }
}

/**
 * Adds each run's manifest, its outputs (each checked against the SHA-256 its manifest recorded),
 * its inputs and its lineage event; returns the runs' report views and the ids of the breaks in scope.
 */
async function packRuns(
  store: ObjectStore, runs: readonly StoredManifest[], index: ReadonlyMap<string, BreakRecord>, breakFilter: (b: BreakView) => boolean, extraBreak: string | undefined,
  includeInputs: boolean, add: AddEntry, text: AddText,
): Promise<{ views: RunView[]; breakIds: Set<string> }> {
  const views: RunView[] = [];
  const definitions = await loadControls();
  const breakIds = new Set<string>();
  if (extraBreak) breakIds.add(extraBreak);
  for (const m of runs) {
    const lookups = await runLookups(m.manifest, definitions);
    const breaks = (await loadRunBreaks(store, m.manifest, { index, ...lookups })).filter(breakFilter);
    for (const b of breaks) breakIds.add(b.break_id);
    views.push({ stored: m, breaks, owners: lookups.owner });

    await addManifest(store, m, add);
    for (const o of m.manifest.outputs) {
      const src = await objectSource(store, o.key);
      if (!src) integrity(`output ${o.key} of run ${m.run_id} is missing from the store`);
      const got = (await digests(src, ['sha256'])).hex.sha256;
      if (got !== o.sha256) integrity(`output ${o.key} of run ${m.run_id} has SHA-256 ${got}, its manifest recorded ${o.sha256}`);
      add(o.key, src);
    }
    await addInputs(m, includeInputs, add, text);
    text(LAYOUT.lineage(m.run_id), `${JSON.stringify(runEvent(m.manifest, m.sha256, store.location), null, 2)}\n`);
  }
  return { views, breakIds };
}

/** Adds every stored object of each break (copied byte for byte) and its summary; returns the decoded objects. */
async function packBreaks(store: ObjectStore, breakIds: readonly string[], index: ReadonlyMap<string, BreakRecord>, now: Date, add: AddEntry, text: AddText): Promise<DecodedObject[]> {
  const bs = new BreakStore(store);
  const decoded: DecodedObject[] = [];
  for (const id of breakIds) {
    const keys = await store.list(`breaks/${id}`);
    const rec = index.get(id);
    for (const k of keys.sort()) {
      if (keyKind(k) === null) continue;
      const bytes = (await store.get(k))!;
      add(k, { kind: 'bytes', bytes });
      decoded.push(decodeObject(k, bytes));
    }
    const observations = rec?.observations ?? (await bs.observations(id));
    const first = rec?.events[0];
    text(LAYOUT.breakSummary(id), `${canonicalJson({
      break_id: id,
      control_id: first?.control_id ?? null, kind: first?.kind ?? null, key: first?.key ?? null,
      state: rec?.state ?? null, version: rec?.version ?? 0, events: rec?.events.length ?? 0, observations: observations.length,
      replayed_at: now.toISOString(),
    })}\n`);
  }
  return decoded;
}

/**
 * Checks the break log of the packed breaks against the store's manifests (verify-log.ts) and
 * refuses a store that fails; adds each run's heads checkpoint, every registry version the
 * signatures name or the runs record, and the signature files. Returns the counts for the texts.
 */
async function packBreakLog(
  store: ObjectStore, all: readonly StoredManifest[], runs: readonly StoredManifest[], breakIds: readonly string[], decoded: readonly DecodedObject[],
  add: (p: string, s: PayloadEntry['source']) => void, trusted: SignerRegistry | null,
): Promise<{ signed: number; countersigned: number; byRun: number; unsigned: number; legacy: number }> {
  const check = await verifyBreakLogs(store, { manifests: all.map((m) => ({ key: m.key, sha256: m.sha256, manifest: m.manifest })), breakIds, trusted });
  if (check.problems.length) integrity(`the break log does not verify: ${check.problems[0].key}: ${check.problems[0].problem}`);
  for (const m of runs) {
    const heads = m.manifest.break_log?.heads;
    if (!heads) continue;
    const bytes = await store.get(heads.key);
    if (!bytes) integrity(`${heads.key}, the break heads checkpoint of run ${m.run_id}, is missing from the store`);
    add(heads.key, { kind: 'bytes', bytes });
  }
  const recorded = all.flatMap((m) => [m.manifest.break_log?.signing.registry_sha256, m.manifest.manifest_signing?.registry_sha256]);
  const registries = new Set<string>([...check.registries, ...recorded.filter((x): x is string => typeof x === 'string')]);
  for (const sha of [...registries].sort()) {
    const bytes = await store.get(registryKey(sha));
    if (bytes) add(registryKey(sha), { kind: 'bytes', bytes });
    else if (check.registries.includes(sha)) integrity(`${registryKey(sha)}, a registry the signatures name, is missing from the store`);
  }
  for (const f of signatureFiles(decoded)) add(f.path, { kind: 'bytes', bytes: f.bytes });
  // The manifests the run-made objects are bound to, so that each can be checked against the
  // manifest that lists it: with their sidecars, not their outputs (they are not in scope).
  const inBag = new Set(runs.map((m) => m.key));
  const bound = new Set(decoded.map((o) => o.binding?.manifest_key).filter((k): k is string => typeof k === 'string' && !inBag.has(k)));
  for (const m of all.filter((x) => bound.has(x.key))) {
    await addManifest(store, m, add);
    const heads = m.manifest.break_log?.heads;
    const hb = heads ? await store.get(heads.key) : undefined;
    if (heads && hb) add(heads.key, { kind: 'bytes', bytes: hb });
  }
  const c = check.counts;
  return { signed: c.signed, countersigned: c.countersigned, byRun: c.by_run, unsigned: c.unsigned, legacy: c.legacy };
}

/** The input checksum list of a run and, when asked, the inputs themselves (local sources only). */
async function addInputs(m: StoredManifest, include: boolean, add: (p: string, s: PayloadEntry['source']) => void, text: (p: string, s: string) => void): Promise<void> {
  const location = m.manifest.sources.location;
  const objects = Object.entries(m.manifest.sources.datasets).sort(([a], [b]) => (a < b ? -1 : 1)).flatMap(([dataset, d]) =>
    d.objects.map((o) => ({ dataset, path: o.path, bag_path: safeBagPath(o.path), format: o.format, size: o.size, sha256: o.sha256, rows: o.rows, quarantined: o.quarantined })));
  text(LAYOUT.inputObjects(m.run_id), `${JSON.stringify({ run_id: m.run_id, location, included: include, objects }, null, 2)}\n`);
  text(LAYOUT.inputChecksums(m.run_id), objects.map((o) => sha256sumLine(o.sha256, o.path)).join(''));
  if (!include) return;
  if (location.startsWith('s3://')) throw new ConfigError(`--include-inputs needs a local source folder; run ${m.run_id} read ${location}`);
  // A sources file run read databases and several locations: its extracts were never files to include.
  if (m.manifest.sources.file) throw new ConfigError(`--include-inputs needs a local source folder; run ${m.run_id} read the sources file ${location} (its checksums are listed; database extracts are recorded in the manifest's sources.databases)`);
  for (const o of objects) {
    if (o.path.split('/').some((s) => s === '..' || s === '') || o.path.startsWith('/')) integrity(`run ${m.run_id} lists an input path ${JSON.stringify(o.path)} outside its source folder`);
    const src = { kind: 'file' as const, path: join(location, ...o.path.split('/')) };
    let got: string;
    try { got = (await digests(src, ['sha256'])).hex.sha256; } catch (e) {
      integrity(`input ${o.path} of run ${m.run_id} cannot be read from ${location}: ${(e as Error).message}`);
    }
    // The source folder is outside the store: `manifest verify` only notes this, so the remedy is named here.
    if (got !== o.sha256) throw new EvidenceIntegrityError(`input ${o.path} of run ${m.run_id} in ${location} changed since the run: SHA-256 ${got}, recorded ${o.sha256}; the bag cannot carry the bytes the run read: restore the delivered file (or its bucket object version) at that path, or pack without --include-inputs (the manifest still lists each input's SHA-256). No bag was written.`);
    add(LAYOUT.inputFile(m.run_id, o.bag_path), src);
  }
}

/** Adds a manifest, its digest file and (signed) its signature. */
async function addManifest(store: ObjectStore, m: StoredManifest, add: (p: string, s: PayloadEntry['source']) => void): Promise<void> {
  add(LAYOUT.manifest(m.key), { kind: 'bytes', bytes: m.bytes });
  add(LAYOUT.manifest(m.key.replace(/\.json$/, '.sha256')), { kind: 'bytes', bytes: m.sidecar! });
  if (m.manifest.manifest_signing?.mode !== 'signed') return;
  const sig = await store.get(signatureKey(m.key));
  if (!sig) integrity(`${signatureKey(m.key)}, the signature of a signed manifest, is missing from the store`);
  add(LAYOUT.manifest(signatureKey(m.key)), { kind: 'bytes', bytes: sig });
}

/**
 * The signer of the bag's tag manifest: the pipeline's key, judged by the registry of the newest
 * signed manifest packed; null when no packed manifest is signed. Throws SignatureError when one
 * is signed and no pipeline key is given, or the key is not that registry's pipeline key.
 */
async function bagSigner(store: ObjectStore, runs: readonly StoredManifest[], key: SigningKey | null): Promise<PipelineSigner | null> {
  const newest = [...runs].filter((m) => m.manifest.manifest_signing?.mode === 'signed').sort((a, b) => b.sequence - a.sequence)[0];
  if (!newest) return null;
  if (!key) throw new SignatureError('PIPELINE_KEY_MISSING', `the manifests packed are signed, so the bag is signed too: give the pipeline key (RECKON_PIPELINE_KEY_FILE, RECKON_PIPELINE_KEY or --config with signing.pipeline_key)`);
  const registry = await archivedRegistry(store, newest.manifest.manifest_signing!.registry_sha256 ?? '');
  if (!registry) integrity(`the registry ${newest.manifest.manifest_signing!.registry_sha256} of ${newest.key} is missing from the store`);
  return pipelineSigner(key, registry);
}
