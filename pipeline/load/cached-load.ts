/**
 * The SQL side of the delivery cache (delivery-cache.ts): how a checked file's result is written
 * out after it was checked, and read back into the run's tables instead of checking it.
 *
 * A file's loaded records go straight into the dataset's raw table, cache on or off; to keep them,
 * they are written from there to Parquet (table columns without `_source`, then `__row`, the
 * record number): while its files load, the raw table only gains rows (but for a fast path that
 * undoes its own file's insert), so a file's records are those from the `rowid` past the table's
 * last row before the file (rawEnd) on, and their count is checked against the file's. `_source` is never kept: it
 * names the file as this run found it, and the same bytes may arrive under another name; it is
 * rebuilt from the run's name and `__row`.
 *
 * All paths reaching SQL are generated names in the run's scratch folder (checked against
 * SAFE_PATH); file names are bound as parameters.
 */
import { rm } from 'node:fs/promises';
import type { DuckDBConnection } from '@duckdb/node-api';
import { ident } from '../core/sql-text.js';
import { CHECK_TABLE, REJECT_TABLE } from './fast-path.js';

const SAFE_PATH = /^[A-Za-z0-9_\-/.]+$/;

/** A generated path in the run's scratch folder as an SQL string literal; throws for any other character. */
export function scratchLiteral(path: string): string {
  if (!SAFE_PATH.test(path)) throw new Error(`internal: unsafe scratch path ${path}`);
  return `'${path}'`;
}

/**
 * One past the `rowid` of `rawTable`'s last live row: every record appended later has a `rowid`
 * from there on (rows deleted at the end, a fast path's undone insert, keep their numbers: the
 * next row comes after them, and they are not seen).
 */
export async function rawEnd(conn: DuckDBConnection, rawTable: string): Promise<number> {
  const live = Number((await conn.runAndReadAll(`SELECT count(*) FROM ${ident(rawTable)}`)).getRows()[0][0]);
  // Only rows from `live` on are scanned: rowid filters prune the table's row groups.
  const end = (await conn.runAndReadAll(`SELECT max(rowid) + 1 FROM ${ident(rawTable)} WHERE rowid >= ${live}`)).getRows()[0][0];
  return end === null ? live : Number(end);
}

/**
 * Writes the records of `rawTable` from `rowid` `from` on (the file's, appended since rawEnd gave
 * `from`) to `out` as Parquet; none written when there are none. Returns their number, or
 * undefined (`out` removed) when it is not `expected`, the number the file loaded: the file then
 * is not kept, never kept with other records than its own.
 */
export async function writeKeptRows(conn: DuckDBConnection, rawTable: string, from: number, expected: number, out: string): Promise<number | undefined> {
  if (!Number.isSafeInteger(from) || from < 0) throw new Error(`internal: rowid ${from}`);
  if (expected === 0 && await rawEnd(conn, rawTable) === from) return 0;
  const r = await conn.run(`COPY (SELECT * EXCLUDE (_source), CAST(right(_source, 12) AS BIGINT) AS __row FROM ${ident(rawTable)} WHERE rowid >= ${from}) TO ${scratchLiteral(out)} (FORMAT parquet)`);
  if (r.rowsChanged === expected) return expected;
  await rm(out, { force: true });
  return undefined;
}

/**
 * View mode: writes the current file's check (fast-path.ts CHECK_TABLE, REJECT_TABLE) for the
 * cache: the duplicate hash and number of each record the view shows to `hashes`, and the numbers
 * of the records it leaves out to `rejects` (only when there are any; returns whether it wrote them).
 */
export async function writeViewCheck(conn: DuckDBConnection, hashes: string, rejects: string, rejected: number): Promise<boolean> {
  await conn.run(`COPY (SELECT h, r FROM ${CHECK_TABLE} WHERE h IS NOT NULL) TO ${scratchLiteral(hashes)} (FORMAT parquet)`);
  if (rejected > 0) await conn.run(`COPY (SELECT __row FROM ${REJECT_TABLE}) TO ${scratchLiteral(rejects)} (FORMAT parquet)`);
  return rejected > 0;
}

/**
 * View mode, from the cache: REJECT_TABLE holds the records of the file the view leaves out (from
 * `rejects`, or none), and CHECK_TABLE the duplicate hash and number of those it shows, as the
 * file's checking pass leaves them (registerViewFile takes them from there).
 */
export async function restoreViewCheck(conn: DuckDBConnection, hashes: string, rejects: string | undefined): Promise<void> {
  await conn.run(rejects
    ? `CREATE OR REPLACE TEMP TABLE ${REJECT_TABLE} AS SELECT __row::BIGINT AS __row FROM read_parquet(${scratchLiteral(rejects)})`
    : `CREATE OR REPLACE TEMP TABLE ${REJECT_TABLE} (__row BIGINT)`);
  await conn.run(`CREATE OR REPLACE TEMP TABLE ${CHECK_TABLE} AS SELECT h::UBIGINT AS h, r::BIGINT AS r FROM read_parquet(${scratchLiteral(hashes)})`);
}

/** A cached file's typed records to read back (`rows`, written by writeKeptRows) and the name the run found it under. */
export interface CachedRows {
  readonly rows: string;
  readonly relPath: string;
}

/**
 * Reads the typed records of a dataset's cached files (`files`) into `rawTable`, whose columns are
 * `columns` (name and DuckDB type) then `_source`, in one statement for all of them: one scan per
 * file, `_source` rebuilt from each file's `relPath` (bound, never SQL text). With `replace` (the
 * raw table holds no record yet) the table is created from them (CREATE TABLE … AS, cheaper than
 * inserting into the empty table); otherwise they are inserted. Nothing is done without files.
 */
export async function fillFromCache(conn: DuckDBConnection, rawTable: string, columns: readonly { name: string; type: string }[], files: readonly CachedRows[], replace: boolean): Promise<void> {
  if (files.length === 0) return;
  const select = columns.map((c) => `CAST(${ident(c.name)} AS ${c.type}) AS ${ident(c.name)}`).join(', ');
  const scans = files.map((f, i) => `SELECT ${select}, $${i + 1} || ':' || lpad(__row::VARCHAR, 12, '0') AS _source FROM read_parquet(${scratchLiteral(f.rows)})`);
  const head = replace ? `CREATE OR REPLACE TABLE ${ident(rawTable)} AS ` : `INSERT INTO ${ident(rawTable)} `;
  await conn.run(head + scans.join(' UNION ALL '), files.map((f) => f.relPath));
}
