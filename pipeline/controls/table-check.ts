/**
 * The table check: a control's SQL reads only what its definition declares (docs/controls.md).
 * Every statement is read from DuckDB's parse tree (parse-tree.ts) when the definitions load, and
 * each name it uses in FROM position must be one of:
 * - a dataset the definition lists in `reads`;
 * - an object sql/common creates (a shared table, view or macro), provided the definition
 *   declares every dataset that object reads; an object's datasets are those its own statement
 *   names plus those of the shared objects it names, so `order_current` reads `orders`;
 * - a temp table or view the control created earlier in its own scripts (named `rcNN_…`);
 *   a control may also set session variables named `rcNN_…` (`SET VARIABLE rcNN_x = …`), whose
 *   expression is checked like a query;
 * - a table the pipeline provides to that file (records.sql: `control_differences`);
 * - a CTE of the same statement (a CTE may not take a dataset's or a shared object's name);
 * - a table function over nothing: range, generate_series, unnest.
 * Anything else (an undeclared dataset, a raw load table, a file path, read_csv, query_table) is
 * a problem naming the control, the file, the statement and the name. A macro of sql/common called
 * as a function counts as reading its datasets too.
 */
import { DATASETS } from '../contract/datasets.js';
import { blankComments, statementSpans } from './sql-scripts.js';
import { UnreadableStatement, type CreatedObject, type SqlNames, type StatementNames } from './parse-tree.js';

/** Table functions a control or sql/common may call: they read no table. */
export const TABLE_FUNCTIONS_OVER_NOTHING: readonly string[] = ['range', 'generate_series', 'unnest'];

const DATASET_NAMES: ReadonlySet<string> = new Set(DATASETS.map((d) => d.name));

/** An object sql/common creates, and the datasets it reads directly or through earlier shared objects. */
export interface SharedObject {
  readonly name: string;
  readonly type: CreatedObject['type'];
  readonly tableMacro: boolean;
  /** Repository-relative path of the file creating it. */
  readonly file: string;
  readonly datasets: readonly string[];
}

/** One statement of sql/common: its text and the datasets it reads (the run executes it only when all are loaded). */
export interface CommonStatement {
  readonly file: string;
  readonly text: string;
  readonly datasets: readonly string[];
  readonly creates?: string;
}

/** sql/common read through the parse tree: its statements in order and the objects they create, by name. */
export interface SharedNames {
  readonly statements: readonly CommonStatement[];
  readonly objects: ReadonlyMap<string, SharedObject>;
}

/** A SQL file to check: its path as shown in messages and its text. */
export interface SqlFile {
  readonly path: string;
  readonly text: string;
  /** Tables the pipeline provides while this file runs (records.sql: `control_differences`). */
  readonly provided?: readonly string[];
}

/** A statement of a file, located for messages: `statement 2 (line 14: CREATE … rc01_scope AS …)`. */
function where(file: SqlFile, index: number, offset: number, text: string): string {
  const lead = text.length - blankComments(text).trimStart().length;
  const line = file.text.slice(0, offset + lead).split('\n').length;
  const words = blankComments(text).replace(/\s+/g, ' ').trim();
  return `${file.path} statement ${index + 1} (line ${line}: ${words.length > 60 ? `${words.slice(0, 60)}…` : words})`;
}

/** A statement located for messages, with its parse-tree names or the reason it cannot be read. */
interface ReadStatement {
  readonly file: SqlFile;
  readonly at: string;
  readonly text: string;
  readonly names?: StatementNames;
  readonly unreadable?: string;
}

/** Each statement of each file, read in one batch. */
async function statementsOf(parser: SqlNames, files: readonly SqlFile[]): Promise<ReadStatement[]> {
  const spans = files.flatMap((file) => statementSpans(file.text).map((s, i) => ({ file, index: i, offset: s.offset, text: s.text })));
  const names = await parser.read(spans.map((s) => s.text));
  return spans.map((s, i) => {
    const n = names[i];
    // Located only for a message (a getter): most statements never need it.
    const at = () => where(s.file, s.index, s.offset, s.text);
    return n instanceof UnreadableStatement
      ? { file: s.file, text: s.text, unreadable: n.reason, get at() { return at(); } }
      : { file: s.file, text: s.text, names: n, get at() { return at(); } };
  });
}

/** The names a statement uses that a CTE of it does not define, from tables, table functions and functions. */
function usedNames(n: StatementNames): { tables: readonly string[]; tableFunctions: readonly string[]; functions: readonly string[] } {
  const cte = new Set(n.ctes);
  return { tables: n.tables.filter((t) => !cte.has(t)), tableFunctions: n.tableFunctions, functions: n.functions };
}

/** Problems of CTE names that would hide a dataset or a shared object. */
function shadowingCtes(n: StatementNames, shared: ReadonlyMap<string, SharedObject>, at: () => string): string[] {
  return n.ctes.filter((c) => DATASET_NAMES.has(c) || shared.has(c)).map((c) => `${at()} defines a CTE named ${c}, the name of a ${DATASET_NAMES.has(c) ? 'dataset' : 'shared object of sql/common'}: rename it`);
}

/**
 * Reads sql/common: each statement's datasets and the objects it creates. A shared statement may
 * name any dataset, the objects earlier shared statements create, its CTEs and the table functions
 * over nothing. Returns the names and the problems found (empty when all is well).
 */
export async function readShared(parser: SqlNames, files: readonly SqlFile[]): Promise<{ shared: SharedNames; problems: string[] }> {
  const objects = new Map<string, SharedObject>();
  const statements: CommonStatement[] = [];
  const problems: string[] = [];
  for (const s of await statementsOf(parser, files)) {
    if (!s.names) { problems.push(`${s.at} cannot be checked: ${s.unreadable}`); continue; }
    problems.push(...shadowingCtes(s.names, objects, () => s.at));
    const used = usedNames(s.names);
    const datasets = new Set<string>();
    const take = (name: string, asTable: boolean) => {
      const o = objects.get(name);
      if (o) for (const d of o.datasets) datasets.add(d);
      else if (asTable && DATASET_NAMES.has(name)) datasets.add(name);
      else if (asTable) problems.push(`${s.at} reads ${name}, which is neither a dataset nor an object created earlier in sql/common`);
    };
    for (const t of used.tables) take(t, true);
    for (const f of used.tableFunctions.filter((n) => !TABLE_FUNCTIONS_OVER_NOTHING.includes(n))) {
      if (objects.get(f)?.tableMacro) take(f, false);
      else problems.push(`${s.at} calls table function ${f}, which can read what no definition declares`);
    }
    for (const f of used.functions) take(f, false);
    const sorted = [...datasets].sort();
    const c = s.names.creates;
    if (c && (DATASET_NAMES.has(c.name) || /^rc[0-9]{2}_/.test(c.name))) problems.push(`${s.at} creates ${c.name}: a shared object may not take a dataset's name or a control's rcNN_ prefix`);
    if (c?.type === 'VARIABLE') { problems.push(`${s.at} sets session variable ${c.name}: sql/common sets none (the pipeline sets the run's)`); continue; }
    if (c) objects.set(c.name, { name: c.name, type: c.type, tableMacro: c.tableMacro, file: s.file.path, datasets: sorted });
    statements.push({ file: s.file.path, text: s.text, datasets: sorted, ...(c ? { creates: c.name } : {}) });
  }
  return { shared: { statements, objects }, problems };
}

/** What the table check needs of a control definition. */
export interface CheckedControl {
  readonly control_id: string;
  readonly reads: readonly string[];
  /** Path of its control.json, as shown in messages. */
  readonly definitionPath: string;
  /** Its SQL files in evaluation order (prepare, totals, differences, records, readiness, assertions). */
  readonly files: readonly SqlFile[];
}

/**
 * The table check of one control against sql/common (module comment). Returns its problems, one
 * line each, naming the control, the file, the statement and the name; empty when all is well.
 */
export async function controlTableProblems(parser: SqlNames, control: CheckedControl, shared: SharedNames): Promise<string[]> {
  const own = new Set<string>();
  const problems: string[] = [];
  for (const s of await statementsOf(parser, control.files)) {
    // Located only for a message: most statements have no problem.
    const at = () => `${control.control_id}: ${s.at}`;
    if (!s.names) { problems.push(`${at()} cannot be checked: ${s.unreadable}`); continue; }
    problems.push(...shadowingCtes(s.names, shared.objects, at));
    const visible = s.file.provided?.length ? new Set([...own, ...s.file.provided]) : own;
    problems.push(...statementProblems(control, shared, visible, s.names).map((p) => `${at()} ${p}`));
    if (s.names.creates && s.names.creates.type !== 'VARIABLE') own.add(s.names.creates.name);
  }
  return problems;
}

/** What one statement of a control reads or creates that its definition does not allow. */
function statementProblems(control: CheckedControl, shared: SharedNames, own: ReadonlySet<string>, names: StatementNames): string[] {
  const undeclared = `${control.definitionPath} does not declare it (its "reads": ${control.reads.join(', ')})`;
  const problems: string[] = [];
  const viaShared = (name: string, how: 'reads' | 'calls') => {
    const o = shared.objects.get(name)!;
    const what = o.type === 'MACRO' ? (o.tableMacro ? 'table macro' : 'macro') : o.type.toLowerCase();
    for (const d of o.datasets.filter((x) => !control.reads.includes(x))) problems.push(`${how} shared ${what} ${name} (${o.file}), which reads dataset ${d}; ${undeclared}`);
  };
  const used = usedNames(names);
  for (const t of used.tables.filter((x) => !own.has(x))) {
    if (shared.objects.has(t)) viaShared(t, 'reads');
    else if (!DATASET_NAMES.has(t)) problems.push(`reads ${t}, which is neither a dataset, an object of sql/common nor a table this control created earlier`);
    else if (!control.reads.includes(t)) problems.push(`reads dataset ${t}; ${undeclared}`);
  }
  for (const f of used.tableFunctions.filter((x) => !TABLE_FUNCTIONS_OVER_NOTHING.includes(x))) {
    if (shared.objects.get(f)?.tableMacro) viaShared(f, 'calls');
    else problems.push(`calls table function ${f}: a control reads only its declared datasets (table functions allowed: ${TABLE_FUNCTIONS_OVER_NOTHING.join(', ')})`);
  }
  for (const f of used.functions.filter((x) => shared.objects.has(x))) viaShared(f, 'calls');
  const c = names.creates;
  const prefix = `${control.control_id.toLowerCase()}_`;
  if (c?.type === 'VARIABLE' && !c.name.startsWith(prefix)) {
    problems.push(`sets session variable ${c.name}: a control sets only session variables named ${prefix}… (the pipeline sets the others)`);
  } else if (c && c.type !== 'VARIABLE' && (c.type === 'MACRO' || !c.temporary || !c.name.startsWith(prefix))) {
    problems.push(`creates ${c.temporary ? '' : 'non-temporary '}${c.type.toLowerCase()} ${c.name}: a control creates only TEMP tables and views named ${prefix}… (dropped after it)`);
  }
  return problems;
}
