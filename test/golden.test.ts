/**
 * Golden test of the bundled sample day (fixtures/sample-day): the real CLI runs every control on
 * the committed sources in a fresh store, and the result must equal the reviewed expectation
 * `fixtures/sample-day/expected.json`: exit code, every control's status, the exact set of
 * [kind, key] differences (no duplicates) and the selected control totals, exact strings.
 * Volatile fields (run id, timings, manifest digest) are not compared.
 *
 * It also checks that the reviewed file and the generator's own expectation agree, and that the
 * committed sources are exactly what `npm run fixtures` produces (so nobody hand-edits them).
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadControls } from '../pipeline/controls/definitions.js';
import { generateDay } from '../pipeline/generate/day.js';
import { CONTRACT_KINDS } from '../fixtures/contract-kinds.js';
import { SAMPLE_DAY } from '../fixtures/sample-day-options.js';
import { ROOT, reckon, scratchDir, type CliResult } from './helpers/cli.js';

type Totals = Record<string, string | Record<string, string>>;
interface GoldenControl { status: string; differences: [string, string][]; totals: Totals }
interface Golden { date: string; exit_code: number; window: { start: string; end: string }; controls: Record<string, GoldenControl> }

const DAY = join(ROOT, 'fixtures', 'sample-day');
const golden = JSON.parse(readFileSync(join(DAY, 'expected.json'), 'utf8')) as Golden;
const generated = JSON.parse(readFileSync(join(DAY, 'generator-expectation.json'), 'utf8')) as Golden & { faults: { differences: string[][] }[] };

function files(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const n of readdirSync(d).sort()) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) walk(p);
      else out.push(relative(dir, p));
    }
  };
  walk(dir);
  return out;
}

describe('bundled sample day (golden)', () => {
  const tmp = scratchDir('reckon-golden-');
  let run: CliResult;
  let byControl: Map<string, any>;

  beforeAll(() => {
    run = reckon(['run', '--date', golden.date, '--sources', join(DAY, 'sources'), '--store', join(tmp.dir, 'store'), '--json', '--quiet']);
    byControl = new Map((run.json?.controls ?? []).map((c: any) => [c.control_id, c]));
  });
  afterAll(() => tmp.cleanup());

  it('exits 1 (breaks open) with the window of the day', () => {
    expect(run.json, run.stderr).toBeDefined();
    expect(run.code).toBe(golden.exit_code);
    expect(run.json.window).toEqual(golden.window);
    expect([...byControl.keys()].sort()).toEqual(Object.keys(golden.controls).sort());
  });

  for (const [id, exp] of Object.entries(golden.controls)) {
    it(`${id}: status ${exp.status} and exactly the reviewed differences`, () => {
      const c = byControl.get(id);
      expect(c.status).toBe(exp.status);
      const got = c.differences.map((d: any) => [d.kind, d.key] as [string, string]);
      const keys = got.map(([k, v]: [string, string]) => `${k} ${v}`);
      expect(new Set(keys).size, 'a difference is listed twice').toBe(keys.length);
      expect([...keys].sort()).toEqual(exp.differences.map(([k, v]) => `${k} ${v}`).sort());
      for (const d of c.differences) expect(d.disposition).toBe('OPENED');
    });

    it(`${id}: selected control totals are the exact reviewed strings`, () => {
      const totals = byControl.get(id).totals as Totals;
      for (const [name, value] of Object.entries(exp.totals)) {
        if (typeof value === 'string') expect(totals[name], name).toBe(value);
        else for (const [dim, v] of Object.entries(value)) expect((totals[name] as Record<string, string>)?.[dim], `${name} ${dim}`).toBe(v);
      }
    });
  }

  it('every difference kind of CONTRACT §4 appears at least once', () => {
    for (const [id, kinds] of Object.entries(CONTRACT_KINDS)) {
      const seen = new Set(golden.controls[id].differences.map(([k]) => k));
      expect([...seen].sort(), id).toEqual([...kinds].sort());
    }
  });

  it('the reviewed expectation agrees with the generator\'s own model', () => {
    for (const [id, exp] of Object.entries(golden.controls)) {
      const gen = generated.controls[id];
      expect(gen.status, id).toBe(exp.status);
      expect(gen.differences, id).toEqual(exp.differences);
      for (const [name, value] of Object.entries(gen.totals)) expect(exp.totals[name], `${id} ${name}`).toEqual(value);
    }
  });

  it('the committed sources are byte for byte what the generator script writes', async () => {
    const out = join(tmp.dir, 'regenerated');
    await generateDay({ ...SAMPLE_DAY, out }, await loadControls());
    const committed = files(join(DAY, 'sources'));
    const fresh = files(out).filter((f) => f !== '_expected.json');
    expect(fresh).toEqual(committed);
    for (const f of committed) expect(readFileSync(join(out, f)).equals(readFileSync(join(DAY, 'sources', f))), f).toBe(true);
    expect(JSON.parse(readFileSync(join(out, '_expected.json'), 'utf8'))).toEqual(generated);
  });
});
