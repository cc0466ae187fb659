/**
 * Manifests are immutable (CONTRACT §6): a manifest key written once cannot be written again
 * through the store API, and `reckon manifest verify` passes on an intact store and fails, naming
 * the manifest, after a one-byte edit of it.
 */
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishManifest } from '../pipeline/publish/manifest-chain.js';
import { chainHead } from '../pipeline/store/manifests.js';
import { AlreadyExistsError } from '../pipeline/store/object-store.js';
import { openStore } from '../pipeline/store/open-store.js';
import { ROOT, reckon, scratchDir, type CliResult, reckonHere } from './helpers/cli.js';

const SOURCES = join(ROOT, 'fixtures', 'sample-day', 'sources');

describe('manifest immutability and verification', () => {
  const tmp = scratchDir('reckon-manifest-');
  const store = join(tmp.dir, 'store');
  let run: CliResult;
  let key: string;

  beforeAll(async () => {
    run = await reckonHere(['run', '--date', '2026-11-02', '--control', 'RC01,RC03', '--sources', SOURCES, '--store', store, '--json', '--quiet']);
    key = run.json.manifest.path.slice(store.length + 1);
  });
  afterAll(() => tmp.cleanup());

  it('the run published one manifest whose bytes hash to the reported SHA-256', async () => {
    expect(run.code, run.stderr).toBe(1);
    const s = await openStore(store);
    const head = await chainHead(s);
    expect(head.key).toBe(key);
    expect(head.sha256).toBe(run.json.manifest.sha256);
  });

  it('a second write of the same manifest key fails and leaves the bytes untouched', async () => {
    const s = await openStore(store);
    const before = (await s.get(key))!;
    await expect(s.putOnce(key, '{"forged":true}')).rejects.toBeInstanceOf(AlreadyExistsError);
    await expect(s.putOnce(key, before)).rejects.toBeInstanceOf(AlreadyExistsError);
    await expect(s.putOnce(key.replace(/\.json$/, '.sha256'), 'x')).rejects.toBeInstanceOf(AlreadyExistsError);
    expect((await s.get(key))!.equals(before)).toBe(true);
  });

  it('publishing under an existing key fails: the manifest module never overwrites', async () => {
    const s = await openStore(store);
    const before = (await s.get(key))!;
    const existing = JSON.parse(before.toString('utf8'));
    // A view of the store that hides the published manifests, so the publisher computes the same
    // key (sequence 1 and the same run id) again; the write-once store must refuse it.
    const blind = Object.assign(Object.create(Object.getPrototypeOf(s)), s, { list: async (p: string) => (p.startsWith('manifests') ? [] : s.list(p)) }) as typeof s;
    await expect(publishManifest(blind, existing.run_id, (chain) => ({ ...existing, reason: 'forged', chain: { ...existing.chain, ...chain } })))
      .rejects.toBeInstanceOf(AlreadyExistsError);
    expect((await s.get(key))!.equals(before)).toBe(true);
  });

  it('manifest verify exits 0 on the intact store', async () => {
    const v = await reckonHere(['manifest', 'verify', '--store', store]);
    expect(v.code, v.stdout + v.stderr).toBe(0);
  });

  it('manifest verify exits 1 after a one-byte edit and names the manifest', async () => {
    const path = join(store, key);
    const bytes = readFileSync(path);
    const at = bytes.indexOf(Buffer.from('"trigger":"manual"')) + '"trigger":"'.length;
    expect(at).toBeGreaterThan(20);
    bytes[at] = 'M'.charCodeAt(0); // "manual" → "Manual": one byte, still valid JSON
    chmodSync(path, 0o644);
    writeFileSync(path, bytes);
    const v = await reckonHere(['manifest', 'verify', '--store', store]);
    expect(v.code).toBe(1);
    expect(v.stdout + v.stderr).toContain(key.split('/').pop()!);
    const j = await reckonHere(['manifest', 'verify', '--store', store, '--json']);
    expect(j.code).toBe(1);
    expect(j.json.ok).toBe(false);
    expect(j.json.problems.map((p: any) => p.key)).toContain(key);
  });
});
