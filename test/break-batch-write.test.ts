/**
 * Batched break writes (break-plan.ts writePlanned on a store with putManyOnce, the local one):
 * the objects written and their bytes are those of the object-by-object path; an existing key is
 * reported, never replaced; a process killed (SIGKILL) between two batches leaves a prefix of the
 * plan, which a roll-forward completes, the store then holding exactly the bytes of a run that was
 * never interrupted.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BREAK_KEYS, payloadOf } from '../pipeline/breaks/break-objects.js';
import { writePlanned, type PlannedObject } from '../pipeline/breaks/break-plan.js';
import { sha256Hex } from '../pipeline/core/digest.js';
import { NO_FAULTS } from '../pipeline/core/fault.js';
import { LocalObjectStore } from '../pipeline/store/local-store.js';
import type { ObjectStore } from '../pipeline/store/object-store.js';
import { ROOT, scratchDir } from './helpers/cli.js';

const tmp = scratchDir('reckon-break-batch-');
afterAll(() => tmp.cleanup());

const RUN = 'run-20261102t000000z-0000abcd';
const BINDING = { manifest_key: `manifests/00000001-${RUN}.json`, manifest_sha256: 'a'.repeat(64) };

/** Three breaks: an OPEN event and an observation each, in plan order (6 objects). */
const PLAN: PlannedObject[] = ['brk-000000000000000000000001', 'brk-000000000000000000000002', 'brk-000000000000000000000003'].flatMap((id) => {
  const event = payloadOf({ break_id: id, type: 'OPEN', version: 1 });
  const observation = payloadOf({ break_id: id, run_id: RUN });
  return [
    { kind: 'event' as const, key: BREAK_KEYS.event(id, 1), break_id: id, payload: event, digest: sha256Hex(event), base: null },
    { kind: 'observation' as const, key: BREAK_KEYS.observation(id, RUN), break_id: id, payload: observation, digest: sha256Hex(observation) },
  ];
});

/** Every file under `dir` with the SHA-256 of its bytes, by relative path. */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true }) as unknown as { isFile(): boolean; name: string; parentPath?: string; path?: string }[]) {
    if (!e.isFile()) continue;
    const p = join(e.parentPath ?? e.path!, e.name);
    out[p.slice(dir.length + 1)] = sha256Hex(readFileSync(p));
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** The same local store seen without putManyOnce: written object by object. */
function oneByOne(s: LocalObjectStore): ObjectStore {
  return { location: s.location, scratchDir: s.scratchDir, putOnce: (k, b) => s.putOnce(k, b), putFileOnce: (k, p) => s.putFileOnce(k, p), get: (k) => s.get(k), list: (p) => s.list(p), deleteScratch: (k) => s.deleteScratch(k) };
}

/** The bytes of the first break's OPEN event as stored (canonical envelope, bound to the manifest). */
const FIRST_EVENT = `{"binding":{"manifest_key":"manifests/00000001-${RUN}.json","manifest_sha256":"${'a'.repeat(64)}"},"payload":"{\\"break_id\\":\\"brk-000000000000000000000001\\",\\"type\\":\\"OPEN\\",\\"version\\":1}","signatures":[]}`;

/** The SHA-256 of every object the plan writes, by key (no temporary file left beside them). */
const TREE: Record<string, string> = {
  'breaks/brk-000000000000000000000001/events/000001.json': '66fdffdf0802b14da4561e9d492cc93c74ec675dfe2568f127fddead908c4498',
  'breaks/brk-000000000000000000000001/observations/run-20261102t000000z-0000abcd.json': 'c0adc3d140dbef58dc68b875dc7a44073899d11148b3df9e24ecc987e0cc112f',
  'breaks/brk-000000000000000000000002/events/000001.json': 'b306dc21b329a64ec3f4bd8cb5f36ee07910e434fd23850c25bfb017ee063b75',
  'breaks/brk-000000000000000000000002/observations/run-20261102t000000z-0000abcd.json': '85caf3aca790d2d8836c2c50beb2a0496a58dcf3a97b21ef816c989f05fcfc51',
  'breaks/brk-000000000000000000000003/events/000001.json': '2b5e68f7f6751f92d6351eb55501638988202267bf199b055108f7a8b831aaa9',
  'breaks/brk-000000000000000000000003/observations/run-20261102t000000z-0000abcd.json': '33a79e84d336d6e48c202f52c2aaa39190728bb968e5af02e8b5427d79f916bf',
};

describe('batched break writes', () => {
  const reference = join(tmp.dir, 'one-by-one');

  it('write the same objects with the same bytes as the object-by-object path, batch by batch', async () => {
    expect((await writePlanned(oneByOne(new LocalObjectStore(reference)), PLAN, BINDING, NO_FAULTS)).written).toBe(6);
    const batched = join(tmp.dir, 'batched');
    expect(await writePlanned(new LocalObjectStore(batched), PLAN, BINDING, NO_FAULTS, 2)).toEqual({ written: 6, present: 0, superseded: [] });
    expect(readFileSync(join(batched, PLAN[0].key), 'utf8')).toBe(FIRST_EVENT);
    expect(tree(batched)).toEqual(TREE);
    expect(tree(reference)).toEqual(TREE);
  });

  it('putManyOnce reports an existing key and leaves it as it was; it makes missing folders', async () => {
    const dir = join(tmp.dir, 'many');
    const s = new LocalObjectStore(dir);
    await s.putOnce('a/b/c.json', 'first');
    expect(await s.putManyOnce([{ key: 'a/b/c.json', body: 'second' }, { key: 'a/d/e/f.json', body: 'new' }, { key: 'a/b/g.json', body: Buffer.from('bytes') }])).toEqual(['exists', 'written', 'written']);
    expect(readFileSync(join(dir, 'a/b/c.json'), 'utf8')).toBe('first');
    expect(tree(dir)).toEqual({ 'a/b/c.json': sha256Hex('first'), 'a/b/g.json': sha256Hex('bytes'), 'a/d/e/f.json': sha256Hex('new') });
  });

  it('a process killed between two batches leaves a prefix of the plan; the roll-forward writes the rest, the bytes of an uninterrupted write', async () => {
    const store = join(tmp.dir, 'killed');
    const planFile = join(tmp.dir, 'plan.json');
    writeFileSync(planFile, JSON.stringify({ plan: PLAN, binding: BINDING }));
    // The first object alone, then batches of 2: the second batch call (objects 4 and 5) kills the process before it writes.
    const child = `
      const { LocalObjectStore } = await import(${JSON.stringify(join(ROOT, 'dist/pipeline/store/local-store.js'))});
      const { writePlanned } = await import(${JSON.stringify(join(ROOT, 'dist/pipeline/breaks/break-plan.js'))});
      const { plan, binding } = JSON.parse((await import('node:fs')).readFileSync(${JSON.stringify(planFile)}, 'utf8'));
      class Dying extends LocalObjectStore {
        calls = 0;
        async putManyOnce(items) { if (++this.calls === 2) process.kill(process.pid, 'SIGKILL'); return super.putManyOnce(items); }
      }
      await writePlanned(new Dying(${JSON.stringify(store)}), plan, binding, async () => undefined, 2);`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', child], { encoding: 'utf8' });
    expect(r.signal, r.stderr).toBe('SIGKILL');
    expect(Object.keys(tree(store))).toEqual(PLAN.slice(0, 3).map((o) => o.key).sort());
    expect(existsSync(join(store, PLAN[3].key))).toBe(false);
    expect(await writePlanned(new LocalObjectStore(store), PLAN, BINDING, NO_FAULTS, 2)).toEqual({ written: 3, present: 3, superseded: [] });
    expect(tree(store)).toEqual(tree(reference));
  });
});
