/**
 * Exactness end to end (CONTRACT §1): amounts far beyond 2^53 minor units and quantities with 18
 * fractional digits, fed through CSV, JSON Lines (as JSON numbers, not strings) and Parquet
 * (DECIMAL(38,18) and DECIMAL(38,0) columns), must come out exactly in the `--json` totals, in
 * the manifest and in the Parquet outputs (read back with DuckDB as VARCHAR). Expected values are
 * computed here with BigInt, independently of the product. The last test checks that a Parquet
 * dataset larger than one DuckDB appender flush (204,800 rows) is read whole.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATASETS } from '../pipeline/contract/datasets.js';
import { DatasetWriter, convertToParquet, type CellText, type OutputFormat, type WrittenFile } from '../pipeline/generate/writers.js';
import { reckon, scratchDir, type CliResult, reckonHere } from './helpers/cli.js';
import { withDuck } from './helpers/duckdb.js';

const Q1 = '12345678901234567890.123456789012345678'; // 20 integer digits, 18 fractional digits
const Q2 = '0.123456789012345678';
const Q_SUM = '12345678901234567890.246913578024691356'; // Q1 + Q2, exactly 38 digits
const Q3 = '98765432109876543210';
const BIG_CASH = 123_456_789_012_345_678_901_234_567n; // 27 digits
const OPEN_USD = 99_999_999_999_999_999_999_999_999_999_999n; // 32 digits
const OPEN_JPY = 9_007_199_254_740_993n; // 2^53 + 1

// Notionals, HALF_EVEN at the currency exponent (USD 2, JPY 0), worked out by hand:
// Q1 × 0.000000000000000001 USD = 12.345678901234567890123456789012345678 → 1234.5678… cents → 1235
// Q2 × 100.5 USD = 12.407407395740740639 → 1240.7407… cents → 1241
// Q3 × 1000 JPY = 98765432109876543210000 yen
const N1 = 1235n;
const N2 = 1241n;
const N3 = 98_765_432_109_876_543_210_000n;

const T0 = '2026-11-02T10:00:00Z';
const DATA: Record<string, CellText[][]> = {
  orders: [
    [T0, 'ORD-X1', '1', 'C1', 'ACC-X', 'BIG-QTY', 'BUY', Q_SUM, 'ACCEPTED', T0, '2026-11-02T10:00:01Z'],
    [T0, 'ORD-X1', '2', 'C1', 'ACC-X', 'BIG-QTY', 'BUY', Q_SUM, 'FILLED', '2026-11-02T10:01:00Z', '2026-11-02T10:01:01Z'],
    [T0, 'ORD-X2', '1', 'C2', 'ACC-X', 'BIG-AMT', 'BUY', Q3, 'ACCEPTED', T0, '2026-11-02T10:00:01Z'],
    [T0, 'ORD-X2', '2', 'C2', 'ACC-X', 'BIG-AMT', 'BUY', Q3, 'FILLED', '2026-11-02T10:02:00Z', '2026-11-02T10:02:01Z'],
  ],
  executions: [
    ['2026-11-02T10:00:30.123456Z', 'EXE-1', 'ORD-X1', 'ACC-X', 'XNYS', 'VF-1', 'BIG-QTY', 'BUY', Q1, '0.000000000000000001', 'USD', '1', '2026-11-02T10:00:31Z'],
    ['2026-11-02T10:01:00Z', 'EXE-2', 'ORD-X1', 'ACC-X', 'XNYS', 'VF-2', 'BIG-QTY', 'BUY', Q2, '100.5', 'USD', '2', '2026-11-02T10:01:01Z'],
    ['2026-11-02T10:02:00Z', 'EXE-3', 'ORD-X2', 'ACC-X', 'XTKS', 'VF-3', 'BIG-AMT', 'BUY', Q3, '1000', 'JPY', '1', '2026-11-02T10:02:01Z'],
  ],
  venue_fills: [
    ['2026-11-02T05:00:30.123456', 'America/New_York', 'XNYS', 'VF-1', 'ORD-X1', 'BIG-QTY', 'BUY', Q1, '0.000000000000000001', 'USD', '1', 'F1'],
    ['2026-11-02T05:01:00', 'America/New_York', 'XNYS', 'VF-2', 'ORD-X1', 'BIG-QTY', 'BUY', Q2, '100.50', 'USD', '2', 'F1'],
    ['2026-11-02T19:02:00', 'Asia/Tokyo', 'XTKS', 'VF-3', 'ORD-X2', 'BIG-AMT', 'BUY', `${Q3}.000`, '1000.0', 'JPY', '1', 'F2'],
  ],
  ledger_postings: [
    ['2026-11-02T10:00:30.123456Z', 'PS-1', '1', 'ACC-X', 'USD', 'DEBIT', String(N1), 'TRADE', 'EXE-1', null, '1', '2026-11-02T10:00:31Z'],
    ['2026-11-02T10:00:30.123456Z', 'PS-1', '2', 'CLR-USD', 'USD', 'CREDIT', String(N1), 'TRADE', 'EXE-1', null, '2', '2026-11-02T10:00:31Z'],
    ['2026-11-02T10:01:00Z', 'PS-2', '1', 'ACC-X', 'USD', 'DEBIT', String(N2), 'TRADE', 'EXE-2', null, '3', '2026-11-02T10:01:01Z'],
    ['2026-11-02T10:01:00Z', 'PS-2', '2', 'CLR-USD', 'USD', 'CREDIT', String(N2), 'TRADE', 'EXE-2', null, '4', '2026-11-02T10:01:01Z'],
    ['2026-11-02T10:02:00Z', 'PS-3', '1', 'ACC-X', 'JPY', 'DEBIT', String(N3), 'TRADE', 'EXE-3', null, '5', '2026-11-02T10:02:01Z'],
    ['2026-11-02T10:02:00Z', 'PS-3', '2', 'CLR-JPY', 'JPY', 'CREDIT', String(N3), 'TRADE', 'EXE-3', null, '6', '2026-11-02T10:02:01Z'],
    ['2026-11-02T11:00:00Z', 'PS-4', '1', 'BANK-USD', 'USD', 'DEBIT', String(BIG_CASH), 'CASH', null, null, '7', '2026-11-02T11:00:01Z'],
    ['2026-11-02T11:00:00Z', 'PS-4', '2', 'ACC-X', 'USD', 'CREDIT', String(BIG_CASH), 'CASH', null, null, '8', '2026-11-02T11:00:01Z'],
  ],
  account_balances: [],
};

// Balance snapshots at the window start and end that roll forward (credit-normal: CREDIT +, DEBIT −).
const NET: Record<string, bigint> = {
  'ACC-X|USD': BIG_CASH - N1 - N2, 'CLR-USD|USD': N1 + N2, 'BANK-USD|USD': -BIG_CASH, 'ACC-X|JPY': -N3, 'CLR-JPY|JPY': N3,
};
const OPEN: Record<string, bigint> = { 'ACC-X|USD': OPEN_USD, 'CLR-USD|USD': 0n, 'BANK-USD|USD': 0n, 'ACC-X|JPY': OPEN_JPY, 'CLR-JPY|JPY': 0n };
for (const [k, open] of Object.entries(OPEN)) {
  const [account, ccy] = k.split('|');
  const close = open + NET[k];
  DATA.account_balances.push(['2026-11-02T00:00:00Z', account, ccy, String(open), '0', String(open)]);
  DATA.account_balances.push(['2026-11-03T00:00:00Z', account, ccy, String(close), '0', String(close)]);
}

/** Control → total name → dimension → exact text. */
const EXPECTED: Readonly<Record<string, Readonly<Record<string, Readonly<Record<string, string>>>>>> = {
  RC02: {
    internal_fill_qty_by_instrument: { 'BIG-QTY': Q_SUM, 'BIG-AMT': Q3 },
    venue_fill_qty_by_instrument: { 'BIG-QTY': Q_SUM, 'BIG-AMT': Q3 },
    internal_notional_minor_by_currency: { USD: String(N1 + N2), JPY: String(N3) },
    venue_notional_minor_by_currency: { USD: String(N1 + N2), JPY: String(N3) },
  },
  RC03: {
    debit_minor_by_currency: { USD: String(N1 + N2 + BIG_CASH), JPY: String(N3) },
    credit_minor_by_currency: { USD: String(N1 + N2 + BIG_CASH), JPY: String(N3) },
    opening_balance_minor: { 'ACC-X|USD': String(OPEN_USD), 'ACC-X|JPY': String(OPEN_JPY) },
    net_minor: { 'ACC-X|USD': String(BIG_CASH - N1 - N2), 'BANK-USD|USD': String(-BIG_CASH), 'ACC-X|JPY': String(-N3) },
    closing_balance_minor: { 'ACC-X|USD': String(OPEN_USD + BIG_CASH - N1 - N2), 'ACC-X|JPY': String(OPEN_JPY - N3) },
  },
};

/** Writes the sources in one format; `reservations` exists with a watermark and no rows. */
async function writeSources(dir: string, format: OutputFormat): Promise<void> {
  const files: { spec: (typeof DATASETS)[number]; file: WrittenFile }[] = [];
  for (const name of ['orders', 'executions', 'venue_fills', 'ledger_postings', 'account_balances', 'reservations']) {
    const spec = DATASETS.find((d) => d.name === name)!;
    const w = new DatasetWriter(dir, spec, format, { rowsPerPart: 1000, jsonNumbers: true });
    for (const row of DATA[name] ?? []) w.write(row);
    for (const file of w.close()) files.push({ spec, file });
    writeFileSync(join(dir, name, '_watermark.json'), '{"watermark": "2026-11-03T00:05:00Z"}\n');
  }
  await convertToParquet(dir, files, join(dir, '.tmp-duckdb'));
}

async function parquetTotals(path: string): Promise<{ name: string; dim: string | null; text: string; dec: string | null }[]> {
  return withDuck(async (conn) => {
    const r = await conn.runAndReadAll(`SELECT total_name, dim, value_text, value_decimal::VARCHAR AS dec, typeof(value_decimal) AS t FROM read_parquet('${path}')`);
    const rows = r.getRowObjectsJson() as any[];
    for (const row of rows) expect(row.t).toBe('DECIMAL(38,18)');
    return rows.map((x) => ({ name: String(x.total_name), dim: x.dim === null ? null : String(x.dim), text: String(x.value_text), dec: x.dec === null ? null : String(x.dec) }));
  });
}

/** `1.500` → `1.5`, `10.000` → `10`: the same decimal, shortest text. */
const norm = (s: string) => (s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s);

describe.each(['csv', 'jsonl', 'parquet'] as const)('exact values through %s', (format) => {
  const tmp = scratchDir(`reckon-exact-${format}-`);
  let run: CliResult;

  beforeAll(async () => {
    await writeSources(join(tmp.dir, 'sources'), format);
    run = await reckonHere(['run', '--date', '2026-11-02', '--control', 'RC02,RC03', '--sources', join(tmp.dir, 'sources'), '--store', join(tmp.dir, 'store'), '--json', '--quiet']);
  });
  afterAll(() => tmp.cleanup());

  it('loads every record and reconciles CLEAN', () => {
    expect(run.json, run.stderr).toBeDefined();
    expect(run.json.quarantine_count).toBe(0);
    expect(run.json.controls.map((c: any) => [c.control_id, c.status, c.differences.length])).toEqual([['RC02', 'CLEAN', 0], ['RC03', 'CLEAN', 0]]);
    expect(run.code).toBe(0);
  });

  if (format === 'jsonl') {
    it('the JSON Lines sources hold the values as JSON numbers', () => {
      const text = readFileSync(join(tmp.dir, 'sources', 'executions', 'part-00001.jsonl'), 'utf8');
      expect(text).toContain(`"fill_qty":${Q1},`);
      expect(readFileSync(join(tmp.dir, 'sources', 'ledger_postings', 'part-00001.jsonl'), 'utf8')).toContain(`"amount_minor":${BIG_CASH},`);
    });
  }

  it('the --json totals are exact', () => {
    for (const [id, totals] of Object.entries(EXPECTED)) {
      const c = run.json.controls.find((x: any) => x.control_id === id);
      for (const [name, dims] of Object.entries(totals)) {
        for (const [dim, v] of Object.entries(dims)) expect(c.totals[name]?.[dim], `${id} ${name} ${dim}`).toBe(v);
      }
    }
  });

  it('the manifest carries the exact values', () => {
    const manifest = JSON.parse(readFileSync(run.json.manifest.path, 'utf8'));
    for (const [id, totals] of Object.entries(EXPECTED)) {
      const c = manifest.results.find((x: any) => x.control_id === id);
      for (const [name, dims] of Object.entries(totals)) {
        for (const [dim, v] of Object.entries(dims)) expect(c.totals[name]?.[dim], `manifest ${id} ${name} ${dim}`).toBe(v);
      }
    }
    const text = readFileSync(run.json.manifest.path, 'utf8');
    for (const v of [Q_SUM, String(OPEN_USD + BIG_CASH - N1 - N2), String(N1 + N2 + BIG_CASH)]) expect(text).toContain(`"${v}"`);
  });

  it('the Parquet control totals hold the exact values (read back as VARCHAR)', async () => {
    const manifest = JSON.parse(readFileSync(run.json.manifest.path, 'utf8'));
    const out = manifest.outputs.find((o: any) => o.table === 'control_totals');
    const rows = await parquetTotals(join(tmp.dir, 'store', out.key));
    for (const totals of Object.values(EXPECTED)) {
      for (const [name, dims] of Object.entries(totals)) {
        for (const [dim, v] of Object.entries(dims)) {
          const row = rows.find((r) => r.name === name && r.dim === dim);
          expect(row?.text, `${name} ${dim}`).toBe(v);
          // The DECIMAL(38,18) column holds the value exactly when it fits (≤ 20 integer digits).
          if (v.replace(/^-/, '').split('.')[0].length <= 20) expect(row?.dec && norm(row.dec), `${name} ${dim} decimal`).toBe(v);
        }
      }
    }
    const qty = rows.find((r) => r.name === 'internal_fill_qty_by_instrument' && r.dim === 'BIG-QTY');
    expect(qty?.dec).toBe(Q_SUM);
  });
});

/**
 * Regression (fixed in issue 5): the loader used to stream a Parquet file from the DuckDB
 * connection its appender writes to; the appender flushes every 204,800 rows, which ended the
 * pending stream, and the rest of the file was lost without a quarantine entry. The reader now
 * reads in pages and the fast path inserts in SQL.
 */
describe('a Parquet dataset larger than one appender flush', () => {
  const tmp = scratchDir('reckon-exact-big-');
  afterAll(() => tmp.cleanup());

  it('is read whole: 210,000 reservation rows in one file, all counted in the manifest', async () => {
    const src = join(tmp.dir, 'sources');
    for (const name of ['ledger_postings', 'executions', 'account_balances', 'reservations']) {
      mkdirSync(join(src, name), { recursive: true });
      writeFileSync(join(src, name, '_watermark.json'), '{"watermark": "2026-11-03T00:05:00Z"}\n');
    }
    await withDuck((conn) => conn.run(`COPY (SELECT TIMESTAMPTZ '2026-11-01 12:00:00+00' AS updated_at, 'RES-' || lpad(range::VARCHAR, 7, '0') AS reservation_id,
        'ACC-X' AS account_id, 'USD' AS currency, 100::DECIMAL(38,0) AS amount_minor, 'RELEASED' AS status, 1::BIGINT AS version
        FROM range(210000)) TO '${join(src, 'reservations', 'part-00001.parquet')}' (FORMAT parquet)`));
    const run = await reckonHere(['run', '--date', '2026-11-02', '--control', 'RC03', '--sources', src, '--store', join(tmp.dir, 'store'), '--json', '--quiet']);
    expect(run.json, run.stderr).toBeDefined();
    const manifest = JSON.parse(readFileSync(run.json.manifest.path, 'utf8'));
    expect(manifest.sources.datasets.reservations.records_read).toBe(210000);
  });
});
