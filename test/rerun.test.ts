/**
 * Reruns (CONTRACT §5, §6): the same window run twice on one store over the bundled sample day
 * (the second time as an incident rerun naming the first) gives the same results digest and the same break ids; the second run re-observes every break
 * (REOBSERVED) instead of opening a second one, and the break store holds each break once.
 * Break ids are deterministic (pipeline/breaks/break-id.ts): SHA-256 of control, kind and key.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { breakId } from '../pipeline/breaks/break-id.js';
import { ROOT, reckon, scratchDir, type CliResult, reckonHere } from './helpers/cli.js';

const SOURCES = join(ROOT, 'fixtures', 'sample-day', 'sources');

interface Diff { control: string; kind: string; key: string; break_id: string; disposition: string }

function diffs(r: CliResult): Diff[] {
  return r.json.controls.flatMap((c: any) => c.differences.map((d: any) => ({ control: c.control_id, kind: d.kind, key: d.key, break_id: d.break_id, disposition: d.disposition })));
}

describe('the same window twice on one store', () => {
  const tmp = scratchDir('reckon-rerun-');
  const store = join(tmp.dir, 'store');
  let first: CliResult;
  let second: CliResult;

  beforeAll(async () => {
    first = await reckonHere(['run', '--date', '2026-11-02', '--sources', SOURCES, '--store', store, '--json', '--quiet']);
    second = await reckonHere(['run', '--date', '2026-11-02', '--sources', SOURCES, '--store', store, '--json', '--quiet',
      '--trigger', 'incident', '--rerun-of', first.json?.run_id ?? 'missing', '--reason', 'rerun test']);
  });
  afterAll(() => tmp.cleanup());

  it('both runs finish with breaks (exit 1) under different run ids and manifests', () => {
    expect(first.code, first.stderr).toBe(1);
    expect(second.code, second.stderr).toBe(1);
    expect(second.json.run_id).not.toBe(first.json.run_id);
    expect(second.json.manifest.sha256).not.toBe(first.json.manifest.sha256);
  });

  it('gives the same results digest', () => {
    expect(first.json.results_digest).toMatch(/^[0-9a-f]{64}$/);
    expect(second.json.results_digest).toBe(first.json.results_digest);
  });

  it('gives the same break ids, each the deterministic id of (control, kind, key)', () => {
    const a = diffs(first);
    const b = diffs(second);
    expect(a.length).toBeGreaterThan(0);
    expect(b.map((d) => `${d.control} ${d.kind} ${d.key} ${d.break_id}`)).toEqual(a.map((d) => `${d.control} ${d.kind} ${d.key} ${d.break_id}`));
    for (const d of a) expect(d.break_id).toBe(breakId(d.control, d.kind, d.key));
  });

  it('opens every break on the first run and re-observes it on the second', () => {
    expect(new Set(diffs(first).map((d) => d.disposition))).toEqual(new Set(['OPENED']));
    expect(new Set(diffs(second).map((d) => d.disposition))).toEqual(new Set(['REOBSERVED']));
  });

  it('lists no break twice, in a run or in the store', async () => {
    for (const r of [first, second]) {
      const ids = diffs(r).map((d) => d.break_id);
      expect(new Set(ids).size).toBe(ids.length);
    }
    const list = await reckonHere(['breaks', 'list', '--store', store, '--json']);
    expect(list.code, list.stderr).toBe(0);
    const rows: any[] = Array.isArray(list.json) ? list.json : list.json.breaks;
    const ids = rows.map((b) => b.break_id);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(diffs(first).map((d) => d.break_id).sort());
  });
});
