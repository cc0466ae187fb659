/**
 * What a load reads, hashed before loading (issue 20, the unchanged rerun): per dataset the folder
 * as `listDatasetFolder` lists it (present, refused, ignored names), each data file's name,
 * format, size and SHA-256 (or why it is not read), and each side file's SHA-256 (or why it is
 * refused). A load's result (tables, counts, quarantine entries, watermarks, cutoff mappings) is a
 * function of these, the loader's code and the configuration; the results cache keys an unchanged
 * rerun by them (run/results-cache.ts) and so can skip the load.
 *
 * Each file is hashed once: the load takes its SHA-256 from here (`hashed`) when the file's size,
 * modification time, inode and change time are still those seen before it was hashed. The change
 * time is what catches a same-size rewrite whose modification time was put back (`touch -r`):
 * no user call sets it.
 *
 * A listing (`digestInputs` without content) is the digest without reading the data files: their
 * SHA-256 left null. When no kept evaluation has the run's listing, the results cache cannot hit,
 * and the files are hashed by the load as it reads them instead (`withLoadHashes`), once each.
 */
import { stat } from 'node:fs/promises';
import type { LoadRules } from '../contract/money.js';
import { DEFAULT_FILE_LIMITS } from '../contract/limits.js';
import { DATASETS } from '../contract/datasets.js';
import { hashFile, sha256Hex } from '../core/digest.js';
import { CsvShapeScan, type CsvShape } from '../sources/csv-fast.js';
import { listDatasetFolder, readRegularFile, SIDE_FILE_MAX_BYTES, type SideFile } from '../sources/files.js';
import { datasetRoot, type DatasetRoots } from '../sources/locate.js';

/** A file's identity on disk when it was hashed: the load trusts the hash only while these hold. */
export interface FileStamp {
  readonly size: number;
  readonly mtimeMs: number;
  readonly ino: number;
  /** Status change time: moved by any write, rename or link, and by no call a user can make to set it. */
  readonly ctimeMs: number;
}

/** The stamp of a stat result. */
export const stampOf = (st: FileStamp): FileStamp => ({ size: st.size, mtimeMs: st.mtimeMs, ino: st.ino, ctimeMs: st.ctimeMs });

/** A data file hashed before the load, by real path: SHA-256, size, stamp, and for plain CSV its shape. */
export interface HashedFile {
  readonly sha256: string;
  readonly size: number;
  readonly stamp: FileStamp;
  readonly shape?: CsvShape;
}

/** One data file as the key takes it (in a listing, `sha256` is null for every file). */
interface DigestedFile {
  readonly path: string;
  readonly format: string;
  readonly size: number | null;
  readonly sha256: string | null;
  readonly refused: string | null;
}

/** One dataset as the key takes it. */
export interface DigestedDataset {
  readonly dataset: string;
  readonly present: boolean;
  readonly refused: string | null;
  readonly ignored: readonly string[];
  readonly files: readonly DigestedFile[];
  readonly sides: readonly { readonly path: string; readonly sha256: string | null; readonly refused: string | null }[];
}

/** The digest of a load's inputs, and the hashes to hand to the load. */
export interface InputDigest {
  readonly datasets: readonly DigestedDataset[];
  readonly hashed: ReadonlyMap<string, HashedFile>;
  /** The real path of every data file read (hashed or, in a listing, not). */
  readonly realPaths: readonly string[];
}

/** True when `st` is still the file stamped `stamp` (size, modification time, inode, change time). */
export function sameStamp(stamp: FileStamp, st: FileStamp): boolean {
  return sameContentStamp(stamp, st) && st.ctimeMs === stamp.ctimeMs;
}

/**
 * True when `st` has the size, modification time and inode of `stamp`: what a hard link of the
 * file (staging) leaves alone, though it moves the change time.
 */
export function sameContentStamp(stamp: FileStamp, st: FileStamp): boolean {
  return st.size === stamp.size && st.mtimeMs === stamp.mtimeMs && st.ino === stamp.ino;
}

/** A refusal as the key takes it: its rule and message (which the quarantine entry repeats). */
const refusal = (r: { rule: string; message: string }) => `${r.rule}: ${r.message}`;

async function hashSide(side: SideFile | undefined) {
  if (!side) return [];
  if (side.refused) return [{ path: side.relPath, sha256: null, refused: refusal(side.refused) }];
  const read = await readRegularFile(side.path, side.relPath, SIDE_FILE_MAX_BYTES);
  return [{ path: side.relPath, sha256: 'bytes' in read ? sha256Hex(read.bytes) : null, refused: 'bytes' in read ? null : refusal(read) }];
}

/**
 * Hashes what a load of `datasets` (in CONTRACT §2 order) from `root` would read; without
 * `content`, lists it (the data files' SHA-256 null; side files are hashed still, being small).
 * Returns undefined when a file cannot be read or hashed (the load then finds and reports it itself).
 */
export async function digestInputs(root: DatasetRoots, datasets: readonly string[], rules: LoadRules, content = true): Promise<InputDigest | undefined> {
  const maxBytes = { ...DEFAULT_FILE_LIMITS, ...rules.limits }.max_file_bytes;
  const hashed = new Map<string, HashedFile>();
  const realPaths: string[] = [];
  const out: DigestedDataset[] = [];
  try {
    for (const spec of DATASETS.filter((s) => datasets.includes(s.name))) {
      const folder = await listDatasetFolder(datasetRoot(root, spec.name), spec.name);
      const files: DigestedFile[] = [];
      for (const f of folder.files) {
        const format = f.gzip ? `${f.format}.gz` : f.format;
        if (f.refused || f.realPath === undefined) {
          files.push({ path: f.relPath, format, size: null, sha256: null, refused: f.refused ? refusal(f.refused) : 'unresolved' });
          continue;
        }
        const st = await stat(f.realPath);
        if (!f.gzip && st.size > maxBytes) {
          files.push({ path: f.relPath, format, size: st.size, sha256: null, refused: 'file_too_large' });
          continue;
        }
        realPaths.push(f.realPath);
        if (!content) {
          files.push({ path: f.relPath, format, size: st.size, sha256: null, refused: null });
          continue;
        }
        const scan = f.format === 'csv' && !f.gzip ? new CsvShapeScan() : undefined;
        const h = await hashFile(f.realPath, scan && ((b) => scan.chunk(b)));
        hashed.set(f.realPath, { ...h, stamp: stampOf(st), ...(scan ? { shape: scan.result() } : {}) });
        files.push({ path: f.relPath, format, size: h.size, sha256: h.sha256, refused: null });
      }
      out.push({
        dataset: spec.name, present: folder.present, refused: folder.refused ? refusal(folder.refused) : null, ignored: [...folder.ignored], files,
        sides: [...await hashSide(folder.watermark), ...await hashSide(folder.importReport)],
      });
    }
  } catch {
    return undefined;
  }
  return { datasets: out, hashed, realPaths };
}

/** What loadMatchesDigest compares of a dataset's load (load.ts DatasetLoad). */
interface LoadedDataset {
  readonly dataset: string;
  readonly files: readonly { readonly path: string; readonly size: number; readonly sha256: string }[];
  readonly control_files: readonly { readonly path: string; readonly sha256: string }[];
}

/**
 * True when a load's result read exactly what `digest` hashed: the same data files with the same
 * SHA-256, and every side file hashed read with the same SHA-256 (nothing changed in between).
 */
export function loadMatchesDigest(digest: InputDigest, loaded: readonly LoadedDataset[]): boolean {
  if (loaded.length !== digest.datasets.length) return false;
  return digest.datasets.every((d, i) => {
    const l = loaded[i];
    if (l.dataset !== d.dataset || l.files.length !== d.files.length) return false;
    if (!d.files.every((f, j) => l.files[j].path === f.path && (f.sha256 === null || l.files[j].sha256 === f.sha256))) return false;
    return d.sides.every((s) => s.sha256 === null || l.control_files.some((c) => c.path === s.path && c.sha256 === s.sha256));
  });
}

/** The listing of a digest: the same, every data file's SHA-256 left null. */
export function listingOf(datasets: readonly DigestedDataset[]): DigestedDataset[] {
  return datasets.map((d) => ({ ...d, files: d.files.map((f) => ({ ...f, sha256: null })) }));
}

/**
 * The digest of a listing (`digestInputs` without content) completed by the load that followed:
 * each data file listed readable takes the SHA-256 the load hashed it to. The same digest as one
 * hashed before the load, had the files not changed; undefined when the load did not read what
 * was listed (other files, another size, a file it could not hash).
 */
export function withLoadHashes(listed: InputDigest, loaded: readonly LoadedDataset[]): InputDigest | undefined {
  if (loaded.length !== listed.datasets.length) return undefined;
  const datasets: DigestedDataset[] = [];
  for (const [i, d] of listed.datasets.entries()) {
    const l = loaded[i];
    if (l.dataset !== d.dataset || l.files.length !== d.files.length) return undefined;
    const files: DigestedFile[] = [];
    for (const [j, f] of d.files.entries()) {
      const g = l.files[j];
      if (g.path !== f.path) return undefined;
      if (f.refused !== null || f.sha256 !== null) { files.push(f); continue; }
      if (g.size !== f.size || !/^[0-9a-f]{64}$/.test(g.sha256)) return undefined;
      files.push({ ...f, sha256: g.sha256 });
    }
    datasets.push({ ...d, files });
  }
  return { datasets, hashed: new Map(), realPaths: listed.realPaths };
}
