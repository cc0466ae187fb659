/**
 * A control's totals (CONTRACT §4): the rows (name, dim, value) of its `totals.sql`, scalar or
 * keyed, as exact decimal text. A keyed total with more keys than the inline limit is not held in
 * memory: its entries stay in DuckDB (LARGE_TOTALS_TABLE) and the run records its key count and
 * the digest of its listing (LargeTotal).
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { invariant } from '../core/errors.js';
import { literal } from '../core/sql-text.js';
import type { ControlDefinition } from './definitions.js';
import { queryScript, splitStatements } from './sql-scripts.js';

/**
 * A keyed total with more keys than the inline limit (EvaluationLimits; CONTRACT §4 per-key totals on a large day:
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

/** Limits of one evaluation, from the run's settings (core/settings.ts). */
export interface EvaluationLimits {
  /** Keyed totals with more keys than this become LargeTotals (`RECKON_INLINE_TOTAL_KEYS`, default INLINE_TOTAL_KEYS). */
  readonly inlineTotalKeys: number;
  /** Records listed per difference in the manifest and `--json` (records.ts; default RECORDS_LISTED). */
  readonly recordsListed?: number;
}

/** DuckDB table holding the entries of every LargeTotal of a run: (control_id, name, dim, value), all text. */
export const LARGE_TOTALS_TABLE = '__large_totals';

/**
 * DuckDB table holding the inline totals of every control of a run, as the totals objects hold
 * them: (control_id, name, dim, value), all text, a NULL value as '0', a scalar total with a NULL
 * dim. The `control_totals` output is written from it and LARGE_TOTALS_TABLE, in DuckDB: 60,000
 * inline entries at 100k orders cost about a second as JavaScript output rows.
 */
export const INLINE_TOTALS_TABLE = '__inline_totals';

/** Creates INLINE_TOTALS_TABLE and LARGE_TOTALS_TABLE unless they exist (a run whose controls wrote none still writes control_totals). */
export async function ensureTotalsTables(conn: DuckDBConnection): Promise<void> {
  await conn.run([INLINE_TOTALS_TABLE, LARGE_TOTALS_TABLE].map(totalsTableDdl).join(';\n'));
}

/** The statement creating one of the run's totals tables unless it exists. */
const totalsTableDdl = (table: string) => `CREATE TEMP TABLE IF NOT EXISTS ${table} (control_id VARCHAR, name VARCHAR, dim VARCHAR, value VARCHAR)`;

/** A control's totals object: a scalar total is text, a keyed one maps key to text. */
export type Totals = Record<string, string | Record<string, string>>;

/**
 * Runs totals.sql into a temp table and returns the totals: scalar ones and keyed ones of at most
 * `limit` keys as `inline`; the entries of larger keyed totals are moved into
 * LARGE_TOTALS_TABLE and returned as `large` (key count and listing digest).
 */
export async function evaluateTotals(conn: DuckDBConnection, def: ControlDefinition, limit: number): Promise<{ inline: Totals; large: Record<string, LargeTotal> }> {
  const table = `__totals_${def.control_id.toLowerCase()}`;
  await totalsIntoTable(conn, def, table);
  const counts = await queryScript(conn, `SELECT name, count(dim)::VARCHAR AS keyed, count(*) FILTER (WHERE dim IS NULL)::VARCHAR AS scalar FROM ${table} GROUP BY name`);
  const largeNames = counts.filter((c) => Number(c.keyed) > limit && Number(c.scalar) === 0).map((c) => c.name!).sort();
  const list = largeNames.map(literal).join(', ');
  const large = largeNames.length ? await moveLargeTotals(conn, def, table, list) : {};
  const inline = largeNames.length ? ` WHERE name NOT IN (${list})` : '';
  // Read by column (all text): 60,000 keyed entries at 100k orders, where row objects cost several times more.
  const columns = (await conn.runAndReadAll(`SELECT name, dim, value FROM ${table}${inline} ORDER BY name, dim`)).getColumns() as (string | null)[][];
  await conn.run(`${totalsTableDdl(INLINE_TOTALS_TABLE)};
    INSERT INTO ${INLINE_TOTALS_TABLE} SELECT ${literal(def.control_id)}, name, dim, coalesce(value, '0') FROM ${table}${inline};
    DROP TABLE ${table}`);
  return { inline: totalsObject(def, columns), large };
}

/** Runs every statement of totals.sql; the rows of its last one (a query) go into `table` as text. */
async function totalsIntoTable(conn: DuckDBConnection, def: ControlDefinition, table: string): Promise<void> {
  const stmts = splitStatements(def.sql.totals!);
  const extracted = await conn.extractStatements(def.sql.totals!);
  invariant(stmts.length === extracted.count && stmts.length >= 1, `${def.control_id}: totals.sql splits into ${stmts.length} statements, DuckDB counts ${extracted.count}`);
  for (const s of stmts.slice(0, -1)) await conn.run(s);
  await conn.run(`CREATE OR REPLACE TEMP TABLE ${table} AS SELECT name::VARCHAR AS name, dim::VARCHAR AS dim, value::VARCHAR AS value FROM (${stmts[stmts.length - 1]})`);
}

/** Moves the entries of the keyed totals named in `list` into LARGE_TOTALS_TABLE; returns their counts and digests. */
async function moveLargeTotals(conn: DuckDBConnection, def: ControlDefinition, table: string, list: string): Promise<Record<string, LargeTotal>> {
  await conn.run(totalsTableDdl(LARGE_TOTALS_TABLE));
  await conn.run(`INSERT INTO ${LARGE_TOTALS_TABLE} SELECT '${def.control_id}', name, dim, coalesce(value, '0') FROM ${table} WHERE name IN (${list})`);
  // The listing is built and hashed inside DuckDB: its entries never enter JavaScript.
  const digests = await queryScript(conn, `SELECT name, count(*)::VARCHAR AS keys, sha256(string_agg(dim || chr(9) || coalesce(value, '0'), chr(10) ORDER BY dim)) AS sha256 FROM ${table} WHERE name IN (${list}) GROUP BY name ORDER BY name`);
  const large: Record<string, LargeTotal> = {};
  for (const d of digests) large[d.name!] = { keys: d.keys!, sha256: d.sha256! };
  return large;
}

/**
 * The totals object of the columns (name, dim, value) of rows sorted by name and dim; a NULL value
 * counts as 0. No rows (an empty window of a control whose totals are all keyed, RC05) give no
 * columns at all: the object is empty.
 */
function totalsObject(def: ControlDefinition, [names = [], dims = [], values = []]: readonly (readonly (string | null)[])[]): Totals {
  const totals: Totals = {};
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!;
    const dim = dims[i];
    if (dim === null || dim === undefined) totals[name] = values[i] ?? '0';
    else {
      const obj = (totals[name] ??= {}) as Record<string, string>;
      invariant(typeof obj === 'object', `${def.control_id}: total ${name} is both scalar and keyed`);
      obj[dim] = values[i] ?? '0';
    }
  }
  return totals;
}
