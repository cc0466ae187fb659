/**
 * `reckon import bai2` on BAI2 files written in code (test/fixtures/bai2.ts: two CAD reports whose
 * trailers tie, continuations with trailers that do not, the same file resent with a malformed
 * record) and on hand-written files (a zero-decimal currency, interim data, a detail type code
 * without a direction). Runs the real CLI as a child process. The same checks on the public
 * corpus files are in the shared suite (test/shared/).
 */
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { reckon, scratchPerTest, reckonHere } from './helpers/cli.js';
import { importedRows, importReport, lineOf, sha256File } from './fixtures/import.js';
import { BAI2_FILES, writeBai2 } from './fixtures/bai2.js';

const scratch = scratchPerTest('reckon-import-bai2-');

const CAL = ['--timezone', 'America/Toronto', '--cutoff', '17:00'];
const sha = sha256File;
const csvOf = (dir: string, ds: string, p: string) => importedRows(dir, ds, 'bai2', p);
const totals = (entry: any) => entry.control_totals.map((c: any) => [c.check, c.scope, c.declared, c.recomputed, c.status]);

describe('BAI2 files', () => {
  it('imports every BAI2 fixture', async () => {
    for (const name of Object.keys(BAI2_FILES)) {
      const dir = scratch();
      const file = writeBai2(dir, name);
      const out = join(dir, 'sources');
      const r = await reckonHere(['import', 'bai2', file, '--out', out, ...CAL]);
      expect([0, 1], `${name}: ${r.stderr}`).toContain(r.code);
      expect(importReport(out, 'bank_statement_lines').imports[0].file.sha256).toBe(sha(file));
    }
  });

  it('two CAD reports: 49 totals 834000 over 14 records and 446000 over 9; 98 and 99 total 1280000; every count ties', async () => {
    const dir = scratch();
    const file = writeBai2(dir, 'cad-reports.bai');
    const out = join(dir, 'sources');
    const r = await reckonHere(['import', 'bai2', file, '--out', out, ...CAL, '--json']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const entry = importReport(out, 'bank_statements').imports[0];
    const a1 = 'account 10200999999 (line 3)';
    const a2 = 'account 10200999999 (line 17)';
    const g = 'group RECK as of 2026-11-02 (line 2)';
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
    const stmts = csvOf(out, 'bank_statements', file);
    expect(stmts.map((s) => [s.statement_id, s.currency, s.bank_id, s.business_date, s.statement_seq, s.opening_balance_minor, s.closing_balance_minor])).toEqual([
      ['10200999999/2026-11-02/RECK.261103.0829.001#1', 'CAD', 'RECK', '2026-11-02', '1', '0', '0'],
      ['10200999999/2026-11-02/RECK.261103.0829.001#2', 'CAD', 'RECK', '2026-11-02', '2', '0', '0'],
    ]);
    const lines = csvOf(out, 'bank_statement_lines', file);
    expect(lines.filter((l) => l.statement_id.endsWith('#1')).map((l) => [l.amount_minor, l.value_date])).toEqual([
      ['-2500', '2026-11-01'], ['-90000', '2026-11-01'], ['-500', '2026-11-01'], ['203500', '2026-11-01'], ['2500', '2026-11-01'], ['2500', '2026-11-01'],
      ['-20000', '2026-11-01'], ['-90000', '2026-11-01'], ['-2000', '2026-11-01'], ['-2500', '2026-11-01'], ['-1000', '2026-11-01'],
    ]);
    expect(entry.statements[0].detail.notes).toEqual([
      'opening balance from 040 (opening available): the account has no 010 (opening ledger)',
      'closing balance from 045 (closing available): the account has no 015 (closing ledger)',
    ]);
    expect(entry.statements[1].statement_seq_source).toBe('derived: previous statement of the account in this import + 1');
  });

  it('continuations joined; every declared total that disagrees is kept, accounts without balances are reported, not written', async () => {
    const dir = scratch();
    const file = writeBai2(dir, 'continuations.bai');
    const out = join(dir, 'sources');
    const r = await reckonHere(['import', 'bai2', file, '--out', out, ...CAL]);
    expect(r.code).toBe(1);
    const entry = importReport(out, 'bank_statements').imports[0];
    expect(entry.counts).toEqual({ records: 65, groups: 1, accounts: 5, details: 17 });
    const mism = entry.mismatches.filter((m: any) => m.check.startsWith('bai2.9')).map((m: any) => [m.check, m.declared, m.recomputed]);
    // The bank's trailers total two accounts (13053325440 + 6869722) and count neither the 88 records nor the fifth account.
    expect(mism).toEqual([
      ['bai2.98.group_control_total', '13060195162', '13728243218'],
      ['bai2.98.number_of_accounts', '4', '5'],
      ['bai2.98.number_of_records', '16', '63'],
      ['bai2.99.file_control_total', '13060195162', '13728243218'],
      ['bai2.99.number_of_records', '18', '65'],
    ]);
    expect(entry.statements.map((s: any) => [s.provider_account, s.written])).toEqual([
      ['700000001', false], ['700000002', false], ['700000003', true], ['700000004', false], ['700000005', false],
    ]);
    expect(entry.statements[0].not_written_because).toEqual(['no opening balance (010 opening ledger or 040 opening available)', 'no closing balance (015 closing ledger or 045 closing available)']);
    // The written account's details: customer reference numbers become line references; 88 records add text only.
    const lines = csvOf(out, 'bank_statement_lines', file);
    expect(lines).toHaveLength(14);
    expect(lines[0]).toEqual({ statement_id: '700000003/2026-11-02/RECKBANK.261102.1249.1#1', line_id: '1', amount_minor: '-200000', value_date: '2026-11-02', reference: 'RETURN-0001' });
  });

  it('resent with a negative account total, a malformed 88 record and trailing spaces: all evidence', async () => {
    const dir = scratch();
    const file = writeBai2(dir, 'continuations-resent.bai');
    const out = join(dir, 'sources');
    const r = await reckonHere(['import', 'bai2', file, '--out', out, ...CAL]);
    expect(r.code).toBe(1);
    const entry = importReport(out, 'bank_statements').imports[0];
    expect(entry.control_totals.find((c: any) => c.check === 'bai2.49.account_control_total' && c.scope.startsWith('account 700000002'))).toMatchObject({ declared: '-1260161341762', recomputed: '7999960', status: 'mismatch' });
    const malformed = lineOf(readFileSync(file, 'utf8'), '88:EREF');
    expect(malformed).toBe(36);
    expect(entry.mismatches).toContainEqual({ check: 'bai2.malformed_record', scope: `line ${malformed}`, detail: `continuation record '88:EREF: 07370568132' does not start with '88,'; counted as a record of the detail at line ${malformed - 1}, its content not read`, line: malformed });
    expect(entry.notes).toContain('3 record(s) end with trailing spaces after the record; ignored');
    const [stmt] = csvOf(out, 'bank_statements', file);
    expect([stmt.opening_balance_minor, stmt.closing_balance_minor]).toEqual(['159581194', '159381194']);
    // 159581194 + credits 457231 − debits 30360405 = 129678020 against a closing 159381194.
    expect(entry.control_totals.find((c: any) => c.check === 'bai2.balance_rollforward')).toMatchObject({ declared: '159381194', recomputed: '129678020', status: 'mismatch' });
  });

  it('the resent file names the same file (sender, creation time, file id): the second import into one folder is refused', async () => {
    const dir = scratch();
    const out = join(dir, 'sources');
    expect((await reckonHere(['import', 'bai2', writeBai2(dir, 'continuations.bai'), '--out', out, ...CAL])).code).toBe(1);
    const r = await reckonHere(['import', 'bai2', writeBai2(dir, 'continuations-resent.bai'), '--out', out, ...CAL]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('statement_id 700000003/2026-11-02/RECKBANK.261102.1249.1#1 was already imported into bank_statements from continuations.bai');
  });
});

function bai2File(lines: string[]): string {
  return `${lines.join('\n')}\n`;
}

describe('BAI2 hand-written', () => {
  it('JPY has no minor digits: 150000 is ¥150000; interim same-day data (modifier 3) is written as not complete', async () => {
    const dir = scratch();
    const file = join(dir, 'jpy.bai');
    writeFileSync(file, bai2File([
      '01,BANKJP,OURCO,261102,1800,7,,,2/',
      '02,OURCO,BANKJP,1,261102,1700,JPY,3/',
      '03,ACC-JP-1,,010,+1000000,,,015,+1145000,,,100,150000,1,,400,5000,1,/',
      '16,195,150000,,BR1,PS-3001,INCOMING WIRE/',
      '16,495,5000,,BR2,,FEE/',
      '49,2455000,4/',
      '98,2455000,1,6/',
      '99,2455000,1,8/',
    ]));
    const out = join(dir, 'sources');
    const r = await reckonHere(['import', 'bai2', file, '--out', out, '--timezone', 'Asia/Tokyo', '--cutoff', '17:00', '--json']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(csvOf(out, 'bank_statements', file)).toEqual([{
      business_date: '2026-11-02', timezone: 'Asia/Tokyo', cutoff_local: '17:00', statement_id: 'ACC-JP-1/2026-11-02/BANKJP.261102.1800.7#1', bank_id: 'BANKJP', account_id: 'ACC-JP-1',
      currency: 'JPY', statement_seq: '1', opening_balance_minor: '1000000', closing_balance_minor: '1145000', complete: 'false', file_id: `sha256:${sha(file)}`,
    }]);
    expect(csvOf(out, 'bank_statement_lines', file).map((l) => [l.amount_minor, l.reference])).toEqual([['150000', 'PS-3001'], ['-5000', '']]);
    expect(importReport(out, 'bank_statements').imports[0].statements[0].incomplete_because).toEqual(['as-of date modifier 3 (interim same-day data)']);
  });

  it('a detail type code without a direction (700–799) is refused and nothing is written', async () => {
    const dir = scratch();
    const file = join(dir, 'loan.bai');
    writeFileSync(file, bai2File(['01,B,O,261102,1800,1,,,2/', '02,O,B,1,261102,,USD,/', '03,A,,010,0,,,015,0,,/', '16,701,500,,,,LOAN/', '49,500,3/', '98,500,1,5/', '99,500,1,7/']));
    const r = await reckonHere(['import', 'bai2', file, '--out', join(dir, 'sources'), ...CAL]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain("loan.bai:4: detail type code '701' is neither a credit (100–399, 920–959) nor a debit (400–699, 960–999)");
    expect(existsSync(join(dir, 'sources'))).toBe(false);
  });
});
