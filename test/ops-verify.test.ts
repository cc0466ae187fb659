/**
 * Issue 7: `reckon manifest verify` re-hashes manifests and the outputs they list and names the
 * first broken link: an edited, a deleted and a reordered manifest, and an edited output.
 */
import { cpSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reckon, scratchDir, reckonHere } from './helpers/cli.js';
import { writeCleanDay } from './fixtures/days.js';

const tmp = scratchDir('reckon-verify-');
const base = join(tmp.dir, 'base');
const SOURCES = join(tmp.dir, 'sources');
afterAll(() => tmp.cleanup());

beforeAll(async () => {
  await writeCleanDay(SOURCES);
  for (const [i, window] of ['2026-11-01T00:00:00Z/2026-11-02T00:00:00Z', '2026-11-02T00:00:00Z/2026-11-03T00:00:00Z', '2026-11-02T00:00:00Z/2026-11-02T12:00:00Z'].entries()) {
    const r = await reckonHere(['run', '--window', window, '--sources', SOURCES, '--store', base, '--control', 'RC01,RC03', '--json']);
    expect([0, 1], `run ${i}: ${r.stderr}`).toContain(r.code);
  }
});

function copy(name: string): { store: string; manifests: string[] } {
  const store = join(tmp.dir, name);
  cpSync(base, store, { recursive: true });
  const manifests = readdirSync(join(store, 'manifests')).filter((f) => f.endsWith('.json')).sort();
  return { store, manifests };
}

describe('manifest verify', () => {
  it('an intact chain verifies (exit 0)', async () => {
    const r = await reckonHere(['manifest', 'verify', '--store', base, '--json']);
    expect(r.code).toBe(0);
    expect(r.json).toEqual({
      ok: true, checked: 3, problems: [], inputs_changed: [], signed: 0, unsigned: 3, trusted_registry: null, pending_roll_forward: [],
      notices: [{ key: 'manifests', problem: '3 manifest(s) NOT signed (signing.unsigned or no signer registry): a consistent rewrite of those cannot be detected' }],
      breaks: expect.objectContaining({ notices: [], registries: [] }),
    });
  });

  it('detects a one-byte edit of a manifest and names it', async () => {
    const { store, manifests } = copy('edited');
    const path = join(store, 'manifests', manifests[1]);
    const bytes = readFileSync(path);
    const i = bytes.indexOf(Buffer.from('"rounding_mode":"HALF_EVEN"')) + 18;
    bytes[i] = 'h'.charCodeAt(0);
    writeFileSync(path, bytes);
    const r = await reckonHere(['manifest', 'verify', '--store', store, '--json']);
    expect(r.code).toBe(1);
    expect(r.json.problems[0].key).toBe(`manifests/${manifests[1]}`);
    expect(r.json.problems[0].problem).toMatch(/was edited/);
  });

  it('detects a deleted manifest', async () => {
    const { store, manifests } = copy('deleted');
    rmSync(join(store, 'manifests', manifests[1]));
    rmSync(join(store, 'manifests', manifests[1].replace(/\.json$/, '.sha256')));
    const r = await reckonHere(['manifest', 'verify', '--store', store, '--json']);
    expect(r.code).toBe(1);
    expect(r.json.problems[0]).toEqual({ key: `manifests/${manifests[2]}`, problem: expect.stringMatching(/sequence 3 where 2 was expected/) });
  });

  it('detects reordered manifests', async () => {
    const { store, manifests } = copy('reordered');
    const dir = join(store, 'manifests');
    const swap = (a: string, b: string) => { renameSync(join(dir, a), join(dir, 'tmp')); renameSync(join(dir, b), join(dir, a)); renameSync(join(dir, 'tmp'), join(dir, b)); };
    // Swap the sequence numbers of manifests 2 and 3 (each keeps its own run id and digest file).
    const [m2, m3] = [manifests[1], manifests[2]];
    const r2 = m2.replace(/^00000002/, '00000003'), r3 = m3.replace(/^00000003/, '00000002');
    renameSync(join(dir, m2), join(dir, r2)); renameSync(join(dir, m2.replace('.json', '.sha256')), join(dir, r2.replace('.json', '.sha256')));
    renameSync(join(dir, m3), join(dir, r3)); renameSync(join(dir, m3.replace('.json', '.sha256')), join(dir, r3.replace('.json', '.sha256')));
    void swap;
    const r = await reckonHere(['manifest', 'verify', '--store', store, '--json']);
    expect(r.code).toBe(1);
    expect(r.json.problems[0].key).toBe(`manifests/${r3}`);
    expect(r.json.problems[0].problem).toMatch(/records sequence 3, file name says 2|chain is broken/);
  });

  it('detects an edited output object', async () => {
    const { store, manifests } = copy('output');
    const m = JSON.parse(readFileSync(join(store, 'manifests', manifests[0]), 'utf8'));
    const out = m.outputs.find((o: { table: string }) => o.table === 'control_totals');
    const path = join(store, out.key);
    const bytes = readFileSync(path);
    bytes[Math.floor(bytes.length / 2)] ^= 0xff;
    writeFileSync(path, bytes);
    const r = await reckonHere(['manifest', 'verify', '--store', store, '--json']);
    expect(r.code).toBe(1);
    expect(r.json.problems[0]).toEqual({ key: `manifests/${manifests[0]}`, problem: expect.stringContaining(`output ${out.key} was edited`) });
  });
});

describe('an input corrected in place after its run', () => {
  it('is noted, not a broken link: the store verifies (exit 0) and --json lists it under inputs_changed', async () => {
    const sources = join(tmp.dir, 'corrected-sources');
    const store = join(tmp.dir, 'corrected');
    await writeCleanDay(sources);
    const run = await reckonHere(['run', '--window', '2026-11-02T00:00:00Z/2026-11-03T00:00:00Z', '--sources', sources, '--store', store, '--control', 'RC01', '--json']);
    expect([0, 1], run.stderr).toContain(run.code);
    const file = readdirSync(join(sources, 'orders')).sort()[0];
    writeFileSync(join(sources, 'orders', file), `${readFileSync(join(sources, 'orders', file), 'utf8')}\n`);
    const r = await reckonHere(['manifest', 'verify', '--store', store, '--json']);
    expect([r.code, r.json.ok, r.json.problems]).toEqual([0, true, []]);
    const manifest = readdirSync(join(store, 'manifests')).find((f) => f.endsWith('.json'))!;
    expect(r.json.inputs_changed).toEqual([{ key: `manifests/${manifest}`, problem: expect.stringMatching(new RegExp(`^input orders/${file} in ${sources.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} changed since the run: SHA-256 [0-9a-f]{64} ≠ recorded [0-9a-f]{64} \\(outside the store`)) }]);
    const text = await reckonHere(['manifest', 'verify', '--store', store]);
    expect(text.stdout).toMatch(/^ok: 1 manifest\(s\) verified/);
    expect(text.stdout).toContain(`  note: manifests/${manifest}: input orders/${file} in ${sources} changed since the run`);
  });
});
