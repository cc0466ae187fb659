/**
 * Issue 5: the loader's SQL fast path (load-fast.ts, load-sql.ts) must give exactly what the
 * JavaScript path gives. The same source folder is loaded twice into real DuckDB — with the fast
 * path and with `fast: false` — and every typed table (all columns as DuckDB prints them, in
 * `_source` order), every quarantine entry (file, row, line, column, rule, message, raw) and every
 * per-dataset and per-file count must be identical.
 *
 * The data is generated from the dataset specs with a seeded PRNG, about one value in eight
 * invalid, and written as plain CSV (the CSV fast path), as Parquet with text columns and as
 * Parquet with typed columns (DECIMAL(38,18), DECIMAL(20,4), DECIMAL(38,0), BIGINT, INTEGER, TIMESTAMPTZ
 * (UTC-adjusted), DATE, BOOLEAN). It includes bad values of every rule, DST-hour local times (gaps,
 * overlaps, a 30-minute zone, zone names in other cases and aliases), notional ties for HALF_EVEN
 * (and every other rounding mode), 18-digit fractions, 38-digit amounts, and duplicate deliveries.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig, type Config } from '../pipeline/config/config.js';
import { ROUNDING_MODES } from '../pipeline/contract/money.js';
import { DATASETS, datasetSpec, type ColumnSpec, type DatasetSpec } from '../pipeline/contract/datasets.js';
import { loadSources, type FilePath, type LoadResult } from '../pipeline/load/load.js';
import { scratchDir } from './helpers/cli.js';
import { AS_IN_A_RUN, fileDuck, openDuck, withDuck } from './helpers/duckdb.js';
import { csvLine } from './fixtures/hostile.js';

const tmp = scratchDir('reckon-fastpath-');
// As in a run (pipeline/load/engine.ts): two threads, insertion order not preserved.
const duck = fileDuck(AS_IN_A_RUN);
let counter = 0;
let config: Config;

beforeAll(async () => {
  config = defaultConfig().config;
});
afterAll(() => tmp.cleanup());

// ---------------------------------------------------------------- seeded values

/** mulberry32: a small seeded PRNG, so every run tests the same data. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Gen {
  constructor(readonly rnd: () => number) {}
  int(lo: number, hi: number): number { return lo + Math.floor(this.rnd() * (hi - lo + 1)); }
  pick<T>(xs: readonly T[]): T { return xs[Math.floor(this.rnd() * xs.length)]; }
  chance(p: number): boolean { return this.rnd() < p; }
  digits(n: number, lead = false): string {
    let s = lead ? String(this.int(1, 9)) : '';
    while (s.length < n) s += String(this.int(0, 9));
    return s;
  }
}

const p2 = (n: number) => String(n).padStart(2, '0');

/** Text values that break a rule, per kind (all of them plain-CSV safe: no comma, quote, CR, LF, NUL, non-ASCII). */
const INVALID: Record<string, readonly string[]> = {
  timestamp: ['2026-11-02T10:00:00', '2026-02-30T10:00:00Z', '2026-11-02T24:00:00Z', '2026-11-02T23:59:60Z', '2026-11-02 10:00:00Z',
    '2026-11-02t10:00:00z', '2026-11-02T10:00:00.1234567Z', '2026-11-02T10:00:00+0100', '1793394000', '2026-11-02T10:00:00+19:00',
    '0000-01-01T00:00:00Z', '9999-12-31T23:00:00-05:00', '2026-11-02T10:00:00+05:60', 'x'],
  local_timestamp: ['2026-11-02T05:01:02Z', '2026-11-31T05:01:02', '2026-11-02 05:01:02', '0000-01-01T00:00:00', '2026-11-02T05:01'],
  date: ['2026-02-30', '2026/11/02', '0000-01-01', '26-11-02', '2026-13-01'],
  int: ['9223372036854775808', '-9223372036854775809', '1.0', '1.5', ' 1', '+1', '1e3', 'x'],
  decimal: ['1e3', '1 000', '1_000', '(5)', '+5', ' 5', '5.', '.5', 'NaN', 'Infinity', '0.1234567890123456789', '123456789012345678901', '$5'],
  amount_minor: ['12.5', '12.00', '1e3', '1234567890123456789012345678901234567890', '+5', ' 5', 'x'],
  currency: ['usd', 'XAU', 'ZZZ', 'US', 'USDX'],
  id: [' ID-1', 'ID-1 ', 'ID|1', 'ID\t1', 'ID\u00011'],
  enum: ['buy', 'Buy', 'BUY ', 'x'],
  text: [],
  bool: ['TRUE', '1', 'yes', 'False'],
  timezone: ['EST', 'Mars/Olympus_Mons', '+05:00', 'America/Nowhere'],
};

const ZONES = ['America/New_York', 'Europe/London', 'Australia/Lord_Howe', 'Asia/Tokyo', 'UTC', 'america/new_york', 'US/Eastern', 'Europe/Berlin', 'Asia/Kolkata'];
/** Days around the 2026 DST changes of those zones (gaps and overlaps), and ordinary days. */
const LOCAL_DAYS = ['2026-03-08', '2026-11-01', '2026-03-29', '2026-10-25', '2026-04-05', '2026-10-04', '2026-11-02', '2026-06-15'];
const CURRENCIES = ['USD', 'EUR', 'JPY', 'GBP', 'KWD', 'CLF', 'BHD', 'CHF'];

/** A valid text value of a column, with the edge cases the fast path must hand to JS or take exactly. */
function validValue(g: Gen, spec: DatasetSpec, col: ColumnSpec): string {
  switch (col.kind) {
    case 'timestamp': {
      if (g.chance(0.03)) return g.pick(['0999-06-01T00:00:00Z', '9999-12-31T23:59:59.999999Z', '0001-01-01T00:00:00Z', '2026-11-02T10:00:00-00:00', '1000-01-01T00:00:00+01:00']);
      const frac = g.int(0, 6);
      const zone = g.chance(0.7) ? 'Z' : `${g.pick(['+', '-'])}${p2(g.int(0, 18))}:${p2(g.pick([0, 30, 45, 59]))}`;
      return `2026-${p2(g.int(1, 12))}-${p2(g.int(1, 28))}T${p2(g.int(0, 23))}:${p2(g.int(0, 59))}:${p2(g.int(0, 59))}${frac ? `.${g.digits(frac)}` : ''}${zone}`;
    }
    case 'local_timestamp': {
      const frac = g.int(0, 6);
      return `${g.pick(LOCAL_DAYS)}T${p2(g.int(0, 23))}:${p2(g.pick([0, 15, 30, 45, 59, g.int(0, 59)]))}:${p2(g.int(0, 59))}${frac ? `.${g.digits(frac)}` : ''}`;
    }
    case 'timezone': return g.pick(ZONES);
    case 'date': return g.chance(0.03) ? g.pick(['0999-12-31', '9999-12-31', '0001-01-01']) : `2026-${p2(g.int(1, 12))}-${p2(g.int(1, 28))}`;
    case 'int': {
      if (g.chance(0.05)) return g.pick(['9223372036854775807', '-9223372036854775808', '0', '-0', '0007', '1234567890123456789']);
      const v = g.digits(g.int(1, 6), true);
      return col.range === 'at_least_one' ? v : g.chance(0.2) ? `-${v}` : v;
    }
    case 'decimal': {
      const signed = !col.range && g.chance(0.3);
      if (spec.derived === 'notional' && g.chance(0.5)) {
        // Operands that make ties at every exponent, and ones just outside the 10^9 tier.
        const v = col.name === 'price'
          ? g.pick(['0.125', '0.135', '0.005', '0.015', '2.5', '0.0005', '0.00005', '1.005', '0.5', '999999999.999999999', '1000000000', '0.1234567895'])
          : g.pick(['1', '2', '3', '7', '0.5', '1.5', '12.25', '0.000000001', '999999999', '1000000000.5', '0.1']);
        return signed ? `-${v}` : v;
      }
      if (g.chance(0.04)) return g.pick(['12345678901234567890.123456789012345678', '0.000000000000000001', '0.123456789012345678', '00000000000000000000001.5', '99999999999999999999.5']);
      const int = g.chance(0.1) ? `0${g.digits(g.int(1, 3))}` : g.digits(g.int(1, 7), true);
      const frac = g.chance(0.1) ? g.int(10, 18) : g.int(0, 9);
      const v = `${int}${frac ? `.${g.digits(frac)}` : ''}`;
      return signed ? `-${v}` : v;
    }
    case 'amount_minor': {
      const v = g.chance(0.05) ? g.pick(['99999999999999999999999999999999999999', '00000000000000000000000000000000000000001', '9007199254740993', g.digits(20, true)]) : g.digits(g.int(1, 12), true);
      return !col.range && g.chance(0.3) ? `-${v}` : v;
    }
    case 'currency': return g.pick(CURRENCIES);
    case 'id': return g.chance(0.03) ? g.pick(['A B', 'x~y', 'a{b}c']) : `${col.name.slice(0, 3).toUpperCase()}-${g.digits(g.int(1, 6))}`;
    case 'enum': return g.pick(col.values!);
    case 'text': return g.pick(['ok', 'customer asked by phone', 'a b  c', 'x'.repeat(g.int(1, 40))]);
    case 'bool': return g.pick(['true', 'false']);
    case 'cutoff': return g.pick(['17:00', '17:00:00', '23:59:59']);
  }
}

/** Ids and text that plain CSV cannot hold (non-ASCII, NBSP, NUL), for Parquet text columns. */
const UNICODE: Record<string, readonly string[]> = {
  id: ['ÄCC-1', 'ACC-1\u00a0', '\u00a0ACC-1', 'ACC\u2003X', 'ACC-\u0000', '日本-1'],
  text: ['café au lait', 'a\u0000b', 'zwölf'],
};

/** Rows of one dataset: mostly valid, one value in about eight invalid or empty (`unicode`: some non-ASCII ids and text). */
function rows(g: Gen, spec: DatasetSpec, n: number, unicode = false): string[][] {
  const out: string[][] = [];
  for (let i = 0; i < n; i++) {
    const row = spec.columns.map((c) => (unicode && UNICODE[c.kind] && g.chance(0.03) ? g.pick(UNICODE[c.kind]) : validValue(g, spec, c)));
    if (g.chance(0.35)) {
      const k = g.int(0, spec.columns.length - 1);
      const col = spec.columns[k];
      const bad = INVALID[col.kind];
      row[k] = g.chance(0.2) || !bad?.length ? '' : g.pick(bad);
    }
    out.push(row);
  }
  // A notional beyond 38 digits (quarantined as notional_range by the JS validator).
  if (spec.derived === 'notional') {
    const q = spec.columns.findIndex((c) => c.name === 'fill_qty');
    out.push(spec.columns.map((c, k) => (k === q ? '99999999999999999999.5' : c.name === 'price' ? '99999999999999999999' : validValue(g, spec, c))));
  }
  // Duplicate deliveries: equal typed values written alike, and a later delivery of the first row.
  if (n > 3) out.push([...out[1]], [...out[2]]);
  return out;
}

const FAST_DATASETS = ['orders', 'executions', 'venue_fills', 'ledger_postings', 'account_balances', 'positions', 'bank_statement_lines',
  'portfolio_projection', 'notification_intents', 'notification_receipts', 'notification_exceptions', 'outbox_events', 'reservations'];

// ---------------------------------------------------------------- writing sources

/** Writes `rows` as a plain CSV file (header + LF-ended records, no quoting needed). */
function writeCsv(path: string, spec: DatasetSpec, data: string[][]): void {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, [spec.columns.map((c) => c.name), ...data].map(csvLine).join('\n') + '\n');
}

/** Parquet column types used for the typed variant, by column kind (text columns stay VARCHAR). */
function typedSelect(spec: DatasetSpec): string {
  return spec.columns.map((c, i) => {
    const v = `c${i}`;
    switch (c.kind) {
      // UTC-adjusted, as CONTRACT §1 asks of Parquet (a timestamp without zone is rejected: test/parquet-timestamp-zone.test.ts).
      case 'timestamp': return `try_cast(${v} AS TIMESTAMPTZ) AS "${c.name}"`;
      case 'date': return `try_cast(${v} AS DATE) AS "${c.name}"`;
      case 'int': return `${i % 2 ? `try_cast(${v} AS BIGINT)` : `try_cast(${v} AS INTEGER)`} AS "${c.name}"`;
      case 'decimal': return `${c.name === 'price' ? `try_cast(${v} AS DECIMAL(20,4))` : `try_cast(${v} AS DECIMAL(38,18))`} AS "${c.name}"`;
      case 'amount_minor': return `${i % 2 ? `try_cast(${v} AS DECIMAL(38,0))` : `try_cast(${v} AS BIGINT)`} AS "${c.name}"`;
      case 'bool': return `try_cast(${v} AS BOOLEAN) AS "${c.name}"`;
      default: return `${v} AS "${c.name}"`;
    }
  }).join(', ');
}

/**
 * Writes `rows` as Parquet through a scratch DuckDB table of VARCHAR columns (empty text kept as
 * '' or NULL at random): `typed` converts columns to the types of typedSelect, else all stay text.
 * An extra typed edge row is appended in the typed variant (year 0500).
 */
async function writeParquet(path: string, spec: DatasetSpec, data: string[][], typed: boolean, g: Gen): Promise<void> {
  mkdirSync(join(path, '..'), { recursive: true });
  await withDuck(async (c) => {
    await c.run(`CREATE TABLE t (${spec.columns.map((_, i) => `c${i} VARCHAR`).join(', ')})`);
    const app = await c.createAppender('t');
    for (const r of data) {
      for (const v of r) {
        if (v === '' && g.chance(0.5)) app.appendNull();
        else app.appendVarchar(v);
      }
      app.endRow();
    }
    app.closeSync();
    const select = typed ? typedSelect(spec) : spec.columns.map((col, i) => `c${i} AS "${col.name}"`).join(', ');
    if (typed) {
      const ts = spec.columns.findIndex((col) => col.kind === 'timestamp');
      if (ts >= 0) {
        // Edge instant: a year the JS reader prints with 3 digits.
        await c.run(`INSERT INTO t SELECT * REPLACE ('0500-01-01T00:00:00Z' AS c${ts}) FROM t LIMIT 1`);
      }
    }
    await c.run(`COPY (SELECT ${select} FROM t) TO '${path}' (FORMAT parquet, ROW_GROUP_SIZE 2048)`);
  });
}

// ---------------------------------------------------------------- loading and comparing

interface Snapshot {
  readonly tables: Record<string, string[][]>;
  readonly result: string;
}

async function snapshot(r: LoadResult): Promise<Snapshot> {
  const tables: Record<string, string[][]> = {};
  for (const d of DATASETS) {
    const cols = (await duck.conn.runAndReadAll(`SELECT column_name, data_type FROM information_schema.columns WHERE table_name = '${d.name}' ORDER BY ordinal_position`)).getRows();
    const types = cols.map(([n, t]) => `${n} ${t}`).join(', ');
    const data = (await duck.conn.runAndReadAll(`SELECT ${cols.map(([n]) => `"${n}"::VARCHAR`).join(', ')} FROM "${d.name}" ORDER BY _source`)).getRows();
    tables[d.name] = [[types], ...data.map((row) => row.map((v) => (v === null ? '∅' : String(v))))];
  }
  // viewFiles (which files views read, with their stamps) differs by mode by design; the rest must not.
  const { viewFiles: _viewFiles, ...compared } = r;
  const result = JSON.stringify(compared, (_k, v) => (typeof v === 'bigint' ? v.toString() : v));
  return { tables, result };
}

/** Loads `root` with the fast path and with the JS path; returns both snapshots and the paths taken. */
async function loadBoth(root: string, cfg: Config = config) {
  const paths = new Map<string, string>();
  const sql = new Map<string, number>();
  const onFile = (f: FilePath) => { paths.set(f.path, f.loadedBy === 'fast' ? 'fast' : `js: ${f.reason}`); sql.set(f.path, f.sqlRecords); };
  const fastResult = await loadSources(duck.conn, root, cfg, join(tmp.dir, `links-${++counter}`), { onFile });
  const fast = await snapshot(fastResult);
  const jsResult = await loadSources(duck.conn, root, cfg, join(tmp.dir, `links-${++counter}`), { fast: false });
  const js = await snapshot(jsResult);
  return { fast, js, fastResult, paths, sql };
}

/** Loads `root` in view mode (LoadOptions.views): returns the snapshot and which datasets became views. */
async function loadViews(root: string, cfg: Config = config) {
  const result = await loadSources(duck.conn, root, cfg, join(tmp.dir, `links-${++counter}`), { views: true });
  const kinds = (await duck.conn.runAndReadAll(`SELECT table_name, table_type FROM information_schema.tables WHERE table_schema = 'main' AND table_type = 'VIEW' ORDER BY 1`)).getRows();
  return { snap: await snapshot(result), views: kinds.map(([n]) => String(n)) };
}

/** Asserts that SQL inserted most of the records the file loaded (else the comparison proves little). */
function expectMostlySql(r: LoadResult, sql: ReadonlyMap<string, number>, file: string): void {
  const loaded = r.datasets.flatMap((d) => d.files).find((f) => f.path === file)!.loaded;
  expect([file, (sql.get(file) ?? 0) >= 0.5 * loaded && loaded > 0]).toEqual([file, true]);
}

function expectSame(a: Snapshot, b: Snapshot): void {
  for (const name of Object.keys(a.tables)) expect({ name, rows: a.tables[name] }).toEqual({ name, rows: b.tables[name] });
  expect(JSON.parse(a.result)).toEqual(JSON.parse(b.result));
}

function newRoot(): string {
  const dir = join(tmp.dir, `root-${++counter}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

// ---------------------------------------------------------------- tests

describe('the fast path and the JS path give identical tables and quarantine', () => {
  it('plain CSV: every fast dataset, bad values of every rule, DST hours, ties, 18-digit fractions, 38-digit amounts', async () => {
    const g = new Gen(prng(20261102));
    const root = newRoot();
    for (const name of FAST_DATASETS) {
      const spec = datasetSpec(name);
      writeCsv(join(root, name, 'part-0001.csv'), spec, rows(g, spec, 700));
      // A second file re-delivering some records (duplicates across files).
      writeCsv(join(root, name, 'part-0002.csv'), spec, rows(new Gen(prng(7)), spec, 40));
    }
    const { fast, js, fastResult, paths, sql } = await loadBoth(root);
    for (const name of FAST_DATASETS) expect([name, paths.get(`${name}/part-0001.csv`)]).toEqual([name, 'fast']);
    for (const name of FAST_DATASETS) expectMostlySql(fastResult, sql, `${name}/part-0001.csv`);
    expect(fastResult.quarantine.length).toBeGreaterThan(500);
    expect(fastResult.datasets.reduce((a, d) => a + d.records_loaded, 0)).toBeGreaterThan(3000);
    expect(fastResult.datasets.reduce((a, d) => a + d.duplicates, 0)).toBeGreaterThan(10);
    const rules = new Set(fastResult.quarantine.map((e) => e.rule));
    for (const rule of ['local_time_gap', 'timezone_unknown', 'notional_range', 'decimal_scale', 'amount_precision', 'int_range', 'timestamp_range', 'id_whitespace', 'id_character', 'required_empty', 'range_positive', 'currency_unknown']) {
      expect([rule, rules.has(rule)]).toEqual([rule, true]);
    }
    expectSame(fast, js);
  });

  it('Parquet with text columns (empty as \'\' or NULL) and with typed columns', async () => {
    const g = new Gen(prng(5));
    const root = newRoot();
    for (const name of FAST_DATASETS) {
      const spec = datasetSpec(name);
      await writeParquet(join(root, name, 'a-text.parquet'), spec, rows(g, spec, 600, true), false, g);
      await writeParquet(join(root, name, 'b-typed.parquet'), spec, rows(g, spec, 600), true, g);
    }
    const { fast, js, fastResult, paths, sql } = await loadBoth(root);
    for (const name of FAST_DATASETS) {
      expect([name, paths.get(`${name}/a-text.parquet`), paths.get(`${name}/b-typed.parquet`)]).toEqual([name, 'fast', 'fast']);
      expectMostlySql(fastResult, sql, `${name}/a-text.parquet`);
      expectMostlySql(fastResult, sql, `${name}/b-typed.parquet`);
    }
    const rules = new Set(fastResult.quarantine.map((e) => e.rule));
    for (const rule of ['local_time_gap', 'notional_range', 'timestamp_form', 'required_empty', 'range_positive', 'id_whitespace', 'id_character', 'text_nul']) {
      expect([rule, rules.has(rule)]).toEqual([rule, true]);
    }
    expectSame(fast, js);
    // View mode: datasets without derived columns become views over the files; same relation.
    const v = await loadViews(root);
    expect(v.views).toEqual(FAST_DATASETS.filter((n) => !['executions', 'venue_fills', 'notification_receipts'].includes(n)).sort());
    expectSame(v.snap, js);
  });

  it('every rounding mode: notionals with ties at exponents 0, 2, 3 and 4, signed venue fills', async () => {
    const g = new Gen(prng(42));
    const root = newRoot();
    for (const name of ['executions', 'venue_fills']) {
      const spec = datasetSpec(name);
      writeCsv(join(root, name, 'part-0001.csv'), spec, rows(g, spec, 400));
      await writeParquet(join(root, name, 'part-0002.parquet'), spec, rows(g, spec, 400), true, g);
    }
    for (const mode of ROUNDING_MODES) {
      const { fast, js } = await loadBoth(root, { ...config, rounding_mode: mode });
      expectSame(fast, js);
    }
    // Spot checks against hand-worked values (HALF_EVEN): 1 × 0.125 USD = 12.5 cents → 12; 1 × 0.135 → 14;
    // 3 × 0.5 JPY = 1.5 → 2; 1 × 2.5 JPY → 2; −1 × 0.125 USD → −12; 7 × 0.0005 KWD = 3.5 fils → 4.
    const tie = newRoot();
    const spec = datasetSpec('venue_fills');
    const base = ['2026-11-02T10:00:00', 'Europe/London', 'XLON', 'VF', 'ORD-1', 'GB-X', 'BUY'];
    const cases: [string, string, string, string][] = [['1', '0.125', 'USD', '12'], ['1', '0.135', 'USD', '14'], ['3', '0.5', 'JPY', '2'], ['1', '2.5', 'JPY', '2'],
      ['-1', '0.125', 'USD', '-12'], ['7', '0.0005', 'KWD', '4'], ['1', '0.00005', 'CLF', '0'], ['3', '0.00005', 'CLF', '2']];
    writeCsv(join(tie, 'venue_fills', 'part-0001.csv'), spec, cases.map(([q, p, c], i) => [...base.slice(0, 3), `VF-${i}`, ...base.slice(4), q, p, c, String(i + 1), 'F-1']));
    const { fast, js, paths } = await loadBoth(tie);
    expect(paths.get('venue_fills/part-0001.csv')).toBe('fast');
    expectSame(fast, js);
    expect(fast.tables.venue_fills.slice(1).map((r) => r[13])).toEqual(cases.map((c) => c[3]));
  });

  it('DST hours: a local time in an hour with a transition is mapped by the JS rule (gap quarantined, overlap earlier instant)', async () => {
    const root = newRoot();
    const spec = datasetSpec('notification_receipts');
    const locals: [string, string][] = [
      ['2026-03-08T01:59:59.999999', 'America/New_York'], ['2026-03-08T02:30:00', 'America/New_York'], ['2026-03-08T03:00:00', 'America/New_York'],
      ['2026-11-01T01:30:00', 'America/New_York'], ['2026-11-01T00:59:59', 'America/New_York'], ['2026-11-01T02:00:00', 'America/New_York'],
      ['2026-03-29T01:30:00', 'Europe/London'], ['2026-10-25T01:30:00.5', 'Europe/London'], ['2026-10-04T02:15:00', 'Australia/Lord_Howe'],
      ['2026-04-05T01:45:00', 'Australia/Lord_Howe'], ['2026-11-01T01:30:00', 'US/Eastern'], ['2026-11-02T12:00:00', 'Asia/Kolkata'],
    ];
    writeCsv(join(root, spec.name, 'part-0001.csv'), spec, locals.map(([t, z], i) => [t, z, `RCP-${i}`, `INT-${i}`, 'EMAIL', 'DELIVERED']));
    const { fast, js, fastResult, paths } = await loadBoth(root);
    expect(paths.get('notification_receipts/part-0001.csv')).toBe('fast');
    expectSame(fast, js);
    expect(fastResult.quarantine.map((e) => [e.row, e.rule])).toEqual([[2, 'local_time_gap'], [7, 'local_time_gap'], [9, 'local_time_gap']]);
    const utc = Object.fromEntries(fast.tables.notification_receipts.slice(1).map((r) => [r[2], r[6]]));
    expect(utc).toMatchObject({
      'RCP-0': '2026-03-08 06:59:59.999999', 'RCP-2': '2026-03-08 07:00:00', 'RCP-3': '2026-11-01 05:30:00', 'RCP-5': '2026-11-01 07:00:00',
      'RCP-7': '2026-10-25 00:30:00.5', 'RCP-10': '2026-11-01 05:30:00', 'RCP-11': '2026-11-02 06:30:00',
    });
  });

  it('a file the fast path does not take (quoted fields, CRLF, UTF-8, gzip) is read whole by the JS reader', async () => {
    const root = newRoot();
    const spec = datasetSpec('notification_exceptions');
    const header = spec.columns.map((c) => c.name).join(',');
    writeFileSync(join(newDir(root, spec.name), 'a.csv'), `${header}\n2026-11-02T10:00:00Z,INT-1,ops,"a, b"\n`);
    writeFileSync(join(root, spec.name, 'b.csv'), `${header}\r\n2026-11-02T10:00:00Z,INT-2,ops,x\r\n`);
    writeFileSync(join(root, spec.name, 'c.csv'), `${header}\n2026-11-02T10:00:00Z,INT-3,ops,café\n`);
    writeFileSync(join(root, spec.name, 'd.csv'), `${header}\n2026-11-02T10:00:00Z,INT-4,ops,x\n\n2026-11-02T10:00:00Z,INT-5,ops,y\n`);
    writeFileSync(join(root, spec.name, 'e.csv'), `${header}\n2026-11-02T10:00:00Z,INT-6,ops\n`);
    writeFileSync(join(root, spec.name, 'f.csv.gz'), gzipSync(`${header}\n2026-11-02T10:00:00Z,INT-7,ops,x\n`));
    const { fast, js, paths } = await loadBoth(root);
    expect([...paths.entries()].map(([f, p]) => [f, p.split(':')[0]])).toEqual([
      ['notification_exceptions/a.csv', 'js'], ['notification_exceptions/b.csv', 'js'], ['notification_exceptions/c.csv', 'js'],
      ['notification_exceptions/d.csv', 'js'], ['notification_exceptions/e.csv', 'js'], ['notification_exceptions/f.csv.gz', 'js'],
    ]);
    expectSame(fast, js);
  });
});

function newDir(root: string, name: string): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

describe('record numbers on the CSV fast path', () => {
  // A large day keeps its tables in a DuckDB file (pipeline/engine.ts); the file's text is then a
  // temporary table, so it is neither compressed into nor left behind in that file.
  it.each(['memory', 'file'] as const)('follow the file over many DuckDB buffers (700,000 records, 45 MB, 2 threads, insertion order off in the run, tables in %s)', async (storage) => {
    const root = newRoot();
    const spec = datasetSpec('outbox_events');
    const n = 700_000;
    const lines = [spec.columns.map((c) => c.name).join(',')];
    for (let i = 1; i <= n; i++) lines.push(`2026-11-02T10:00:00.${String(i % 1_000_000).padStart(6, '0')}Z,EV-${i},ORD-${i},OrderAccepted,SENT,`);
    writeFileSync(join(newDir(root, spec.name), 'big.csv'), `${lines.join('\n')}\n`);
    const db = storage === 'memory' ? undefined : await openDuck({ ...AS_IN_A_RUN, path: join(root, 'work.duckdb') });
    const c = db ? db.conn : duck.conn;
    try {
      const paths = new Map<string, string>();
      const r = await loadSources(c, root, config, join(tmp.dir, `links-${++counter}`), { onFile: (f) => paths.set(f.path, f.loadedBy) });
      expect(paths.get('outbox_events/big.csv')).toBe('fast');
      expect(r.datasets.find((d) => d.dataset === 'outbox_events')).toMatchObject({ records_read: n, records_loaded: n });
      const bad = await c.runAndReadAll(`SELECT count(*)::VARCHAR FROM outbox_events WHERE _source <> 'outbox_events/big.csv:' || lpad(substr(event_id, 4), 12, '0')`);
      expect(bad.getRows()).toEqual([['0']]);
      // The loader turns insertion order on for the numbering only, and back off.
      expect((await c.runAndReadAll(`SELECT current_setting('preserve_insertion_order')::VARCHAR`)).getRows()).toEqual([['false']]);
      // The file's text was a temporary table, dropped with the load's other helper tables.
      expect((await c.runAndReadAll(`SELECT count(*)::VARCHAR FROM duckdb_tables() WHERE table_name LIKE '\\_\\_ld\\_csv%' ESCAPE '\\'`)).getRows()).toEqual([['0']]);
    } finally {
      db?.close();
    }
  });
});
