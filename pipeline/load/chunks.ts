/**
 * Columnar appends for the loader's JavaScript path (CONTRACT §1: exact types only).
 *
 * Validated records arrive one by one as typed cells (scaled `bigint` for DECIMAL, `bigint`
 * microseconds for TIMESTAMP, day numbers for DATE, `bigint` for BIGINT, strings, booleans). They
 * are collected into column arrays of CHUNK_ROWS rows and handed to DuckDB as one data chunk, which
 * costs far less than one appender call per value. No value passes through a JS `number` other
 * than day numbers, and nothing is ever sent as DOUBLE: DECIMAL cells are written as their scaled
 * 128-bit integers.
 */
import type { DuckDBAppender, DuckDBConnection, DuckDBType, DuckDBValue } from '@duckdb/node-api';
import { duckdb } from '../core/duckdb.js';

/** One typed cell as the loader produces it; null is SQL NULL. */
export type Cell = bigint | number | string | boolean | null;

/** Rows per data chunk: DuckDB's standard vector size. */
export const CHUNK_ROWS = 2048;

type Wrap = (v: Cell) => DuckDBValue;

/** How a cell of each table type becomes a DuckDB value (DECIMAL as its scaled integer, never a float). */
function wrapperFor(sqlType: string): Wrap {
  const { DuckDBDateValue, DuckDBDecimalValue, DuckDBTimestampValue } = duckdb();
  const dec = /^DECIMAL\((\d+),(\d+)\)$/.exec(sqlType);
  if (dec) {
    const width = Number(dec[1]);
    const scale = Number(dec[2]);
    return (v) => new DuckDBDecimalValue(v as bigint, width, scale);
  }
  switch (sqlType) {
    case 'TIMESTAMP': return (v) => new DuckDBTimestampValue(v as bigint);
    case 'DATE': return (v) => new DuckDBDateValue(v as number);
    case 'BIGINT': return (v) => v as bigint;
    case 'BOOLEAN': return (v) => v as boolean;
    case 'VARCHAR': return (v) => v as string;
    default: throw new Error(`load-chunks: no columnar writer for column type ${sqlType}`);
  }
}

/**
 * Appends typed rows to one table through data chunks. `sqlTypes` are the table's column types in
 * order (only TIMESTAMP, DATE, BIGINT, BOOLEAN, VARCHAR and DECIMAL(w,s) are accepted; anything
 * else throws at construction). Call `push` per row, `close` at the end (it flushes).
 */
export class ChunkAppender {
  private readonly wraps: Wrap[];
  private readonly columns: Cell[][];
  private rows = 0;
  private types: DuckDBType[] | undefined;

  private constructor(private readonly appender: DuckDBAppender, sqlTypes: readonly string[]) {
    this.wraps = sqlTypes.map(wrapperFor);
    this.columns = sqlTypes.map(() => new Array<Cell>(CHUNK_ROWS));
    if (appender.columnCount !== sqlTypes.length) throw new Error(`load-chunks: table has ${appender.columnCount} columns, ${sqlTypes.length} types given`);
  }

  /** Opens an appender on `table` (main schema) whose columns have the DuckDB types `sqlTypes`. */
  static async open(conn: DuckDBConnection, table: string, sqlTypes: readonly string[]): Promise<ChunkAppender> {
    return new ChunkAppender(await conn.createAppender(table), sqlTypes);
  }

  /** Adds one row: one cell per column, in table order. */
  push(cells: readonly Cell[]): void {
    const r = this.rows;
    for (let c = 0; c < cells.length; c++) this.columns[c][r] = cells[c];
    this.rows = r + 1;
    if (this.rows === CHUNK_ROWS) this.flush();
  }

  /** Sends the collected rows to DuckDB as one data chunk. */
  flush(): void {
    const n = this.rows;
    if (n === 0) return;
    this.types ??= this.wraps.map((_, i) => this.appender.columnType(i));
    const chunk = duckdb().DuckDBDataChunk.create(this.types, n);
    for (let c = 0; c < this.columns.length; c++) {
      const vector = chunk.getColumnVector(c);
      const col = this.columns[c];
      const wrap = this.wraps[c];
      for (let r = 0; r < n; r++) {
        const v = col[r];
        vector.setItem(r, v === null ? null : wrap(v));
        col[r] = null;
      }
      vector.flush();
    }
    this.appender.appendDataChunk(chunk);
    this.rows = 0;
  }

  /** Flushes and closes the appender (the rows are then in the table). */
  close(): void {
    this.flush();
    this.appender.closeSync();
  }
}
