/**
 * The loader's fast path (CONTRACT §1–§2): a Parquet file, or a plain CSV file (see
 * sources/csv-fast.ts), is validated and typed by DuckDB in one `INSERT … SELECT` (load-sql.ts),
 * columnar and in parallel, instead of record by record in JavaScript. Records the SQL does not
 * accept are handed back as reader events and go through the JavaScript validator like any other
 * record, so every quarantine entry (rule, column, row, line, raw text) is the one the JS path
 * would write.
 *
 * Safety nets, all falling back to the JavaScript reader for the whole file:
 * - a file whose schema or header the plan does not cover (missing or repeated columns, column
 *   types left to JS, FLOAT/DOUBLE money columns) never starts the fast path;
 * - any DuckDB error while inserting (a CSV line of the wrong width, a line over DuckDB's limit,
 *   anything unexpected) rolls the statement back;
 * - when the records inserted plus the records handed back do not add up to the file's record
 *   count, the inserted rows are deleted again.
 *
 * File names never reach SQL: DuckDB reads a link with a generated name (names are globs there),
 * and the file's name is bound as a parameter where it is stored (`_source`).
 */
import { link, symlink } from 'node:fs/promises';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { LoadRules } from '../contract/money.js';
import type { DatasetSpec } from '../contract/datasets.js';
import { ChunkAppender } from './chunks.js';
import { ident } from '../core/sql-text.js';
import { planFast, type FastPlan, type NotFast, type SourceColumn, type ZoneJoin } from './fast-path-sql.js';
import { ianaZone, mapRecordLocalTime } from '../contract/local-time.js';
import type { CsvShape } from '../sources/csv-fast.js';
import { parquetTimeColumns, subMicrosecondValues, type ParquetTimeColumn } from '../sources/parquet-time.js';
import { parquetColumnProblem, RAW_KEEP_CHARS, readParquet, type ReadEvent } from '../sources/readers.js';
import { inTimestampRange, parseLocalTimestamp } from '../contract/values.js';
import { isOutOfMemory } from '../core/errors.js';

/** Table holding, per (zone, local hour), the UTC offset of an hour with no DST transition in it. */
const ZONE_TABLE = '__ld_tz';
/** Table holding the records of the current file that the SQL did not accept. */
export const REJECT_TABLE = '__ld_rej';
/**
 * View mode: the duplicate hash (`h`, over the compared columns as load-views.ts computes it) of
 * every record of the current dataset's checked files that the SQL accepted, with its file (`fid`)
 * and record number (`r`), filled from each file's check (views.ts registerViewFile) so that
 * finding exact duplicates needs no second pass over the files: their repeated records are read
 * back by number, not by hashing every record again.
 */
export const VIEW_HASH_TABLE = '__ld_vh';
/**
 * View mode: the checking pass of the current Parquet file, per record its number `r` and the
 * duplicate hash `h` of an accepted record (NULL for one handed back); kept until the next file.
 */
export const CHECK_TABLE = '__ld_chk';
/** Table holding the current plain CSV file as text fields with their record numbers. */
const CSV_TABLE = '__ld_csv';
const SAFE_PATH = /^[A-Za-z0-9_\-/.]+$/;
/** Records handed back per query (see loadCsvFast). */
const REJECT_PAGE_ROWS = 50_000;

/** Result of a fast load: records inserted by SQL, and the events still to process (header, records handed back). */
export interface FastLoad {
  readonly inserted: number;
  readonly events: AsyncGenerator<ReadEvent>;
  /**
   * Set when the file was checked, not inserted (`view` mode): the typed value of each own column
   * over the file (`s`), for a view; `inserted` then counts the records the view will show. The
   * records handed back are listed in REJECT_TABLE (`__row`) until the next file.
   */
  readonly values?: readonly string[];
}

/** Where one file is loaded: the raw table, the file's name (for `_source`), the staged link DuckDB reads. */
export interface FastTarget {
  readonly conn: DuckDBConnection;
  readonly spec: DatasetSpec;
  readonly config: LoadRules;
  readonly rawTable: string;
  readonly relPath: string;
  readonly stagedPath: string;
  /** A file with more records is left to the JS reader, which stops at the bound (contract/limits.ts). */
  readonly maxRecords?: number;
  /** A database extract this run wrote: the type each column was rendered from (WrittenFile.rendered). */
  readonly rendered?: Readonly<Record<string, string>>;
}

/** Makes a link named `stagedPath` (generated, safe) to `realPath`: a hard link, else a symbolic one. */
export async function stageLink(realPath: string, stagedPath: string): Promise<void> {
  await link(realPath, stagedPath).catch(() => symlink(realPath, stagedPath));
}

/** `_source` of a record: the file's name and its row, as `<file>:<row padded to 12>` ($1 is the name). */
const sourceExpr = (row: string) => `$1 || ':' || lpad((${row})::VARCHAR, 12, '0')`;

const countOf = async (conn: DuckDBConnection, sql: string, values: string[] = []): Promise<number> =>
  Number((await conn.runAndReadAll(sql, values)).getRows()[0][0]);

/**
 * Fills ZONE_TABLE with the (zone, local hour) pairs the file uses: for each, the offset (µs) when
 * every wall time of that hour maps to one UTC instant with that same offset (local-time.ts
 * decides, so the rule is the JS path's own); hours with a gap or overlap in them, unknown zones
 * and unreadable hours are left out, so their records go to the JS validator.
 */
async function fillZoneTable(conn: DuckDBConnection, from: string, joins: readonly ZoneJoin[]): Promise<void> {
  await conn.run(`CREATE OR REPLACE TEMP TABLE ${ZONE_TABLE} (zone VARCHAR, hour VARCHAR, off_us BIGINT)`);
  const pairs = joins.map((j) => `SELECT ${j.zone} AS zone, substr(${j.local}, 1, 13) AS hour FROM ${from}`).join(' UNION ALL ');
  const rows = (await conn.runAndReadAll(`SELECT DISTINCT zone, hour FROM (${pairs}) WHERE zone IS NOT NULL AND hour IS NOT NULL`)).getRows();
  const app = await ChunkAppender.open(conn, ZONE_TABLE, ['VARCHAR', 'VARCHAR', 'BIGINT']);
  try {
    for (const [zoneName, hourText] of rows as [string, string][]) {
      const zone = ianaZone(zoneName);
      const start = parseLocalTimestamp(`${hourText}:00:00`);
      if (!zone || !start.ok || !/^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}$/.test(hourText)) continue;
      const end = start.value + 3_599_999_999n;
      const a = mapRecordLocalTime(zone, start.value);
      const b = mapRecordLocalTime(zone, end);
      if (!a.ok || !b.ok || a.ambiguous || b.ambiguous) continue;
      if (start.value - a.utcMicros !== end - b.utcMicros) continue;
      if (!inTimestampRange(a.utcMicros) || !inTimestampRange(b.utcMicros)) continue;
      app.push([zoneName, hourText, start.value - a.utcMicros]);
    }
  } finally {
    app.close();
  }
}

/** The plan's LEFT JOINs: zone-hour offsets, and value lookups over `scan` (the file's table function). */
const joinSql = (plan: FastPlan, scan: string) =>
  plan.joins.map((j) => ` LEFT JOIN ${ZONE_TABLE} ${j.alias} ON ${j.alias}.zone = ${j.zone} AND ${j.alias}.hour = substr(${j.local}, 1, 13)`).join('')
  + plan.lookups.map((l) => ` LEFT JOIN (SELECT k, ${l.value} AS v FROM (SELECT k, k::VARCHAR AS vk FROM (SELECT DISTINCT ${l.column} AS k FROM ${scan}))) ${l.alias} ON ${l.alias}.k = ${l.ref}`).join('');

/**
 * Inserts the accepted records of `from` (a relation aliased `s`, with a 1-based record number
 * `__row`). When fewer than `total` were accepted, the others are stored in REJECT_TABLE with
 * their `__row` and the `extra` source columns (a second pass, only for files with such records).
 */
async function insertAccepted(t: FastTarget, plan: FastPlan, from: string, scan: string, extra: readonly string[], total: number): Promise<{ inserted: number; rejected: number }> {
  let inner = `SELECT ${plan.inner}, __row${extra.map((c) => `, s.${c}`).join('')} FROM ${from}${joinSql(plan, scan)}`;
  for (const layer of plan.layers) inner = `SELECT *, ${layer.join(', ')} FROM (${inner})`;
  const ins = await t.conn.run(
    `INSERT INTO ${ident(t.rawTable)} SELECT ${plan.outer.join(', ')}, ${sourceExpr('__row')} FROM (${inner}) WHERE ${plan.ok}`,
    [t.relPath],
  );
  const inserted = ins.rowsChanged;
  if (inserted >= total) return { inserted, rejected: 0 };
  await t.conn.run(`CREATE OR REPLACE TEMP TABLE ${REJECT_TABLE} AS SELECT __row${extra.map((c) => `, ${c}`).join('')} FROM (${inner}) WHERE NOT (${plan.ok})`);
  return { inserted, rejected: await countOf(t.conn, `SELECT count(*) FROM ${REJECT_TABLE}`) };
}

/** Deletes the rows this file put in the raw table (used when the counts do not add up). */
async function undoInsert(t: FastTarget): Promise<void> {
  await t.conn.run(`DELETE FROM ${ident(t.rawTable)} WHERE substr(_source, 1, length(_source) - 13) = $1`, [t.relPath]);
}

/** Drops the helper tables of the fast path (end of a load). */
export async function dropFastTables(conn: DuckDBConnection): Promise<void> {
  await conn.run(`DROP TABLE IF EXISTS ${ZONE_TABLE}`);
  await conn.run(`DROP TABLE IF EXISTS ${REJECT_TABLE}`);
  await conn.run(`DROP TABLE IF EXISTS ${VIEW_HASH_TABLE}`);
  await conn.run(`DROP TABLE IF EXISTS ${CHECK_TABLE}`);
  await dropCsvTables(conn);
}

async function dropCsvTables(conn: DuckDBConnection): Promise<void> {
  await conn.run(`DROP VIEW IF EXISTS ${CSV_TABLE}`);
  await conn.run(`DROP TABLE IF EXISTS ${CSV_TABLE}_text`);
}

/**
 * Runs `f` with DuckDB's `preserve_insertion_order` on (the run turns it off to save memory), and
 * puts the previous value back afterwards.
 */
async function withInsertionOrder<T>(conn: DuckDBConnection, f: () => Promise<T>): Promise<T> {
  const before = String((await conn.runAndReadAll(`SELECT current_setting('preserve_insertion_order')`)).getRows()[0][0]) === 'true';
  if (before) return f();
  await conn.run('SET preserve_insertion_order = true');
  try {
    return await f();
  } finally {
    await conn.run('SET preserve_insertion_order = false');
  }
}

/** A Parquet file's fast-path plan, from its schema and metadata only: what the checking pass and a view need. */
interface ParquetPlan {
  readonly plan: FastPlan;
  /** The file's record count. */
  readonly total: number;
  /** Its column names, in file order. */
  readonly names: readonly string[];
}

/**
 * Plans a Parquet file for the fast path from its schema (nothing but metadata is read, except the
 * sub-microsecond check of nanosecond timestamps), or returns NotFast when the JS reader must read
 * it whole. `mode` view: the plan must need no joins (a view over the file shows the values as typed).
 */
async function planParquet(t: FastTarget, mode: 'insert' | 'view'): Promise<ParquetPlan | NotFast> {
  const { conn, spec, stagedPath } = t;
  if (!SAFE_PATH.test(stagedPath)) return { reason: 'unsafe staged path' };
  let schema: { name: string; type: string }[];
  let total: number;
  let time: Map<string, ParquetTimeColumn>;
  try {
    schema = (await conn.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${stagedPath}')`)).getRowObjectsJson().map((o) => ({ name: String(o.column_name), type: String(o.column_type) }));
    total = await countOf(conn, `SELECT count(*) FROM read_parquet('${stagedPath}')`);
    time = await parquetTimeColumns(conn, stagedPath, schema.map((c) => c.name));
  } catch (e) {
    if (isOutOfMemory(e)) throw e; // the run's memory, not the file: no fallback to the slower path
    return { reason: 'the schema cannot be read (the JS reader reports it)' };
  }
  if (t.maxRecords !== undefined && total > t.maxRecords) return { reason: `the file holds ${total} records, more than limits.max_file_records` };
  // The names as the file spells them (DuckDB renames a repeated one to `price_1`).
  const names = schema.map((c) => time.get(c.name)?.parquetName ?? c.name);
  const sources = new Map<string, SourceColumn>();
  for (const col of spec.columns) {
    const found = schema.filter((c) => c.name === col.name);
    const named = names.filter((n) => n === col.name).length;
    if (found.length !== 1 || named !== 1) return { reason: `column ${col.name} appears ${named} times` };
    if (parquetColumnProblem(col, found[0].type)) return { reason: `column ${col.name} is ${found[0].type}` };
    if (col.kind === 'timestamp' && time.get(col.name)?.naive) return { reason: `column ${col.name} holds timestamps without zone (the JS reader rejects them)` };
    if (col.kind === 'timestamp' && time.get(col.name)?.utcNanos) {
      // DuckDB reads these truncated to the microsecond: only a file with none below it stays here.
      const below = await subMicrosecondValues(stagedPath, time.get(col.name)!.parquetName, 1).catch((e: Error) => e);
      if (below instanceof Error || below.size) return { reason: `column ${col.name} holds nanoseconds DuckDB would truncate (the JS reader reports them)` };
    }
    sources.set(col.name, { type: found[0].type, ref: `s.${ident(col.name)}` });
  }
  const plan = planFast(spec, sources, 'parquet', t.config.rounding_mode);
  if ('reason' in plan) return plan;
  if (mode === 'view' && (plan.joins.length || plan.lookups.length || plan.layers.length || plan.outer.length !== plan.values.length)) {
    return { reason: 'internal: a dataset with derived columns cannot be read through a view' };
  }
  return { plan, total, names };
}

/**
 * The typed value of each own column of a Parquet file read through a view (FastPlan.values) and
 * its record count, from its schema alone: for a file whose check is already known (the delivery
 * cache). NotFast when the file would not take the fast path.
 */
export async function parquetViewValues(t: FastTarget): Promise<{ values: readonly string[]; total: number } | NotFast> {
  const p = await planParquet(t, 'view');
  return 'reason' in p ? p : { values: p.plan.values, total: p.total };
}

/**
 * Loads a Parquet file through the fast path, or returns NotFast (nothing was inserted) when the
 * JS reader must read it whole. The events returned hold the header and the records handed back.
 * In view mode the check's table (CHECK_TABLE: the duplicate hash `h` of each accepted record, the
 * number `r` of each other one) is kept until the next file, for the delivery cache.
 */
export async function loadParquetFast(t: FastTarget, mode: 'insert' | 'view' = 'insert'): Promise<FastLoad | NotFast> {
  const { conn, spec, stagedPath } = t;
  const planned = await planParquet(t, mode);
  if ('reason' in planned) return planned;
  const { plan, total, names } = planned;
  const scan = `read_parquet('${stagedPath}', file_row_number = true)`;
  let counts: { inserted: number; rejected: number };
  const from = `(SELECT *, file_row_number + 1 AS __row FROM ${scan}) s`;
  try {
    if (mode === 'view') {
      // One checking pass keeps the numbers of the records the SQL does not accept and the
      // duplicate hash of the others (the same typed values and columns as the view's).
      const key = spec.columns.filter((c) => c.name !== spec.deliveryColumn).map((c) => ident(c.name)).join(', ');
      await conn.run(`CREATE OR REPLACE TEMP TABLE ${CHECK_TABLE} AS SELECT CASE WHEN ${plan.ok} THEN hash(${key}) END AS h, __row AS r FROM (SELECT ${plan.inner}, __row FROM ${from})`);
      await conn.run(`CREATE OR REPLACE TEMP TABLE ${REJECT_TABLE} AS SELECT r AS __row FROM ${CHECK_TABLE} WHERE h IS NULL`);
      const rejected = await countOf(conn, `SELECT count(*) FROM ${REJECT_TABLE}`);
      const hashed = await countOf(conn, `SELECT count(h) FROM ${CHECK_TABLE}`);
      // The hashes count only for a file the view will read (the counts add up, checked below):
      // they join VIEW_HASH_TABLE when the file is registered (views.ts registerViewFile).
      counts = { inserted: hashed, rejected };
    } else {
      if (plan.joins.length) await fillZoneTable(conn, `${scan} s`, plan.joins);
      counts = await insertAccepted(t, plan, from, `read_parquet('${stagedPath}')`, [], total);
    }
  } catch (e) {
    if (isOutOfMemory(e)) throw e;
    return { reason: `DuckDB could not read the file on the fast path: ${(e as Error).message.split('\n')[0]}` };
  }
  const values = mode === 'view' ? plan.values : undefined;
  if (counts.inserted + counts.rejected !== total) {
    await undoInsert(t);
    return { reason: `fast path counted ${counts.inserted} + ${counts.rejected} records of ${total}` };
  }
  if (counts.rejected === 0) {
    return { inserted: counts.inserted, values, events: (async function* () { yield { type: 'header', columns: names } as ReadEvent; })() };
  }
  return { inserted: counts.inserted, values, events: readParquet(conn, stagedPath, spec.columns, `file_row_number + 1 IN (SELECT __row FROM ${REJECT_TABLE})`) };
}

/**
 * Loads a plain CSV file (shape from sources/csv-fast.ts) through the fast path, or returns
 * NotFast (nothing was inserted). Records handed back are rebuilt from DuckDB's fields: in a plain
 * file a record is one line, so its raw text is its fields joined by commas and its line is row + 1.
 */
export async function loadCsvFast(t: FastTarget, shape: CsvShape): Promise<FastLoad | NotFast> {
  const { conn, spec, stagedPath } = t;
  if (!shape.plain || !shape.header) return { reason: 'not a plain CSV file' };
  if (!SAFE_PATH.test(stagedPath)) return { reason: 'unsafe staged path' };
  if (t.maxRecords !== undefined && shape.records > t.maxRecords) return { reason: `the file holds ${shape.records} records, more than limits.max_file_records` };
  const header = shape.header;
  if (header.some((h) => /[\u0000-\u001f\u007f]/.test(h))) return { reason: 'the header holds a control character' };
  const sources = new Map<string, SourceColumn>();
  for (const col of spec.columns) {
    const at = header.flatMap((h, i) => (h === col.name ? [i] : []));
    if (at.length !== 1) return { reason: `column ${col.name} appears ${at.length} times in the header` };
    sources.set(col.name, { type: 'VARCHAR', ref: `s.c${at[0]}`, rendered: t.rendered?.[col.name] });
  }
  const plan = planFast(spec, sources, 'csv', t.config.rounding_mode);
  if ('reason' in plan) return plan;
  const cols = header.map((_, i) => `'c${i}': 'VARCHAR'`).join(', ');
  const csv = `read_csv('${stagedPath}', header = true, auto_detect = false, delim = ',', quote = '"', escape = '"', strict_mode = true, columns = {${cols}})`;
  let counts: { inserted: number; rejected: number };
  try {
    // The file's fields as text, in file order: with insertion order preserved, DuckDB's parallel
    // CSV scan stores record k of the file (a plain file has one record per line) at row id k − 1.
    // Everything after this runs in parallel on the table.
    await withInsertionOrder(conn, () => conn.run(`CREATE OR REPLACE TEMP TABLE ${CSV_TABLE}_text AS SELECT * FROM ${csv}`));
    await conn.run(`CREATE OR REPLACE TEMP VIEW ${CSV_TABLE} AS SELECT rowid + 1 AS __row, * FROM ${CSV_TABLE}_text`);
    const read = await countOf(conn, `SELECT count(*) FROM ${CSV_TABLE}_text`);
    if (read !== shape.records) {
      await dropCsvTables(conn);
      return { reason: `DuckDB read ${read} records, the byte scan counted ${shape.records}` };
    }
    if (plan.joins.length) await fillZoneTable(conn, `${CSV_TABLE} s`, plan.joins);
    counts = await insertAccepted(t, plan, `${CSV_TABLE} s`, CSV_TABLE, header.map((_, i) => `c${i}`), shape.records);
  } catch (e) {
    await dropCsvTables(conn);
    if (isOutOfMemory(e)) throw e;
    return { reason: `DuckDB could not read the file on the fast path: ${(e as Error).message.split('\n')[0]}` };
  }
  await dropCsvTables(conn);
  if (counts.inserted + counts.rejected !== shape.records) {
    await undoInsert(t);
    return { reason: `fast path counted ${counts.inserted} + ${counts.rejected} records of ${shape.records}` };
  }
  const events = async function* (): AsyncGenerator<ReadEvent> {
    yield { type: 'header', columns: header };
    if (counts.rejected === 0) return;
    // Pages by record number, each a complete query: an open stream would end early once the
    // loader appends on the same connection.
    const last = await countOf(conn, `SELECT max(__row) FROM ${REJECT_TABLE}`);
    for (let lo = 1; lo <= last; lo += REJECT_PAGE_ROWS) {
      const rows = (await conn.runAndReadAll(`SELECT * FROM ${REJECT_TABLE} WHERE __row >= ${lo} AND __row < ${lo + REJECT_PAGE_ROWS} ORDER BY __row`)).getRows();
      for (const r of rows) {
        const row = Number(r[0]);
        const values = r.slice(1).map((v) => (v === null ? null : String(v)));
        const fields = new Map<string, string | null>();
        for (let i = 0; i < header.length; i++) fields.set(header[i], values[i]);
        const text = values.map((v) => v ?? '').join(',');
        const rawText = text.length > RAW_KEEP_CHARS ? `${text.slice(0, RAW_KEEP_CHARS)}…` : text;
        yield { type: 'record', row, line: row + 1, raw: rawText, fields };
      }
    }
  };
  return { inserted: counts.inserted, events: events() };
}
