/**
 * `reckon import mt940` on MT940 files written in code (test/fixtures/mt940.ts: SEPA statements
 * over several pages with RC/RD marks, amount forms, a bank's dialect) and on hand-written
 * messages (SWIFT envelope, RD marks, MT950, pages in two files, a three-decimal currency). Runs
 * the real CLI as a child process. The same checks on the public corpus files are in the shared
 * suite (test/shared/).
 */
import { describe, expect, it } from 'vitest';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { reckon, scratchPerTest, reckonHere } from './helpers/cli.js';
import { importedRows, importReport, sha256File } from './fixtures/import.js';
import { MT940_FILES, writeMt940 } from './fixtures/mt940.js';

const scratch = scratchPerTest('reckon-import-mt940-');

const CAL = ['--timezone', 'Europe/Berlin', '--cutoff', '18:00', '--bank-id', 'TESTBANK'];
const sha = sha256File;
const csvOf = (dir: string, ds: string, p: string) => importedRows(dir, ds, 'mt940', p);

describe('MT940 files', () => {
  it('imports every MT940 fixture', async () => {
    for (const name of Object.keys(MT940_FILES)) {
      const dir = scratch();
      const file = writeMt940(dir, name);
      const out = join(dir, 'sources');
      const r = await reckonHere(['import', 'mt940', file, '--out', out, ...CAL]);
      expect([0, 1], `${name}: ${r.stderr}`).toContain(r.code);
      expect(importReport(out, 'bank_statements').imports[0].file.sha256).toBe(sha(file));
    }
  });

  it('SEPA statements: every statement ties opening + lines = closing, pages :62M:/:60M: joined, RC read as a debit', async () => {
    const dir = scratch();
    const file = writeMt940(dir, 'sepa-statements.sta');
    const out = join(dir, 'sources');
    const r = await reckonHere(['import', 'mt940', file, '--out', out, ...CAL, '--json']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const stmts = csvOf(out, 'bank_statements', file);
    const lines = csvOf(out, 'bank_statement_lines', file);
    expect(stmts).toHaveLength(5);
    expect(lines).toHaveLength(30);
    // An independent re-computation over the written rows: every statement ties, every one complete.
    for (const s of stmts) {
      const sum = lines.filter((l) => l.statement_id === s.statement_id).reduce((a, l) => a + BigInt(l.amount_minor), 0n);
      expect(BigInt(s.opening_balance_minor) + sum, s.statement_id).toBe(BigInt(s.closing_balance_minor));
      expect(s.complete).toBe('true');
    }
    const entry = importReport(out, 'bank_statements').imports[0];
    const byCheck = (name: string) => entry.control_totals.filter((c: any) => c.check === name);
    expect(byCheck('mt940.statement_rollforward')).toHaveLength(5);
    expect(byCheck('mt940.statement_rollforward').every((c: any) => c.status === 'ok')).toBe(true);
    expect(byCheck('mt940.page_chain').map((c: any) => [c.scope, c.declared, c.status])).toEqual([
      ['statement 37040044/0532013100/00042/2026-11-02 page 1 → 2', '-3050383', 'ok'],
      ['statement 37040044/0532013200/00042/2026-11-02 page 1 → 2', '-135894552', 'ok'],
      ['statement 37040044/0532013300/00042/2026-11-02 page 1 → 2', '-601673746', 'ok'],
      ['statement 37040044/0532013300/00042/2026-11-02 page 2 → 3', '-651699946', 'ok'],
    ]);
    expect(entry.mismatches).toEqual([]);
    // The first statement: debit balances and an RC line (reversal of a credit = money out).
    const first = stmts[0];
    expect(first).toMatchObject({ statement_id: '37040044/0532013000/00042/2026-11-02', account_id: '37040044/0532013000', statement_seq: '42', opening_balance_minor: '-123471836', closing_balance_minor: '-123762823', business_date: '2026-11-02' });
    const firstLines = lines.filter((l) => l.statement_id === first.statement_id);
    expect(firstLines.map((l) => l.amount_minor)).toEqual(['30000', '33533', '1500000', '6629508', '91531155', '-20488', '-99994695']);
    expect(firstLines.map((l) => l.reference)).toEqual(['PAY 40005 MSGID', 'PAY 44003 MSGID', 'PAY 40005 MSGID', '', 'PAY 44003 MSGID', '', '']);
    // Read RC as a credit and this statement no longer ties: the reading is the one the balances confirm.
    const sumWrong = firstLines.reduce((a, l) => a + (l.amount_minor === '-20488' ? 20488n : BigInt(l.amount_minor)), 0n);
    expect(BigInt(first.opening_balance_minor) + sumWrong).not.toBe(BigInt(first.closing_balance_minor));
    // A three-page statement is one row whose lines run across the pages.
    const three = entry.statements.find((s: any) => s.statement_id === '37040044/0532013300/00042/2026-11-02');
    expect(three.detail.pages.map((p: any) => p.page)).toEqual([1, 2, 3]);
    expect(three.complete).toBe(true);
  });

  it('amount forms: 123456,78 / 123456,7 / 123456, / 0,12 / 00,12 / 001,12 read exactly; openings alone are not written', async () => {
    const dir = scratch();
    const file = writeMt940(dir, 'amount-forms.sta');
    const out = join(dir, 'sources');
    const r = await reckonHere(['import', 'mt940', file, '--out', out, ...CAL]);
    expect(r.code).toBe(1);
    const entry = importReport(out, 'bank_statements').imports[0];
    expect(entry.statements.map((s: any) => [s.opening.text, s.opening.amount_minor, s.opening.date, s.written])).toEqual([
      ['C261102EUR123456,78', '12345678', '2026-11-02', false],
      ['C261102EUR123456,7', '12345670', '2026-11-02', false],
      ['C261102EUR123456,', '12345600', '2026-11-02', false],
      ['C261102EUR0,12', '12', '2026-11-02', false],
      ['C261102EUR00,12', '12', '2026-11-02', false],
      ['C261102EUR001,12', '112', '2026-11-02', false],
    ]);
    expect(entry.statements[0].not_written_because).toEqual(['no account identification (:25:)', 'no closing balance (:62F: or :62M:)', 'no statement number (:28C:)']);
    expect(csvOf(out, 'bank_statements', file)).toEqual([]);
  });

  it('a bank\'s dialect: header lines skipped and noted; both statements written; the file does not tie and says so', async () => {
    const dir = scratch();
    const file = writeMt940(dir, 'bank-dialect.sta');
    const out = join(dir, 'sources');
    const r = await reckonHere(['import', 'mt940', file, '--out', out, ...CAL]);
    expect(r.code).toBe(1);
    const entry = importReport(out, 'bank_statements').imports[0];
    expect(entry.notes[0]).toMatch(/^lines outside any message, skipped: line 1: 'RECKNL2A', line 2: '940', line 3: 'RECKNL2A'/);
    expect(csvOf(out, 'bank_statements', file).map((s) => [s.statement_id, s.statement_seq, s.opening_balance_minor, s.closing_balance_minor, s.complete])).toEqual([
      ['123456789/31001/2026-11-02', '31001', '323628', '87684', 'true'],
      // Page 1 that opens with :60M: (an intermediate balance): an earlier page is missing.
      ['123456789/31002/2026-11-03', '31002', '287684', '184975', 'false'],
    ]);
    expect(csvOf(out, 'bank_statement_lines', file).map((l) => l.amount_minor)).toEqual(['-900', '-1159', '-1163', '-1180', '-1345', '-1549', '-10700', '-14148', '-949', '-1500']);
    expect(entry.mismatches.map((m: any) => [m.check, m.declared, m.recomputed])).toEqual([
      ['mt940.statement_rollforward', '87684', '291484'],
      ['mt940.statement_rollforward', '184975', '285235'],
      ['mt940.statement_chain', '287684', '87684'],
    ]);
  });
});

const BLOCKS = (mt: string) => `{1:F01OURCOMPAXXX0000000000}{2:O${mt}1200261102DEUTDEFFAXXX00000000002611021200N}{4:`;

describe('MT940 hand-written', () => {
  it('SWIFT envelope, RD read as a credit, supplementary details, :64:; the sender BIC names the bank', async () => {
    const dir = scratch();
    const file = join(dir, 'stmt.sta');
    writeFileSync(file, [
      BLOCKS('940'),
      ':20:STMT20261102', ':25:DE44500105175407324931', ':28C:00042/001', ':60F:C261101EUR1000,00',
      ':61:2611021102C250,50NTRFPS-2001//BANKREF1', ':86:incoming payment',
      ':61:2611021102RD25,NTRFPS-2002', ':86:reversal of a debit',
      ':61:2611021102D100,NTRFPS-2003//B3', 'supplementary details line', ':86:outgoing',
      ':62F:C261102EUR1175,50', ':64:C261102EUR1175,5', '-}', '',
    ].join('\r\n'));
    const out = join(dir, 'sources');
    const r = await reckonHere(['import', 'mt940', file, '--out', out, '--timezone', 'Europe/Berlin', '--cutoff', '18:00']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(csvOf(out, 'bank_statements', file)).toEqual([{
      business_date: '2026-11-02', timezone: 'Europe/Berlin', cutoff_local: '18:00', statement_id: 'DE44500105175407324931/00042/2026-11-02', bank_id: 'DEUTDEFF',
      account_id: 'DE44500105175407324931', currency: 'EUR', statement_seq: '42', opening_balance_minor: '100000', closing_balance_minor: '117550', complete: 'true', file_id: `sha256:${sha(file)}`,
    }]);
    expect(csvOf(out, 'bank_statement_lines', file)).toEqual([
      { statement_id: 'DE44500105175407324931/00042/2026-11-02', line_id: '1', amount_minor: '25050', value_date: '2026-11-02', reference: 'PS-2001' },
      { statement_id: 'DE44500105175407324931/00042/2026-11-02', line_id: '2', amount_minor: '2500', value_date: '2026-11-02', reference: 'PS-2002' },
      { statement_id: 'DE44500105175407324931/00042/2026-11-02', line_id: '3', amount_minor: '-10000', value_date: '2026-11-02', reference: 'PS-2003' },
    ]);
    const entry = importReport(out, 'bank_statements').imports[0];
    expect(entry.format_version).toBe('MT940');
    expect(entry.statements[0].detail.balances.map((b: any) => [b.tag, b.amount_minor])).toEqual([['60F', '100000'], ['62F', '117550'], ['64', '117550']]);
  });

  it('MT950 pages in two files: joined into one statement when imported together, the page chain checked', async () => {
    const dir = scratch();
    const a = join(dir, 'p1.sta');
    const b = join(dir, 'p2.sta');
    writeFileSync(a, [BLOCKS('950'), ':20:P1', ':25:ACC-1', ':28C:7/1', ':60F:D261101USD50,', ':61:261102C70,NTRFX1', ':62M:C261102USD20,', '-}'].join('\n'));
    writeFileSync(b, [BLOCKS('950'), ':20:P2', ':25:ACC-1', ':28C:7/2', ':60M:C261102USD20,', ':61:261102D5,25NTRFX2', ':62F:C261102USD14,75', '-}'].join('\n'));
    const out = join(dir, 'sources');
    const r = await reckonHere(['import', 'mt950', a, b, '--out', out, ...CAL]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(csvOf(out, 'bank_statements', a).map((s) => [s.statement_id, s.opening_balance_minor, s.closing_balance_minor, s.complete, s.bank_id])).toEqual([['ACC-1/7/2026-11-02', '-5000', '1475', 'true', 'TESTBANK']]);
    expect(csvOf(out, 'bank_statement_lines', a).map((l) => l.amount_minor)).toEqual(['7000', '-525']);
    const byName = Object.fromEntries(importReport(out, 'bank_statements').imports.map((e: any) => [e.file.name, e]));
    expect(byName['p1.sta'].format_version).toBe('MT950');
    expect(byName['p2.sta'].control_totals.find((c: any) => c.check === 'mt940.page_chain')).toMatchObject({ declared: '2000', recomputed: '2000', status: 'ok' });
    // Page 2 imported alone: an intermediate opening, so not complete.
    const out2 = join(dir, 'sources2');
    expect((await reckonHere(['import', 'mt940', b, '--out', out2, ...CAL])).code).toBe(0);
    expect(csvOf(out2, 'bank_statements', b)[0].complete).toBe('false');
  });

  it('a three-decimal currency: 1,2340 BHD is 1234 fils; 1,2345 BHD is refused and nothing is written', async () => {
    const dir = scratch();
    const ok = join(dir, 'ok.sta');
    writeFileSync(ok, [':20:R', ':25:BH-1', ':28C:1', ':60F:C261101BHD1,2340', ':62F:C261102BHD1,234', '-'].join('\n'));
    expect((await reckonHere(['import', 'mt940', ok, '--out', join(dir, 'a'), ...CAL])).code).toBe(0);
    expect(csvOf(join(dir, 'a'), 'bank_statements', ok)[0].opening_balance_minor).toBe('1234');
    const bad = join(dir, 'bad.sta');
    writeFileSync(bad, [':20:R', ':25:BH-1', ':28C:1', ':60F:C261101BHD1,2345', ':62F:C261102BHD1,234', '-'].join('\n'));
    const r = await reckonHere(['import', 'mt940', bad, '--out', join(dir, 'b'), ...CAL]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain("bad.sta:4: :60F: amount '1.2345' BHD has more decimals than BHD allows (3); refused, not rounded");
    expect(existsSync(join(dir, 'b'))).toBe(false);
  });

  it('a :61: line that cannot be read is refused with its line number', async () => {
    const dir = scratch();
    const bad = join(dir, 'bad.sta');
    writeFileSync(bad, [':20:R', ':25:A', ':28C:1', ':60F:C261101EUR1,00', ':61:261102X1,00NTRFREF', ':62F:C261102EUR1,00', '-'].join('\n'));
    const r = await reckonHere(['import', 'mt940', bad, '--out', join(dir, 'out'), ...CAL]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain("bad.sta:5: :61: '261102X1,00NTRFREF' is not a statement line");
  });
});
