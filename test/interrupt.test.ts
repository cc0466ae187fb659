/**
 * SIGINT and SIGTERM end a run cleanly (core/interrupt.ts, run/run-window.ts): exit 130 / 143, one
 * line on stderr saying what was published, every lease released (a run on another host proceeds
 * at once, where a killed run's lease holds it off: exit 5), no scratch folder left, nothing
 * published; after the manifest, the next run rolls the run forward and the readers say so
 * meanwhile. A run removes the scratch folders of dead holders on its host (run/scratch.ts).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../pipeline/core/log.js';
import { thisProcess } from '../pipeline/core/process.js';
import { SCRATCH_HOLDER, sweepScratch } from '../pipeline/run/scratch.js';
import { reckonAsync, reckonHere, scratchDir } from './helpers/cli.js';
import { DAY_WINDOW as WINDOW, SAMPLE_DAY as SOURCES } from './fixtures/days.js';

const tmp = scratchDir('reckon-interrupt-');
afterAll(() => tmp.cleanup());

const NOTHING = (signal: string) => `reckon: interrupted by ${signal}: nothing published; the leases are released; run again`;

/** A run as a child process with its own TMPDIR (its scratch folders land there); resolves `ready` when stderr shows `until`. */
function startRun(name: string, opts: { pause?: string; until: string; sources?: string }) {
  const dir = join(tmp.dir, name);
  const tmpdir = join(dir, 'tmp');
  mkdirSync(tmpdir, { recursive: true });
  const store = join(dir, 'store');
  const env: NodeJS.ProcessEnv = { TMPDIR: tmpdir, ...(opts.pause ? { RECKON_FAULT_PAUSE: opts.pause } : {}) };
  const sources = opts.sources ?? SOURCES;
  const child = reckonAsync(['run', '--window', WINDOW, '--sources', sources, '--store', store], { env });
  let err = '';
  const ready = new Promise<void>((resolve, reject) => {
    child.stderr!.on('data', (b: Buffer) => { err += b.toString(); if (err.includes(opts.until)) resolve(); });
    child.on('exit', (code) => reject(new Error(`exited ${code} before '${opts.until}': ${err}`)));
  });
  ready.catch(() => undefined);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) => {
    child.on('close', (code, signal) => resolve({ code, signal, stderr: err }));
  });
  return { child, ready, exited, store, tmpdir, sources };
}

const lastLine = (text: string) => text.trimEnd().split('\n').pop();
const leaseFiles = (store: string) => readdirSync(join(store, 'leases'), { recursive: true }).map(String).filter((f) => /\.(json|released)$/.test(f)).sort();
const manifests = (store: string) => (existsSync(join(store, 'manifests')) ? readdirSync(join(store, 'manifests')).filter((f) => f.endsWith('.json')) : []);
const staging = (store: string) => (existsSync(join(store, '_staging')) ? readdirSync(join(store, '_staging')) : []);
const scratchFolders = (dir: string) => readdirSync(dir).filter((n) => n.startsWith('reckon-'));

/** Each lease grant of the store as if taken on another host: only a release marker frees it before its expiry (2 h). */
function grantsFromAnotherHost(store: string): void {
  for (const f of leaseFiles(store).filter((x) => x.endsWith('.json'))) {
    const path = join(store, 'leases', f);
    writeFileSync(path, JSON.stringify({ ...JSON.parse(readFileSync(path, 'utf8')), host: 'another-host.example' }));
  }
}

/** Every grant of the six controls with its release marker. */
const RELEASED = ['rc01', 'rc02', 'rc03', 'rc04', 'rc05', 'rc06'].flatMap((c) => [`${c}/20261102t000000z-20261103t000000z/0000000001.json`, `${c}/20261102t000000z-20261103t000000z/0000000001.released`]);

/** What every interrupted run before its manifest leaves: the one line, leases released, no scratch, nothing published or staged; another host's run proceeds. */
async function expectStoppedClean(run: ReturnType<typeof startRun>, signal: 'SIGINT' | 'SIGTERM', code: number): Promise<void> {
  const done = await run.exited;
  expect([done.code, done.signal]).toEqual([code, null]);
  expect(lastLine(done.stderr)).toBe(NOTHING(signal));
  expect(done.stderr.split('\n').filter((l) => l.startsWith('reckon:'))).toEqual([NOTHING(signal)]);
  expect(leaseFiles(run.store)).toEqual(RELEASED);
  expect(scratchFolders(run.tmpdir)).toEqual([]);
  expect(manifests(run.store)).toEqual([]);
  expect(staging(run.store)).toEqual([]);
  expect(existsSync(join(run.store, 'outputs'))).toBe(false);
  grantsFromAnotherHost(run.store);
  const next = await reckonHere(['run', '--window', WINDOW, '--sources', run.sources, '--store', run.store, '--json']);
  expect([next.code, next.json.status]).toEqual([1, 'BREAKS']);
}

describe('an interrupted run before its manifest', () => {
  it('SIGINT while loading (DuckDB open, nothing read): exit 130, the line, leases released, no scratch, nothing published', async () => {
    const run = startRun('int-loading', { pause: 'loading', until: 'paused at loading' });
    await run.ready;
    run.child.kill('SIGINT');
    await expectStoppedClean(run, 'SIGINT', 130);
  });

  it('SIGTERM in the middle of the load (the first dataset started, no pause): exit 143, the same', async () => {
    const run = startRun('term-mid-load', { until: '"progress":"start","phase":"load","dataset":"orders"' });
    await run.ready;
    run.child.kill('SIGTERM');
    await expectStoppedClean(run, 'SIGTERM', 143);
  });

  it('SIGTERM as the controls are evaluated (loaded, paused at computing): exit 143, the same', async () => {
    const run = startRun('term-computing', { pause: 'computing', until: 'paused at computing' });
    await run.ready;
    run.child.kill('SIGTERM');
    await expectStoppedClean(run, 'SIGTERM', 143);
  });

  it('against a SIGKILL: the killed run\'s lease, taken on another host, holds the next run off (exit 5); its scratch folder is left', async () => {
    const run = startRun('kill-computing', { pause: 'computing', until: 'paused at computing' });
    await run.ready;
    run.child.kill('SIGKILL');
    expect((await run.exited).signal).toBe('SIGKILL');
    expect(scratchFolders(run.tmpdir)).toHaveLength(1);
    grantsFromAnotherHost(run.store);
    const next = await reckonHere(['run', '--window', WINDOW, '--sources', SOURCES, '--store', run.store]);
    expect(next.code).toBe(5);
    expect(next.stderr).toMatch(/is being run by run-[0-9a-z-]+ \(pid [0-9]+ on another-host\.example, lease until /);
  });

  it('a second signal exits at once with its own code (130, 143), saying so', async () => {
    const run = startRun('twice', { pause: 'computing', until: 'paused at computing' });
    await run.ready;
    // Two signals at once: the process may take them in either order (its threads each catch signals).
    run.child.kill('SIGINT');
    run.child.kill('SIGTERM');
    const done = await run.exited;
    const second = /a second signal \((SIGINT|SIGTERM)\)/.exec(done.stderr)?.[1];
    expect([done.code, lastLine(done.stderr)]).toEqual([
      second === 'SIGINT' ? 130 : 143,
      `reckon: a second signal (${second}): exiting at once; the run's leases are free when its process is gone on this host, at their expiry elsewhere`,
    ]);
    expect(manifests(run.store)).toEqual([]);
  });
});

describe('an interrupted run of a 30k-order day (the load about 4 s, the controls about 1.2 s)', () => {
  const day = join(tmp.dir, 'day-30k');
  beforeAll(async () => {
    expect((await reckonHere(['generate', '--orders', '30000', '--date', '2026-11-02', '--out', day])).code).toBe(0);
  });

  it('SIGTERM while the orders load: exit 143, the same clean stop', async () => {
    const run = startRun('term-30k-load', { sources: day, until: '"progress":"start","phase":"load","dataset":"orders"' });
    await run.ready;
    run.child.kill('SIGTERM');
    await expectStoppedClean(run, 'SIGTERM', 143);
  });

  it('SIGINT as RC02 is evaluated (its statement interrupted, or stopped before the next control): exit 130, the same clean stop', async () => {
    const run = startRun('int-30k-evaluate', { sources: day, until: '"progress":"start","phase":"evaluate","control":"RC02"' });
    await run.ready;
    run.child.kill('SIGINT');
    await expectStoppedClean(run, 'SIGINT', 130);
  });
});

describe('an interrupted run after its manifest', () => {
  it('SIGINT at published: exit 130 naming the manifest; verify, breaks list and records say the roll-forward is pending; the next run rolls it forward and verifies', async () => {
    const run = startRun('int-published', { pause: 'published', until: 'paused at published' });
    await run.ready;
    run.child.kill('SIGINT');
    const done = await run.exited;
    const [key] = manifests(run.store);
    const runId = /^[0-9]{8}-(.+)\.json$/.exec(key)![1];
    expect(done.code).toBe(130);
    expect(lastLine(done.stderr)).toBe(`reckon: interrupted by SIGINT: run ${runId} published its manifest manifests/${key}; its outputs and break objects are not all written yet and the next run of this store rolls them forward (\`reckon run\` again, or any run on the store); the leases are released`);
    expect(leaseFiles(run.store)).toEqual(RELEASED);
    expect(scratchFolders(run.tmpdir)).toEqual([]);
    expect(staging(run.store)).toEqual([runId]);

    const pending = `pending roll-forward: run ${runId} published manifests/${key} but its outputs and break objects are not all written yet; the next run on this store writes them first: run again (reckon run --window ${WINDOW} --sources ${SOURCES} --store ${run.store}, adding the --config its runs use, if any)`;
    const verify = await reckonHere(['manifest', 'verify', '--store', run.store]);
    expect(verify.stdout.split('\n')[0]).toBe(pending);
    expect(verify.stdout.split('\n')[1]).toMatch(/^ok: 1 manifest\(s\) verified .*chain intact/);
    const verifyJson = await reckonHere(['manifest', 'verify', '--store', run.store, '--json']);
    expect(verifyJson.json.pending_roll_forward).toEqual([{ run_id: runId, manifest_key: `manifests/${key}`, window: { start: '2026-11-02T00:00:00Z', end: '2026-11-03T00:00:00Z' }, sources: SOURCES }]);
    const list = await reckonHere(['breaks', 'list', '--store', run.store]);
    expect([list.code, list.stdout]).toEqual([0, `${pending}\n`]);
    const manifest = JSON.parse(readFileSync(join(run.store, 'manifests', key), 'utf8'));
    const first = manifest.results.flatMap((r: { differences: { kind: string; key: string }[] }) => r.differences)[0];
    const records = await reckonHere(['records', '--run', runId, '--kind', first.kind, '--key', first.key, '--store', run.store]);
    expect(records.stdout).toContain(`; ${pending}; the `);
    expect(records.stdout).not.toContain('is gone from the store');

    grantsFromAnotherHost(run.store);
    const next = await reckonHere(['run', '--window', WINDOW, '--sources', SOURCES, '--store', run.store, '--json']);
    expect(next.code).toBe(1);
    expect(next.stderr).toContain(`rolled forward run ${runId}: its manifest was published, its outputs are now promoted`);
    expect(staging(run.store)).toEqual([]);
    const after = await reckonHere(['manifest', 'verify', '--store', run.store]);
    expect(after.code).toBe(0);
    expect(after.stdout).toMatch(/^ok: 2 manifest\(s\) verified/);
    expect((await reckonHere(['breaks', 'list', '--store', run.store])).stdout).not.toContain('pending roll-forward');
  });
});

describe('a signal after the run completed', () => {
  it('SIGINT once the run returned (alerts done, summary not yet printed): the run\'s own exit code and summary, one line saying it completed', async () => {
    const run = startRun('int-completed', { pause: 'completed', until: 'paused at completed' });
    await run.ready;
    run.child.kill('SIGINT');
    const done = await run.exited;
    const [key] = manifests(run.store);
    const runId = /^[0-9]{8}-(.+)\.json$/.exec(key)![1];
    expect([done.code, done.signal]).toEqual([1, null]);
    expect(done.stderr.split('\n').filter((l) => l.startsWith('reckon:'))).toEqual([`reckon: SIGINT arrived after run ${runId} had completed and published its manifest; the exit code is the run's own (1)`]);
    expect(leaseFiles(run.store)).toEqual(RELEASED);
    expect(staging(run.store)).toEqual([]);
    expect(scratchFolders(run.tmpdir)).toEqual([]);
    expect((await reckonHere(['manifest', 'verify', '--store', run.store])).code).toBe(0);
  });

  it('two signals 5 ms apart once the run returned: still the run\'s own exit code, never 130', async () => {
    const codes: (number | null)[] = [];
    for (let i = 0; i < 3; i++) {
      const run = startRun(`int-completed-twice-${i}`, { pause: 'completed', until: 'paused at completed' });
      await run.ready;
      run.child.kill('SIGINT');
      await new Promise((r) => setTimeout(r, 5));
      run.child.kill('SIGINT');
      const done = await run.exited;
      codes.push(done.code);
      expect(done.stderr).not.toContain('exiting at once; the run\'s leases');
      expect(manifests(run.store)).toHaveLength(1);
    }
    expect(codes).toEqual([1, 1, 1]);
  });
});

describe('the scratch sweep at run start', () => {
  it('removes the folders of dead holders on this host, keeps a live holder\'s, another host\'s and one without a holder record', async () => {
    const base = join(tmp.dir, 'sweep');
    const dead = await new Promise<number>((resolve) => { const c = spawn(process.execPath, ['-e', '']); c.on('exit', () => resolve(c.pid!)); });
    const folders: Record<string, object | null> = {
      'reckon-dead01': { pid: dead, host: hostname(), run_id: 'run-dead', started_at: '2026-12-01T00:00:00.000Z' },
      'reckon-live01': { ...thisProcess(), run_id: 'run-live', started_at: '2026-12-01T00:00:00.000Z' },
      'reckon-else01': { pid: dead, host: 'another-host.example', run_id: 'run-else', started_at: '2026-12-01T00:00:00.000Z' },
      'reckon-none01': null,
      'reckon-test-dead01': { pid: dead, host: hostname(), run_id: 'run-dead', started_at: '2026-12-01T00:00:00.000Z' },
    };
    for (const [name, holder] of Object.entries(folders)) {
      mkdirSync(join(base, name, 'duckdb'), { recursive: true });
      if (holder) writeFileSync(join(base, name, SCRATCH_HOLDER), JSON.stringify(holder));
    }
    expect(await sweepScratch(base, silentLogger)).toEqual([join(base, 'reckon-dead01')]);
    expect(readdirSync(base).sort()).toEqual(['reckon-else01', 'reckon-live01', 'reckon-none01', 'reckon-test-dead01']);
  });

  it('a run removes the scratch folder a killed run left on this host', async () => {
    const run = startRun('kill-sweep', { pause: 'computing', until: 'paused at computing' });
    await run.ready;
    run.child.kill('SIGKILL');
    await run.exited;
    const [left] = scratchFolders(run.tmpdir);
    expect(JSON.parse(readFileSync(join(run.tmpdir, left, SCRATCH_HOLDER), 'utf8'))).toMatchObject({ pid: run.child.pid, host: hostname() });
    const next = startRun('kill-sweep', { until: 'published' });
    const done = await next.exited;
    expect(done.code).toBe(1);
    expect(done.stderr).toContain(`removed the scratch folder ${join(run.tmpdir, left)} of run run-`);
    expect(scratchFolders(run.tmpdir)).toEqual([]);
  });
});
