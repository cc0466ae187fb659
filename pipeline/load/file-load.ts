/**
 * Loads one data file of a dataset into the dataset's raw table (CONTRACT §2), for load.ts: the
 * file's refusals and bounds, its size and SHA-256 (taken from the pre-load hash or the extract's
 * own record while their stamps hold), its staged link, the delivery cache (a verified hit is read
 * back instead of the file), then the SQL fast path or the JavaScript reader and validator, and
 * its check kept in the delivery cache. The file's entries join the run's quarantine in any case.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { CutoffRule } from '../contract/local-time.js';
import { hashFile } from '../core/digest.js';
import { CsvShapeScan, type CsvShape, type WrittenFile } from '../sources/csv-fast.js';
import { emptyFileFault, type SourceFile } from '../sources/files.js';
import { readCsv, readJsonl, readParquet, type ReadEvent } from '../sources/readers.js';
import { rawEnd, restoreViewCheck, writeKeptRows, writeViewCheck } from './cached-load.js';
import { ChunkAppender } from './chunks.js';
import type { CacheHit, CheckedFile, FileKeyParts, KeptFiles } from './delivery-cache.js';
import { loadCsvFast, loadParquetFast, parquetViewValues, stageLink, type FastLoad, type FastTarget } from './fast-path.js';
import { sameContentStamp, sameStamp, stampOf, type FileStamp } from './input-digest.js';
import type { DatasetRun, LoadRun } from './dataset-run.js';
import type { CutoffMapping, FileLoad } from './load-types.js';
import type { QuarantineEntry } from './quarantine-entry.js';
import { typeRecord } from './record-type.js';
import { registerViewFile, type ViewFile } from './views.js';

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

/** A file hashed: the stamp to hold it to, the extract's own record when it still describes the file, and the CSV shape scan that ran with the hash. */
interface Hashed {
  readonly before: FileStamp | undefined;
  readonly known: WrittenFile | undefined;
  readonly scan: CsvShapeScan | undefined;
}

/** A file staged: its link (none for a file the JS reader reads from its own path) and the stamp to hold it to. */
interface Staged {
  readonly stagedPath: string | undefined;
  /** The link's number (LoadRun.counters.staged when it was made): a view file's id. */
  readonly fid: number;
  readonly before: FileStamp | undefined;
  /** The change time moved before the link (size, modification time and inode held): kept only if the bytes hash as before. */
  readonly relinked: boolean;
}

/** What reading the file showed as a view file (view mode), if anything, and how many records the view shows. */
interface FileRead {
  readonly viewFile: ViewFile | undefined;
  readonly viewRecords: number;
}

/**
 * How `path` stands against `before`: `same`; `relinked` when only its change time moved (a link
 * made or removed, as another run staging the same file does); `changed` otherwise.
 */
async function stampHeld(path: string, before: FileStamp | undefined): Promise<'same' | 'relinked' | 'changed'> {
  const now = await stat(path).catch(() => undefined);
  if (!before || !now || !sameContentStamp(before, now)) return 'changed';
  return sameStamp(before, now) ? 'same' : 'relinked';
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

/**
 * Loads `file` of the dataset `ds` into its raw table (or as a view file), adds its FileLoad to
 * the dataset's, its entries to the run's quarantine and its check to the delivery cache.
 * Throws only on internal failure (the file's entries are in the quarantine even then).
 */
export async function loadFile(run: LoadRun, ds: DatasetRun, file: SourceFile): Promise<void> {
  const loader = new FileLoader(run, ds, file);
  ds.load.files.push(loader.fl);
  ds.ctx.touched.clear();
  let keep: KeepRequest | undefined;
  try {
    keep = await loader.load(file.refused ? undefined : file.realPath);
  } finally {
    // Parquet rows may arrive in any order: entries are listed by row so every run lists them alike.
    if (file.format === 'parquet') loader.entries.sort((a, b) => (a.row ?? Number.MAX_SAFE_INTEGER) - (b.row ?? Number.MAX_SAFE_INTEGER));
    // One by one: a spread of a million entries would overflow the call stack.
    for (const e of loader.entries) run.quarantine.push(e);
    ds.progress('records');
  }
  if (keep) await run.cache!.keep(keep.key, keep.parts, checkedFile(keep, loader.fl, loader.entries, loader.extra, ds.ctx.touched), keep.files);
}

/** One file's load: the steps of `load`, in the order they run, and what they record in `fl`, `entries` and `extra`. */
class FileLoader {
  readonly fl: FileLoad;
  /** The file's quarantine entries (bounded), added to the run's quarantine when the file is done. */
  readonly entries: QuarantineEntry[] = [];
  /** The file's own extra columns (exact, kept with its check in the delivery cache). */
  readonly extra: string[] = [];

  constructor(private readonly run: LoadRun, private readonly ds: DatasetRun, private readonly file: SourceFile) {
    this.fl = { path: file.relPath, format: file.gzip ? `${file.format}.gz` : file.format, size: 0, sha256: '', rows: 0, loaded: 0, quarantined: 0, checked: 'now' };
  }

  /** Loads the file (from the cache when it holds the file's check); returns what to keep in the cache, if anything. */
  async load(realPath: string | undefined): Promise<KeepRequest | undefined> {
    const { run, ds, file, fl } = this;
    if (file.refused || realPath === undefined) {
      const r = file.refused ?? { rule: 'file_unreadable', message: `${file.relPath} cannot be resolved` };
      this.refuse(r.rule, r.message);
      return;
    }
    const hashed = await this.hash(realPath);
    if (!hashed) return;
    if (fl.size === 0) {
      const fault = emptyFileFault(file);
      if (fault) this.refuse(fault.rule, fault.message);
      return;
    }
    const staged = await this.stage(realPath, hashed);
    if (!staged) return;
    const parts: FileKeyParts | undefined = run.cache && { sha256: fl.sha256, dataset: ds.spec.name, format: file.format, gzip: file.gzip, viewable: ds.viewable, fast: run.fast };
    const key = parts && run.cache!.key(parts);
    if (key && await this.lookup(key, staged)) return;
    // With the cache on, the file's records are kept from the raw table: those from its end now on.
    const from = key ? await rawEnd(run.conn, ds.rawTable) : 0;
    const read = await this.read(ds.rawTable, staged, hashed);
    if (!key || !parts) return;
    return this.keepRequest(realPath, staged, key, parts, read, from);
  }

  /** Quarantines a record of the file, or the file itself (row and line null). */
  private q(e: Omit<QuarantineEntry, 'dataset' | 'file'>): void {
    this.entries.push(this.ds.entryOf(this.file.relPath, e));
    this.fl.quarantined += 1;
  }

  /** Quarantines the whole file. */
  private refuse(rule: string, message: string): void {
    this.q({ row: null, line: null, column: null, rule, message, raw: '' });
  }

  private addExtra(c: string): void {
    if (!this.extra.includes(c)) this.extra.push(c);
    this.ds.addExtra(c);
  }

  /**
   * Sets the file's size and SHA-256 in `fl`. The file is not read again to hash it while the
   * pre-load hash or the extract's own record still describes it. Undefined (quarantined) when
   * the file is too large or cannot be read.
   */
  private async hash(realPath: string): Promise<Hashed | undefined> {
    const { run, file, fl } = this;
    let known = file.format === 'csv' && !file.gzip ? run.options.written?.get(realPath) : undefined;
    const scan = run.fast && file.format === 'csv' && !file.gzip ? new CsvShapeScan() : undefined;
    // A file larger than the bound is not read at all (a compressed one is bounded as it is read).
    const onDisk = await stat(realPath).then((st) => st.size, () => undefined);
    if (onDisk !== undefined && !file.gzip && onDisk > run.limits.max_file_bytes) {
      fl.size = onDisk;
      this.refuse('file_too_large', `${file.relPath} holds ${onDisk} bytes; at most ${run.limits.max_file_bytes} are read from one file (limits.max_file_bytes); it is not read`);
      return;
    }
    // A file that changes while it is checked must not be kept under the digest of other bytes.
    const seen = run.cache || run.options.hashed ? await stat(realPath).catch(() => undefined) : undefined;
    // Hashed before the load (input-digest.ts) and unchanged since: not read again to hash it.
    const pre = run.options.hashed?.get(realPath);
    const hashed = pre && seen && sameStamp(pre.stamp, seen) && (!scan || pre.shape) ? pre : undefined;
    const before: FileStamp | undefined = hashed ? hashed.stamp : run.cache && seen ? stampOf(seen) : undefined;
    if (hashed?.shape) known = { sha256: hashed.sha256, size: hashed.size, shape: hashed.shape };
    try {
      const h = known && known.size === onDisk ? known : hashed ?? await hashFile(realPath, scan && ((b) => scan.chunk(b)));
      if (h !== known) known = undefined;
      fl.size = h.size;
      fl.sha256 = h.sha256;
    } catch (e) {
      this.refuse('file_unreadable', `${file.relPath} cannot be read: ${(e as Error).message}`);
      return;
    }
    return { before, known, scan };
  }

  /**
   * Links a Parquet file, or a plain CSV file for the fast path, under a generated name in the
   * staging folder, and holds the file to its stamp across the link. A CSV file that cannot be
   * staged is read by the JS reader; a Parquet file that cannot be is quarantined (undefined).
   */
  private async stage(realPath: string, { before, scan }: Hashed): Promise<Staged | undefined> {
    const { run, file, fl } = this;
    if (file.format !== 'parquet' && !scan) return { stagedPath: undefined, fid: 0, before, relinked: false };
    // DuckDB reads file names as globs and through SQL text: it only ever sees this generated name.
    const fid = ++run.counters.staged;
    let stagedPath: string | undefined = join(run.stagingDir, `${file.format === 'parquet' ? 'p' : 'c'}${String(fid).padStart(6, '0')}.${file.format}`);
    let relinked = false;
    try {
      // The stamp must hold up to the link, which moves the change time (restamped after it).
      const held = await stampHeld(realPath, before);
      if (held === 'changed') before = undefined;
      relinked = held === 'relinked';
      await stageLink(realPath, stagedPath);
      // DuckDB opens the link by path: it must still be the regular file that was hashed.
      const st = await stat(stagedPath);
      if (!st.isFile() || st.size !== fl.size) throw new Error('the file changed or is no longer a regular file since it was hashed');
    } catch (e) {
      if (file.format === 'parquet') {
        this.refuse('file_unreadable', `${file.relPath} cannot be staged for reading: ${(e as Error).message}`);
        return;
      }
      stagedPath = undefined;
    }
    if (stagedPath) before = await restamp(realPath, before);
    return { stagedPath, fid, before, relinked };
  }

  /** Looks the file's check up in the delivery cache: true when a verified hit was loaded instead of the file (a refused entry is noted in `fl`). */
  private async lookup(key: string, staged: Staged): Promise<boolean> {
    const found = await this.run.cache!.lookup(key);
    if (found && 'hit' in found && await this.fromCache(found.hit, staged)) return true;
    if (found && 'refused' in found) this.fl.cache_refused = found.refused;
    return false;
  }

  /** Loads the file from a verified cache hit; false (nothing loaded) when the hit does not fit the file as found now. */
  private async fromCache(hit: CacheHit, { stagedPath, fid }: Staged): Promise<boolean> {
    const { run, ds, file, fl } = this;
    const { conn, config } = run;
    if (hit.kind === 'view') {
      if (!ds.viewable || !stagedPath || !hit.hashes) return false;
      const v = await parquetViewValues({ conn, spec: ds.spec, config, rawTable: ds.rawTable, relPath: file.relPath, stagedPath });
      if ('reason' in v || v.total !== hit.records) return false;
      const vf: ViewFile = { fid, relPath: file.relPath, stagedPath, values: v.values };
      await restoreViewCheck(conn, hit.hashes, hit.rejects);
      await this.registerView(vf);
    }
    // Read back with the dataset's other cached files once its files are done (load.ts, fillFromCache).
    if (hit.rows) ds.cachedRows.push({ rows: hit.rows, relPath: file.relPath });
    ds.load.records_read += hit.records;
    fl.rows = hit.records;
    fl.loaded = hit.loaded;
    fl.checked = 'cache';
    for (const e of hit.entries) this.q(e);
    for (const c of hit.extraColumns) this.addExtra(c);
    for (const m of hit.cutoffs) if (!run.cutoffs.has(m.key)) run.cutoffs.set(m.key, { timezone: m.timezone, local: m.local, utc: m.utc, rule: m.rule as CutoffRule, micros: BigInt(m.micros) });
    run.options.onFile?.({ path: file.relPath, loadedBy: 'cache', sqlRecords: 0 });
    return true;
  }

  /** Adds a view file to the dataset's view, stamped for checkViewFiles. */
  private async registerView(vf: ViewFile): Promise<void> {
    const st = await stat(vf.stagedPath);
    this.run.viewStamps.push({ relPath: vf.relPath, stagedPath: vf.stagedPath, size: st.size, mtimeMs: st.mtimeMs });
    await registerViewFile(this.run.conn, vf);
    this.ds.viewFiles.push(vf);
  }

  /** Reads the file's records into `table`: the SQL fast path where it applies, then the JS validator on what it hands back (or on the whole file). */
  private async read(table: string, { stagedPath, fid }: Staged, hashed: Hashed): Promise<FileRead> {
    const { run, ds, file } = this;
    let fast: { events: AsyncGenerator<ReadEvent> } & FileRead | undefined;
    if (run.fast && stagedPath) {
      fast = await this.readFast(table, stagedPath, fid, hashed);
    } else {
      run.options.onFile?.({ path: file.relPath, loadedBy: 'js', sqlRecords: 0, reason: run.fast ? `${file.format}${file.gzip ? '.gz' : ''} files are read by the JS reader` : 'fast path off' });
    }
    const events = fast?.events ?? this.reader(stagedPath);
    const app = await ChunkAppender.open(run.conn, table, ds.rawTypes);
    try {
      await this.readEvents(events, app);
    } finally {
      app.close();
    }
    return { viewFile: fast?.viewFile, viewRecords: fast?.viewRecords ?? 0 };
  }

  /**
   * The SQL fast path (fast-path.ts) on the staged file: counts the records SQL inserted (or
   * shows, registering a view file) and returns the records it handed back for the JS validator;
   * undefined when the whole file is left to the JS reader (the reason goes to onFile).
   */
  private async readFast(table: string, stagedPath: string, fid: number, { known, scan }: Hashed): Promise<{ events: AsyncGenerator<ReadEvent> } & FileRead | undefined> {
    const { run, ds, file, fl } = this;
    const target: FastTarget = { conn: run.conn, spec: ds.spec, config: run.config, rawTable: table, relPath: file.relPath, stagedPath, maxRecords: run.limits.max_file_records, rendered: known?.rendered };
    const shape: CsvShape | undefined = known ? known.shape : scan?.result();
    const r: FastLoad | { reason: string } = file.format === 'parquet' ? await loadParquetFast(target, ds.viewable ? 'view' : 'insert') : await loadCsvFast(target, shape!);
    if (!('events' in r)) {
      run.options.onFile?.({ path: file.relPath, loadedBy: 'js', sqlRecords: 0, reason: r.reason });
      return;
    }
    let viewFile: ViewFile | undefined;
    if (r.values) {
      viewFile = { fid, relPath: file.relPath, stagedPath, values: r.values };
      await this.registerView(viewFile);
    }
    ds.load.records_read += r.inserted;
    fl.rows += r.inserted;
    fl.loaded += r.inserted;
    run.options.onFile?.({ path: file.relPath, loadedBy: 'fast', sqlRecords: r.inserted });
    return { events: r.events, viewFile, viewRecords: viewFile ? r.inserted : 0 };
  }

  /** The JavaScript reader of the file's format (a Parquet file is read through its staged link). */
  private reader(stagedPath: string | undefined): AsyncGenerator<ReadEvent> {
    const { run, ds, file } = this;
    if (file.format === 'parquet') return readParquet(run.conn, stagedPath!, ds.spec.columns);
    if (file.format === 'jsonl') return readJsonl(file, ds.spec.columns, run.limits.max_file_bytes);
    return readCsv(file, run.limits.max_file_bytes);
  }

  /** Validates the reader's records one by one: each is appended typed, or quarantined with the rule it breaks. */
  private async readEvents(events: AsyncGenerator<ReadEvent>, app: ChunkAppender): Promise<void> {
    const { run, ds, file, fl } = this;
    const { spec, ownColumns } = ds;
    const limits = run.limits;
    let missing: string[] = [];
    let duplicated: string[] = [];
    let bad = 0;
    let fileError = false;
    // Past a bound the file is not read further: one entry says where reading stopped (contract/limits.ts).
    const stopAt = (ev: { row: number; line: number }, rule: string, what: string) =>
      this.q({ row: ev.row, line: ev.line, column: null, rule, message: `${file.relPath}: ${what}; records from row ${ev.row} on are not read`, raw: '' });
    for await (const ev of events) {
      if (ev.type === 'header') {
        duplicated = [...new Set(ev.columns.filter((c, i) => ownColumns.has(c) && ev.columns.indexOf(c) !== i))];
        if (file.format !== 'jsonl') missing = spec.columns.filter((c) => !ev.columns.includes(c.name)).map((c) => c.name);
        for (const c of ev.columns) if (!ownColumns.has(c)) this.addExtra(c);
        continue;
      }
      if (ev.type === 'extra_columns') {
        for (const c of ev.columns) this.addExtra(c);
        continue;
      }
      if (ev.type === 'file_error') { fileError = true; this.q({ row: ev.row ?? null, line: ev.line ?? null, column: null, rule: ev.rule, message: ev.message, raw: '' }); continue; }
      if (fl.rows >= limits.max_file_records) return stopAt(ev, 'file_too_many_records', `the file holds more than ${limits.max_file_records} records, the most read from one file (limits.max_file_records)`);
      if (bad >= limits.max_file_quarantined) return stopAt(ev, 'file_too_many_quarantined', `${bad} records of the file are quarantined, the most kept for one file (limits.max_file_quarantined)`);
      fl.rows += 1;
      ds.recordRead();
      const reject = (column: string | null, rule: string, message: string) => { bad += 1; this.q({ row: ev.row, line: ev.line, column, rule, message, raw: ev.raw }); };
      if (ev.type === 'record_error') { reject(ev.column ?? null, ev.rule, ev.message); continue; }
      if (duplicated.length) { reject(duplicated[0], 'header_duplicate_column', `the header names column(s) ${duplicated.join(', ')} more than once`); continue; }
      if (missing.length) { reject(missing[0], 'file_missing_column', `the file lacks column(s) ${missing.join(', ')}`); continue; }
      const typed = typeRecord(ds.ctx, ev.fields);
      if ('rule' in typed) { reject(typed.column, typed.rule, typed.message); continue; }
      typed.cells.push(sourceOf(file.relPath, ev.row));
      app.push(typed.cells);
      fl.loaded += 1;
    }
    // A header that is not the dataset's is a fault of the file even with no record under it
    // (a truncated header, `garbage`, 50 MB of `A`): never an empty extract.
    if (fl.rows === 0 && !fileError && (missing.length || duplicated.length)) {
      const why = duplicated.length ? `names column(s) ${duplicated.join(', ')} more than once` : `lacks column(s) ${missing.join(', ')}`;
      this.q({ row: null, line: null, column: duplicated[0] ?? missing[0], rule: 'header_not_dataset', message: `the header is not one of ${spec.name}: it ${why}; the file holds no records`, raw: '' });
    }
  }

  /** True when `realPath` now holds the size and SHA-256 the file was checked under. */
  private async hashesAsBefore(realPath: string): Promise<boolean> {
    const h = await hashFile(realPath).catch(() => undefined);
    return h !== undefined && h.size === this.fl.size && h.sha256 === this.fl.sha256;
  }

  /**
   * When the file is unchanged since it was hashed (or only its change time moved, and its bytes
   * hash as before: another run linked or unlinked it) and no entry names a local path, writes what
   * to keep in the delivery cache: its records in the raw table from rowid `from` on (writeKeptRows),
   * and a view file's hashes and rejects; undefined when it is not kept.
   */
  private async keepRequest(realPath: string, { before, relinked }: Staged, key: string, parts: FileKeyParts, { viewFile, viewRecords }: FileRead, from: number): Promise<KeepRequest | undefined> {
    const { run, ds, file, fl } = this;
    const held = await stampHeld(realPath, before);
    const same = held === 'same' && !relinked || held !== 'changed' && await this.hashesAsBefore(realPath);
    const keepable = same && this.entries.every((e) => e.rule !== 'file_unreadable' && ![realPath, file.absPath, run.stagingDir].some((p) => e.message.includes(p)));
    if (!keepable) return;
    const keptId = String(++run.counters.kept).padStart(6, '0');
    const out = (name: string) => join(run.stagingDir, `w${keptId}-${name}.parquet`);
    // The records a view file shows are in its view, not in the raw table.
    const rowCount = await writeKeptRows(run.conn, ds.rawTable, from, fl.loaded - viewRecords, out('rows'));
    if (rowCount === undefined) return;
    const files: { rows?: string; hashes?: string; rejects?: string } = rowCount > 0 ? { rows: out('rows') } : {};
    // A view file shows the records the SQL accepted; the others (handed back) it leaves out.
    const rejectCount = viewFile ? fl.rows - viewRecords : 0;
    if (viewFile) {
      if (await writeViewCheck(run.conn, out('hashes'), out('rejects'), rejectCount)) files.rejects = out('rejects');
      files.hashes = out('hashes');
    }
    return { key, parts, files, kind: viewFile ? 'view' : 'table', viewRecords, rowCount, rejectCount };
  }
}
