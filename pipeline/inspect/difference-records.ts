/**
 * The records behind one difference of a published run (issue 19; controls/records.ts wrote
 * them): every record from the run's `difference_records` output when its bytes have the SHA-256
 * the manifest recorded, else the first few the manifest itself lists, saying why and how many
 * are not shown. Both come in one order: a record of each side (in byte order of the side)
 * before a second of any, and within a side by dataset, file and record number. Reads only.
 */
import { ConfigError } from '../core/errors.js';
import type { ObjectStore } from '../store/object-store.js';
import { findRunManifest, type StoredManifest } from '../report/run-view.js';
import type { RecordRef, ReportedDifference } from '../../manifests/v1/schema.js';
import { readOutput, type OutputRead, type Reader } from './run-outputs.js';

/** A difference of a run and the records behind it. */
export interface DifferenceRecordsRead {
  readonly run_id: string;
  readonly window: { readonly start: string; readonly end: string };
  readonly control_id: string;
  readonly difference: ReportedDifference;
  /** How many records stand behind it (null for a run older than records). */
  readonly record_count: number | null;
  readonly records: readonly RecordRef[];
  /** True when `records` holds every one (read from the verified output). */
  readonly complete: boolean;
  /** Where they were read: the output object, or why the manifest's list was used instead. */
  readonly from: OutputRead;
}

/** The control and difference of `kind`/`key` in the run, or undefined. */
export function findDifference(stored: Pick<StoredManifest, 'manifest'>, kind: string, key: string): { control_id: string; difference: ReportedDifference } | undefined {
  for (const r of stored.manifest.results) {
    const d = r.differences.find((x) => x.kind === kind && x.key === key);
    if (d) return { control_id: r.control_id, difference: d };
  }
  return undefined;
}

/**
 * The records of difference (`kind`, `key`) of the run. Throws ConfigError (exit 2) naming the
 * run when it has no such difference.
 */
export async function differenceRecords(store: ObjectStore, stored: Pick<StoredManifest, 'run_id' | 'manifest'>, kind: string, key: string, reader: Reader): Promise<DifferenceRecordsRead> {
  const found = findDifference(stored, kind, key);
  if (!found) throw new ConfigError(`run ${stored.run_id} has no difference ${kind} ${key}; reckon breaks list or the run's manifest name its differences`);
  const { control_id, difference } = found;
  const base = { run_id: stored.run_id, window: stored.manifest.window, control_id, difference, record_count: difference.record_count ?? null };
  const from = await readOutput(store, stored, 'difference_records', reader);
  if (from.state !== 'verified') {
    const listed = difference.records ?? [];
    return { ...base, records: listed, complete: difference.record_count !== undefined && listed.length === difference.record_count, from };
  }
  const conn = await reader.connection();
  if (!/^[A-Za-z0-9_\-/.]+$/.test(from.path)) throw new ConfigError(`the scratch folder ${reader.dir} has characters DuckDB would read as a pattern; set TMPDIR to a plain path`);
  const prepared = await conn.prepare(`SELECT r.side, r.dataset, r.file, r.record_number::VARCHAR AS record_number, r.record_key FROM read_parquet('${from.path}') r
    WHERE r.control_id = $1 AND r.kind = $2 AND r.key = $3
    ORDER BY row_number() OVER (PARTITION BY r.side ORDER BY r.dataset, r.file, r.record_number), r.side`);
  try {
    prepared.bindVarchar(1, control_id);
    prepared.bindVarchar(2, kind);
    prepared.bindVarchar(3, key);
    const rows = (await prepared.runAndReadAll()).getRowObjectsJson();
    const records = rows.map((r) => ({ side: String(r.side), dataset: String(r.dataset), file: String(r.file), record_number: Number(r.record_number), record_key: String(r.record_key) }));
    return { ...base, record_count: records.length, records, complete: true, from };
  } finally {
    prepared.destroySync();
  }
}

/** The records a run's manifest lists for one difference: the run, how many there are and the first few (null: the run kept none). */
export interface ListedRecords {
  readonly run_id: string;
  readonly record_count: number | null;
  readonly listed: readonly RecordRef[];
}

/**
 * The records the manifest of run `runId` lists for difference (`kind`, `key`), without reading
 * any output: what `reckon breaks show` prints. Undefined when the store has no such run or the
 * run no such difference.
 */
export async function listedRecords(store: ObjectStore, runId: string, kind: string, key: string): Promise<ListedRecords | undefined> {
  const stored = await findRunManifest(store, runId).catch(() => undefined);
  const found = stored && findDifference(stored, kind, key);
  if (!found) return undefined;
  return { run_id: runId, record_count: found.difference.record_count ?? null, listed: found.difference.records ?? [] };
}
