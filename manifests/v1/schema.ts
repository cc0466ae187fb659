/**
 * Run manifest, version 1 (CONTRACT §6). A reader rejects a manifest of an unknown version rather
 * than guessing (ManifestVersionError); changes inside version 1 are additive only.
 * `manifest.schema.json` beside this file is generated from this schema (`npm run manifest-schema`).
 *
 * The schema is the source of the pipeline's result types: control statuses, dispositions,
 * triggers and break states are the enums below, and a control's result (ControlResult, with its
 * ReportedDifferences) is the type these schemas infer; the run builds exactly these.
 */
import { z } from '../../pipeline/core/zod.js';
import { ManifestVersionError } from '../../pipeline/core/errors.js';

/** The manifest version this schema reads and writes. */
export const MANIFEST_VERSION = 1;

const Sha256 = z.string().regex(/^[0-9a-f]{64}$/);
const IsoUtc = z.string().regex(/^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,6})?Z$/);

/** A control's status (CONTRACT §7). Its exit code and rank are core/outcome.ts's. */
export const ControlStatus = z.enum(['CLEAN', 'BREAKS', 'NOT_READY', 'INCOMPLETE']);
export type ControlStatus = z.infer<typeof ControlStatus>;

/** What a run did with a difference (CONTRACT §7): PROVISIONAL for NOT_READY and INCOMPLETE controls. */
export const Disposition = z.enum(['OPENED', 'REOBSERVED', 'REOPENED', 'TIMING', 'PROVISIONAL']);
export type Disposition = z.infer<typeof Disposition>;

/** Why a run ran (CONTRACT §6). */
export const Trigger = z.enum(['manual', 'scheduled-nightly', 'scheduled-intraday', 'incident']);
export type Trigger = z.infer<typeof Trigger>;

/** Break states in lifecycle order (CONTRACT §5). */
export const BreakState = z.enum(['OPEN', 'TRIAGED', 'CONTAINED', 'CORRECTED', 'VERIFIED', 'CLOSED']);
export type BreakState = z.infer<typeof BreakState>;

/**
 * A record behind a difference (pipeline/controls/records.ts): the side of the comparison it
 * stands on, its dataset, source file (relative to the source location) and record number
 * (1 = first data record of the file), and its key in its dataset.
 */
export const RecordRef = z.object({
  side: z.string(), dataset: z.string(), file: z.string(), record_number: z.number().int().positive(), record_key: z.string(),
});
export type RecordRef = Readonly<z.infer<typeof RecordRef>>;

/**
 * One difference as reported (CONTRACT §7). `record_time`: the record's window-column time, UTC.
 * `record_count` records stand behind it; `records` lists the first of them (at most
 * RECORDS_LISTED, 4), every one is a row of the `difference_records` output. Both are absent in
 * manifests written before they existed.
 */
export const ReportedDifference = z.object({
  kind: z.string(), key: z.string(), detail: z.string(), record_time: IsoUtc.nullable(), break_id: z.string().nullable(), disposition: Disposition,
  record_count: z.number().int().nonnegative().optional(),
  records: z.array(RecordRef).optional(),
});
export type ReportedDifference = Readonly<z.infer<typeof ReportedDifference>>;

/**
 * A keyed total too large to list inline: its key count (decimal string) and the SHA-256 of its
 * listing; the entries are rows of the `control_totals` output (controls/controls.ts LargeTotal).
 */
export const LargeTotal = z.object({ keys: z.string(), sha256: Sha256 });

/** Control totals: name → exact decimal text, or name → key → exact decimal text. */
export const Totals = z.record(z.string(), z.union([z.string(), z.record(z.string(), z.string())]));

/** One control's result (CONTRACT §3–§7): status, as-of, readiness, totals and differences. */
export const ControlResult = z.object({
  control_id: z.string(),
  status: ControlStatus,
  as_of: IsoUtc.nullable(),
  readiness: z.object({ ready: z.boolean(), reasons: z.array(z.string()) }),
  quarantined_datasets: z.array(z.string()),
  totals: Totals,
  large_totals: z.record(z.string(), LargeTotal).optional(),
  differences: z.array(ReportedDifference),
});
export type ControlResult = Readonly<z.infer<typeof ControlResult>>;

/**
 * Issue 20 (additive): how the run came by one control's evaluation: `now` (its SQL ran in this
 * run) or `reused` (the products of an earlier evaluation with the same evaluation key were read
 * from the results cache, pipeline/run/results-cache.ts); the entry's key (null: cache off) and
 * the run whose evaluation it is; why an entry with the key was refused, if one was.
 */
export const EvaluationSource = z.object({
  evaluated: z.enum(['now', 'reused']),
  entry: Sha256.nullable(),
  first_run: z.string(),
  refused: z.string().optional(),
});
export type EvaluationSource = Readonly<z.infer<typeof EvaluationSource>>;

/** A break's head: the version of its newest event and that event's payload digest (issue 17). */
export const BreakHead = z.object({ version: z.number().int().positive(), sha256: Sha256 });

/** An event a run planned: version, state, payload digest and the digest of the event before it (null for a new break). */
export const PlannedBreakEvent = z.object({ version: z.number().int().positive(), to_state: BreakState, sha256: Sha256, base_sha256: Sha256.nullable() });

/**
 * A break the run opened, reobserved, reopened or saw as TIMING, with its state, age and SLA after
 * the run; since issue 17 also its head after the run, the event the run planned, and the digest of
 * the run's observation (written after the manifest, bound to it).
 */
export const ManifestBreak = z.object({
  break_id: z.string(), control_id: z.string(), kind: z.string(), key: z.string(), disposition: Disposition,
  state: BreakState.nullable().optional(),
  version: z.number().int().nullable().optional(),
  age_s: z.string().nullable().optional(),
  sla_s: z.number().nullable().optional(),
  sla_breached: z.boolean().nullable().optional(),
  head: BreakHead.nullable().optional(),
  event: PlannedBreakEvent.nullable().optional(),
  observation_sha256: Sha256.optional(),
});

/**
 * The run's break log record (issue 17): whether people's transitions are signed and the registry
 * in force, the staged plan of break objects written after this manifest (its SHA-256 and counts),
 * the checkpoint of every break's head (`heads/<run_id>.json`), and the breaks verified automatically.
 */
export const BreakLogRecord = z.object({
  signing: z.object({ mode: z.enum(['signed', 'unsigned']), namespace: z.string(), registry_sha256: Sha256.nullable() }),
  plan: z.object({ key: z.string(), sha256: Sha256, events: z.number().int().nonnegative(), observations: z.number().int().nonnegative() }),
  heads: z.object({ key: z.string(), sha256: Sha256, breaks: z.number().int().nonnegative() }),
  verified: z.array(z.object({ break_id: z.string(), control_id: z.string(), kind: z.string(), key: z.string(), head: BreakHead, event: PlannedBreakEvent })),
});
export type BreakLogRecord = z.infer<typeof BreakLogRecord>;

/**
 * The manifest's own signature (issue 18): signed by the pipeline (`reconciler`) in
 * `reckon-manifest` with the key and under the registry version named, the signature in
 * `<manifest>.json.sig`; or unsigned because the configuration said so or names no registry.
 */
export const ManifestSigningRecord = z.object({
  mode: z.enum(['signed', 'unsigned']),
  reason: z.enum(['configured', 'no-registry']).nullable(),
  namespace: z.string(),
  signer: z.string().nullable(),
  key: z.string().nullable(),
  registry_sha256: Sha256.nullable(),
});

/** How the run ran: Node, DuckDB settings, the overall status and exit code. */
export const Runtime = z.object({
  node: z.string().optional(),
  duckdb_threads: z.number().optional(),
  duckdb_memory_limit: z.string().optional(),
  duckdb_storage: z.string().optional(),
  estimated_load_bytes: z.number().optional(),
  overall_status: ControlStatus.optional(),
  exit_code: z.number().int().optional(),
});

/** Where a dataset of a sources file came from (issue 21; absent for a `--sources` folder run). */
const DatasetOrigin = z.union([
  z.object({ kind: z.literal('database'), database: z.string() }),
  z.object({ kind: z.enum(['folder', 's3']), location: z.string() }),
  z.object({ kind: z.literal('absent') }),
]);

/** One database's extract (docs/postgres.md): server, snapshot and, per dataset, the SQL and what it read. */
const DatabaseExtract = z.object({
  engine: z.string(),
  host: z.string(),
  port: z.number().int(),
  database: z.string(),
  user: z.string(),
  sslmode: z.string(),
  /** Whether the lead connection is encrypted (sslmode prefer falls back to the clear when the server offers no TLS); absent in manifests before it was recorded. */
  tls: z.boolean().optional(),
  auth: z.string(),
  reader: z.enum(['copy', 'cursor']),
  readers: z.number().int().positive(),
  server_version: z.string(),
  transaction: z.string(),
  snapshot: z.string().nullable(),
  transaction_started_at: IsoUtc.nullable(),
  started_at: z.string(),
  finished_at: z.string(),
  datasets: z.record(z.string(), z.object({
    sql: z.string(),
    sql_sha256: Sha256,
    source_sql: z.string(),
    source_sql_sha256: Sha256,
    columns: z.array(z.object({ name: z.string(), type: z.string(), role: z.enum(['contract', 'extra']) })),
    lower_bound: z.object({ column: z.string(), from: z.string() }).nullable(),
    rows: z.number().int().nonnegative(),
    bytes: z.number().int().nonnegative(),
    content_sha256: Sha256,
    fault: z.object({ column: z.string().nullable(), rule: z.string(), message: z.string() }).optional(),
    watermark: z.object({ query: z.string(), query_sha256: Sha256, value: z.string().nullable(), rows: z.number().int() }).optional(),
  }).passthrough()),
}).passthrough();

export const ManifestV1 = z.object({
  manifest_version: z.literal(1),
  run_id: z.string().regex(/^[a-z0-9_-]+$/),
  trigger: Trigger,
  reason: z.string().nullable(),
  parent_run_id: z.string().nullable(),
  window: z.object({ start: IsoUtc, end: IsoUtc }),
  controls: z.array(z.string()),
  started_at: IsoUtc,
  finished_at: IsoUtc,
  sources: z.object({
    location: z.string(),
    datasets: z.record(z.string(), z.object({
      present: z.boolean(),
      objects: z.array(z.object({
        path: z.string(), format: z.string(), size: z.number(), sha256: z.string(), rows: z.number(), quarantined: z.number(),
        // Issue 20 (additive): whether this run checked the object, read its earlier check from the delivery cache, or (`reused`)
        // hashed it and took the check of the run whose evaluation it reused without loading it; and why an entry was refused.
        checked: z.enum(['now', 'cache', 'reused']).optional(),
        cache_refused: z.string().optional(),
      }).passthrough()),
      records_read: z.number(),
      records_loaded: z.number(),
      quarantined: z.number(),
      duplicates: z.number(),
      watermark: z.object({ source: z.enum(['declared', 'derived', 'database', 'none']), value: IsoUtc.nullable() }).passthrough(),
      extra_columns: z.array(z.string()),
      ignored_files: z.array(z.string()),
      origin: DatasetOrigin.optional(),
    }).passthrough()),
    /** The sources file (`--sources FILE.yaml`), when the run read one. */
    file: z.object({ path: z.string(), sha256: Sha256 }).optional(),
    databases: z.record(z.string(), DatabaseExtract).optional(),
  }).passthrough(),
  cutoff_mappings: z.array(z.object({ timezone: z.string(), local: z.string(), utc: IsoUtc, rule: z.string() })),
  currency_table: z.object({ path: z.string(), sha256: Sha256 }),
  rounding_mode: z.string(),
  code: z.object({
    version: z.string(),
    commit: z.string().nullable(),
    sql: z.array(z.object({ path: z.string(), sha256: Sha256 })),
    control_definitions: z.array(z.object({ path: z.string(), sha256: Sha256 })),
    config: z.object({ path: z.string().nullable(), sha256: Sha256 }),
  }),
  results: z.array(ControlResult.passthrough()),
  // Issue 20 (additive): per control id, evaluated now or reused from the results cache.
  evaluation: z.record(z.string(), EvaluationSource).optional(),
  quarantine: z.object({ count: z.number(), listed: z.number(), entries: z.array(z.object({}).passthrough()) }),
  breaks: z.array(ManifestBreak.passthrough()),
  notes: z.array(z.string()),
  outputs: z.array(z.object({ table: z.string(), key: z.string(), sha256: Sha256, size: z.number(), rows: z.number() })),
  results_digest: Sha256,
  chain: z.object({ sequence: z.number().int().positive(), previous_manifest_sha256: Sha256.nullable() }),
  fingerprints: z.object({ inputs_sha256: Sha256, code_sha256: Sha256, config_sha256: Sha256 }).optional(),
  leases: z.array(z.object({ control_id: z.string(), fencing_token: z.number().int().positive(), acquired_at: z.string(), expires_at: z.string() })).optional(),
  timings_ms: z.record(z.string(), z.number()).optional(),
  runtime: Runtime.passthrough(),
  break_log: BreakLogRecord.optional(),
  manifest_signing: ManifestSigningRecord.optional(),
}).passthrough();

export type ManifestV1 = z.infer<typeof ManifestV1>;

/**
 * Parses a manifest document. Throws ManifestVersionError (naming the version expected and the one
 * found) for any `manifest_version` other than 1, and zod's error for a shape that is not version 1.
 */
export function parseManifest(doc: unknown): ManifestV1 {
  const found = doc !== null && typeof doc === 'object' ? (doc as Record<string, unknown>).manifest_version : undefined;
  if (found !== MANIFEST_VERSION) throw new ManifestVersionError(MANIFEST_VERSION, found);
  return ManifestV1.parse(doc);
}
