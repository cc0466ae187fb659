/**
 * Loads every dataset of a source location into embedded DuckDB (CONTRACT §1–§2).
 *
 * Each record is validated field by field against `datasets.ts`; a valid record is appended with
 * exact types (scaled bigint → DECIMAL, microseconds → TIMESTAMP) so that no value is ever
 * type-sniffed or cast through DOUBLE. A record that breaks a rule goes to the quarantine with
 * dataset, file, row, line, column, rule and raw text. After loading, exact duplicate deliveries
 * collapse to one record (the earliest `ingested_at` kept) and are counted. Watermarks come from
 * `_watermark.json` or are derived and labelled `derived`.
 */
import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { isLosslessNumber, parse as parseLossless } from 'lossless-json';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { LoadRules } from '../contract/money.js';
import { DEFAULT_FILE_LIMITS, type FileLimits } from '../contract/limits.js';
import { InputError } from '../core/errors.js';
import { DATASETS, SQL_TYPE, derivedColumns, type DatasetSpec } from '../contract/datasets.js';
import { ChunkAppender } from './chunks.js';
import { dropFastTables, loadCsvFast, loadParquetFast, parquetViewValues, stageLink, type FastLoad, type FastTarget } from './fast-path.js';
import { closeFileTable, FILE_TABLE, insertCachedRows, openFileTable, restoreViewCheck, writeViewCheck } from './cached-load.js';
import type { QuarantineEntry } from './quarantine-entry.js';
import { typeRecord, type RowContext } from './record-type.js';
import { sameContentStamp, sameStamp, stampOf, type FileStamp, type HashedFile } from './input-digest.js';
import { DeliveryCache, type CacheHit, type CheckedFile, type DeliveryCacheConfig, type FileKeyParts, type KeptFiles } from './delivery-cache.js';
import { dropRelation, dropRelations, finishViewDataset, registerViewFile, resetViewTables, type ViewFile } from './views.js';
import type { CutoffRule } from '../contract/local-time.js';
import { CsvShapeScan, type CsvShape, type WrittenFile } from '../sources/csv-fast.js';
import { emptyFileFault, listDatasetFolder, readRegularFile, SIDE_FILE_MAX_BYTES, type DatasetFolder, type SideFile } from '../sources/files.js';
import { datasetRoot, type DatasetFault, type DatasetRoots } from '../sources/locate.js';
import { ident } from '../core/sql-text.js';
import { hashFile, sha256Hex } from '../core/digest.js';
import { readCsv, readJsonl, readParquet, type ReadEvent } from '../sources/readers.js';
import { formatMicros, parseInt64, parseTimestamp } from '../contract/values.js';

export type { QuarantineEntry } from './quarantine-entry.js';

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

/**
 * Throws InputError (exit 3) naming the file when a file a view read has changed since it was
 * checked and hashed (size or modification time): the run's totals could mix two versions of it,
 * and the manifest's SHA-256 would not describe what was read. CONTRACT §6 (inputs in the manifest).
 */
export async function checkViewFiles(loaded: LoadResult): Promise<void> {
  for (const f of loaded.viewFiles ?? []) {
    const st = await stat(f.stagedPath).catch(() => undefined);
    if (!st || st.size !== f.size || st.mtimeMs !== f.mtimeMs) {
      throw new InputError({
        message: `${f.relPath} changed while the run was reading it (size or modification time differs from when it was checked and hashed); rerun once the delivery is complete`,
        file: f.relPath, rule: 'file_changed_during_run',
      });
    }
  }
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

/** How often the JavaScript reader reports records read. */
export const PROGRESS_RECORDS = 50_000;

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

/** `_source` of a record: `<file>:<row padded to 12 digits>` (orders the deliveries of one record). */
const sourceOf = (file: string, row: number) => `${file}:${String(row).padStart(12, '0')}`;

/** A checked file to keep in the delivery cache: its key, what it wrote, and how its records were shown. */
interface KeepRequest {
  readonly key: string;
  readonly parts: FileKeyParts;
  readonly files: KeptFiles;
  readonly kind: 'table' | 'view';
  readonly viewRecords: number;
  readonly rowCount: number;
  readonly rejectCount: number;
}

/** True when the file at `path` still has `before`'s stamp (size, modification time, inode, change time). */
async function unchanged(path: string, before: FileStamp | undefined): Promise<boolean> {
  const now = await stat(path).catch(() => undefined);
  return Boolean(before && now && sameStamp(before, now));
}

/**
 * The stamp to hold `path` to after it was staged: staging hard-links it, which moves its change
 * time and nothing else; undefined when size, modification time or inode moved too (it changed).
 */
async function restamp(path: string, before: FileStamp | undefined): Promise<FileStamp | undefined> {
  const now = await stat(path).catch(() => undefined);
  return before && now && sameContentStamp(before, now) ? stampOf(now) : undefined;
}

/** The check of a file as the delivery cache keeps it (entries without dataset and file, cutoffs with µs as text). */
function checkedFile(k: KeepRequest, fl: FileLoad, entries: readonly QuarantineEntry[], extra: readonly string[], touched: ReadonlyMap<string, CutoffMapping & { micros: bigint }>): CheckedFile {
  return {
    kind: k.kind, records: fl.rows, loaded: fl.loaded, viewRecords: k.viewRecords, rowCount: k.rowCount, rejectCount: k.rejectCount,
    entries: entries.map((e) => ({ row: e.row, line: e.line, column: e.column, rule: e.rule, message: e.message, raw: e.raw })),
    extraColumns: [...extra],
    cutoffs: [...touched].map(([key, m]) => ({ key, timezone: m.timezone, local: m.local, utc: m.utc, rule: m.rule, micros: String(m.micros) })),
  };
}

/** Column names and DuckDB types of a dataset's table, own columns then derived ones. */
export function tableColumns(spec: DatasetSpec): { name: string; type: string }[] {
  return [...spec.columns.map((c) => ({ name: c.name, type: SQL_TYPE[c.kind] })), ...derivedColumns(spec)];
}

/**
 * Reads a small side file (`_watermark.json`, `_import_report.json`) as strict UTF-8 text: a
 * regular file of at most SIDE_FILE_MAX_BYTES, never a FIFO or device (sources/files.ts). Returns
 * the text with the file's size and SHA-256 (recorded in the manifest as a control file), or the
 * refusal.
 */
async function readSideFile(side: SideFile): Promise<{ text: string; size: number; sha256: string } | { rule: string; message: string }> {
  if (side.refused) return side.refused;
  const read = await readRegularFile(side.path, side.relPath, SIDE_FILE_MAX_BYTES);
  if (!('bytes' in read)) return read;
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(read.bytes).replace(/^\uFEFF/, ''), size: read.bytes.length, sha256: sha256Hex(read.bytes) };
  } catch {
    return { rule: 'invalid_utf8', message: `${side.relPath} is not valid UTF-8` };
  }
}

async function readWatermark(folder: DatasetFolder, q: QuarantineEntry[], controlFiles: ControlFile[]): Promise<Watermark | undefined> {
  if (!folder.watermark) return undefined;
  const file = folder.watermark.relPath;
  const fail = (rule: string, message: string, raw: string): undefined => {
    q.push({ dataset: folder.dataset, file, row: null, line: null, column: null, rule, message, raw: raw.slice(0, 4096) });
    return undefined;
  };
  const read = await readSideFile(folder.watermark);
  if (!('text' in read)) return fail(read.rule === 'link_outside_source_root' ? read.rule : `watermark_unreadable`, read.message, '');
  controlFiles.push({ path: file, size: read.size, sha256: read.sha256 });
  const text = read.text;
  let doc: unknown;
  try { doc = parseLossless(text); } catch (e) { return fail('watermark_not_json', `_watermark.json is not JSON: ${(e as Error).message.slice(0, 200)}`, text); }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc) || isLosslessNumber(doc)) return fail('watermark_not_object', '_watermark.json is not a JSON object', text);
  const o = doc as Record<string, unknown>;
  if (typeof o.watermark !== 'string') return fail('watermark_missing', '_watermark.json has no string "watermark"', text);
  const ts = parseTimestamp(o.watermark);
  if (!ts.ok) return fail(`watermark_${ts.rule}`, `_watermark.json "watermark": ${ts.message}`, text);
  if (o.complete !== undefined && typeof o.complete !== 'boolean') return fail('watermark_complete', '"complete" must be true or false', text);
  let sequence: string | undefined;
  if (o.sequence !== undefined && o.sequence !== null) {
    const s = isLosslessNumber(o.sequence) ? o.sequence.value : typeof o.sequence === 'string' ? o.sequence : undefined;
    if (s === undefined || !parseInt64(s).ok) return fail('watermark_sequence', '"sequence" must be an integer', text);
    sequence = s;
  }
  return { source: 'declared', value: formatMicros(ts.value), micros: ts.value, complete: o.complete as boolean | undefined, sequence };
}

/**
 * Loads every dataset of CONTRACT §2 from the local folder `root` (or each dataset from its own
 * root folder) into tables named after the datasets. `stagingDir` receives links with safe names for Parquet files. Returns per-dataset
 * counts, the quarantine and the cutoff mappings used. Throws only on internal failure.
 */
export async function loadSources(conn: DuckDBConnection, root: DatasetRoots, config: LoadRules, stagingDir: string, options: LoadOptions = {}): Promise<LoadResult> {
  const fast = options.fast ?? true;
  const quarantine: QuarantineEntry[] = [];
  const cutoffs = new Map<string, CutoffMapping & { micros: bigint }>();
  const loads: DatasetLoad[] = [];
  const viewStamps: { relPath: string; stagedPath: string; size: number; mtimeMs: number }[] = [];
  await mkdir(stagingDir, { recursive: true });
  let staged = 0;
  let kept = 0;
  const cache = options.cache ? await DeliveryCache.open(options.cache, conn, config, stagingDir) : undefined;
  const views = fast && (options.views ?? false);
  if (views) await resetViewTables(conn);
  const wanted = options.datasets ? new Set(options.datasets) : undefined;
  const limits: FileLimits = { ...DEFAULT_FILE_LIMITS, ...config.limits };
  // Not read: no table at all (a stale one is dropped), so SQL naming it fails loudly instead
  // of reading an empty table. sql/common runs only the statements whose datasets were loaded.
  for (const spec of DATASETS) if (wanted && !wanted.has(spec.name)) await dropRelation(conn, spec.name);
  const pending = DATASETS.filter((d) => !wanted || wanted.has(d.name));
  while (pending.length) {
    const spec = await nextReady(pending, options.ready);
    const folder = await listDatasetFolder(datasetRoot(root, spec.name), spec.name);
    const cols = tableColumns(spec);
    const colDefs = cols.map((c) => `${ident(c.name)} ${c.type}`).join(', ');
    const rawTable = `${spec.name}__raw`;
    await conn.run(`CREATE OR REPLACE TABLE ${ident(rawTable)} (${colDefs}, _source VARCHAR)`);
    const rawTypes = [...cols.map((c) => c.type), 'VARCHAR'];
    const load: DatasetLoad = {
      dataset: spec.name, present: folder.present, files: [], records_read: 0, records_loaded: 0, duplicates: 0, quarantined: 0,
      watermark: { source: 'none', value: null, micros: null }, extra_columns: [], extra_columns_count: 0,
      ignored_files: folder.ignored.slice(0, IGNORED_FILES_LISTED), ignored_files_count: folder.ignored.length, control_files: [],
    };
    const qBefore = quarantine.length;
    const progress = (stage: LoadProgress['stage']) => options.onProgress?.({ stage, dataset: spec.name, files: folder.files.length, records_read: load.records_read, quarantined: quarantine.length - qBefore });
    progress('start');
    const viewFiles: ViewFile[] = [];
    const viewable = views && derivedColumns(spec).length === 0;
    const ctx: RowContext = { spec, config, cutoffs, touched: new Map() };
    const known = new Set(spec.columns.map((c) => c.name));
    // With the cache on, whether the raw table holds records yet (closeFileTable renames into an empty one).
    let rawFilled = false;
    // Extra column names are listed in the manifest: each clipped, at most EXTRA_COLUMNS_LISTED of them.
    const extraSeen = new Set<string>();
    const addDatasetExtra = (c: string) => {
      if (extraSeen.has(c)) return;
      extraSeen.add(c);
      load.extra_columns_count += 1;
      if (load.extra_columns.length < EXTRA_COLUMNS_LISTED) load.extra_columns.push(clipName(c, NAME_KEEP_CHARS));
    };
    if (folder.refused) {
      quarantine.push({ dataset: spec.name, file: spec.name, row: null, line: null, column: null, rule: folder.refused.rule, message: folder.refused.message, raw: '' });
    }
    for (const f of options.faults?.get(spec.name) ?? []) quarantine.push({ dataset: spec.name, row: null, line: null, raw: '', ...f });
    for (const file of folder.files) {
      const fl: FileLoad = { path: file.relPath, format: file.gzip ? `${file.format}.gz` : file.format, size: 0, sha256: '', rows: 0, loaded: 0, quarantined: 0, checked: 'now' };
      load.files.push(fl);
      const fileEntries: QuarantineEntry[] = [];
      // Messages and column names can quote the file (a 50 MB header field): bounded here, for the manifest and outputs.
      const q = (e: Omit<QuarantineEntry, 'dataset' | 'file'>) => {
        fileEntries.push({ dataset: spec.name, file: file.relPath, ...e, message: clipName(e.message, MESSAGE_KEEP_CHARS), column: e.column === null ? null : clipName(e.column, NAME_KEEP_CHARS) });
        fl.quarantined += 1;
      };
      // The file's own extra columns (exact, kept with its check in the delivery cache) and cutoff mappings.
      const fileExtra: string[] = [];
      const addExtra = (c: string) => {
        if (!fileExtra.includes(c)) fileExtra.push(c);
        addDatasetExtra(c);
      };
      ctx.touched.clear();
      let keep: KeepRequest | undefined;
      try {
        keep = await loadFile(file.refused ? undefined : file.realPath);
      } finally {
        // Parquet rows may arrive in any order: entries are listed by row so every run lists them alike.
        if (file.format === 'parquet') fileEntries.sort((a, b) => (a.row ?? Number.MAX_SAFE_INTEGER) - (b.row ?? Number.MAX_SAFE_INTEGER));
        // One by one: a spread of a million entries would overflow the call stack.
        for (const e of fileEntries) quarantine.push(e);
        progress('records');
      }
      if (keep) await cache!.keep(keep.key, keep.parts, checkedFile(keep, fl, fileEntries, fileExtra, ctx.touched), keep.files);

      /** Loads the file (from the cache when it holds the file's check); returns what to keep in the cache, if anything. */
      async function loadFile(realPath: string | undefined): Promise<KeepRequest | undefined> {
        if (file.refused || realPath === undefined) {
          const r = file.refused ?? { rule: 'file_unreadable', message: `${file.relPath} cannot be resolved` };
          q({ row: null, line: null, column: null, rule: r.rule, message: r.message, raw: '' });
          return;
        }
        let known = file.format === 'csv' && !file.gzip ? options.written?.get(realPath) : undefined;
        const scan = fast && file.format === 'csv' && !file.gzip ? new CsvShapeScan() : undefined;
        // A file larger than the bound is not read at all (a compressed one is bounded as it is read).
        const onDisk = await stat(realPath).then((st) => st.size, () => undefined);
        if (onDisk !== undefined && !file.gzip && onDisk > limits.max_file_bytes) {
          fl.size = onDisk;
          q({ row: null, line: null, column: null, rule: 'file_too_large', message: `${file.relPath} holds ${onDisk} bytes; at most ${limits.max_file_bytes} are read from one file (limits.max_file_bytes); it is not read`, raw: '' });
          return;
        }
        // A file that changes while it is checked must not be kept under the digest of other bytes.
        const seen = cache || options.hashed ? await stat(realPath).catch(() => undefined) : undefined;
        // Hashed before the load (input-digest.ts) and unchanged since: not read again to hash it.
        const pre = options.hashed?.get(realPath);
        const hashed = pre && seen && sameStamp(pre.stamp, seen) && (!scan || pre.shape) ? pre : undefined;
        let before: FileStamp | undefined = hashed ? hashed.stamp : cache && seen ? stampOf(seen) : undefined;
        if (hashed?.shape) known = { sha256: hashed.sha256, size: hashed.size, shape: hashed.shape };
        try {
          const h = known && known.size === onDisk ? known : hashed ?? await hashFile(realPath, scan && ((b) => scan.chunk(b)));
          if (h !== known) known = undefined;
          fl.size = h.size;
          fl.sha256 = h.sha256;
        } catch (e) {
          q({ row: null, line: null, column: null, rule: 'file_unreadable', message: `${file.relPath} cannot be read: ${(e as Error).message}`, raw: '' });
          return;
        }
        if (fl.size === 0) {
          const fault = emptyFileFault(file);
          if (fault) q({ row: null, line: null, column: null, rule: fault.rule, message: fault.message, raw: '' });
          return;
        }
        let events: AsyncGenerator<ReadEvent> | undefined;
        let stagedPath: string | undefined;
        if (file.format === 'parquet' || scan) {
          // DuckDB reads file names as globs and through SQL text: it only ever sees this generated name.
          stagedPath = join(stagingDir, `${file.format === 'parquet' ? 'p' : 'c'}${String(++staged).padStart(6, '0')}.${file.format}`);
          try {
            // The stamp must hold up to the link, which moves the change time (restamped after it).
            if (!(await unchanged(realPath, before))) before = undefined;
            await stageLink(realPath, stagedPath);
            // DuckDB opens the link by path: it must still be the regular file that was hashed.
            const st = await stat(stagedPath);
            if (!st.isFile() || st.size !== fl.size) throw new Error('the file changed or is no longer a regular file since it was hashed');
          } catch (e) {
            if (file.format === 'parquet') {
              q({ row: null, line: null, column: null, rule: 'file_unreadable', message: `${file.relPath} cannot be staged for reading: ${(e as Error).message}`, raw: '' });
              return;
            }
            stagedPath = undefined;
          }
          if (stagedPath) before = await restamp(realPath, before);
        }
        const parts: FileKeyParts | undefined = cache && { sha256: fl.sha256, dataset: spec.name, format: file.format, gzip: file.gzip, viewable, fast };
        const key = parts && cache!.key(parts);
        if (key) {
          const found = await cache!.lookup(key);
          if (found && 'hit' in found && await fromCache(found.hit, stagedPath)) return;
          if (found && 'refused' in found) fl.cache_refused = found.refused;
          await openFileTable(conn, colDefs);
        }
        // With the cache on, the file's records go to FILE_TABLE first (kept, then moved to the raw table).
        const table = cache ? FILE_TABLE : rawTable;
        let viewFile: ViewFile | undefined;
        let viewRecords = 0;
        if (fast && stagedPath) {
          const target: FastTarget = { conn, spec, config, rawTable: table, relPath: file.relPath, stagedPath, maxRecords: limits.max_file_records, rendered: known?.rendered };
          const shape: CsvShape | undefined = known ? known.shape : scan?.result();
          const r: FastLoad | { reason: string } = file.format === 'parquet' ? await loadParquetFast(target, viewable ? 'view' : 'insert') : await loadCsvFast(target, shape!);
          if ('events' in r && r.values) {
            const vf: ViewFile = { fid: staged, relPath: file.relPath, stagedPath, values: r.values };
            const st = await stat(stagedPath);
            viewStamps.push({ relPath: file.relPath, stagedPath, size: st.size, mtimeMs: st.mtimeMs });
            await registerViewFile(conn, vf);
            viewFiles.push(vf);
            viewFile = vf;
            viewRecords = r.inserted;
          }
          if ('events' in r) {
            events = r.events;
            load.records_read += r.inserted;
            fl.rows += r.inserted;
            fl.loaded += r.inserted;
            options.onFile?.({ path: file.relPath, loadedBy: 'fast', sqlRecords: r.inserted });
          } else {
            options.onFile?.({ path: file.relPath, loadedBy: 'js', sqlRecords: 0, reason: r.reason });
          }
        } else {
          options.onFile?.({ path: file.relPath, loadedBy: 'js', sqlRecords: 0, reason: fast ? `${file.format}${file.gzip ? '.gz' : ''} files are read by the JS reader` : 'fast path off' });
        }
        if (!events) {
          if (file.format === 'parquet') events = readParquet(conn, stagedPath!, spec.columns);
          else if (file.format === 'jsonl') events = readJsonl(file, spec.columns, limits.max_file_bytes);
          else events = readCsv(file, limits.max_file_bytes);
        }
        const app = await ChunkAppender.open(conn, table, rawTypes);
        try {
          await readEvents(events, app);
        } finally {
          app.close();
        }
        if (!key || !parts) return;
        const keepable = await unchanged(realPath, before) && fileEntries.every((e) => e.rule !== 'file_unreadable' && ![realPath, file.absPath, stagingDir].some((p) => e.message.includes(p)));
        const keptId = String(++kept).padStart(6, '0');
        const out = (name: string) => join(stagingDir, `w${keptId}-${name}.parquet`);
        const rowCount = await closeFileTable(conn, rawTable, !rawFilled, keepable ? out('rows') : undefined);
        rawFilled ||= rowCount > 0;
        if (!keepable) return;
        const files: { rows?: string; hashes?: string; rejects?: string } = rowCount > 0 ? { rows: out('rows') } : {};
        // A view file shows the records the SQL accepted; the others (handed back) it leaves out.
        const rejectCount = viewFile ? fl.rows - viewRecords : 0;
        if (viewFile) {
          if (await writeViewCheck(conn, out('hashes'), out('rejects'), rejectCount)) files.rejects = out('rejects');
          files.hashes = out('hashes');
        }
        return { key, parts, files, kind: viewFile ? 'view' : 'table', viewRecords, rowCount, rejectCount };
      }

      /** Loads the file from a verified cache hit; false (nothing loaded) when the hit does not fit the file as found now. */
      async function fromCache(hit: CacheHit, stagedPath: string | undefined): Promise<boolean> {
        let vf: ViewFile | undefined;
        if (hit.kind === 'view') {
          if (!viewable || !stagedPath || !hit.hashes) return false;
          const v = await parquetViewValues({ conn, spec, config, rawTable, relPath: file.relPath, stagedPath });
          if ('reason' in v || v.total !== hit.records) return false;
          vf = { fid: staged, relPath: file.relPath, stagedPath, values: v.values };
          await restoreViewCheck(conn, hit.hashes, hit.rejects);
          const st = await stat(stagedPath);
          viewStamps.push({ relPath: file.relPath, stagedPath, size: st.size, mtimeMs: st.mtimeMs });
          await registerViewFile(conn, vf);
          viewFiles.push(vf);
        }
        if (hit.rows) await insertCachedRows(conn, rawTable, cols.map((c) => c.name), hit.rows, file.relPath);
        rawFilled ||= hit.rowCount > 0;
        load.records_read += hit.records;
        fl.rows = hit.records;
        fl.loaded = hit.loaded;
        fl.checked = 'cache';
        for (const e of hit.entries) q(e);
        for (const c of hit.extraColumns) addExtra(c);
        for (const m of hit.cutoffs) if (!cutoffs.has(m.key)) cutoffs.set(m.key, { timezone: m.timezone, local: m.local, utc: m.utc, rule: m.rule as CutoffRule, micros: BigInt(m.micros) });
        options.onFile?.({ path: file.relPath, loadedBy: 'cache', sqlRecords: 0 });
        return true;
      }

      async function readEvents(events: AsyncGenerator<ReadEvent>, app: ChunkAppender): Promise<void> {
        let missing: string[] = [];
        let duplicated: string[] = [];
        let bad = 0;
        let fileError = false;
        // Past a bound the file is not read further: one entry says where reading stopped (contract/limits.ts).
        const stopAt = (ev: { row: number; line: number }, rule: string, what: string) =>
          q({ row: ev.row, line: ev.line, column: null, rule, message: `${file.relPath}: ${what}; records from row ${ev.row} on are not read`, raw: '' });
        for await (const ev of events) {
          if (ev.type === 'header') {
            duplicated = [...new Set(ev.columns.filter((c, i) => known.has(c) && ev.columns.indexOf(c) !== i))];
            if (file.format !== 'jsonl') missing = spec.columns.filter((c) => !ev.columns.includes(c.name)).map((c) => c.name);
            for (const c of ev.columns) if (!known.has(c)) addExtra(c);
            continue;
          }
          if (ev.type === 'extra_columns') {
            for (const c of ev.columns) addExtra(c);
            continue;
          }
          if (ev.type === 'file_error') { fileError = true; q({ row: ev.row ?? null, line: ev.line ?? null, column: null, rule: ev.rule, message: ev.message, raw: '' }); continue; }
          if (fl.rows >= limits.max_file_records) return stopAt(ev, 'file_too_many_records', `the file holds more than ${limits.max_file_records} records, the most read from one file (limits.max_file_records)`);
          if (bad >= limits.max_file_quarantined) return stopAt(ev, 'file_too_many_quarantined', `${bad} records of the file are quarantined, the most kept for one file (limits.max_file_quarantined)`);
          load.records_read += 1;
          fl.rows += 1;
          if (load.records_read % PROGRESS_RECORDS === 0) progress('records');
          const reject = (column: string | null, rule: string, message: string) => { bad += 1; q({ row: ev.row, line: ev.line, column, rule, message, raw: ev.raw }); };
          if (ev.type === 'record_error') { reject(ev.column ?? null, ev.rule, ev.message); continue; }
          if (duplicated.length) { reject(duplicated[0], 'header_duplicate_column', `the header names column(s) ${duplicated.join(', ')} more than once`); continue; }
          if (missing.length) { reject(missing[0], 'file_missing_column', `the file lacks column(s) ${missing.join(', ')}`); continue; }
          const typed = typeRecord(ctx, ev.fields);
          if ('rule' in typed) { reject(typed.column, typed.rule, typed.message); continue; }
          typed.cells.push(sourceOf(file.relPath, ev.row));
          app.push(typed.cells);
          fl.loaded += 1;
        }
        // A header that is not the dataset's is a fault of the file even with no record under it
        // (a truncated header, `garbage`, 50 MB of `A`): never an empty extract.
        if (fl.rows === 0 && !fileError && (missing.length || duplicated.length)) {
          const why = duplicated.length ? `names column(s) ${duplicated.join(', ')} more than once` : `lacks column(s) ${missing.join(', ')}`;
          q({ row: null, line: null, column: duplicated[0] ?? missing[0], rule: 'header_not_dataset', message: `the header is not one of ${spec.name}: it ${why}; the file holds no records`, raw: '' });
        }
      }
    }
    load.quarantined = quarantine.length - qBefore;
    if (viewFiles.length) {
      const counts = await finishViewDataset(conn, spec, viewFiles, tableColumns(spec).map((c) => c.name));
      load.records_loaded = counts.rows;
      load.duplicates = counts.deliveries - counts.rows;
    } else {
      await dedupe(conn, spec, load);
    }
    const declared = await readWatermark(folder, quarantine, load.control_files);
    load.quarantined = quarantine.length - qBefore;
    if (declared) load.watermark = declared;
    else if (spec.derivedWatermarkColumn && !folder.watermark) load.watermark = await derivedWatermark(conn, spec);
    if (folder.importReport) {
      const read = await readSideFile(folder.importReport);
      let problem: { rule: string; message: string } | undefined = 'text' in read ? undefined : read;
      if ('text' in read) {
        load.control_files.push({ path: folder.importReport.relPath, size: read.size, sha256: read.sha256 });
        try { load.import_report = JSON.parse(read.text); } catch (e) { problem = { rule: 'import_report_not_json', message: `_import_report.json is not JSON: ${(e as Error).message.slice(0, 200)}` }; }
      }
      if (problem) {
        quarantine.push({ dataset: spec.name, file: folder.importReport.relPath, row: null, line: null, column: null, rule: problem.rule === 'link_outside_source_root' ? problem.rule : `import_report_${problem.rule.replace(/^import_report_/, '')}`, message: problem.message, raw: '' });
        load.quarantined += 1;
      }
    }
    progress('done');
    loads.push(load);
  }
  await dropFastTables(conn);
  await cache?.evict();
  inContractOrder(loads, quarantine);
  const cutoffMappings = [...cutoffs.values()].map(({ micros: _m, ...rest }) => rest).sort((a, b) => (a.timezone + a.local < b.timezone + b.local ? -1 : 1));
  return { datasets: loads, quarantine, cutoffMappings, viewFiles: viewStamps };
}

/**
 * Takes from `pending` (in contract order) the first dataset whose files are in place (`ready`):
 * datasets load in the order their database extracts finish, so the loader works while the
 * largest extract is still being read. Without `ready`, the first. A rejection stops the load.
 */
async function nextReady(pending: DatasetSpec[], ready?: (dataset: string) => Promise<void>): Promise<DatasetSpec> {
  const i = ready ? await Promise.race(pending.map((d, k) => ready(d.name).then(() => k))) : 0;
  return pending.splice(i, 1)[0];
}

/**
 * Puts the loads and the quarantine back in contract order (stable: a dataset's entries keep
 * their order), so the manifest and outputs are the same whatever order the datasets loaded in.
 */
function inContractOrder(loads: DatasetLoad[], quarantine: QuarantineEntry[]): void {
  const rank = new Map(DATASETS.map((d, i) => [d.name, i]));
  const byRank = (a: string, b: string) => (rank.get(a) ?? DATASETS.length) - (rank.get(b) ?? DATASETS.length);
  if (loads.every((l, i) => i === 0 || byRank(loads[i - 1].dataset, l.dataset) < 0)) return;
  loads.sort((a, b) => byRank(a.dataset, b.dataset));
  quarantine.sort((a, b) => byRank(a.dataset, b.dataset));
}

/**
 * Collapses exact duplicate deliveries (CONTRACT §2): records equal in every typed column but the
 * delivery column (`ingested_at`) count once, keeping the earliest delivery time and the smallest
 * `_source` (first file, then first row) that carried it. The table named after the dataset holds
 * the result, with `_deliveries` (how many records collapsed into the row).
 *
 * Grouping every column of a large table is costly, and duplicates are rare: records are hashed
 * on the compared columns first, and only records whose hash occurs more than once are grouped
 * (by their typed values, so a hash collision never merges two different records). The others
 * stay where they are: the raw table is renamed, not copied.
 */
async function dedupe(conn: DuckDBConnection, spec: DatasetSpec, load: DatasetLoad): Promise<void> {
  const cols = tableColumns(spec).map((c) => c.name);
  const raw = ident(`${spec.name}__raw`);
  const keyHash = `hash(${cols.filter((c) => c !== spec.deliveryColumn).map(ident).join(', ')})`;
  const select = cols.map((c) => (c === spec.deliveryColumn ? `min(${ident(c)}) AS ${ident(c)}` : ident(c))).join(', ');
  const dupHashes = Number((await conn.runAndReadAll(`CREATE OR REPLACE TEMP TABLE __ld_dup AS SELECT ${keyHash} AS h FROM ${raw} GROUP BY 1 HAVING count(*) > 1;
    SELECT count(*) FROM __ld_dup`)).getRows()[0][0]);
  if (dupHashes > 0) {
    // The records of those hashes, found once by row id; grouped by their typed values.
    await conn.run(`CREATE OR REPLACE TEMP TABLE __ld_dm AS SELECT rowid AS r FROM ${raw} WHERE ${keyHash} IN (SELECT h FROM __ld_dup)`);
    await conn.run(`CREATE OR REPLACE TEMP TABLE __ld_grp AS SELECT ${select}, min(_source) AS _source, count(*) AS _deliveries FROM ${raw} WHERE rowid IN (SELECT r FROM __ld_dm) GROUP BY ALL`);
    await conn.run(`DELETE FROM ${raw} WHERE rowid IN (SELECT r FROM __ld_dm)`);
    await conn.run('DROP TABLE __ld_dm');
  }
  await dropRelations(conn, [spec.name, `${spec.name}__tab`]);
  // The rest in one call (each still its own statement); the counts are its last statement's rows.
  const r = await conn.runAndReadAll([
    `ALTER TABLE ${raw} RENAME TO ${ident(spec.name)}`,
    `ALTER TABLE ${ident(spec.name)} ADD COLUMN _deliveries BIGINT DEFAULT 1`,
    ...(dupHashes > 0 ? [`INSERT INTO ${ident(spec.name)} SELECT * FROM __ld_grp`, 'DROP TABLE __ld_grp'] : []),
    'DROP TABLE __ld_dup',
    `SELECT count(*)::VARCHAR AS n, coalesce(sum(_deliveries), 0)::VARCHAR AS d FROM ${ident(spec.name)}`,
  ].join(';\n'));
  const [row] = r.getRowObjectsJson();
  load.records_loaded = Number(row.n);
  load.duplicates = Number(row.d) - Number(row.n);
}

async function derivedWatermark(conn: DuckDBConnection, spec: DatasetSpec): Promise<Watermark> {
  const col = ident(spec.derivedWatermarkColumn!);
  const r = await conn.runAndReadAll(`SELECT epoch_us(max(${col}))::VARCHAR AS us FROM ${ident(spec.name)}`);
  const us = r.getRowObjectsJson()[0].us;
  if (us === null || us === undefined) return { source: 'derived', value: null, micros: null };
  const micros = BigInt(String(us));
  return { source: 'derived', value: formatMicros(micros), micros };
}
