/** Locates files that ship with reckon (SQL, control definitions, reference tables). */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { existsSync, mkdirSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';

function findRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (existsSync(resolve(dir, 'package.json')) && existsSync(resolve(dir, 'sql'))) return dir;
    dir = dirname(dir);
  }
  throw new Error('reckon: cannot find the repository root (package.json beside sql/)');
}

/** Absolute path of the repository root (works from `pipeline/` under vitest and from `dist/`). */
export const REPO_ROOT = findRoot();

/** Absolute path of a file relative to the repository root. */
export function repoPath(rel: string): string {
  return resolve(REPO_ROOT, rel);
}

/**
 * Creates `dir` and its missing parents, one level at a time, and fails with the file system's
 * error where a level cannot be made. Node's `mkdir(dir, { recursive: true })` loops forever under
 * /proc (`--store /proc/self/x` hung a run); this never does. An existing path is left as it is.
 */
export async function makeDirs(dir: string): Promise<void> {
  try {
    await mkdir(dir);
    return;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return;
    if (code !== 'ENOENT' || dirname(dir) === dir) throw e;
  }
  await makeDirs(dirname(dir));
  try { await mkdir(dir); } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
}

/**
 * makeDirs, synchronously, for a batch of writes: `made` holds the folders known to exist (each
 * level this creates or finds is added), so a folder is made or checked once per batch. Throws
 * the file system's error where a level cannot be made.
 */
export function makeDirsSync(dir: string, made: Set<string>): void {
  if (made.has(dir)) return;
  try {
    mkdirSync(dir);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'EEXIST') {
      if (code !== 'ENOENT' || dirname(dir) === dir) throw e;
      makeDirsSync(dirname(dir), made);
      try { mkdirSync(dir); } catch (r) {
        if ((r as NodeJS.ErrnoException).code !== 'EEXIST') throw r;
      }
    }
  }
  made.add(dir);
}
