/**
 * Issue 7: runs killed with SIGKILL at several points publish no manifest and leave no output
 * visible; the next run recovers and succeeds. Two concurrent runs of one window: one exits 5.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { reckon, reckonAsync, scratchDir, reckonHere } from './helpers/cli.js';
import { DAY_WINDOW as WINDOW, SAMPLE_DAY as SOURCES } from './fixtures/days.js';
const tmp = scratchDir('reckon-crash-');
afterAll(() => tmp.cleanup());

function startPaused(store: string, phase: string) {
  const child = reckonAsync(['run', '--window', WINDOW, '--sources', SOURCES, '--store', store, '--json'], { env: { RECKON_FAULT_PAUSE: phase } });
  const paused = new Promise<void>((resolve, reject) => {
    let err = '';
    child.stderr!.on('data', (b: Buffer) => { err += b.toString(); if (err.includes(`paused at ${phase}`)) resolve(); });
    child.on('exit', (code) => reject(new Error(`exited ${code} before pausing at ${phase}: ${err}`)));
  });
  return { child, paused };
}

function listFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath ?? (e as unknown as { path: string }).path, e.name));
}

const manifests = (store: string) => listFiles(join(store, 'manifests')).filter((f) => f.endsWith('.json'));
const outputs = (store: string) => listFiles(join(store, 'outputs'));

describe('SIGKILL at any point', () => {
  for (const phase of ['leased', 'loading', 'computing', 'staged']) {
    it(`killed while ${phase}: no manifest, no output; the rerun is BREAKS with the expected exit code`, async () => {
      const store = join(tmp.dir, `store-${phase}`);
      const { child, paused } = startPaused(store, phase);
      await paused;
      child.kill('SIGKILL');
      await new Promise((r) => child.on('exit', r));
      expect(manifests(store)).toEqual([]);
      expect(outputs(store)).toEqual([]);
      const rerun = await reckonHere(['run', '--window', WINDOW, '--sources', SOURCES, '--store', store, '--json']);
      expect(rerun.code).toBe(1);
      expect(rerun.json.status).toBe('BREAKS');
      expect(manifests(store)).toHaveLength(1);
      expect(listFiles(join(store, '_staging'))).toEqual([]);
      expect((await reckonHere(['manifest', 'verify', '--store', store])).code).toBe(0);
    });
  }

  it('killed right after the manifest: the next run promotes the published run\'s outputs (roll-forward)', async () => {
    const store = join(tmp.dir, 'store-published');
    const { child, paused } = startPaused(store, 'published');
    await paused;
    child.kill('SIGKILL');
    await new Promise((r) => child.on('exit', r));
    expect(manifests(store)).toHaveLength(1);
    expect(outputs(store)).toEqual([]);
    const rerun = await reckonHere(['run', '--window', WINDOW, '--sources', SOURCES, '--store', store, '--json']);
    expect(rerun.code).toBe(1);
    expect(manifests(store)).toHaveLength(2);
    expect(outputs(store).filter((f) => f.endsWith(".parquet"))).toHaveLength(14); // 7 tables (difference_records included) × 2 runs
    expect((await reckonHere(['manifest', 'verify', '--store', store])).code).toBe(0);
  });
});

describe('one run per window', () => {
  it('a second run of a window held by a live run exits 5; after the holder is killed a run proceeds', async () => {
    const store = join(tmp.dir, 'store-lock');
    const { child, paused } = startPaused(store, 'computing');
    await paused;
    const second = await reckonHere(['run', '--window', WINDOW, '--sources', SOURCES, '--store', store, '--json']);
    expect(second.code).toBe(5);
    expect(second.stderr).toMatch(/is being run by run-/);
    const otherWindow = await reckonHere(['run', '--window', '2026-11-01T00:00:00Z/2026-11-02T00:00:00Z', '--sources', SOURCES, '--store', store, '--control', 'RC01', '--json']);
    expect([0, 1]).toContain(otherWindow.code);
    child.kill('SIGKILL');
    await new Promise((r) => child.on('exit', r));
    const third = await reckonHere(['run', '--window', WINDOW, '--sources', SOURCES, '--store', store, '--json']);
    expect(third.code).toBe(1);
    const m = JSON.parse(readFileSync(third.json.manifest.path, 'utf8'));
    expect(m.leases.map((l: { control_id: string; fencing_token: number }) => [l.control_id, l.fencing_token])).toEqual(
      ['RC01', 'RC02', 'RC03', 'RC04', 'RC05', 'RC06'].map((c) => [c, 2]),
    );
  });
});
