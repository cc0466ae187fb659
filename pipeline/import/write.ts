/**
 * Writing what an import produces: contract CSV files (RFC 4180, UTF-8, header row, exact text)
 * and `_import_report.json`, each written to a temporary name and renamed into place so a reader
 * never sees half a file. Output names derive from the provider file's format and SHA-256, so
 * importing the same file again replaces its own outputs and nothing else.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError } from '../core/errors.js';

/** One field as CSV text: quoted when it holds a comma, quote, line break or edge white space. */
export function csvField(v: string | null): string {
  if (v === null || v === '') return '';
  return /[",\r\n]|^\s|\s$/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

/** A whole CSV document: header row then one row per record, CRLF-free (`\n`), final newline. */
export function csvText(columns: readonly string[], rows: readonly (readonly (string | null)[])[]): string {
  const out = [columns.map(csvField).join(',')];
  for (const r of rows) out.push(r.map(csvField).join(','));
  return `${out.join('\n')}\n`;
}

/** Writes `text` to `path` through a temporary file and a rename (atomic on one file system). */
export async function writeAtomic(path: string, text: string): Promise<void> {
  const tmp = `${path}.tmp-${process.pid}`;
  await writeFile(tmp, text, 'utf8');
  await rename(tmp, path);
}

/** Ensures `dir/dataset` exists and returns its path. */
export async function datasetDir(dir: string, dataset: string): Promise<string> {
  const p = join(dir, dataset);
  await mkdir(p, { recursive: true });
  return p;
}

/** The report file's version; a reader refuses any other. */
export const REPORT_VERSION = 1;

/** `_import_report.json` of one dataset folder: one entry per imported provider file. */
export interface ImportReportDoc {
  readonly report_version: number;
  readonly written_by: string;
  readonly dataset: string;
  readonly imports: ImportEntry[];
}

/** One provider file's import, as the report keeps it (keyed by format and SHA-256). */
export interface ImportEntry {
  readonly format: string;
  readonly file: { readonly name: string; readonly sha256: string; readonly size_bytes: number };
  readonly [k: string]: unknown;
}

/** Reads an existing report, or an empty one when there is none; ConfigError when it is not ours. */
export async function readReport(path: string, dataset: string): Promise<ImportReportDoc> {
  let text: string;
  try { text = await readFile(path, 'utf8'); } catch { return { report_version: REPORT_VERSION, written_by: 'reckon import', dataset, imports: [] }; }
  let doc: ImportReportDoc;
  try { doc = JSON.parse(text) as ImportReportDoc; } catch (e) { throw new ConfigError(`${path} exists and is not JSON (${(e as Error).message}); move it away before importing`, path); }
  if (!doc || doc.report_version !== REPORT_VERSION || !Array.isArray(doc.imports)) {
    throw new ConfigError(`${path} is not a reckon import report of version ${REPORT_VERSION}; move it away before importing`, path);
  }
  return doc;
}

/** Replaces the entries of the same (format, sha256) and keeps the list in a stable order. */
export function mergeReport(doc: ImportReportDoc, entries: readonly ImportEntry[]): ImportReportDoc {
  const key = (e: ImportEntry) => `${e.format}|${e.file.sha256}`;
  const fresh = new Set(entries.map(key));
  const imports = [...doc.imports.filter((e) => !fresh.has(key(e))), ...entries].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  return { ...doc, imports };
}
