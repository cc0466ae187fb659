/**
 * The caches' folder is the run's user's own (load/cache-folder.ts; probes 36 #8 and 37): another
 * local user who could write it could plant entries whose checksums match, and so choose the totals
 * a run publishes; one who could read it reads the checked records. A folder others could have
 * written, a symbolic link, a folder that is not a reckon cache ($HOME, /tmp), or one under a folder
 * others may write without the sticky bit is not used (the run checks every file, and says why);
 * one only readable by others is made private first; an entry of another owner is refused.
 */
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CACHE_MARKER, defaultCacheFolder, privateCacheFolder } from '../pipeline/load/cache-folder.js';
import { reckonIn, ROOT, scratchDir } from './helpers/cli.js';

const tmp = scratchDir('reckon-cache-folder-');
afterAll(() => tmp.cleanup());
const asRoot = process.getuid?.() === 0;
const NOBODY = 65534;
const SAMPLE = join(ROOT, 'fixtures', 'sample-day', 'sources');
const SAMPLE_DIGEST = 'fdf7739e05ddf63f23b01bced7e0dadb3c86e4647850616ddebae256689e84f3';
const mode = (p: string) => statSync(p).mode & 0o7777;
const folder = (name: string, m: number) => {
  const dir = join(tmp.dir, name);
  mkdirSync(dir);
  chmodSync(dir, m);
  return dir;
};

describe('the cache folder', () => {
  it('is created private, with its marker and subfolders, one per user by default', async () => {
    const dir = join(tmp.dir, 'new', 'cache');
    expect(await privateCacheFolder(dir)).toEqual({ use: true, dir: realpathSync(dir) });
    expect([mode(dir), mode(join(dir, 'entries')), mode(join(dir, 'results', 'entries'))]).toEqual([0o700, 0o700, 0o700]);
    expect(existsSync(join(dir, CACHE_MARKER))).toBe(true);
    expect(await privateCacheFolder(dir)).toEqual({ use: true, dir: realpathSync(dir) });
    expect(defaultCacheFolder('/tmp')).toBe(`/tmp/reckon-cache-${process.getuid!()}`);
  });

  it('only readable by others is made private (0700) before use, and says so', async () => {
    const dir = folder('readable', 0o755);
    expect(await privateCacheFolder(dir)).toEqual({ use: true, dir, note: `the cache folder ${dir} was readable by other users (mode 755); it is now private (0700)` });
    expect(mode(dir)).toBe(0o700);
  });

  it('that others may write is not used, and left as it is (what is in it may not be the user\'s)', async () => {
    for (const m of [0o777, 0o1777, 0o775]) {
      const dir = folder(`writable-${m.toString(8)}`, m);
      expect(await privateCacheFolder(dir)).toEqual({ use: false, why: `${dir} may be written by other users (mode ${m.toString(8)}): what is in it may not be this user's; remove it (a run makes a new private one) or give RECKON_CACHE_DIR another folder` });
      expect(mode(dir)).toBe(m);
    }
  });

  it("holding only a cache's own names (a cache of an earlier version, without the marker) is adopted", async () => {
    const old = folder('old-cache', 0o700);
    for (const d of ['entries', 'tmp', 'trash', 'results']) mkdirSync(join(old, d));
    mkdirSync(join(old, 'entries', 'a'.repeat(64)));
    writeFileSync(join(old, 'loader-files-89a97dc47f56d0c2.json'), '{}');
    expect(await privateCacheFolder(old)).toEqual({ use: true, dir: old });
    expect(existsSync(join(old, CACHE_MARKER))).toBe(true);
  });

  it('with entries that are not key-named (a folder that only looks like an earlier cache) is not adopted', async () => {
    const look = folder('look-alike', 0o755);
    for (const d of ['entries', 'tmp', 'results']) mkdirSync(join(look, d));
    mkdirSync(join(look, 'entries', 'my-notes'));
    writeFileSync(join(look, 'loader-files-0123456789abcdef.json'), '{}');
    expect(await privateCacheFolder(look)).toEqual({ use: false, why: `${look} holds files but is not a reckon cache (no ${CACHE_MARKER} in it): give a new or empty folder` });
    expect([mode(look), existsSync(join(look, CACHE_MARKER))]).toEqual([0o755, false]);
  });

  it('refused for a subfolder is left as it was (no chmod, no marker)', async () => {
    const g = folder('bad-sub', 0o755);
    writeFileSync(join(g, CACHE_MARKER), 'x');
    mkdirSync(join(g, 'entries'));
    chmodSync(join(g, 'entries'), 0o777);
    expect(await privateCacheFolder(g)).toEqual({ use: false, why: `${join(g, 'entries')} may be written by other users (mode 777): what is in it may not be this user's; remove it (a run makes a new private one) or give RECKON_CACHE_DIR another folder` });
    expect([mode(g), readdirSync(g).sort()]).toEqual([0o755, [CACHE_MARKER, 'entries']]);
  });

  it('that holds other files (a home folder given by mistake) is not used, tidied or chmod-ed', async () => {
    const home = folder('home', 0o755);
    mkdirSync(join(home, 'tmp'));
    writeFileSync(join(home, 'tmp', 'keep.txt'), 'mine');
    expect(await privateCacheFolder(home)).toEqual({ use: false, why: `${home} holds files but is not a reckon cache (no ${CACHE_MARKER} in it): give a new or empty folder` });
    expect([mode(home), readdirSync(join(home, 'tmp'))]).toEqual([0o755, ['keep.txt']]);
  });

  it('is refused when it or a subfolder is a symbolic link or not a folder, or a folder above it lets others move it', async () => {
    const link = join(tmp.dir, 'link');
    symlinkSync(join(tmp.dir, 'readable'), link);
    expect(await privateCacheFolder(link)).toEqual({ use: false, why: `${link} is a symbolic link` });
    // A trailing slash would make lstat follow the link.
    expect(await privateCacheFolder(`${link}/`)).toEqual({ use: false, why: `${link} is a symbolic link` });
    const file = join(tmp.dir, 'a-file');
    writeFileSync(file, 'x');
    expect(await privateCacheFolder(file)).toEqual({ use: false, why: `${file} is not a folder` });
    const cache = join(tmp.dir, 'with-link-inside');
    expect((await privateCacheFolder(cache)).use).toBe(true);
    const entries = join(cache, 'entries');
    rmSync(entries, { recursive: true });
    symlinkSync(join(tmp.dir, 'readable'), entries);
    expect(await privateCacheFolder(cache)).toEqual({ use: false, why: `${entries} is a symbolic link: someone else wrote in the cache folder; remove it (a run makes a new private one)` });
    const open = folder('open-parent', 0o777);
    expect(await privateCacheFolder(join(open, 'cache'))).toEqual({ use: false, why: `${open}, above the cache folder, may be written by other users and is not sticky: they could move the cache folder away` });
    const sticky = folder('sticky-parent', 0o1777);
    expect(await privateCacheFolder(join(sticky, 'cache'))).toEqual({ use: true, dir: join(sticky, 'cache') });
  });

  it.runIf(asRoot)('of another user is not used: the run checks every file, says why (stderr and manifest), and publishes the same results', async () => {
    const foreign = join(tmp.dir, 'foreign');
    mkdirSync(foreign, { mode: 0o700 });
    chownSync(foreign, NOBODY, NOBODY);
    const why = `${foreign} belongs to uid ${NOBODY}, not to this run's user (uid 0): another user could write entries the run would trust`;
    expect(await privateCacheFolder(foreign)).toEqual({ use: false, why });
    const run = () => reckonIn(['run', '--date', '2026-11-02', '--sources', SAMPLE, '--store', join(tmp.dir, 'store'), '--json', '--quiet'], { env: { RECKON_CACHE_DIR: foreign } });
    const [first, second] = [await run(), await run()];
    for (const r of [first, second]) {
      const note = `the cache folder is not used: ${why}; this run checks every file and evaluates every control`;
      expect(r.stderr).toContain(note);
      const m = JSON.parse(readFileSync(r.json.manifest.path, 'utf8'));
      expect(m.notes).toContain(note);
      expect(r.json.warnings).toEqual([note]);
      expect(new Set(Object.values(m.sources.datasets).flatMap((d: any) => d.objects.map((o: any) => o.checked)))).toEqual(new Set(['now']));
      expect(r.json.results_digest).toBe(SAMPLE_DIGEST);
    }
    expect(statSync(foreign).uid).toBe(NOBODY);
  });

  it.runIf(asRoot)('with a name at its top another user wrote (a planted marker or file) is not used', async () => {
    const m = folder('planted-top', 0o700);
    writeFileSync(join(m, CACHE_MARKER), 'x');
    writeFileSync(join(m, 'notes.txt'), 'planted');
    chownSync(join(m, CACHE_MARKER), NOBODY, NOBODY);
    expect(await privateCacheFolder(m)).toEqual({ use: false, why: `${join(m, CACHE_MARKER)} is of uid ${NOBODY}: someone else wrote in the cache folder; remove it (a run makes a new private one)` });
    const l = folder('link-top', 0o700);
    symlinkSync('/etc/hostname', join(l, 'loader-files-89a97dc47f56d0c2.json'));
    expect((await privateCacheFolder(l)).use).toBe(false);
  });

  it.runIf(asRoot)('reached through a symbolic link in a folder of another user: its real path is checked and used', async () => {
    const theirs = folder('theirs', 0o755);
    chownSync(theirs, NOBODY, NOBODY);
    const mine = folder('mine-target', 0o755);
    symlinkSync(mine, join(theirs, 'L'));
    // The path as given passes through nobody's folder, the real one does not: the run uses the real one.
    expect(await privateCacheFolder(join(theirs, 'L', 'cache'))).toEqual({ use: true, dir: join(mine, 'cache') });
    // Nothing is made inside a folder that refuses it.
    expect(await privateCacheFolder(join(theirs, 'new', 'cache'))).toEqual({ use: false, why: `${theirs}, above the cache folder, belongs to uid ${NOBODY}: its owner could move the cache folder away` });
    expect(existsSync(join(theirs, 'new'))).toBe(false);
  });

  it.runIf(asRoot)("an entry of another owner inside the user's own cache is refused, and the file checked now", async () => {
    const cache = join(tmp.dir, 'planted');
    const run = () => reckonIn(['run', '--date', '2026-11-02', '--sources', SAMPLE, '--store', join(tmp.dir, 'store-planted'), '--json', '--quiet'], { env: { RECKON_CACHE_DIR: cache } });
    expect((await run()).json.results_digest).toBe(SAMPLE_DIGEST);
    // Every entry as if another user had written it (its checksums still match).
    for (const root of [join(cache, 'entries'), join(cache, 'results', 'entries')]) for (const e of readdirSync(root)) chownSync(join(root, e), NOBODY, NOBODY);
    const again = await run();
    expect(again.json.results_digest).toBe(SAMPLE_DIGEST);
    const m = JSON.parse(readFileSync(again.json.manifest.path, 'utf8'));
    const objects = Object.values(m.sources.datasets).flatMap((d: any) => d.objects) as { checked: string; cache_refused?: string }[];
    expect(new Set(objects.map((o) => o.checked))).toEqual(new Set(['now']));
    expect(objects.every((o) => o.cache_refused?.includes(`belongs to uid ${NOBODY}, not to this run's user: not trusted`))).toBe(true);
    // Each refusal (every object's entry, and the results entry) is a warning of the --json answer too.
    expect(again.json.warnings).toHaveLength(objects.length + 1);
    expect((again.json.warnings as string[]).every((w) => / was refused \(.*belongs to uid 65534/.test(w))).toBe(true);
  });
});
