/**
 * Per-file reading bounds (issue 18): a small compressed file can expand to gigabytes or to
 * millions of records, and every bad record costs a quarantine entry held in memory. Each bound
 * stops reading the file at the record where it is crossed, with one file-level quarantine entry
 * naming the bound and the first record not read (records before it stay read, as for a
 * truncated gzip), so a hostile file makes its dataset INCOMPLETE instead of exhausting the run.
 * Configured under `limits` in the configuration file (config.ts); these are the defaults.
 */

/** Reading bounds per data file. */
export interface FileLimits {
  /** Most bytes read from one file, after decompression (`file_too_large`). */
  readonly max_file_bytes: number;
  /** Most records read from one file (`file_too_many_records`). */
  readonly max_file_records: number;
  /** Most quarantine entries of one file's records (`file_too_many_quarantined`); about 0.7 KB each in memory. */
  readonly max_file_quarantined: number;
}

/** Defaults: far above any real extract (a 10M-order day's largest file is about 5 GB and 35M records). */
export const DEFAULT_FILE_LIMITS: FileLimits = Object.freeze({
  max_file_bytes: 64 * 1024 ** 3,
  max_file_records: 100_000_000,
  max_file_quarantined: 1_000_000,
});
