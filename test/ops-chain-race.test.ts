/**
 * CONTRACT §6: the manifest chain is linear per store. Runs of different windows waiting on a
 * publish lock whose holder dies must not both break it: exactly one takes each lock generation,
 * so the chain never forks.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reckon, reckonAsync, scratchDir } from './helpers/cli.js';
import { writeCleanDay } from './fixtures/days.js';

const tmp = scratchDir('reckon-chain-race-');
const SOURCES = join(tmp.dir, 'sources');
beforeAll(() => writeCleanDay(SOURCES));
afterAll(() => tmp.cleanup());

describe('publish lock', () => {
  it('a dead holder is replaced once; concurrent runs of different windows publish one linear chain', async () => {
    const store = join(tmp.dir, 'store');
    const holder = spawn('sleep', ['60']);
    mkdirSync(join(store, '_locks', 'publish'), { recursive: true });
    writeFileSync(join(store, '_locks', 'publish', '0000000001.json'), JSON.stringify({ pid: holder.pid, host: hostname(), acquired_at: new Date().toISOString(), expires_at: '2099-01-01T00:00:00.000Z' }));
    const runs = [0, 3, 6, 9].map((h) => {
      const w = `2026-11-02T${String(h).padStart(2, '0')}:00:00Z/2026-11-02T${String(h).padStart(2, '0')}:30:00Z`;
      const child = reckonAsync(['run', '--window', w, '--sources', SOURCES, '--store', store, '--control', 'RC01', '--quiet']);
      return new Promise<number | null>((resolve) => child.on('exit', resolve));
    });
    await new Promise((r) => setTimeout(r, 4000));
    holder.kill('SIGKILL');
    const codes = await Promise.all(runs);
    expect(codes.every((c) => c === 0 || c === 1)).toBe(true);
    const v = reckon(['manifest', 'verify', '--store', store, '--json']);
    expect(v.json).toEqual({ ok: true, checked: 4, problems: [], inputs_changed: [], signed: 0, unsigned: 4, trusted_registry: null, pending_roll_forward: [], notices: [{ key: 'manifests', problem: '4 manifest(s) NOT signed (signing.unsigned or no signer registry): a consistent rewrite of those cannot be detected' }], breaks: { counts: { breaks: 0, by_run: 0, countersigned: 0, events: 0, legacy: 0, observations: 0, proposals: 0, signatures: 0, signed: 0, unsigned: 0 }, notices: [], registries: [] } });
  });
});
