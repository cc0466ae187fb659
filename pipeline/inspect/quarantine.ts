/**
 * The quarantine of a published run (CONTRACT §2, issue 19): every entry from the run's
 * `quarantine` output when its bytes have the SHA-256 its manifest recorded, else the entries the
 * manifest lists (at most 1000, raw text cut at 2048 characters), saying so. Entries are numbered
 * from 1 in the order the run listed them (dataset, then file, then record).
 */
import type { QuarantineEntry } from '../load/load.js';
import type { ObjectStore } from '../store/object-store.js';
import type { StoredManifest } from '../report/run-view.js';
import { readOutput, type OutputRead, type Reader } from './run-outputs.js';

/** One quarantine entry as the run recorded it (load.ts QuarantineEntry), with its number in the run's list. */
export interface QuarantineItem extends QuarantineEntry {
  readonly number: number;
}

/** A run's quarantine as read back. */
export interface QuarantineRead {
  readonly run_id: string;
  /** Entries the run quarantined in all. */
  readonly count: number;
  readonly entries: readonly QuarantineItem[];
  /** True when `entries` holds every one. */
  readonly complete: boolean;
  readonly from: OutputRead;
}

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
const text = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

/** The quarantine of the run; `only`, when given, reads just that entry number. */
export async function quarantineOf(store: ObjectStore, stored: StoredManifest, reader: Reader, only?: number): Promise<QuarantineRead> {
  const q = stored.manifest.quarantine;
  const from = await readOutput(store, stored, 'quarantine', reader);
  if (from.state !== 'verified' || !/^[A-Za-z0-9_\-/.]+$/.test(from.path)) {
    const entries = q.entries.map((e, i) => {
      const o = e as Record<string, unknown>;
      return { number: i + 1, dataset: String(o.dataset), file: String(o.file), row: num(o.row), line: num(o.line), column: text(o.column), rule: String(o.rule), message: String(o.message), raw: String(o.raw ?? '') };
    }).filter((e) => only === undefined || e.number === only);
    return { run_id: stored.run_id, count: q.count, entries, complete: q.listed === q.count, from };
  }
  const conn = await reader.connection();
  const where = only === undefined ? '' : ` WHERE file_row_number = ${Math.trunc(only) - 1}`;
  const rows = (await conn.runAndReadAll(`SELECT file_row_number::VARCHAR AS n, dataset, file, "row"::VARCHAR AS "row", line::VARCHAR AS line, "column", rule, message, raw
    FROM read_parquet('${from.path}', file_row_number = true)${where} ORDER BY file_row_number`)).getRowObjectsJson();
  const entries = rows.map((r) => ({
    number: Number(r.n) + 1, dataset: String(r.dataset), file: String(r.file), row: num(r.row), line: num(r.line),
    column: text(r.column), rule: String(r.rule), message: String(r.message), raw: String(r.raw ?? ''),
  }));
  return { run_id: stored.run_id, count: from.rows, entries, complete: true, from };
}
