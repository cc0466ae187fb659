/**
 * Control definitions and their evaluation (CONTRACT §3–§4). A control is data plus SQL:
 * `controls/rcNN/control.json` (id, datasets read, difference kinds, SLA, owner, params) and
 * `sql/rcNN/*.sql`. Every control runs the same way, so adding RC07 is a new pair of folders:
 *   prepare.sql     (optional) statements creating temp tables/views named `rcNN_…` (dropped after the control)
 *   totals.sql      rows (name, dim, value): exact control totals as text
 *   differences.sql rows (kind, key, detail, record_time): zero rows means clean. It may hold
 *                   several queries (one per kind, say): the rows of every query are the
 *                   differences, so no single statement has to hold every kind's joins at once
 *   readiness.sql   (optional) rows (reason): extra readiness conditions beyond watermarks
 *   assertions.sql  (optional) rows (message): internal invariants; any row stops the run (exit 70)
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { z } from 'zod';
import { StatementType, type DuckDBConnection, type DuckDBPreparedStatement } from '@duckdb/node-api';
import { ConfigError, InputError, InternalError, invariant } from '../core/errors.js';
import { INLINE_TOTAL_KEYS } from '../core/settings.js';
import { repoPath } from '../core/paths.js';
import { DATASETS } from '../contract/datasets.js';

const ControlDefinitionSchema = z.object({
  control_id: z.string().regex(/^RC[0-9]{2}$/),
  name: z.string().min(1),
  reads: z.array(z.string()).min(1),
  difference_kinds: z.array(z.string().regex(/^[A-Z_]+$/)).min(1),
  sla_s: z.number().int().nonnegative(),
  sla_s_by_kind: z.record(z.string(), z.number().int().nonnegative()).default({}),
  owner: z.string().min(1),
  params: z.record(z.string(), z.union([z.number(), z.string()])).default({}),
  description: z.string().optional(),
}).strict();

/** A parsed, frozen control definition plus its SQL texts and their SHA-256. */
export type ControlDefinition = Readonly<z.infer<typeof ControlDefinitionSchema>> & {
  readonly sql: Readonly<Record<'prepare' | 'totals' | 'differences' | 'readiness' | 'assertions', string | undefined>>;
  readonly sqlFiles: readonly { path: string; sha256: string }[];
};

const SQL_PARTS = ['prepare', 'totals', 'differences', 'readiness', 'assertions'] as const;
const sha256 = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');

/** Loads every control under `controls/`, sorted by id. Throws InternalError on a bad definition. */
export function loadControls(): ControlDefinition[] {
  const dir = repoPath('controls');
  const known = new Set(DATASETS.map((d) => d.name));
  const out: ControlDefinition[] = [];
  for (const folder of readdirSync(dir).filter((f) => /^rc[0-9]{2}$/.test(f)).sort()) {
    const file = repoPath(`controls/${folder}/control.json`);
    const parsed = ControlDefinitionSchema.safeParse(JSON.parse(readFileSync(file, 'utf8')));
    if (!parsed.success) throw new InternalError(`${file}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
    const def = parsed.data;
    invariant(def.control_id.toLowerCase() === folder, `${file}: control_id ${def.control_id} does not match its folder`);
    for (const d of def.reads) invariant(known.has(d), `${file}: reads unknown dataset ${d}`);
    for (const p of ['window_start', 'window_end', 'as_of']) invariant(!(p in def.params), `${file}: parameter ${p} is reserved for the pipeline`);
    const sql: Record<string, string | undefined> = {};
    const sqlFiles: { path: string; sha256: string }[] = [];
    for (const part of SQL_PARTS) {
      const rel = `sql/${folder}/${part}.sql`;
      if (!existsSync(repoPath(rel))) continue;
      const text = readFileSync(repoPath(rel), 'utf8');
      sql[part] = text;
      sqlFiles.push({ path: rel, sha256: sha256(text) });
    }
    invariant(sql.totals && sql.differences, `${folder}: totals.sql and differences.sql are required`);
    out.push(Object.freeze({ ...def, sql: Object.freeze(sql) as ControlDefinition['sql'], sqlFiles }));
  }
  return out;
}

/** The controls a run knows (every definition) and the ones it evaluates (its selection, in id order). */
export interface ControlSet {
  readonly all: readonly ControlDefinition[];
  readonly selected: readonly ControlDefinition[];
}

/**
 * Selects the controls `ids` names from `all` (every one when `ids` is empty), in the order of
 * `all`. Throws ConfigError (exit 2) naming an unknown id and the known ones.
 */
export function selectControls(all: readonly ControlDefinition[], ids: readonly string[]): ControlSet {
  if (ids.length === 0) return { all, selected: [...all] };
  const unknown = ids.filter((id) => !all.some((c) => c.control_id === id));
  if (unknown.length) throw new ConfigError(`unknown control(s) ${unknown.join(', ')}; known: ${all.map((c) => c.control_id).join(', ')}`);
  return { all, selected: all.filter((c) => ids.includes(c.control_id)) };
}

/** The datasets the controls read (CONTRACT §3), in the order of CONTRACT §2: the only ones a run loads. */
export function datasetsRead(controls: readonly ControlDefinition[]): string[] {
  const read = new Set(controls.flatMap((c) => c.reads));
  return DATASETS.map((d) => d.name).filter((n) => read.has(n));
}

/** The shared SQL run once after loading (macros, then views), with SHA-256 of each file. */
export function commonSql(): { path: string; text: string; sha256: string }[] {
  return ['sql/common/macros.sql', 'sql/common/views.sql'].map((path) => {
    const text = readFileSync(repoPath(path), 'utf8');
    return { path, text, sha256: sha256(text) };
  });
}

type Row = Record<string, string | null>;

/**
 * Prepares each statement of a SQL script in order, hands it to `use`, then destroys it. DuckDB
 * keeps an executed plan's operator state (a hash join's table, an aggregate's groups) in the
 * prepared statement until it is destroyed; left to JavaScript's garbage collector, the tables of
 * finished statements stayed pinned in the buffer pool and the next control ran out of memory
 * (a 10M-order day; a 1M-order day under a 400MB limit).
 */
async function eachStatement(conn: DuckDBConnection, sql: string, use: (p: DuckDBPreparedStatement, last: boolean) => Promise<void>): Promise<void> {
  const stmts = await conn.extractStatements(sql);
  invariant(stmts.count >= 1, 'empty SQL');
  for (let i = 0; i < stmts.count; i++) {
    const p = await stmts.prepare(i);
    try {
      await use(p, i === stmts.count - 1);
    } finally {
      p.destroySync();
    }
  }
}

const textRow = (o: Record<string, unknown>): Row => {
  const r: Row = {};
  for (const [k, v] of Object.entries(o)) r[k] = v === null ? null : String(v);
  return r;
};

/** Runs every statement of a SQL script in order. */
export async function runScript(conn: DuckDBConnection, sql: string): Promise<void> {
  await eachStatement(conn, sql, async (p) => { await p.run(); });
}

/** Runs a script whose last statement is a query, returning its rows as JSON-able objects (all text). */
export async function queryScript(conn: DuckDBConnection, sql: string): Promise<Row[]> {
  let rows: Row[] = [];
  await eachStatement(conn, sql, async (p, last) => {
    if (last) rows = (await p.runAndReadAll()).getRowObjectsJson().map(textRow);
    else await p.run();
  });
  return rows;
}

/**
 * Runs every statement of a SQL script in order and returns the rows of every query among them
 * (statements of type SELECT), concatenated in script order, as JSON-able objects (all text).
 * Other statements (CREATE TEMP TABLE …) only run. Each statement is finished and destroyed
 * before the next starts, so one query per kind holds only its own joins' memory.
 * Throws InternalError when the script holds no query, or a query whose columns are not exactly
 * `columns` (a misnamed column would otherwise read as NULL, and no query as no differences).
 */
export async function queryEach(conn: DuckDBConnection, sql: string, columns: readonly string[]): Promise<Row[]> {
  const rows: Row[] = [];
  let queries = 0;
  await eachStatement(conn, sql, async (p) => {
    if (p.statementType !== StatementType.SELECT) { await p.run(); return; }
    queries += 1;
    const reader = await p.runAndReadAll();
    const names = reader.columnNames();
    invariant(names.join(',') === columns.join(','), `query ${queries} returns columns (${names.join(', ')}), not (${columns.join(', ')})`);
    for (const o of reader.getRowObjectsJson()) rows.push(textRow(o));
  });
  invariant(queries > 0, 'the script holds no query');
  return rows;
}

/** The columns of every query of a differences.sql, in this order. */
const DIFFERENCE_COLUMNS = ['kind', 'key', 'detail', 'record_time_us'] as const;

/** A difference as the control's SQL reports it (CONTRACT §4). `record_time_us`: µs since epoch, UTC. */
export interface RawDifference {
  readonly kind: string;
  readonly key: string;
  readonly detail: string;
  readonly record_time_us: string | null;
}

/**
 * A keyed total with more than INLINE_TOTAL_KEYS keys (CONTRACT §4 per-key totals on a large day:
 * RC03 per account|currency, RC05 per account|instrument, …). Its entries are not held in memory,
 * the manifest or `--json`: they are rows of the `control_totals` output (written from DuckDB),
 * and the run records how many keys it has and the SHA-256 of its listing, so the output can be
 * checked against the manifest. The listing is UTF-8 text, one line per key in byte order of the
 * key: `key TAB value`, lines joined by LF (no final LF); a value is exact decimal text.
 */
export interface LargeTotal {
  /** Number of keys (lines of the listing), as a decimal string. */
  readonly keys: string;
  /** SHA-256 (hex) of the listing. */
  readonly sha256: string;
}

/** Keyed totals up to this many keys are listed inline (manifest, `--json`); larger ones become LargeTotal. */
export { INLINE_TOTAL_KEYS };

/** Limits of one evaluation, from the run's settings (core/settings.ts). */
export interface EvaluationLimits {
  /** Keyed totals with more keys than this become LargeTotals (`RECKON_INLINE_TOTAL_KEYS`). */
  readonly inlineTotalKeys: number;
}

/** DuckDB table holding the entries of every LargeTotal of a run: (control_id, name, dim, value), all text. */
export const LARGE_TOTALS_TABLE = '__large_totals';

/** Raw evaluation of one control: totals object, differences sorted by (kind, key), readiness reasons. */
export interface ControlEvaluation {
  readonly totals: Record<string, string | Record<string, string>>;
  /** Keyed totals too large to list inline (absent when there are none). */
  readonly large_totals?: Record<string, LargeTotal>;
  readonly differences: RawDifference[];
  readonly readiness: string[];
}

/**
 * Evaluates one control against the loaded tables. Session variables (window, as-of, params) must
 * be set by the caller. Throws InternalError when an assertion row appears, when a kind outside the
 * definition is emitted, or when one (kind, key) is listed twice; InputError (exit 3) when a total
 * exceeds 38 digits.
 */
export async function evaluateControl(conn: DuckDBConnection, def: ControlDefinition, limits: EvaluationLimits = { inlineTotalKeys: INLINE_TOTAL_KEYS }): Promise<ControlEvaluation> {
  try {
    const ev = await evaluate(conn, def, limits);
    await dropControlObjects(conn, def);
    return ev;
  } catch (e) {
    // A sum beyond DECIMAL(38) (e.g. two amounts of 38 digits each) cannot be totalled exactly.
    // That is a property of the input, not a bug: say so and stop with exit 3, never 70.
    const msg = (e as Error).message ?? '';
    if (/Overflow|out of range/i.test(msg) && !(e instanceof InternalError)) {
      throw new InputError({
        message: `${def.control_id}: a control total or comparison exceeds 38 digits and cannot be computed exactly (${msg.split('\n')[0]}); the input holds amounts or quantities too large to total`,
        rule: 'total_overflow',
      });
    }
    throw e;
  }
}

/**
 * Drops the temp tables and views a control's SQL created (named with its id as prefix, `rc01_…`),
 * once its evaluation is read: on a large day they hold millions of rows the next control does not
 * read, and would otherwise stay in DuckDB's buffer pool (or be spilled) for the rest of the run.
 */
async function dropControlObjects(conn: DuckDBConnection, def: ControlDefinition): Promise<void> {
  const prefix = `${def.control_id.toLowerCase()}\\_%`;
  const objects = await queryScript(conn, `SELECT 'VIEW' AS type, view_name AS name FROM duckdb_views() WHERE temporary AND lower(view_name) LIKE '${prefix}' ESCAPE '\\'
    UNION ALL SELECT 'TABLE', table_name FROM duckdb_tables() WHERE temporary AND lower(table_name) LIKE '${prefix}' ESCAPE '\\' ORDER BY 1 DESC, 2`);
  for (const o of objects) await conn.run(`DROP ${o.type} IF EXISTS temp.main."${o.name!.replace(/"/g, '""')}"`);
}

async function evaluate(conn: DuckDBConnection, def: ControlDefinition, limits: EvaluationLimits): Promise<ControlEvaluation> {
  if (def.sql.prepare) await runScript(conn, def.sql.prepare);
  const totals: Record<string, string | Record<string, string>> = {};
  const { inline, large } = await evaluateTotals(conn, def, limits.inlineTotalKeys);
  for (const r of inline) {
    const name = r.name!;
    if (r.dim === null || r.dim === undefined) totals[name] = r.value ?? '0';
    else {
      const obj = (totals[name] ??= {}) as Record<string, string>;
      invariant(typeof obj === 'object', `${def.control_id}: total ${name} is both scalar and keyed`);
      obj[r.dim] = r.value ?? '0';
    }
  }
  const differences = (await queryEach(conn, def.sql.differences!, DIFFERENCE_COLUMNS).catch((e: unknown) => {
    throw e instanceof InternalError ? new InternalError(`sql/${def.control_id.toLowerCase()}/differences.sql: ${e.message}`) : e;
  })).map((r) => ({
    kind: r.kind!, key: r.key!, detail: r.detail ?? '', record_time_us: r.record_time_us ?? null,
  }));
  // By kind and key, then detail and record time: findings of one (kind, key) merge below in an
  // order that does not depend on the order DuckDB returned them in.
  const cmp = (x: string | null, y: string | null) => (x === y ? 0 : x === null ? -1 : y === null ? 1 : x < y ? -1 : 1);
  differences.sort((a, b) => cmp(a.kind, b.kind) || cmp(a.key, b.key) || cmp(a.detail, b.detail) || cmp(a.record_time_us, b.record_time_us));
  const kinds = new Set(def.difference_kinds);
  for (const d of differences) {
    invariant(kinds.has(d.kind), `${def.control_id} emitted kind ${d.kind} outside its definition`);
    invariant(d.key !== null && d.key !== '', `${def.control_id} emitted ${d.kind} with an empty key`);
  }
  // One difference per (kind, key): records that conflict with each other (two snapshot rows of one
  // account at one instant, say) can make a query find the same key twice; their findings merge.
  const merged: RawDifference[] = [];
  for (const d of differences) {
    const last = merged[merged.length - 1];
    if (last && last.kind === d.kind && last.key === d.key) {
      merged[merged.length - 1] = {
        ...last,
        detail: last.detail === d.detail ? last.detail : `${last.detail}; ${d.detail}`,
        record_time_us: last.record_time_us === null ? d.record_time_us : d.record_time_us === null ? last.record_time_us : (BigInt(d.record_time_us) < BigInt(last.record_time_us) ? d.record_time_us : last.record_time_us),
      };
    } else merged.push(d);
  }
  const readiness = def.sql.readiness ? (await queryScript(conn, def.sql.readiness)).map((r) => r.reason ?? 'not ready') : [];
  if (def.sql.assertions) {
    const broken = await queryScript(conn, def.sql.assertions);
    if (broken.length) throw new InternalError(`${def.control_id} invariant broken: ${broken.map((b) => b.message).join('; ')}`);
  }
  return { totals, differences: merged, readiness, ...(Object.keys(large).length ? { large_totals: large } : {}) };
}

/**
 * Splits a SQL script into statements at top-level semicolons (outside quotes, double-quoted
 * identifiers and comments). Returns the statement texts, empty ones left out.
 */
export function splitStatements(sql: string): string[] {
  const out: string[] = [];
  let start = 0;
  for (let i = 0; i < sql.length; i++) {
    const ch = sql[i];
    if (ch === "'" || ch === '"') {
      const end = sql.indexOf(ch, i + 1);
      // A doubled quote inside closes and reopens: the loop picks the next quote up again.
      i = end === -1 ? sql.length : end;
    } else if (ch === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i);
      i = end === -1 ? sql.length : end;
    } else if (ch === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end === -1 ? sql.length : end + 1;
    } else if (ch === ';') {
      out.push(sql.slice(start, i));
      start = i + 1;
    }
  }
  out.push(sql.slice(start));
  return out.filter((t) => t.replace(/--[^\n]*|\/\*[\s\S]*?\*\//g, '').trim() !== '');
}

/**
 * Runs totals.sql into a temp table, returns the scalar totals and the keyed totals of at most
 * INLINE_TOTAL_KEYS keys as rows (sorted by name, dim), and moves the entries of larger keyed
 * totals into LARGE_TOTALS_TABLE, returning their key count and listing digest (LargeTotal).
 */
async function evaluateTotals(conn: DuckDBConnection, def: ControlDefinition, limit: number): Promise<{ inline: Record<string, string | null>[]; large: Record<string, LargeTotal> }> {
  const stmts = splitStatements(def.sql.totals!);
  const extracted = await conn.extractStatements(def.sql.totals!);
  invariant(stmts.length === extracted.count && stmts.length >= 1, `${def.control_id}: totals.sql splits into ${stmts.length} statements, DuckDB counts ${extracted.count}`);
  for (const s of stmts.slice(0, -1)) await conn.run(s);
  const table = `__totals_${def.control_id.toLowerCase()}`;
  await conn.run(`CREATE OR REPLACE TEMP TABLE ${table} AS SELECT name::VARCHAR AS name, dim::VARCHAR AS dim, value::VARCHAR AS value FROM (${stmts[stmts.length - 1]})`);
  const counts = await queryScript(conn, `SELECT name, count(dim)::VARCHAR AS keyed, count(*) FILTER (WHERE dim IS NULL)::VARCHAR AS scalar FROM ${table} GROUP BY name`);
  const largeNames = counts.filter((c) => Number(c.keyed) > limit && Number(c.scalar) === 0).map((c) => c.name!).sort();
  const large: Record<string, LargeTotal> = {};
  const list = largeNames.map((n) => `'${n.replace(/'/g, "''")}'`).join(', ');
  if (largeNames.length) {
    await conn.run(`CREATE TEMP TABLE IF NOT EXISTS ${LARGE_TOTALS_TABLE} (control_id VARCHAR, name VARCHAR, dim VARCHAR, value VARCHAR)`);
    await conn.run(`INSERT INTO ${LARGE_TOTALS_TABLE} SELECT '${def.control_id}', name, dim, coalesce(value, '0') FROM ${table} WHERE name IN (${list})`);
    // The listing is built and hashed inside DuckDB: its entries never enter JavaScript.
    const digests = await queryScript(conn, `SELECT name, count(*)::VARCHAR AS keys, sha256(string_agg(dim || chr(9) || coalesce(value, '0'), chr(10) ORDER BY dim)) AS sha256 FROM ${table} WHERE name IN (${list}) GROUP BY name ORDER BY name`);
    for (const d of digests) large[d.name!] = { keys: d.keys!, sha256: d.sha256! };
  }
  const inline = await queryScript(conn, `SELECT name, dim, value FROM ${table}${largeNames.length ? ` WHERE name NOT IN (${list})` : ''} ORDER BY name, dim`);
  await conn.run(`DROP TABLE ${table}`);
  return { inline, large };
}
