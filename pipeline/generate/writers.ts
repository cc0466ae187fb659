/**
 * Streaming dataset writers for `reckon generate`. Rows are written as they are produced, through
 * a small buffer and synchronous appends, so memory stays bounded at any size. A dataset is
 * written as CSV (RFC 4180, header row), JSON Lines (optionally with decimals, amounts and ints
 * as JSON numbers, their literal text exactly as in CSV) or Parquet. Parquet is made by writing
 * the exact CSV text to a hidden staging file and converting it with DuckDB under explicit column
 * types (timestamps TIMESTAMPTZ, decimals DECIMAL(38,18), amounts DECIMAL(38,0), ints BIGINT);
 * no value ever passes through DOUBLE. Big datasets rotate to a new part every `rowsPerPart` rows.
 */
import { closeSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { duckdb } from '../core/duckdb.js';
import type { ColumnKind, DatasetSpec } from '../contract/datasets.js';

/** Output format of one dataset. */
export type OutputFormat = 'csv' | 'jsonl' | 'parquet';

/** One cell: exact text, or null for empty. */
export type CellText = string | null;

const NUMERIC_KINDS: ReadonlySet<ColumnKind> = new Set(['decimal', 'amount_minor', 'int']);
const FLUSH_CHARS = 1 << 20;

function csvField(v: CellText): string {
  if (v === null) return '';
  return /[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

/** One open output file with a write buffer. */
class BufferedFile {
  private buf = '';
  private readonly fd: number;
  rows = 0;
  constructor(readonly path: string) {
    this.fd = openSync(path, 'wx');
  }
  write(text: string): void {
    this.buf += text;
    if (this.buf.length >= FLUSH_CHARS) this.flush();
  }
  flush(): void {
    if (this.buf.length) writeSync(this.fd, this.buf);
    this.buf = '';
  }
  close(): void {
    this.flush();
    closeSync(this.fd);
  }
}

/** A file the writer produced: its path relative to the output root and how many rows it holds. */
export interface WrittenFile {
  readonly path: string;
  readonly rows: number;
  /** For Parquet: the hidden CSV staging file still to convert. */
  readonly stagingCsv?: string;
}

/**
 * Writes one dataset's rows in column order of its spec (CONTRACT §2). `part` names a separate
 * file (e.g. a re-delivery); rows without it go to numbered parts `part-00001`, `part-00002`, …
 */
export class DatasetWriter {
  private readonly dir: string;
  private readonly files = new Map<string, BufferedFile>();
  private readonly done: WrittenFile[] = [];
  private mainIndex = 1;
  rowsWritten = 0;

  constructor(
    readonly root: string,
    readonly spec: DatasetSpec,
    readonly format: OutputFormat,
    private readonly opts: { rowsPerPart: number; jsonNumbers: boolean },
  ) {
    this.dir = join(root, spec.name);
    mkdirSync(this.dir, { recursive: true });
  }

  private fileName(part: string): string {
    if (this.format === 'parquet') return `.staging-${part}.csv`;
    return `${part}.${this.format}`;
  }

  private open(part: string): BufferedFile {
    let f = this.files.get(part);
    if (!f) {
      f = new BufferedFile(join(this.dir, this.fileName(part)));
      if (this.format !== 'jsonl') f.write(`${this.spec.columns.map((c) => c.name).join(',')}\n`);
      this.files.set(part, f);
    }
    return f;
  }

  /** Appends one row (values in the spec's column order). */
  write(values: readonly CellText[], part?: string): void {
    if (values.length !== this.spec.columns.length) throw new Error(`${this.spec.name}: ${values.length} values for ${this.spec.columns.length} columns`);
    let name = part;
    if (name === undefined) {
      name = `part-${String(this.mainIndex).padStart(5, '0')}`;
      const cur = this.files.get(name);
      if (cur && cur.rows >= this.opts.rowsPerPart) {
        this.finish(name);
        this.mainIndex += 1;
        name = `part-${String(this.mainIndex).padStart(5, '0')}`;
      }
    }
    const f = this.open(name);
    if (this.format === 'jsonl') {
      const parts: string[] = [];
      this.spec.columns.forEach((c, i) => {
        const v = values[i];
        let json: string;
        if (v === null) json = 'null';
        else if (c.kind === 'bool') json = v;
        else if (this.opts.jsonNumbers && NUMERIC_KINDS.has(c.kind)) json = v;
        else json = JSON.stringify(v);
        parts.push(`${JSON.stringify(c.name)}:${json}`);
      });
      f.write(`{${parts.join(',')}}\n`);
    } else {
      f.write(`${values.map(csvField).join(',')}\n`);
    }
    f.rows += 1;
    this.rowsWritten += 1;
  }

  private finish(part: string): void {
    const f = this.files.get(part)!;
    f.close();
    this.files.delete(part);
    const rel = `${this.spec.name}/${part}.${this.format}`;
    this.done.push(this.format === 'parquet' ? { path: rel, rows: f.rows, stagingCsv: f.path } : { path: rel, rows: f.rows });
  }

  /** Closes every open file; returns all files written (Parquet ones still to convert). */
  close(): WrittenFile[] {
    for (const part of [...this.files.keys()]) this.finish(part);
    return this.done.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }
}

/** DuckDB type for a value kind in generated Parquet (exact types only). */
export function parquetType(kind: ColumnKind): string {
  switch (kind) {
    case 'timestamp': return 'TIMESTAMPTZ';
    case 'date': return 'DATE';
    case 'int': return 'BIGINT';
    case 'decimal': return 'DECIMAL(38,18)';
    case 'amount_minor': return 'DECIMAL(38,0)';
    case 'bool': return 'BOOLEAN';
    default: return 'VARCHAR';
  }
}

const SAFE_PATH = /^[A-Za-z0-9_\-/.]+$/;

/**
 * The read_csv column list (every column as text) and the SELECT list that casts each column to
 * its exact Parquet type, empty text becoming NULL: how a generated CSV day becomes Parquet.
 */
export function csvToParquetSelect(spec: DatasetSpec): { cols: string; select: string } {
  const cols = spec.columns.map((c) => `'${c.name}': 'VARCHAR'`).join(', ');
  const select = spec.columns.map((c) => {
    const col = `"${c.name}"`;
    const t = parquetType(c.kind);
    return t === 'VARCHAR' ? `NULLIF(${col}, '') AS ${col}` : `CAST(NULLIF(${col}, '') AS ${t}) AS ${col}`;
  }).join(', ');
  return { cols, select };
}

/**
 * Converts staged CSV files to Parquet with DuckDB: every column read as text, then cast to its
 * exact type; the staging CSV is removed afterwards. Paths must be made of safe characters (DuckDB
 * treats file names as globs and they are interpolated into SQL). Single-threaded with insertion
 * order kept, so the same CSV gives byte-identical Parquet.
 */
export async function convertToParquet(root: string, files: readonly { spec: DatasetSpec; file: WrittenFile }[], tempDir: string): Promise<void> {
  const todo = files.filter((f) => f.file.stagingCsv);
  if (todo.length === 0) return;
  mkdirSync(tempDir, { recursive: true });
  const instance = await duckdb().DuckDBInstance.create(':memory:', { threads: '1', memory_limit: '1GB', temp_directory: tempDir, preserve_insertion_order: 'true' });
  const conn = await instance.connect();
  try {
    await conn.run(`SET TimeZone = 'UTC'`);
    for (const { spec, file } of todo) {
      const src = file.stagingCsv!;
      const dst = join(root, file.path);
      if (!SAFE_PATH.test(src) || !SAFE_PATH.test(dst)) throw new Error(`unsafe path for DuckDB: ${src} → ${dst}`);
      const { cols, select } = csvToParquetSelect(spec);
      await conn.run(
        `COPY (SELECT ${select} FROM read_csv('${src}', header = true, auto_detect = false, delim = ',', quote = '"', escape = '"', columns = {${cols}}, max_line_size = 1048576)) ` +
          `TO '${dst}' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 122880)`,
      );
      rmSync(src);
    }
  } finally {
    conn.closeSync();
    instance.closeSync();
    rmSync(tempDir, { recursive: true, force: true });
  }
}
