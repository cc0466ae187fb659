/**
 * `reckon import camt053` on the real camt.053 files of ../shared/corpus/provider-formats, read in
 * place: part of the shared suite (`npm run test:shared`), skipped when ../shared is not beside the
 * repository. The main suite checks the same traps on files written in code
 * (test/import-camt053.test.ts). Runs the real CLI as a child process.
 */
import { expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { reckon, scratchPerTest } from '../helpers/cli.js';
import { importedRows, importReport, sha256File } from '../fixtures/import.js';
import { corpus, describeShared } from './shared.js';

const scratch = scratchPerTest('reckon-import-camt-');

const CAL = ['--timezone', 'Europe/Amsterdam', '--cutoff', '18:00'];
const sha = sha256File;
const csvOf = (dir: string, ds: string, p: string) => importedRows(dir, ds, 'camt053', p);
const checks = (entry: any, name: string) => entry.control_totals.filter((c: any) => c.check === name);

describeShared('camt.053 corpus', () => {
  it('imports every camt.053 file of the corpus (exit 0 or 1, datasets and report written)', () => {
    for (const name of readdirSync(corpus('camt053'))) {
      const dir = scratch();
      const r = reckon(['import', 'camt053', corpus(`camt053/${name}`), '--out', dir, ...CAL, '--bank-id', 'TESTBANK', '--json']);
      expect([0, 1], `${name}: ${r.stderr}`).toContain(r.code);
      expect(r.json.files[0].sha256).toBe(sha(corpus(`camt053/${name}`)));
      for (const ds of ['bank_statements', 'bank_statement_lines']) {
        const report = importReport(dir, ds);
        expect(report.imports[0].file).toEqual({ name, sha256: sha(corpus(`camt053/${name}`)), size_bytes: readFileSync(corpus(`camt053/${name}`)).length });
        expect(existsSync(join(dir, ds, `import-camt053-${sha(corpus(`camt053/${name}`)).slice(0, 16)}.csv`))).toBe(true);
      }
    }
  });

  it('genkgo multi-statement: two EUR statements chain 18.15 → 27.00 → 20.00, each ties', () => {
    const dir = scratch();
    const file = corpus('camt053/genkgo-v2-multi-statement.xml');
    const r = reckon(['import', 'camt053', file, '--out', dir, ...CAL, '--bank-id', 'VAYBNL2A', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(csvOf(dir, 'bank_statements', file)).toEqual([
      { business_date: '2014-12-31', timezone: 'Europe/Amsterdam', cutoff_local: '18:00', statement_id: '253EURNL26VAYB8060476890', bank_id: 'VAYBNL2A', account_id: 'NL26VAYB8060476890', currency: 'EUR', statement_seq: '12312', opening_balance_minor: '1815', closing_balance_minor: '2700', complete: 'true', file_id: `sha256:${sha(file)}` },
      // The second Stmt carries no ElctrncSeqNb/LglSeqNb: its sequence is derived (previous + 1) and the report says so.
      { business_date: '2014-12-31', timezone: 'Europe/Amsterdam', cutoff_local: '18:00', statement_id: '254EURNL26VAYB8060476890', bank_id: 'VAYBNL2A', account_id: 'NL26VAYB8060476890', currency: 'EUR', statement_seq: '12313', opening_balance_minor: '2700', closing_balance_minor: '2000', complete: 'true', file_id: `sha256:${sha(file)}` },
    ]);
    expect(csvOf(dir, 'bank_statement_lines', file)).toEqual([
      { statement_id: '253EURNL26VAYB8060476890', line_id: '1', amount_minor: '885', value_date: '2015-01-02', reference: '000000001' },
      { statement_id: '254EURNL26VAYB8060476890', line_id: '1', amount_minor: '-700', value_date: '2015-01-02', reference: '000000002' },
    ]);
    const entry = importReport(dir, 'bank_statements').imports[0];
    expect(entry.format_version).toBe('camt.053.001.02');
    expect(checks(entry, 'camt053.statement_chain')).toEqual([expect.objectContaining({ declared: '2700', recomputed: '2700', status: 'ok', scope: 'statement 253EURNL26VAYB8060476890 → 254EURNL26VAYB8060476890' })]);
    expect(checks(entry, 'camt053.statement_rollforward').map((c: any) => [c.declared, c.recomputed, c.status])).toEqual([['2700', '2700', 'ok'], ['2000', '2000', 'ok']]);
    expect(entry.mismatches).toEqual([]);
    expect(entry.statements[1].statement_seq_source).toMatch(/^derived/);
    // Period times carry +01:00 and are kept as written (the business date is the CLBD date).
    expect(entry.statements[0].detail.period).toEqual({ from: '2007-10-18T08:00:00+01:00', to: '2007-10-18T12:30:00+01:00', from_zone: 'as written', to_zone: 'as written' });
  });

  it('genkgo five decimals: 18.150 + 8.850 ≠ 27.050 is a 0.05 EUR break, kept as evidence and written unchanged', () => {
    const dir = scratch();
    const file = corpus('camt053/genkgo-v2-five-decimals.xml');
    const r = reckon(['import', 'camt053', file, '--out', dir, ...CAL, '--bank-id', 'VAYBNL2A', '--json']);
    expect(r.code, r.stderr).toBe(1);
    const [stmt] = csvOf(dir, 'bank_statements', file);
    expect([stmt.opening_balance_minor, stmt.closing_balance_minor]).toEqual(['1815', '2705']);
    expect(csvOf(dir, 'bank_statement_lines', file).map((l) => l.amount_minor)).toEqual(['885']);
    const entry = importReport(dir, 'bank_statements').imports[0];
    expect(entry.mismatches).toEqual([{
      check: 'camt053.statement_rollforward', scope: 'statement 253EURNL26VAYB8060476890', unit: 'EUR minor units (exponent 2)',
      declared: '2705', recomputed: '2700', status: 'mismatch', detail: 'recomputed − declared = -5; OPBD 1815 + 1 line(s) 885 against CLBD 2705', line: 49,
    }]);
    expect(entry.statements[0].opening.text).toBe('18.150');
    expect(r.json.files[0].control_totals).toEqual({ ok: 0, mismatch: 1, not_checked: 0 });
  });

  it('viafintech batch: TxsSummry declares 35 entries totalling 41136.40; the file holds 3 — every total reported, nothing fixed', () => {
    const dir = scratch();
    const file = corpus('camt053/viafintech-with-batch.xml');
    const r = reckon(['import', 'camt053', file, '--out', dir, ...CAL]);
    expect(r.code, r.stderr).toBe(1);
    const entry = importReport(dir, 'bank_statements').imports[0];
    const summary = entry.control_totals.filter((c: any) => c.check.startsWith('camt053.TxsSummry')).map((c: any) => [c.check, c.declared, c.recomputed, c.status]);
    expect(summary).toEqual([
      ['camt053.TxsSummry.TtlNtries.NbOfNtries', '35', '3', 'mismatch'],
      ['camt053.TxsSummry.TtlNtries.Sum', '4113640', '1244174', 'mismatch'],
      ['camt053.TxsSummry.TtlCdtNtries.NbOfNtries', '9', '2', 'mismatch'],
      ['camt053.TxsSummry.TtlCdtNtries.Sum', '2842240', '768800', 'mismatch'],
      ['camt053.TxsSummry.TtlDbtNtries.NbOfNtries', '26', '1', 'mismatch'],
      ['camt053.TxsSummry.TtlDbtNtries.Sum', '1271400', '475374', 'mismatch'],
    ]);
    // The batch entry (NbOfTxs 3, no details supplied) is one line of the amount that hit the account.
    expect(checks(entry, 'camt053.Btch.NbOfTxs')).toEqual([expect.objectContaining({ declared: '3', recomputed: '0', status: 'not_checked' })]);
    expect(csvOf(dir, 'bank_statement_lines', file)).toEqual([
      { statement_id: '2019062434566666666666666', line_id: '1', amount_minor: '-475374', value_date: '2019-05-21', reference: 'O0OpeAYTkhjerKu3eE9asw' },
      { statement_id: '2019062434566666666666666', line_id: '2', amount_minor: '268800', value_date: '2019-06-13', reference: 'GBSXX21170607391766562' },
      { statement_id: '2019062434566666666666666', line_id: '3', amount_minor: '500000', value_date: '2019-06-18', reference: '' },
    ]);
    // The bank is named by the account servicer's BIC; the timezone-less period is reported as such.
    const [stmt] = csvOf(dir, 'bank_statements', file);
    expect([stmt.bank_id, stmt.opening_balance_minor, stmt.closing_balance_minor, stmt.business_date]).toEqual(['INGBNL2A', '732980', '2303820', '2019-06-23']);
    expect(entry.statements[0].detail.period.to_zone).toBe('no zone: a local time of the statement timezone');
    expect(checks(entry, 'camt053.statement_rollforward')[0]).toMatchObject({ declared: '2303820', recomputed: '1026406', status: 'mismatch' });
  });

  it('viafintech debit: batch details 3.50 + 2.50 tie the 6.00 entry; PRCD opens when OPBD is absent', () => {
    const dir = scratch();
    const file = corpus('camt053/viafintech-with-debit.xml');
    const r = reckon(['import', 'camt053', file, '--out', dir, ...CAL]);
    expect(r.code, r.stderr).toBe(1);
    const entry = importReport(dir, 'bank_statements').imports[0];
    expect(checks(entry, 'camt053.Btch.NbOfTxs')).toEqual([expect.objectContaining({ declared: '2', recomputed: '2', status: 'ok' })]);
    expect(checks(entry, 'camt053.Btch.details_sum')).toEqual([expect.objectContaining({ declared: '600', recomputed: '600', status: 'ok' })]);
    expect(csvOf(dir, 'bank_statement_lines', file).map((l) => [l.amount_minor, l.reference])).toEqual([
      ['-200', 'EndToEndReference'], ['-300', ''], ['100', ''], ['-600', 'STZV-PmInf27122013-11:02-2'],
    ]);
    const [stmt] = csvOf(dir, 'bank_statements', file);
    expect([stmt.opening_balance_minor, stmt.closing_balance_minor, stmt.statement_seq, stmt.bank_id]).toEqual(['-3306', '2306', '130000005', 'GENODEF1PFK']);
    expect(entry.statements[0].detail.notes).toContain('opening balance taken from PRCD (no OPBD)');
    // PRCD is a debit balance (DBIT 33.06): −33.06 − 10.00 ≠ 23.06, reported, not corrected.
    expect(entry.mismatches).toEqual([expect.objectContaining({ check: 'camt053.statement_rollforward', declared: '2306', recomputed: '-4306' })]);
  });

  it.each(['genkgo-v4.xml', 'genkgo-v8.xml'])('%s: a later version is read; page 2 of 2 alone is incomplete and a CLBD in SEK is not written as EUR', (name) => {
    const dir = scratch();
    const file = corpus(`camt053/${name}`);
    const r = reckon(['import', 'camt053', file, '--out', dir, ...CAL, '--json']);
    expect(r.code, r.stderr).toBe(1);
    const entry = importReport(dir, 'bank_statements').imports[0];
    expect(entry.format_version).toBe(name === 'genkgo-v4.xml' ? 'camt.053.001.04' : 'camt.053.001.08');
    const [s] = entry.statements;
    expect(s).toMatchObject({
      statement_id: '253EURNL26VAYB8060476890', written: false, currency: 'EUR', complete: false, lines: 1, lines_sum_minor: '885',
      not_written_because: ['closing balance CLBD is in SEK, the statement in EUR'],
      incomplete_because: ['page(s) 1 not received'],
      opening: { code: 'OPBD', amount_minor: '1815', currency: 'EUR', text: '18.15', date: '2014-12-30' },
      closing: { code: 'CLBD', amount_minor: '-2700', currency: 'SEK', text: '27.00', date: '2014-12-30' },
    });
    expect(s.detail.balances.map((b: any) => [b.code, b.currency, b.amount_minor])).toEqual([['OPBD', 'EUR', '1815'], ['CLBD', 'SEK', '-2700'], ['OPAV', 'CHF', '3500'], ['CLAV', 'JPY', '-2700']]);
    expect(csvOf(dir, 'bank_statements', file)).toEqual([]);
    expect(entry.mismatches).toEqual([{ check: 'statement_not_written', scope: 'statement 253EURNL26VAYB8060476890 (account NL26VAYB8060476890)', detail: 'closing balance CLBD is in SEK, the statement in EUR' }]);
  });
});

describeShared('camt.053 corpus with account maps', () => {
  it('needs a statement calendar: without --timezone/--cutoff or an account map entry nothing is written (exit 2)', () => {
    const dir = scratch();
    const r = reckon(['import', 'camt053', corpus('camt053/genkgo-v2-multi-statement.xml'), '--out', join(dir, 'sources'), '--bank-id', 'X']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('no statement timezone and cutoff');
    expect(existsSync(join(dir, 'sources'))).toBe(false);
  });

  it('the account map names our account, bank and calendar; a re-import replaces its own rows; another file may not re-use a statement id', () => {
    const dir = scratch();
    const map = join(dir, 'map.json');
    writeFileSync(map, JSON.stringify({ accounts: [{ provider_account: 'NL26VAYB8060476890', currency: 'EUR', account_id: 'BANK-EUR-1', bank_id: 'VAYBNL2A', timezone: 'Europe/Amsterdam', cutoff: '17:30:00' }] }));
    const out = join(dir, 'sources');
    const multi = corpus('camt053/genkgo-v2-multi-statement.xml');
    for (let i = 0; i < 2; i++) {
      const r = reckon(['import', 'camt053', multi, '--out', out, '--account-map', map]);
      expect(r.code, r.stderr).toBe(0);
    }
    expect(csvOf(out, 'bank_statements', multi).map((s) => [s.account_id, s.bank_id, s.timezone, s.cutoff_local])).toEqual([
      ['BANK-EUR-1', 'VAYBNL2A', 'Europe/Amsterdam', '17:30:00'], ['BANK-EUR-1', 'VAYBNL2A', 'Europe/Amsterdam', '17:30:00'],
    ]);
    const report = importReport(out, 'bank_statements');
    expect(report.imports).toHaveLength(1);
    expect(report.imports[0].settings.account_map).toEqual({ name: 'map.json', sha256: sha(map) });
    // genkgo-v2-five-decimals holds statement 253EUR… too: refused rather than double-counted by RC04.
    const r = reckon(['import', 'camt053', corpus('camt053/genkgo-v2-five-decimals.xml'), '--out', out, '--account-map', map]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('statement_id 253EURNL26VAYB8060476890 was already imported into bank_statements from genkgo-v2-multi-statement.xml');
    expect(readdirSync(join(out, 'bank_statements')).sort()).toEqual(['_import_report.json', `import-camt053-${sha(multi).slice(0, 16)}.csv`]);
  });

  it('an account map with errors is refused with every problem named (exit 2)', () => {
    const dir = scratch();
    const map = join(dir, 'map.json');
    writeFileSync(map, JSON.stringify({ accounts: [{ provider_account: 'X', account_id: 'A|B', timezone: 'Mars/Olympus', cutoff: '25:00' }] }));
    const r = reckon(['import', 'camt053', corpus('camt053/genkgo-v4.xml'), '--out', join(dir, 'sources'), '--account-map', map]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('accounts.0.account_id');
    expect(r.stderr).toContain('accounts.0.timezone: not an IANA time zone');
    expect(r.stderr).toContain('accounts.0.cutoff');
  });
});
