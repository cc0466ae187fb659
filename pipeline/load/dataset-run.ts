/**
 * The loader's state (load.ts, file-load.ts): one load's across its datasets (LoadRun), and one
 * dataset's while its files load (DatasetRun), with the bounds on what the manifest copies from a file.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import type { FileLimits } from '../contract/limits.js';
import type { LoadRules } from '../contract/money.js';
import { derivedColumns, type DatasetSpec } from '../contract/datasets.js';
import { ident } from '../core/sql-text.js';
import type { DatasetFolder } from '../sources/files.js';
import type { CachedRows } from './cached-load.js';
import type { DeliveryCache } from './delivery-cache.js';
import type { CutoffMapping, DatasetLoad, LoadOptions, LoadProgress } from './load-types.js';
import type { QuarantineEntry } from './quarantine-entry.js';
import { tableColumns, type RowContext } from './record-type.js';
import type { ViewFile } from './views.js';

/** How often the JavaScript reader reports records read. */
export const PROGRESS_RECORDS = 50_000;

/** How often the JavaScript reader calls the load's checkpoint (LoadOptions): a few milliseconds of reading. */
export const CHECKPOINT_RECORDS = 4096;

/**
 * Bounds on what the manifest copies from a file (issue 18: a 50 MB header field made a 104.9 MB
 * manifest): extra column names listed per dataset and their length, ignored file names listed,
 * and the length of an entry's message and column name (raw text has its own bound, RAW_KEEP_CHARS).
 */
export const EXTRA_COLUMNS_LISTED = 100;
export const IGNORED_FILES_LISTED = 1000;
export const NAME_KEEP_CHARS = 128;
export const MESSAGE_KEEP_CHARS = 1024;

/** `s` cut to `max` characters (code points), with `…` and the full length when cut. */
function clipName(s: string, max: number): string {
  if (s.length <= max) return s;
  const chars = [...s];
  return chars.length <= max ? s : `${chars.slice(0, max).join('')}… (${chars.length} characters)`;
}

/**
 * One load's state across its datasets (loadSources): the connection, rules, options and limits,
 * the delivery cache, and what every dataset adds up to (quarantine, cutoff mappings used, view
 * files' stamps). Passed to each dataset's and file's load (file-load.ts).
 */
export interface LoadRun {
  readonly conn: DuckDBConnection;
  readonly config: LoadRules;
  /** Receives links with safe names for Parquet and CSV files, and the Parquet files kept in the cache. */
  readonly stagingDir: string;
  readonly options: LoadOptions;
  /** The SQL fast path is on (LoadOptions.fast); view mode is on (LoadOptions.views, with the fast path only). */
  readonly fast: boolean;
  readonly views: boolean;
  readonly limits: FileLimits;
  readonly cache: DeliveryCache | undefined;
  readonly quarantine: QuarantineEntry[];
  readonly cutoffs: Map<string, CutoffMapping & { micros: bigint }>;
  readonly viewStamps: { relPath: string; stagedPath: string; size: number; mtimeMs: number }[];
  /**
   * Files staged so far (numbers their links and view files) and checks kept so far (numbers their
   * Parquet files): one object shared by the datasets loading at once on the load's lanes.
   */
  readonly counters: { staged: number; kept: number };
}

/**
 * One dataset being loaded (loadDataset): its spec, folder and raw table, its manifest record, the
 * view files and extra columns its files add. The file loader (file-load.ts) reads and updates it.
 */
export class DatasetRun {
  /** Column names and DuckDB types of the table (tableColumns), and their SQL definitions. */
  readonly cols: { name: string; type: string }[];
  readonly colDefs: string;
  /** The table the files load into (`<dataset>__raw`) and its DuckDB types, `_source` last. */
  readonly rawTable: string;
  readonly rawTypes: string[];
  /** The dataset's own column names: a file's other columns are extra. */
  readonly ownColumns: ReadonlySet<string>;
  /** View mode applies: it is on and the dataset has no derived columns. */
  readonly viewable: boolean;
  readonly ctx: RowContext;
  readonly load: DatasetLoad;
  readonly viewFiles: ViewFile[] = [];
  /** The typed records of the dataset's cache hits, read into the raw table after its last file (fillFromCache). */
  readonly cachedRows: CachedRows[] = [];
  /** The run's quarantine entries before the dataset's. */
  readonly qBefore: number;
  private readonly extraSeen = new Set<string>();

  constructor(private readonly run: LoadRun, readonly spec: DatasetSpec, readonly folder: DatasetFolder) {
    this.cols = tableColumns(spec);
    this.colDefs = this.cols.map((c) => `${ident(c.name)} ${c.type}`).join(', ');
    this.rawTable = `${spec.name}__raw`;
    this.rawTypes = [...this.cols.map((c) => c.type), 'VARCHAR'];
    this.load = {
      dataset: spec.name, present: folder.present, files: [], records_read: 0, records_loaded: 0, duplicates: 0, quarantined: 0,
      watermark: { source: 'none', value: null, micros: null }, extra_columns: [], extra_columns_count: 0,
      ignored_files: folder.ignored.slice(0, IGNORED_FILES_LISTED), ignored_files_count: folder.ignored.length, control_files: [],
    };
    this.qBefore = run.quarantine.length;
    this.viewable = run.views && derivedColumns(spec).length === 0;
    this.ctx = { spec, config: run.config, cutoffs: run.cutoffs, touched: new Map() };
    this.ownColumns = new Set(spec.columns.map((c) => c.name));
  }

  progress(stage: LoadProgress['stage']): void {
    const { spec, folder, load, run } = this;
    run.options.onProgress?.({ stage, dataset: spec.name, files: folder.files.length, records_read: load.records_read, quarantined: run.quarantine.length - this.qBefore });
  }

  /** Counts a record read by the JavaScript reader (progress every PROGRESS_RECORDS, the load's checkpoint every CHECKPOINT_RECORDS). */
  recordRead(): void {
    this.load.records_read += 1;
    if (this.load.records_read % PROGRESS_RECORDS === 0) this.progress('records');
    if (this.load.records_read % CHECKPOINT_RECORDS === 0) this.run.options.checkpoint?.();
  }

  /** Extra column names are listed in the manifest: each clipped, at most EXTRA_COLUMNS_LISTED of them. */
  addExtra(c: string): void {
    if (this.extraSeen.has(c)) return;
    this.extraSeen.add(c);
    this.load.extra_columns_count += 1;
    if (this.load.extra_columns.length < EXTRA_COLUMNS_LISTED) this.load.extra_columns.push(clipName(c, NAME_KEEP_CHARS));
  }

  /** The entry `e` of the dataset's `file`. Messages and column names can quote the file (a 50 MB header field): bounded here, for the manifest and outputs. */
  entryOf(file: string, e: Omit<QuarantineEntry, 'dataset' | 'file'>): QuarantineEntry {
    return { dataset: this.spec.name, file, ...e, message: clipName(e.message, MESSAGE_KEEP_CHARS), column: e.column === null ? null : clipName(e.column, NAME_KEEP_CHARS) };
  }
}
