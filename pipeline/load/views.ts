/**
 * View mode of the loader (LoadOptions.views): a dataset whose Parquet files passed the fast
 * path's checks is not copied into DuckDB. Its table becomes a view over the files themselves
 * (through the staged links), computing the typed columns on every read, plus a small table of
 * what could not be shown that way: records loaded by the JavaScript validator (other formats,
 * records the SQL handed back) and collapsed duplicate deliveries. The relation has the same
 * columns, types, `_source` and `_deliveries` as in table mode (test/load-fastpath.test.ts).
 *
 * Why: an in-memory DuckDB table costs about 190 bytes a record uncompressed (a 10M-order day
 * holds about 135M records), and copying costs about as much time as checking. A view keeps the
 * bulk of a day in the compressed Parquet files. Only datasets without derived columns qualify
 * (the notional and the local-time mapping would be recomputed on every read).
 *
 * What this assumes: the staged links (hard links where possible) stay in place, and the files'
 * contents do not change, until the run's last query; the links live in the run's scratch folder.
 * File names still never reach SQL: `_source` reads the name from FILES_TABLE.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import type { DatasetSpec } from '../contract/datasets.js';
import { CHECK_TABLE, REJECT_TABLE, VIEW_HASH_TABLE } from './fast-path.js';
import { ident } from '../core/sql-text.js';

/** File number → source-relative name, for `_source` in views (kept for the whole run). */
const FILES_TABLE = '__ld_files';
/** Records of view files that the view must not show (handed back to JS, or collapsed duplicates). */
const EXCLUDED_TABLE = '__ld_x';

/** One Parquet file a dataset's view reads. */
export interface ViewFile {
  readonly fid: number;
  readonly relPath: string;
  readonly stagedPath: string;
  /** Typed value of each own column over `s` (the file), in column order (FastPlan.values). */
  readonly values: readonly string[];
}

/** Creates the view mode's bookkeeping tables, empty (once per load). */
export async function resetViewTables(conn: DuckDBConnection): Promise<void> {
  await conn.run(`CREATE OR REPLACE TABLE ${FILES_TABLE} (fid INTEGER, name VARCHAR)`);
  await conn.run(`CREATE OR REPLACE TABLE ${EXCLUDED_TABLE} (fid INTEGER, "row" BIGINT)`);
}

/** Creates VIEW_HASH_TABLE (file, duplicate hash, record number) unless it exists. */
async function ensureViewHashTable(conn: DuckDBConnection): Promise<void> {
  await conn.run(`CREATE TEMP TABLE IF NOT EXISTS ${VIEW_HASH_TABLE} (fid INTEGER, h UBIGINT, r BIGINT)`);
}

/**
 * Records a checked file: its name, the records of it the fast path handed back (REJECT_TABLE)
 * and the duplicate hash and number of those it accepted (CHECK_TABLE, into VIEW_HASH_TABLE),
 * all from the file's check, so call this before the next file is checked.
 */
export async function registerViewFile(conn: DuckDBConnection, f: ViewFile): Promise<void> {
  await conn.run(`INSERT INTO ${FILES_TABLE} VALUES ($1, $2)`, [f.fid, f.relPath]);
  await conn.run(`INSERT INTO ${EXCLUDED_TABLE} SELECT ${f.fid}, __row FROM ${REJECT_TABLE}`);
  await ensureViewHashTable(conn);
  await conn.run(`INSERT INTO ${VIEW_HASH_TABLE} SELECT ${f.fid}, h, r FROM ${CHECK_TABLE} WHERE h IS NOT NULL`);
}

/**
 * Drops the table or view called `name`, whichever it is. DuckDB refuses `DROP TABLE` of a view;
 * trying the table first and the view on refusal costs two statements at most, where a catalog
 * lookup (information_schema) cost several milliseconds per dataset.
 */
export async function dropRelation(conn: DuckDBConnection, name: string): Promise<void> {
  try {
    await conn.run(`DROP TABLE IF EXISTS ${ident(name)}`);
  } catch (e) {
    await conn.run(`DROP VIEW IF EXISTS ${ident(name)}`).catch(() => { throw e; });
  }
}

/**
 * Drops the tables or views called `names`, whichever each is: the tables in one call (the common
 * case: none is a view), or, when DuckDB refuses that (a view among them; the statements before
 * it ran, the rest did not), each by dropRelation.
 */
export async function dropRelations(conn: DuckDBConnection, names: readonly string[]): Promise<void> {
  try {
    await conn.run(names.map((n) => `DROP TABLE IF EXISTS ${ident(n)}`).join(';\n'));
  } catch {
    for (const n of names) await dropRelation(conn, n);
  }
}

/**
 * One file's records as the dataset's columns, `_source` and `__row`, without the excluded ones
 * (`excluded`: whether the file has any, so files without skip the anti-join); with `only`, just
 * the records whose number is in that subquery, filtered in the scan, before any column is typed.
 */
function fileSelect(spec: DatasetSpec, f: ViewFile, excluded: boolean, only?: string): string {
  if (!/^[A-Za-z0-9_\-/.]+$/.test(f.stagedPath)) throw new Error('internal: unsafe staged path');
  const cols = spec.columns.map((c, i) => `${f.values[i]} AS ${ident(c.name)}`).join(', ');
  const source = `(SELECT name FROM ${FILES_TABLE} WHERE fid = ${f.fid}) || ':' || lpad((file_row_number + 1)::VARCHAR, 12, '0') AS _source`;
  const conditions = [
    ...(excluded ? [`file_row_number + 1 NOT IN (SELECT "row" FROM ${EXCLUDED_TABLE} WHERE fid = ${f.fid})`] : []),
    ...(only ? [`file_row_number + 1 IN (${only})`] : []),
  ];
  const where = conditions.length ? ` WHERE ${conditions.join(' AND ')}` : '';
  return `SELECT ${cols}, ${source}, file_row_number + 1 AS __row FROM read_parquet('${f.stagedPath}', file_row_number = true) s${where}`;
}

async function excludedFids(conn: DuckDBConnection): Promise<Set<number>> {
  const r = await conn.runAndReadAll(`SELECT DISTINCT fid FROM ${EXCLUDED_TABLE}`);
  return new Set(r.getRows().map(([fid]) => Number(fid)));
}

/**
 * Finishes a dataset in view mode (CONTRACT §2 duplicates as in table mode): records equal in every
 * typed column but the delivery column collapse into one row of the side table (earliest delivery,
 * smallest `_source`, `_deliveries` = how many) and leave the view; then the dataset's name
 * becomes `view files ∪ side table`. `raw` is the raw table (JS-loaded records, `_source` last);
 * it becomes the side table `<dataset>__tab`. Returns the count of rows and of deliveries.
 */
export async function finishViewDataset(conn: DuckDBConnection, spec: DatasetSpec, files: readonly ViewFile[], columns: readonly string[]): Promise<{ rows: number; deliveries: number }> {
  const raw = ident(`${spec.name}__raw`);
  const tab = `${spec.name}__tab`;
  const key = columns.filter((c) => c !== spec.deliveryColumn).map(ident).join(', ');
  let excluded = await excludedFids(conn);
  // A file's records whose hash repeats, by number (VIEW_HASH_TABLE): read back with the file's
  // typed values, not found by hashing every record of it again.
  const repeated = (f: ViewFile) => fileSelect(spec, f, excluded.has(f.fid), `SELECT r FROM ${VIEW_HASH_TABLE} SEMI JOIN __ld_dup USING (h) WHERE fid = ${f.fid}`);
  const all = () => [
    ...files.map((f) => `SELECT ${columns.map(ident).join(', ')}, _source, ${f.fid} AS __fid, __row FROM (${repeated(f)})`),
    `SELECT ${columns.map(ident).join(', ')}, _source, 0 AS __fid, rowid AS __row FROM ${raw} WHERE hash(${key}) IN (SELECT h FROM __ld_dup)`,
  ].join(' UNION ALL ');
  // The files' hashes were kept by their checking pass (VIEW_HASH_TABLE); the side table's are computed here.
  await ensureViewHashTable(conn);
  await conn.run(`CREATE OR REPLACE TEMP TABLE __ld_dup AS SELECT h FROM (SELECT h FROM ${VIEW_HASH_TABLE} UNION ALL SELECT hash(${key}) AS h FROM ${raw}) GROUP BY h HAVING count(*) > 1`);
  const dupHashes = Number((await conn.runAndReadAll('SELECT count(*) FROM __ld_dup')).getRows()[0][0]);
  await dropRelation(conn, tab);
  if (dupHashes > 0) {
    const select = columns.map((c) => (c === spec.deliveryColumn ? `min(${ident(c)}) AS ${ident(c)}` : ident(c))).join(', ');
    // The (few) records whose hash repeats, whole; they are grouped by their typed values, so a
    // hash collision never merges two different records.
    await conn.run(`CREATE OR REPLACE TEMP TABLE __ld_dm AS ${all()}`);
    await conn.run(`CREATE OR REPLACE TEMP TABLE __ld_grp AS SELECT ${select}, min(_source) AS _source, count(*) AS _deliveries FROM __ld_dm GROUP BY ALL`);
    await conn.run(`DELETE FROM ${raw} WHERE rowid IN (SELECT __row FROM __ld_dm WHERE __fid = 0)`);
    await conn.run(`INSERT INTO ${EXCLUDED_TABLE} SELECT __fid, __row FROM __ld_dm WHERE __fid <> 0`);
    excluded = await excludedFids(conn);
  }
  await conn.run(`ALTER TABLE ${raw} RENAME TO ${ident(tab)}`);
  await conn.run(`ALTER TABLE ${ident(tab)} ADD COLUMN _deliveries BIGINT DEFAULT 1`);
  if (dupHashes > 0) {
    await conn.run(`INSERT INTO ${ident(tab)} SELECT * FROM __ld_grp`);
    await conn.run('DROP TABLE __ld_grp');
    await conn.run('DROP TABLE __ld_dm');
  }
  await conn.run('DROP TABLE __ld_dup');
  await conn.run(`DROP TABLE ${VIEW_HASH_TABLE}`);
  const parts = files.map((f) => `SELECT * EXCLUDE (__row), 1::BIGINT AS _deliveries FROM (${fileSelect(spec, f, excluded.has(f.fid))})`);
  await dropRelation(conn, spec.name);
  await conn.run(`CREATE VIEW ${ident(spec.name)} AS ${[...parts, `SELECT * FROM ${ident(tab)}`].join(' UNION ALL ')}`);
  const r = await conn.runAndReadAll(`SELECT count(*)::VARCHAR, coalesce(sum(_deliveries), 0)::VARCHAR FROM ${ident(spec.name)}`);
  const [n, d] = r.getRows()[0];
  return { rows: Number(n), deliveries: Number(d) };
}
