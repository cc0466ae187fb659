/**
 * The loader's result and options as its callers see them (load.ts re-exports every one): per
 * dataset and per file what was read and loaded, watermarks, side files, cutoff mappings, and how
 * `loadSources` reads files. Types only, so every module of the loader may use them.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import type { CutoffRule } from '../contract/local-time.js';
import type { WrittenFile } from '../sources/csv-fast.js';
import type { DatasetFault } from '../sources/locate.js';
import type { DeliveryCacheConfig } from './delivery-cache.js';
import type { HashedFile } from './input-digest.js';
import type { QuarantineEntry } from './quarantine-entry.js';

/** Per input object: what was read from it. */
export interface FileLoad {
  readonly path: string;
  readonly format: string;
  size: number;
  sha256: string;
  /** Records read from the file (each is either loaded or quarantined). */
  rows: number;
  /** Records of the file that were loaded (before exact duplicate deliveries collapse). */
  loaded: number;
  quarantined: number;
  /**
   * `now`: the file was checked by this run; `cache`: its earlier check was read from the delivery
   * cache (delivery-cache.ts); `reused`: the run hashed it, found every input as the run that
   * evaluated its reused results read them, and took that run's check without loading it (kept-load.ts).
   */
  checked: 'now' | 'cache' | 'reused';
  /** Set when a cache entry for the file was found but refused (corrupted or edited): why. The file was checked now. */
  cache_refused?: string;
}

/**
 * A dataset's watermark: declared in `_watermark.json`, derived from its data, read from the
 * database by the dataset's watermark query (a sources file, docs/postgres.md), or none.
 */
export interface Watermark {
  readonly source: 'declared' | 'derived' | 'database' | 'none';
  /** ISO-8601 UTC, microseconds when present; null for none. */
  readonly value: string | null;
  readonly micros: bigint | null;
  readonly complete?: boolean;
  readonly sequence?: string;
}

/** Everything the manifest needs to know about one dataset's load. */
export interface DatasetLoad {
  readonly dataset: string;
  readonly present: boolean;
  readonly files: FileLoad[];
  records_read: number;
  records_loaded: number;
  duplicates: number;
  quarantined: number;
  watermark: Watermark;
  /** Columns of the files that are not the dataset's: the first EXTRA_COLUMNS_LISTED, each clipped to NAME_KEEP_CHARS. */
  readonly extra_columns: string[];
  /** How many distinct extra columns there were (more than listed when the files held many). */
  extra_columns_count: number;
  /** Names that are not data files: the first IGNORED_FILES_LISTED. */
  readonly ignored_files: readonly string[];
  readonly ignored_files_count: number;
  /** The side files read (`_watermark.json`, `_import_report.json`): path, size and SHA-256 of the bytes read. */
  readonly control_files: ControlFile[];
  import_report?: unknown;
}

/** A side file of a dataset as read: path relative to the source root, size in bytes, SHA-256. */
export interface ControlFile {
  readonly path: string;
  readonly size: number;
  readonly sha256: string;
}

/** One cutoff mapping used (CONTRACT §2): local date/time in a zone → UTC, and which rule applied. */
export interface CutoffMapping {
  readonly timezone: string;
  readonly local: string;
  readonly utc: string;
  readonly rule: CutoffRule;
}

export interface LoadResult {
  readonly datasets: readonly DatasetLoad[];
  readonly quarantine: readonly QuarantineEntry[];
  readonly cutoffMappings: readonly CutoffMapping[];
  /**
   * Files that views read during the whole run (view mode): their staged link, size and
   * modification time when checked. `checkViewFiles` must find them unchanged after the last query.
   */
  readonly viewFiles?: readonly { relPath: string; stagedPath: string; size: number; mtimeMs: number }[];
}

/** How `loadSources` reads files. */
export interface LoadOptions {
  /**
   * Use the SQL fast path (load-fast.ts) for Parquet and plain CSV files (default true). With
   * false every file goes through the JavaScript reader and validator; the tables and the
   * quarantine are the same either way (test/load-fastpath.test.ts).
   */
  readonly fast?: boolean;
  /**
   * View mode (load-views.ts): a dataset without derived columns whose Parquet files pass the
   * fast path is a view over those files instead of a copy in DuckDB (default false).
   */
  readonly views?: boolean;
  /**
   * Only these datasets are read (default: every dataset of CONTRACT §2). A run reads the datasets
   * its selected controls read (CONTRACT §3 table), so `--control RC03` does not read orders. The
   * others get no table: a query naming one fails (it never reads a silent empty table).
   */
  readonly datasets?: readonly string[];
  /** Called once per data file that is read, saying how it was loaded. For tests and diagnostics. */
  readonly onFile?: (info: FilePath) => void;
  /**
   * Whole-dataset quarantine entries found before loading (a database column refused by type, a
   * watermark query with several rows: sources/source-plan.ts), by dataset; each names its source.
   */
  readonly faults?: ReadonlyMap<string, readonly DatasetFault[]>;
  /**
   * Resolves once a dataset's files are in place (a database extract still being written while
   * other datasets load); a rejection stops the load. With it, datasets load in the order they
   * become ready (contract order among those ready), and the result is put back in contract order.
   */
  readonly ready?: (dataset: string) => Promise<void>;
  /**
   * More connections of the same DuckDB instance to load datasets on at the same time (a
   * mid-sized day: each statement there mostly runs on one core). Each dataset loads wholly on one
   * connection; tables, quarantine and counts are those of one connection (default none).
   */
  readonly lanes?: readonly DuckDBConnection[];
  /**
   * The delivery cache (delivery-cache.ts): each file's check is kept there and read back by later
   * loads of the same bytes under the same code and rules (default none: every file is checked).
   */
  readonly cache?: DeliveryCacheConfig;
  /**
   * Files the run wrote itself (database extracts), by real path, with the SHA-256, size and CSV
   * shape computed as they were written: such a file, still of that size, is not read again to
   * hash and scan it.
   */
  readonly written?: ReadonlyMap<string, WrittenFile>;
  /**
   * Data files hashed before the load (input-digest.ts), by real path: a file whose size,
   * modification time, inode and change time are still those stamped is not read again to hash it.
   */
  readonly hashed?: ReadonlyMap<string, HashedFile>;
  /** Called as loading goes (for progress on stderr): see LoadProgress. */
  readonly onProgress?: (p: LoadProgress) => void;
  /**
   * Called before each file is read and every CHECKPOINT_RECORDS records the JavaScript reader
   * reads (dataset-run.ts): a safe point where an interrupted run stops by throwing
   * (run/phase-load.ts), the reader's loop then ending as at a file's limit.
   */
  readonly checkpoint?: () => void;
}

/**
 * Where a load is: a dataset started (`start`), records read so far (`records`: every
 * PROGRESS_RECORDS records read by the JavaScript reader, and after each file), a dataset done
 * (`done`, with its quarantine count). `records_read` counts the dataset's records so far.
 */
export interface LoadProgress {
  readonly stage: 'start' | 'records' | 'done';
  readonly dataset: string;
  readonly files: number;
  readonly records_read: number;
  readonly quarantined: number;
}

/**
 * How one file was loaded: `fast` (SQL inserted `sqlRecords` records; the others went through the
 * JS validator), `js` (the JavaScript reader read it whole; `reason` says why) or `cache` (its
 * earlier check was read from the delivery cache).
 */
export interface FilePath {
  readonly path: string;
  readonly loadedBy: 'fast' | 'js' | 'cache';
  readonly sqlRecords: number;
  readonly reason?: string;
}
