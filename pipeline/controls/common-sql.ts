/**
 * sql/common: the macros and shared tables every control may use, run once after the load. Each
 * statement is read through the table check (table-check.ts), which gives the datasets it reads;
 * a run executes only the statements whose datasets it loaded, so a dataset no selected control
 * declares is never read, not even as an empty table (`--control RC03` loads no orders and builds
 * no order_current).
 */
import { readFileSync } from 'node:fs';
import type { DuckDBConnection } from '@duckdb/node-api';
import { sha256Hex } from '../core/digest.js';
import { InternalError } from '../core/errors.js';
import { repoPath } from '../core/paths.js';
import { SqlNames } from './parse-tree.js';
import { runScript } from './sql-scripts.js';
import { readShared, type SharedNames } from './table-check.js';

/** The files of sql/common in the order they run: macros, then the shared tables. */
const COMMON_FILES = ['sql/common/macros.sql', 'sql/common/views.sql'] as const;

/** sql/common: its files (path, text, SHA-256), its statements with their datasets, the objects it creates. */
export interface CommonSql extends SharedNames {
  readonly files: readonly { readonly path: string; readonly text: string; readonly sha256: string }[];
}

/**
 * Reads sql/common from the repository and its names from the parse tree, with `parser` or a
 * parser of its own. Throws InternalError listing every statement that names something other than
 * a dataset or an earlier shared object, or that cannot be read.
 */
export async function loadCommonSql(parser?: SqlNames): Promise<CommonSql> {
  const files = COMMON_FILES.map((path) => {
    const text = readFileSync(repoPath(path), 'utf8');
    return { path, text, sha256: sha256Hex(text) };
  });
  const own = parser ? undefined : new SqlNames();
  try {
    const { shared, problems } = await readShared(parser ?? own!, files);
    if (problems.length) throw new InternalError(`sql/common is refused:\n  ${problems.join('\n  ')}`);
    return { ...shared, files };
  } finally {
    own?.close();
  }
}

/**
 * Runs the statements of sql/common whose datasets are all in `loaded`, in order. Returns the names
 * of the shared objects left out (their datasets were not loaded), for the log.
 */
export async function runCommonSql(conn: DuckDBConnection, common: CommonSql, loaded: readonly string[]): Promise<string[]> {
  const have = new Set(loaded);
  const skipped: string[] = [];
  const run: string[] = [];
  for (const s of common.statements) {
    if (s.datasets.every((d) => have.has(d))) run.push(s.text);
    else if (s.creates) skipped.push(s.creates);
  }
  // In order, in one call (runScript); each statement's own line ends before its semicolon (it may end in a comment).
  if (run.length) await runScript(conn, run.join('\n;\n'));
  return skipped;
}
