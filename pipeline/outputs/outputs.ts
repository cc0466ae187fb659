/**
 * Output tables as Parquet (CONTRACT §6): `runs`, `control_totals`, `differences`, `difference_records`, `quarantine`
 * (and any further tables passed in, such as the break tables), under Hive-style partitions
 * `outputs/<table>/window_date=YYYY-MM-DD/run=<run_id>/part-00000.parquet`, laid out so that
 * Athena reads them correctly:
 * - timestamps are TIMESTAMP_MS (Parquet INT64 TIMESTAMP_MILLIS, UTC wall time), with the exact
 *   ISO text in a `*_text` column beside them where an input may be finer;
 * - money and quantities are DECIMAL(p,s) with p ≤ 38, or BIGINT; never a float, never HUGEINT
 *   (which DuckDB writes to Parquet as DOUBLE). Only the types of OUTPUT_TYPES can be declared;
 * - partition values are lower-case `[a-z0-9_-]` (the run id) or a date (digits and dashes);
 *   table and column names are `[a-z0-9_]`; file names never start with `_` or `.`.
 * Rows are objects keyed by column name, checked against their table's columns (a missing or
 * unknown name is a programming error: InternalError), staged as text and typed on COPY with
 * strict guards: an int, bool or date text that is
 * not exactly of its form stops the run (DuckDB's casts would round `12.50` or accept `+1`). A
 * decimal text that does not fit its DECIMAL(p,s) becomes NULL, and its exact text is in the
 * table's text column. Files are written to the run's local staging directory; `runs` is returned
 * last, so that it is promoted last and a `runs` row means every table of that run is in place.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { hashFile } from '../core/digest.js';
import { ChunkAppender } from '../load/chunks.js';
import { ident, literal } from '../core/sql-text.js';
import { InternalError } from '../core/errors.js';

/** One output object: table, final store key, local staged file, SHA-256, size and row count. */
export interface OutputObject {
  readonly table: string;
  readonly key: string;
  readonly localPath: string;
  readonly sha256: string;
  readonly size: number;
  readonly rows: number;
}

/** Column of an output table: name and its Parquet (DuckDB) type; rows are staged as text and typed on COPY. */
export interface OutputColumn { readonly name: string; readonly parquet: string }

/** Output tables and their Parquet column types (the Athena DDL follows these). */
export const OUTPUT_TABLES: Readonly<Record<string, readonly OutputColumn[]>> = {
  runs: [
    { name: 'run_id', parquet: 'VARCHAR' }, { name: 'trigger', parquet: 'VARCHAR' }, { name: 'reason', parquet: 'VARCHAR' },
    { name: 'parent_run_id', parquet: 'VARCHAR' }, { name: 'window_start', parquet: 'TIMESTAMP_MS' }, { name: 'window_end', parquet: 'TIMESTAMP_MS' },
    { name: 'control_id', parquet: 'VARCHAR' }, { name: 'status', parquet: 'VARCHAR' }, { name: 'exit_code', parquet: 'INTEGER' },
    { name: 'as_of', parquet: 'TIMESTAMP_MS' }, { name: 'as_of_text', parquet: 'VARCHAR' }, { name: 'difference_count', parquet: 'BIGINT' },
    { name: 'results_digest', parquet: 'VARCHAR' }, { name: 'started_at', parquet: 'TIMESTAMP_MS' },
  ],
  control_totals: [
    { name: 'run_id', parquet: 'VARCHAR' }, { name: 'window_start', parquet: 'TIMESTAMP_MS' }, { name: 'window_end', parquet: 'TIMESTAMP_MS' },
    { name: 'control_id', parquet: 'VARCHAR' }, { name: 'status', parquet: 'VARCHAR' }, { name: 'total_name', parquet: 'VARCHAR' },
    { name: 'dim', parquet: 'VARCHAR' }, { name: 'value_text', parquet: 'VARCHAR' }, { name: 'value_decimal', parquet: 'DECIMAL(38,18)' },
    // Integer totals (counts, minor units) up to 38 digits, which DECIMAL(38,18) cannot hold past 20 digits.
    { name: 'value_integer', parquet: 'DECIMAL(38,0)' },
  ],
  differences: [
    { name: 'run_id', parquet: 'VARCHAR' }, { name: 'window_start', parquet: 'TIMESTAMP_MS' }, { name: 'window_end', parquet: 'TIMESTAMP_MS' },
    { name: 'control_id', parquet: 'VARCHAR' }, { name: 'status', parquet: 'VARCHAR' }, { name: 'kind', parquet: 'VARCHAR' },
    { name: 'key', parquet: 'VARCHAR' }, { name: 'detail', parquet: 'VARCHAR' }, { name: 'record_time', parquet: 'TIMESTAMP_MS' },
    { name: 'record_time_text', parquet: 'VARCHAR' }, { name: 'break_id', parquet: 'VARCHAR' }, { name: 'disposition', parquet: 'VARCHAR' },
  ],
  // The records behind each difference (controls/records.ts), every one: join with `differences`
  // on (run_id, control_id, kind, key). `file` is relative to the run's source location.
  difference_records: [
    { name: 'run_id', parquet: 'VARCHAR' }, { name: 'window_start', parquet: 'TIMESTAMP_MS' }, { name: 'window_end', parquet: 'TIMESTAMP_MS' },
    { name: 'control_id', parquet: 'VARCHAR' }, { name: 'kind', parquet: 'VARCHAR' }, { name: 'key', parquet: 'VARCHAR' },
    { name: 'side', parquet: 'VARCHAR' }, { name: 'dataset', parquet: 'VARCHAR' }, { name: 'file', parquet: 'VARCHAR' },
    { name: 'record_number', parquet: 'BIGINT' }, { name: 'record_key', parquet: 'VARCHAR' },
  ],
  quarantine: [
    { name: 'run_id', parquet: 'VARCHAR' }, { name: 'window_start', parquet: 'TIMESTAMP_MS' }, { name: 'dataset', parquet: 'VARCHAR' },
    { name: 'file', parquet: 'VARCHAR' }, { name: 'row', parquet: 'BIGINT' }, { name: 'line', parquet: 'BIGINT' }, { name: 'column', parquet: 'VARCHAR' },
    { name: 'rule', parquet: 'VARCHAR' }, { name: 'message', parquet: 'VARCHAR' }, { name: 'raw', parquet: 'VARCHAR' },
  ],
};

/** One output row: column name → value as text (or null); typed when copied to Parquet. Timestamps as ISO text. */
export type OutputRow = Readonly<Record<string, string | null>>;

/** Staged rows per table. */
export type OutputRows = Readonly<Record<string, readonly OutputRow[]>>;

/**
 * The values of `row` in the order of `cols`. Throws InternalError naming the table and column
 * when the row lacks a column or has a name the table does not declare.
 */
export function rowValues(table: string, cols: readonly OutputColumn[], row: OutputRow): (string | null)[] {
  const values = cols.map((c) => {
    const v = row[c.name];
    if (v === undefined) throw new InternalError(`output ${table}: a row has no value for column ${c.name}`);
    return v;
  });
  if (Object.keys(row).length !== cols.length) {
    const unknown = Object.keys(row).filter((k) => !cols.some((c) => c.name === k));
    throw new InternalError(`output ${table}: a row names column(s) ${unknown.join(', ')} that the table does not declare`);
  }
  return values;
}

/**
 * Rows that live in DuckDB, not in JS: a query whose columns are named exactly as the table's,
 * appended to a table's rows. A text query (a string) selects text columns, typed on COPY with the
 * guards of any row; a typed query (`{ typed }`) selects columns already of the table's Parquet
 * types (checked), copied as they are, and is only for a table without JS rows: the 3.5 million
 * difference_records of the 1M split window cost 12.5 s of CPU through text and 8.6 s typed.
 */
export type OutputQueries = Readonly<Record<string, string | { readonly typed: string }>>;

/** SQL for the TIMESTAMP_MS value of the ISO text expression `text` (as every timestamp column is typed on COPY). */
export const timestampMsExpr = (text: string): string => `CAST(strptime(${text}, ['%Y-%m-%dT%H:%M:%S.%fZ', '%Y-%m-%dT%H:%M:%SZ']) AS TIMESTAMP_MS)`;

/** The column types an output table may declare (DuckDB names); DECIMAL(p,s) needs 1 ≤ p ≤ 38, 0 ≤ s ≤ p. */
export const OUTPUT_TYPES = ['VARCHAR', 'BOOLEAN', 'INTEGER', 'BIGINT', 'DATE', 'TIMESTAMP_MS', 'DECIMAL(p,s)'] as const;

/** Parses `DECIMAL(p,s)`; undefined for any other type. */
export function decimalType(t: string): { precision: number; scale: number } | undefined {
  const m = /^DECIMAL\(([0-9]+),([0-9]+)\)$/.exec(t);
  if (!m) return undefined;
  return { precision: Number(m[1]), scale: Number(m[2]) };
}

/**
 * Checks a table definition against OUTPUT_TYPES and the name rules; throws InternalError (a
 * programming error, exit 70) naming the table and column.
 */
export function assertOutputTable(table: string, cols: readonly OutputColumn[]): void {
  if (!/^[a-z][a-z0-9_]*$/.test(table)) throw new InternalError(`output table name '${table}' must be [a-z][a-z0-9_]* (Athena table names)`);
  const seen = new Set<string>();
  for (const c of cols) {
    if (!/^[a-z][a-z0-9_]*$/.test(c.name) || c.name === 'window_date') throw new InternalError(`output column ${table}.${c.name} must be [a-z][a-z0-9_]* and not the partition column window_date`);
    if (seen.has(c.name)) throw new InternalError(`output column ${table}.${c.name} is declared twice`);
    seen.add(c.name);
    const d = decimalType(c.parquet);
    const ok = d ? d.precision >= 1 && d.precision <= 38 && d.scale <= d.precision : (OUTPUT_TYPES as readonly string[]).includes(c.parquet) && c.parquet !== 'DECIMAL(p,s)';
    if (!ok) throw new InternalError(`output column ${table}.${c.name} has type ${c.parquet}; outputs allow ${OUTPUT_TYPES.join(', ')} (no float, no HUGEINT, no microsecond timestamps)`);
  }
}

function typedExpr(table: string, c: OutputColumn): string {
  const col = ident(c.name);
  const bad = (form: string) => `error(${literal(`output ${table}.${c.name}: value is not ${form}: `)} || ${col})`;
  const d = decimalType(c.parquet);
  if (d) {
    const intDigits = d.precision - d.scale;
    const frac = d.scale > 0 ? `(\\.[0-9]{1,${d.scale}})?` : '';
    const re = `-?0*[0-9]{1,${Math.max(intDigits, 1)}}${frac}`;
    const guard = intDigits === 0 ? `regexp_full_match(${col}, '-?0?(\\.[0-9]{1,${d.scale}})?')` : `regexp_full_match(${col}, '${re}')`;
    // DuckDB parses text into a wide DECIMAL (p > 18) about 300 times slower than into HUGEINT
    // (measured: 11 s against 0.04 s for 700,000 totals), so integer texts go through HUGEINT,
    // which is exact for the digits the guard lets through. A text with a fraction that fits
    // DECIMAL(18,f) (f = min(scale, 9) fraction digits, 18 − f before the point, no leading zero
    // beyond one) is parsed into that and widened, exactly: 2.6 s against 9 ms for 60,000 values.
    // Other fraction texts cast directly.
    const f = Math.min(d.scale, 9);
    const narrow = d.precision > 18 && f > 0 ? `WHEN regexp_full_match(${col}, '-?(0|[1-9][0-9]{0,${17 - f}})\\.[0-9]{1,${f}}') THEN CAST(CAST(${col} AS DECIMAL(18,${f})) AS ${c.parquet}) ` : '';
    const exact = `CASE WHEN NOT contains(${col}, '.') THEN CAST(CAST(${col} AS HUGEINT) AS ${c.parquet}) ${narrow}ELSE CAST(${col} AS ${c.parquet}) END`;
    return `CAST(CASE WHEN ${guard} THEN ${exact} END AS ${c.parquet}) AS ${col}`;
  }
  switch (c.parquet) {
    case 'TIMESTAMP_MS': return `${timestampMsExpr(col)} AS ${col}`;
    case 'VARCHAR': return col;
    case 'INTEGER': case 'BIGINT': return `CASE WHEN ${col} IS NULL OR regexp_full_match(${col}, '-?[0-9]+') THEN CAST(${col} AS ${c.parquet}) ELSE ${bad('an integer')} END AS ${col}`;
    case 'BOOLEAN': return `CASE WHEN ${col} IS NULL OR ${col} IN ('true', 'false') THEN ${col} = 'true' ELSE ${bad('true or false')} END AS ${col}`;
    case 'DATE': return `CASE WHEN ${col} IS NULL OR regexp_full_match(${col}, '[0-9]{4}-[0-9]{2}-[0-9]{2}') THEN CAST(${col} AS DATE) ELSE ${bad('a date YYYY-MM-DD')} END AS ${col}`;
    default: throw new InternalError(`output column ${table}.${c.name} has type ${c.parquet}`);
  }
}

/**
 * Throws InternalError when the columns `query` selects are not exactly the table's (a missing
 * name would otherwise read as NULL), or, for a typed query, when a column is not of its declared type.
 */
async function checkQueryColumns(conn: DuckDBConnection, table: string, cols: readonly OutputColumn[], query: string, typed: boolean): Promise<void> {
  const rows = (await conn.runAndReadAll(`DESCRIBE ${query}`)).getRowObjectsJson();
  const described = rows.map((r) => String(r.column_name));
  const expected = cols.map((c) => c.name);
  if ([...described].sort().join(',') !== [...expected].sort().join(',')) {
    throw new InternalError(`output ${table}: a query selects columns (${described.join(', ')}), not (${expected.join(', ')})`);
  }
  if (!typed) return;
  const types = new Map(rows.map((r) => [String(r.column_name), String(r.column_type)]));
  const wrong = cols.filter((c) => types.get(c.name) !== c.parquet);
  if (wrong.length) throw new InternalError(`output ${table}: a typed query selects ${wrong.map((c) => `${c.name} as ${types.get(c.name)}, not ${c.parquet}`).join('; ')}`);
}

/**
 * The relation one output table's Parquet file is copied from: a query
 * alone is copied from directly (no staging table: control_totals' 70,000 rows at 100k orders
 * were inserted into one only to be read once); rows, and rows followed by a query, are staged
 * as text in the temp table `staging` (dropped by the caller).
 */
async function outputSource(conn: DuckDBConnection, table: string, staging: string, cols: readonly OutputColumn[], data: readonly OutputRow[], more?: OutputQueries[string]): Promise<{ from: string; staged: boolean; typed: boolean }> {
  const typed = typeof more === 'object';
  const query = typeof more === 'object' ? more.typed : more;
  if (query) await checkQueryColumns(conn, table, cols, query, typed);
  if (typed && data.length) throw new InternalError(`output ${table}: a typed query cannot follow rows staged as text`);
  if (query && data.length === 0) return { from: `(${query}) q`, staged: false, typed };
  await conn.run(`CREATE OR REPLACE TEMP TABLE ${staging} (${cols.map((c) => `${ident(c.name)} VARCHAR`).join(', ')})`);
  // Columnar appends: one data chunk per 2048 rows, not one call per value.
  const app = await ChunkAppender.open(conn, staging, cols.map(() => 'VARCHAR'));
  try {
    for (const r of data) app.push(rowValues(table, cols, r));
  } finally {
    app.close();
  }
  if (query) await conn.run(`INSERT INTO ${staging} BY NAME ${query}`);
  return { from: staging, staged: true, typed: false };
}

/**
 * Writes each table's rows (`rows`, then the rows `moreRows` selects) to one Parquet file in
 * `stagingDir` and returns the objects with the keys they will be published under, `runs` last.
 * Tables with no rows are still written (zero-row files), so every run has the same set of
 * objects. Throws InternalError for a table definition outside OUTPUT_TYPES or a row or query
 * whose column names are not the table's, and DuckDB's error for a value that breaks its column's form.
 */
export async function writeOutputs(
  conn: DuckDBConnection, stagingDir: string, windowDate: string, runId: string, rows: OutputRows,
  tables: Readonly<Record<string, readonly OutputColumn[]>> = OUTPUT_TABLES,
  /** Per table, a query whose rows (text columns named as the table's) are appended to `rows`. */
  moreRows: OutputQueries = {},
): Promise<OutputObject[]> {
  if (!/^[a-z0-9_-]+$/.test(runId) || !/^[0-9]{4}-[0-9]{2}-[0-9]{2}$/.test(windowDate)) throw new Error('unsafe partition value');
  const out: OutputObject[] = [];
  // `runs` last: it is promoted last, so a `runs` row in Athena means the run's other tables are there.
  const ordered = Object.entries(tables).sort(([a], [b]) => Number(a === 'runs') - Number(b === 'runs'));
  for (const [table, cols] of ordered) {
    assertOutputTable(table, cols);
    const staging = `out_${table}`;
    const source = await outputSource(conn, table, staging, cols, rows[table] ?? [], moreRows[table]);
    const rel = `${table}/window_date=${windowDate}/run=${runId}/part-00000.parquet`;
    const localPath = join(stagingDir, 'outputs', ...rel.split('/'));
    await mkdir(join(localPath, '..'), { recursive: true });
    if (!/^[A-Za-z0-9_\-/.=]+$/.test(localPath)) throw new Error(`unsafe output path ${localPath}`);
    const select = cols.map((c) => (source.typed ? ident(c.name) : typedExpr(table, c))).join(', ');
    const count = (await conn.run(`COPY (SELECT ${select} FROM ${source.from}) TO '${localPath}' (FORMAT parquet, COMPRESSION zstd)`)).rowsChanged;
    if (source.staged) await conn.run(`DROP TABLE ${staging}`);
    const { sha256, size } = await hashFile(localPath);
    out.push({ table, key: `outputs/${rel}`, localPath, sha256, size, rows: count });
  }
  return out;
}
