/**
 * Issue 20, each input hashed once: the load trusts a SHA-256 taken before it (input-digest.ts)
 * only while the file's stamp holds. A same-size rewrite whose modification time is put back
 * (`touch -r`, utimes) leaves size, mtime and inode alone; only the change time shows it. The load
 * must then hash the file again, record the new SHA-256, load the new records, and keep the new
 * check in the delivery cache under the new SHA-256, never the old.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../pipeline/config/config.js';
import { sha256Hex } from '../pipeline/core/digest.js';
import { digestInputs } from '../pipeline/load/input-digest.js';
import { loadSources, type LoadOptions } from '../pipeline/load/load.js';
import { ROOT, scratchDir } from './helpers/cli.js';
import { AS_IN_A_RUN, fileDuck } from './helpers/duckdb.js';

const tmp = scratchDir('reckon-input-stamp-');
const duck = fileDuck(AS_IN_A_RUN);
const config = defaultConfig().config;
let counter = 0;
afterAll(() => tmp.cleanup());

const load = (root: string, opts: LoadOptions) => loadSources(duck.conn, root, config, join(tmp.dir, `links-${++counter}`), { datasets: ['orders'], views: true, ...opts });

/** Rewrites `file` in place with its last order's quantity changed by one digit (same size), then puts its times back with `touch -r`. */
function rewriteSameSize(file: string): string {
  const before = statSync(file);
  // `cp -p` keeps the times to the nanosecond, for `touch -r` to put back as an attacker would.
  execFileSync('cp', ['-p', file, `${file}.times`]);
  const text = readFileSync(file, 'utf8');
  const lines = text.trimEnd().split('\n');
  const last = lines[lines.length - 1].split(',');
  last[7] = last[7].replace(/[0-9]$/, (d) => String((Number(d) + 1) % 10));
  lines[lines.length - 1] = last.join(',');
  const changed = `${lines.join('\n')}\n`;
  expect(changed.length).toBe(text.length);
  expect(changed).not.toBe(text);
  writeFileSync(file, changed);
  execFileSync('touch', ['-r', `${file}.times`, file]);
  execFileSync('mv', [`${file}.times`, join(tmp.dir, `times-${++counter}`)]);
  const after = statSync(file);
  expect([after.size, after.mtimeMs, after.ino]).toEqual([before.size, before.mtimeMs, before.ino]);
  return sha256Hex(Buffer.from(changed));
}

describe('a hash taken before the load', () => {
  it('is not trusted for a file rewritten at the same size with its modification time put back', async () => {
    const root = join(tmp.dir, 'day');
    cpSync(join(ROOT, 'fixtures', 'sample-day', 'sources'), root, { recursive: true });
    const file = join(root, 'orders', 'part-00001.csv');
    const digest = await digestInputs(root, ['orders'], config);
    const old = digest!.hashed.get(file)!;
    expect(old.sha256).toBe(sha256Hex(readFileSync(file)));
    const fresh = rewriteSameSize(file);
    const cache = { dir: join(tmp.dir, 'cache'), maxBytes: 1 << 30 };
    const first = await load(root, { hashed: digest!.hashed, cache });
    const fl = first.datasets[0].files.find((f) => f.path === 'orders/part-00001.csv')!;
    expect(fl.sha256).toBe(fresh);
    expect(fl.checked).toBe('now');
    // The cache holds the new bytes' check: a second load of the same (new) file is a hit with the same SHA-256.
    const second = await load(root, { cache });
    const again = second.datasets[0].files.find((f) => f.path === 'orders/part-00001.csv')!;
    expect([again.sha256, again.checked]).toEqual([fresh, 'cache']);
  });

  it('is trusted (not hashed again) for a file left alone, though staging links it', async () => {
    const root = join(tmp.dir, 'day-alone');
    cpSync(join(ROOT, 'fixtures', 'sample-day', 'sources'), root, { recursive: true });
    const digest = await digestInputs(root, ['orders'], config);
    const file = join(root, 'orders', 'part-00001.csv');
    // A forged hash for the untouched file: taken as it is, proving the load did not hash the file again.
    const forged = new Map(digest!.hashed);
    forged.set(file, { ...digest!.hashed.get(file)!, sha256: 'f'.repeat(64) });
    const r = await load(root, { hashed: forged, cache: { dir: join(tmp.dir, 'cache-alone'), maxBytes: 1 << 30 } });
    expect(r.datasets[0].files.find((f) => f.path === 'orders/part-00001.csv')!.sha256).toBe('f'.repeat(64));
  });
});
