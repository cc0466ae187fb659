/**
 * The delivery and results caches' folder must be the run's user's own (docs/performance.md,
 * "Delivery cache"): an entry is trusted once its checksums match, and whoever can write the folder
 * can write entries whose checksums match, and so choose the totals a run publishes; whoever can
 * read it reads the checked records and the evaluations (accounts, amounts). So, as ssh does with
 * its keys, a run uses a cache folder only when it is a real folder of its own user that no one
 * else may write; one others may read or enter is made private (0700) first.
 */
import { chmod, lstat, mkdir } from 'node:fs/promises';
import { join } from 'node:path';

/** What a run does with a cache folder: use it (`tightened`: it was open to others and is now 0700), or not, and why. */
export type CacheFolder = { readonly use: true; readonly tightened: boolean } | { readonly use: false; readonly why: string };

/**
 * Creates `dir` (0700) when missing and checks it: a directory, not a symbolic link, owned by this
 * process's user, then closed to group and others. Never throws: a folder that cannot be made or
 * used is `use: false` with the reason (the run then checks every file, as without a cache).
 */
export async function privateCacheFolder(dir: string): Promise<CacheFolder> {
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const st = await lstat(dir);
    if (st.isSymbolicLink()) return { use: false, why: `${dir} is a symbolic link` };
    if (!st.isDirectory()) return { use: false, why: `${dir} is not a folder` };
    const uid = process.getuid?.();
    if (uid !== undefined && st.uid !== uid) return { use: false, why: `${dir} belongs to uid ${st.uid}, not to this run's user (uid ${uid}): another user could write entries the run would trust` };
    if ((st.mode & 0o077) === 0) return { use: true, tightened: false };
    await chmod(dir, 0o700);
    return { use: true, tightened: true };
  } catch (e) {
    return { use: false, why: `${dir} cannot be made or read: ${(e as Error).message}` };
  }
}

/** The default cache folder under `base` (the scratch folders' parent): one per user, so that users of one host never share one. */
export const defaultCacheFolder = (base: string): string => join(base, `reckon-cache-${process.getuid?.() ?? 'user'}`);
