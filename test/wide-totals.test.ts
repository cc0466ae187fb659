/**
 * Issue 18, item 8: control totals exact at any size the contract allows. A valid 38-digit amount
 * (10^38 − 1) on two legs of one posting set used to stop the whole run (InputError, exit 3, no
 * manifest). Now the control whose DECIMAL(38) sum overflows is computed again with DuckDB BIGNUM
 * (controls/wide.ts) while the others keep the fast path; a total beyond DECIMAL(38) is written to
 * `control_totals` as exact text only and the manifest says so; a difference comparing such sums is
 * exact. Runs in process (runWindow) on the small consistent day of test/fixtures/hostile.ts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../pipeline/config/config.js';
import { windowForRange } from '../pipeline/contract/window.js';
import { loadControls } from '../pipeline/controls/definitions.js';
import { selectControls } from '../pipeline/controls/selection.js';
import { DEFAULT_SETTINGS } from '../pipeline/core/settings.js';
import { runWindow, type RunResult } from '../pipeline/run/run-window.js';
import { scratchDir } from './helpers/cli.js';
import { withDuck } from './helpers/duckdb.js';
import { WINDOW, validDay, writeDay, type Day } from './fixtures/hostile.js';

const tmp = scratchDir('reckon-wide-');
afterAll(() => tmp.cleanup());
let n = 0;

const MAX38 = 10n ** 38n - 1n; // the largest amount_minor the contract allows
const TRADE = 110_550n; // the one TRADE set of validDay(1): 11 × 100.50 USD

function leg(set: string, legNo: number, account: string, direction: string, amount: bigint, seq: number): string[] {
  return ['2026-11-02T12:00:00Z', set, String(legNo), account, 'USD', direction, String(amount), 'CASH', '', '', String(seq), '2026-11-02T12:00:01Z'];
}

/**
 * validDay(1) plus `legs`; with `balances`, the accounts they move get snapshots at the window
 * start and end rolled forward by them (a balance must itself fit 38 digits).
 */
function dayWith(legs: string[][], balances = true): Day {
  const day = validDay(1);
  const net = new Map<string, bigint>();
  for (const l of legs) {
    day.ledger_postings.rows.push(l);
    const signed = (l[5] === 'CREDIT' ? 1n : -1n) * BigInt(l[6]);
    net.set(l[3], (net.get(l[3]) ?? 0n) + signed);
  }
  for (const [account, v] of balances ? net : []) {
    day.account_balances.rows.push(['2026-11-02T00:00:00Z', account, 'USD', '0', '0', '0'], ['2026-11-03T00:00:00Z', account, 'USD', String(v), '0', String(v)]);
  }
  return day;
}

async function run(day: Day): Promise<RunResult> {
  const sources = join(tmp.dir, `src-${++n}`);
  writeDay(sources, day);
  const definitions = await loadControls();
  return runWindow({
    window: windowForRange(WINDOW), controls: selectControls(definitions, []), sources, store: join(tmp.dir, `store-${n}`),
    config: await loadConfig(undefined, definitions), trigger: 'manual', reason: null, rerunOf: null, settings: DEFAULT_SETTINGS,
  });
}

const totals = (r: RunResult, id: string) => r.controls.find((c) => c.control_id === id)!.totals as Record<string, Record<string, string>>;

describe('a 38-digit amount on two legs of one posting set', () => {
  it('the issue\'s case: no longer stops the run; RC03 falls back to BIGNUM, its totals and differences exact, the manifest says so', async () => {
    // Both legs on the accounts of the day's trade: their net is -(10^38 − 1) − 110550, 39 digits.
    const r = await run(dayWith([leg('PS-BIG', 1, 'ACC-1', 'DEBIT', MAX38, 90), leg('PS-BIG', 2, 'CLEAR-1', 'CREDIT', MAX38, 91)], false));
    expect(r.controls.map((c) => [c.control_id, c.status])).toEqual([['RC01', 'CLEAN'], ['RC02', 'CLEAN'], ['RC03', 'BREAKS'], ['RC04', 'CLEAN'], ['RC05', 'CLEAN'], ['RC06', 'CLEAN']]);
    expect(r.exit_code).toBe(1);
    const rc03 = r.controls.find((c) => c.control_id === 'RC03')!;
    const wide = String(MAX38 + TRADE);
    expect(wide).toBe('100000000000000000000000000000000110549');
    expect(totals(r, 'RC03').net_minor).toEqual({ 'ACC-1|USD': `-${wide}`, 'CLEAR-1|USD': wide });
    expect(totals(r, 'RC03').debit_minor_by_currency).toEqual({ USD: wide });
    // The balances did not move with the postings: the rollforward difference compares 39-digit sums exactly.
    expect(rc03.differences.map((d) => [d.kind, d.key, d.detail])).toEqual([
      ['BALANCE_ROLLFORWARD_MISMATCH', 'ACC-1|USD', `closing -110550 ≠ opening 0 + net -${wide}`],
      ['BALANCE_ROLLFORWARD_MISMATCH', 'CLEAR-1|USD', `closing 110550 ≠ opening 0 + net ${wide}`],
    ]);
    expect(r.manifestDoc.notes).toEqual(expect.arrayContaining([
      'RC03: a sum of minor units passed DECIMAL(38) on the fast path; its totals and differences were computed exactly with DuckDB BIGNUM (variable-width integers)',
      `RC03: total net_minor[ACC-1|USD] = -${wide} has more digits than DECIMAL(38) holds: written to control_totals as exact text only (value_text; value_decimal and value_integer are NULL)`,
    ]));
    // Only RC03 fell back: the other controls kept the fast path.
    expect(r.manifestDoc.notes.filter((x) => /BIGNUM/.test(x))).toHaveLength(1);
  });

  it('a total beyond DECIMAL(38) that the fast path sums exactly (below 2^127) is written as text only, and said so', async () => {
    const r = await run(dayWith([leg('PS-BIG', 1, 'ACC-BIG-D', 'DEBIT', MAX38, 90), leg('PS-BIG', 2, 'ACC-BIG-C', 'CREDIT', MAX38, 91)]));
    expect(r.controls.map((c) => [c.control_id, c.status])).toEqual(['RC01', 'RC02', 'RC03', 'RC04', 'RC05', 'RC06'].map((id) => [id, 'CLEAN']));
    expect(r.exit_code).toBe(0);
    const rc03 = totals(r, 'RC03');
    expect(rc03.debit_minor_by_currency).toEqual({ USD: String(MAX38 + TRADE) });
    expect(rc03.credit_minor_by_currency).toEqual({ USD: String(MAX38 + TRADE) });
    expect(rc03.net_minor).toEqual({ 'ACC-1|USD': '-110550', 'ACC-BIG-C|USD': String(MAX38), 'ACC-BIG-D|USD': String(-MAX38), 'CLEAR-1|USD': '110550' });
    expect(r.manifestDoc.notes.filter((x) => /DECIMAL\(38\)/.test(x))).toEqual([
      'RC03: total credit_minor_by_currency[USD] = 100000000000000000000000000000000110549 has more digits than DECIMAL(38) holds: written to control_totals as exact text only (value_text; value_decimal and value_integer are NULL)',
      'RC03: total debit_minor_by_currency[USD] = 100000000000000000000000000000000110549 has more digits than DECIMAL(38) holds: written to control_totals as exact text only (value_text; value_decimal and value_integer are NULL)',
    ]);

    // The output row: exact text, no typed value that could not hold it.
    const out = r.manifestDoc.outputs.find((o) => o.table === 'control_totals')!;
    const rows = await withDuck(async (c) => (await c.runAndReadAll(`SELECT value_text, value_decimal::VARCHAR, value_integer::VARCHAR FROM read_parquet('${join(r.manifest.path, '..', '..', out.key)}') WHERE total_name = 'debit_minor_by_currency'`)).getRows());
    expect(rows).toEqual([['100000000000000000000000000000000110549', null, null]]);
    expect(JSON.parse(readFileSync(r.manifest.path, 'utf8')).results_digest).toBe(r.results_digest);
  });

  it('a difference that compares such sums is exact: debits 2·(10^38 − 1) against credits 2·10^38 − 3', async () => {
    const r = await run(dayWith([
      leg('PS-UNB', 1, 'ACC-BIG-D', 'DEBIT', MAX38, 90), leg('PS-UNB', 2, 'ACC-BIG-D', 'DEBIT', MAX38, 91),
      leg('PS-UNB', 3, 'ACC-BIG-C', 'CREDIT', MAX38, 92), leg('PS-UNB', 4, 'ACC-BIG-C', 'CREDIT', MAX38 - 1n, 93),
    ], false));
    const rc03 = r.controls.find((x) => x.control_id === 'RC03')!;
    expect(rc03.status).toBe('BREAKS');
    expect(rc03.differences.map((d) => [d.kind, d.key, d.detail])).toEqual([
      ['POSTING_SET_UNBALANCED', 'PS-UNB|USD', `debits ${2n * MAX38} ≠ credits ${2n * MAX38 - 1n} (USD minor units)`],
    ]);
    expect(rc03.totals.debit_minor_by_currency).toEqual({ USD: String(2n * MAX38 + TRADE) });
    expect(r.controls.filter((x) => x.control_id !== 'RC03').map((x) => x.status)).toEqual(['CLEAN', 'CLEAN', 'CLEAN', 'CLEAN', 'CLEAN']);
  });
});
