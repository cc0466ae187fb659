/**
 * Run manifest, version 1 (CONTRACT §6). A reader rejects a manifest of an unknown version rather
 * than guessing; changes inside version 1 are additive only. `manifest.schema.json` beside this
 * file is generated from this schema (`npm run manifest-schema`).
 */
import { z } from 'zod';

const Sha256 = z.string().regex(/^[0-9a-f]{64}$/);
const IsoUtc = z.string().regex(/^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,6})?Z$/);
const Status = z.enum(['CLEAN', 'BREAKS', 'NOT_READY', 'INCOMPLETE']);

export const ManifestV1 = z.object({
  manifest_version: z.literal(1),
  run_id: z.string().regex(/^[a-z0-9_-]+$/),
  trigger: z.enum(['scheduled-nightly', 'scheduled-intraday', 'incident', 'manual']),
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
      objects: z.array(z.object({ path: z.string(), format: z.string(), size: z.number(), sha256: z.string(), rows: z.number(), quarantined: z.number() }).passthrough()),
      records_read: z.number(),
      records_loaded: z.number(),
      quarantined: z.number(),
      duplicates: z.number(),
      watermark: z.object({ source: z.enum(['declared', 'derived', 'none']), value: IsoUtc.nullable() }).passthrough(),
      extra_columns: z.array(z.string()),
      ignored_files: z.array(z.string()),
    }).passthrough()),
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
  results: z.array(z.object({
    control_id: z.string(),
    status: Status,
    as_of: IsoUtc.nullable(),
    readiness: z.object({ ready: z.boolean(), reasons: z.array(z.string()) }),
    quarantined_datasets: z.array(z.string()),
    totals: z.record(z.string(), z.union([z.string(), z.record(z.string(), z.string())])),
    large_totals: z.record(z.string(), z.object({ keys: z.string(), sha256: Sha256 })).optional(),
    differences: z.array(z.object({ kind: z.string(), key: z.string(), detail: z.string(), record_time: IsoUtc.nullable(), break_id: z.string().nullable(), disposition: z.string() })),
  }).passthrough()),
  quarantine: z.object({ count: z.number(), listed: z.number(), entries: z.array(z.object({}).passthrough()) }),
  breaks: z.array(z.object({ break_id: z.string(), control_id: z.string(), kind: z.string(), key: z.string(), disposition: z.string() }).passthrough()),
  notes: z.array(z.string()),
  outputs: z.array(z.object({ table: z.string(), key: z.string(), sha256: Sha256, size: z.number(), rows: z.number() })),
  results_digest: Sha256,
  chain: z.object({ sequence: z.number().int().positive(), previous_manifest_sha256: Sha256.nullable() }),
  fingerprints: z.object({ inputs_sha256: Sha256, code_sha256: Sha256, config_sha256: Sha256 }).optional(),
  leases: z.array(z.object({ control_id: z.string(), fencing_token: z.number().int().positive(), acquired_at: z.string(), expires_at: z.string() })).optional(),
  timings_ms: z.record(z.string(), z.number()).optional(),
  runtime: z.object({}).passthrough(),
}).passthrough();

export type ManifestV1 = z.infer<typeof ManifestV1>;

/** Parses a manifest document; throws on an unknown version or a shape that is not version 1. */
export function parseManifest(doc: unknown): ManifestV1 {
  const v = (doc as { manifest_version?: unknown } | null)?.manifest_version;
  if (v !== 1) throw new Error(`unknown manifest version ${JSON.stringify(v)}; this reckon reads version 1`);
  return ManifestV1.parse(doc);
}
