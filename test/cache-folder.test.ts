/**
 * The caches' folder is the run's user's own (load/cache-folder.ts, probe36 #8): another local user
 * who could write it could plant entries whose checksums match, and so choose the totals a run
 * publishes; one who could read it reads the checked records. A folder of another user is not
 * used (the run checks every file, and says why); one open to others is made private first.
 */
import { chmodSync, chownSync, mkdirSync, readFileSync, statSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultCacheFolder, privateCacheFolder } from '../pipeline/load/cache-folder.js';
import { reckonIn, ROOT, scratchDir } from './helpers/cli.js';

const tmp = scratchDir('reckon-cache-folder-');
afterAll(() => tmp.cleanup());
const asRoot = process.getuid?.() === 0;
const NOBODY = 65534;

describe('the cache folder', () => {
  it('is created private, one per user by default', async () => {
    const dir = join(tmp.dir, 'new', 'cache');
    expect(await privateCacheFolder(dir)).toEqual({ use: true, tightened: false });
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(defaultCacheFolder('/tmp')).toBe(`/tmp/reckon-cache-${process.getuid!()}`);
  });

  it('open to others is made private (0700) before use', async () => {
    const dir = join(tmp.dir, 'open');
    mkdirSync(dir);
    chmodSync(dir, 0o777);
    expect(await privateCacheFolder(dir)).toEqual({ use: true, tightened: true });
    expect(statSync(dir).mode & 0o777).toBe(0o700);
  });

  it('is refused when it is a symbolic link or not a folder', async () => {
    const link = join(tmp.dir, 'link');
    symlinkSync(join(tmp.dir, 'open'), link);
    expect(await privateCacheFolder(link)).toEqual({ use: false, why: `${link} is a symbolic link` });
    expect((await privateCacheFolder(join(ROOT, 'package.json'))).use).toBe(false);
  });

  it.runIf(asRoot)("of another user is not used: the run checks every file, says why, and publishes the same results", async () => {
    const foreign = join(tmp.dir, 'foreign');
    mkdirSync(foreign, { mode: 0o777 });
    chownSync(foreign, NOBODY, NOBODY);
    expect(await privateCacheFolder(foreign)).toEqual({ use: false, why: `${foreign} belongs to uid ${NOBODY}, not to this run's user (uid 0): another user could write entries the run would trust` });
    const run = () => reckonIn(['run', '--date', '2026-11-02', '--sources', join(ROOT, 'fixtures', 'sample-day', 'sources'), '--store', join(tmp.dir, 'store'), '--json', '--quiet'], { env: { RECKON_CACHE_DIR: foreign } });
    const [first, second] = [await run(), await run()];
    for (const r of [first, second]) {
      expect(r.stderr).toContain(`the cache folder is not used: ${foreign} belongs to uid ${NOBODY}`);
      const m = JSON.parse(readFileSync(r.json.manifest.path, 'utf8'));
      const checked = Object.values(m.sources.datasets).flatMap((d: any) => d.objects.map((o: any) => o.checked));
      expect(new Set(checked)).toEqual(new Set(['now']));
    }
    expect([first.json.results_digest, second.json.results_digest]).toEqual(['fdf7739e05ddf63f23b01bced7e0dadb3c86e4647850616ddebae256689e84f3', 'fdf7739e05ddf63f23b01bced7e0dadb3c86e4647850616ddebae256689e84f3']);
    expect(statSync(foreign).uid).toBe(NOBODY);
  });
});
