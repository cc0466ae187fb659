/**
 * The public contract cases of ../shared/conformance (cases/ and hostile/), run the way the
 * shared runner runs them: `reckon run --all --window START/END --sources CASE/sources --json`
 * into a fresh store, then the exit code, every control's status and, where the case lists them,
 * the exact set of `(kind, key)` differences with no duplicates. Part of the shared suite
 * (`npm run test:shared`), skipped when ../shared is not beside the repository.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { reckon, scratchDir } from '../helpers/cli.js';
import { describeShared, HAS_SHARED, SHARED } from './shared.js';

interface CaseExpectation {
  readonly window: { readonly start: string; readonly end: string };
  readonly exit_code: number;
  readonly note?: string;
  readonly controls: Readonly<Record<string, { readonly status: string; readonly differences: readonly (readonly [string, string])[] | null }>>;
}

/** Every case folder (holding expected.json) under `dir`, by name. */
function cases(dir: string): string[] {
  if (!HAS_SHARED || !existsSync(dir)) return [];
  return readdirSync(dir).filter((n) => existsSync(join(dir, n, 'expected.json'))).sort();
}

const tmp = scratchDir('reckon-conformance-');
afterAll(() => tmp.cleanup());

for (const [suite, dir] of [['cases', join(SHARED, 'conformance', 'cases')], ['hostile', join(SHARED, 'conformance', 'hostile')]] as const) {
  describeShared(`conformance ${suite}`, () => {
    it.each(cases(dir))('%s', (name) => {
      const exp = JSON.parse(readFileSync(join(dir, name, 'expected.json'), 'utf8')) as CaseExpectation;
      const window = `${exp.window.start}/${exp.window.end}`;
      const r = reckon(['run', '--all', '--window', window, '--sources', join(dir, name, 'sources'), '--store', join(tmp.dir, suite, name), '--json', '--quiet']);
      expect(r.json, r.stderr).toBeDefined();
      expect(r.code, exp.note).toBe(exp.exit_code);
      const got = new Map<string, { status: string; differences: { kind: string; key: string }[] }>(r.json.controls.map((c: { control_id: string }) => [c.control_id, c]));
      for (const [id, want] of Object.entries(exp.controls)) {
        const c = got.get(id);
        expect(c?.status, `${name} ${id}`).toBe(want.status);
        if (want.differences === null) continue;
        const listed = c!.differences.map((d) => `${d.kind} ${d.key}`);
        expect(new Set(listed).size, `${name} ${id}: a difference listed twice`).toBe(listed.length);
        expect([...listed].sort(), `${name} ${id}`).toEqual(want.differences.map(([k, v]) => `${k} ${v}`).sort());
      }
    });
  });
}
