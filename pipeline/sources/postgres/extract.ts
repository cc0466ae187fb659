/**
 * Extracts datasets from one database into CSV files the loader reads (issue 21, docs/postgres.md).
 *
 * Every dataset taken from one database is read inside one read-only transaction — `BEGIN READ
 * ONLY ISOLATION LEVEL REPEATABLE READ` on PostgreSQL, `BEGIN READ ONLY` on Aurora DSQL, whose
 * transactions always read one snapshot — so the extract is a single point in time whatever other
 * sessions commit meanwhile. Rows stream from the server to a scratch file: `COPY (…) TO STDOUT
 * (FORMAT csv, HEADER)` (pg-copy-streams), or for servers without COPY a cursor read a batch at a
 * time (pg-cursor) written in the same CSV form, byte for byte. No dataset is ever held in memory.
 * The rows are put in one fixed order by reckon (line-order.ts), or by the server (ORDER BY) when
 * the file is not plain CSV. Each file's SHA-256 is computed as it is written: the digest of the extract's content.
 *
 * Checking (before the run takes any lease) describes every query and watermark query in its own
 * statement, so that every mistake is reported at once; the extract describes them again inside
 * the snapshot, so the rendering follows the types it reads.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { once } from 'node:events';
import { join } from 'node:path';
import { Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import copyStreams from 'pg-copy-streams';
import Cursor from 'pg-cursor';
import { datasetSpec } from '../../contract/datasets.js';
import type { Window } from '../../contract/window.js';
import { sha256Hex } from '../../core/digest.js';
import { CsvShapeScan, type WrittenFile } from '../csv-fast.js';
import { InputError, InterruptedError } from '../../core/errors.js';
import { NO_FAULTS, type FaultPoints } from '../../core/fault.js';
import { interruptedBy, NO_INTERRUPT, onInterrupt } from '../../core/interrupt.js';
import type { DatasetSource } from '../sources-file.js';
import { cancelStatement, describeTarget, type OpenDatabase, type Session } from './connection.js';
import { LineSorter } from './line-order.js';
import { BUILTIN_TYPES, boundLiteral, quoteIdent, quoteLiteral, renderExpression, renderPlan, type DescribedColumn, type RenderPlan, type RenderedColumn } from './render.js';

/** A dataset read from a database, as the sources file gives it. */
export type DatabaseSource = Extract<DatasetSource, { kind: 'database' }>;

/**
 * One problem found while checking a database's queries, with its path in the sources file;
 * `transient` when the server did not answer for a passing reason (TRANSIENT_STATES), which no
 * change to the sources file fixes and a later run may not meet.
 */
export interface QueryIssue { readonly path: string; readonly message: string; readonly transient?: boolean }

/**
 * SQLSTATEs of a server that could not answer now rather than of a query that cannot run: a
 * statement timeout or cancel (57014; a lock another session holds, a busy server), a lock not
 * available (55P03), a deadlock or serialization failure (40P01, 40001), the server shutting down
 * or starting (57P01–57P03), too many connections or no resources (53xxx), a lost connection (08xxx).
 */
const TRANSIENT_STATES = /^(57014|55P03|40P01|40001|57P0[1-3]|53[0-9A-Z]{3}|08[0-9A-Z]{3})$/;

/** The issue for a query that failed with `e` at `path` (its text masked of any secret). */
function queryIssue(db: OpenDatabase, path: string, e: unknown): QueryIssue {
  const transient = TRANSIENT_STATES.test(sqlStateOf(e) ?? '');
  return { path, message: db.mask(messageOf(e)), ...(transient ? { transient } : {}) };
}

/** A whole-dataset fault (a refused column, a watermark query with several rows): one quarantine entry. */
export interface ExtractFault { readonly column: string | null; readonly rule: string; readonly message: string }

/** What was read for one dataset: the SQL, its columns, row count and content digest. */
export interface DatasetExtract {
  readonly dataset: string;
  /** The SQL the extract ran (the wrapping SELECT over the dataset's query), and its SHA-256. */
  readonly sql: string;
  readonly sql_sha256: string;
  /** The dataset's own query or table SELECT, and its SHA-256. */
  readonly source_sql: string;
  readonly source_sql_sha256: string;
  readonly columns: readonly RenderedColumn[];
  readonly lower_bound: { readonly column: string; readonly from: string } | null;
  readonly rows: number;
  readonly bytes: number;
  readonly content_sha256: string;
  /** The CSV header (the query's column names, the row key's first). */
  readonly header: readonly string[];
  readonly fault?: ExtractFault;
  readonly watermark?: { readonly query: string; readonly query_sha256: string; readonly value: string | null; readonly rows: number };
}

/** Told as each dataset is written: its extract, and the file written with its digest, size and CSV shape (none for a refused dataset). */
export type OnDataset = (x: DatasetExtract, written?: { path: string } & WrittenFile) => void;

/** One database's extract: where, which server, which snapshot, and each dataset. */
export interface DatabaseExtract {
  readonly name: string;
  readonly engine: string;
  readonly host: string;
  readonly port: number;
  readonly database: string;
  readonly user: string;
  readonly sslmode: string;
  /** Whether the lead connection is encrypted (TLS), as it was made: `prefer` may have fallen back to the clear. */
  readonly tls: boolean;
  readonly auth: string;
  readonly reader: 'copy' | 'cursor';
  /** Sessions that read datasets at once in the one snapshot (1: the lead alone). */
  readonly readers: number;
  readonly server_version: string;
  readonly transaction: string;
  /** `pg_current_snapshot()` inside the transaction; null where the server has none (Aurora DSQL). */
  readonly snapshot: string | null;
  readonly transaction_started_at: string | null;
  readonly started_at: string;
  readonly finished_at: string;
  readonly datasets: readonly DatasetExtract[];
}

/**
 * The extract transaction's settings: those PostgreSQL's own time output needs to be read as UTC
 * ISO text (render.ts), and again the statement timeout and no idle-in-transaction timeout the
 * connection asked for at startup, which a pooler told to ignore startup parameters drops
 * silently (docs/postgres.md "Connection poolers"). LOCAL: they end with the transaction, so a
 * pooled server connection is left as it was found.
 */
const transactionSettings = (db: Session) =>
  `SET LOCAL TimeZone = 'UTC'; SET LOCAL DateStyle = 'ISO, YMD'; SET LOCAL statement_timeout = ${Math.trunc(db.target.statementTimeoutMs)}; SET LOCAL idle_in_transaction_session_timeout = 0`;

/** Rows fetched per cursor read (bounded memory whatever the dataset's size). */
const CURSOR_ROWS = 5_000;
const DAY_US = 86_400_000_000n;
const YEAR_1_US = -62_135_596_800_000_000n;

/** Describes a SELECT's result columns (`LIMIT 0`: no row is read). Domains are shown as their base type. */
export async function describeQuery(db: Session, sql: string): Promise<DescribedColumn[]> {
  const r = await db.client.query({ text: `SELECT * FROM (${sql}\n) AS q LIMIT 0`, rowMode: 'array' });
  const unknown = [...new Set(r.fields.map((f) => f.dataTypeID).filter((oid) => BUILTIN_TYPES[oid] === undefined))];
  const names = new Map<number, string>();
  if (unknown.length) {
    // A domain reads as its base type; an enum or another type is shown as its text.
    const t = await db.client.query<{ oid: number; name: string }>(
      `SELECT t.oid::int AS oid, coalesce(b.typname, t.typname)::text AS name FROM pg_type t LEFT JOIN pg_type b ON t.typtype = 'd' AND b.oid = t.typbasetype WHERE t.oid = ANY($1::oid[])`, [unknown]);
    for (const row of t.rows) names.set(row.oid, row.name);
  }
  return r.fields.map((f) => ({ name: f.name, type: BUILTIN_TYPES[f.dataTypeID] ?? names.get(f.dataTypeID) ?? `oid ${f.dataTypeID}` }));
}

const sqlStateOf = (e: unknown) => (e as { code?: string }).code;
const messageOf = (e: unknown) => `${(e as Error).message?.split('\n')[0] ?? String(e)}${/^[0-9A-Z]{5}$/.test(sqlStateOf(e) ?? '') ? ` (SQLSTATE ${sqlStateOf(e)})` : ''}`;

/** The lower bound for `source` in `window`, checked against the described column; an issue text when it cannot apply. */
function boundFor(source: DatabaseSource, cols: readonly DescribedColumn[], window: Window): { column: string; literal: string; from: string } | string | undefined {
  if (!source.since) return undefined;
  const col = cols.find((c) => c.name === source.since!.column);
  if (!col) return `the query returns no column ${source.since.column} for the lower bound`;
  let micros = window.startMicros - BigInt(source.since.daysBeforeWindow) * DAY_US;
  if (micros < YEAR_1_US) micros = YEAR_1_US;
  const literal = boundLiteral(col.type, micros);
  if (!literal) return `the bound column ${col.name} is ${col.type}; a lower bound applies to a timestamptz, timestamp or date column`;
  return { column: col.name, literal, from: literal.replace(/^'([^']*)'.*$/, '$1') };
}

/** The planner's size of a query's result in bytes (rows × width), roughly its CSV size; 0 when it cannot say. */
async function plannedBytes(db: Session, sql: string, columns: number): Promise<number> {
  try {
    const r = await db.client.query<{ 'QUERY PLAN': [{ Plan: { 'Plan Rows': number; 'Plan Width': number } }] }>(`EXPLAIN (FORMAT JSON) SELECT * FROM (${sql}\n) AS q`);
    const plan = r.rows[0]['QUERY PLAN'][0].Plan;
    return Math.round(plan['Plan Rows'] * (plan['Plan Width'] + columns));
  } catch {
    return 0;
  }
}

/**
 * Checks every dataset and watermark query of a database without reading a row: each is
 * described in its own statement, so one mistake does not hide the next. Returns the problems,
 * and the planner's size of each dataset's extract (for sizing the engine before the extract is
 * written).
 */
export async function checkDatabaseQueries(db: OpenDatabase, sources: readonly DatabaseSource[], window: Window): Promise<{ issues: QueryIssue[]; estimates: Map<string, number> }> {
  const issues: QueryIssue[] = [...await checkDsqlSnapshot(db)];
  const estimates = new Map<string, number>();
  for (const s of sources) {
    const at = `datasets.${s.dataset}.${s.table !== undefined ? 'table' : 'query'}`;
    try {
      const cols = await describeQuery(db, s.sourceSql);
      estimates.set(s.dataset, await plannedBytes(db, s.sourceSql, cols.length));
      const dup = cols.map((c) => c.name).filter((n, i, all) => all.indexOf(n) !== i);
      if (dup.length) issues.push({ path: at, message: `the query returns column(s) ${[...new Set(dup)].join(', ')} more than once` });
      const bound = boundFor(s, cols, window);
      if (typeof bound === 'string') issues.push({ path: `datasets.${s.dataset}.since`, message: bound });
    } catch (e) {
      issues.push(queryIssue(db, at, e));
    }
    if (s.watermarkQuery === undefined) continue;
    try {
      const cols = await describeQuery(db, s.watermarkQuery);
      if (!cols.length) issues.push({ path: `datasets.${s.dataset}.watermark.query`, message: 'returns no column; its first column is the watermark' });
    } catch (e) {
      issues.push(queryIssue(db, `datasets.${s.dataset}.watermark.query`, e));
    }
  }
  return { issues, estimates };
}

/**
 * On the Aurora DSQL path the extract's one snapshot rests on DSQL itself: its `BEGIN READ ONLY`
 * is repeatable read by construction, so no isolation level is asked for. A server that answers
 * such a transaction at read committed (a PostgreSQL given `engine: aurora-dsql`) would let each
 * dataset see another point in time: an issue, before any lease. A server that cannot say is
 * taken as DSQL.
 */
async function checkDsqlSnapshot(db: OpenDatabase): Promise<QueryIssue[]> {
  if (db.target.engine !== 'aurora-dsql') return [];
  let level: string | undefined;
  try {
    await db.client.query('BEGIN READ ONLY');
    level = (await db.client.query<{ transaction_isolation: string }>('SHOW transaction_isolation')).rows[0]?.transaction_isolation;
  } catch {
    level = undefined;
  } finally {
    await db.client.query('ROLLBACK').catch(() => undefined);
  }
  if (level !== 'read committed' && level !== 'read uncommitted') return [];
  return [{ path: `databases.${db.target.name}.engine`, message: `is aurora-dsql, but the server runs a read-only transaction at ${level}, so the datasets would not be read at one point in time: it is not Aurora DSQL; give engine: postgres (REPEATABLE READ, one exported snapshot)` }];
}

/** What a dataset's extract file holds: its rows, SHA-256, size and CSV shape (for the loader, which need not read it again). */
type Written = { rows: number; sha256: string; bytes: number; shape: WrittenFile['shape'] };

/** A Transform that hashes (unless `hashing` is false), counts and scans (csv-fast.ts) the bytes passing through. */
function hashTap(hashing = true): { tap: Transform; digest: () => Omit<Written, 'rows'> } {
  const hash = createHash('sha256');
  const scan = new CsvShapeScan();
  let bytes = 0;
  const tap = new Transform({ transform(chunk: Buffer, _enc, cb) { if (hashing) hash.update(chunk); scan.chunk(chunk); bytes += chunk.length; cb(null, chunk); } });
  return { tap, digest: () => ({ sha256: hash.digest('hex'), bytes, shape: scan.result() }) };
}

/** One field as PostgreSQL's COPY CSV writes it: quoted when it holds `,` `"` CR or LF, or is empty (null is nothing). */
export function csvField(v: string | null, only: boolean): string {
  if (v === null) return '';
  if (v === '' || /[",\r\n]/.test(v) || (only && v === '\\.')) return `"${v.replace(/"/g, '""')}"`;
  return v;
}

/** Reads one SELECT's rows into a CSV file (header first), scanned, and hashed when `hashing`. */
type ReadRows = (db: Session, sql: string, header: readonly string[], file: string, hashing: boolean) => Promise<Written>;

/**
 * Reads the dataset into `file` in its fixed order (line-order.ts): as the server sends it, then
 * sorted by reckon when it is plain CSV; otherwise (a value holding a comma, a quote or a line
 * break) read again with the server's ORDER BY, in the same snapshot. COPY and the cursor give the
 * same bytes. Returns what was written and the SQL whose rows it holds.
 */
async function readInOrder(db: Session, plan: Extract<RenderPlan, { kind: 'select' }>, file: string, dataset: string, sorter: LineSorter): Promise<Written & { sql: string }> {
  const read: ReadRows = db.target.reader === 'cursor' ? cursorToFile : copyToFile;
  const unsorted = await sorter.unsortedPath(dataset);
  const first = await read(db, plan.unorderedSql, plan.header, unsorted, false);
  if (first.shape.plain && first.shape.header) {
    if (await sorter.sort(unsorted, file, first.shape.header.join(','))) {
      const { tap, digest } = hashTap();
      await pipeline(createReadStream(file, { highWaterMark: 1 << 20 }), tap, new Writable({ write: (_c, _e, cb) => cb() }));
      const sorted = digest();
      if (sorted.shape.plain && sorted.shape.records === first.rows) return { rows: first.rows, ...sorted, sql: plan.unorderedSql };
    }
  } else {
    await rm(unsorted, { force: true });
  }
  return { ...await read(db, plan.sql, plan.header, file, true), sql: plan.sql };
}

/** One `COPY (sql) TO STDOUT (FORMAT csv, HEADER)` into `file`. */
const copyToFile: ReadRows = async (db, sql, _header, file, hashing) => {
  const { tap, digest } = hashTap(hashing);
  const stream = db.client.query(copyStreams.to(`COPY (${sql}) TO STDOUT (FORMAT csv, HEADER)`));
  await pipeline(stream, tap, createWriteStream(file));
  return { rows: stream.rowCount, ...digest() };
};

/** The rows of `sql` through a cursor, written as COPY's CSV would be, byte for byte. */
const cursorToFile: ReadRows = async (db, sql, header, file, hashing) => {
  const hash = createHash('sha256');
  const scan = new CsvShapeScan();
  const out = createWriteStream(file);
  let bytes = 0;
  let rows = 0;
  const only = header.length === 1;
  const write = async (text: string) => {
    const b = Buffer.from(text, 'utf8');
    if (hashing) hash.update(b);
    scan.chunk(b);
    bytes += b.length;
    if (!out.write(b)) await once(out, 'drain');
  };
  const cursor = db.client.query(new Cursor<unknown[]>(sql, [], { rowMode: 'array' }));
  try {
    await write(`${header.map((h) => csvField(h, only)).join(',')}\n`);
    for (;;) {
      const batch = await cursor.read(CURSOR_ROWS);
      if (!batch.length) break;
      rows += batch.length;
      await write(batch.map((r) => `${(r as (string | null)[]).map((v) => csvField(v, only)).join(',')}\n`).join(''));
    }
  } finally {
    await cursor.close().catch(() => undefined);
    out.end();
    await once(out, 'close');
  }
  return { rows, sha256: hash.digest('hex'), bytes, shape: scan.result() };
};

/** Reads a watermark query inside the snapshot: its first column, and `complete` and `sequence` when it has them. */
async function readWatermark(db: Session, query: string): Promise<{ rows: number; doc?: Record<string, unknown> }> {
  const cols = await describeQuery(db, query);
  const utc = db.target.engine === 'postgres';
  const pick = (name: string, kind: 'bool' | 'int') => cols.find((c) => c.name === name) && renderExpression(`q.${quoteIdent(name)}`, cols.find((c) => c.name === name)!.type, kind, utc);
  const exprs = [renderExpression(`q.${quoteIdent(cols[0].name)}`, cols[0].type, 'timestamp', utc), pick('complete', 'bool') ?? 'NULL', pick('sequence', 'int') ?? 'NULL'];
  const r = await db.client.query({ text: `SELECT ${exprs.join(', ')} FROM (${query}\n) AS q LIMIT 2`, rowMode: 'array' });
  if (r.rows.length !== 1 || r.rows[0][0] === null) return { rows: r.rows.length };
  const [value, complete, sequence] = r.rows[0] as (string | null)[];
  return { rows: 1, doc: { watermark: value, ...(complete !== null ? { complete: complete === 'true' ? true : complete === 'false' ? false : complete } : {}), ...(sequence !== null ? { sequence } : {}) } };
}

/** The error a failed extract raises: InputError (no manifest; the run can be repeated as it is). */
function extractFailure(db: Session, dataset: string, e: unknown): InputError {
  const lost = db.lastError() ?? (/Connection terminated|ECONNRESET|EPIPE|not queryable/i.test(String((e as Error).message)) ? (e as Error) : undefined);
  const where = `database ${db.target.name} (${describeTarget(db.target)})`;
  // A statement the server refuses for its text or its data (classes 22, 25, 42, 0A: a byte not
  // UTF-8, a write in the read-only transaction, an undefined column) fails again on a repeat.
  const standing = !lost && /^(22|25|42|0A)/.test(sqlStateOf(e) ?? '');
  const text = lost
    ? `the connection to ${where} was lost while extracting ${dataset}: ${messageOf(lost)}; nothing was published and the run can be repeated`
    : `${where}: extracting ${dataset} failed: ${messageOf(e)}; nothing was published; ${standing ? 'a repeat fails the same way until the query (in the sources file) or the rows it reads are corrected' : 'the run can be repeated'}`;
  return new InputError({ message: db.mask(text) });
}

/**
 * Extracts `sources` (datasets of one database) into `dir/<dataset>/extract.csv`, with
 * `_watermark.json` beside each whose watermark query returned a value, all inside one read-only
 * snapshot. With helper sessions (PostgreSQL), the lead exports its snapshot
 * (`pg_export_snapshot()`) and each helper reads in it (`SET TRANSACTION SNAPSHOT`), so datasets
 * are read in parallel at the same point in time. Throws InputError when a connection is lost or
 * a statement fails (the caller publishes nothing). `interrupt` (SIGINT, SIGTERM) closes every
 * session at once, so a long COPY ends with the signal instead of with its dataset; the server
 * rolls the read-only transaction back, and the extract throws InterruptedError.
 */
export async function extractDatabase(db: OpenDatabase, sources: readonly DatabaseSource[], dir: string, window: Window, onDataset: OnDataset = () => undefined, fault: FaultPoints = NO_FAULTS, interrupt: AbortSignal = NO_INTERRUPT): Promise<DatabaseExtract> {
  const dsql = db.target.engine === 'aurora-dsql';
  const begin = dsql ? 'BEGIN READ ONLY' : 'BEGIN READ ONLY ISOLATION LEVEL REPEATABLE READ';
  const sessions: Session[] = [db, ...(dsql ? [] : db.helpers.slice(0, Math.max(0, sources.length - 1)))];
  const startedAt = new Date().toISOString();
  const doing = new Map<Session, string>([[db, '(the snapshot)']]);
  // Ending a client with a query on the wire drops its socket: the running statement fails here;
  // the server is asked to cancel it too, or it would run on until it next writes to the socket.
  const unlisten = onInterrupt(interrupt, () => {
    for (const s of sessions) {
      void cancelStatement(s);
      void s.client.end().catch(() => undefined);
    }
  });
  try {
    await db.client.query(begin);
    if (!dsql) await db.client.query(transactionSettings(db));
    // PostgreSQL takes the snapshot at the transaction's first statement: this one.
    const head = await db.client.query<{ v: string; s: string | null; t: string | null }>(dsql
      ? `SELECT current_setting('server_version') AS v, NULL::text AS s, NULL::text AS t`
      : `SELECT current_setting('server_version') AS v, pg_current_snapshot()::text AS s, to_char(transaction_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS t`);
    if (sessions.length > 1) await shareSnapshot(db, sessions, begin, doing);
    const datasets = await readAll(sessions, sources, dir, window, doing, onDataset, fault);
    for (const s of [...sessions].reverse()) { doing.set(s, '(commit)'); await s.client.query('COMMIT'); }
    return {
      name: db.target.name, engine: db.target.engine, host: db.target.host, port: db.target.port, database: db.target.database,
      user: db.target.user, sslmode: db.target.sslmode, tls: encrypted(db), auth: db.target.auth, reader: db.target.reader, readers: sessions.length,
      server_version: head.rows[0].v, transaction: begin, snapshot: head.rows[0].s, transaction_started_at: head.rows[0].t,
      started_at: startedAt, finished_at: new Date().toISOString(), datasets,
    };
  } catch (e) {
    for (const s of sessions) await s.client.query('ROLLBACK').catch(() => undefined);
    const signal = interruptedBy(interrupt);
    if (signal) throw new InterruptedError(signal, `interrupted by ${signal} while extracting from database ${db.target.name}`);
    const failed = (e as { session?: Session }).session ?? db;
    throw extractFailure(failed, doing.get(failed) ?? '(the snapshot)', (e as { cause?: unknown }).cause ?? e);
  } finally {
    unlisten();
  }
}

/** Whether the session's socket is a TLS one. */
const encrypted = (s: Session): boolean => (s.client as unknown as { connection?: { stream?: { encrypted?: boolean } } }).connection?.stream?.encrypted === true;

/**
 * The lead's snapshot exported to the helpers of `sessions` (removed from it when they cannot
 * import it). A helper behind a reader endpoint or a proxy may reach another server than the lead
 * did, where the snapshot does not exist (SQLSTATE 22023, "invalid snapshot identifier"): it then
 * reads nothing, and the lead and the helpers that share the snapshot read every dataset, still
 * at one point in time (the manifest's `readers` says how many did).
 */
async function shareSnapshot(db: Session, sessions: Session[], begin: string, doing: Map<Session, string>): Promise<void> {
  const exported = (await db.client.query<{ id: string }>('SELECT pg_export_snapshot() AS id')).rows[0].id;
  const lead = await snapshotIdentity(db);
  for (const h of sessions.slice(1)) {
    doing.set(h, '(the shared snapshot)');
    await h.client.query(begin);
    let same: boolean;
    try {
      await h.client.query(`SET TRANSACTION SNAPSHOT ${quoteLiteral(exported)}`);
      // Another server may hold a snapshot of the same identifier (its backend slot and local
      // transaction number): the snapshot and the server's start must be the lead's too.
      same = (await snapshotIdentity(h)) === lead;
    } catch (e) {
      if (sqlStateOf(e) !== '22023') throw e;
      same = false;
    }
    if (!same) {
      await h.client.query('ROLLBACK');
      sessions.splice(sessions.indexOf(h), 1);
      continue;
    }
    await h.client.query(transactionSettings(h));
  }
}

/** The session's snapshot and its server's start time, as text: equal for two sessions of one server in one snapshot. */
async function snapshotIdentity(s: Session): Promise<string> {
  const r = await s.client.query<{ id: string }>(`SELECT pg_current_snapshot()::text || ' ' || pg_postmaster_start_time()::text AS id`);
  return r.rows[0].id;
}

/**
 * Reads `sources` with the sessions, each taking the next dataset in contract order, and tells
 * `onDataset` as soon as each one's files are written (the loader may start on it). The fault
 * point `extracting` pauses every session after the first dataset is read (tests change rows
 * then). A failure stops the others from starting another dataset; it is thrown with its session.
 */
async function readAll(sessions: readonly Session[], sources: readonly DatabaseSource[], dir: string, window: Window, doing: Map<Session, string>, onDataset: OnDataset, fault: FaultPoints): Promise<DatasetExtract[]> {
  const sorter = new LineSorter(`${dir}.sort`);
  try {
    return await readEach(sessions, sources, dir, window, doing, onDataset, fault, sorter);
  } finally {
    await sorter.close();
  }
}

async function readEach(sessions: readonly Session[], sources: readonly DatabaseSource[], dir: string, window: Window, doing: Map<Session, string>, onDataset: OnDataset, fault: FaultPoints, sorter: LineSorter): Promise<DatasetExtract[]> {
  const results: DatasetExtract[] = new Array(sources.length);
  let next = 0;
  let failed = false;
  let gate: Promise<void> | undefined;
  const work = async (s: Session) => {
    while (!failed && next < sources.length) {
      await gate;
      if (failed || next >= sources.length) return;
      const i = next++;
      doing.set(s, sources[i].dataset);
      try {
        const r = await extractDataset(s, sources[i], join(dir, sources[i].dataset), window, sorter);
        results[i] = r.extract;
        onDataset(r.extract, r.written);
      } catch (e) {
        failed = true;
        throw Object.assign(new Error('extract failed'), { session: s, cause: e });
      }
      if (i === 0 && sources.length > 1) {
        gate = fault('extracting');
        await gate;
      }
    }
  };
  // Every session's dataset ends before the first failure is thrown: none is left writing into
  // the sorter's folder as it is removed.
  const failures: unknown[] = [];
  await Promise.all(sessions.map((s) => work(s).catch((e: unknown) => { failures.push(e); })));
  if (failures.length) throw failures[0];
  return results;
}

async function extractDataset(db: Session, s: DatabaseSource, folder: string, window: Window, sorter: LineSorter): Promise<{ extract: DatasetExtract; written?: { path: string } & WrittenFile }> {
  await mkdir(folder, { recursive: true });
  const spec = datasetSpec(s.dataset);
  const cols = await describeQuery(db, s.sourceSql);
  const bound = boundFor(s, cols, window);
  if (typeof bound === 'string') throw new Error(bound);
  const plan = renderPlan(spec, s.sourceSql, cols, bound, db.target.engine === 'postgres');
  const base = {
    dataset: s.dataset, source_sql: s.sourceSql, source_sql_sha256: sha256Hex(s.sourceSql), columns: plan.columns,
    lower_bound: bound ? { column: bound.column, from: bound.from } : null,
  };
  let watermark: DatasetExtract['watermark'];
  let fault: ExtractFault | undefined;
  if (s.watermarkQuery !== undefined) {
    const w = await readWatermark(db, s.watermarkQuery);
    watermark = { query: s.watermarkQuery, query_sha256: sha256Hex(s.watermarkQuery), value: (w.doc?.watermark as string | undefined) ?? null, rows: w.rows };
    if (w.doc) await writeFile(join(folder, '_watermark.json'), `${JSON.stringify(w.doc)}\n`);
    if (w.rows > 1) fault = { column: null, rule: 'watermark_query_rows', message: `the watermark query of ${s.dataset} returned more than one row; it must return one (its first column is the watermark)` };
  }
  if (plan.kind === 'refused') {
    return { extract: { ...base, sql: '', sql_sha256: sha256Hex(''), rows: 0, bytes: 0, content_sha256: sha256Hex(''), header: [], fault: { column: plan.column, rule: plan.rule, message: plan.message }, watermark } };
  }
  const file = join(folder, 'extract.csv');
  const r = await readInOrder(db, plan, file, s.dataset, sorter);
  const extract: DatasetExtract = { ...base, sql: r.sql, sql_sha256: sha256Hex(r.sql), rows: r.rows, bytes: r.bytes, content_sha256: r.sha256, header: plan.header, watermark, ...(fault ? { fault } : {}) };
  // The loader may check each contract column's text by the canonical form of its type.
  const rendered = Object.fromEntries(plan.columns.filter((c) => c.role === 'contract').map((c) => [c.name, c.type]));
  return { extract, written: { path: file, sha256: r.sha256, size: r.bytes, shape: r.shape, rendered } };
}
