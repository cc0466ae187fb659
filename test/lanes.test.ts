/**
 * core/lanes.ts: items spread over lanes come back in the items' order whatever order they finish
 * in, a lane does one item at a time, and a failure stops new items and throws the error of the
 * first failed item. Timing is steered by promises the test resolves, not by timers. And which
 * runs get two lanes for their controls (run/control-lanes.ts usesLanes).
 */
import { describe, expect, it } from 'vitest';
import { mapOnLanes } from '../pipeline/core/lanes.js';
import { LANES_BELOW_BYTES, usesLanes } from '../pipeline/run/control-lanes.js';
import type { Engine } from '../pipeline/load/engine.js';

/** A promise and the function that resolves it. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((r) => { open = r; });
  return { promise, open };
}

const tick = () => new Promise<void>((r) => setImmediate(r));

describe('mapOnLanes', () => {
  it('returns results in item order when later items finish first', async () => {
    const gates = [gate(), gate(), gate(), gate(), gate()];
    const log: string[] = [];
    const done = mapOnLanes(['a', 'b', 'c', 'd', 'e'], ['L1', 'L2'], async (item, lane, i) => {
      log.push(`start ${item} on ${lane}`);
      await gates[i].promise;
      log.push(`end ${item}`);
      return `${item}:${i}`;
    });
    await tick();
    expect(log).toEqual(['start a on L1', 'start b on L2']);
    gates[1].open(); await tick();
    expect(log).toEqual(['start a on L1', 'start b on L2', 'end b', 'start c on L2']);
    gates[2].open(); await tick();
    gates[3].open(); await tick();
    gates[4].open(); await tick();
    gates[0].open();
    expect(await done).toEqual(['a:0', 'b:1', 'c:2', 'd:3', 'e:4']);
    expect(log).toEqual([
      'start a on L1', 'start b on L2', 'end b', 'start c on L2', 'end c', 'start d on L2', 'end d', 'start e on L2', 'end e', 'end a',
    ]);
  });

  it('never runs two items on one lane at a time', async () => {
    const busy = new Set<string>();
    let overlaps = 0;
    const out = await mapOnLanes([...Array(20).keys()], ['x', 'y', 'z'], async (n, lane) => {
      if (busy.has(lane)) overlaps += 1;
      busy.add(lane);
      for (let k = 0; k < n % 4; k++) await tick();
      busy.delete(lane);
      return n * 2;
    });
    expect(overlaps).toBe(0);
    expect(out).toEqual([0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34, 36, 38]);
  });

  it('one lane runs the items one after another, in order', async () => {
    const seen: number[] = [];
    expect(await mapOnLanes([3, 1, 2], ['only'], async (n) => { seen.push(n); await tick(); return n + 1; })).toEqual([4, 2, 3]);
    expect(seen).toEqual([3, 1, 2]);
  });

  it('after a failure starts no new item and throws the first failed item\'s error', async () => {
    const gates = [gate(), gate(), gate(), gate()];
    const started: number[] = [];
    const done = mapOnLanes([0, 1, 2, 3], ['L1', 'L2'], async (n) => {
      started.push(n);
      await gates[n].promise;
      if (n <= 1) throw new Error(`item ${n} failed`);
      return n;
    });
    await tick();
    gates[1].open(); await tick(); // item 1 fails first in time
    gates[0].open(); // item 0, earlier in order, fails after it
    await expect(done).rejects.toThrow('item 0 failed');
    expect(started).toEqual([0, 1]);
  });

  it('an empty item list gives an empty result; no lane is a RangeError', async () => {
    expect(await mapOnLanes([], ['L1', 'L2'], async () => 1)).toEqual([]);
    await expect(mapOnLanes([1], [], async () => 1)).rejects.toThrow(RangeError);
  });
});

describe('usesLanes (run/control-lanes.ts)', () => {
  const engine = (threads: number, storage: 'memory' | 'file', estimated_bytes: number) => ({ threads, storage, estimated_bytes }) as Engine;
  it('two lanes for a small day, and for a day in memory below 1 GiB estimated; one for a large day or a database file', () => {
    expect(LANES_BELOW_BYTES).toBe(1024 ** 3);
    expect(usesLanes(engine(1, 'memory', 10e6))).toBe(true);
    expect(usesLanes(engine(1, 'file', 10e6))).toBe(true);
    expect(usesLanes(engine(2, 'memory', 259_378_860))).toBe(true);
    expect(usesLanes(engine(2, 'memory', 1024 ** 3 - 1))).toBe(true);
    expect(usesLanes(engine(2, 'memory', 1024 ** 3))).toBe(false);
    expect(usesLanes(engine(2, 'memory', 2.65e9))).toBe(false);
    expect(usesLanes(engine(2, 'file', 259_378_860))).toBe(false);
  });
});
