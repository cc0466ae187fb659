/**
 * Athena DDL for the output tables (CONTRACT §6): one CREATE EXTERNAL TABLE per table, with
 * partition projection on `window_date` (a typed `date` projection, so no MSCK REPAIR or Glue
 * crawler is ever needed) and a `storage.location.template`, plus views that select only
 * published runs: `latest_accepted_runs` and `open_breaks_by_age`.
 *
 * Layout assumed (pipeline/outputs.ts): `<store>/outputs/<table>/window_date=YYYY-MM-DD/run=<run_id>/part-00000.parquet`.
 * `window_date` is the only partition column: run ids cannot be enumerated by a projection, and
 * every table carries `run_id` as a column, so the `run=` folder is read as part of its window's
 * partition (Athena reads every object under a partition location). Column types follow the
 * Parquet types exactly (see athenaColumnType); names are quoted everywhere.
 *
 * Published runs only: a run stages its outputs under `_staging/` (outside every table location),
 * publishes its manifest, and only then promotes its objects, `runs` last (publish.ts, outputs.ts).
 * A `runs` row therefore exists only for a run whose manifest is published and whose other tables
 * are in place, and both views start from `runs`.
 */
import { ConfigError } from '../core/errors.js';
import { literal } from '../core/sql-text.js';
import { decimalType, type OutputColumn } from '../outputs/outputs.js';
import { parseS3Url } from '../store/s3-client.js';

/** One statement of the DDL script. */
export interface AthenaStatement {
  readonly kind: 'database' | 'table' | 'view';
  readonly name: string;
  readonly sql: string;
}

/** Where and how to declare the tables. */
export interface DdlOptions {
  /** Glue database name, `[a-z0-9_]+` (default `reckon`). */
  readonly database: string;
  /** The store, `s3://bucket/prefix`: tables live under `<store>/outputs/<table>/`. */
  readonly store: string;
  /** First projected window date, `YYYY-MM-DD` (default 2020-01-01); the range ends at NOW. */
  readonly since?: string;
}

/**
 * The Athena (Hive DDL) type for an output column type: VARCHAR → string, INTEGER → int,
 * BIGINT → bigint, BOOLEAN → boolean, DATE → date, TIMESTAMP_MS → timestamp (Athena reads Parquet
 * timestamps at millisecond precision), DECIMAL(p,s) → decimal(p,s). Throws ConfigError for any
 * other type: Athena would misread it, or it could carry money as a float.
 */
export function athenaColumnType(parquet: string): string {
  const d = decimalType(parquet);
  if (d && d.precision >= 1 && d.precision <= 38 && d.scale <= d.precision) return `decimal(${d.precision},${d.scale})`;
  const t = ({ VARCHAR: 'string', INTEGER: 'int', BIGINT: 'bigint', BOOLEAN: 'boolean', DATE: 'date', TIMESTAMP_MS: 'timestamp' } as Record<string, string>)[parquet];
  if (!t) throw new ConfigError(`output type ${parquet} has no exact Athena type (allowed: VARCHAR, INTEGER, BIGINT, BOOLEAN, DATE, TIMESTAMP_MS, DECIMAL(p≤38,s))`);
  return t;
}

const NAME = /^[a-z][a-z0-9_]*$/;
const q = (name: string) => `"${name}"`;
const bq = (name: string) => `\`${name}\``;

/** `s3://bucket/prefix/outputs/<table>/` */
export function tableLocation(store: string, table: string): string {
  const loc = parseS3Url(store);
  return `s3://${loc.bucket}/${loc.prefix ? `${loc.prefix}/` : ''}outputs/${table}/`;
}

function createTable(db: string, table: string, cols: readonly OutputColumn[], store: string, since: string): string {
  const location = tableLocation(store, table);
  const columns = cols.map((c) => `  ${bq(c.name)} ${athenaColumnType(c.parquet)}`).join(',\n');
  const props: [string, string][] = [
    ['projection.enabled', 'true'],
    ['projection.window_date.type', 'date'],
    ['projection.window_date.format', 'yyyy-MM-dd'],
    ['projection.window_date.range', `${since},NOW`],
    ['projection.window_date.interval', '1'],
    ['projection.window_date.interval.unit', 'DAYS'],
    ['storage.location.template', `${location}window_date=\${window_date}/`],
    ['classification', 'parquet'],
  ];
  return [
    `CREATE EXTERNAL TABLE IF NOT EXISTS ${bq(db)}.${bq(table)} (`,
    columns,
    ')',
    `PARTITIONED BY (${bq('window_date')} string)`,
    'STORED AS PARQUET',
    `LOCATION ${literal(location)}`,
    'TBLPROPERTIES (',
    props.map(([k, v]) => `  ${literal(k)} = ${literal(v)}`).join(',\n'),
    ')',
  ].join('\n');
}

const has = (cols: readonly OutputColumn[] | undefined, ...names: string[]) => cols !== undefined && names.every((n) => cols.some((c) => c.name === n));

/** Latest accepted run per control and window: status CLEAN or BREAKS, latest `started_at` (run id breaks ties). */
function latestAcceptedRuns(db: string, runs: readonly OutputColumn[]): string {
  const cols = [...runs.map((c) => c.name), 'window_date'].map(q).join(', ');
  return [
    `CREATE OR REPLACE VIEW ${q(db)}.${q('latest_accepted_runs')} AS`,
    `SELECT ${cols}`,
    'FROM (',
    `  SELECT r.*, row_number() OVER (PARTITION BY r."control_id", r."window_start", r."window_end" ORDER BY r."started_at" DESC, r."run_id" DESC) AS "rank_in_window"`,
    `  FROM ${q(db)}.${q('runs')} r`,
    `  WHERE r."status" IN ('CLEAN', 'BREAKS')`,
    ') ranked',
    'WHERE "rank_in_window" = 1',
  ].join('\n');
}

/**
 * Open breaks by age. With a `breaks` table (the break store's state as snapshotted by each run):
 * the snapshot of the latest published run, states other than VERIFIED and CLOSED. Without it:
 * the breaks that the latest accepted run of each window still observes, aged from their first
 * observed record time to that run's as-of.
 */
function openBreaksByAge(db: string, tables: Readonly<Record<string, readonly OutputColumn[]>>): string {
  const breaks = tables.breaks;
  if (has(breaks, 'run_id', 'break_id', 'state')) {
    const cols = [...breaks!.map((c) => c.name), 'window_date'].map((n) => `b.${q(n)}`).join(', ');
    return [
      `CREATE OR REPLACE VIEW ${q(db)}.${q('open_breaks_by_age')} AS`,
      `SELECT ${cols}`,
      `FROM ${q(db)}.${q('breaks')} b`,
      `WHERE b."run_id" = (SELECT r."run_id" FROM ${q(db)}.${q('runs')} r ORDER BY r."started_at" DESC, r."run_id" DESC LIMIT 1)`,
      `  AND b."state" NOT IN ('VERIFIED', 'CLOSED')`,
    ].join('\n');
  }
  return [
    `CREATE OR REPLACE VIEW ${q(db)}.${q('open_breaks_by_age')} AS`,
    'WITH first_seen AS (',
    `  SELECT d."break_id", min(d."record_time") AS "first_record_time"`,
    `  FROM ${q(db)}.${q('differences')} d JOIN ${q(db)}.${q('runs')} r ON d."run_id" = r."run_id" AND d."control_id" = r."control_id"`,
    `  WHERE d."break_id" IS NOT NULL`,
    `  GROUP BY d."break_id"`,
    ')',
    `SELECT d."break_id", d."control_id", d."kind", d."key", d."disposition", l."run_id", l."window_start", l."window_end", l."as_of",`,
    `  f."first_record_time", date_diff('millisecond', f."first_record_time", l."as_of") AS "age_ms"`,
    `FROM ${q(db)}.${q('differences')} d`,
    `JOIN ${q(db)}.${q('latest_accepted_runs')} l ON d."run_id" = l."run_id" AND d."control_id" = l."control_id"`,
    `JOIN first_seen f ON d."break_id" = f."break_id"`,
    `WHERE d."disposition" IN ('OPENED', 'REOBSERVED', 'REOPENED')`,
  ].join('\n');
}

/**
 * The whole DDL script for `tables`: CREATE DATABASE, one CREATE EXTERNAL TABLE per table (sorted
 * by name) and the two views (when `runs` and `differences` or `breaks` are among the tables).
 * Throws ConfigError for a bad database name, date or store location, or a column type without an
 * exact Athena type.
 */
export function athenaDdl(tables: Readonly<Record<string, readonly OutputColumn[]>>, opts: DdlOptions): AthenaStatement[] {
  const db = opts.database;
  if (!NAME.test(db)) throw new ConfigError(`--database '${db}' must be [a-z][a-z0-9_]* (a Glue database name)`);
  const since = opts.since ?? '2020-01-01';
  if (!/^[0-9]{4}-[0-9]{2}-[0-9]{2}$/.test(since) || Number.isNaN(Date.parse(`${since}T00:00:00Z`))) throw new ConfigError(`--since '${since}' is not a date YYYY-MM-DD`);
  parseS3Url(opts.store);
  const out: AthenaStatement[] = [{ kind: 'database', name: db, sql: `CREATE DATABASE IF NOT EXISTS ${bq(db)}` }];
  for (const table of Object.keys(tables).sort()) {
    if (!NAME.test(table)) throw new ConfigError(`table name '${table}' must be [a-z][a-z0-9_]*`);
    out.push({ kind: 'table', name: table, sql: createTable(db, table, tables[table], opts.store, since) });
  }
  if (has(tables.runs, 'run_id', 'control_id', 'status', 'window_start', 'window_end', 'started_at', 'as_of')) {
    out.push({ kind: 'view', name: 'latest_accepted_runs', sql: latestAcceptedRuns(db, tables.runs) });
    if (has(tables.breaks, 'run_id', 'break_id', 'state') || has(tables.differences, 'run_id', 'control_id', 'break_id', 'record_time', 'disposition')) {
      out.push({ kind: 'view', name: 'open_breaks_by_age', sql: openBreaksByAge(db, tables) });
    }
  }
  return out;
}

/** The statements as one script: each ends with `;` and a blank line. */
export function ddlScript(statements: readonly AthenaStatement[]): string {
  return statements.map((s) => `${s.sql};\n`).join('\n');
}
