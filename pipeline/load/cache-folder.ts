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
import type { Stats } from 'node:fs';
import { dirname, join } from 'node:path';

/** What a run does with a cache folder: use it (`note`: it was made private), or not, and why. */
export type CacheFolder = { readonly use: true; readonly note?: string } | { readonly use: false; readonly why: string };

/** The file a run leaves in a cache folder it made or adopted empty: only such a folder is used and tidied. */
export const CACHE_MARKER = '.reckon-cache';

/** The subfolders the delivery cache (entries, tmp, trash) and the results cache (results/…) use. */
const SUBFOLDERS = ['entries', 'tmp', 'trash', 'results', 'results/entries', 'results/tmp', 'results/trash'];

/** The names at the top of a cache folder (besides the code digest memos, loader-files-*.json). */
const LAYOUT = [CACHE_MARKER, 'entries', 'tmp', 'trash', 'results'];

const uid = (): number | undefined => process.getuid?.();

/** Why `st` (of `path`) is not a folder of this user that only this user may write, or undefined. */
function notOwnFolder(path: string, st: Stats): string | undefined {
  if (st.isSymbolicLink()) return `${path} is a symbolic link`;
  if (!st.isDirectory()) return `${path} is not a folder`;
  const me = uid();
  if (me !== undefined && st.uid !== me) return `${path} belongs to uid ${st.uid}, not to this run's user (uid ${me}): another user could write entries the run would trust`;
  if ((st.mode & 0o022) !== 0) return `${path} may be written by other users (mode ${(st.mode & 0o7777).toString(8)}): what is in it may not be this user's; remove it (a run makes a new private one) or give RECKON_CACHE_DIR another folder`;
  return undefined;
}

/** Why a folder above `dir` would let another user move `dir` away (not the user's or root's, or writable by others without the sticky bit), or undefined. */
async function unsafeAncestor(dir: string): Promise<string | undefined> {
  let p = dirname(dir);
  // The nearest folder that exists, as the system resolves it.
  for (;;) {
    try { p = await realpath(p); break; } catch { if (p === dirname(p)) return undefined; p = dirname(p); }
  }
  for (;;) {
    const st = await lstat(p);
    if (st.uid !== uid() && st.uid !== 0) return `${p}, above the cache folder, belongs to uid ${st.uid}: its owner could move the cache folder away`;
    if ((st.mode & 0o022) !== 0 && (st.mode & 0o1000) === 0) return `${p}, above the cache folder, may be written by other users and is not sticky: they could move the cache folder away`;
    if (p === dirname(p)) return undefined;
    p = dirname(p);
  }
}

/**
 * Checks `dir` as the caches' folder (see the module comment), creating it (0700) and its
 * subfolders when missing. Never throws: a folder that cannot be used is `use: false` with the
 * reason (the run then checks every file and evaluates every control, as without a cache).
 */
export async function privateCacheFolder(dir: string): Promise<CacheFolder> {
  try {
    const above = await unsafeAncestor(dir);
    if (above) return { use: false, why: above };
    const before = await lstat(dir).catch((e: NodeJS.ErrnoException) => { if (e.code === 'ENOENT') return undefined; throw e; });
    if (!before) await mkdir(dir, { recursive: true, mode: 0o700 });
    const st = await lstat(dir);
    const wrong = notOwnFolder(dir, st);
    if (wrong) return { use: false, why: wrong };
    const names = await readdir(dir);
    // A cache of a version before the marker (its entries/ and code digest memo, nothing else of
    // anyone's) is adopted.
    const memo = (n: string) => /^loader-files-[0-9a-f]+\.json$/.test(n);
    const cacheOnly = names.includes('entries') && names.some(memo) && names.every((n) => LAYOUT.includes(n) || memo(n));
    if (names.length && !names.includes(CACHE_MARKER) && !cacheOnly) return { use: false, why: `${dir} holds files but is not a reckon cache (no ${CACHE_MARKER} in it): give a new or empty folder` };
    let note: string | undefined;
    if ((st.mode & 0o077) !== 0) {
      await chmod(dir, 0o700);
      note = `the cache folder ${dir} was readable by other users (mode ${(st.mode & 0o777).toString(8)}); it is now private (0700)`;
    }
    if (!names.includes(CACHE_MARKER)) await writeFile(join(dir, CACHE_MARKER), 'a reckon delivery and results cache (docs/performance.md)\n', { flag: 'wx', mode: 0o600 });
    for (const sub of SUBFOLDERS) {
      const path = join(dir, sub);
      await mkdir(path, { mode: 0o700 }).catch((e: NodeJS.ErrnoException) => { if (e.code !== 'EEXIST') throw e; });
      const bad = notOwnFolder(path, await lstat(path));
      if (bad) return { use: false, why: bad };
    }
    return note ? { use: true, note } : { use: true };
  } catch (e) {
    return { use: false, why: `${dir} cannot be made or read: ${(e as Error).message}` };
  }
}

/** The default cache folder under `base` (the scratch folders' parent): one per user, so that users of one host never share one. */
export const defaultCacheFolder = (base: string): string => join(base, `reckon-cache-${uid() ?? 'user'}`);
