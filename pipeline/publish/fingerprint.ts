/**
 * Fingerprints that decide whether two runs had "the same inputs and code" (issue 7): the
 * SHA-256 over the canonical list of input objects (path, SHA-256, including `_watermark.json` and
 * `_import_report.json`), over the code (compiled pipeline, SQL, control definitions, reference
 * table, package version) and over the configuration bytes.
 */
import { canonicalJson } from '../core/canonical.js';
import { sha256Hex } from '../core/digest.js';
import { repoPath, REPO_ROOT } from '../core/paths.js';
import { treeDigest } from '../core/tree-digest.js';

let codeCache: string | undefined;

/** Where the code fingerprint's file hashes are kept between runs (written by `npm run build`). */
export const CODE_MEMO = 'dist/code-fingerprint.json';

/**
 * SHA-256 of the code that computes results: dist JS, SQL, control definitions, reference data.
 * Computed from the per-file hashes kept in CODE_MEMO, so a run stats the files instead of
 * hashing them (core/tree-digest.ts); once per process.
 */
export async function codeFingerprint(): Promise<string> {
  codeCache ??= await treeDigest(REPO_ROOT, [
    { dir: repoPath('dist/pipeline'), include: (p) => p.endsWith('.js') },
    { dir: repoPath('dist/manifests'), include: (p) => p.endsWith('.js') },
    { dir: repoPath('sql'), include: (p) => p.endsWith('.sql') },
    { dir: repoPath('controls'), include: (p) => p.endsWith('.json') },
    { dir: repoPath('pipeline/reference'), include: () => true },
  ], repoPath(CODE_MEMO));
  return codeCache;
}

/** SHA-256 over the canonical sorted list of (path, sha256) of every input object. */
export function inputsFingerprint(objects: readonly { path: string; sha256: string }[]): string {
  return sha256Hex(canonicalJson([...objects].map((o) => [o.path, o.sha256]).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))));
}
