/**
 * Datasets of CONTRACT §2 as PostgreSQL tables, for the database-source tests and benchmark
 * (issue 21): a table per dataset with the column types an authority would use (timestamptz,
 * numeric, bigint, date, time, boolean, char(3) currencies, timestamp without zone for `*_local`
 * times), and the reference design's `projection_checkpoint` table holding each dataset's
 * watermark. Rows go in with COPY FROM STDIN.
 */
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import copyStreams from 'pg-copy-streams';
import { datasetSpec, type ColumnKind } from '../pipeline/contract/datasets.js';
import { csvField } from '../pipeline/sources/postgres/extract.js';

/** The PostgreSQL column type an authority would give each contract kind. */
export const PG_TYPE: Record<ColumnKind, string> = {
  timestamp: 'timestamptz', local_timestamp: 'timestamp', timezone: 'text', date: 'date', cutoff: 'time', int: 'bigint',
  decimal: 'numeric', amount_minor: 'numeric(38,0)', currency: 'char(3)', id: 'text', enum: 'text', text: 'text', bool: 'boolean',
};

/** The CREATE TABLE statement of `dataset` as table `table`, each column of CONTRACT §2 in order with PG_TYPE (or `types`); docs/postgres.md lists it. */
export function datasetTableDdl(dataset: string, table = dataset, types: Record<string, string> = {}): string {
  const cols = datasetSpec(dataset).columns.map((c) => `${c.name} ${types[c.name] ?? PG_TYPE[c.kind]}`);
  return `CREATE TABLE ${table} (${cols.join(', ')});`;
}

/** Creates table `table` (default: the dataset's name) with the dataset's columns; `types` overrides some. */
export async function createDatasetTable(client: pg.Client, dataset: string, table = dataset, types: Record<string, string> = {}): Promise<void> {
  await client.query(`DROP TABLE IF EXISTS ${table}`);
  await client.query(datasetTableDdl(dataset, table, types));
}

/** Appends rows (text in the contract's forms, null for empty) with COPY FROM STDIN. */
export async function copyRows(client: pg.Client, table: string, columns: readonly string[], rows: readonly (readonly (string | null)[])[]): Promise<void> {
  const text = rows.map((r) => `${r.map((v) => csvField(v, false)).join(',')}\n`).join('');
  const stream = client.query(copyStreams.from(`COPY ${table} (${columns.map((c) => `"${c}"`).join(', ')}) FROM STDIN (FORMAT csv)`));
  await pipeline(Readable.from([Buffer.from(text, 'utf8')]), stream);
}

/** Appends a CSV file with a header row (the columns named in its first line) with COPY FROM STDIN. */
export async function copyCsvFile(client: pg.Client, table: string, header: readonly string[], file: string): Promise<number> {
  const stream = client.query(copyStreams.from(`COPY ${table} (${header.map((c) => `"${c}"`).join(', ')}) FROM STDIN (FORMAT csv, HEADER true)`));
  await pipeline(createReadStream(file), stream);
  return stream.rowCount;
}

/** Creates `projection_checkpoint` (projection_name, last_event_time, complete, …), empty. */
export async function createCheckpointTable(client: pg.Client): Promise<void> {
  await client.query('DROP TABLE IF EXISTS projection_checkpoint');
  await client.query(`CREATE TABLE projection_checkpoint (projection_name text PRIMARY KEY, last_event_time timestamptz, last_event_id uuid,
    lag_seconds integer NOT NULL DEFAULT 0, status text NOT NULL DEFAULT 'RUNNING', updated_at timestamptz NOT NULL DEFAULT now(), complete boolean)`);
}

/** Records a dataset's watermark in `projection_checkpoint`. */
export async function recordCheckpoint(client: pg.Client, dataset: string, watermark: string, complete: boolean | null): Promise<void> {
  await client.query('INSERT INTO projection_checkpoint (projection_name, last_event_time, complete) VALUES ($1, $2, $3)', [dataset, watermark, complete]);
}

/** The watermark query of a dataset whose watermark is in `projection_checkpoint`. */
export const checkpointQuery = (dataset: string) => `select last_event_time, complete from projection_checkpoint where projection_name = '${dataset}'`;
