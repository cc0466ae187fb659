/**
 * Compares two local stores object by object with the volatile fields masked, to show that a
 * change of code left every published result unchanged (STYLE: golden files with run ids and
 * timings masked). Run ids and manifest digests are replaced by their place in the chain
 * (`<run-1>`, `<manifest-1>`), wall-clock times, timings, lease times, the git commit and the
 * code hashes are masked (and lease pids and release times), and each Parquet output is compared row by row (read with DuckDB)
 * instead of by digest, since its bytes hold the run id.
 *
 *   node dist/scripts/compare-stores.js STORE_A STORE_B [--same PREFIX_A PREFIX_B]
 *
 * `--same` names two path prefixes that count as equal (the folders the stores and their sources
 * were made in). Prints every difference as `path: field: A → B`; exit 0 when there is none.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';

const MASKED_KEYS = new Set(['started_at', 'finished_at', 'observed_at', 'at', 'acquired_at', 'expires_at', 'timings_ms', 'commit', 'pid']);
const MASKED_COLUMNS = /(^|_)(at|since)(_text)?$/;

function files(root: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const n of readdirSync(d).sort()) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) { if (!n.startsWith('_')) walk(p); } else out.push(relative(root, p));
    }
  };
  walk(root);
  return out;
}

/** Replaces each run id and manifest digest of a store by its place in the chain, and the store's prefix by `<root>`. */
function masker(root: string, prefix: string | undefined): (s: string) => string {
  const manifests = files(root).filter((f) => /^manifests\/[0-9]{8}-.*\.json$/.test(f));
  const names = new Map<string, string>();
  manifests.forEach((f, i) => {
    names.set(/^manifests\/[0-9]{8}-(.*)\.json$/.exec(f)![1], `<run-${i + 1}>`);
    const sha = readFileSync(join(root, f.replace(/\.json$/, '.sha256')), 'utf8').split(' ')[0];
    names.set(sha, `<manifest-${i + 1}>`);
  });
  return (s) => {
    let t = prefix ? s.split(prefix).join('<root>') : s;
    for (const [from, to] of names) t = t.split(from).join(to);
    return t;
  };
}

function maskJson(v: unknown, mask: (s: string) => string, path: string[]): unknown {
  if (typeof v === 'string') return mask(v);
  if (Array.isArray(v)) return v.map((x) => maskJson(x, mask, path));
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    const here = [...path, k].join('.');
    const codeHash = /^code\.(sql|control_definitions)\.sha256$/.test(here) || here === 'fingerprints.code_sha256';
    const derived = here === 'chain.previous_manifest_sha256' || /^outputs\.(sha256|size)$/.test(here);
    out[k] = MASKED_KEYS.has(k) || codeHash || derived ? '<masked>' : maskJson(x, mask, [...path, k]);
  }
  return out;
}

async function parquetRows(db: DuckDBInstance, file: string, mask: (s: string) => string): Promise<unknown[]> {
  const conn = await db.connect();
  try {
    const reader = await conn.runAndReadAll(`SELECT * FROM read_parquet('${file.replace(/'/g, "''")}')`);
    return reader.getRowObjectsJson().map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, MASKED_COLUMNS.test(k) ? '<masked>' : typeof v === 'string' ? mask(v) : v])));
  } finally { conn.closeSync(); }
}

function diffValues(a: unknown, b: unknown, where: string, out: string[]): void {
  if (JSON.stringify(a) === JSON.stringify(b)) return;
  if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) === !Array.isArray(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) diffValues((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${where}.${k}`, out);
    return;
  }
  out.push(`${where}: ${JSON.stringify(a)?.slice(0, 300)} → ${JSON.stringify(b)?.slice(0, 300)}`);
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const same = args.indexOf('--same');
  const [prefixA, prefixB] = same >= 0 ? args.splice(same, 3).slice(1) : [undefined, undefined];
  const [a, b] = args;
  const maskA = masker(a, prefixA), maskB = masker(b, prefixB);
  const keyed = (root: string, mask: (s: string) => string) => new Map(files(root).filter((f) => !f.endsWith('.sha256')).map((f) => [mask(f), f]));
  const filesA = keyed(a, maskA), filesB = keyed(b, maskB);
  const problems: string[] = [];
  for (const k of new Set([...filesA.keys(), ...filesB.keys()])) if (!filesA.has(k) || !filesB.has(k)) problems.push(`${k}: only in ${filesA.has(k) ? 'A' : 'B'}`);
  const db = await DuckDBInstance.create(':memory:');
  let compared = 0;
  for (const [k, fa] of filesA) {
    const fb = filesB.get(k);
    if (!fb) continue;
    compared++;
    if (k.endsWith('.parquet')) diffValues(await parquetRows(db, join(a, fa), maskA), await parquetRows(db, join(b, fb), maskB), k, problems);
    else if (k.endsWith('.json')) diffValues(maskJson(JSON.parse(readFileSync(join(a, fa), 'utf8')), maskA, []), maskJson(JSON.parse(readFileSync(join(b, fb), 'utf8')), maskB, []), k, problems);
    else if (k.endsWith('.released')) continue; // a lease's release time
    else if (maskA(readFileSync(join(a, fa), 'utf8')) !== maskB(readFileSync(join(b, fb), 'utf8'))) problems.push(`${k}: contents differ`);
  }
  for (const p of problems) process.stdout.write(`${p}\n`);
  process.stdout.write(`${compared} object(s) compared, ${problems.length} difference(s)\n`);
  return problems.length ? 1 : 0;
}

main().then((code) => { process.exitCode = code; }, (e: unknown) => { process.stderr.write(`${(e as Error).stack}\n`); process.exitCode = 70; });
