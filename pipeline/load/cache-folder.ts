/**
 * The delivery and results caches' folder must be the run's user's own (docs/performance.md,
 * "Delivery cache"): an entry is trusted once its checksums match, and whoever can write the folder
 * can write entries whose checksums match, and so choose the totals a run publishes; whoever can
 * read it reads the checked records and the evaluations (accounts, amounts). So, as ssh does with
 * its keys, a run uses a cache folder only when:
 * - every folder above it is owned by the user or root and, when others may write it, sticky (so
 *   no one else can move the cache folder away between this check and its use);
 * - it is a real folder (no symbolic link) of the user that no one else may write, and it is a
 *   reckon cache: new, empty, holding the CACHE_MARKER a run left in it, or holding nothing but a
 *   cache's own names (a cache of an earlier version); a folder given by mistake, such as $HOME or
 *   /tmp, is never tidied or chmod-ed;
 * - its subfolders are real folders of the user that no one else may write.
 * A folder only readable by others is made private (0700). A folder that others could have
 * written is not used at all: what is in it may not be the user's, and tightening it would not
 * say what was planted before. Entries themselves are checked again when read (delivery-cache.ts).
 */
import { chmod, lstat, mkdir, readdir, realpath, writeFile } from 'node:fs/promises';
import { existsSync, type Stats } from 'node:fs';
import { dirname, join } from 'node:path';

/** What a run does with a cache folder: use it, by its real path `dir` (`note`: it was made private), or not, and why. */
export type CacheFolder = { readonly use: true; readonly dir: string; readonly note?: string } | { readonly use: false; readonly why: string };

/** The file a run leaves in a cache folder it made or adopted empty: only such a folder is used and tidied. */
export const CACHE_MARKER = '.reckon-cache';

/** The subfolders the delivery cache (entries, tmp, trash) and the results cache (results/…) use. */
const SUBFOLDERS = ['entries', 'tmp', 'trash', 'results', 'results/entries', 'results/tmp', 'results/trash'];

/** The names at the top of a cache folder besides the code digest memos (MEMO). */
const LAYOUT = [CACHE_MARKER, 'entries', 'tmp', 'trash', 'results'];
const MEMO = /^(loader|pipeline)-files-[0-9a-f]{16}\.json$/;
/** An entry folder's name: its key. */
const ENTRY = /^[0-9a-f]{64}$/;

const uid = (): number | undefined => process.getuid?.();
const own = (st: Stats): boolean => uid() === undefined || st.uid === uid();

/** Why `st` (of `path`) is not a folder of this user that only this user may write, or undefined. */
function notOwnFolder(path: string, st: Stats): string | undefined {
  if (st.isSymbolicLink()) return `${path} is a symbolic link`;
  if (!st.isDirectory()) return `${path} is not a folder`;
  if (!own(st)) return `${path} belongs to uid ${st.uid}, not to this run's user (uid ${uid()}): another user could write entries the run would trust`;
  if ((st.mode & 0o022) !== 0) return `${path} may be written by other users (mode ${(st.mode & 0o7777).toString(8)}): what is in it may not be this user's; remove it (a run makes a new private one) or give RECKON_CACHE_DIR another folder`;
  return undefined;
}

/** Why a folder above `real` (a resolved path) would let another user move it away (not the user's or root's, or writable by others without the sticky bit), or undefined. */
async function unsafeAncestor(real: string): Promise<string | undefined> {
  for (let p = dirname(real); ; p = dirname(p)) {
    const st = await lstat(p);
    if (!own(st) && st.uid !== 0) return `${p}, above the cache folder, belongs to uid ${st.uid}: its owner could move the cache folder away`;
    if ((st.mode & 0o022) !== 0 && (st.mode & 0o1000) === 0) return `${p}, above the cache folder, may be written by other users and is not sticky: they could move the cache folder away`;
    if (p === dirname(p)) return undefined;
  }
}

/** The nearest folder above `dir` (or `dir` itself) that exists. */
function existingAncestor(dir: string): string {
  let p = dir;
  while (!existsSync(p) && p !== dirname(p)) p = dirname(p);
  return p;
}

/**
 * Why the top of the folder `dir` (its `names`) is not a reckon cache of this user's: a name of
 * another owner or a symbolic link (someone else wrote in it), a marker that is not a regular file,
 * or, without a marker, anything but an earlier version's cache (entries/ of key-named folders and
 * a code digest memo): a folder given by mistake. Undefined for an empty folder.
 */
async function notOwnCache(dir: string, names: readonly string[]): Promise<string | undefined> {
  for (const n of names) {
    const st = await lstat(join(dir, n));
    if (st.isSymbolicLink() || !own(st)) return `${join(dir, n)} is ${st.isSymbolicLink() ? 'a symbolic link' : `of uid ${st.uid}`}: someone else wrote in the cache folder; remove it (a run makes a new private one)`;
    if (n === CACHE_MARKER && !st.isFile()) return `${join(dir, n)} is not a regular file`;
  }
  if (!names.length || names.includes(CACHE_MARKER)) return undefined;
  const entries = names.includes('entries') ? await readdir(join(dir, 'entries')) : [];
  const earlier = names.includes('entries') && names.some((n) => MEMO.test(n)) && names.every((n) => LAYOUT.includes(n) || MEMO.test(n)) && entries.every((e) => ENTRY.test(e));
  return earlier ? undefined : `${dir} holds files but is not a reckon cache (no ${CACHE_MARKER} in it): give a new or empty folder`;
}

/**
 * Checks `dir` as the caches' folder (see the module comment), creating it (0700) when missing;
 * everything is checked before anything in it is changed, on its real path, which the run then
 * uses (a symbolic link above it swapped later cannot move it). Never throws: a folder that cannot
 * be used is `use: false` with the reason (the run then checks every file and evaluates every
 * control, as without a cache).
 */
export async function privateCacheFolder(given: string): Promise<CacheFolder> {
  // A trailing slash would make lstat follow a symbolic link.
  const dir = given.replace(/\/+$/, '') || '/';
  try {
    const found = await lstat(dir).catch((e: NodeJS.ErrnoException) => { if (e.code === 'ENOENT') return undefined; throw e; });
    if (found?.isSymbolicLink()) return { use: false, why: `${dir} is a symbolic link` };
    if (!found) {
      // Nothing is made inside a folder that would refuse it: checked before, and again after.
      const before = await unsafeAncestor(join(await realpath(existingAncestor(dir)), 'x'));
      if (before) return { use: false, why: before };
      await mkdir(dir, { recursive: true, mode: 0o700 });
    }
    const real = await realpath(dir);
    // Above it, after it exists: a folder another user made meanwhile is seen.
    const above = await unsafeAncestor(real);
    if (above) return { use: false, why: above };
    const st = await lstat(real);
    const wrong = notOwnFolder(real, st);
    if (wrong) return { use: false, why: wrong };
    const names = await readdir(real);
    const notCache = await notOwnCache(real, names);
    if (notCache) return { use: false, why: notCache };
    for (const sub of SUBFOLDERS) {
      const sst = await lstat(join(real, sub)).catch(() => undefined);
      const bad = sst && notOwnFolder(join(real, sub), sst);
      if (bad) return { use: false, why: bad };
    }
    // Checked: only now is anything changed.
    let note: string | undefined;
    if ((st.mode & 0o077) !== 0) {
      await chmod(real, 0o700);
      note = `the cache folder ${real} was readable by other users (mode ${(st.mode & 0o777).toString(8)}); it is now private (0700)`;
    }
    if (!names.includes(CACHE_MARKER)) await writeFile(join(real, CACHE_MARKER), 'a reckon delivery and results cache (docs/performance.md)\n', { flag: 'wx', mode: 0o600 });
    for (const sub of SUBFOLDERS) {
      await mkdir(join(real, sub), { mode: 0o700 }).catch((e: NodeJS.ErrnoException) => { if (e.code !== 'EEXIST') throw e; });
      const bad = notOwnFolder(join(real, sub), await lstat(join(real, sub)));
      if (bad) return { use: false, why: bad };
    }
    return note ? { use: true, dir: real, note } : { use: true, dir: real };
  } catch (e) {
    return { use: false, why: `${dir} cannot be made or read: ${(e as Error).message}` };
  }
}

/** The default cache folder under `base` (the scratch folders' parent): one per user, so that users of one host never share one. */
export const defaultCacheFolder = (base: string): string => join(base, `reckon-cache-${uid() ?? 'user'}`);

/** The manifest note (and warning) of a run that did not use its cache folder, and why. */
export const cacheNotUsedNote = (why: string): string => `the cache folder is not used: ${why}; this run checks every file and evaluates every control`;

/** The manifest note of a cache entry refused when read (`what`: `delivery cache: the entry of F`, `results cache: the results entry K`), why, and what the run did instead. */
export const refusedEntryNote = (what: string, why: string, instead: string): string => `${what} was refused (${why}); ${instead}`;

/** Whether a manifest note is one of this module's (cacheNotUsedNote, a folder made private, refusedEntryNote): a warning the run's `--json` repeats. */
export const isCacheWarning = (note: string): boolean => note.startsWith('the cache folder ') || / was refused \(/.test(note);
