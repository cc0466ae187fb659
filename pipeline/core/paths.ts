/** Locates files that ship with reckon (SQL, control definitions, reference tables). */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { existsSync } from 'node:fs';

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
