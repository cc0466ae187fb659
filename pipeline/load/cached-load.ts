/**
 * The SQL side of the delivery cache (delivery-cache.ts): how a checked file's result is written
 * out after it was checked, and read back into the run's tables instead of checking it.
 *
 * While the cache is on, a file's loaded records go to a temporary per-file table (FILE_TABLE)
 * instead of straight into the dataset's raw table; after the file, they are written to Parquet
 * for the cache (table columns without `_source`, then `__row`, the record number) and moved into
 * the raw table. `_source` is never kept: it names the file as this run found it, and the same
 * bytes may arrive under another name; it is rebuilt from the run's name and `__row`.
 *
 * All paths reaching SQL are generated names in the run's scratch folder (checked against
 * SAFE_PATH); file names are bound as parameters.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { ident } from '../core/sql-text.js';
import { CHECK_TABLE, REJECT_TABLE, VIEW_HASH_TABLE } from './fast-path.js';

/**
 * The table holding the records of the file being loaded, while the cache is on. Not temporary:
 * its records stay (they become the raw table's), so they are stored where the raw table is.
 */
export const FILE_TABLE = '__ld_file';

const SAFE_PATH = /^[A-Za-z0-9_\-/.]+$/;

/** A generated path in the run's scratch folder as an SQL string literal; throws for any other character. */
export function scratchLiteral(path: string): string {
  if (!SAFE_PATH.test(path)) throw new Error(`internal: unsafe scratch path ${path}`);
  return `'${path}'`;
}

/** Creates FILE_TABLE, empty, with the raw table's columns (`columnDefs`: own and derived) and `_source`. */
export async function openFileTable(conn: DuckDBConnection, columnDefs: string): Promise<void> {
  await conn.run(`CREATE OR REPLACE TABLE ${FILE_TABLE} (${columnDefs}, _source VARCHAR)`);
}

/**
 * Moves the file's records from FILE_TABLE into `rawTable` (FILE_TABLE is gone afterwards). With
 * `out`, the records are first written there as Parquet (none written when there are none). With
 * `rawEmpty` (no record in the raw table yet), FILE_TABLE is renamed to it instead of copied: the
 * common day of one file per dataset copies nothing. Returns how many records were moved.
 */
export async function closeFileTable(conn: DuckDBConnection, rawTable: string, rawEmpty: boolean, out?: string): Promise<number> {
  const n = Number((await conn.runAndReadAll(`SELECT count(*) FROM ${FILE_TABLE}`)).getRows()[0][0]);
  if (out && n > 0) {
    await conn.run(`COPY (SELECT * EXCLUDE (_source), CAST(right(_source, 12) AS BIGINT) AS __row FROM ${FILE_TABLE}) TO ${scratchLiteral(out)} (FORMAT parquet)`);
  }
  if (n > 0 && rawEmpty) {
    await conn.run(`DROP TABLE ${ident(rawTable)}`);
    await conn.run(`ALTER TABLE ${FILE_TABLE} RENAME TO ${ident(rawTable)}`);
    return n;
  }
  if (n > 0) await conn.run(`INSERT INTO ${ident(rawTable)} SELECT * FROM ${FILE_TABLE}`);
  await conn.run(`DROP TABLE ${FILE_TABLE}`);
  return n;
}

/**
 * View mode: writes the current file's check (fast-path.ts CHECK_TABLE, REJECT_TABLE) for the
 * cache: the duplicate hash of each record the view shows to `hashes`, and the numbers of the
 * records it leaves out to `rejects` (only when there are any; returns whether it wrote them).
 */
export async function writeViewCheck(conn: DuckDBConnection, hashes: string, rejects: string, rejected: number): Promise<boolean> {
  await conn.run(`COPY (SELECT h FROM ${CHECK_TABLE} WHERE h IS NOT NULL) TO ${scratchLiteral(hashes)} (FORMAT parquet)`);
  if (rejected > 0) await conn.run(`COPY (SELECT __row FROM ${REJECT_TABLE}) TO ${scratchLiteral(rejects)} (FORMAT parquet)`);
  return rejected > 0;
}

/**
 * View mode, from the cache: REJECT_TABLE holds the records of the file the view leaves out (from
 * `rejects`, or none), and VIEW_HASH_TABLE gains the duplicate hashes of those it shows.
 */
export async function restoreViewCheck(conn: DuckDBConnection, hashes: string, rejects: string | undefined): Promise<void> {
  await conn.run(rejects
    ? `CREATE OR REPLACE TEMP TABLE ${REJECT_TABLE} AS SELECT __row::BIGINT AS __row FROM read_parquet(${scratchLiteral(rejects)})`
    : `CREATE OR REPLACE TEMP TABLE ${REJECT_TABLE} (__row BIGINT)`);
  await conn.run(`CREATE TEMP TABLE IF NOT EXISTS ${VIEW_HASH_TABLE} (h UBIGINT)`);
  await conn.run(`INSERT INTO ${VIEW_HASH_TABLE} SELECT h FROM read_parquet(${scratchLiteral(hashes)})`);
}

/**
 * Inserts a cached file's typed records (`rows`, written by closeFileTable) into `rawTable`, whose
 * columns are `columns` then `_source`; `_source` is rebuilt from `relPath` (bound, never SQL text).
 */
export async function insertCachedRows(conn: DuckDBConnection, rawTable: string, columns: readonly string[], rows: string, relPath: string): Promise<void> {
  await conn.run(
    `INSERT INTO ${ident(rawTable)} SELECT ${columns.map(ident).join(', ')}, $1 || ':' || lpad(__row::VARCHAR, 12, '0') FROM read_parquet(${scratchLiteral(rows)})`,
    [relPath],
  );
}
