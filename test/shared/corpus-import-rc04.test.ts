/**
 * The public corpus's camt.053 file with debits (viafintech-with-debit.xml, read in place from
 * ../shared) imported beside a ledger extract and reconciled by RC04: part of the shared suite
 * (`npm run test:shared`), skipped when ../shared is not beside the repository. The main suite runs
 * the same check on a file written in code (test/import-rc04.test.ts).
 */
import { expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { reckon, scratchPerTest } from '../helpers/cli.js';
import { writeDataset } from '../fixtures/datasets.js';
import { byKey, findKey, ledgerExtract } from '../fixtures/import.js';
import { corpus, describeShared } from './shared.js';

const scratch = scratchPerTest('reckon-import-rc04-');

describeShared('import → RC04 on the corpus', () => {
  it('viafintech-with-debit (camt.053 from the corpus): the bank file\'s own defects surface as exact RC04 differences', () => {
    const dir = scratch();
    const sources = join(dir, 'sources');
    const map = join(dir, 'accounts.json');
    writeFileSync(map, JSON.stringify({ accounts: [{ provider_account: 'DE14740618130000033626', currency: 'EUR', account_id: 'BANK-EUR-DE', timezone: 'Europe/Berlin', cutoff: '18:00' }] }));
    const wm = '2013-12-28T00:00:00Z';
    // Berlin 18:00 on 2013-12-27 is 17:00Z: PS-100 is the last posting inside the statement, PS-LATE the first after it.
    ledgerExtract(sources, wm, [
      ['2013-12-27T09:00:00Z', 'EndToEndReference', '1', 'BANK-EUR-DE', 'CREDIT', '200'], ['2013-12-27T09:00:00Z', 'EndToEndReference', '2', 'EXPENSES', 'DEBIT', '200'],
      ['2013-12-27T10:02:00Z', 'STZV-PmInf27122013-11:02-2', '1', 'BANK-EUR-DE', 'CREDIT', '600'], ['2013-12-27T10:02:00Z', 'STZV-PmInf27122013-11:02-2', '2', 'PAYABLES', 'DEBIT', '600'],
      ['2013-12-27T11:00:00Z', 'PS-300', '1', 'BANK-EUR-DE', 'CREDIT', '300'], ['2013-12-27T11:00:00Z', 'PS-300', '2', 'EXPENSES', 'DEBIT', '300'],
      ['2013-12-27T16:59:59.999999Z', 'PS-100', '1', 'BANK-EUR-DE', 'DEBIT', '100'], ['2013-12-27T16:59:59.999999Z', 'PS-100', '2', 'INCOME', 'CREDIT', '100'],
      ['2013-12-27T17:00:00Z', 'PS-LATE', '1', 'BANK-EUR-DE', 'DEBIT', '999'], ['2013-12-27T17:00:00Z', 'PS-LATE', '2', 'INCOME', 'CREDIT', '999'],
    ]);
    writeDataset(sources, 'venue_fills', [], wm);
    const imp = reckon(['import', 'camt053', corpus('camt053/viafintech-with-debit.xml'), '--out', sources, '--account-map', map, '--watermark', wm]);
    expect(imp.code, imp.stdout + imp.stderr).toBe(1); // the file's own roll-forward does not tie
    const run = reckon(['run', '--control', 'RC04', '--window', '2013-12-27T00:00:00Z/2013-12-28T00:00:00Z', '--sources', sources, '--store', join(dir, 'store'), '--json', '--quiet']);
    expect(run.code, run.stderr).toBe(1);
    const [rc04] = run.json.controls;
    expect(rc04.status).toBe('BREAKS');
    expect(byKey(rc04.differences)).toEqual([
      ['BANK_LINE_UNMATCHED', '0352C5320131227220503|2', expect.stringMatching(/-300 .*no reference/)],
      ['BANK_LINE_UNMATCHED', '0352C5320131227220503|3', expect.stringMatching(/100 .*no reference/)],
      // Detail texts are RC04's; the kind, key and the amounts in them are what this test pins.
      ['LEDGER_CASH_UNMATCHED', 'PS-100', expect.stringMatching(/nets 100 .*0352C5320131227220503/)],
      ['LEDGER_CASH_UNMATCHED', 'PS-300', expect.stringMatching(/nets -300 .*0352C5320131227220503/)],
      ['STATEMENT_ROLLFORWARD_MISMATCH', '0352C5320131227220503', expect.stringMatching(/-3306 .*-1000 .*2306/)],
    ]);
    // Lines −1000 equal the ledger's DEBIT − CREDIT inside [2013-12-26T17:00Z, 2013-12-27T17:00Z): no BANK_CASH_MISMATCH.
    expect(rc04.totals.bank_statement_cash_minor).toEqual({ 'BANK-EUR-DE|EUR': '-1000' });
    expect(rc04.totals.ledger_cash_minor).toEqual({ 'BANK-EUR-DE|EUR': '-1000' });
    // The run's manifest carries the import report: the provider file's SHA-256 and its mismatch.
    const manifest = JSON.parse(readFileSync(run.json.manifest.path, 'utf8'));
    const report = manifest.inputs?.sources?.datasets?.bank_statements?.import_report ?? findKey(manifest, 'import_report');
    expect(report.imports[0].file).toMatchObject({ name: 'viafintech-with-debit.xml', sha256: createHash('sha256').update(readFileSync(corpus('camt053/viafintech-with-debit.xml'))).digest('hex') });
    expect(report.imports[0].mismatches.map((m: any) => m.check)).toEqual(['camt053.statement_rollforward']);
  });
});
