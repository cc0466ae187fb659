/**
 * The raw source rows behind a run's records and quarantine entries (issue 19), read from the
 * run's inputs where they still are: a local source location recorded in the manifest, each file
 * checked against the SHA-256 the run recorded for it before a row is shown. A file that is gone,
 * changed since the run, outside the location, on S3 or in a database is reported as such, and none of its rows
 * is shown. Records are found by record number (1 = first data record, the numbering of the loader
 * and the quarantine) with the same readers the loader used, so the row shown is the row the run read.
 */
import { realpath, stat, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { DATASETS } from '../contract/datasets.js';
import { hashFile } from '../core/digest.js';
import { insideRoot, type FileFormat, type SourceFile } from '../sources/files.js';
import { readCsv, readJsonl, readParquet, type ReadEvent } from '../sources/readers.js';
import type { ManifestV1 } from '../../manifests/v1/schema.js';
import type { Reader } from './run-outputs.js';

/** One raw source record: its record number, the line it starts on and its text as read. */
export interface SourceRow {
  readonly record_number: number;
  readonly line: number;
  /** The record's text: the CSV record or JSON line as written; for Parquet, its values as a JSON object in the contract's text forms. */
  readonly raw: string;
}

/** What reading a source file back gave: its rows, or why none is shown. */
export type SourceFileRead =
  | { readonly state: 'verified'; readonly path: string; readonly sha256: string; readonly header: readonly string[] | null; readonly rows: ReadonlyMap<number, SourceRow> }
  | { readonly state: 'gone' | 'changed' | 'remote' | 'unknown'; readonly message: string };

/** A reading of the run's source files, one read per file however many of its rows are asked for. */
export class SourceFiles {
  private readonly cache = new Map<string, Promise<SourceFileRead>>();
  private staged = 0;

  constructor(private readonly manifest: ManifestV1, private readonly reader: Reader) {}

  /** The location the run read (a local folder, `s3://…`, or the sources file naming each dataset's own). */
  get location(): string { return this.manifest.sources.location; }

  /**
   * The rows `recordNumbers` of `file` of `dataset` (a path relative to the location, as in the
   * manifest). A row number the file does not hold is simply absent from `rows`.
   */
  async rows(dataset: string, file: string, recordNumbers: readonly number[]): Promise<SourceFileRead> {
    const id = `${dataset}\u0000${file}\u0000${[...recordNumbers].sort((a, b) => a - b).join(',')}`;
    let p = this.cache.get(id);
    if (!p) this.cache.set(id, (p = this.read(dataset, file, recordNumbers)));
    return p;
  }

  private async read(dataset: string, file: string, recordNumbers: readonly number[]): Promise<SourceFileRead> {
    const entry = this.manifest.sources.datasets[dataset];
    const object = entry?.objects.find((o) => o.path === file);
    if (!object) return { state: 'unknown', message: `the manifest lists no input ${file} of ${dataset}` };
    const origin = entry!.origin;
    if (origin?.kind === 'database') {
      return { state: 'remote', message: `${file} is the extract of database ${origin.database} (its SQL in the manifest's sources.databases.${origin.database}.datasets.${dataset}, extract SHA-256 ${object.sha256}): database rows are not read back here; the record number is the row's place in the extract sorted by its key` };
    }
    // A sources file run read each dataset from its own location; a folder run, all from one.
    const location = origin?.kind === 'folder' || origin?.kind === 's3' ? origin.location : this.location;
    if (location.startsWith('s3://')) {
      return { state: 'remote', message: `${file} was read from ${location} (S3): remote sources are not read back here; fetch ${location.replace(/\/$/, '')}/${file} (SHA-256 ${object.sha256}) to see it` };
    }
    const path = join(location, ...file.split('/'));
    let real: string;
    try {
      real = await realpath(path);
      if (!insideRoot(await realpath(location), real) || !(await stat(real)).isFile()) return { state: 'gone', message: `${path} is no longer a file inside ${location}` };
    } catch {
      return { state: 'gone', message: `${path} is gone (the run read ${object.size} bytes with SHA-256 ${object.sha256})` };
    }
    const now = await hashFile(real).catch(() => undefined);
    if (!now) return { state: 'gone', message: `${path} can no longer be read` };
    if (now.sha256 !== object.sha256) {
      return { state: 'changed', message: `${path} has changed since the run: SHA-256 ${now.sha256} (${now.size} bytes), the run read ${object.sha256} (${object.size} bytes); its rows are not shown` };
    }
    const wanted = new Set(recordNumbers);
    const { header, rows } = await this.collect(await this.events(dataset, file, real, object.format, wanted), wanted);
    return { state: 'verified', path, sha256: now.sha256, header: object.format.startsWith('csv') ? header : null, rows };
  }

  private async events(dataset: string, file: string, real: string, format: string, wanted: ReadonlySet<number>): Promise<AsyncGenerator<ReadEvent>> {
    const spec = DATASETS.find((d) => d.name === dataset)!;
    const base = format.replace(/\.gz$/, '') as FileFormat;
    const source: SourceFile = { dataset, relPath: file, absPath: real, realPath: real, format: base, gzip: format.endsWith('.gz') };
    if (base === 'csv') return readCsv(source);
    if (base === 'jsonl') return readJsonl(source, spec.columns);
    // DuckDB reads file names as globs through SQL text: it only ever sees a generated name.
    const staged = join(this.reader.dir, `s${String(++this.staged).padStart(6, '0')}.parquet`);
    await symlink(real, staged);
    // Only the rows asked for are read (record numbers are integers: nothing from the file reaches SQL).
    return readParquet(await this.reader.connection(), staged, spec.columns, `file_row_number + 1 IN (${[...wanted, 0].join(', ')})`);
  }

  private async collect(events: AsyncGenerator<ReadEvent>, wanted: ReadonlySet<number>): Promise<{ header: string[] | null; rows: Map<number, SourceRow> }> {
    const rows = new Map<number, SourceRow>();
    let header: string[] | null = null;
    for await (const ev of events) {
      if (ev.type === 'header') header = [...ev.columns];
      if ((ev.type === 'record' || ev.type === 'record_error') && wanted.has(ev.row)) {
        rows.set(ev.row, { record_number: ev.row, line: ev.line, raw: ev.raw });
        // Every row asked for is found: the rest of the file is not read.
        if (rows.size === wanted.size) break;
      }
    }
    return { header, rows };
  }
}

/** A record reference with what its source file gave for it. */
export type RecordSource =
  | { readonly state: 'verified'; readonly line: number; readonly raw: string; readonly header: readonly string[] | null }
  | { readonly state: 'gone' | 'changed' | 'remote' | 'unknown' | 'absent'; readonly message: string };

/**
 * The source row of each `{dataset, file, record_number}`, reading each file once (for all of its
 * records asked for). `absent` when a verified file does not hold that record number.
 */
export async function sourcesOf<T extends { dataset: string; file: string; record_number: number }>(files: SourceFiles, refs: readonly T[]): Promise<(T & { source: RecordSource })[]> {
  const byFile = new Map<string, number[]>();
  for (const r of refs) {
    const id = `${r.dataset}\u0000${r.file}`;
    const list = byFile.get(id);
    if (list) list.push(r.record_number);
    else byFile.set(id, [r.record_number]);
  }
  const out: (T & { source: RecordSource })[] = [];
  for (const r of refs) {
    const read = await files.rows(r.dataset, r.file, byFile.get(`${r.dataset}\u0000${r.file}`)!);
    if (read.state !== 'verified') { out.push({ ...r, source: { state: read.state, message: read.message } }); continue; }
    const row = read.rows.get(r.record_number);
    out.push({
      ...r,
      source: row
        ? { state: 'verified', line: row.line, raw: row.raw, header: read.header }
        : { state: 'absent', message: `${r.file} (SHA-256 verified) holds no record ${r.record_number}` },
    });
  }
  return out;
}
