/**
 * Which output tables a store holds and their column types, for `reckon athena ddl`. Tables this
 * build defines (OUTPUT_TABLES, plus any passed in) use their definitions; a table found under
 * `outputs/` that this build does not define (written by a newer build, or by a table set passed to
 * writeOutputs) takes its columns from the Parquet schema of its newest file, mapped back to the
 * output types. A Parquet type that Athena would misread or that could carry money as a float
 * (DOUBLE, FLOAT, microsecond timestamps, …) is refused with the column named.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { duckdb } from '../core/duckdb.js';
import { ConfigError } from '../core/errors.js';
import { OUTPUT_TABLES, type OutputColumn } from '../outputs/outputs.js';
import type { ObjectStore } from '../store/object-store.js';

/** One row of DuckDB's parquet_schema() for a leaf column. */
export interface ParquetLeaf {
  readonly name: string;
  readonly type: string | null;
  readonly converted_type: string | null;
  readonly logical_type: string | null;
  readonly precision: string | null;
  readonly scale: string | null;
}

/**
 * The output type of a Parquet leaf column: UTF8 byte arrays → VARCHAR, INT32 → INTEGER, INT64 →
 * BIGINT, BOOLEAN, DATE, INT64 TIMESTAMP_MILLIS → TIMESTAMP_MS, DECIMAL(p,s). Throws ConfigError
 * (naming `where`) for anything else.
 */
export function outputTypeOfParquet(leaf: ParquetLeaf, where: string): string {
  const { type, converted_type: conv } = leaf;
  if (conv === 'DECIMAL') return `DECIMAL(${leaf.precision},${leaf.scale})`;
  if (type === 'BYTE_ARRAY' && (conv === 'UTF8' || /StringType/.test(leaf.logical_type ?? ''))) return 'VARCHAR';
  if (type === 'BOOLEAN') return 'BOOLEAN';
  if (type === 'INT32' && conv === 'DATE') return 'DATE';
  if (type === 'INT32' && (conv === null || conv === 'INT_32')) return 'INTEGER';
  if (type === 'INT64' && (conv === null || conv === 'INT_64')) return 'BIGINT';
  if (type === 'INT64' && conv === 'TIMESTAMP_MILLIS') return 'TIMESTAMP_MS';
  throw new ConfigError(`${where} is Parquet ${type}${conv ? ` (${conv})` : ''}, which has no exact Athena type in reckon's outputs (float, HUGEINT-as-DOUBLE and microsecond timestamps are refused)`);
}

/** Reads the leaf columns of a local Parquet file, in file order. */
export async function parquetLeaves(path: string): Promise<ParquetLeaf[]> {
  const instance = await duckdb().DuckDBInstance.create(':memory:', { threads: '1' });
  const conn = await instance.connect();
  try {
    const reader = await conn.runAndReadAll(`SELECT name, type, converted_type, logical_type, precision::VARCHAR AS precision, scale::VARCHAR AS scale, num_children FROM parquet_schema($1)`, [path]);
    const text = (v: unknown): string | null => (v === null || v === undefined ? null : typeof v === 'string' ? v : JSON.stringify(v));
    return reader.getRowObjectsJson()
      .filter((r) => r.type !== null && Number(r.num_children ?? 0) === 0)
      .map((r) => ({ name: String(r.name), type: text(r.type), converted_type: text(r.converted_type), logical_type: text(r.logical_type), precision: text(r.precision), scale: text(r.scale) }));
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

/**
 * The output tables of `store`: every table of `known` (default OUTPUT_TABLES), plus every other
 * table found under `outputs/`, with columns read from its newest Parquet file. Throws ConfigError
 * for a table name or column type Athena cannot take exactly, and what the store throws.
 */
export async function discoverOutputTables(
  store: ObjectStore, known: Readonly<Record<string, readonly OutputColumn[]>> = OUTPUT_TABLES,
): Promise<Record<string, readonly OutputColumn[]>> {
  const out: Record<string, readonly OutputColumn[]> = { ...known };
  const byTable = new Map<string, string[]>();
  for (const key of await store.list('outputs')) {
    const parts = key.split('/');
    if (parts.length < 3 || !key.endsWith('.parquet')) continue;
    const name = parts[parts.length - 1];
    if (name.startsWith('_') || name.startsWith('.')) continue;
    byTable.set(parts[1], [...(byTable.get(parts[1]) ?? []), key]);
  }
  const unknown = [...byTable.keys()].filter((t) => !(t in out)).sort();
  if (unknown.length === 0) return out;
  const dir = await mkdtemp(join(tmpdir(), 'reckon-athena-'));
  try {
    for (const table of unknown) {
      if (!/^[a-z][a-z0-9_]*$/.test(table)) throw new ConfigError(`outputs/${table} is not a valid Athena table name ([a-z][a-z0-9_]*)`);
      const newest = byTable.get(table)!.sort().at(-1)!;
      const local = join(dir, `${table}.parquet`);
      await writeFile(local, (await store.get(newest))!);
      out[table] = (await parquetLeaves(local)).map((leaf) => ({ name: leaf.name, parquet: outputTypeOfParquet(leaf, `${newest} column ${leaf.name}`) }));
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return out;
}
