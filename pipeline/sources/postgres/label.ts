/**
 * What a database extract looks like after the loader read it (issue 21): the loader sees a CSV
 * file in a scratch folder; people and the manifest see the database and the dataset instead.
 * A quarantine entry of a database dataset names `db:<database>/<dataset>` (the manifest's
 * `sources.databases` holds its SQL), its row number in the sorted extract and the row's key; the
 * manifest's object for the extract carries the same name with the extract's SHA-256; a
 * watermark read by the dataset's watermark query says `database`.
 *
 * The functions are generic over the loader's shapes (load/ comes after sources/ in the flow).
 */
import type * as CsvParseSync from 'csv-parse/sync';
import { lazyRequire } from '../../core/lazy-require.js';
import type { PlannedSources } from '../locate.js';
import { databaseLabel } from '../source-plan.js';
import type { DatasetExtract } from './extract.js';
import { ROW_KEYS } from './render.js';

interface QuarantineLike { readonly dataset: string; readonly file: string; readonly line: number | null; readonly message: string; readonly raw: string }
interface DatasetLoadLike {
  readonly dataset: string;
  readonly files: readonly { readonly path: string }[];
  readonly watermark: { readonly source: string; readonly value: string | null; readonly micros: bigint | null };
}

/** The database extract of each dataset read from a database, with its label. */
function extractsByDataset(plan: PlannedSources): Map<string, { label: string; extract: DatasetExtract }> {
  const out = new Map<string, { label: string; extract: DatasetExtract }>();
  for (const db of plan.databases) for (const x of db.datasets) out.set(x.dataset, { label: databaseLabel(db.name, x.dataset), extract: x });
  return out;
}

/** csv-parse only for a database extract's quarantined record: a run of folders never loads it. */
const csvParse = lazyRequire<typeof CsvParseSync>('csv-parse/sync');

/** `order_id=O-1, order_version=2` for a raw CSV record of the extract, or undefined when it cannot be read. */
export function rowKeyText(dataset: string, header: readonly string[], raw: string): string | undefined {
  const key = ROW_KEYS[dataset] ?? [];
  let fields: string[];
  try { fields = (csvParse().parse(raw, { relax_column_count: true, relax_quotes: true }) as string[][])[0] ?? []; } catch { return undefined; }
  const parts = key.filter((k) => header.includes(k)).map((k) => `${k}=${fields[header.indexOf(k)] ?? ''}`);
  return parts.length ? parts.join(', ') : undefined;
}

/** Quarantine entries with database datasets named by database and dataset, their row key in the message. */
export function labelQuarantine<T extends QuarantineLike>(entries: readonly T[], plan: PlannedSources | undefined): readonly T[] {
  if (!plan || !plan.databases.length) return entries;
  const extracts = extractsByDataset(plan);
  return entries.map((e) => {
    const x = extracts.get(e.dataset);
    if (!x) return e;
    if (e.file === `${e.dataset}/extract.csv`) {
      const key = e.raw ? rowKeyText(e.dataset, x.extract.header, e.raw) : undefined;
      // The loader speaks of files; this one is the query's result.
      const message = e.message.replace(/^the file lacks column\(s\)/, 'the query returns no column(s)');
      return { ...e, file: x.label, line: null, message: key ? `${message} (row key ${key})` : message };
    }
    if (e.file === `${e.dataset}/_watermark.json`) {
      // The scratch _watermark.json is the run's own carrier of the value, not a delivered file.
      const message = e.message.replace(/^_watermark\.json "watermark": /, 'the watermark ');
      return { ...e, file: `${x.label} watermark query`, message: `${message} (the value the watermark query returned)` };
    }
    return e;
  });
}

/** Dataset loads with the extract object named like its quarantine entries and the watermark's source set. */
export function labelDatasetLoads<T extends DatasetLoadLike>(loads: readonly T[], plan: PlannedSources | undefined): readonly T[] {
  if (!plan || !plan.databases.length) return loads;
  const extracts = extractsByDataset(plan);
  return loads.map((d) => {
    const x = extracts.get(d.dataset);
    if (!x) return d;
    const files = d.files.map((f) => (f.path === `${d.dataset}/extract.csv` ? { ...f, path: x.label } : f));
    // A watermark query that returned no value, or one the loader quarantined, gives no watermark.
    const watermark = x.extract.watermark === undefined ? d.watermark
      : d.watermark.source === 'declared' ? { ...d.watermark, source: 'database' } : { source: 'database', value: null, micros: null };
    return { ...d, files, watermark };
  });
}

/** The manifest's `sources` fields of a sources file run: the file and each database's extract (none for a folder). */
export function sourcesManifestFields(plan: PlannedSources | undefined) {
  if (!plan) return {};
  return {
    file: plan.file,
    ...(plan.databases.length ? {
      databases: Object.fromEntries(plan.databases.map(({ name: _name, datasets, ...db }) => [_name, {
        ...db, datasets: Object.fromEntries(datasets.map(({ dataset, header: _h, ...x }) => [dataset, x])),
      }])),
    } : {}),
  };
}

/** `{ origin }` for a dataset of a sources file run, `{}` otherwise. */
export function datasetOriginField(plan: PlannedSources | undefined, dataset: string) {
  const origin = plan?.origins.get(dataset);
  return origin ? { origin } : {};
}

/**
 * The file each database dataset's records carry in lineage (`<dataset>/extract.csv`, the
 * loader's name for the extract) and the label people and the manifest use for it
 * (`db:<database>/<dataset>`), so that the records behind a difference name the extract as its
 * quarantine entries and manifest object do. Empty for a folder run.
 */
export function extractFileLabels(plan: PlannedSources | undefined): { dataset: string; file: string; label: string }[] {
  const out: { dataset: string; file: string; label: string }[] = [];
  for (const [dataset, origin] of plan?.origins ?? []) {
    if (origin.kind === 'database') out.push({ dataset, file: `${dataset}/extract.csv`, label: databaseLabel(origin.database, dataset) });
  }
  return out.sort((a, b) => (a.dataset < b.dataset ? -1 : a.dataset > b.dataset ? 1 : 0));
}
