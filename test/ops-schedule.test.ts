/**
 * Issue 7: `reckon schedule` on a simulated clock over three days runs each window once, runs a
 * NOT_READY window again on the next call, and catches it up once its watermark arrives.
 */
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, reckonAsync, reckonHere, scratchDir } from './helpers/cli.js';
import { writeCleanDay } from './fixtures/days.js';

const tmp = scratchDir('reckon-schedule-');
afterAll(() => tmp.cleanup());

describe('schedule --plan nightly on a simulated clock', () => {
  it('runs each due window once and catches up a NOT_READY window', async () => {
    const sources = join(tmp.dir, 'sources');
    const store = join(tmp.dir, 'store');
    await writeCleanDay(sources);
    const wm = (ts: string) => writeFileSync(join(sources, 'executions', '_watermark.json'), JSON.stringify({ watermark: ts, complete: true }));
    const schedule = async (now: string) => {
      const r = await reckonHere(['schedule', '--plan', 'nightly', '--now', now, '--lookback', '3d', '--sources', sources, '--store', store, '--control', 'RC01,RC06', '--json', '--quiet']);
      expect(r.json, r.stderr).toBeDefined();
      return r;
    };
    const actions = (r: Awaited<ReturnType<typeof schedule>>) => r.json.windows.map((w: { start: string; action: string; status: string | null }) => [w.start.slice(0, 10), w.action, w.status]);

    wm('2026-11-02T23:00:00Z'); // executions stop an hour short of 2026-11-03
    const day1 = await schedule('2026-11-03T00:10:00Z');
    expect(actions(day1)).toEqual([['2026-10-31', 'ran', 'CLEAN'], ['2026-11-01', 'ran', 'CLEAN'], ['2026-11-02', 'ran', 'NOT_READY']]);
    expect(day1.code).toBe(4);

    const again = await schedule('2026-11-03T00:20:00Z');
    expect(actions(again)).toEqual([['2026-10-31', 'complete', null], ['2026-11-01', 'complete', null], ['2026-11-02', 'ran', 'NOT_READY']]);

    // The extracts catch up: every dataset's watermark moves past the next days.
    for (const d of readdirSync(sources)) writeFileSync(join(sources, d, '_watermark.json'), JSON.stringify({ watermark: '2026-11-06T00:05:00Z', complete: true }));
    const day2 = await schedule('2026-11-04T00:10:00Z');
    expect(actions(day2)).toEqual([['2026-11-01', 'complete', null], ['2026-11-02', 'ran', 'CLEAN'], ['2026-11-03', 'ran', 'CLEAN']]);
    const day3 = await schedule('2026-11-05T00:10:00Z');
    expect(actions(day3)).toEqual([['2026-11-02', 'complete', null], ['2026-11-03', 'complete', null], ['2026-11-04', 'ran', 'CLEAN']]);
    const day3again = await schedule('2026-11-05T06:00:00Z');
    expect(actions(day3again)).toEqual([['2026-11-02', 'complete', null], ['2026-11-03', 'complete', null], ['2026-11-04', 'complete', null]]);
    expect(day3again.code).toBe(0);
  });
});

describe('schedule --plan nightly on a new store, with the default lookback', () => {
  it('runs only the latest due window the first time, saying so; later calls catch up as usual', async () => {
    const sources = join(tmp.dir, 'first-sources');
    const store = join(tmp.dir, 'first-store');
    await writeCleanDay(sources);
    const schedule = (now: string, ...extra: string[]) => reckonHere(['schedule', '--plan', 'nightly', '--now', now, '--sources', sources, '--store', store, '--control', 'RC01,RC06', '--quiet', ...extra]);
    // The cron fires before the extract is complete: the first window is NOT_READY.
    writeFileSync(join(sources, 'executions', '_watermark.json'), JSON.stringify({ watermark: '2026-11-02T23:00:00Z', complete: true }));
    const first = await schedule('2026-11-03T00:10:00Z');
    expect(first.stdout.split('\n')[0]).toMatch(/^\[2026-11-02T00:00:00Z, 2026-11-03T00:00:00Z\) {2}ran {7}run-\S+ NOT_READY$/);
    expect(first.stdout.split('\n').filter((l) => l.startsWith('['))).toHaveLength(1);
    // The cron log says what the window waits for, as reckon run's summary does.
    expect(first.stdout.split('\n')[1]).toBe('    not ready: RC01: executions watermark 2026-11-02T23:00:00Z (declared) is before the window end 2026-11-03T00:00:00Z');
    expect(first.stdout.split('\n')[2]).toBe(`    next: once the watermarks reach 2026-11-03T00:00:00Z: reckon run --window 2026-11-02T00:00:00Z/2026-11-03T00:00:00Z --control RC01 --sources ${sources} --store ${store} (a schedule runs it again by itself)`);
    expect(first.stderr).toContain(`first scheduled run of ${sources} on this store: only the latest due window [2026-11-02T00:00:00Z, 2026-11-03T00:00:00Z) runs, not the 2 earlier one(s) of the default lookback; give --lookback to catch those up`);
    // The extract arrives: the next call runs that window again, and still none before it.
    writeFileSync(join(sources, 'executions', '_watermark.json'), JSON.stringify({ watermark: '2026-11-03T00:05:00Z', complete: true }));
    const again = await schedule('2026-11-03T00:40:00Z', '--json');
    expect(again.json.windows.map((w: { start: string; action: string; status: string | null }) => [w.start.slice(0, 10), w.action, w.status])).toEqual([['2026-11-02', 'ran', 'CLEAN']]);
    expect(again.stderr).toContain(`2 due window(s) before 2026-11-02T00:00:00Z, where the schedule of ${sources} began on this store, are not run; give --lookback to catch those up`);
    // Two nights later, a missed night is caught up within the default 3 days.
    for (const d of readdirSync(sources)) writeFileSync(join(sources, d, '_watermark.json'), JSON.stringify({ watermark: '2026-11-06T00:05:00Z', complete: true }));
    const later = await schedule('2026-11-05T00:10:00Z', '--json');
    expect(later.json.windows.map((w: { start: string; action: string }) => [w.start.slice(0, 10), w.action])).toEqual([['2026-11-02', 'complete'], ['2026-11-03', 'ran'], ['2026-11-04', 'ran']]);
    expect(later.stderr).not.toContain('first scheduled run');
    expect(later.stderr).not.toContain('are not run');
  });
});

describe('schedule on a signed store', () => {
  it('signs each run\'s manifest as reckon run does; without the pipeline key it is refused up front, a dry run too', async () => {
    const sources = join(tmp.dir, 'signed-sources');
    const store = join(tmp.dir, 'signed-store');
    await writeCleanDay(sources);
    const config = join(ROOT, 'fixtures', 'demo', 'reckon.yaml');
    const schedule = (...extra: string[]) => reckonHere(['schedule', '--plan', 'nightly', '--now', '2026-11-03T00:10:00Z', '--sources', sources, '--store', store, '--control', 'RC01,RC06', '--quiet', ...extra]);
    const signed = await schedule('--config', config, '--json');
    expect(signed.json.windows.map((w: { action: string }) => w.action)).toEqual(['ran']);
    const verify = await reckonHere(['manifest', 'verify', '--store', store, '--config', config, '--json']);
    expect([verify.code, verify.json.signed, verify.json.unsigned]).toEqual([0, 1, 0]);
    for (const extra of [[], ['--dry-run']]) {
      const refused = await schedule('--now', '2026-11-04T00:10:00Z', ...extra);
      expect(refused.code, refused.stderr).toBe(2);
      expect(refused.stderr).toContain('is signed (its chain head');
    }
  });
});

describe('schedule over a run killed after its manifest', () => {
  it('does not count that window complete: the next call runs it again, which rolls the killed run forward first', async () => {
    const sources = join(tmp.dir, 'killed-sources');
    const store = join(tmp.dir, 'killed-store');
    await writeCleanDay(sources);
    const args = ['schedule', '--plan', 'nightly', '--now', '2026-11-03T00:10:00Z', '--sources', sources, '--store', store, '--control', 'RC01,RC06', '--quiet'];
    const child = reckonAsync(args, { env: { RECKON_FAULT_PAUSE: 'published' } });
    await new Promise<void>((resolve) => { let err = ''; child.stderr!.on('data', (b: Buffer) => { err += b.toString(); if (err.includes('paused at published')) resolve(); }); });
    child.kill('SIGKILL');
    await new Promise((r) => child.on('exit', r));
    const again = await reckonHere([...args, '--json']);
    expect(again.json.windows.map((w: { action: string }) => w.action), again.stderr).toEqual(['ran']);
    expect(again.stderr).toMatch(/rolled forward run run-/);
    const third = await reckonHere([...args, '--json']);
    expect(third.json.windows.map((w: { action: string }) => w.action)).toEqual(['complete']);
  });
});

describe('schedule stopped by a signal', () => {
  it('stops in the window being run (exit 130, nothing of it published, no later window run, leases released); the next schedule runs them all', async () => {
    const sources = join(tmp.dir, 'signal-sources');
    const store = join(tmp.dir, 'signal-store');
    await writeCleanDay(sources);
    for (const d of readdirSync(sources)) writeFileSync(join(sources, d, '_watermark.json'), JSON.stringify({ watermark: '2026-11-06T00:05:00Z', complete: true }));
    const args = ['schedule', '--plan', 'nightly', '--now', '2026-11-03T00:10:00Z', '--lookback', '3d', '--sources', sources, '--store', store, '--control', 'RC01,RC06', '--quiet'];
    // The first window's run pauses before its load until the signal.
    const child = reckonAsync(args, { env: { RECKON_FAULT_PAUSE: 'loading' } });
    let stderr = '';
    const paused = new Promise<void>((resolve) => child.stderr!.on('data', (b) => { stderr += String(b); if (stderr.includes('reckon-fault: paused at loading')) resolve(); }));
    const exited = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? -1)));
    await paused;
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(stderr.trimEnd().split('\n').pop()).toBe('reckon: interrupted by SIGINT: nothing published; the leases are released; run again (the schedule stopped in [2026-10-31T00:00:00Z, 2026-11-01T00:00:00Z) after 0 earlier window(s) ran; no later window was run)');
    expect(existsSync(join(store, 'manifests')) ? readdirSync(join(store, 'manifests')) : []).toEqual([]);
    const leases = readdirSync(join(store, 'leases'), { recursive: true }).map(String).filter((f) => /\.(json|released)$/.test(f)).sort();
    expect(leases).toEqual(['rc01', 'rc06'].flatMap((c) => [`${c}/20261031t000000z-20261101t000000z/0000000001.json`, `${c}/20261031t000000z-20261101t000000z/0000000001.released`]));
    const again = await reckonHere([...args, '--json']);
    expect(again.json.windows.map((w: { start: string; action: string; status: string | null }) => [w.start.slice(0, 10), w.action, w.status]))
      .toEqual([['2026-10-31', 'ran', 'CLEAN'], ['2026-11-01', 'ran', 'CLEAN'], ['2026-11-02', 'ran', 'CLEAN']]);
  });
});
