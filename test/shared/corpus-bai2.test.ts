/**
 * `reckon import bai2` on the real BAI2 files of ../shared/corpus/provider-formats, read in place:
 * part of the shared suite (`npm run test:shared`), skipped when ../shared is not beside the
 * repository. The main suite checks the same traps on files written in code
 * (test/import-bai2.test.ts). Runs the real CLI as a child process.
 */
import { expect, it } from 'vitest';
import { readdirSync } from 'node:fs';
import { reckon, scratchPerTest } from '../helpers/cli.js';
import { importedRows, importReport, sha256File } from '../fixtures/import.js';
import { corpus, describeShared } from './shared.js';

const scratch = scratchPerTest('reckon-import-bai2-');

const CAL = ['--timezone', 'America/Toronto', '--cutoff', '17:00'];
const sha = sha256File;
const csvOf = (dir: string, ds: string, p: string) => importedRows(dir, ds, 'bai2', p);
const totals = (entry: any) => entry.control_totals.map((c: any) => [c.check, c.scope, c.declared, c.recomputed, c.status]);

describeShared('BAI2 corpus', () => {
  it('imports every BAI2 file of the corpus', () => {
    for (const name of readdirSync(corpus('bai2'))) {
      const dir = scratch();
      const r = reckon(['import', 'bai2', corpus(`bai2/${name}`), '--out', dir, ...CAL]);
      expect([0, 1], `${name}: ${r.stderr}`).toContain(r.code);
      expect(importReport(dir, 'bank_statement_lines').imports[0].file.sha256).toBe(sha(corpus(`bai2/${name}`)));
    }
  });

  it('moov sample1 (CAD): 49 totals 834000 over 14 records and 446000 over 9; 98 and 99 total 1280000; every count ties', () => {
    const dir = scratch();
    const file = corpus('bai2/moov-sample1.txt');
    const r = reckon(['import', 'bai2', file, '--out', dir, ...CAL, '--json']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const entry = importReport(dir, 'bank_statements').imports[0];
    const a1 = 'account 10200123456 (line 3)';
    const a2 = 'account 10200123456 (line 17)';
    const g = 'group 0004 as of 2006-03-17 (line 2)';
    expect(totals(entry)).toEqual([
      ['bai2.49.account_control_total', a1, '834000', '834000', 'ok'],
      ['bai2.49.number_of_records', a1, '14', '14', 'ok'],
      ['bai2.03.100.total_credits', a1, '208500', '208500', 'ok'],
      ['bai2.03.100.credits_item_count', a1, '3', '3', 'ok'],
      ['bai2.03.400.total_debits', a1, '208500', '208500', 'ok'],
      ['bai2.03.400.debits_item_count', a1, '8', '8', 'ok'],
      ['bai2.balance_rollforward', a1, '0', '0', 'ok'],
      ['bai2.49.account_control_total', a2, '446000', '446000', 'ok'],
      ['bai2.49.number_of_records', a2, '9', '9', 'ok'],
      ['bai2.03.100.total_credits', a2, '111500', '111500', 'ok'],
      ['bai2.03.100.credits_item_count', a2, '2', '2', 'ok'],
      ['bai2.03.400.total_debits', a2, '111500', '111500', 'ok'],
      ['bai2.03.400.debits_item_count', a2, '4', '4', 'ok'],
      ['bai2.balance_rollforward', a2, '0', '0', 'ok'],
      ['bai2.98.group_control_total', g, '1280000', '1280000', 'ok'],
      ['bai2.98.number_of_accounts', g, '2', '2', 'ok'],
      ['bai2.98.number_of_records', g, '25', '25', 'ok'],
      ['bai2.99.file_control_total', 'file', '1280000', '1280000', 'ok'],
      ['bai2.99.number_of_groups', 'file', '1', '1', 'ok'],
      ['bai2.99.number_of_records', 'file', '27', '27', 'ok'],
      ['bai2.statement_chain', expect.stringContaining('→'), '0', '0', 'ok'],
    ]);
    // Implied decimals: CAD has two, so 000000000203500 is 2035.00 CAD = 203500 minor units, signed by type code.
    const stmts = csvOf(dir, 'bank_statements', file);
    expect(stmts.map((s) => [s.statement_id, s.currency, s.bank_id, s.business_date, s.statement_seq, s.opening_balance_minor, s.closing_balance_minor])).toEqual([
      ['10200123456/2006-03-17/0004.060321.0829.001#1', 'CAD', '0004', '2006-03-17', '1', '0', '0'],
      ['10200123456/2006-03-17/0004.060321.0829.001#2', 'CAD', '0004', '2006-03-17', '2', '0', '0'],
    ]);
    const lines = csvOf(dir, 'bank_statement_lines', file);
    expect(lines.filter((l) => l.statement_id.endsWith('#1')).map((l) => [l.amount_minor, l.value_date])).toEqual([
      ['-2500', '2006-03-16'], ['-90000', '2006-03-16'], ['-500', '2006-03-16'], ['203500', '2006-03-16'], ['2500', '2006-03-16'], ['2500', '2006-03-16'],
      ['-20000', '2006-03-16'], ['-90000', '2006-03-16'], ['-2000', '2006-03-16'], ['-2500', '2006-03-16'], ['-1000', '2006-03-16'],
    ]);
    expect(entry.statements[0].detail.notes).toEqual([
      'opening balance from 040 (opening available): the account has no 010 (opening ledger)',
      'closing balance from 045 (closing available): the account has no 015 (closing ledger)',
    ]);
    expect(entry.statements[1].statement_seq_source).toBe('derived: previous statement of the account in this import + 1');
  });

  it('moov sample4: continuations joined; every declared total that disagrees is kept, accounts without balances are reported, not written', () => {
    const dir = scratch();
    const file = corpus('bai2/moov-sample4-continuations.txt');
    const r = reckon(['import', 'bai2', file, '--out', dir, ...CAL]);
    expect(r.code).toBe(1);
    const entry = importReport(dir, 'bank_statements').imports[0];
    expect(entry.counts).toEqual({ records: 116, groups: 1, accounts: 5, details: 17 });
    const mism = entry.mismatches.filter((m: any) => m.check.startsWith('bai2.9')).map((m: any) => [m.check, m.declared, m.recomputed]);
    expect(mism).toEqual([
      ['bai2.98.group_control_total', '13060195162', '13728243218'],
      ['bai2.98.number_of_accounts', '4', '5'],
      ['bai2.98.number_of_records', '16', '114'],
      ['bai2.99.file_control_total', '13060195162', '13728243218'],
      ['bai2.99.number_of_records', '18', '116'],
    ]);
    expect(entry.statements.map((s: any) => [s.provider_account, s.written])).toEqual([
      ['107049924', false], ['107049932', false], ['104108339', true], ['260000033037', false], ['280000010657', false],
    ]);
    expect(entry.statements[0].not_written_because).toEqual(['no opening balance (010 opening ledger or 040 opening available)', 'no closing balance (015 closing ledger or 045 closing available)']);
    // The written account's details: customer reference numbers become line references; 88 records add text only.
    const lines = csvOf(dir, 'bank_statement_lines', file);
    expect(lines).toHaveLength(14);
    expect(lines[0]).toEqual({ statement_id: '104108339/2023-09-06/GSBI.210706.1249.1#1', line_id: '1', amount_minor: '-200000', value_date: '2023-09-06', reference: '021000080000030' });
  });

  it('moov sample5: a negative account total, a malformed 88 record and trailing spaces are all evidence', () => {
    const dir = scratch();
    const file = corpus('bai2/moov-sample5-issue113.txt');
    const r = reckon(['import', 'bai2', file, '--out', dir, ...CAL]);
    expect(r.code).toBe(1);
    const entry = importReport(dir, 'bank_statements').imports[0];
    expect(entry.control_totals.find((c: any) => c.check === 'bai2.49.account_control_total' && c.scope.startsWith('account 107049932'))).toMatchObject({ declared: '-1260161341762', recomputed: '7999960', status: 'mismatch' });
    expect(entry.mismatches).toContainEqual({ check: 'bai2.malformed_record', scope: 'line 63', detail: "continuation record '88:EREF: 07370568132' does not start with '88,'; counted as a record of the detail at line 62, its content not read", line: 63 });
    expect(entry.notes).toContain('3 record(s) end with trailing spaces after the record; ignored');
    const [stmt] = csvOf(dir, 'bank_statements', file);
    expect([stmt.opening_balance_minor, stmt.closing_balance_minor]).toEqual(['159581194', '159381194']);
    expect(entry.control_totals.find((c: any) => c.check === 'bai2.balance_rollforward')).toMatchObject({ declared: '159381194', recomputed: '3927215946', status: 'mismatch' });
  });

  it('sample4 and sample5 name the same file (sender, creation time, file id): the second import into one folder is refused', () => {
    const dir = scratch();
    expect(reckon(['import', 'bai2', corpus('bai2/moov-sample4-continuations.txt'), '--out', dir, ...CAL]).code).toBe(1);
    const r = reckon(['import', 'bai2', corpus('bai2/moov-sample5-issue113.txt'), '--out', dir, ...CAL]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('statement_id 104108339/2023-09-06/GSBI.210706.1249.1#1 was already imported into bank_statements from moov-sample4-continuations.txt');
  });
});
