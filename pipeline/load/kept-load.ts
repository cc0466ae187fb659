/**
 * A load's result as the results cache keeps it (`load.json` of a results entry keyed by the
 * load's inputs, run/results-cache.ts), and read back by an unchanged rerun that skips the load:
 * every dataset's counts, objects, watermark, side files and import report, the quarantine entries
 * in their order and the cutoff mappings. Watermark instants (bigint µs) are kept as text.
 */
import type { DatasetLoad, LoadResult } from './load.js';

/** The text of `loaded` as kept (without the view files' stamps: a run that skips the load reads no view). */
export function keptLoadJson(loaded: LoadResult): string {
  const { datasets, quarantine, cutoffMappings } = loaded;
  return JSON.stringify({ datasets, quarantine, cutoffMappings }, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}

/**
 * The load kept as `text` (keptLoadJson), for a run that skipped the load: each object says
 * `checked: "reused"` (hashed by this run, its check taken from the results entry) and no
 * refusal of a delivery entry (that was the earlier run's). Throws when `text` is not such a load.
 */
export function restoreKeptLoad(text: string): LoadResult {
  const doc = JSON.parse(text) as { datasets: DatasetLoad[]; quarantine: LoadResult['quarantine']; cutoffMappings: LoadResult['cutoffMappings'] };
  if (!Array.isArray(doc.datasets) || !Array.isArray(doc.quarantine) || !Array.isArray(doc.cutoffMappings)) throw new Error('load.json is not a kept load');
  const datasets = doc.datasets.map((d): DatasetLoad => ({
    ...d,
    files: d.files.map(({ cache_refused: _r, ...f }) => ({ ...f, checked: 'reused' as const })),
    watermark: { ...d.watermark, micros: d.watermark.micros === null ? null : BigInt(d.watermark.micros as unknown as string) },
  }));
  return { datasets, quarantine: doc.quarantine, cutoffMappings: doc.cutoffMappings };
}
