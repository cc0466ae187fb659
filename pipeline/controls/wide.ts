/**
 * The wide fallback for control totals (issue 18, CONTRACT §1 "amount_minor … at most 38 digits"):
 * a control's sums of minor units run in DECIMAL(38,0) (HUGEINT inside), which is exact and fast
 * but overflows when, say, two legs of one posting set hold 38-digit amounts. Then, and only then,
 * the control runs once more with every minor-units column of the datasets it reads shadowed by a
 * temporary view holding it as BIGNUM, DuckDB's variable-width integer, and `minor()` casting to
 * BIGNUM (sql/common/wide.sql, a TEMP macro: only the control's connection sees it): its totals
 * and the comparisons behind its differences are exact at any size. BIGNUM sums measured about 40
 * times slower, so the normal path never uses them.
 *
 * DuckDB turns BIGNUM combined with DECIMAL into DOUBLE without a word; the SQL never mixes them,
 * and `assertNoFloat` refuses (InternalError) any DOUBLE or FLOAT column the control created, so a
 * binary float can never slip onto the money path. Quantities (DECIMAL(38,18)) have no fallback: a
 * quantity sum past DECIMAL(38,18) still stops the run (InputError `total_overflow`, exit 3).
 */
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import type { DuckDBConnection } from '@duckdb/node-api';
import { InternalError } from '../core/errors.js';
import { repoPath } from '../core/paths.js';
import { ident } from '../core/sql-text.js';
import { datasetSpec, derivedColumns, SQL_TYPE } from '../contract/datasets.js';

const WIDE_SQL = 'sql/common/wide.sql';

/** True when `e` is DuckDB's overflow of a DECIMAL/HUGEINT sum, addition or cast (the fallback's trigger). */
export function isNumericOverflow(e: unknown): boolean {
  const message = e instanceof Error ? e.message : String(e);
  return !(e instanceof InternalError) && /Overflow|out of range/i.test(message);
}

/** The wide fallback's SQL file with its SHA-256 (recorded in the manifest with the other SQL files). */
export function wideSql(): { path: string; text: string; sha256: string } {
  const text = readFileSync(repoPath(WIDE_SQL), 'utf8');
  return { path: WIDE_SQL, text, sha256: createHash('sha256').update(text).digest('hex') };
}

/** The minor-units columns (DECIMAL(38,0): amounts and the derived notional) of a dataset's table. */
function minorColumns(dataset: string): string[] {
  const spec = datasetSpec(dataset);
  return [...spec.columns.map((c) => ({ name: c.name, type: SQL_TYPE[c.kind] })), ...derivedColumns(spec)].filter((c) => c.type === 'DECIMAL(38,0)').map((c) => c.name);
}

/**
 * Runs `fn` with the datasets `reads` shadowed by BIGNUM views and `minor()` made BIGNUM; undoes
 * both afterwards, whatever happens.
 */
export async function withWideMoney<T>(conn: DuckDBConnection, reads: readonly string[], fn: () => Promise<T>): Promise<T> {
  const db = String((await conn.runAndReadAll('SELECT current_database()')).getRows()[0][0]);
  const shadowed: string[] = [];
  try {
    for (const d of reads) {
      const cols = minorColumns(d);
      if (!cols.length) continue;
      // HUGEINT first: DuckDB casts DECIMAL to BIGNUM only through an integer type.
      const replace = cols.map((c) => `${ident(c)}::HUGEINT::BIGNUM AS ${ident(c)}`).join(', ');
      await conn.run(`CREATE OR REPLACE TEMP VIEW ${ident(d)} AS SELECT * REPLACE (${replace}) FROM ${ident(db)}.main.${ident(d)}`);
      shadowed.push(d);
    }
    await conn.run(wideSql().text);
    return await fn();
  } finally {
    for (const d of shadowed) await conn.run(`DROP VIEW IF EXISTS temp.main.${ident(d)}`);
    // wide.sql's minor() is a TEMP macro of this connection, over sql/common's.
    await conn.run('DROP MACRO IF EXISTS temp.main.minor');
  }
}

/**
 * Throws InternalError when a temporary table or view the control created (`rcNN_…`) has a
 * DOUBLE or FLOAT column: in the wide fallback that is BIGNUM meeting DECIMAL, never allowed on
 * the money path. Call before the control's objects are dropped.
 */
export async function assertNoFloat(conn: DuckDBConnection, controlId: string): Promise<void> {
  const prefix = `${controlId.toLowerCase()}\\_%`;
  const r = await conn.runAndReadAll(`SELECT table_name || '.' || column_name AS c, data_type FROM duckdb_columns() WHERE database_name = 'temp' AND lower(table_name) LIKE '${prefix}' ESCAPE '\\' AND data_type IN ('DOUBLE', 'FLOAT') ORDER BY 1`);
  const bad = r.getRowObjectsJson().map((o) => `${String(o.c)} (${String(o.data_type)})`);
  if (bad.length) throw new InternalError(`${controlId}: the wide fallback computed ${bad.join(', ')}: a binary float on the money path is never allowed`);
}
