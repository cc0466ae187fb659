/**
 * Loads every dataset of a source location into embedded DuckDB (CONTRACT §1–§2).
 *
 * Each record is validated field by field against `datasets.ts`; a valid record is appended with
 * exact types (scaled bigint → DECIMAL, microseconds → TIMESTAMP) so that no value is ever
 * type-sniffed or cast through DOUBLE. A record that breaks a rule goes to the quarantine with
 * dataset, file, row, line, column, rule and raw text. After loading, exact duplicate deliveries
 * collapse to one record (the earliest `ingested_at` kept) and are counted. Watermarks come from
 * `_watermark.json` or are derived and labelled `derived`.
 *
 * Here: the run and each dataset (loadSources, loadDataset, finishDataset). Each file's load is in
 * file-load.ts, the state they share in dataset-run.ts, the record validator in record-type.ts,
 * and the types callers see in load-types.ts (re-exported here).
 */
import { mkdir, stat } from 'node:fs/promises';
import { isLosslessNumber, parse as parseLossless } from 'lossless-json';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { LoadRules } from '../contract/money.js';
import { DEFAULT_FILE_LIMITS, type FileLimits } from '../contract/limits.js';
import { InputError } from '../core/errors.js';
import { DATASETS, type DatasetSpec } from '../contract/datasets.js';
import { DatasetRun, type LoadRun } from './dataset-run.js';
import { dropFastTables } from './fast-path.js';
import { loadFile } from './file-load.js';
import type { ControlFile, DatasetLoad, LoadOptions, LoadResult, Watermark } from './load-types.js';
import type { QuarantineEntry } from './quarantine-entry.js';
import { tableColumns } from './record-type.js';
import { DeliveryCache } from './delivery-cache.js';
import { fillFromCache, rawEnd } from './cached-load.js';
import { dropRelation, dropRelations, finishViewDataset, resetViewTables } from './views.js';
import { listDatasetFolder, readRegularFile, SIDE_FILE_MAX_BYTES, type DatasetFolder, type SideFile } from '../sources/files.js';
import { datasetRoot, type DatasetRoots } from '../sources/locate.js';
import { ident } from '../core/sql-text.js';
import { sha256Hex } from '../core/digest.js';
import { formatMicros, parseInt64, parseTimestamp } from '../contract/values.js';

export type { QuarantineEntry } from './quarantine-entry.js';
export type { ControlFile, CutoffMapping, DatasetLoad, FileLoad, FilePath, LoadOptions, LoadProgress, LoadResult, Watermark } from './load-types.js';
export { EXTRA_COLUMNS_LISTED, IGNORED_FILES_LISTED, MESSAGE_KEEP_CHARS, NAME_KEEP_CHARS, PROGRESS_RECORDS } from './dataset-run.js';
export { tableColumns } from './record-type.js';

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
  const run = await openRun(conn, config, stagingDir, options);
  const wanted = options.datasets ? new Set(options.datasets) : undefined;
  // Not read: no table at all (a stale one is dropped), so SQL naming it fails loudly instead
  // of reading an empty table. sql/common runs only the statements whose datasets were loaded.
  for (const spec of DATASETS) if (wanted && !wanted.has(spec.name)) await dropRelation(conn, spec.name);
  const pending = DATASETS.filter((d) => !wanted || wanted.has(d.name));
  const done = await onLoadLanes([conn, ...(options.lanes ?? [])], pending, options.ready, async (spec, laneConn) => {
    // A dataset's own quarantine (and connection): datasets on two lanes load at once.
    const own: LoadRun = { ...run, conn: laneConn, quarantine: [] };
    const folder = await listDatasetFolder(datasetRoot(root, spec.name), spec.name);
    return { load: await loadDataset(own, spec, folder), quarantine: own.quarantine };
  });
  for (const c of [conn, ...(options.lanes ?? [])]) await dropFastTables(c);
  await run.cache?.evict();
  const loads = done.map((d) => d.load);
  for (const d of done) for (const e of d.quarantine) run.quarantine.push(e);
  inContractOrder(loads, run.quarantine);
  const cutoffMappings = [...run.cutoffs.values()].map(({ micros: _m, ...rest }) => rest).sort((a, b) => (a.timezone + a.local < b.timezone + b.local ? -1 : 1));
  return { datasets: loads, quarantine: run.quarantine, cutoffMappings, viewFiles: run.viewStamps };
}

/** The load's state before its first dataset: the staging folder made, the delivery cache opened, the view tables reset in view mode. */
async function openRun(conn: DuckDBConnection, config: LoadRules, stagingDir: string, options: LoadOptions): Promise<LoadRun> {
  const fast = options.fast ?? true;
  await mkdir(stagingDir, { recursive: true });
  const cache = options.cache ? await DeliveryCache.open(options.cache, conn, config, stagingDir) : undefined;
  const views = fast && (options.views ?? false);
  if (views) await resetViewTables(conn);
  const limits: FileLimits = { ...DEFAULT_FILE_LIMITS, ...config.limits };
  return { conn, config, stagingDir, options, fast, views, limits, cache, quarantine: [], cutoffs: new Map(), viewStamps: [], counters: { staged: 0, kept: 0 } };
}

/**
 * Loads one dataset from its listed `folder`: a fresh raw table, the folder's refusal and the
 * dataset's faults, each file (file-load.ts), then its records (duplicates collapsed, or its view
 * finished), its watermark and its import report. Returns its manifest record.
 */
async function loadDataset(run: LoadRun, spec: DatasetSpec, folder: DatasetFolder): Promise<DatasetLoad> {
  const ds = new DatasetRun(run, spec, folder);
  await run.conn.run(`CREATE OR REPLACE TABLE ${ident(ds.rawTable)} (${ds.colDefs}, _source VARCHAR)`);
  ds.progress('start');
  if (folder.refused) {
    run.quarantine.push({ dataset: spec.name, file: spec.name, row: null, line: null, column: null, rule: folder.refused.rule, message: folder.refused.message, raw: '' });
  }
  for (const f of run.options.faults?.get(spec.name) ?? []) run.quarantine.push({ dataset: spec.name, row: null, line: null, raw: '', ...f });
  for (const file of folder.files) {
    run.options.checkpoint?.();
    await loadFile(run, ds, file);
  }
  // The cache hits' records in one statement; a table no file checked now filled is made from them.
  const empty = ds.cachedRows.length > 0 && await rawEnd(run.conn, ds.rawTable) === 0;
  await fillFromCache(run.conn, ds.rawTable, ds.cols, ds.cachedRows, empty);
  await finishDataset(run, ds);
  ds.progress('done');
  return ds.load;
}

/** After the dataset's files: its table (duplicate deliveries collapsed, or its view finished), then its watermark and import report. */
async function finishDataset(run: LoadRun, ds: DatasetRun): Promise<void> {
  const { conn, quarantine } = run;
  const { spec, folder, load } = ds;
  load.quarantined = quarantine.length - ds.qBefore;
  if (ds.viewFiles.length) {
    const counts = await finishViewDataset(conn, spec, ds.viewFiles, tableColumns(spec).map((c) => c.name));
    load.records_loaded = counts.rows;
    load.duplicates = counts.deliveries - counts.rows;
  } else {
    await dedupe(conn, spec, load);
  }
  const declared = await readWatermark(folder, quarantine, load.control_files);
  load.quarantined = quarantine.length - ds.qBefore;
  if (declared) load.watermark = declared;
  else if (spec.derivedWatermarkColumn && !folder.watermark) load.watermark = await derivedWatermark(conn, spec);
  if (folder.importReport) await readImportReport(folder.importReport, load, quarantine);
}

/** Reads `_import_report.json` into the dataset's load (a control file); a report that cannot be read or is not JSON is quarantined. */
async function readImportReport(side: SideFile, load: DatasetLoad, quarantine: QuarantineEntry[]): Promise<void> {
  const read = await readSideFile(side);
  let problem: { rule: string; message: string } | undefined = 'text' in read ? undefined : read;
  if ('text' in read) {
    load.control_files.push({ path: side.relPath, size: read.size, sha256: read.sha256 });
    try { load.import_report = JSON.parse(read.text); } catch (e) { problem = { rule: 'import_report_not_json', message: `_import_report.json is not JSON: ${(e as Error).message.slice(0, 200)}` }; }
  }
  if (problem) {
    quarantine.push({ dataset: load.dataset, file: side.relPath, row: null, line: null, column: null, rule: problem.rule === 'link_outside_source_root' ? problem.rule : `import_report_${problem.rule.replace(/^import_report_/, '')}`, message: problem.message, raw: '' });
    load.quarantined += 1;
  }
}

/**
 * Loads the `pending` datasets on `lanes` (connections of one DuckDB instance; the first is the
 * run's), one dataset per lane at a time, each lane taking the next dataset that is ready
 * (nextReady, one choice at a time). Returns what each load gave, in the order loaded. When a load
 * fails, no lane starts another; once those under way have settled, the first failure is thrown.
 */
async function onLoadLanes<R>(lanes: readonly DuckDBConnection[], pending: DatasetSpec[], ready: LoadOptions['ready'], fn: (spec: DatasetSpec, conn: DuckDBConnection) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  let failure: { e: unknown } | undefined;
  let choosing: Promise<unknown> = Promise.resolve();
  const drive = async (lane: DuckDBConnection): Promise<void> => {
    while (pending.length && !failure) {
      // Two lanes racing over the same pending list would pick one dataset twice: one choice at a time.
      const pick = choosing.then(() => (pending.length && !failure ? nextReady(pending, ready) : undefined));
      choosing = pick.catch(() => undefined);
      try {
        const spec = await pick;
        if (spec) out.push(await fn(spec, lane));
      } catch (e) {
        failure ??= { e };
      }
    }
  };
  await Promise.all(lanes.map(drive));
  if (failure) throw failure.e;
  return out;
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
