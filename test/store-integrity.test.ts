/**
 * Issue 18, store integrity through the real CLI (node bin/reckon.js, killed with SIGKILL at the
 * fault points of pipeline/core/fault.ts):
 * - a run killed between its manifest and the manifest's `.sha256` leaves a chain the next run
 *   completes (proven by the digest the run recorded before publishing), while a manifest edited
 *   after the kill is never given a digest and the chain is not extended over it;
 * - no other kill point leaves the chain unverifiable or staging behind;
 * - a `manifests/` folder the user cannot list is an error naming it (exit 2), never an empty
 *   chain (run as the unprivileged user `nobody` when the tests run as root: root ignores
 *   permissions);
 * - a read-only or full store says which it is and exits 2 (a tmpfs mounted by the test when it
 *   runs as root; skipped otherwise).
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, reckon, reckonAsync, ROOT, scratchDir, reckonHere } from './helpers/cli.js';
import { WINDOW, validDay, writeDay } from './fixtures/hostile.js';
import { StoreError } from '../pipeline/core/errors.js';
import { windowForRange } from '../pipeline/contract/window.js';
import { LocalObjectStore } from '../pipeline/store/local-store.js';
import { chainHead } from '../pipeline/store/manifests.js';
import { recoverStaging } from '../pipeline/publish/staging.js';
import { withPublishLock } from '../pipeline/publish/publish-lock.js';
import { acquireLeases } from '../pipeline/publish/lease.js';
import { BreakStore } from '../pipeline/breaks/break-store.js';

const tmp = scratchDir('reckon-store-integrity-');
afterAll(() => tmp.cleanup());
const SOURCES = join(tmp.dir, 'sources');
writeDay(SOURCES, validDay(2));
let n = 0;
const newStore = () => join(tmp.dir, `store-${++n}`);
const runArgs = (store: string) => ['run', '--window', WINDOW, '--sources', SOURCES, '--store', store, '--json'];

function files(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name).slice(dir.length + 1)).sort();
}

/** Starts a run paused at `phase`, kills it there with SIGKILL and waits for it to be gone. */
async function killAt(store: string, phase: string): Promise<void> {
  const child = reckonAsync(runArgs(store), { env: { RECKON_FAULT_PAUSE: phase } });
  await new Promise<void>((resolve, reject) => {
    let err = '';
    child.stderr!.on('data', (b: Buffer) => { err += b.toString(); if (err.includes(`paused at ${phase}`)) resolve(); });
    child.on('exit', (code) => reject(new Error(`exited ${code} before pausing at ${phase}: ${err}`)));
  });
  child.kill('SIGKILL');
  await new Promise((r) => child.on('exit', r));
}

describe('a run killed between its manifest and the .sha256', () => {
  it('leaves a manifest the next run completes, saying so; the chain then verifies', async () => {
    const store = newStore();
    await killAt(store, 'manifest_written');
    const m = files(join(store, 'manifests'));
    expect(m).toHaveLength(1);
    expect(m[0]).toMatch(/^00000001-run-.*\.json$/);
    // Proven by the run's digest record: a notice (the next run completes it), not a broken link.
    const before = await reckonHere(['manifest', 'verify', '--store', store]);
    expect(before.code, before.stdout).toBe(0);
    expect(before.stdout).toMatch(/^ok: 1 manifest\(s\) verified/m);
    expect(before.stdout).toMatch(/note: manifests\/00000001-run-\S+\.json: its \.sha256 digest file is missing: its run stopped between the manifest and its digest/);

    const rerun = await reckonHere(runArgs(store));
    expect(rerun.code).toBe(0);
    expect(rerun.stderr).toContain(`completed the publication of manifests/${m[0]}`);
    expect(files(join(store, 'manifests'))).toEqual([m[0], m[0].replace(/\.json$/, '.sha256'), expect.stringMatching(/^00000002-.*\.json$/), expect.stringMatching(/^00000002-.*\.sha256$/)]);
    expect(files(join(store, '_staging'))).toEqual([]);
    expect((await reckonHere(['manifest', 'verify', '--store', store])).code).toBe(0);
    expect((await reckonHere(['evidence', 'pack', '--run', rerun.json.run_id, '--store', store, '--out', join(tmp.dir, `bag-${n}`)])).code).toBe(0);
  });

  it('a manifest edited after the kill is not given a digest of its new bytes, and nothing is published on top of it', async () => {
    const store = newStore();
    await killAt(store, 'manifest_written');
    const [key] = files(join(store, 'manifests'));
    const path = join(store, 'manifests', key);
    writeFileSync(path, readFileSync(path, 'utf8').replace('"trigger":"manual"', '"trigger":"incident"'));

    const rerun = await reckonHere(runArgs(store));
    expect(rerun.code).toBe(2);
    expect(rerun.stderr).toContain(`stopped after publishing manifests/${key}, which has no ${key.replace(/\.json$/, '.sha256')} and nothing proves its bytes`);
    expect(rerun.stderr).toMatch(/its run recorded the digest [0-9a-f]{64} before publishing, but the bytes hash to [0-9a-f]{64}: the manifest was changed after it was written/);
    expect(files(join(store, 'manifests'))).toEqual([key]);
    const verify = await reckonHere(['manifest', 'verify', '--store', store]);
    expect(verify.code).toBe(1);
    expect(verify.stdout + verify.stderr).toMatch(/its \.sha256 digest file is missing and nothing proves its bytes/);
  });
});

describe('a published manifest deleted', () => {
  it('of a run stopped after publishing: the next run keeps its staging, refuses (exit 2) and reuses no sequence', async () => {
    const store = newStore();
    await killAt(store, 'published');
    const [key] = files(join(store, 'manifests')).filter((f) => f.endsWith('.json'));
    rmSync(join(store, 'manifests', key));
    const staged = files(join(store, '_staging'));
    const r = await reckonHere(runArgs(store));
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`published manifests/${key} (its ${key.replace(/\.json$/, '.sha256')} is there), but the manifest is gone: it was deleted after publication; its staging is kept`);
    expect(files(join(store, '_staging'))).toEqual(staged);
    expect(files(join(store, 'manifests')).filter((f) => f.endsWith('.json'))).toEqual([]);
    const verify = await reckonHere(['manifest', 'verify', '--store', store]);
    expect(verify.code).toBe(1);
    expect(verify.stdout).toContain(`manifests/${key.replace(/\.json$/, '.sha256')}: is the digest of manifests/${key}, which is not there: that manifest was published and deleted since (restore it`);
  });

  it('the head of a finished chain: no run takes its sequence (exit 2)', async () => {
    const store = newStore();
    expect((await reckonHere(runArgs(store))).code).toBe(0);
    expect((await reckonHere(runArgs(store))).code).toBe(0);
    const head = files(join(store, 'manifests')).filter((f) => f.endsWith('.json')).sort()[1];
    rmSync(join(store, 'manifests', head));
    const r = await reckonHere(runArgs(store));
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`manifests/${head.replace(/\.json$/, '.sha256')} is there but its manifest is not: manifest 2 was deleted after publication; no manifest takes its sequence`);
    expect(files(join(store, 'manifests')).filter((f) => f.endsWith('.json'))).toHaveLength(1);
  });
});

describe('the other new kill point (test/ops-crash.test.ts covers leased … staged and published)', () => {
  it('killed after promoting, before automatic verification and staging cleanup: the next run finishes it', async () => {
    const store = newStore();
    await killAt(store, 'promoted');
    expect(files(join(store, '_staging')).some((f) => f.endsWith('/_manifest.json'))).toBe(true);
    const rerun = await reckonHere(runArgs(store));
    expect(rerun.code).toBe(0);
    expect(rerun.stderr).toMatch(/rolled forward run run-/);
    expect(files(join(store, 'manifests'))).toHaveLength(4);
    expect(files(join(store, '_staging'))).toEqual([]);
    expect((await reckonHere(['manifest', 'verify', '--store', store])).code).toBe(0);
  });
});

/** Runs the CLI as `nobody` when the tests run as root (root ignores file permissions). */
function reckonUnprivileged(args: string[]) {
  const asRoot = process.getuid?.() === 0;
  const cmd = asRoot ? 'runuser' : process.execPath;
  const argv = asRoot ? ['-u', 'nobody', '--', process.execPath, BIN, ...args] : [BIN, ...args];
  const r = spawnSync(cmd, argv, { cwd: ROOT, encoding: 'utf8', env: { ...process.env, TMPDIR: '/tmp' } });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/**
 * Why the unreadable-folder test cannot run here, or null when it can: as root it runs the CLI as
 * `nobody`, who must be able to read the checkout (a clone under a 0700 home folder is not).
 */
const cannotDrop = process.getuid?.() !== 0 ? null
  : spawnSync('runuser', ['-u', 'nobody', '--', 'test', '-r', BIN]).status !== 0 ? `skipped: the tests run as root and nobody cannot read ${BIN} (a folder above the checkout is not readable by others)` : null;

describe('a store folder that cannot be listed', () => {
  it.skipIf(cannotDrop !== null)(`manifests/ without read permission (chmod 0333): exit 2 naming the folder, no second 00000001 manifest${cannotDrop ? ` (${cannotDrop})` : ''}`, () => {
    const store = newStore();
    mkdirSync(store);
    if (process.getuid?.() === 0) {
      chmodSync(tmp.dir, 0o755);
      chownSync(store, 65534, 65534);
    }
    const first = reckonUnprivileged(runArgs(store));
    expect(first.code, first.stderr).toBe(0);
    const dir = join(store, 'manifests');
    const before = files(dir);
    chmodSync(dir, 0o333);
    try {
      const second = reckonUnprivileged(runArgs(store));
      expect(second.code).toBe(2);
      expect(second.stderr).toContain(`reckon: StoreError: the store folder ${dir} cannot be listed (EACCES)`);
    } finally {
      chmodSync(dir, 0o755);
    }
    expect(files(dir)).toEqual(before);
  });
});

/** Why the tmpfs tests cannot run here (mounting needs root and mount(8)), or null when they can. */
const cannotMount = process.getuid?.() !== 0 ? 'skipped: mounting a tmpfs needs root and the tests do not run as root'
  : spawnSync('mount', ['--version']).status !== 0 ? 'skipped: mount(8) is not available' : null;

describe('a read-only or full store (a tmpfs mounted here; needs root)', () => {
  if (cannotMount) {
    it.skip(cannotMount, () => {});
    return;
  }
  const mountTmpfs = (size: string) => {
    const at = join(tmp.dir, `mnt-${++n}`);
    mkdirSync(at);
    const r = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', at], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`mount failed: ${r.stderr}`);
    return { at, umount: () => spawnSync('umount', [at]) };
  };

  it('read-only: exit 2, saying the store is read-only, with the key being written', async () => {
    const m = mountTmpfs('4m');
    try {
      expect((await reckonHere(runArgs(m.at))).code).toBe(0);
      expect(spawnSync('mount', ['-o', 'remount,ro', m.at]).status).toBe(0);
      const r = await reckonHere(runArgs(m.at));
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(new RegExp(`reckon: StoreError: the store ${m.at} is on a read-only file system while writing leases/rc01/`));
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(r.json.error.type).toBe('StoreError');
    } finally { m.umount(); }
  });

  it('full: exit 2, saying the store is full; once there is room again the chain verifies and a run publishes', async () => {
    const m = mountTmpfs('4m');
    try {
      expect((await reckonHere(runArgs(m.at))).code).toBe(0);
      // Fill what is left.
      spawnSync('dd', ['if=/dev/zero', `of=${join(m.at, 'filler')}`, 'bs=64k'], { encoding: 'utf8' });
      const r = await reckonHere(runArgs(m.at));
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(new RegExp(`reckon: StoreError: the store ${m.at} is full \\(no space left on device\\) while writing `));
      expect(r.stderr).not.toMatch(/\n\s+at /);
      // The failed run published nothing: its staging went with it, so the next run has none to discard.
      expect(existsSync(join(m.at, '_staging')) ? readdirSync(join(m.at, '_staging')) : []).toEqual([]);
      spawnSync('rm', [join(m.at, 'filler')]);
      expect((await reckonHere(['manifest', 'verify', '--store', m.at])).code).toBe(0);
      const next = await reckonHere(runArgs(m.at));
      expect([next.code, next.stderr.includes('discarded staging')]).toEqual([0, false]);
      expect((await reckonHere(['manifest', 'verify', '--store', m.at])).code).toBe(0);
    } finally { m.umount(); }
  });
});

describe('every listing the local store does fails loudly (in process; a file where a folder is expected, which root cannot read past either)', () => {
  const cases: [string, (s: LocalObjectStore) => Promise<unknown>][] = [
    ['manifests', (s) => chainHead(s)],
    ['_staging', (s) => recoverStaging(s, async () => undefined, async () => false)],
    ['_locks/publish', (s) => withPublishLock(s, async () => 'published')],
    ['leases/rc01/20261102t000000z-20261103t000000z', (s) => acquireLeases(s, ['RC01'], windowForRange(WINDOW), 'run-x')],
    ['breaks', (s) => new BreakStore(s).readAll()],
  ];
  for (const [folder, use] of cases) {
    it(`${folder}`, async () => {
      const root = newStore();
      mkdirSync(join(root, folder, '..'), { recursive: true });
      writeFileSync(join(root, folder), 'not a folder');
      const err = await use(new LocalObjectStore(root)).then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(StoreError);
      expect((err as StoreError).reason).toBe('list_failed');
      expect((err as StoreError).message).toContain(`the store folder ${join(root, folder)} is not a folder (ENOTDIR)`);
    });
  }
});

describe('one corrupt break event file', () => {
  it('breaks list names the object and lists the other breaks (exit 0); evidence pack refuses (exit 1); no stack trace, never 70', async () => {
    const sources = join(tmp.dir, 'sources-breaks');
    const day = validDay(3);
    day.venue_fills.rows.splice(0, 2); // two FILL_MISSING_VENUE breaks (RC02), among others
    writeDay(sources, day);
    const store = newStore();
    const run = await reckonHere(['run', '--window', WINDOW, '--sources', sources, '--store', store, '--json']);
    expect(run.code).toBe(1);
    const listed = await reckonHere(['breaks', 'list', '--store', store, '--json']);
    const ids: string[] = listed.json.map((b: { break_id: string }) => b.break_id).sort();
    expect(ids.length).toBeGreaterThanOrEqual(2);
    const broken = ids[0];
    writeFileSync(join(store, 'breaks', broken, 'events', '000001.json'), '{"break_id": "trunc');

    const list = await reckonHere(['breaks', 'list', '--store', store, '--json']);
    expect(list.code).toBe(0);
    expect(list.stderr).toContain(`reckon: break ${broken} is left out of the list: break store object breaks/${broken}/events/000001.json: is not JSON (19 bytes)`);
    expect(list.json.map((b: { break_id: string }) => b.break_id).sort()).toEqual(ids.slice(1));

    const pack = await reckonHere(['evidence', 'pack', '--run', run.json.run_id, '--store', store, '--out', join(tmp.dir, `bag-corrupt-${n}`)]);
    expect(pack.code).toBe(1);
    expect(pack.stderr).toContain(`reckon: EvidenceIntegrityError: the break store is inconsistent: break store object breaks/${broken}/events/000001.json: is not JSON (19 bytes)`);
    for (const r of [list, pack]) expect(r.stderr).not.toMatch(/\n\s+at |SyntaxError/);
    expect(existsSync(join(tmp.dir, `bag-corrupt-${n}`))).toBe(false);
  });
});
