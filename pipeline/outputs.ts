/**
 * Output tables as Parquet (CONTRACT §6): `runs`, `control_totals`, `differences`, `quarantine`,
 * under Hive-style partitions `outputs/<table>/window_date=YYYY-MM-DD/run=<run_id>/part-00000.parquet`
 * (partition values are `[a-z0-9_-]` and the date). Timestamps are millisecond timestamps with the
 * exact ISO text beside them; money and quantities are DECIMAL(38,18) or text, never a float or
 * HUGEINT. Files are written to the run's staging directory (a leading `_`, ignored by readers)
 * and published under their final keys only after the manifest.
 */
import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { hashFile } from './sources/files.js';
import { ident } from './load.js';

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
  ],
  differences: [
    { name: 'run_id', parquet: 'VARCHAR' }, { name: 'window_start', parquet: 'TIMESTAMP_MS' }, { name: 'window_end', parquet: 'TIMESTAMP_MS' },
    { name: 'control_id', parquet: 'VARCHAR' }, { name: 'status', parquet: 'VARCHAR' }, { name: 'kind', parquet: 'VARCHAR' },
    { name: 'key', parquet: 'VARCHAR' }, { name: 'detail', parquet: 'VARCHAR' }, { name: 'record_time', parquet: 'TIMESTAMP_MS' },
    { name: 'record_time_text', parquet: 'VARCHAR' }, { name: 'break_id', parquet: 'VARCHAR' }, { name: 'disposition', parquet: 'VARCHAR' },
  ],
  quarantine: [
    { name: 'run_id', parquet: 'VARCHAR' }, { name: 'window_start', parquet: 'TIMESTAMP_MS' }, { name: 'dataset', parquet: 'VARCHAR' },
    { name: 'file', parquet: 'VARCHAR' }, { name: 'row', parquet: 'BIGINT' }, { name: 'line', parquet: 'BIGINT' }, { name: 'column', parquet: 'VARCHAR' },
    { name: 'rule', parquet: 'VARCHAR' }, { name: 'message', parquet: 'VARCHAR' }, { name: 'raw', parquet: 'VARCHAR' },
  ],
};

/** Staged rows: every value as text (or null); typed when copied to Parquet. Timestamps as ISO text. */
export type OutputRows = Readonly<Record<string, readonly (readonly (string | null)[])[]>>;

function typedExpr(c: OutputColumn): string {
  const col = ident(c.name);
  switch (c.parquet) {
    case 'TIMESTAMP_MS': return `CAST(strptime(${col}, ['%Y-%m-%dT%H:%M:%S.%fZ', '%Y-%m-%dT%H:%M:%SZ']) AS TIMESTAMP_MS) AS ${col}`;
    case 'DECIMAL(38,18)': return `TRY_CAST(CASE WHEN regexp_full_match(${col}, '-?[0-9]{1,20}(\\.[0-9]{1,18})?') THEN ${col} END AS DECIMAL(38,18)) AS ${col}`;
    case 'VARCHAR': return col;
    default: return `CAST(${col} AS ${c.parquet}) AS ${col}`;
  }
}

/**
 * Writes each table's rows to one Parquet file in `stagingDir` and returns the objects with the
 * keys they will be published under. Tables with no rows are still written (zero-row files), so
 * every run has the same set of objects.
 */
export async function writeOutputs(
  conn: DuckDBConnection, stagingDir: string, windowDate: string, runId: string, rows: OutputRows,
  tables: Readonly<Record<string, readonly OutputColumn[]>> = OUTPUT_TABLES,
): Promise<OutputObject[]> {
  if (!/^[a-z0-9_-]+$/.test(runId) || !/^[0-9]{4}-[0-9]{2}-[0-9]{2}$/.test(windowDate)) throw new Error('unsafe partition value');
  const out: OutputObject[] = [];
  for (const [table, cols] of Object.entries(tables)) {
    const staging = `out_${table}`;
    await conn.run(`CREATE OR REPLACE TEMP TABLE ${staging} (${cols.map((c) => `${ident(c.name)} VARCHAR`).join(', ')})`);
    const app = await conn.createAppender(staging);
    const data = rows[table] ?? [];
    for (const r of data) {
      for (const v of r) { if (v === null) app.appendNull(); else app.appendVarchar(v); }
      app.endRow();
    }
    app.closeSync();
    const rel = `${table}/window_date=${windowDate}/run=${runId}/part-00000.parquet`;
    const localPath = join(stagingDir, 'outputs', ...rel.split('/'));
    await mkdir(join(localPath, '..'), { recursive: true });
    if (!/^[A-Za-z0-9_\-/.=]+$/.test(localPath)) throw new Error(`unsafe output path ${localPath}`);
    await conn.run(`COPY (SELECT ${cols.map(typedExpr).join(', ')} FROM ${staging}) TO '${localPath}' (FORMAT parquet, COMPRESSION zstd)`);
    await conn.run(`DROP TABLE ${staging}`);
    const { sha256, size } = await hashFile(localPath);
    void stat;
    out.push({ table, key: `outputs/${rel}`, localPath, sha256, size, rows: data.length });
  }
  return out;
}
