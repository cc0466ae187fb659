/**
 * One OpenLineage run event per reckon run, for evidence packages (OpenLineage spec 2-0-2,
 * RunEvent). The run's half-open window is the `nominalTime` facet (nominalEndTime is exclusive
 * in that facet's definition, as our window end is); a rerun carries the `parent` facet naming the
 * run it repeats. OpenLineage run ids are UUIDs, so the reckon run id maps to a name-based UUID
 * (version 5, SHA-1, RFC 9562) in a fixed namespace: the same run always gets the same UUID, and a
 * reader can recompute it. The reckon run id itself is kept in the `reckon_run` custom facet.
 */
import { createHash } from 'node:crypto';
import type { ManifestV1 } from '../../manifests/v1/schema.js';

/** Namespace UUID for reckon run ids (random, fixed forever: changing it would re-key every run). */
export const RECKON_RUN_NAMESPACE = '1f0b6c1e-8d2a-4a57-9f3e-6c0d5a9b2e41';
/** OpenLineage job namespace and name of a reckon run. */
export const JOB = { namespace: 'reckon', name: 'reckon.run' } as const;

export const RUN_EVENT_SCHEMA = 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent';
export const NOMINAL_TIME_SCHEMA = 'https://openlineage.io/spec/facets/1-0-1/NominalTimeRunFacet.json#/$defs/NominalTimeRunFacet';
export const PARENT_RUN_SCHEMA = 'https://openlineage.io/spec/facets/1-0-1/ParentRunFacet.json#/$defs/ParentRunFacet';
/** Custom facet schema identifier (a URN: reckon publishes no schema host). */
export const RECKON_RUN_FACET_SCHEMA = 'urn:reckon:openlineage:ReckonRunFacet:1';

/** UUID version 5 of `name` in `namespace` (RFC 9562 §5.5). */
export function uuidV5(name: string, namespace: string = RECKON_RUN_NAMESPACE): string {
  const ns = Buffer.from(namespace.replace(/-/g, ''), 'hex');
  const h = createHash('sha1').update(ns).update(Buffer.from(name, 'utf8')).digest().subarray(0, 16);
  h[6] = (h[6] & 0x0f) | 0x50;
  h[8] = (h[8] & 0x3f) | 0x80;
  const x = h.toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

/** OpenLineage dataset naming for a location and a path under it: `s3://bucket` + key, or `file` + absolute path. */
export function datasetName(location: string, path: string): { namespace: string; name: string } {
  const m = /^s3:\/\/([^/]+)\/?(.*)$/.exec(location);
  if (m) return { namespace: `s3://${m[1]}`, name: [m[2].replace(/\/$/, ''), path].filter(Boolean).join('/') };
  return { namespace: 'file', name: `${location.replace(/\/$/, '')}/${path}` };
}

/**
 * The COMPLETE run event of a published run. `manifestSha256` and `storeLocation` identify the
 * manifest it was built from. The event is plain JSON; all times are the manifest's own.
 */
export function runEvent(manifest: ManifestV1, manifestSha256: string, storeLocation: string): Record<string, unknown> {
  const producer = `urn:reckon:${manifest.code.version}${manifest.code.commit ? `:${manifest.code.commit}` : ''}`;
  const facets: Record<string, unknown> = {
    nominalTime: { _producer: producer, _schemaURL: NOMINAL_TIME_SCHEMA, nominalStartTime: manifest.window.start, nominalEndTime: manifest.window.end },
  };
  if (manifest.parent_run_id !== null) {
    facets.parent = { _producer: producer, _schemaURL: PARENT_RUN_SCHEMA, run: { runId: uuidV5(manifest.parent_run_id) }, job: { ...JOB } };
  }
  facets.reckon_run = {
    _producer: producer, _schemaURL: RECKON_RUN_FACET_SCHEMA,
    run_id: manifest.run_id, parent_run_id: manifest.parent_run_id, trigger: manifest.trigger, reason: manifest.reason,
    window: { start: manifest.window.start, end: manifest.window.end, bounds: '[start, end)' },
    manifest_sha256: manifestSha256, chain_sequence: manifest.chain.sequence, results_digest: manifest.results_digest,
    status: manifest.runtime.overall_status ?? null,
    controls: manifest.results.map((r) => ({ control_id: r.control_id, status: r.status })),
  };
  return {
    eventType: 'COMPLETE',
    eventTime: manifest.finished_at,
    producer,
    schemaURL: RUN_EVENT_SCHEMA,
    run: { runId: uuidV5(manifest.run_id), facets },
    job: { ...JOB },
    inputs: Object.keys(manifest.sources.datasets).sort().map((d) => datasetName(manifest.sources.location, d)),
    outputs: [...new Set(manifest.outputs.map((o) => o.table))].sort().map((t) => datasetName(storeLocation, `outputs/${t}`)),
  };
}
