/**
 * What one SQL statement names, read from DuckDB's own parse tree: `json_serialize_sql` turns a
 * query into JSON without binding it (no table needs to exist), and the walk below collects the
 * tables, table functions, functions and CTE names it finds anywhere in that tree (subqueries in
 * any clause, CTEs, set operations, joins, lambdas). DuckDB serializes queries only; a
 * `CREATE [OR REPLACE] [TEMP] TABLE|VIEW name AS <query>` (or, in sql/common, `CREATE MACRO
 * name(args) AS [TABLE] <body>`) is split at its first top-level AS and its query serialized, and
 * `SET VARIABLE name = <expression>` is read as `SELECT (<expression>)` (it creates a session
 * variable, type VARIABLE).
 * Any other statement kind, and any table reference DuckDB serializes in a form not listed here
 * (SHOW/DESCRIBE/SUMMARIZE), is refused as unreadable rather than passed unchecked.
 */
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { duckdb } from '../core/duckdb.js';
import { repoPath } from '../core/paths.js';
import { NAMES_MEMO, namesMemoAt, type MemoNames, type NamesMemo } from './names-memo.js';
import { blankComments, topLevelKeyword } from './sql-scripts.js';

/** An object a statement creates. `name` is lower case (DuckDB compares names without case). */
export interface CreatedObject {
  readonly type: 'TABLE' | 'VIEW' | 'MACRO' | 'VARIABLE';
  readonly name: string;
  /** TEMP / TEMPORARY, or a `temp.` qualifier (a session variable is temporary). */
  readonly temporary: boolean;
  /** A table macro (`AS TABLE …`): called in FROM, like a table function. */
  readonly tableMacro: boolean;
}

/** The names one statement uses, lower case, each listed once in order of first appearance. */
export interface StatementNames {
  /** Set when the statement is a CREATE … AS. */
  readonly creates?: CreatedObject;
  /** Names in FROM/JOIN position (base tables; a CTE reference looks the same). */
  readonly tables: readonly string[];
  /** Names defined by WITH anywhere in the statement. */
  readonly ctes: readonly string[];
  /** Functions called in FROM position (`range(…)`, `read_csv(…)`, a table macro). */
  readonly tableFunctions: readonly string[];
  /** Scalar and aggregate functions called (a macro of sql/common among them). */
  readonly functions: readonly string[];
}

/** The statement could not be read (not a kind listed above, or a syntax error); `reason` says why. */
export class UnreadableStatement extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'UnreadableStatement';
  }
}

/** Table reference forms whose names the walk sees; any other form is refused. */
const TABLE_REF_TYPES = new Set(['BASE_TABLE', 'TABLE_FUNCTION', 'SUBQUERY', 'JOIN', 'EXPRESSION_LIST', 'EMPTY', 'PIVOT']);

/**
 * Reads statements with a private in-memory DuckDB that holds nothing (parsing only), opened on
 * the first statement whose names are not in the names memo (names-memo.ts: the build's, shared by
 * every parser of the process, so a process parses a statement once). Close it after use.
 */
export class SqlNames {
  private db?: { instance: DuckDBInstance; conn: DuckDBConnection };
  private readonly memo: NamesMemo;
  /** Statements this parser had DuckDB parse (the others' names came from the memo). */
  parsed = 0;

  /** A parser keeping names in the memo at `memoPath` (default: the build's, NAMES_MEMO). */
  constructor(memoPath: string = repoPath(NAMES_MEMO)) {
    this.memo = namesMemoAt(memoPath);
  }

  /** Closes the parser's DuckDB, if it was opened. */
  close(): void {
    this.db?.conn.closeSync();
    this.db?.instance.closeSync();
    this.db = undefined;
  }

  /**
   * The names of each statement (each text exactly one statement), in order: its StatementNames,
   * or an UnreadableStatement saying why it cannot be checked. DuckDB parses the new ones in one query.
   */
  async read(statements: readonly string[]): Promise<(StatementNames | UnreadableStatement)[]> {
    const known = new Map<string, MemoNames>();
    for (const s of statements) {
      const kept = known.has(s) ? undefined : this.memo.recall(s);
      if (kept) known.set(s, kept);
    }
    const fresh = [...new Set(statements.filter((s) => !known.has(s)))];
    const plans = fresh.map(plan);
    const queries = plans.filter((q): q is Plan => !(q instanceof UnreadableStatement));
    const trees = await this.trees(queries.map((q) => q.query));
    const parsed = new Map<string, MemoNames>();
    fresh.forEach((s, i) => {
      const q = plans[i];
      const names = q instanceof UnreadableStatement ? q : namesOf(q, trees[queries.indexOf(q)]);
      parsed.set(s, names instanceof UnreadableStatement ? { unreadable: names.reason } : names);
      known.set(s, parsed.get(s)!);
    });
    this.memo.remember(parsed);
    this.parsed += fresh.length;
    return statements.map((s) => {
      const kept = known.get(s)!;
      return 'unreadable' in kept ? new UnreadableStatement(kept.unreadable) : (kept as StatementNames);
    });
  }

  /** DuckDB's parse tree of each query, or why it has none. */
  private async trees(queries: readonly string[]): Promise<(unknown | UnreadableStatement)[]> {
    if (queries.length === 0) return [];
    if (!this.db) {
      const instance = await duckdb().DuckDBInstance.create(':memory:', { threads: '1' });
      this.db = { instance, conn: await instance.connect() };
    }
    const p = await this.db.conn.prepare('SELECT json_serialize_sql(q) AS tree FROM (SELECT unnest($1::VARCHAR[]) AS q, generate_subscripts($1::VARCHAR[], 1) AS i) ORDER BY i');
    try {
      p.bindList(1, duckdb().listValue([...queries]));
      return (await p.runAndReadAll()).getRowObjectsJson().map((r) => {
        const doc = JSON.parse(String(r.tree)) as { error: boolean; error_message?: string; statements?: unknown[] };
        if (doc.error) return new UnreadableStatement(/Only SELECT/.test(doc.error_message ?? '') ? 'only queries and CREATE … AS <query> can be checked' : `DuckDB cannot parse it: ${doc.error_message}`);
        if (doc.statements?.length !== 1) return new UnreadableStatement('it holds more than one statement');
        return doc.statements[0];
      });
    } finally {
      p.destroySync();
    }
  }
}

/** The names in a plan's parse tree (or why there are none). */
function namesOf(q: Plan, tree: unknown): StatementNames | UnreadableStatement {
  if (tree instanceof UnreadableStatement) return tree;
  try {
    return { ...collect(tree), ...(q.creates ? { creates: q.creates } : {}) };
  } catch (e) {
    if (e instanceof UnreadableStatement) return e;
    throw e;
  }
}

/** What to serialize for a statement: itself, or the query of a CREATE … AS (and what it creates). */
interface Plan { readonly query: string; readonly creates?: CreatedObject }

function plan(statement: string): Plan | UnreadableStatement {
  const text = blankComments(statement).trim();
  const set = SET_VARIABLE.exec(text);
  if (set) return { query: `SELECT (${set[2]})`, creates: { type: 'VARIABLE', name: splitName(set[1])[0], temporary: true, tableMacro: false } };
  if (!/^CREATE\b/i.test(text)) return { query: text };
  const as = topLevelKeyword(text, 'AS');
  const head = as < 0 ? undefined : CREATE_HEAD.exec(text.slice(0, as).trim());
  if (!head) return new UnreadableStatement('only CREATE [OR REPLACE] [TEMP] TABLE|VIEW name AS <query> (or CREATE MACRO in sql/common) can be checked');
  const type = head[2].toUpperCase() === 'FUNCTION' ? 'MACRO' : (head[2].toUpperCase() as CreatedObject['type']);
  if (type !== 'MACRO' && head[4]) return new UnreadableStatement('a CREATE with a column list cannot be checked');
  const parts = splitName(head[3]);
  const body = text.slice(as + 2).trim();
  const tableMacro = type === 'MACRO' && /^TABLE\b/i.test(body);
  const query = type !== 'MACRO' ? body : tableMacro ? body.slice(5) : `SELECT (${body})`;
  return { query, creates: { type, name: parts[parts.length - 1], temporary: Boolean(head[1]) || (parts.length > 1 && parts[0] === 'temp'), tableMacro } };
}

const NAME_PART = String.raw`(?:"(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_$]*)`;
/** CREATE [OR REPLACE] [TEMP] TABLE|VIEW|MACRO [IF NOT EXISTS] name [(…)]: the part before the top-level AS. */
const CREATE_HEAD = new RegExp(String.raw`^CREATE\s+(?:OR\s+REPLACE\s+)?(?:(TEMP|TEMPORARY)\s+)?(TABLE|VIEW|MACRO|FUNCTION)\s+(?:IF\s+NOT\s+EXISTS\s+)?(${NAME_PART}(?:\s*\.\s*${NAME_PART}){0,2})\s*(\([\s\S]*\))?$`, 'i');

/** SET VARIABLE name = <expression>: the name and the expression. */
const SET_VARIABLE = new RegExp(String.raw`^SET\s+VARIABLE\s+(${NAME_PART})\s*=\s*([\s\S]+)$`, 'i');

/** The parts of a dotted name, unquoted and lower case. */
function splitName(name: string): string[] {
  return [...name.matchAll(new RegExp(NAME_PART, 'g'))].map(([p]) => (p.startsWith('"') ? p.slice(1, -1).replace(/""/g, '"') : p).toLowerCase());
}

interface Found { tables: Set<string>; ctes: Set<string>; tableFunctions: Set<string>; functions: Set<string> }

function collect(tree: unknown): StatementNames {
  const found: Found = { tables: new Set(), ctes: new Set(), tableFunctions: new Set(), functions: new Set() };
  walk(tree, found);
  return { tables: [...found.tables], ctes: [...found.ctes], tableFunctions: [...found.tableFunctions], functions: [...found.functions] };
}

type Node = Record<string, unknown>;

/** Visits every object of the tree, recording the names of the nodes that carry one. */
function walk(node: unknown, found: Found): void {
  if (Array.isArray(node)) { for (const n of node) walk(n, found); return; }
  if (node === null || typeof node !== 'object') return;
  const o = node as Node;
  // Table references carry `alias` and `sample` (a query node only `sample`, an expression `class`).
  if ('alias' in o && 'sample' in o && !('class' in o) && !TABLE_REF_TYPES.has(String(o.type))) {
    throw new UnreadableStatement(`its table reference of form ${String(o.type)} cannot be checked`);
  }
  if (o.type === 'BASE_TABLE') found.tables.add(String(o.table_name).toLowerCase());
  if (o.class === 'FUNCTION') found.functions.add(String(o.function_name).toLowerCase());
  if (o.type === 'TABLE_FUNCTION') {
    // Its function is a table function, not a scalar one: record it so, and walk its arguments.
    const f = o.function as Node;
    found.tableFunctions.add(String(f.function_name).toLowerCase());
    for (const [k, v] of Object.entries(o)) walk(k === 'function' ? Object.values(f) : v, found);
    return;
  }
  const ctes = (o.cte_map as { map?: { key: string }[] } | undefined)?.map;
  for (const c of ctes ?? []) found.ctes.add(c.key.toLowerCase());
  for (const v of Object.values(o)) walk(v, found);
}
