/**
 * The embedded DuckDB a run computes in, with settings for bounded memory on the 2-core, 24 GiB
 * machine (docs/performance.md "DuckDB settings"):
 * - `threads 2`, `memory_limit 2GB` (with Node and DuckDB's own allocations outside its buffer
 *   pool, a run then peaks under 4 GiB), `preserve_insertion_order false`, spilling to
 *   `temp_directory` in the run's scratch folder; a small day (records estimated under
 *   ONE_THREAD_BELOW_BYTES in memory) on one thread: its statements are too small to split, and
 *   handing each one's tasks to a second thread cost more than it saved (the sample day's
 *   ~700 statements took about a third more CPU on two threads);
 * - storage: in memory for a day that fits, or a database file in the scratch folder for a large
 *   one. Table data in memory is uncompressed (about 190 bytes a record) and, past the memory
 *   limit, is spilled uncompressed (a 10M-order day: 25 GB of temp files); a database file holds
 *   it compressed (about 45 bytes a record) and reads it back through the same buffer pool.
 *   Tables in memory are never checkpointed automatically (MEMORY_CHECKPOINT_THRESHOLD).
 *
 * The settings' storage (`RECKON_DUCKDB_STORAGE=memory|file|auto`, default auto) overrides the
 * choice; auto picks the file when the estimated in-memory size of the records to load exceeds
 * FILE_STORAGE_ABOVE_BYTES. The memory limit is the settings' (`RECKON_DUCKDB_MEMORY_LIMIT`).
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { DuckDBInstance } from '@duckdb/node-api';
import { duckdb } from '../core/duckdb.js';
import { InternalError, isOutOfMemory } from '../core/errors.js';
import type { Settings } from '../core/settings.js';
import { listDatasetFolder } from '../sources/files.js';
import { datasetRoot, type DatasetRoots } from '../sources/locate.js';

export { DUCKDB_MEMORY_LIMIT } from '../core/settings.js';

/** DuckDB worker threads (the machine's cores). */
export const DUCKDB_THREADS = 2;
/** Below this estimated in-memory size of the records to load (about 300,000 records), DuckDB runs on one thread. */
export const ONE_THREAD_BELOW_BYTES = 64 * 1024 ** 2;
/**
 * Above this estimated in-memory size of the records to load, tables live in a database file: a
 * 1M-order day (about 2.6 GB estimated) stays in memory, a 10M-order day (about 25 GB) goes to a file.
 */
const FILE_STORAGE_ABOVE_BYTES = 4 * 1024 ** 3;
/**
 * DuckDB's automatic checkpoint threshold for tables in memory. Since DuckDB 1.4 an in-memory
 * database checkpoints too, each time 16 MiB of changes accumulate: it rewrites the changed
 * tables' row groups (compression analysis, statistics), about 0.5 s of CPU at a time on a 100k-
 * order day, paid by whichever statement crossed the threshold (order_current, say). A run's
 * in-memory tables are written once and dropped with the instance, so that work buys nothing:
 * the threshold is set out of reach. A database file keeps DuckDB's default.
 */
const MEMORY_CHECKPOINT_THRESHOLD = '1TB';

/**
 * In-memory bytes of table data per byte of input file, by format (measured on generated days:
 * a Parquet byte expands about 12×, CSV about 1.6×, JSON Lines about 1.2×; gzip adds about 6×).
 */
const EXPANSION: Readonly<Record<string, number>> = { parquet: 12, csv: 1.6, jsonl: 1.2 };
const GZIP_EXPANSION = 6;

export type EngineStorage = 'memory' | 'file';

/** The engine of one run: the instance, where its tables live, and why. */
export interface Engine {
  readonly instance: DuckDBInstance;
  readonly storage: EngineStorage;
  /** Estimated in-memory bytes of the records to load (the basis of the automatic choice). */
  readonly estimated_bytes: number;
  /** DuckDB's buffer-pool limit in force, e.g. `2GB`. */
  readonly memory_limit: string;
  /** DuckDB's threads: DUCKDB_THREADS, or 1 for a small day. */
  readonly threads: number;
}

/**
 * Estimates the in-memory size (bytes) of the records in the data files of `datasets` under the
 * local folder `root` (sizes from the file system; unreadable entries count 0), or for a dataset
 * in `estimated` (a database extract not yet written), from its planned CSV size.
 */
export async function estimateLoadBytes(root: DatasetRoots, datasets: readonly string[], estimated?: ReadonlyMap<string, number>): Promise<number> {
  let total = 0;
  for (const d of datasets) {
    // A database extract not written yet: the planner's size of its CSV form.
    const planned = estimated?.get(d);
    if (planned !== undefined) { total += planned * EXPANSION.csv; continue; }
    const folder = await listDatasetFolder(datasetRoot(root, d), d);
    for (const f of folder.files) {
      if (f.refused || !f.realPath) continue;
      const size = await stat(f.realPath).then((s) => s.size, () => 0);
      total += size * (EXPANSION[f.format] ?? 1) * (f.gzip ? GZIP_EXPANSION : 1);
    }
  }
  return Math.round(total);
}

/**
 * Opens the run's DuckDB in `scratch` (a folder whose path holds no quote, space or glob) for
 * records estimated at `estimatedBytes` in memory, with the storage and memory limit of `settings`.
 */
export async function openEngine(scratch: string, estimatedBytes: number, settings: Settings['duckdb']): Promise<Engine> {
  const storage: EngineStorage = settings.storage === 'auto' ? (estimatedBytes > FILE_STORAGE_ABOVE_BYTES ? 'file' : 'memory') : settings.storage;
  const threads = estimatedBytes < ONE_THREAD_BELOW_BYTES ? 1 : DUCKDB_THREADS;
  const instance = await duckdb().DuckDBInstance.create(storage === 'file' ? join(scratch, 'work.duckdb') : ':memory:', {
    threads: String(threads), memory_limit: settings.memoryLimit, temp_directory: join(scratch, 'duckdb-tmp'), preserve_insertion_order: 'false',
    ...(storage === 'memory' ? { checkpoint_threshold: MEMORY_CHECKPOINT_THRESHOLD } : {}),
  });
  return { instance, storage, estimated_bytes: estimatedBytes, memory_limit: settings.memoryLimit, threads };
}

/**
 * The error to report when DuckDB ran out of memory while a run was `doing` something (loading,
 * evaluating RC03, …): an InternalError (exit 70) that names what it was doing, the limit and
 * storage in force, and what an operator can change — more memory, or free space in the spill
 * folder when it was the spill folder that filled up. Any other error is returned unchanged.
 */
export function explainOutOfMemory(e: unknown, doing: string, engine: Engine): unknown {
  if (!isOutOfMemory(e)) return e;
  const message = e instanceof Error ? e.message : String(e);
  // DuckDB's own advice (SET threads, SET memory_limit …) does not apply to a reckon run.
  const detail = message.split(/\n\s*Possible solutions:/)[0].replace(/\s*\n\s*/g, ' ').trim().replace(/\.$/, '');
  const gib = (engine.estimated_bytes / 1024 ** 3).toFixed(1);
  const spill = /offload|max_temp_directory_size|temp(orary)? ?director/i.test(message);
  const advice = spill
    ? 'DuckDB could not spill to its temp folder: free space where TMPDIR points (a 10M-order day spills tens of GB) and rerun the window'
    : 'Raise RECKON_DUCKDB_MEMORY_LIMIT (peak RSS is about the limit plus 1 GB) and rerun the window';
  return new InternalError(`DuckDB ran out of memory while ${doing} (memory_limit ${engine.memory_limit}, tables in ${engine.storage}, ` +
    `records estimated at ${gib} GiB in memory): ${detail}. No manifest was written and the window's leases are released. ` +
    `${advice}; docs/operations.md "Sizing a large day".`);
}
