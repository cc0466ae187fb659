/**
 * SHA-256 fingerprints of file trees (the code a run used, the loader's code for the delivery
 * cache), computed once per build instead of on every run. A memo file keeps, per file, its size,
 * modification time, inode and SHA-256; a later call lists the same trees and stats each file
 * (cheap), hashing only the files whose stat differs or that the memo lacks. The memo is written
 * by the build (`npm run build`, scripts/write-fingerprints.ts) and refreshed, best effort, by any
 * run that finds it stale (a bare `tsc`, an edited file): a memo that cannot be written or read
 * only costs the hashing. Nothing in the memo is trusted beyond a file whose stat is unchanged.
 */
import { randomBytes } from 'node:crypto';
import { readdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { canonicalJson } from './canonical.js';
import { hashFile, sha256Hex } from './digest.js';

/** One tree to fingerprint: a folder and which of its files count (by path). */
export interface TreeSpec {
  readonly dir: string;
  readonly include: (path: string) => boolean;
}

interface MemoEntry { size: number; mtimeMs: number; ino: number; sha256: string }
type Memo = Record<string, MemoEntry>;

/** Every file under `dir` (recursively) that `include` accepts, sorted; an absent folder has none. */
async function walk(dir: string, include: (p: string) => boolean): Promise<string[]> {
  const out: string[] = [];
  let entries;
  try { entries = await readdir(dir, { withFileTypes: true }); } catch { return out; }
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await walk(p, include)));
    else if (include(p)) out.push(p);
  }
  return out.sort();
}

async function readMemo(path: string): Promise<Memo> {
  try {
    const doc = JSON.parse(await readFile(path, 'utf8')) as { files?: Memo };
    return doc.files && typeof doc.files === 'object' ? doc.files : {};
  } catch { return {}; }
}

/** Writes the memo by temp file and rename, so a reader never sees half of it; failures are ignored. */
async function writeMemo(path: string, files: Memo): Promise<void> {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(tmp, JSON.stringify({ note: 'reckon file hashes by stat (core/tree-digest.ts); safe to delete', files }));
    await rename(tmp, path);
  } catch { /* a read-only install: the next run hashes again */ }
}

/**
 * The SHA-256 over the canonical list of [path relative to `root`, SHA-256] of every file of
 * `trees`, with the memo at `memoPath` (see the module comment; one memo file per set of trees). Throws only when a listed file
 * cannot be read.
 */
export async function treeDigest(root: string, trees: readonly TreeSpec[], memoPath: string): Promise<string> {
  const files = (await Promise.all(trees.map((t) => walk(t.dir, t.include)))).flat();
  const memo = await readMemo(memoPath);
  // Only the files listed now: a memo serves one set of trees (one memo file per caller).
  const next: Memo = {};
  let changed = Object.keys(memo).length !== files.length;
  // Stats in parallel (the file system's thread pool), hashes only where the stat differs.
  const list = await Promise.all(files.map(async (f): Promise<[string, string]> => {
    const st = await stat(f);
    let m = memo[f];
    if (!m || m.size !== st.size || m.mtimeMs !== st.mtimeMs || m.ino !== st.ino) {
      m = { size: st.size, mtimeMs: st.mtimeMs, ino: st.ino, sha256: (await hashFile(f)).sha256 };
      changed = true;
    }
    next[f] = m;
    return [relative(root, f), m.sha256];
  }));
  if (changed) await writeMemo(memoPath, next);
  return sha256Hex(canonicalJson(list));
}
