/**
 * View mode reads Parquet files during the whole run (load-views.ts). A file rewritten in place
 * after it was checked and hashed must stop the run with exit 3 naming the file and the rule
 * `file_changed_during_run`, and no manifest may be published; an unchanged day runs through.
 * Everything runs through the CLI in this process; the file is rewritten from the run's stderr
 * callback when the run announces its pause at `computing` (RECKON_FAULT_PAUSE), before it goes on.
 */
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../pipeline/cli/main.js';
import { captureIo } from '../pipeline/cli/io.js';
import { reckonHere, ROOT, scratchDir } from './helpers/cli.js';

describe('a Parquet file changed while the run reads it', () => {
  const tmp = scratchDir('reckon-view-change-');
  const day = join(tmp.dir, 'day');
  const other = join(tmp.dir, 'other');

  beforeAll(async () => {
    for (const [out, seed] of [[day, '1'], [other, '2']] as const) {
      const g = await reckonHere(['generate', '--orders', '300', '--date', '2026-11-02', '--out', out, '--format', 'parquet', '--seed', seed]);
      expect(g.code, g.stderr).toBe(0);
    }
  });
  afterAll(() => tmp.cleanup());

  it('runs through when nothing changes (the views read the checked files)', async () => {
    const r = await reckonHere(['run', '--date', '2026-11-02', '--sources', day, '--store', join(tmp.dir, 'store-a'), '--json', '--quiet']);
    expect(r.code, r.stderr).toBe(1);
    expect(r.json.controls.map((c: { status: string }) => c.status)).not.toContain('INCOMPLETE');
  });

  it('exits 3 naming the file when it is rewritten in place after loading, and publishes nothing', async () => {
    const store = join(tmp.dir, 'store-b');
    const name = readdirSync(join(day, 'orders')).find((f) => f.endsWith('.parquet'))!;
    // A cache of its own: an unchanged rerun found in the results cache would skip the load, and no view would read the file.
    const io = captureIo({ ...process.env, RECKON_FAULT_PAUSE: 'computing:1', RECKON_CACHE_DIR: join(tmp.dir, 'cache-b') }, { cwd: ROOT });
    let rewritten = false;
    const code = await main(['run', '--date', '2026-11-02', '--sources', day, '--store', store, '--json', '--quiet'], {
      ...io,
      stderr: (text) => {
        io.stderr(text);
        if (!text.includes('paused at computing')) return;
        // Same inode (the run's hard link sees it), other content: another seed's orders.
        writeFileSync(join(day, 'orders', name), readFileSync(join(other, 'orders', name)));
        rewritten = true;
      },
    });
    expect(rewritten, io.err).toBe(true);
    expect(code, io.err).toBe(3);
    const err = JSON.parse(io.out).error;
    expect(err.message).toContain(`orders/${name} changed while the run was reading it`);
    expect(existsSync(join(store, 'manifests')) ? readdirSync(join(store, 'manifests')).filter((f) => f.endsWith('.json')) : []).toEqual([]);
  });
});
