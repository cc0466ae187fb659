/**
 * Lists the data files of a local source location (CONTRACT §2): one folder per dataset, files
 * `*.csv`, `*.jsonl`, `*.parquet` (and their `.gz` forms for CSV and JSON Lines), sorted by name
 * byte order so that every run reads them in the same order. Files whose names start with `_` or
 * `.` are never data. A symbolic link that leads outside the source root is refused.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readdir, realpath, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';

export type FileFormat = 'csv' | 'jsonl' | 'parquet';

/** One data file of a dataset: path, format and how it is compressed. */
export interface SourceFile {
  readonly dataset: string;
  /** Path relative to the source root, with `/` separators (what manifests and quarantine name). */
  readonly relPath: string;
  readonly absPath: string;
  readonly format: FileFormat;
  readonly gzip: boolean;
  /** Set when the file must not be read (a link outside the root): the rule it breaks. */
  readonly refused?: { rule: string; message: string };
}

/** What a dataset folder holds: data files, the watermark and import report if present, and ignored names. */
export interface DatasetFolder {
  readonly dataset: string;
  readonly present: boolean;
  readonly files: readonly SourceFile[];
  readonly watermarkPath?: string;
  readonly importReportPath?: string;
  readonly ignored: readonly string[];
}

function formatOf(name: string): { format: FileFormat; gzip: boolean } | undefined {
  const m = /\.(csv|jsonl|parquet)(\.gz)?$/.exec(name);
  if (!m) return undefined;
  if (m[1] === 'parquet' && m[2]) return undefined;
  return { format: m[1] as FileFormat, gzip: Boolean(m[2]) };
}

const byteOrder = (a: string, b: string) => (Buffer.compare(Buffer.from(a), Buffer.from(b)));

/** Lists one dataset folder under `root`. A missing folder is an empty dataset (§2). */
export async function listDatasetFolder(root: string, dataset: string): Promise<DatasetFolder> {
  const dir = join(root, dataset);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return { dataset, present: false, files: [], ignored: [] };
  }
  const realRoot = await realpath(root);
  const files: SourceFile[] = [];
  const ignored: string[] = [];
  let watermarkPath: string | undefined;
  let importReportPath: string | undefined;
  for (const name of names.sort(byteOrder)) {
    const absPath = join(dir, name);
    if (name === '_watermark.json') { watermarkPath = absPath; continue; }
    if (name === '_import_report.json') { importReportPath = absPath; continue; }
    if (name.startsWith('_') || name.startsWith('.')) continue;
    const fmt = formatOf(name);
    const relPath = `${dataset}/${name}`;
    if (!fmt) { ignored.push(relPath); continue; }
    let refused: SourceFile['refused'];
    try {
      const real = await realpath(absPath);
      const rel = relative(realRoot, real);
      if (rel.startsWith('..') || rel.startsWith(sep) || rel === '') refused = { rule: 'link_outside_source_root', message: `${relPath} is a link that leads outside the source root (${real})` };
      else if (!(await stat(real)).isFile()) { ignored.push(relPath); continue; }
    } catch (e) {
      refused = { rule: 'file_unreadable', message: `${relPath} cannot be resolved: ${(e as Error).message}` };
    }
    files.push({ dataset, relPath, absPath, ...fmt, refused });
  }
  return { dataset, present: true, files, watermarkPath, importReportPath, ignored };
}

/** SHA-256 (hex) and size in bytes of a file, streamed. */
export async function hashFile(path: string): Promise<{ sha256: string; size: number }> {
  const h = createHash('sha256');
  let size = 0;
  for await (const chunk of createReadStream(path)) {
    h.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { sha256: h.digest('hex'), size };
}
