/**
 * An imported statement day reconciles through RC04 (CONTRACT §4, §8): provider files are imported
 * into a sources folder beside a ledger extract (ledger_postings, positions, executions,
 * custodian_positions with watermarks), then the real `reckon run --control RC04 --json` runs on
 * it. A bank file with defects of its own (test/fixtures/camt053.ts) shows them as exact
 * differences (the same on the public corpus file is in the shared suite); a
 * hand-written two-page statement plus a FIX log reconciles CLEAN, with the statement's Berlin
 * cutoff deciding which postings belong to it.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { reckon, scratchPerTest, reckonHere } from './helpers/cli.js';
import { byKey, findKey, fixMessage, ledgerExtract, twoPageStatement } from './fixtures/import.js';
import { writeCamt } from './fixtures/camt053.js';
import { writeDataset } from './fixtures/datasets.js';

const scratch = scratchPerTest('reckon-import-rc04-');

describe('import → RC04', () => {
  it('a camt.053 statement with its own defects (debits from a PRCD opening): the defects surface as exact RC04 differences', async () => {
    const dir = scratch();
    const sources = join(dir, 'sources');
    const map = join(dir, 'accounts.json');
    writeFileSync(map, JSON.stringify({ accounts: [{ provider_account: 'DE02100100100006820101', currency: 'EUR', account_id: 'BANK-EUR-DE', timezone: 'Europe/Berlin', cutoff: '18:00' }] }));
    const wm = '2026-11-03T00:00:00Z';
    // Berlin 18:00 on 2026-11-02 (CET, a week after the clocks went back) is 17:00Z: PS-100 is the last posting inside the statement, PS-LATE the first after it.
    ledgerExtract(sources, wm, [
      ['2026-11-02T09:00:00Z', 'PS-DEBIT-1', '1', 'BANK-EUR-DE', 'CREDIT', '200'], ['2026-11-02T09:00:00Z', 'PS-DEBIT-1', '2', 'EXPENSES', 'DEBIT', '200'],
      ['2026-11-02T10:02:00Z', 'PS-BATCH-2', '1', 'BANK-EUR-DE', 'CREDIT', '600'], ['2026-11-02T10:02:00Z', 'PS-BATCH-2', '2', 'PAYABLES', 'DEBIT', '600'],
      ['2026-11-02T11:00:00Z', 'PS-300', '1', 'BANK-EUR-DE', 'CREDIT', '300'], ['2026-11-02T11:00:00Z', 'PS-300', '2', 'EXPENSES', 'DEBIT', '300'],
      ['2026-11-02T16:59:59.999999Z', 'PS-100', '1', 'BANK-EUR-DE', 'DEBIT', '100'], ['2026-11-02T16:59:59.999999Z', 'PS-100', '2', 'INCOME', 'CREDIT', '100'],
      ['2026-11-02T17:00:00Z', 'PS-LATE', '1', 'BANK-EUR-DE', 'DEBIT', '999'], ['2026-11-02T17:00:00Z', 'PS-LATE', '2', 'INCOME', 'CREDIT', '999'],
    ]);
    writeDataset(sources, 'venue_fills', [], wm);
    const file = writeCamt(dir, 'debits-from-prcd.xml');
    const imp = await reckonHere(['import', 'camt053', file, '--out', sources, '--account-map', map, '--watermark', wm]);
    expect(imp.code, imp.stdout + imp.stderr).toBe(1); // the file's own roll-forward does not tie
    const run = await reckonHere(['run', '--control', 'RC04', '--window', '2026-11-02T00:00:00Z/2026-11-03T00:00:00Z', '--sources', sources, '--store', join(dir, 'store'), '--json', '--quiet']);
    expect(run.code, run.stderr).toBe(1);
    const [rc04] = run.json.controls;
    expect(rc04.status).toBe('BREAKS');
    expect(byKey(rc04.differences)).toEqual([
      ['BANK_LINE_UNMATCHED', 'STMT-DE-20261102-5|2', expect.stringMatching(/-300 .*no reference/)],
      ['BANK_LINE_UNMATCHED', 'STMT-DE-20261102-5|3', expect.stringMatching(/100 .*no reference/)],
      // Detail texts are RC04's; the kind, key and the amounts in them are what this test pins.
      ['LEDGER_CASH_UNMATCHED', 'PS-100', expect.stringMatching(/nets 100 .*STMT-DE-20261102-5/)],
      ['LEDGER_CASH_UNMATCHED', 'PS-300', expect.stringMatching(/nets -300 .*STMT-DE-20261102-5/)],
      ['STATEMENT_ROLLFORWARD_MISMATCH', 'STMT-DE-20261102-5', expect.stringMatching(/-3306 .*-1000 .*2306/)],
    ]);
    // Lines −1000 equal the ledger's DEBIT − CREDIT inside [2026-11-01T17:00Z, 2026-11-02T17:00Z): no BANK_CASH_MISMATCH.
    expect(rc04.totals.bank_statement_cash_minor).toEqual({ 'BANK-EUR-DE|EUR': '-1000' });
    expect(rc04.totals.ledger_cash_minor).toEqual({ 'BANK-EUR-DE|EUR': '-1000' });
    // The run's manifest carries the import report: the provider file's SHA-256 and its mismatch.
    const manifest = JSON.parse(readFileSync(run.json.manifest.path, 'utf8'));
    const report = manifest.inputs?.sources?.datasets?.bank_statements?.import_report ?? findKey(manifest, 'import_report');
    expect(report.imports[0].file).toMatchObject({ name: 'debits-from-prcd.xml', sha256: createHash('sha256').update(readFileSync(file)).digest('hex') });
    expect(report.imports[0].mismatches.map((m: any) => m.check)).toEqual(['camt053.statement_rollforward']);
  });

  it('a two-page camt.053 statement and a FIX log, imported together with their ledger extract, reconcile CLEAN', async () => {
    const dir = scratch();
    const sources = join(dir, 'sources');
    const map = join(dir, 'accounts.json');
    writeFileSync(map, JSON.stringify({ accounts: [{ provider_account: 'DE89370400440532013000', account_id: 'BANK-EUR-1', timezone: 'Europe/Berlin', cutoff: '17:30' }] }));
    const wm = '2026-11-03T00:00:00Z';
    // Berlin 17:30 on 2026-11-02 (CET) is 16:30Z: PS-1004 at 16:30Z belongs to the next statement day.
    ledgerExtract(sources, wm, [
      ['2026-11-02T08:00:00Z', 'PS-1001', '1', 'BANK-EUR-1', 'DEBIT', '25050'], ['2026-11-02T08:00:00Z', 'PS-1001', '2', 'CLIENT-1', 'CREDIT', '25050'],
      ['2026-11-02T11:00:00Z', 'PS-1002', '1', 'BANK-EUR-1', 'CREDIT', '6000'], ['2026-11-02T11:00:00Z', 'PS-1002', '2', 'BANK-EUR-1', 'CREDIT', '4000'],
      ['2026-11-02T11:00:00Z', 'PS-1002', '3', 'PAYABLES', 'DEBIT', '10000'],
      ['2026-11-02T16:29:59Z', 'PS-1003', '1', 'BANK-EUR-1', 'DEBIT', '2500'], ['2026-11-02T16:29:59Z', 'PS-1003', '2', 'FEES', 'CREDIT', '2500'],
      ['2026-11-02T16:30:00Z', 'PS-1004', '1', 'BANK-EUR-1', 'DEBIT', '5000'], ['2026-11-02T16:30:00Z', 'PS-1004', '2', 'CLIENT-2', 'CREDIT', '5000'],
    ]);
    const [p1, p2] = twoPageStatement(dir);
    const camt = await reckonHere(['import', 'camt053', p1, p2, '--out', sources, '--account-map', map, '--watermark', wm]);
    expect(camt.code, camt.stdout + camt.stderr).toBe(0);
    const body = (seq: number, exec: string, qty: string, time: string): [number, string][] => [
      [35, '8'], [49, 'XLON'], [56, 'OURFIRM'], [34, String(seq)], [52, time], [37, 'V1'], [11, 'ORD-1'], [17, exec], [150, 'F'], [39, '1'],
      [55, 'VOD.L'], [54, '1'], [32, qty], [31, '101.25'], [15, 'GBP'], [60, time],
    ];
    const log = join(dir, 'xlon.log');
    writeFileSync(log, [
      fixMessage('FIX.4.4', [[35, '0'], [49, 'XLON'], [56, 'OURFIRM'], [34, '1'], [52, '20261102-09:00:00']]),
      fixMessage('FIX.4.4', body(2, 'EX-1', '100', '20261102-09:30:00.250')),
      fixMessage('FIX.4.4', [[35, '0'], [49, 'XLON'], [56, 'OURFIRM'], [34, '3'], [52, '20261102-09:30:30']]),
      fixMessage('FIX.4.4', body(4, 'EX-2', '50', '20261102-09:31:00')),
      '',
    ].join('\n'));
    const fix = await reckonHere(['import', 'fix', log, '--out', sources, '--watermark', wm]);
    expect(fix.code, fix.stdout + fix.stderr).toBe(0);
    const run = await reckonHere(['run', '--control', 'RC04', '--window', '2026-11-02T00:00:00Z/2026-11-03T00:00:00Z', '--sources', sources, '--store', join(dir, 'store'), '--json', '--quiet']);
    expect(run.code, run.stderr + JSON.stringify(run.json?.controls?.[0]?.differences)).toBe(0);
    const [rc04] = run.json.controls;
    expect(rc04.status).toBe('CLEAN');
    expect(rc04.differences).toEqual([]);
    expect(rc04.totals.bank_statement_cash_minor).toEqual({ 'BANK-EUR-1|EUR': '17550' });
    expect(rc04.totals.ledger_cash_minor).toEqual({ 'BANK-EUR-1|EUR': '17550' });
    expect(rc04.totals.venue_fill_count_by_venue).toEqual({ XLON: '2' });
    expect(rc04.totals.venue_fill_qty_by_venue).toEqual({ XLON: '150' });

    // The same day with the statement read in UTC (cutoff 17:30Z): PS-1004 now falls inside the statement.
    const utcMap = join(dir, 'utc.json');
    writeFileSync(utcMap, JSON.stringify({ accounts: [{ provider_account: 'DE89370400440532013000', account_id: 'BANK-EUR-1', timezone: 'UTC', cutoff: '17:30' }] }));
    expect((await reckonHere(['import', 'camt053', p1, p2, '--out', sources, '--account-map', utcMap])).code).toBe(0);
    const utc = await reckonHere(['run', '--control', 'RC04', '--window', '2026-11-02T00:00:00Z/2026-11-03T00:00:00Z', '--sources', sources, '--store', join(dir, 'store2'), '--json', '--quiet']);
    expect(byKey(utc.json.controls[0].differences).map((d) => [d[0], d[1]])).toEqual([
      ['BANK_CASH_MISMATCH', 'STMT-20261102'], ['LEDGER_CASH_UNMATCHED', 'PS-1004'],
    ]);
  });
});
