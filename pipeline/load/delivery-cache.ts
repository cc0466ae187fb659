/**
 * The delivery cache (issue 20): a source file is checked once. The first run that loads a file
 * keeps what checking it produced — its typed records (Parquet), its quarantine entries, and, for
 * a Parquet file read through a view, the numbers of the records the view leaves out and the
 * duplicate hash of each record it shows — under a key made of the file's SHA-256 and everything
 * else that decides that result (KeyParts). A later run, a rerun or the next intraday window, that
 * meets the same bytes reads the kept result instead of checking them again.
 *
 * Layout under the cache folder:
 *
 *   entries/<key>/entry.json       what the check found (counts, entries, extra columns, cutoff
 *                                  mappings, the data files' size and SHA-256), and the SHA-256 of
 *                                  its own canonical body
 *   entries/<key>/rows.parquet     typed records: table columns, then `__row` (the record number)
 *   entries/<key>/hashes.parquet   view entries: the duplicate hash `h` of each record the view shows
 *   entries/<key>/rejects.parquet  view entries: `__row` of each record the view leaves out
 *   tmp/, trash/                   entries being written or removed
 *
 * Trust: nothing is used before it is verified. An entry's body must match its own SHA-256 and
 * key; every data file is linked into the run's scratch folder (so eviction by another run cannot
 * take it away mid-run) and hashed there against the body. An entry that fails is refused: the
 * file is checked again, the refusal is reported (manifest object and note, log), and the entry
 * is replaced. The checksums catch corruption and edits of one file; whoever can rewrite the whole
 * folder consistently is trusted like the store (docs/performance.md, "Delivery cache").
 *
 * Concurrency: an entry is written under tmp/ and published by renaming its folder to its key (a
 * rename onto an existing entry fails, and the loser drops its copy); it is removed by renaming
 * it to trash/ first. Readers see a whole entry or none. The size is bounded (`maxBytes`): after a
 * run adds entries, the least recently used ones are removed until the total fits.
 */
import { randomBytes } from 'node:crypto';
import { copyFile, link, mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DuckDBConnection } from '@duckdb/node-api';
import { canonicalJson } from '../core/canonical.js';
import { hashFile, sha256Hex } from '../core/digest.js';
import { repoPath } from '../core/paths.js';
import { treeDigest } from '../core/tree-digest.js';
import { currencyTable } from '../contract/currency.js';
import type { LoadRules } from '../contract/money.js';
import type { QuarantineEntry } from './quarantine-entry.js';

/** Version of the entry layout; a change of layout or meaning raises it (and so misses every entry). */
export const CACHE_FORMAT = 1;

/** Where the cache is and how large it may grow. */
export interface DeliveryCacheConfig {
  readonly dir: string;
  readonly maxBytes: number;
  /**
   * The loader's version in the key. Default: the digest of the loader's code as it runs (core,
   * contract, sources, load), the reference tables and the lockfile, so any change of them is a
   * miss. Tests set it to stand for a change of code.
   */
  readonly loader?: string;
}

/** Per file, what decides the checked result besides the code and configuration. */
export interface FileKeyParts {
  readonly sha256: string;
  readonly dataset: string;
  readonly format: string;
  readonly gzip: boolean;
  /** The dataset is read through views (its Parquet files may become view entries). */
  readonly viewable: boolean;
  /** The SQL fast path was on. */
  readonly fast: boolean;
}

/** A quarantine entry of the file, without its dataset and file name (added back by the reader). */
export type CachedEntryLine = Omit<QuarantineEntry, 'dataset' | 'file'>;

/** A cutoff mapping the file used (CONTRACT §2), with its instant in µs as text. */
export interface CachedCutoff {
  readonly key: string;
  readonly timezone: string;
  readonly local: string;
  readonly utc: string;
  readonly rule: string;
  readonly micros: string;
}

/** What checking one file found. `kind` view: the file is read through a view (VIEW entries). */
export interface CheckedFile {
  readonly kind: 'table' | 'view';
  /** Records read (each loaded or quarantined). */
  readonly records: number;
  /** Records loaded (before duplicates collapse). */
  readonly loaded: number;
  /** View entries: records the view shows (accepted by the SQL check). */
  readonly viewRecords: number;
  /** Records kept in rows.parquet (0: no such file). */
  readonly rowCount: number;
  readonly rejectCount: number;
  readonly entries: readonly CachedEntryLine[];
  readonly extraColumns: readonly string[];
  readonly cutoffs: readonly CachedCutoff[];
}

/** A verified hit: the check's result and the scratch links of its data files (safe paths for SQL). */
export interface CacheHit extends CheckedFile {
  readonly rows?: string;
  readonly hashes?: string;
  readonly rejects?: string;
}

/** The data files a miss wrote (in the run's scratch folder) to keep with its result. */
export interface KeptFiles {
  readonly rows?: string;
  readonly hashes?: string;
  readonly rejects?: string;
}

type DataName = 'rows' | 'hashes' | 'rejects';
const DATA_NAMES: readonly DataName[] = ['rows', 'hashes', 'rejects'];

interface EntryBody extends CheckedFile {
  readonly format: number;
  readonly key: string;
  readonly key_parts: Record<string, unknown>;
  readonly data: Partial<Record<DataName, { size: number; sha256: string }>>;
}

/** The outcome of a lookup: a verified hit, no entry, or an entry refused (with why). */
export type Lookup = { readonly hit: CacheHit } | { readonly refused: string } | undefined;

/** The loader's own code (core, contract, sources, load as running), lockfile and reference data, by folder. */
async function loaderDigest(memoDir: string): Promise<string> {
  const pipeline = dirname(dirname(fileURLToPath(import.meta.url)));
  const code = (p: string) => (p.endsWith('.js') || p.endsWith('.ts')) && !p.endsWith('.d.ts');
  const trees = [
    ...['core', 'contract', 'sources', 'load'].map((d) => ({ dir: join(pipeline, d), include: code })),
    { dir: repoPath('pipeline/reference'), include: () => true },
  ];
  const memo = join(memoDir, `loader-files-${sha256Hex(pipeline).slice(0, 16)}.json`);
  const tree = await treeDigest(pipeline, trees, memo);
  const lock = await hashFile(repoPath('package-lock.json')).then((h) => h.sha256, () => 'none');
  return sha256Hex(`${tree}\n${lock}`);
}

/**
 * The delivery cache of a run (see the module comment). Open it with `open`, ask `key` per file,
 * then `lookup` (before checking) or `keep` (after checking a file), and `evict` once at the end.
 */
export class DeliveryCache {
  private readonly used = new Set<string>();
  private added = 0;
  private staged = 0;

  private constructor(readonly config: DeliveryCacheConfig, private readonly environment: Record<string, unknown>, private readonly scratch: string) {}

  /**
   * Opens the cache in `config.dir` (created when missing) for a run whose scratch links go to
   * `scratch` (a safe path). Returns undefined when the folder cannot be made: the run then checks
   * every file, as without a cache.
   */
  static async open(config: DeliveryCacheConfig, conn: DuckDBConnection, rules: LoadRules, scratch: string): Promise<DeliveryCache | undefined> {
    try {
      for (const d of ['entries', 'tmp', 'trash']) await mkdir(join(config.dir, d), { recursive: true });
      await mkdir(scratch, { recursive: true });
    } catch { return undefined; }
    const [version] = (await conn.runAndReadAll('SELECT library_version || \'-\' || source_id FROM pragma_version()')).getRows()[0];
    const environment = {
      format: CACHE_FORMAT, loader: config.loader ?? await loaderDigest(config.dir), rules: JSON.parse(canonicalJson(rules)) as unknown,
      currency_table: currencyTable().sha256, duckdb: String(version), node: process.version, tz: process.versions.tz ?? null,
    };
    return new DeliveryCache(config, environment, scratch);
  }

  /** The entry key of a file: SHA-256 over its parts and the run's environment (code, rules, engine). */
  key(parts: FileKeyParts): string {
    return sha256Hex(canonicalJson({ ...this.environment, file: parts }));
  }

  private entryDir(key: string): string {
    return join(this.config.dir, 'entries', key);
  }

  /**
   * Finds and verifies the entry of `key`. Returns the hit (its data files linked into the scratch
   * folder), undefined when there is none (or it vanished while being read), or why it was refused
   * (the refused entry is then removed).
   */
  async lookup(key: string): Promise<Lookup> {
    const dir = this.entryDir(key);
    let text: string;
    try { text = await readFile(join(dir, 'entry.json'), 'utf8'); } catch { return undefined; }
    const found = await this.verify(dir, key, text);
    if (found === undefined || 'hit' in found) {
      if (found) {
        this.used.add(key);
        await utimes(dir, new Date(), new Date()).catch(() => undefined);
      }
      return found;
    }
    await this.remove(dir);
    return found;
  }

  /** Checks an entry's body (`text`) and links and hashes its data files; see `lookup`. */
  private async verify(dir: string, key: string, text: string): Promise<Lookup> {
    let doc: { body?: EntryBody; sha256?: string };
    try { doc = JSON.parse(text) as typeof doc; } catch { return { refused: 'entry.json is not JSON' }; }
    if (!doc.body || typeof doc.sha256 !== 'string') return { refused: 'entry.json has no body and digest' };
    if (sha256Hex(canonicalJson(doc.body)) !== doc.sha256) return { refused: 'entry.json does not match its own SHA-256' };
    const body = doc.body;
    if (body.format !== CACHE_FORMAT || body.key !== key) return { refused: 'entry.json belongs to another key or format' };
    const links: Partial<Record<DataName, string>> = {};
    for (const name of DATA_NAMES) {
      const want = body.data?.[name];
      if (!want) continue;
      const staged = join(this.scratch, `k${String(++this.staged).padStart(6, '0')}-${name}.parquet`);
      try {
        await link(join(dir, `${name}.parquet`), staged).catch(() => copyFile(join(dir, `${name}.parquet`), staged));
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined; // evicted meanwhile: a miss
        return { refused: `${name}.parquet cannot be read: ${(e as Error).message}` };
      }
      const got = await hashFile(staged);
      if (got.size !== want.size || got.sha256 !== want.sha256) {
        return { refused: `${name}.parquet differs from its entry (SHA-256 ${got.sha256.slice(0, 12)}…, expected ${want.sha256.slice(0, 12)}…)` };
      }
      links[name] = staged;
    }
    return { hit: { ...body, ...links } };
  }

  /**
   * Keeps the result of checking a file under `key`: moves the data files in `files` (written by
   * the loader in the scratch folder) into a new entry and publishes it by rename. Never throws: a
   * cache that cannot be written costs only the next run's check. An entry larger than the whole
   * cache is not kept.
   */
  async keep(key: string, parts: FileKeyParts, checked: CheckedFile, files: KeptFiles): Promise<void> {
    const tmp = join(this.config.dir, 'tmp', `${process.pid}-${randomBytes(6).toString('hex')}`);
    try {
      await mkdir(tmp);
      const data: EntryBody['data'] = {};
      let bytes = 0;
      for (const name of DATA_NAMES) {
        const from = files[name];
        if (!from) continue;
        const to = join(tmp, `${name}.parquet`);
        await rename(from, to).catch(() => copyFile(from, to));
        const h = await hashFile(to);
        data[name] = { size: h.size, sha256: h.sha256 };
        bytes += h.size;
      }
      if (bytes > this.config.maxBytes) { await rm(tmp, { recursive: true, force: true }); return; }
      const body: EntryBody = { ...checked, format: CACHE_FORMAT, key, key_parts: { ...this.environment, file: parts }, data };
      await writeFile(join(tmp, 'entry.json'), JSON.stringify({ body, sha256: sha256Hex(canonicalJson(body)) }));
      // Published whole or not at all; another run may have published the same key first.
      await rename(tmp, this.entryDir(key));
      this.used.add(key);
      this.added += 1;
    } catch {
      await rm(tmp, { recursive: true, force: true }).catch(() => undefined);
    }
  }

  /** Removes an entry: renamed to trash first, so no reader sees it half removed. */
  private async remove(dir: string): Promise<void> {
    const gone = join(this.config.dir, 'trash', `${process.pid}-${randomBytes(6).toString('hex')}`);
    try {
      await rename(dir, gone);
      await rm(gone, { recursive: true, force: true });
    } catch { /* removed by another run already */ }
  }

  /**
   * After a run added entries: removes the least recently used entries until the cache fits
   * `maxBytes` (this run's entries last of all), and leftovers of runs that died while writing or
   * removing (older than an hour). Never throws.
   */
  async evict(): Promise<void> {
    if (this.added === 0) return;
    try {
      const root = join(this.config.dir, 'entries');
      const entries = await Promise.all((await readdir(root)).map(async (name) => {
        const dir = join(root, name);
        const st = await stat(dir).catch(() => undefined);
        let bytes = 0;
        for (const f of await readdir(dir).catch(() => [] as string[])) bytes += (await stat(join(dir, f)).catch(() => ({ size: 0 }))).size;
        return { name, dir, usedMs: st?.mtimeMs ?? 0, bytes };
      }));
      let total = entries.reduce((a, e) => a + e.bytes, 0);
      entries.sort((a, b) => Number(this.used.has(a.name)) - Number(this.used.has(b.name)) || a.usedMs - b.usedMs);
      for (const e of entries) {
        if (total <= this.config.maxBytes) break;
        await this.remove(e.dir);
        total -= e.bytes;
      }
      const hourAgo = Date.now() - 3_600_000;
      for (const d of ['tmp', 'trash']) {
        for (const name of await readdir(join(this.config.dir, d)).catch(() => [] as string[])) {
          const p = join(this.config.dir, d, name);
          if (((await stat(p).catch(() => undefined))?.mtimeMs ?? Infinity) < hourAgo) await rm(p, { recursive: true, force: true }).catch(() => undefined);
        }
      }
    } catch { /* the bound is kept by the next run that adds entries */ }
  }
}
