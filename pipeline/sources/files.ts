/**
 * Lists the data files of a local source location (CONTRACT §2): one folder per dataset, files
 * `*.csv`, `*.jsonl`, `*.parquet` (and `.csv.gz`, `.jsonl.gz`), sorted by name byte order so that
 * every run reads them in the same order. Files whose names start with `_` or `.` are never data
 * (except `_watermark.json` and `_import_report.json`, which are read as what they are).
 *
 * Every path that will be read is resolved first: a symbolic link whose target lies outside the
 * source root is refused (rule `link_outside_source_root`), and only regular files are read, so a
 * FIFO or device named `x.csv` can never block or leak. File names are never interpreted: they
 * reach the file system as they are and reach SQL never (Parquet files are read through links
 * with generated names, see load.ts).
 */
import { isUtf8 } from 'node:buffer';
import { constants } from 'node:fs';
import { open, readdir, realpath, stat, type FileHandle } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';

export type FileFormat = 'csv' | 'jsonl' | 'parquet';

/** Why a path is not read: a stable rule code and a message for people. */
export interface Refusal {
  readonly rule: string;
  readonly message: string;
}

/** One data file of a dataset: path, format and how it is compressed. */
export interface SourceFile {
  readonly dataset: string;
  /** Path relative to the source root, with `/` separators (what manifests and quarantine name). */
  readonly relPath: string;
  /** Path as listed (may be a link inside the root). */
  readonly absPath: string;
  /** The resolved target (no links), when it could be resolved. */
  readonly realPath?: string;
  readonly format: FileFormat;
  readonly gzip: boolean;
  /** Set when the file must not be read (a link outside the root, unresolvable): the rule it breaks. */
  readonly refused?: Refusal;
}

/** A side file of a dataset folder (`_watermark.json`, `_import_report.json`): where it is, or why it is refused. */
export interface SideFile {
  readonly relPath: string;
  readonly path: string;
  readonly refused?: Refusal;
}

/** What a dataset folder holds: data files, the watermark and import report if present, and ignored names. */
export interface DatasetFolder {
  readonly dataset: string;
  readonly present: boolean;
  readonly files: readonly SourceFile[];
  /** Path of `_watermark.json` (resolved, safe to read) when present and not refused. */
  readonly watermarkPath?: string;
  readonly importReportPath?: string;
  /** `_watermark.json` / `_import_report.json` that exist, with a refusal when they must not be read. */
  readonly watermark?: SideFile;
  readonly importReport?: SideFile;
  readonly ignored: readonly string[];
  /** Set when the dataset's path exists but cannot be listed as a folder (a file, a bad link). */
  readonly refused?: Refusal;
}

/**
 * What a file of 0 bytes is (issue 19, docs/input-rules.md): a JSON Lines file of 0 bytes holds
 * zero records (an exporter with nothing to send writes an empty `.jsonl`), so it is no fault;
 * any other empty file is one — a CSV without its header row cannot be told from a truncated
 * transfer, and a 0-byte `.gz` or Parquet file is not a file of its format at all. Returns the
 * refusal to quarantine the file with, or null when it is simply empty.
 */
export function emptyFileFault(file: Pick<SourceFile, 'relPath' | 'format' | 'gzip'>): Refusal | null {
  if (file.format === 'jsonl' && !file.gzip) return null;
  const why = file.format === 'csv' && !file.gzip ? 'a delivery with no records is a header-only CSV file' : `a 0-byte ${file.format}${file.gzip ? '.gz' : ''} file is not a ${file.gzip ? 'gzip' : file.format} file`;
  return { rule: 'empty_file', message: `${file.relPath} is empty (0 bytes): ${why}` };
}

function formatOf(name: string): { format: FileFormat; gzip: boolean } | undefined {
  const m = /\.(csv|jsonl|parquet)(\.gz)?$/.exec(name);
  if (!m) return undefined;
  if (m[1] === 'parquet' && m[2]) return undefined;
  return { format: m[1] as FileFormat, gzip: Boolean(m[2]) };
}

/** A file name that is not UTF-8, as text: printable ASCII kept, every other byte as `\xNN`. */
function escapedName(bytes: Buffer): string {
  return [...bytes].map((b) => (b >= 0x20 && b < 0x7f && b !== 0x5c ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, '0')}`)).join('');
}

/** True when `real` (a resolved path) lies strictly inside `realRoot`. */
export function insideRoot(realRoot: string, real: string): boolean {
  const rel = relative(realRoot, real);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

/** What a path that is not a regular file is, for messages: `a FIFO (named pipe)`, `a character device`, … */
export function fileKind(st: { isDirectory(): boolean; isFIFO(): boolean; isCharacterDevice(): boolean; isBlockDevice(): boolean; isSocket(): boolean; isSymbolicLink(): boolean }): string {
  return st.isDirectory() ? 'a folder' : st.isFIFO() ? 'a FIFO (named pipe)' : st.isCharacterDevice() ? 'a character device'
    : st.isBlockDevice() ? 'a block device' : st.isSocket() ? 'a socket' : st.isSymbolicLink() ? 'a symbolic link' : 'not a regular file';
}

/**
 * Resolves `absPath` and checks that it is a regular file inside the source root. Returns the
 * resolved path, a refusal, or what it is instead (a directory or special file, listed as ignored).
 */
async function resolveInside(realRoot: string, absPath: string, relPath: string): Promise<{ real: string } | { refused: Refusal } | { notAFile: string }> {
  let real: string;
  try { real = await realpath(absPath); } catch (e) {
    return { refused: { rule: 'file_unreadable', message: `${relPath} cannot be resolved (broken or looping link?): ${(e as Error).message}` } };
  }
  if (!insideRoot(realRoot, real)) return { refused: { rule: 'link_outside_source_root', message: `${relPath} is a link that leads outside the source root; it is not read` } };
  try {
    const st = await stat(real);
    if (!st.isFile()) return { notAFile: fileKind(st) };
  } catch (e) {
    return { refused: { rule: 'file_unreadable', message: `${relPath} cannot be read: ${(e as Error).message}` } };
  }
  return { real };
}

/** Largest side file read (`_watermark.json`, `_import_report.json`): they are small documents. */
export const SIDE_FILE_MAX_BYTES = 1024 * 1024;

/**
 * Reads the regular file `path` whole, if it holds at most `maxBytes`. It is opened with
 * O_NONBLOCK, so a FIFO or device put in its place after it was listed opens at once instead of
 * blocking the run (while it holds its leases), and is refused by fstat before a byte is read.
 * Returns the bytes, or the refusal (`file_unreadable`, `file_too_large`) naming `relPath`.
 */
export async function readRegularFile(path: string, relPath: string, maxBytes: number): Promise<{ bytes: Buffer } | Refusal> {
  let fh: FileHandle | undefined;
  try {
    fh = await open(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
    const st = await fh.stat();
    if (!st.isFile()) return { rule: 'file_unreadable', message: `${relPath} is ${fileKind(st)}, not a regular file; it is not read` };
    if (st.size > maxBytes) return { rule: 'file_too_large', message: `${relPath} holds ${st.size} bytes; at most ${maxBytes} are read` };
    // Read at most one byte past the limit: a file that grows while it is read is still bounded.
    const buf = Buffer.alloc(Math.min(st.size, maxBytes) + 1);
    let got = 0;
    for (;;) {
      const { bytesRead } = await fh.read(buf, got, buf.length - got, got);
      if (bytesRead === 0) break;
      got += bytesRead;
      if (got === buf.length) return { rule: 'file_too_large', message: `${relPath} grew past ${maxBytes} bytes while it was read` };
    }
    return { bytes: buf.subarray(0, got) };
  } catch (e) {
    return { rule: 'file_unreadable', message: `${relPath} cannot be read: ${(e as Error).message}` };
  } finally {
    await fh?.close().catch(() => undefined);
  }
}

/**
 * Lists one dataset folder under `root`. A missing folder is an empty dataset (§2); a path that
 * exists but is not a readable folder (a plain file, a link outside the root) is refused, so the
 * loader quarantines it rather than treating the dataset as empty.
 */
export async function listDatasetFolder(root: string, dataset: string): Promise<DatasetFolder> {
  const dir = join(root, dataset);
  const absent: DatasetFolder = { dataset, present: false, files: [], ignored: [] };
  let raw: Buffer[];
  try {
    raw = await readdir(dir, { encoding: 'buffer' });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      // A dangling link named like the dataset is not "no folder": it is a folder we cannot read.
      try { await stat(dir); } catch { return absent; }
    }
    return { ...absent, present: true, refused: { rule: 'dataset_unreadable', message: `${dataset} exists but is not a readable folder: ${(e as Error).message}` } };
  }
  const realRoot = await realpath(root);
  try {
    const realDir = await realpath(dir);
    if (!insideRoot(realRoot, realDir)) {
      return { ...absent, present: true, refused: { rule: 'link_outside_source_root', message: `the dataset folder ${dataset} is a link that leads outside the source root; it is not read` } };
    }
  } catch (e) {
    return { ...absent, present: true, refused: { rule: 'dataset_unreadable', message: `${dataset} cannot be resolved: ${(e as Error).message}` } };
  }
  const files: SourceFile[] = [];
  const ignored: string[] = [];
  let watermark: SideFile | undefined;
  let importReport: SideFile | undefined;
  for (const bytes of raw.sort(Buffer.compare)) {
    if (!isUtf8(bytes)) {
      // Such a name cannot be written in the manifest as it is, nor read back by an auditor: the
      // file is one quarantine entry (its name shown with \xNN escapes), never silently skipped.
      const shown = escapedName(bytes);
      const relPath = `${dataset}/${shown}`;
      if (shown.startsWith('_') || shown.startsWith('.')) continue;
      if (!formatOf(shown)) { ignored.push(relPath); continue; }
      files.push({ dataset, relPath, absPath: join(dir, shown), ...formatOf(shown)!, refused: { rule: 'file_name_encoding', message: `${relPath}: the file name is not valid UTF-8, so it cannot be named in the manifest (shown here with \\xNN for the bytes that are not); it is not read — rename it to UTF-8` } });
      continue;
    }
    const name = bytes.toString('utf8');
    const absPath = join(dir, name);
    const relPath = `${dataset}/${name}`;
    if (name === '_watermark.json' || name === '_import_report.json') {
      const r = await resolveInside(realRoot, absPath, relPath);
      const side: SideFile = 'notAFile' in r
        ? { relPath, path: absPath, refused: { rule: 'file_unreadable', message: `${relPath} is ${r.notAFile}, not a regular file; it is not read` } }
        : 'refused' in r ? { relPath, path: absPath, refused: r.refused } : { relPath, path: r.real };
      if (name === '_watermark.json') watermark = side;
      else importReport = side;
      continue;
    }
    if (name.startsWith('_') || name.startsWith('.')) continue;
    const fmt = formatOf(name);
    if (!fmt) { ignored.push(relPath); continue; }
    const r = await resolveInside(realRoot, absPath, relPath);
    if ('notAFile' in r) { ignored.push(relPath); continue; }
    if ('refused' in r) files.push({ dataset, relPath, absPath, ...fmt, refused: r.refused });
    else files.push({ dataset, relPath, absPath, realPath: r.real, ...fmt });
  }
  return {
    dataset, present: true, files, ignored, watermark, importReport,
    watermarkPath: watermark && !watermark.refused ? watermark.path : undefined,
    importReportPath: importReport && !importReport.refused ? importReport.path : undefined,
  };
}

/** An entry at a source root that is no dataset's folder: its name, kind, and the dataset it is nearest to (edit distance ≤ 3). */
export interface StrayEntry {
  /** As UTF-8 with control characters as `\xNN`, or with `\xNN` for its bytes when it is not UTF-8 (escapedName): one line, readable. */
  readonly name: string;
  /** `special file` for a FIFO, socket or device. */
  readonly kind: 'folder' | 'file' | 'link' | 'special file';
  readonly nearest: string | null;
}

/**
 * The entries of the source folder `root` that are not one of `datasets` (names starting with
 * `_` or `.` aside, as inside a dataset folder): a typo'd dataset folder means the real dataset
 * is missing, so a run names them instead of skipping them without a word. Sorted by name.
 * Rejects with readdir's error when `root` cannot be listed (a folder its datasets can be reached
 * in, mode 0711, but not listed).
 */
export async function strayRootEntries(root: string, datasets: readonly string[]): Promise<StrayEntry[]> {
  const entries = await readdir(root, { withFileTypes: true, encoding: 'buffer' });
  return strayAmong(entries.map((e) => {
    const bytes = e.name as unknown as Buffer;
    const name = isUtf8(bytes) ? controlsEscaped(bytes.toString('utf8')) : escapedName(bytes);
    return { name, kind: e.isSymbolicLink() ? 'link' as const : e.isDirectory() ? 'folder' as const : e.isFile() ? 'file' as const : 'special file' as const };
  }), datasets);
}

/**
 * The stray entries among `entries` (a source root's listing, local or the first level of an S3
 * prefix, names already shown on one line): those that are not one of `datasets` and do not start
 * with `_` or `.`, each with its nearest dataset, sorted by name.
 */
export function strayAmong(entries: readonly { name: string; kind: StrayEntry['kind'] }[], datasets: readonly string[]): StrayEntry[] {
  const known = new Set(datasets);
  const out = entries.filter((e) => !known.has(e.name) && !e.name.startsWith('_') && !e.name.startsWith('.'))
    .map((e) => ({ name: e.name, kind: e.kind, nearest: nearestName(e.name, datasets) }));
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * What `controlsEscaped` writes as an escape: the backslash itself (so `\x0a` in a name cannot pass
 * for an escaped newline), C0 and C1 controls and DEL (a newline, an 8-bit CSI), line and paragraph
 * separators, the marks and overrides that reorder text (U+202E) and the invisible ones (U+200B–D,
 * the BOM): on a terminal or in a log each would hide or forge what the name is.
 */
const ESCAPED_CHARS = /[\\\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]/g;

/**
 * `name` shown on one line as it is: each ESCAPED_CHARS character as `\xNN` (ASCII) or `\uNNNN`
 * (U+0080 on), so a code point is never shown as the byte `\xNN` of a name that is not UTF-8.
 */
export function controlsEscaped(name: string): string {
  return name.replace(ESCAPED_CHARS, (c) => {
    const n = c.charCodeAt(0);
    return n < 0x80 ? `\\x${n.toString(16).padStart(2, '0')}` : `\\u${n.toString(16).padStart(4, '0')}`;
  });
}

/** The name of `names` nearest to `name` by edit distance ignoring case (`ORDERS` is near `orders`), when within 3; null otherwise. */
function nearestName(name: string, names: readonly string[]): string | null {
  let best: { n: string; d: number } | null = null;
  for (const n of names) {
    const d = editDistance(name.toLowerCase(), n.toLowerCase());
    if (d <= 3 && (!best || d < best.d)) best = { n, d };
  }
  return best?.n ?? null;
}

/** Levenshtein distance of `a` and `b` (one row kept). */
function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length];
}
