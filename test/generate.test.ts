/**
 * `reckon generate` (the real CLI): the same seed gives byte-identical files; a generated day
 * runs and the product's statuses, differences and totals equal the generator's independent
 * expectation (`_expected.json`), with every difference kind of CONTRACT §4 present; a day made
 * with `--clean` reconciles CLEAN on every control; Parquet output uses exact column types and
 * splits into parts; bad options exit 2. The controls an expectation covers are the loaded
 * definitions (in process).
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CONTRACT_KINDS } from '../fixtures/contract-kinds.js';
import { loadControls } from '../pipeline/controls/definitions.js';
import { generateDay } from '../pipeline/generate/day.js';
import { ROOT, reckon, scratchDir, reckonHere } from './helpers/cli.js';
import { withDuck } from './helpers/duckdb.js';

const tmp = scratchDir('reckon-generate-');
afterAll(() => tmp.cleanup());

function tree(dir: string): string[] {
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

async function generate(out: string, ...extra: string[]) {
  const r = await reckonHere(['generate', '--orders', '200', '--seed', '7', '--date', '2026-11-02', '--out', out, ...extra]);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(readFileSync(join(out, '_expected.json'), 'utf8'));
}

/** Runs the day and compares it with the generator's expectation. */
async function runAndCompare(sources: string, store: string) {
  const exp = JSON.parse(readFileSync(join(sources, '_expected.json'), 'utf8'));
  const run = await reckonHere(['run', '--date', '2026-11-02', '--sources', sources, '--store', store, '--json', '--quiet']);
  expect(run.json, run.stderr).toBeDefined();
  expect(run.json.quarantine_count).toBe(0);
  expect(run.code).toBe(exp.exit_code);
  for (const c of run.json.controls) {
    const e = exp.controls[c.control_id];
    expect(c.status, c.control_id).toBe(e.status);
    const got = c.differences.map((d: any) => `${d.kind} ${d.key}`);
    expect(new Set(got).size).toBe(got.length);
    expect([...got].sort(), c.control_id).toEqual(e.differences.map(([k, v]: string[]) => `${k} ${v}`).sort());
    for (const [name, value] of Object.entries(e.totals)) {
      if (typeof value === 'string') expect(c.totals[name], `${c.control_id} ${name}`).toBe(value);
      else expect(c.totals[name], `${c.control_id} ${name}`).toEqual(value);
    }
  }
  return { run, exp };
}

describe('reckon generate', () => {
  const a = join(tmp.dir, 'a');
  const b = join(tmp.dir, 'b');

  it('the same seed twice gives byte-identical files (CSV)', async () => {
    await generate(a);
    await generate(b);
    const files = tree(a);
    expect(files.length).toBeGreaterThan(30);
    expect(tree(b)).toEqual(files);
    for (const f of files) expect(readFileSync(join(a, f)).equals(readFileSync(join(b, f))), f).toBe(true);
  });

  it('another seed gives another day', async () => {
    const c = join(tmp.dir, 'c');
    const r = await reckonHere(['generate', '--orders', '200', '--seed', '8', '--date', '2026-11-02', '--out', c]);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(c, 'orders', 'part-00001.csv')).equals(readFileSync(join(a, 'orders', 'part-00001.csv')))).toBe(false);
  });

  it('the generated day runs, matches its expectation, and every difference kind appears', async () => {
    const { exp } = await runAndCompare(a, join(tmp.dir, 'store-a'));
    for (const [id, kinds] of Object.entries(CONTRACT_KINDS)) {
      const seen = new Set(exp.controls[id].differences.map(([k]: string[]) => k));
      expect([...seen].sort(), id).toEqual([...kinds].sort());
    }
  });

  it('Parquet: byte-identical for one seed, exact column types, split into parts, same results', async () => {
    const p1 = join(tmp.dir, 'p1');
    const p2 = join(tmp.dir, 'p2');
    await generate(p1, '--format', 'parquet', '--rows-per-file', '300');
    await generate(p2, '--format', 'parquet', '--rows-per-file', '300');
    const files = tree(p1);
    expect(files).toContain('orders/part-00002.parquet');
    expect(files.some((f) => f.endsWith('.csv'))).toBe(false);
    for (const f of files) expect(readFileSync(join(p1, f)).equals(readFileSync(join(p2, f))), f).toBe(true);
    await withDuck(async (conn) => {
      const types = async (ds: string) => Object.fromEntries(
        (await conn.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${join(p1, ds, 'part-00001.parquet')}')`)).getRowObjectsJson().map((r: any) => [r.column_name, r.column_type]),
      );
      const ex = await types('executions');
      expect([ex.executed_at, ex.fill_qty, ex.price, ex.execution_seq]).toEqual(['TIMESTAMP WITH TIME ZONE', 'DECIMAL(38,18)', 'DECIMAL(38,18)', 'BIGINT']);
      const lp = await types('ledger_postings');
      expect(lp.amount_minor).toBe('DECIMAL(38,0)');
      const vf = await types('venue_fills');
      expect(vf.venue_time_local).toBe('VARCHAR');
      const bs = await types('bank_statements');
      expect([bs.business_date, bs.complete]).toEqual(['DATE', 'BOOLEAN']);
    });
    await runAndCompare(p1, join(tmp.dir, 'store-p'));
  });

  it('--clean gives a day that reconciles CLEAN on every control (exit 0)', async () => {
    const c = join(tmp.dir, 'clean');
    const r = await reckonHere(['generate', '--orders', '150', '--seed', '3', '--date', '2026-11-02', '--out', c, '--clean']);
    expect(r.code, r.stderr).toBe(0);
    const { run } = await runAndCompare(c, join(tmp.dir, 'store-clean'));
    expect(run.code).toBe(0);
    expect(run.json.controls.map((x: any) => x.status)).toEqual(['CLEAN', 'CLEAN', 'CLEAN', 'CLEAN', 'CLEAN', 'CLEAN']);
  });

  it('refuses bad options with exit 2', async () => {
    const args = (out: string) => ['generate', '--date', '2026-11-02', '--out', join(tmp.dir, out)];
    expect((await reckonHere([...args('x1'), '--orders', '50'])).code).toBe(2); // too small for every fault
    expect((await reckonHere([...args('x2'), '--orders', '0', '--clean'])).code).toBe(2);
    expect((await reckonHere(['generate', '--orders', '200', '--date', '2026-02-30', '--out', join(tmp.dir, 'x3')])).code).toBe(2);
    expect((await reckonHere([...args('x4'), '--orders', '200', '--format', 'xlsx'])).code).toBe(2);
    expect((await reckonHere(['generate', '--orders', '200', '--date', '2026-11-02', '--out', a])).code).toBe(2); // holds a day already
  });
});

describe('the controls an expectation covers come from the definitions', () => {
  const day = (name: string) => ({ orders: 100, date: '2026-11-02', seed: '5', format: 'csv' as const, out: join(tmp.dir, name) });

  it('a defined control the generator does not model is named in not_modelled; an undefined one is left out', async () => {
    const real = await loadControls();
    const [rc90] = await loadControls({ controlsDir: join(ROOT, 'test/fixtures/controls-extra/controls'), sqlDir: join(ROOT, 'test/fixtures/controls-extra/sql') });
    const withExtra = await generateDay(day('defs-extra'), [...real, rc90]);
    expect(Object.keys(withExtra.controls)).toEqual(['RC01', 'RC02', 'RC03', 'RC04', 'RC05', 'RC06']);
    expect(withExtra.not_modelled).toEqual(['RC90']);
    const withoutRc06 = await generateDay(day('defs-no-rc06'), real.filter((c) => c.control_id !== 'RC06'));
    expect(Object.keys(withoutRc06.controls)).toEqual(['RC01', 'RC02', 'RC03', 'RC04', 'RC05']);
    expect(withoutRc06.not_modelled).toBeUndefined();
    expect(JSON.parse(readFileSync(join(tmp.dir, 'defs-no-rc06', '_expected.json'), 'utf8')).controls.RC06).toBeUndefined();
  });

  it('a kind the generator injects that a definition does not list is the generator\'s bug (InternalError)', async () => {
    const real = await loadControls();
    const narrowed = real.map((c) => (c.control_id === 'RC03' ? { ...c, difference_kinds: c.difference_kinds.filter((k) => k !== 'POSTING_AMOUNT_MISMATCH') } : c));
    await expect(generateDay(day('defs-narrow'), narrowed)).rejects.toThrow(/^generator fault rc03_amount_mismatch expects RC03 POSTING_AMOUNT_MISMATCH, a kind the definition of RC03 does not list$/);
  });
});
