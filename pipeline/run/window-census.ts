/**
 * Whether the window holds any loaded record (CONTRACT §3 windows): a window none of whose
 * datasets has a record in it, though records were loaded, leaves every control CLEAN or NOT_READY
 * over nothing, which a mistyped `--date` (last year's day) makes look like a quiet night. The
 * run then says so, with the range the loaded records span, in its notes and on stderr. It never changes a
 * status: an empty window is a valid window.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { datasetSpec } from '../contract/datasets.js';
import type { Window } from '../contract/window.js';
import { ident } from '../core/sql-text.js';
import type { DatasetLoad } from '../load/load-types.js';

/** Whether a manifest note is the empty-window note (the run's summary repeats it on stdout). */
export const isEmptyWindowNote = (note: string): boolean => note.startsWith('window: [') && note.includes(') holds none of the ');

/**
 * The note for `window` when records of the datasets in `loads` were loaded on `conn` and none of
 * them falls in the window by its dataset's window column (the first dataset with one in the
 * window stops the search); null otherwise, or when no dataset read has a window column.
 */
export async function emptyWindowNote(conn: DuckDBConnection, window: Window, loads: readonly DatasetLoad[]): Promise<string | null> {
  const read = loads.flatMap((d) => {
    const column = datasetSpec(d.dataset).windowColumn;
    return column && d.records_loaded > 0 ? [{ dataset: d.dataset, column, records: d.records_loaded }] : [];
  });
  if (!read.length) return null;
  const inWindow = (column: string) => `${ident(column)} >= make_timestamp(${window.startMicros}) AND ${ident(column)} < make_timestamp(${window.endMicros})`;
  for (const r of read) {
    const rows = await conn.runAndReadAll(`SELECT 1 FROM ${ident(r.dataset)} WHERE ${inWindow(r.column)} LIMIT 1`);
    if (rows.currentRowCount > 0) return null;
  }
  let lo: string | null = null;
  let hi: string | null = null;
  for (const r of read) {
    const rows = (await conn.runAndReadAll(`SELECT strftime(min(${ident(r.column)}), '%Y-%m-%dT%H:%M:%SZ') AS lo, strftime(max(${ident(r.column)}), '%Y-%m-%dT%H:%M:%SZ') AS hi FROM ${ident(r.dataset)}`)).getRowObjectsJson();
    const range = rows[0] as { lo: string | null; hi: string | null };
    // ISO texts of years 0001–9999 sort as the instants do.
    if (range.lo !== null && (lo === null || range.lo < lo)) lo = range.lo;
    if (range.hi !== null && (hi === null || range.hi > hi)) hi = range.hi;
  }
  const total = read.reduce((n, r) => n + r.records, 0);
  const span = lo === null ? 'none has a window time' : `their window times run from ${lo} to ${hi}`;
  return `window: [${window.start}, ${window.end}) holds none of the ${total} record(s) loaded from ${read.length} dataset(s) (${span}): its control totals count no record; check --date or --window`;
}
