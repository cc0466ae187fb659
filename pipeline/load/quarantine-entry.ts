/** The quarantine entry shape, shared by the loader (load.ts) and the delivery cache (delivery-cache.ts). */

/**
 * One quarantined record or file (CONTRACT §2). `row` is the data record number (1 = first record
 * after the header), `line` the physical line where the record starts (1 = first line of the
 * file); both are null for an entry about a whole file. `rule` is a stable code listed in
 * docs/input-rules.md; `raw` is the record's text (at most RAW_KEEP_CHARS characters).
 */
export interface QuarantineEntry {
  readonly dataset: string;
  readonly file: string;
  readonly row: number | null;
  readonly line: number | null;
  readonly column: string | null;
  readonly rule: string;
  readonly message: string;
  readonly raw: string;
}

/**
 * What an entry without a record is about, for a reader: a whole file, or for a database
 * extract (`file` = `db:<database>/<dataset>…`, sources/postgres/label.ts) the whole dataset.
 */
export const wholeOf = (file: string | undefined): string => (file?.startsWith('db:') ? 'whole dataset' : 'whole file');
