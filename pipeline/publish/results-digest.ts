/**
 * The results digest (CONTRACT §6): the SHA-256 of the canonical JSON of a run's window, each
 * control's status, as-of, totals and differences, and the quarantine's where and rule — equal for
 * two runs on equal inputs and code. Computed once here, by the run (phase-breaks.ts) from its
 * results and by `manifest verify` (recompute-digest.ts) from the run's Parquet outputs read back.
 */
import type { ControlResult } from '../../manifests/v1/schema.js';
import { canonicalJson } from '../core/canonical.js';
import { sha256Hex } from '../core/digest.js';
import type { QuarantineEntry } from '../load/load.js';

/** What of a control result enters the digest. */
export type DigestedResult = Pick<ControlResult, 'control_id' | 'status' | 'as_of' | 'totals' | 'large_totals'> & {
  readonly differences: readonly Pick<ControlResult['differences'][number], 'kind' | 'key' | 'detail' | 'record_time'>[];
};

/** What of the quarantine enters the digest. */
export type DigestedQuarantine = Pick<QuarantineEntry, 'dataset' | 'file' | 'row' | 'column' | 'rule'>;

/** The digest of the results alone: equal for two runs on equal inputs and code (CONTRACT §6). */
export function resultsDigestOf(window: { readonly start: string; readonly end: string }, results: readonly DigestedResult[], loaded: { readonly quarantine: readonly DigestedQuarantine[] }): string {
  return sha256Hex(canonicalJson({
    window: { start: window.start, end: window.end },
    controls: results.map((r) => ({
      control_id: r.control_id, status: r.status, as_of: r.as_of, totals: r.totals, ...(r.large_totals ? { large_totals: r.large_totals } : {}),
      differences: r.differences.map((d) => ({ kind: d.kind, key: d.key, detail: d.detail, record_time: d.record_time })),
    })),
    quarantine: loaded.quarantine.map((q) => ({ dataset: q.dataset, file: q.file, row: q.row, column: q.column, rule: q.rule })),
  }));
}
