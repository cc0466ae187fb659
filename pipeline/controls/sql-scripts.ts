/**
 * Running the SQL scripts of `sql/` (a control's `.sql` files and `sql/common`), and reading them
 * as text: statements split at top-level semicolons, comments blanked, a keyword found outside
 * quotes and parentheses. Rows come back as text (exact decimals never pass through a JS number).
 */
import type { DuckDBConnection, DuckDBPreparedStatement } from '@duckdb/node-api';
import { duckdb } from '../core/duckdb.js';
import { invariant } from '../core/errors.js';

/** A row of a control query: every value as text (NULL as null). */
export type Row = Record<string, string | null>;

/**
 * Prepares each statement of a SQL script in order, hands it to `use`, then destroys it. DuckDB
 * keeps an executed plan's operator state (a hash join's table, an aggregate's groups) in the
 * prepared statement until it is destroyed; left to JavaScript's garbage collector, the tables of
 * finished statements stayed pinned in the buffer pool and the next control ran out of memory
 * (a 10M-order day; a 1M-order day under a 400MB limit).
 */
export async function eachStatement(conn: DuckDBConnection, sql: string, use: (p: DuckDBPreparedStatement, last: boolean) => Promise<void>): Promise<void> {
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

/**
 * Runs every statement of a SQL script in order, in one call: DuckDB parses the script, then plans
 * and runs each statement after the one before, and keeps no statement once it has run (no
 * prepared statement is left to pin operator state; a prepared statement per statement cost two
 * round trips more each).
 */
export async function runScript(conn: DuckDBConnection, sql: string): Promise<void> {
  invariant(blankComments(sql).replace(/;/g, '').trim() !== '', 'empty SQL');
  await conn.run(sql);
}

/** Runs a script whose last statement is a query (in one call, as runScript), returning its rows as JSON-able objects (all text). */
export async function queryScript(conn: DuckDBConnection, sql: string): Promise<Row[]> {
  invariant(blankComments(sql).replace(/;/g, '').trim() !== '', 'empty SQL');
  return (await conn.runAndReadAll(sql)).getRowObjectsJson().map(textRow);
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
    if (p.statementType !== duckdb().StatementType.SELECT) { await p.run(); return; }
    queries += 1;
    const reader = await p.runAndReadAll();
    const names = reader.columnNames();
    invariant(names.join(',') === columns.join(','), `query ${queries} returns columns (${names.join(', ')}), not (${columns.join(', ')})`);
    for (const o of reader.getRowObjectsJson()) rows.push(textRow(o));
  });
  invariant(queries > 0, 'the script holds no query');
  return rows;
}

/**
 * Where the quoted string, quoted identifier or comment starting at `i` ends (the index of its
 * last character), or -1 when none starts there. An unterminated one runs to the end.
 */
function skipQuoted(sql: string, i: number): number {
  const ch = sql[i];
  const to = (end: number, width: number) => (end === -1 ? sql.length - 1 : end + width - 1);
  // A doubled quote inside closes and reopens: the caller's loop picks the next quote up again.
  if (ch === "'" || ch === '"') return to(sql.indexOf(ch, i + 1), 1);
  if (ch === '-' && sql[i + 1] === '-') return to(sql.indexOf('\n', i), 0);
  if (ch === '/' && sql[i + 1] === '*') return to(sql.indexOf('*/', i + 2), 2);
  return -1;
}

/** A statement of a script: its text and the offset in the script where that text starts. */
export interface StatementSpan {
  readonly text: string;
  readonly offset: number;
}

/**
 * Splits a SQL script into statements at top-level semicolons (outside quotes, double-quoted
 * identifiers and comments), with the offset of each. Empty statements are left out.
 */
export function statementSpans(sql: string): StatementSpan[] {
  const out: StatementSpan[] = [];
  let start = 0;
  for (let i = 0; i < sql.length; i++) {
    const end = skipQuoted(sql, i);
    if (end >= 0) i = end;
    else if (sql[i] === ';') {
      out.push({ text: sql.slice(start, i), offset: start });
      start = i + 1;
    }
  }
  out.push({ text: sql.slice(start), offset: start });
  return out.filter((s) => blankComments(s.text).trim() !== '');
}

/** Splits a SQL script into statement texts at top-level semicolons; empty ones left out. */
export function splitStatements(sql: string): string[] {
  return statementSpans(sql).map((s) => s.text);
}

/** `sql` with every comment replaced by spaces (offsets and quoted text kept). */
export function blankComments(sql: string): string {
  let out = '';
  let from = 0;
  for (let i = 0; i < sql.length; i++) {
    const end = skipQuoted(sql, i);
    if (end < 0) continue;
    // Quoted text stays as it is (copied with what precedes it); a comment becomes spaces.
    if (sql[i] !== "'" && sql[i] !== '"') {
      out += sql.slice(from, i) + sql.slice(i, end + 1).replace(/[^\n]/g, ' ');
      from = end + 1;
    }
    i = end;
  }
  return from === 0 ? sql : out + sql.slice(from);
}

/**
 * The offset of the first `keyword` (a whole word, any case) in `sql` outside quotes, comments and
 * parentheses, or -1.
 */
export function topLevelKeyword(sql: string, keyword: string): number {
  const word = new RegExp(`^${keyword}(?![A-Za-z0-9_$])`, 'i');
  let depth = 0;
  for (let i = 0; i < sql.length; i++) {
    const end = skipQuoted(sql, i);
    if (end >= 0) { i = end; continue; }
    const ch = sql[i];
    if (ch === '(') depth += 1;
    else if (ch === ')') depth -= 1;
    else if (depth === 0 && !/[A-Za-z0-9_$]/.test(sql[i - 1] ?? ' ') && word.test(sql.slice(i, i + keyword.length + 1))) return i;
  }
  return -1;
}
