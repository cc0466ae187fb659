/**
 * The records behind each difference (issue 19; docs/records.md). A control's `sql/rcNN/records.sql`
 * names, for every difference it found, the loaded records on each side of the comparison: their
 * dataset and lineage (`_source`, `<file>:<record number padded to 12>`, which load/ writes on every
 * record, the same file and record number a quarantine entry uses). It runs right after
 * differences.sql, while the control's `rcNN_…` objects still exist, with the control's merged
 * differences in CONTROL_DIFFERENCES_TABLE `(kind, key)` to join against.
 *
 * Every control's records are evaluated the same way, and they never pass through JavaScript in
 * full: the rows go into DIFFERENCE_RECORDS_TABLE in DuckDB (the `difference_records` output is
 * written from it), and only the first RECORDS_LISTED of each difference, with its count, come
 * back for the manifest and `--json`. A row for a (kind, key) that is not a difference of the
 * control, for a dataset the control does not read, or without lineage is a bug in the SQL:
 * InternalError (exit 70), naming the file.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { duckdb } from '../core/duckdb.js';
import { InternalError, invariant } from '../core/errors.js';
import { literal } from '../core/sql-text.js';
import { ChunkAppender } from '../load/chunks.js';
import { queryScript, splitStatements } from './sql-scripts.js';

/** The columns of every query of a records.sql, in this order (all text). */
export const RECORD_COLUMNS = ['kind', 'key', 'side', 'dataset', 'source', 'record_key'] as const;

/** Temp table holding the control's differences `(kind, key)` while its records.sql runs. */
export const CONTROL_DIFFERENCES_TABLE = 'control_differences';

/**
 * DuckDB table holding the records of every difference of a run: `(control_id, kind, key, side,
 * dataset, file, record_number BIGINT, record_key)`, one row per distinct record per difference.
 */
export const DIFFERENCE_RECORDS_TABLE = '__difference_records';

/**
 * Session variable holding, while a records.sql runs, every part of the control's difference keys
 * (`split_part(key, '|', n)` for every n) as a VARCHAR list, NULL beyond 32 (`short_list`,
 * sql/common/macros.sql): `in_key_parts(x)` on a large dataset's column keeps only rows that can
 * match a key part, before the join.
 */
export const KEY_PARTS_VARIABLE = 'difference_key_parts';

/** Records listed per difference in the manifest and `--json` (the `difference_records` output holds every one). */
export const RECORDS_LISTED = 4;

/**
 * One record behind a difference: the side of the comparison it stands on (`internal`, `venue`,
 * `debit`, …, per control: docs/records.md), its dataset, source file (relative to the source
 * location, as in the manifest), record number (1 = first data record of the file, as in the
 * quarantine) and its identifying key in its dataset (e.g. `execution_id`).
 */
export interface RecordRef {
  readonly side: string;
  readonly dataset: string;
  readonly file: string;
  readonly record_number: number;
  readonly record_key: string;
}

/** How many records stand behind a difference, and the first RECORDS_LISTED of them. */
export interface DifferenceRecords {
  readonly count: number;
  readonly listed: readonly RecordRef[];
}

/** What records.sql is run with: the control's id, the datasets it reads, the script and its path (for messages). */
export interface RecordsScript {
  readonly control_id: string;
  readonly reads: readonly string[];
  readonly sql: string;
  readonly path: string;
}

const FOUND = '__records_found';
const CONTROL_RECORDS = '__records_control';

/** The map key of a difference. Kinds are `[A-Z_]+`, so the NUL never collides. */
export const differenceKey = (kind: string, key: string) => `${kind}\u0000${key}`;

const RECORDS_TABLE_DDL = `CREATE TEMP TABLE IF NOT EXISTS ${DIFFERENCE_RECORDS_TABLE} (control_id VARCHAR, kind VARCHAR, key VARCHAR, side VARCHAR, dataset VARCHAR, file VARCHAR, record_number BIGINT, record_key VARCHAR)`;

/** Creates DIFFERENCE_RECORDS_TABLE unless it exists (a run with no records still writes an empty output). */
export async function ensureRecordsTable(conn: DuckDBConnection): Promise<void> {
  await conn.run(RECORDS_TABLE_DDL);
}

/**
 * Runs `script` against the loaded tables with `differences` in CONTROL_DIFFERENCES_TABLE; adds
 * the records to DIFFERENCE_RECORDS_TABLE and returns, per difference (differenceKey), the count
 * and the first `listed` records, a record of each side before a second of any (sides, then
 * dataset, file and record number, in byte order). A difference with no record is absent.
 * Throws InternalError for a script without a query, a query with other columns, or a bad row.
 */
export async function evaluateRecords(
  conn: DuckDBConnection, script: RecordsScript, differences: readonly { kind: string; key: string }[], listed = RECORDS_LISTED,
): Promise<Map<string, DifferenceRecords>> {
  const file = script.path;
  await conn.run(`${RECORDS_TABLE_DDL};\n    CREATE OR REPLACE TEMP TABLE ${CONTROL_DIFFERENCES_TABLE} (kind VARCHAR, key VARCHAR)`);
  const app = await ChunkAppender.open(conn, CONTROL_DIFFERENCES_TABLE, ['VARCHAR', 'VARCHAR']);
  try {
    for (const d of differences) app.push([d.kind, d.key]);
  } finally {
    app.close();
  }
  // Every part of every key (split at '|'), as a constant list records.sql can filter a large
  // dataset by before it joins: DuckDB evaluates such a filter in the scan, so a view's columns
  // (`_source` above all) are computed for the few rows that can match instead of every row.
  await conn.run(`CREATE OR REPLACE TEMP TABLE ${FOUND} (${RECORD_COLUMNS.map((c) => `${c} VARCHAR`).join(', ')});
    SET VARIABLE ${KEY_PARTS_VARIABLE} = (SELECT short_list(coalesce(list(DISTINCT p ORDER BY p), []::VARCHAR[])) FROM (SELECT unnest(string_split(key, '|')) AS p FROM ${CONTROL_DIFFERENCES_TABLE}))`);
  try {
    await runQueries(conn, script.sql, file);
    const problems = await queryScript(conn, problemsSql(script.reads));
    if (problems.length) throw new InternalError(`${file}: ${problems.map((p) => p.problem).join('; ')}`);
    // The control's distinct records, added to the run's, then listed: one call.
    const rows = await queryScript(conn, `CREATE OR REPLACE TEMP TABLE ${CONTROL_RECORDS} AS SELECT DISTINCT ${literal(script.control_id)} AS control_id, kind, key, side, dataset,
      substr(source, 1, length(source) - 13) AS file, CAST(right(source, 12) AS BIGINT) AS record_number, record_key FROM ${FOUND};
      INSERT INTO ${DIFFERENCE_RECORDS_TABLE} SELECT * FROM ${CONTROL_RECORDS};
      ${listingSql(listed)}`);
    return listingOf(rows, listed);
  } finally {
    await conn.run([FOUND, CONTROL_RECORDS, CONTROL_DIFFERENCES_TABLE].map((t) => `DROP TABLE IF EXISTS ${t}`).join('; '));
  }
}

/**
 * Runs every statement of records.sql in order; the rows of each query (a SELECT) go into FOUND
 * inside DuckDB, the other statements only run. Statements are cut by splitStatements and counted
 * against DuckDB's own split, so the text wrapped in the INSERT is exactly the statement DuckDB saw.
 */
async function runQueries(conn: DuckDBConnection, sql: string, file: string): Promise<void> {
  const texts = splitStatements(sql);
  const extracted = await conn.extractStatements(sql);
  invariant(texts.length === extracted.count && texts.length >= 1, `${file} splits into ${texts.length} statements, DuckDB counts ${extracted.count}`);
  let queries = 0;
  for (let i = 0; i < texts.length; i++) {
    const p = await extracted.prepare(i);
    let names: string[] | undefined;
    try {
      // A query's columns are its prepared statement's (no DESCRIBE, which would plan it once more).
      if (p.statementType === duckdb().StatementType.SELECT) names = Array.from({ length: p.columnCount }, (_, c) => p.columnName(c));
      else await p.run();
    } finally {
      p.destroySync();
    }
    if (!names) continue;
    queries += 1;
    if (names.join(',') !== RECORD_COLUMNS.join(',')) throw new InternalError(`${file}: query ${queries} returns columns (${names.join(', ')}), not (${RECORD_COLUMNS.join(', ')})`);
    await conn.run(`INSERT INTO ${FOUND} SELECT ${RECORD_COLUMNS.map((c) => `${c}::VARCHAR`).join(', ')} FROM (\n${texts[i]}\n)`);
  }
  if (queries === 0) throw new InternalError(`${file}: the script holds no query`);
}

/** At most three rows `(problem)` naming what is wrong with the rows found; none when all are good. */
function problemsSql(reads: readonly string[]): string {
  return `SELECT problem FROM (
    SELECT 'a row names ' || coalesce(f.kind, 'NULL') || ' ' || coalesce(f.key, 'NULL') || ', which is not a difference of the control' AS problem
      FROM ${FOUND} f ANTI JOIN ${CONTROL_DIFFERENCES_TABLE} d ON d.kind = f.kind AND d.key = f.key
    UNION ALL SELECT 'a row names dataset ' || coalesce(dataset, 'NULL') || ', which the control does not read (its definition reads ${reads.join(', ')})'
      FROM ${FOUND} WHERE dataset IS NULL OR dataset NOT IN (${reads.map(literal).join(', ')})
    UNION ALL SELECT 'a row of ' || kind || ' ' || key || ' has side ' || coalesce(side, 'NULL') || ' (sides are [a-z][a-z_]*)'
      FROM ${FOUND} WHERE side IS NULL OR NOT regexp_full_match(side, '[a-z][a-z_]*')
    UNION ALL SELECT 'a row of ' || kind || ' ' || key || ' has source ' || coalesce(source, 'NULL') || ' (the record''s _source, <file>:<12 digits>)'
      FROM ${FOUND} WHERE source IS NULL OR NOT regexp_full_match(source, '.+:[0-9]{12}')
    UNION ALL SELECT 'a row of ' || kind || ' ' || key || ' has no record_key'
      FROM ${FOUND} WHERE record_key IS NULL OR record_key = ''
  ) LIMIT 3`;
}

/** The first `listed` records of each difference (a record of each side before a second of any), with the difference's count. */
function listingSql(listed: number): string {
  invariant(Number.isInteger(listed) && listed >= 0, `records listed per difference must be a whole number, not ${listed}`);
  return `SELECT kind, key, side, dataset, file, record_number::VARCHAR AS record_number, record_key, n::VARCHAR AS n FROM (
    SELECT *, count(*) OVER (PARTITION BY kind, key) AS n,
           row_number() OVER (PARTITION BY kind, key ORDER BY r, side, dataset, file, record_number) AS i
    FROM (SELECT *, row_number() OVER (PARTITION BY kind, key, side ORDER BY dataset, file, record_number) AS r FROM ${CONTROL_RECORDS})
  ) WHERE i <= ${Math.max(listed, 1)} ORDER BY kind, key, i`;
}

function listingOf(rows: readonly Record<string, string | null>[], listed: number): Map<string, DifferenceRecords> {
  const out = new Map<string, { count: number; listed: RecordRef[] }>();
  for (const r of rows) {
    const k = differenceKey(r.kind!, r.key!);
    let entry = out.get(k);
    if (!entry) out.set(k, (entry = { count: Number(r.n), listed: [] }));
    if (entry.listed.length < listed) entry.listed.push({ side: r.side!, dataset: r.dataset!, file: r.file!, record_number: Number(r.record_number), record_key: r.record_key! });
  }
  return out;
}
