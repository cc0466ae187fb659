/**
 * View mode reads Parquet files during the whole run (load-views.ts). A file rewritten in place
 * after it was checked and hashed must stop the run with exit 3 naming the file and the rule
 * `file_changed_during_run`, and no manifest may be published; an unchanged day runs through.
 */
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reckon, reckonAsync, scratchDir } from './helpers/cli.js';

describe('a Parquet file changed while the run reads it', () => {
  const tmp = scratchDir('reckon-view-change-');
  const day = join(tmp.dir, 'day');
  const other = join(tmp.dir, 'other');

  beforeAll(() => {
    for (const [out, seed] of [[day, '1'], [other, '2']] as const) {
      const g = reckon(['generate', '--orders', '300', '--date', '2026-11-02', '--out', out, '--format', 'parquet', '--seed', seed]);
      expect(g.code, g.stderr).toBe(0);
    }
  });
  afterAll(() => tmp.cleanup());

  it('runs through when nothing changes (the views read the checked files)', () => {
    const r = reckon(['run', '--date', '2026-11-02', '--sources', day, '--store', join(tmp.dir, 'store-a'), '--json', '--quiet']);
    expect(r.code, r.stderr).toBe(1);
    expect(r.json.controls.map((c: { status: string }) => c.status)).not.toContain('INCOMPLETE');
  });

  it('exits 3 naming the file when it is rewritten in place after loading, and publishes nothing', async () => {
    const store = join(tmp.dir, 'store-b');
    const child = reckonAsync(['run', '--date', '2026-11-02', '--sources', day, '--store', store, '--json', '--quiet'], { env: { RECKON_FAULT_PAUSE: 'computing:4000' } });
    let stderr = '';
    let stdout = '';
    child.stdout!.on('data', (b) => { stdout += String(b); });
    const paused = new Promise<void>((resolve) => child.stderr!.on('data', (b) => { stderr += String(b); if (stderr.includes('paused at computing')) resolve(); }));
    const exited = new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? -1)));
    await paused;
    const name = readdirSync(join(day, 'orders')).find((f) => f.endsWith('.parquet'))!;
    // Same inode (the run's hard link sees it), other content: another seed's orders.
    writeFileSync(join(day, 'orders', name), readFileSync(join(other, 'orders', name)));
    const code = await exited;
    expect(code, stderr).toBe(3);
    const err = JSON.parse(stdout).error;
    expect(err.message).toContain(`orders/${name} changed while the run was reading it`);
    expect(existsSync(join(store, 'manifests')) ? readdirSync(join(store, 'manifests')).filter((f) => f.endsWith('.json')) : []).toEqual([]);
  });
});
