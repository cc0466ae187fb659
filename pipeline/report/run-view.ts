/**
 * What the run report and the evidence package read from a store: published manifests with their
 * exact bytes (CONTRACT §6) and, for each break a run touched, its log replayed with age and SLA
 * (CONTRACT §5). Nothing here writes to the store.
 *
 * Age is `as-of − the record time of the break's first observation`, with the as-of of the run's
 * control result; an SLA is breached only when the age is strictly greater (CONTRACT §3, §5). SLAs
 * come from the control definitions, overridden by the run's configuration file when that file is
 * still readable and has the SHA-256 the manifest recorded; a break entry in the manifest that
 * already carries `age_s`/`sla_s` wins over both.
 */
import { defaultConfig, loadConfig, slaSeconds, type Config } from '../config/config.js';
import { ownershipOf, type Ownership } from '../config/ownership.js';
import { loadControls, type ControlDefinition } from '../controls/definitions.js';
import { sha256Hex } from '../core/digest.js';
import { ConfigError } from '../core/errors.js';
import { BreakStore, type BreakEvent, type BreakObservation, type BreakRecord } from '../breaks/break-store.js';
import type { BreakState } from '../breaks/states.js';
import type { ObjectStore } from '../store/object-store.js';
import { parseTimestamp } from '../contract/values.js';
import { parseManifest, type ManifestV1 } from '../../manifests/v1/schema.js';

/** A published manifest: store key, exact bytes, SHA-256 of those bytes, its `.sha256` sidecar and the parsed document. */
export interface StoredManifest {
  readonly key: string;
  readonly sequence: number;
  readonly run_id: string;
  readonly bytes: Buffer;
  readonly sha256: string;
  /** The `.sha256` sidecar's bytes, or undefined when it is missing. */
  readonly sidecar: Buffer | undefined;
  readonly manifest: ManifestV1;
}

const MANIFEST_KEY = /^manifests\/([0-9]{8})-([a-z0-9_-]+)\.json$/;

/** Keys of every published manifest of the store, in chain order. */
export async function manifestKeys(store: ObjectStore): Promise<string[]> {
  return (await store.list('manifests')).filter((k) => MANIFEST_KEY.test(k)).sort();
}

/** Reads one manifest by key; throws ConfigError when it is not a readable version-1 manifest. */
export async function readStoredManifest(store: ObjectStore, key: string): Promise<StoredManifest> {
  const m = MANIFEST_KEY.exec(key);
  if (!m) throw new ConfigError(`${key} is not a manifest key`);
  const bytes = await store.get(key);
  if (!bytes) throw new ConfigError(`manifest ${key} is missing from the store`);
  let manifest: ManifestV1;
  try {
    manifest = parseManifest(JSON.parse(bytes.toString('utf8')));
  } catch (e) {
    throw new ConfigError(`manifest ${key} is not a readable version-1 manifest: ${(e as Error).message.split('\n')[0]}`);
  }
  return { key, sequence: Number(m[1]), run_id: m[2], bytes, sha256: sha256Hex(bytes), sidecar: await store.get(key.replace(/\.json$/, '.sha256')), manifest };
}

/** The manifest of `runId`; throws ConfigError (exit 2) when the store has no such run. */
export async function findRunManifest(store: ObjectStore, runId: string): Promise<StoredManifest> {
  if (!/^[a-z0-9_-]+$/.test(runId)) throw new ConfigError(`'${runId}' is not a run id`);
  const key = (await manifestKeys(store)).find((k) => MANIFEST_KEY.exec(k)![2] === runId);
  if (!key) throw new ConfigError(`the store ${store.location} has no published manifest for run ${runId}`);
  return readStoredManifest(store, key);
}

/** How a break's age compares with its SLA: within, at 75 % or more of it, strictly over it, or unknown (no record time). */
export type SlaClass = 'ok' | 'near' | 'breached' | 'unknown';

/** One break as the report shows it. `state` is the state replayed from the log now; NOT_OPENED for a TIMING-only record. */
export interface BreakView {
  readonly break_id: string;
  readonly control_id: string;
  readonly kind: string;
  readonly key: string;
  readonly state: BreakState | 'NOT_OPENED';
  readonly version: number;
  /** What this run did with it (manifest `breaks[].disposition`), or VERIFIED when the run verified it. */
  readonly run_disposition: string;
  readonly first_record_time: string | null;
  /** As-of − first record time, in microseconds; null when either is unknown. */
  readonly age_us: bigint | null;
  /** The SLA in seconds, or null when none is defined. */
  readonly sla_s: number | null;
  readonly sla: SlaClass;
  /** Who acts on it (owner, contact, route, runbook) under the run's configuration; null for an unknown control. */
  readonly owner: Ownership | null;
  readonly events: readonly BreakEvent[];
  readonly observations: readonly BreakObservation[];
}

/** A run with the breaks it touched. */
export interface RunView {
  readonly stored: StoredManifest;
  readonly breaks: readonly BreakView[];
  /** The owner of a control (and kind) under the run's configuration; absent, the report shows no owners. */
  readonly owners?: OwnerLookup;
}

/** Owner of a (control, kind), or of the control when no kind is given; null for an unknown control. */
export type OwnerLookup = (controlId: string, kind?: string) => Ownership | null;

/** SLA in seconds for a (control, kind), or null when none is defined (CONTRACT §5). */
export type SlaLookup = (controlId: string, kind: string) => number | null;

/**
 * Builds the SLA and owner lookups for a manifest with the same precedence as `reckon breaks`
 * (config.ts `slaSeconds`, ownership.ts `ownershipOf`): the run's configuration when that file is
 * still readable with the SHA-256 the manifest recorded, else the defaults, over the control
 * definitions `controls` (default: the repository's).
 */
export async function runLookups(manifest: ManifestV1, controls?: readonly ControlDefinition[]): Promise<{ sla: SlaLookup; owner: OwnerLookup }> {
  const all = controls ?? await loadControls();
  const defs = new Map(all.map((c) => [c.control_id, c]));
  let config: Config = defaultConfig().config;
  const cfg = manifest.code.config;
  if (cfg.path) {
    try {
      const loaded = await loadConfig(cfg.path, all);
      if (loaded.sha256 === cfg.sha256) config = loaded.config;
    } catch { /* the file moved or changed since the run: the defaults apply */ }
  }
  return {
    sla: (controlId, kind) => slaSeconds(config, defs.get(controlId), kind),
    owner: (controlId, kind) => { const def = defs.get(controlId); return def ? ownershipOf(config, def, kind) : null; },
  };
}

/** The SLA lookup of `runLookups`. */
export async function slaLookup(manifest: ManifestV1, controls?: readonly ControlDefinition[]): Promise<SlaLookup> {
  return (await runLookups(manifest, controls)).sla;
}

/** The SLA class of an age against an SLA (strictly greater breaches; CONTRACT §3). */
export function slaClass(ageUs: bigint | null, slaS: number | null): SlaClass {
  if (ageUs === null || slaS === null) return 'unknown';
  const slaUs = BigInt(slaS) * 1_000_000n;
  if (ageUs > slaUs) return 'breached';
  return ageUs * 4n >= slaUs * 3n && slaUs > 0n ? 'near' : 'ok';
}

function micros(text: string | null | undefined): bigint | null {
  if (!text) return null;
  const p = parseTimestamp(text);
  return p.ok ? p.value : null;
}

/** Every opened break of a store, by id, with its log and observations (see `loadBreakIndex`). */
export type BreakIndex = ReadonlyMap<string, BreakRecord>;

/** Reads every opened break of the store once, for callers that look at many runs. */
export async function loadBreakIndex(store: ObjectStore): Promise<BreakIndex> {
  return new Map((await new BreakStore(store).readAll()).map((r) => [r.break_id, r]));
}

/**
 * Loads the breaks a run touched: those its manifest lists, plus those whose log names the run
 * as evidence (verified by it). Each with its full log, observations, age and SLA class. `index`
 * (every break of the store) is read from the store when not given.
 */
export async function loadRunBreaks(store: ObjectStore, manifest: ManifestV1, opts: { sla?: SlaLookup; owner?: OwnerLookup; index?: BreakIndex } = {}): Promise<BreakView[]> {
  const lookups = opts.sla && opts.owner ? { sla: opts.sla, owner: opts.owner } : await runLookups(manifest);
  const lookup = opts.sla ?? lookups.sla;
  const owners = opts.owner ?? lookups.owner;
  const index = opts.index ?? (await loadBreakIndex(store));
  const bs = new BreakStore(store);
  const dispositions = new Map<string, string>();
  for (const b of manifest.breaks) dispositions.set(b.break_id, b.disposition);
  for (const [id, rec] of index) {
    if (!dispositions.has(id) && rec.events.some((e) => e.evidence?.run_id === manifest.run_id)) dispositions.set(id, 'VERIFIED');
  }
  const asOf = new Map(manifest.results.map((r) => [r.control_id, micros(r.as_of)]));
  const views: BreakView[] = [];
  for (const [id, disposition] of dispositions) {
    const listed = manifest.breaks.find((b) => b.break_id === id);
    const rec = index.get(id);
    const observations = rec?.observations ?? (await bs.observations(id));
    const events = rec?.events ?? [];
    const controlId = rec?.control_id ?? listed?.control_id ?? '';
    const kind = rec?.kind ?? listed?.kind ?? '';
    const key = rec?.key ?? listed?.key ?? '';
    // Same fallbacks as break-summary.ts: a difference naming no record ages from the start of the
    // window that first observed it.
    const firstObs = [...observations].sort((a, b) => (a.observed_at < b.observed_at ? -1 : a.observed_at > b.observed_at ? 1 : 0))[0];
    const opening = events[0];
    const firstRecord = firstObs?.record_time ?? opening?.record_time ?? firstObs?.window.start ?? opening?.window?.start ?? null;
    const asOfUs = asOf.get(controlId) ?? null;
    const recUs = micros(firstRecord);
    let ageUs = asOfUs !== null && recUs !== null ? asOfUs - recUs : null;
    if (typeof listed?.age_s === 'string' && /^-?[0-9]+(\.[0-9]{1,6})?$/.test(listed.age_s)) {
      const [w, f = ''] = listed.age_s.replace('-', '').split('.');
      ageUs = (BigInt(w) * 1_000_000n + BigInt(f.padEnd(6, '0'))) * (listed.age_s.startsWith('-') ? -1n : 1n);
    }
    const slaS = typeof listed?.sla_s === 'number' ? listed.sla_s : lookup(controlId, kind);
    views.push({
      break_id: id, control_id: controlId, kind, key,
      state: rec ? rec.state : 'NOT_OPENED', version: rec ? rec.version : 0, run_disposition: disposition,
      first_record_time: firstRecord, age_us: ageUs, sla_s: slaS, sla: slaClass(ageUs, slaS), owner: owners(controlId, kind), events, observations,
    });
  }
  const order = (v: BreakView) => `${v.control_id}\u0000${v.kind}\u0000${v.key}\u0000${v.break_id}`;
  return views.sort((a, b) => (order(a) < order(b) ? -1 : order(a) > order(b) ? 1 : 0));
}

/** The run view of `runId`: its manifest and breaks. Throws ConfigError when the run is unknown. */
export async function loadRunView(store: ObjectStore, runId: string): Promise<RunView> {
  const stored = await findRunManifest(store, runId);
  const lookups = await runLookups(stored.manifest);
  return { stored, breaks: await loadRunBreaks(store, stored.manifest, lookups), owners: lookups.owner };
}
