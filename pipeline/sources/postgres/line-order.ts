/**
 * Puts a plain CSV extract's records in one fixed order: its lines in byte order, the header
 * first (docs/postgres.md "The extract's order"). The server sends a COPY's rows in the order it
 * reads them, which changes with the table's physical layout (an update, a VACUUM, a concurrent
 * scan) even when the rows do not; sorted, the extract's bytes, SHA-256 and record numbers depend
 * on its rows alone. DuckDB sorts, in one instance per database extract, made when first needed.
 * Asking the server to sort instead (ORDER BY every column) blocks the COPY's stream until the
 * sort ends, on the same cores the run needs: at 1M orders the server spent about 12 CPU seconds
 * sorting the orders, DuckDB 3.
 */
import { mkdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { DuckDBInstance } from '@duckdb/node-api';
import { duckdb } from '../../core/duckdb.js';

/** DuckDB's memory for sorting (it spills to a folder beside the file past this). */
const SORT_MEMORY = '1GB';

const literal = (path: string) => `'${path.replace(/'/g, "''")}'`;

/**
 * Sorts plain CSV files' lines, with its own files (the unsorted copies, DuckDB's spill) in
 * `workDir`, outside every dataset folder; `close()` when the extract is done removes it.
 */
export class LineSorter {
  private instance?: Promise<DuckDBInstance>;

  constructor(readonly workDir: string) {}

  /** Where the unsorted copy of `dataset`'s extract is written. */
  async unsortedPath(dataset: string): Promise<string> {
    await mkdir(this.workDir, { recursive: true });
    return join(this.workDir, `${dataset}.csv`);
  }

  /**
   * Writes `headerLine` and then `from`'s lines after its first (its header) in byte order to
   * `to`. Returns false when DuckDB cannot read every line as one field (a line holding byte 0x01)
   * or `to` does not hold exactly `from`'s bytes; the caller then has the server sort. `from` is
   * removed either way.
   */
  async sort(from: string, to: string, headerLine: string): Promise<boolean> {
    try {
      const conn = await (await this.start()).connect();
      try {
        // One VARCHAR field per line: a plain file has no quote, CR or byte above 0x7F (csv-fast.ts),
        // and a line holding the delimiter 0x01 fails strict mode instead of being split.
        const lines = `read_csv(${literal(from)}, columns = {'line': 'VARCHAR'}, header = true, delim = E'\\x01', quote = '', escape = '', auto_detect = false, strict_mode = true, null_padding = false)`;
        await conn.run(`COPY (SELECT line FROM (SELECT 0 AS part, ${literal(headerLine)} AS line UNION ALL SELECT 1, line FROM ${lines}) ORDER BY part, line) TO ${literal(to)} (FORMAT csv, HEADER false, QUOTE '', ESCAPE '', DELIMITER E'\\x01')`);
      } finally {
        conn.closeSync();
      }
      const [all, sorted] = await Promise.all([stat(from), stat(to)]);
      return all.size === sorted.size;
    } catch {
      return false;
    } finally {
      await rm(from, { force: true });
    }
  }

  /** Closes the DuckDB instance, if one was made, and removes the work folder. Never throws: the run's scratch folder goes anyway. */
  async close(): Promise<void> {
    const made = this.instance;
    this.instance = undefined;
    if (made) (await made.catch(() => undefined))?.closeSync();
    await rm(this.workDir, { recursive: true, force: true }).catch(() => undefined);
  }

  private start(): Promise<DuckDBInstance> {
    this.instance ??= duckdb().DuckDBInstance.create(':memory:', {
      threads: '2', memory_limit: SORT_MEMORY, preserve_insertion_order: 'false', temp_directory: join(this.workDir, 'duckdb-tmp'),
    });
    return this.instance;
  }
}
