/**
 * Issue 7: `reckon schedule` on a simulated clock over three days runs each window once, runs a
 * NOT_READY window again on the next call, and catches it up once its watermark arrives.
 */
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { reckonHere, scratchDir } from './helpers/cli.js';
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
