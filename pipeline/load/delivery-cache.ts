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
 * The same code keeps entries of other kinds (`keyOf`, `lookupEntry`, `keepEntry`): the results
 * cache (run/results-cache.ts) keeps a run's evaluated control results in a folder of this layout,
 * their data files named with their suffix (`evaluation.json`, `inline_totals.parquet`).
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
import { copyFile, link, lstat, mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
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

/**
 * An entry's data file by its name in the body: a delivery entry's `rows` is rows.parquet; a name
 * with its own suffix (a results entry's `evaluation.json`, `inline_totals.parquet`) is the file's.
 */
const DATA_NAME = /^[a-z_]+(\.json|\.parquet)?$/;
const fileOf = (name: string) => (name.includes('.') ? name : `${name}.parquet`);

/** The end of foreignFile's answer for a path that is not there (an entry evicted meanwhile: a miss, not a refusal). */
const MISSING = 'is missing';

/**
 * Why the entry folder (`folder`) or data file at `path` is not this user's own: a symbolic link,
 * not a folder or regular file, or another owner (whoever wrote it could have written matching
 * checksums); undefined when it is. A path that is not there ends with MISSING.
 */
async function foreignFile(path: string, folder = false): Promise<string | undefined> {
  const st = await lstat(path).catch(() => undefined);
  if (!st) return `${path} ${MISSING}`;
  if (folder ? !st.isDirectory() : !st.isFile()) return `${path} is not a ${folder ? 'folder' : 'regular file'}`;
  const me = process.getuid?.();
  return me === undefined || st.uid === me ? undefined : `${path} belongs to uid ${st.uid}, not to this run's user: not trusted`;
}

/** What every entry's body holds besides its content: layout version, key, what the key was made of, its data files. */
interface EntryFrame {
  readonly format: number;
  readonly key: string;
  readonly key_parts: Record<string, unknown>;
  readonly data: Partial<Record<string, { size: number; sha256: string }>>;
}

/** A verified entry of any kind: its body and the scratch links of its data files (safe paths for SQL), by name. */
export interface VerifiedEntry<B> {
  readonly body: B & EntryFrame;
  readonly links: Readonly<Record<string, string>>;
}

/** The outcome of a generic lookup: a verified entry, none, or an entry refused (with why). */
export type EntryLookup<B> = { readonly entry: VerifiedEntry<B> } | { readonly refused: string } | undefined;

/** The outcome of a lookup: a verified hit, no entry, or an entry refused (with why). */
export type Lookup = { readonly hit: CacheHit } | { readonly refused: string } | undefined;

/**
 * The digest of the pipeline's code as it runs (compiled JS in a build, TypeScript under the test
 * runner): the folders `dirs` of pipeline/ (all of it when omitted), with the reference tables and
 * the lockfile. Per-file hashes are memoized in `memoDir` (core/tree-digest.ts).
 */
export async function runningCodeDigest(memoDir: string, dirs?: readonly string[]): Promise<string> {
  const pipeline = dirname(dirname(fileURLToPath(import.meta.url)));
  const code = (p: string) => (p.endsWith('.js') || p.endsWith('.ts')) && !p.endsWith('.d.ts');
  const trees = [
    ...(dirs ?? ['']).map((d) => ({ dir: join(pipeline, d), include: code })),
    { dir: repoPath('pipeline/reference'), include: () => true },
  ];
  const name = dirs ? 'loader-files' : 'pipeline-files';
  const memo = join(memoDir, `${name}-${sha256Hex(pipeline).slice(0, 16)}.json`);
  const tree = await treeDigest(pipeline, trees, memo);
  const lock = await hashFile(repoPath('package-lock.json')).then((h) => h.sha256, () => 'none');
  return sha256Hex(`${tree}\n${lock}`);
}

/** The loader's own code (core, contract, sources, load as running), lockfile and reference data. */
const loaderDigest = (memoDir: string) => runningCodeDigest(memoDir, ['core', 'contract', 'sources', 'load']);

/**
 * The delivery cache of a run (see the module comment). Open it with `open`, ask `key` per file,
 * then `lookup` (before checking) or `keep` (after checking a file), and `evict` once at the end.
 */
/**
 * The configuration as cache keys take it (and as entries store it in `key_parts`): all of it but
 * `alerts`, which neither loading nor evaluation reads and which may hold a literal routing key or
 * a webhook URL with its token: a secret must not be written into the cache folder.
 */
export function cachedConfig(config: object): unknown {
  const { alerts: _alerts, ...rest } = config as Record<string, unknown>;
  return JSON.parse(canonicalJson(rest)) as unknown;
}

export class DeliveryCache {
  private readonly used = new Set<string>();
  private added = 0;
  private staged = 0;

  private constructor(
    readonly config: DeliveryCacheConfig,
    /** What every key is made of besides its own parts: layout, loader code, rules, currency table, DuckDB, Node, time zone data. */
    readonly environment: Readonly<Record<string, unknown>>,
    private readonly scratch: string,
  ) {}

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
      format: CACHE_FORMAT, loader: config.loader ?? await loaderDigest(config.dir), rules: cachedConfig(rules),
      currency_table: currencyTable().sha256, duckdb: String(version), node: process.version, tz: process.versions.tz ?? null,
    };
    return new DeliveryCache(config, environment, scratch);
  }

  /** The entry key of a file: SHA-256 over its parts and the run's environment (code, rules, engine). */
  key(parts: FileKeyParts): string {
    return this.keyOf({ file: parts });
  }

  /** The entry key of any entry whose own parts are `parts` (one member naming the entry's kind: `file`, `results`). */
  keyOf(parts: Record<string, unknown>): string {
    return sha256Hex(canonicalJson({ ...this.environment, ...parts }));
  }

  private entryDir(key: string): string {
    return join(this.config.dir, 'entries', key);
  }

  /**
   * Finds and verifies the delivery entry of `key`. Returns the hit (its data files linked into the
   * scratch folder), undefined when there is none (or it vanished while being read), or why it was
   * refused (the refused entry is then removed).
   */
  async lookup(key: string): Promise<Lookup> {
    const found = await this.lookupEntry<CheckedFile>(key);
    return found && 'entry' in found ? { hit: { ...found.entry.body, ...found.entry.links } } : found;
  }

  /** `lookup` for an entry of any kind: its verified body and the scratch links of its data files. */
  async lookupEntry<B extends object>(key: string): Promise<EntryLookup<B>> {
    const dir = this.entryDir(key);
    // An entry is read only when it is this user's own (load/cache-folder.ts): its checksums alone
    // would trust whoever wrote it consistently.
    const foreign = await foreignFile(dir, true) ?? await foreignFile(join(dir, 'entry.json'));
    if (foreign?.endsWith(MISSING)) return undefined;
    if (foreign) {
      await this.remove(dir);
      return { refused: foreign };
    }
    let text: string;
    try { text = await readFile(join(dir, 'entry.json'), 'utf8'); } catch { return undefined; }
    const found = await this.verify<B>(dir, key, text);
    if (found === undefined || 'entry' in found) {
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
  private async verify<B>(dir: string, key: string, text: string): Promise<EntryLookup<B>> {
    let doc: { body?: B & EntryFrame; sha256?: string };
    try { doc = JSON.parse(text) as typeof doc; } catch { return { refused: 'entry.json is not JSON' }; }
    if (!doc.body || typeof doc.sha256 !== 'string') return { refused: 'entry.json has no body and digest' };
    if (sha256Hex(canonicalJson(doc.body)) !== doc.sha256) return { refused: 'entry.json does not match its own SHA-256' };
    const body = doc.body;
    if (body.format !== CACHE_FORMAT || body.key !== key) return { refused: 'entry.json belongs to another key or format' };
    const links: Record<string, string> = {};
    for (const [name, want] of Object.entries(body.data ?? {})) {
      if (!want) continue;
      if (!DATA_NAME.test(name)) return { refused: `entry.json names a data file ${JSON.stringify(name)}` };
      const from = join(dir, fileOf(name));
      const foreign = await foreignFile(join(dir, fileOf(name)));
      // A file not there is told apart below (evicted meanwhile, or a damaged entry).
      if (foreign && !foreign.endsWith(MISSING)) return { refused: foreign };
      const staged = join(this.scratch, `k${String(++this.staged).padStart(6, '0')}-${fileOf(name)}`);
      try {
        await link(from, staged).catch(() => copyFile(from, staged));
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
          // Evicted meanwhile (the whole folder went to trash): a miss. A folder still there without
          // this file is a damaged entry: refused (reported, removed, replaced), never a silent miss.
          const evicted = await stat(join(dir, 'entry.json')).then(() => false, () => true);
          return evicted ? undefined : { refused: `${fileOf(name)} is missing from its entry` };
        }
        return { refused: `${fileOf(name)} cannot be read: ${(e as Error).message}` };
      }
      const got = await hashFile(staged);
      if (got.size !== want.size || got.sha256 !== want.sha256) {
        return { refused: `${fileOf(name)} differs from its entry (SHA-256 ${got.sha256.slice(0, 12)}…, expected ${want.sha256.slice(0, 12)}…)` };
      }
      links[name] = staged;
    }
    return { entry: { body, links } };
  }

  /**
   * Keeps the result of checking a file under `key`: moves the data files in `files` (written by
   * the loader in the scratch folder) into a new entry and publishes it by rename. Never throws: a
   * cache that cannot be written costs only the next run's check. An entry larger than the whole
   * cache is not kept.
   */
  async keep(key: string, parts: FileKeyParts, checked: CheckedFile, files: KeptFiles): Promise<void> {
    await this.keepEntry(key, { file: parts }, checked, { ...files });
  }

  /**
   * `keep` for an entry of any kind: `content` is its body (beside the frame), `parts` its own key
   * parts (as given to `keyOf`), `files` its data files by name. Returns whether it was published
   * (false: not kept, or another run published the same key first).
   */
  async keepEntry(key: string, parts: Record<string, unknown>, content: object, files: Readonly<Record<string, string | undefined>>): Promise<boolean> {
    const tmp = join(this.config.dir, 'tmp', `${process.pid}-${randomBytes(6).toString('hex')}`);
    try {
      await mkdir(tmp);
      const data: EntryFrame['data'] = {};
      let bytes = 0;
      for (const [name, from] of Object.entries(files)) {
        if (!from) continue;
        if (!DATA_NAME.test(name)) throw new Error(`internal: data file name ${name}`);
        const to = join(tmp, fileOf(name));
        await rename(from, to).catch(() => copyFile(from, to));
        const h = await hashFile(to);
        data[name] = { size: h.size, sha256: h.sha256 };
        bytes += h.size;
      }
      if (bytes > this.config.maxBytes) { await rm(tmp, { recursive: true, force: true }); return false; }
      const body: EntryFrame = { ...content, format: CACHE_FORMAT, key, key_parts: { ...this.environment, ...parts }, data };
      await writeFile(join(tmp, 'entry.json'), JSON.stringify({ body, sha256: sha256Hex(canonicalJson(body)) }));
      // Published whole or not at all; another run may have published the same key first.
      await rename(tmp, this.entryDir(key));
      this.used.add(key);
      this.added += 1;
      return true;
    } catch {
      await rm(tmp, { recursive: true, force: true }).catch(() => undefined);
      return false;
    }
  }

  /**
   * True when some entry's body (as read, not verified: a hint, never a result) passes `test`.
   * Reads every entry.json: for caches of few entries (the results cache).
   */
  async someEntry(test: (body: Readonly<Record<string, unknown>>) => boolean): Promise<boolean> {
    const root = join(this.config.dir, 'entries');
    for (const name of await readdir(root).catch(() => [] as string[])) {
      const text = await readFile(join(root, name, 'entry.json'), 'utf8').catch(() => undefined);
      try {
        const body = text === undefined ? undefined : (JSON.parse(text) as { body?: unknown }).body;
        if (body && typeof body === 'object' && test(body as Record<string, unknown>)) return true;
      } catch { /* not JSON: a damaged entry, refused when its key is looked up */ }
    }
    return false;
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
        // Only what a run of the cache put there (`<pid>-<12 hex>`): nothing else is tidied.
        for (const name of (await readdir(join(this.config.dir, d)).catch(() => [] as string[])).filter((n) => /^[0-9]+-[0-9a-f]{12}$/.test(n))) {
          const p = join(this.config.dir, d, name);
          if (((await stat(p).catch(() => undefined))?.mtimeMs ?? Infinity) < hourAgo) await rm(p, { recursive: true, force: true }).catch(() => undefined);
        }
      }
    } catch { /* the bound is kept by the next run that adds entries */ }
  }
}
