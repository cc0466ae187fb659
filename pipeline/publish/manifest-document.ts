/**
 * The run manifest (CONTRACT §6), built in one place from typed parts: the run's identity and
 * lineage, what it read, the code and configuration, its results, the breaks it touched, its
 * outputs, the chain link, its leases and how it ran. The shape is manifests/v1/schema.ts's; this
 * module only decides what goes where, and is pure (the run phase gathers the parts).
 */
import type { BreakLogRecord, ControlResult, EvaluationSource, ManifestV1, Trigger } from '../../manifests/v1/schema.js';
import { refusedEntryNote } from '../load/cache-folder.js';
import type { RunOutcome } from '../core/outcome.js';
import type { BreakOutcome } from '../breaks/run-breaks.js';
import type { ControlFile, CutoffMapping, DatasetLoad, QuarantineEntry } from '../load/load.js';
import type { OutputObject } from '../outputs/outputs.js';
import type { PlannedSources, RemoteObjectInfo } from '../sources/locate.js';
import { datasetOriginField, sourcesManifestFields } from '../sources/postgres/label.js';
import type { ManifestSigning } from '../signing/pipeline-signer.js';
import type { Lease } from './lease.js';

/** Most quarantine entries listed in a manifest (the `quarantine` output holds every one), and most bytes of each raw record. */
export const MANIFEST_QUARANTINE_LISTED = 1000;
const RAW_BYTES_LISTED = 2048;

/** Who ran what, when and why: identity and lineage. */
export interface RunIdentity {
  readonly run_id: string;
  readonly trigger: Trigger;
  readonly reason: string | null;
  readonly parent_run_id: string | null;
  readonly window: { readonly start: string; readonly end: string };
  /** The control ids the run evaluated. */
  readonly controls: readonly string[];
  readonly started_at: string;
  readonly finished_at: string;
}

/** A `_watermark.json` or `_import_report.json` read beside a dataset's data files. */
export type { ControlFile };

/** What the run read: the location, every dataset's load, the side files, cutoff mappings and the quarantine. */
export interface SourceParts {
  readonly location: string;
  readonly datasets: readonly DatasetLoad[];
  /** S3 object metadata by relative path (remote sources only). */
  readonly remote?: RemoteObjectInfo;
  readonly controlFiles: Readonly<Record<string, readonly ControlFile[]>>;
  readonly cutoffMappings: readonly CutoffMapping[];
  readonly quarantine: readonly QuarantineEntry[];
  /** A sources file's origins and database extracts (docs/postgres.md); absent for a folder run. */
  readonly plan?: PlannedSources;
}

/** A file of the code with its SHA-256. */
export interface HashedFile { readonly path: string; readonly sha256: string }

/** The code and configuration the run used. */
export interface CodeParts {
  readonly version: string;
  readonly commit: string | null;
  readonly sql: readonly HashedFile[];
  readonly control_definitions: readonly HashedFile[];
  readonly config: { readonly path: string | null; readonly sha256: string };
  readonly currency_table: HashedFile;
  readonly rounding_mode: string;
}

/** How the run ran: engine settings, phase timings (ms) and its outcome. */
export interface RuntimeParts {
  readonly node: string;
  readonly duckdb: { readonly threads: number; readonly memory_limit: string; readonly storage: string; readonly estimated_bytes: number };
  readonly timings_ms: Readonly<Record<string, number>>;
  readonly outcome: RunOutcome;
}

/** Everything a manifest is made of. */
export interface ManifestParts {
  readonly identity: RunIdentity;
  readonly sources: SourceParts;
  readonly code: CodeParts;
  readonly fingerprints: { readonly inputs_sha256: string; readonly code_sha256: string; readonly config_sha256: string };
  readonly results: readonly ControlResult[];
  readonly results_digest: string;
  readonly breaks: readonly BreakOutcome[];
  readonly outputs: readonly OutputObject[];
  readonly chain: { readonly sequence: number; readonly previous_manifest_sha256: string | null };
  readonly leases: readonly Lease[];
  readonly runtime: RuntimeParts;
  /** Signing mode, the staged break plan, the heads checkpoint, automatic verifications (issue 17). */
  readonly breakLog: BreakLogRecord;
  /** Notes of the evaluation (the wide fallback, totals beyond DECIMAL(38)), after the datasets' notes. */
  readonly notes: readonly string[];
  /** Per control, evaluated now or reused from the results cache (issue 20); absent: not recorded. */
  readonly evaluation?: Readonly<Record<string, EvaluationSource>>;
  /** How the manifest itself is signed (issue 18): by the pipeline, or unsigned and why. */
  readonly signing: ManifestSigning;
}

/** The version-1 manifest document of a run (canonical JSON is taken by publishManifest). */
export function manifestDocument(p: ManifestParts): ManifestV1 {
  const { identity: id, sources, code } = p;
  return {
    manifest_version: 1,
    run_id: id.run_id, trigger: id.trigger, reason: id.reason, parent_run_id: id.parent_run_id,
    window: { ...id.window }, controls: [...id.controls], started_at: id.started_at, finished_at: id.finished_at,
    sources: { location: sources.location, ...sourcesManifestFields(sources.plan), datasets: Object.fromEntries(sources.datasets.map((d) => [d.dataset, manifestDataset(d, sources)])) },
    cutoff_mappings: [...sources.cutoffMappings],
    currency_table: { ...code.currency_table },
    rounding_mode: code.rounding_mode,
    code: { version: code.version, commit: code.commit, sql: [...code.sql], control_definitions: [...code.control_definitions], config: { ...code.config } },
    fingerprints: { ...p.fingerprints },
    results: p.results.map((r) => ({ ...r })),
    ...(p.evaluation ? { evaluation: Object.fromEntries(Object.entries(p.evaluation).map(([id, e]) => [id, { ...e }])) } : {}),
    quarantine: manifestQuarantine(sources.quarantine),
    breaks: p.breaks.map((b) => ({
      break_id: b.break_id, control_id: b.control_id, kind: b.kind, key: b.key, disposition: b.disposition,
      state: b.state, version: b.version, age_s: b.age_s, sla_s: b.sla_s, sla_breached: b.sla_breached,
      head: b.head, event: b.event, observation_sha256: b.observation_sha256,
    })),
    notes: [...notesFor(sources.datasets), ...p.notes, ...(p.breakLog.signing.mode === 'unsigned' ? [UNSIGNED_NOTE] : []), ...(p.signing.mode === 'unsigned' ? [unsignedManifestNote(p.signing)] : [])],
    outputs: p.outputs.map((o) => ({ table: o.table, key: o.key, sha256: o.sha256, size: o.size, rows: o.rows })),
    results_digest: p.results_digest,
    chain: { ...p.chain },
    leases: p.leases.map((l) => ({ control_id: l.control_id, fencing_token: l.token, acquired_at: l.acquired_at, expires_at: l.expires_at })),
    timings_ms: { ...p.runtime.timings_ms },
    runtime: runtime(p.runtime),
    break_log: p.breakLog,
    manifest_signing: { ...p.signing },
  };
}

/** The note an unsigned manifest carries: why, and what that leaves undetected. */
export function unsignedManifestNote(s: Pick<ManifestSigning, 'reason'>): string {
  const why = s.reason === 'configured' ? 'the configuration says signing.unsigned: true' : 'the configuration names no signer registry';
  return `this manifest is NOT signed (${why}): anyone who can write to the store can rewrite it consistently`;
}

/** The note every manifest of a run in unsigned mode carries. */
export const UNSIGNED_NOTE = 'break transitions are not signed: the configuration says signing.unsigned: true, so who made each step is not proven';

function runtime(r: RuntimeParts): ManifestV1['runtime'] {
  return {
    node: r.node, duckdb_threads: r.duckdb.threads, duckdb_memory_limit: r.duckdb.memory_limit, duckdb_storage: r.duckdb.storage,
    estimated_load_bytes: r.duckdb.estimated_bytes, overall_status: r.outcome.status, exit_code: r.outcome.exit_code,
  };
}

function manifestQuarantine(entries: readonly QuarantineEntry[]): ManifestV1['quarantine'] {
  const listed = entries.slice(0, MANIFEST_QUARANTINE_LISTED);
  return { count: entries.length, listed: listed.length, entries: listed.map((q) => ({ ...q, raw: q.raw.slice(0, RAW_BYTES_LISTED) })) };
}

function manifestDataset(d: DatasetLoad, sources: SourceParts) {
  return {
    present: d.present,
    objects: d.files.map((f) => {
      const r = sources.remote?.get(f.path);
      return r ? { ...f, etag: r.etag ?? null, remote_key: r.key } : { ...f };
    }),
    records_read: d.records_read,
    records_loaded: d.records_loaded,
    quarantined: d.quarantined,
    duplicates: d.duplicates,
    watermark: { source: d.watermark.source, value: d.watermark.value, ...(d.watermark.complete !== undefined ? { complete: d.watermark.complete } : {}), ...(d.watermark.sequence !== undefined ? { sequence: d.watermark.sequence } : {}) },
    extra_columns: d.extra_columns,
    ignored_files: [...d.ignored_files],
    ...(d.import_report !== undefined ? { import_report: d.import_report } : {}),
    control_files: [...(sources.controlFiles[d.dataset] ?? [])],
    ...datasetOriginField(sources.plan, d.dataset),
  };
}

/** Notes for people: duplicates counted once, extra columns and non-data files ignored, derived watermarks. */
function notesFor(datasets: readonly DatasetLoad[]): string[] {
  const notes: string[] = [];
  for (const d of datasets) {
    if (d.duplicates > 0) notes.push(`${d.dataset}: ${d.duplicates} exact duplicate deliver${d.duplicates === 1 ? 'y' : 'ies'} counted once`);
    const more = (listed: number, all: number) => (all > listed ? ` (the first ${listed} of ${all})` : '');
    if (d.extra_columns.length) notes.push(`${d.dataset}: extra columns ignored${more(d.extra_columns.length, d.extra_columns_count)}: ${d.extra_columns.join(', ')}`);
    if (d.ignored_files.length) notes.push(`${d.dataset}: files that are not data were ignored${more(d.ignored_files.length, d.ignored_files_count)}: ${d.ignored_files.join(', ')}`);
    if (d.watermark.source === 'derived') notes.push(`${d.dataset}: watermark derived from the data (${d.watermark.value})`);
  }
  const files = datasets.flatMap((d) => d.files);
  const cached = files.filter((f) => f.checked === 'cache').length;
  if (cached) notes.push(`delivery cache: ${cached} of ${files.length} objects read from their earlier check (same bytes, code and rules)${cached < files.length ? '; the others checked now' : ''}`);
  for (const f of files) if (f.cache_refused) notes.push(refusedEntryNote(`delivery cache: the entry of ${f.path}`, f.cache_refused, 'the object was checked again'));
  return notes;
}
