/**
 * Evaluating one control against the loaded tables (CONTRACT §4): its prepare.sql, then its totals,
 * its differences (one per kind and key, merged and sorted), the records behind them (records.ts),
 * its readiness conditions and its assertions; then the temp objects it created are dropped. The
 * caller sets the session variables (window, as-of, params) first; evaluation reads nothing else
 * of the run.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { InputError, InternalError, invariant } from '../core/errors.js';
import { DATASETS } from '../contract/datasets.js';
import type { ControlDefinition } from './definitions.js';
import { queryEach, queryScript, runScript } from './sql-scripts.js';
import { INLINE_TOTAL_KEYS } from '../core/settings.js';
import { evaluateTotals, INLINE_TOTALS_TABLE, LARGE_TOTALS_TABLE, type EvaluationLimits, type LargeTotal, type Totals } from './totals.js';
import { assertNoFloat, isNumericOverflow, withWideMoney } from './wide.js';
import { evaluateRecords, DIFFERENCE_RECORDS_TABLE, RECORDS_LISTED, type DifferenceRecords } from './records.js';

/**
 * Ends a NOT_READY reason that no later run fixes by itself (the sources file gives a dataset no
 * location or no watermark query, or its watermark query returns no row): the run's next step is
 * then to correct the sources file, not to wait for the watermarks (breaks/next-steps.ts).
 */
export const SOURCES_FILE_FIX = 'correct the sources file: waiting does not change this';

/** The columns of every query of a differences.sql, in this order. */
const DIFFERENCE_COLUMNS = ['kind', 'key', 'detail', 'record_time_us'] as const;

/** A difference as the control's SQL reports it (CONTRACT §4). `record_time_us`: µs since epoch, UTC. */
export interface RawDifference {
  readonly kind: string;
  readonly key: string;
  readonly detail: string;
  readonly record_time_us: string | null;
}

/** Raw evaluation of one control: totals object, differences sorted by (kind, key), readiness reasons. */
export interface ControlEvaluation {
  readonly totals: Totals;
  /** Keyed totals too large to list inline (absent when there are none). */
  readonly large_totals?: Record<string, LargeTotal>;
  readonly differences: RawDifference[];
  /** The records behind the differences (records.ts differenceKey → count and first records); empty without records.sql. */
  readonly records: ReadonlyMap<string, DifferenceRecords>;
  /** Milliseconds records.sql took (0 without one). */
  readonly records_ms: number;
  readonly readiness: string[];
  /** Set when the fast path overflowed and the control was computed with BIGNUM money (wide.ts). */
  readonly wide?: true;
}

/**
 * Evaluates one control against the loaded tables. Session variables (window, as-of, params) must
 * be set by the caller. When a sum or comparison of minor units overflows DECIMAL(38) on the fast
 * path, the control is evaluated once more with BIGNUM money (wide.ts) and `wide` is set. Throws
 * InputError (total_overflow, exit 3) when even that overflows (a quantity sum past
 * DECIMAL(38,18)); InternalError when an assertion row appears, when a kind outside the definition
 * is emitted, when one (kind, key) is listed twice, when the SQL names a dataset this run did not
 * load, or when the fallback met a binary float.
 */
export async function evaluateControl(conn: DuckDBConnection, def: ControlDefinition, limits: EvaluationLimits = { inlineTotalKeys: INLINE_TOTAL_KEYS }): Promise<ControlEvaluation> {
  try {
    const ev = await evaluate(conn, def, limits);
    await dropControlObjects(conn, def);
    return ev;
  } catch (e) {
    if (!isNumericOverflow(e)) throw explainFailure(def, e);
    await undoEvaluation(conn, def);
  }
  try {
    const ev = await withWideMoney(conn, def.reads, async () => {
      const wide = await evaluate(conn, def, limits);
      await assertNoFloat(conn, def.control_id);
      return wide;
    });
    await dropControlObjects(conn, def);
    for (const [name, v] of Object.entries(ev.totals)) {
      for (const x of typeof v === 'string' ? [v] : Object.values(v)) invariant(/^-?[0-9]+(\.[0-9]+)?$/.test(x), `${def.control_id}: the wide fallback gave total ${name} = ${x}, not an exact decimal`);
    }
    return { ...ev, wide: true };
  } catch (e) {
    throw explainFailure(def, e);
  }
}

const DATASET_NAMES = new Set(DATASETS.map((d) => d.name));

/**
 * The error a failed evaluation stands for: an overflow the wide fallback could not take (only
 * quantities in DECIMAL(38,18) are left) is the input's, a missing dataset table the run's.
 */
function explainFailure(def: ControlDefinition, e: unknown): unknown {
  if (e instanceof InternalError) return e;
  const msg = (e as Error).message ?? '';
  // A property of the input, not a bug: say so and stop with exit 3, never 70.
  if (isNumericOverflow(e)) {
    return new InputError({
      message: `${def.control_id}: a quantity total or comparison exceeds DECIMAL(38,18) and cannot be computed exactly (${msg.split('\n')[0]}); the input holds quantities too large to total`,
      rule: 'total_overflow',
    });
  }
  // A dataset the run did not load has no table (pipeline/load): naming it fails here, loudly.
  const missing = /Table with name "?([A-Za-z0-9_]+)"? does not exist/.exec(msg)?.[1];
  if (missing && DATASET_NAMES.has(missing.toLowerCase())) {
    return new InternalError(`${def.control_id}: its SQL reads dataset ${missing}, which this run did not load (reads: ${def.reads.join(', ')}): ${msg.split('\n')[0]}`);
  }
  return e;
}

/** Drops what a failed evaluation of `def` left: its temp objects and its rows of INLINE_TOTALS_TABLE, LARGE_TOTALS_TABLE and DIFFERENCE_RECORDS_TABLE. */
async function undoEvaluation(conn: DuckDBConnection, def: ControlDefinition): Promise<void> {
  await dropControlObjects(conn, def);
  for (const table of [INLINE_TOTALS_TABLE, LARGE_TOTALS_TABLE, DIFFERENCE_RECORDS_TABLE]) {
    const exists = await queryScript(conn, `SELECT count(*)::VARCHAR AS n FROM duckdb_tables() WHERE database_name = 'temp' AND table_name = '${table}'`);
    if (exists[0]?.n !== '0') await conn.run(`DELETE FROM ${table} WHERE control_id = '${def.control_id}'`);
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
  // One call for all of them (each DROP is still its own statement).
  if (objects.length) await conn.run(objects.map((o) => `DROP ${o.type} IF EXISTS temp.main."${o.name!.replace(/"/g, '""')}"`).join(';\n'));
}

async function evaluate(conn: DuckDBConnection, def: ControlDefinition, limits: EvaluationLimits): Promise<ControlEvaluation> {
  if (def.sql.prepare) await runScript(conn, def.sql.prepare);
  const { inline: totals, large } = await evaluateTotals(conn, def, limits.inlineTotalKeys);
  const differences = mergeDifferences(checkKinds(def, sortDifferences(await queryDifferences(conn, def))));
  const t0 = performance.now();
  const records = def.sql.records
    ? await evaluateRecords(conn, { control_id: def.control_id, reads: def.reads, sql: def.sql.records, path: def.sqlPaths.records! }, differences, limits.recordsListed ?? RECORDS_LISTED)
    : new Map<string, DifferenceRecords>();
  const records_ms = Math.round(performance.now() - t0);
  const readiness = def.sql.readiness ? (await queryScript(conn, def.sql.readiness)).map((r) => r.reason ?? 'not ready') : [];
  if (def.sql.assertions) {
    const broken = await queryScript(conn, def.sql.assertions);
    if (broken.length) throw new InternalError(`${def.control_id} invariant broken: ${broken.map((b) => b.message).join('; ')}`);
  }
  return { totals, differences, records, records_ms, readiness, ...(Object.keys(large).length ? { large_totals: large } : {}) };
}

/** The rows of every query of differences.sql; a malformed script names its file. */
async function queryDifferences(conn: DuckDBConnection, def: ControlDefinition): Promise<RawDifference[]> {
  const rows = await queryEach(conn, def.sql.differences!, DIFFERENCE_COLUMNS).catch((e: unknown) => {
    throw e instanceof InternalError ? new InternalError(`${def.sqlPaths.differences}: ${e.message}`) : e;
  });
  return rows.map((r) => ({ kind: r.kind!, key: r.key!, detail: r.detail ?? '', record_time_us: r.record_time_us ?? null }));
}

const cmp = (x: string | null, y: string | null) => (x === y ? 0 : x === null ? -1 : y === null ? 1 : x < y ? -1 : 1);

/**
 * By kind and key, then detail and record time: findings of one (kind, key) merge in an order that
 * does not depend on the order DuckDB returned them in. Sorts in place and returns `differences`.
 */
function sortDifferences(differences: RawDifference[]): RawDifference[] {
  return differences.sort((a, b) => cmp(a.kind, b.kind) || cmp(a.key, b.key) || cmp(a.detail, b.detail) || cmp(a.record_time_us, b.record_time_us));
}

/** Throws InternalError on a kind the definition does not list or an empty key. */
function checkKinds(def: ControlDefinition, differences: RawDifference[]): RawDifference[] {
  const kinds = new Set(def.difference_kinds);
  for (const d of differences) {
    invariant(kinds.has(d.kind), `${def.control_id} emitted kind ${d.kind} outside its definition`);
    invariant(d.key !== null && d.key !== '', `${def.control_id} emitted ${d.kind} with an empty key`);
  }
  return differences;
}

/**
 * One difference per (kind, key) of sorted differences: records that conflict with each other (two
 * snapshot rows of one account at one instant, say) can make a query find the same key twice;
 * their details join with "; " (equal ones once) and the earliest record time stays.
 */
function mergeDifferences(sorted: readonly RawDifference[]): RawDifference[] {
  const merged: RawDifference[] = [];
  for (const d of sorted) {
    const last = merged[merged.length - 1];
    if (last && last.kind === d.kind && last.key === d.key) merged[merged.length - 1] = mergeTwo(last, d);
    else merged.push(d);
  }
  return merged;
}

function mergeTwo(a: RawDifference, b: RawDifference): RawDifference {
  const earliest = a.record_time_us === null ? b.record_time_us
    : b.record_time_us === null ? a.record_time_us
    : BigInt(b.record_time_us) < BigInt(a.record_time_us) ? b.record_time_us : a.record_time_us;
  return { ...a, detail: a.detail === b.detail ? a.detail : `${a.detail}; ${b.detail}`, record_time_us: earliest };
}
