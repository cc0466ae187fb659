/**
 * Fingerprints that decide whether two runs had "the same inputs and code" (issue 7): the
 * SHA-256 over the canonical list of input objects (path, SHA-256, including `_watermark.json` and
 * `_import_report.json`), over the code (compiled pipeline, SQL, control definitions, reference
 * table, package version) and over the configuration bytes.
 */
import { readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { canonicalJson } from '../core/canonical.js';
import { sha256Hex } from '../core/digest.js';
import { DATASETS } from '../contract/datasets.js';
import { repoPath, REPO_ROOT } from '../core/paths.js';
import { hashFile } from '../core/digest.js';
import { datasetRoot, type DatasetRoots } from '../sources/locate.js';

async function walk(dir: string, pred: (p: string) => boolean): Promise<string[]> {
  const out: string[] = [];
  let entries;
  try { entries = await readdir(dir, { withFileTypes: true }); } catch { return out; }
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await walk(p, pred)));
    else if (pred(p)) out.push(p);
  }
  return out.sort();
}

let codeCache: string | undefined;

/** SHA-256 of the code that computes results: dist JS, SQL, control definitions, reference data, version. */
export async function codeFingerprint(): Promise<string> {
  if (codeCache) return codeCache;
  const files = [
    ...(await walk(repoPath('dist/pipeline'), (p) => p.endsWith('.js'))),
    ...(await walk(repoPath('dist/manifests'), (p) => p.endsWith('.js'))),
    ...(await walk(repoPath('sql'), (p) => p.endsWith('.sql'))),
    ...(await walk(repoPath('controls'), (p) => p.endsWith('.json'))),
    ...(await walk(repoPath('pipeline/reference'), () => true)),
  ];
  const list = [];
  for (const f of files) list.push([relative(REPO_ROOT, f), (await hashFile(f)).sha256]);
  codeCache = sha256Hex(canonicalJson(list));
  return codeCache;
}

/** Hashes the `_watermark.json` and `_import_report.json` of each dataset folder under a local root. */
export async function controlFileHashes(root: DatasetRoots): Promise<Record<string, { path: string; size: number; sha256: string }[]>> {
  const out: Record<string, { path: string; size: number; sha256: string }[]> = {};
  for (const d of DATASETS) {
    for (const name of ['_watermark.json', '_import_report.json']) {
      try {
        const h = await hashFile(join(datasetRoot(root, d.name), d.name, name));
        (out[d.name] ??= []).push({ path: `${d.name}/${name}`, ...h });
      } catch { /* absent */ }
    }
  }
  return out;
}

/** SHA-256 over the canonical sorted list of (path, sha256) of every input object. */
export function inputsFingerprint(objects: readonly { path: string; sha256: string }[]): string {
  return sha256Hex(canonicalJson([...objects].map((o) => [o.path, o.sha256]).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))));
}
