/**
 * How a Parquet file stores its timestamps, for the rules of CONTRACT §1: a Parquet timestamp is
 * TIMESTAMP *UTC-adjusted* (a value without zone is rejected) with at most 6 fraction digits.
 *
 * DuckDB cannot tell the loader either fact from a column's type: it reads a column written
 * without zone (`isAdjustedToUTC` false, INT96) as TIMESTAMP, like the legacy converted types that
 * *are* UTC, and it reads a UTC-adjusted NANOS column as TIMESTAMP WITH TIME ZONE, silently
 * dropping the digits below the microsecond. So the file's own schema is read
 * (`parquet_schema`), and the nanoseconds of a UTC-adjusted NANOS column are read exactly by
 * hyparquet, a JavaScript Parquet reader, to find the values DuckDB would have truncated.
 */
import type { DuckDBConnection } from '@duckdb/node-api';

/** What the file says of one top-level column's timestamps. */
export interface ParquetTimeColumn {
  /** The column's name as the file spells it (DuckDB renames a repeated name; this does not). */
  readonly parquetName: string;
  /** Stored without zone: a TIMESTAMP logical type not adjusted to UTC, or INT96. */
  readonly naive: boolean;
  /** A UTC-adjusted TIMESTAMP in nanoseconds (DuckDB reads it truncated to microseconds). */
  readonly utcNanos: boolean;
}

/**
 * The top-level columns of a Parquet file, keyed by `described` — the names DuckDB gives them, in
 * order, as the caller's `DESCRIBE` listed them — paired by position with the file's schema: a
 * field inside a nested column never stands for a top-level column of the same name. `stagedPath`
 * is a safe staged link (checked by the callers). Throws DuckDB's error when the schema cannot be
 * read, and an Error when the two listings do not pair up.
 */
export async function parquetTimeColumns(conn: DuckDBConnection, stagedPath: string, described: readonly string[]): Promise<Map<string, ParquetTimeColumn>> {
  const rows = (await conn.runAndReadAll(`SELECT name, type, logical_type, num_children FROM parquet_schema('${stagedPath}')`)).getRows();
  const children = (i: number) => (rows[i][3] === null ? 0 : Number(rows[i][3]));
  const top: number[] = [];
  // rows[0] is the root; the schema is listed depth first, so a subtree is skipped by its counts.
  const skip = (i: number): number => { let next = i + 1; for (let k = 0; k < children(i); k++) next = skip(next); return next; };
  for (let i = 1, k = 0; rows.length && k < children(0); k++) { top.push(i); i = skip(i); }
  if (top.length !== described.length) throw new Error(`the file's schema lists ${top.length} top-level columns and DuckDB reads ${described.length}`);
  const out = new Map<string, ParquetTimeColumn>();
  top.forEach((i, k) => {
    const logical = rows[i][2] === null ? '' : String(rows[i][2]);
    const timestamp = /^TimestampType\(/.test(logical);
    out.set(described[k], {
      parquetName: String(rows[i][0]),
      naive: String(rows[i][1]) === 'INT96' || (timestamp && /isAdjustedToUTC=(0|false)\b/i.test(logical)),
      utcNanos: timestamp && /isAdjustedToUTC=(1|true)\b/i.test(logical) && /NANOS=(?!<null>)/.test(logical),
    });
  });
  return out;
}

/**
 * The values of a UTC-adjusted NANOS column that are not whole microseconds: record number
 * (1-based, as `file_row_number + 1`) → nanoseconds since the epoch, UTC. Reads only that column,
 * one column chunk at a time, of the rows `rows` (0-based, end exclusive; default all), and keeps
 * at most `keep` of them (the fast path only asks whether there is one). hyparquet is not stopped
 * early: an exception thrown from its callback escapes as an unhandled rejection. `path` is the
 * file (or its staged link). Throws when the file cannot be decoded (the caller quarantines it as
 * unreadable).
 */
export async function subMicrosecondValues(path: string, parquetName: string, keep = Infinity, rows?: { start: number; end: number }): Promise<Map<number, bigint>> {
  const found = new Map<number, bigint>();
  // Loaded only for the rare file that needs it (about 60 ms of module loading otherwise on every run).
  const [{ asyncBufferFromFile, parquetRead }, { compressors }] = await Promise.all([import('hyparquet'), import('hyparquet-compressors')]);
  const file = await asyncBufferFromFile(path);
  await parquetRead({
    file,
    columns: [parquetName],
    compressors,
    ...(rows ? { rowStart: rows.start, rowEnd: rows.end } : {}),
    parsers: { timestampFromNanoseconds: (nanos: bigint) => nanos },
    onChunk: ({ columnData, rowStart }) => {
      for (let j = 0; j < columnData.length && found.size < keep; j++) {
        const row = rowStart + j; // 0-based; a chunk may hold rows outside the range asked for
        if (rows && (row < rows.start || row >= rows.end)) continue;
        const v = columnData[j] as unknown;
        if (typeof v === 'bigint' && v % 1000n !== 0n) found.set(row + 1, v);
      }
    },
  });
  return found;
}

/**
 * A UTC instant in nanoseconds as the contract's text form with all 9 fraction digits
 * (`2026-11-02T16:29:14.907796789Z`), for a quarantine entry: the timestamp rule rejects it
 * (timestamp_form: at most 6 fraction digits) and the raw text shows the value as stored.
 */
export function nanosText(nanos: bigint): string {
  const frac = ((nanos % 1_000_000_000n) + 1_000_000_000n) % 1_000_000_000n;
  const seconds = (nanos - frac) / 1_000_000_000n;
  const iso = new Date(Number(seconds) * 1000).toISOString(); // years 0000–9999 print as YYYY
  return `${iso.slice(0, 19)}.${frac.toString().padStart(9, '0')}Z`;
}
