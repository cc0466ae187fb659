/**
 * `reckon import mt940` on the real MT940 files of ../shared/corpus/provider-formats, read in place:
 * part of the shared suite (`npm run test:shared`), skipped when ../shared is not beside the
 * repository. The main suite checks the same traps on files written in code
 * (test/import-mt940.test.ts). Runs the real CLI as a child process.
 */
import { expect, it } from 'vitest';
import { readdirSync } from 'node:fs';
import { reckon, scratchPerTest } from '../helpers/cli.js';
import { importedRows, importReport, sha256File } from '../fixtures/import.js';
import { corpus, describeShared } from './shared.js';

const scratch = scratchPerTest('reckon-import-mt940-');

const CAL = ['--timezone', 'Europe/Berlin', '--cutoff', '18:00', '--bank-id', 'TESTBANK'];
const sha = sha256File;
const csvOf = (dir: string, ds: string, p: string) => importedRows(dir, ds, 'mt940', p);

describeShared('MT940 corpus', () => {
  it('imports every MT940 file of the corpus', () => {
    for (const name of readdirSync(corpus('mt940'))) {
      const dir = scratch();
      const r = reckon(['import', 'mt940', corpus(`mt940/${name}`), '--out', dir, ...CAL]);
      expect([0, 1], `${name}: ${r.stderr}`).toContain(r.code);
      expect(importReport(dir, 'bank_statements').imports[0].file.sha256).toBe(sha(corpus(`mt940/${name}`)));
    }
  });

  it('betterplace SEPA: every statement ties opening + lines = closing, pages :62M:/:60M: joined, RC read as a debit', () => {
    const dir = scratch();
    const file = corpus('mt940/betterplace-sepa_mt9401.sta');
    const r = reckon(['import', 'mt940', file, '--out', dir, ...CAL, '--json']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const stmts = csvOf(dir, 'bank_statements', file);
    const lines = csvOf(dir, 'bank_statement_lines', file);
    expect(stmts).toHaveLength(20);
    expect(lines).toHaveLength(97);
    // An independent re-computation over the written rows: every statement ties, every one complete.
    for (const s of stmts) {
      const sum = lines.filter((l) => l.statement_id === s.statement_id).reduce((a, l) => a + BigInt(l.amount_minor), 0n);
      expect(BigInt(s.opening_balance_minor) + sum, s.statement_id).toBe(BigInt(s.closing_balance_minor));
      expect(s.complete).toBe('true');
    }
    const entry = importReport(dir, 'bank_statements').imports[0];
    const byCheck = (name: string) => entry.control_totals.filter((c: any) => c.check === name);
    expect(byCheck('mt940.statement_rollforward')).toHaveLength(20);
    expect(byCheck('mt940.statement_rollforward').every((c: any) => c.status === 'ok')).toBe(true);
    expect(byCheck('mt940.page_chain').map((c: any) => [c.scope, c.declared, c.status])).toEqual([
      ['statement 50880050/0194781300888/00004/2007-09-04 page 1 → 2', '-3050383', 'ok'],
      ['statement 50880050/0194782500888/00004/2007-09-04 page 1 → 2', '-135894552', 'ok'],
      ['statement 50880050/0194783700888/00004/2007-09-04 page 1 → 2', '-293199484', 'ok'],
      ['statement 50880050/0194784900888/00004/2007-09-04 page 1 → 2', '-601811338', 'ok'],
      ['statement 50880050/0194785000888/00004/2007-09-04 page 1 → 2', expect.any(String), 'ok'],
      ['statement 50880050/0194785000888/00004/2007-09-04 page 2 → 3', expect.any(String), 'ok'],
    ]);
    expect(entry.mismatches).toEqual([]);
    // The first statement: debit balances and an RC line (reversal of a credit = money out).
    const first = stmts[0];
    expect(first).toMatchObject({ statement_id: '50880050/0194774600888/00004/2007-09-04', account_id: '50880050/0194774600888', statement_seq: '4', opening_balance_minor: '-123471836', closing_balance_minor: '-123762823', business_date: '2007-09-04' });
    const firstLines = lines.filter((l) => l.statement_id === first.statement_id);
    expect(firstLines.map((l) => l.amount_minor)).toEqual(['30000', '33533', '1500000', '6629508', '91531155', '-20488', '-99994695']);
    expect(firstLines.map((l) => l.reference)).toEqual(['TFNr 40005 MSGID', 'TFNr 44003 MSGID', 'TFNr 40005 MSGID', '', 'TFNr 44003 MSGID', '', '']);
    // Read RC as a credit and this statement no longer ties: the reading is the one the balances confirm.
    const sumWrong = firstLines.reduce((a, l) => a + (l.amount_minor === '-20488' ? 20488n : BigInt(l.amount_minor)), 0n);
    expect(BigInt(first.opening_balance_minor) + sumWrong).not.toBe(BigInt(first.closing_balance_minor));
    // A three-page statement is one row whose lines run across the pages.
    const three = entry.statements.find((s: any) => s.statement_id === '50880050/0194785000888/00004/2007-09-04');
    expect(three.detail.pages.map((p: any) => p.page)).toEqual([1, 2, 3]);
    expect(three.complete).toBe(true);
  });

  it('betterplace amount forms: 380115,12 / 380115,1 / 380115, / 0,12 / 00,12 / 001,12 read exactly; openings alone are not written', () => {
    const dir = scratch();
    const file = corpus('mt940/betterplace-amount_formats.sta');
    const r = reckon(['import', 'mt940', file, '--out', dir, ...CAL]);
    expect(r.code).toBe(1);
    const entry = importReport(dir, 'bank_statements').imports[0];
    expect(entry.statements.map((s: any) => [s.opening.text, s.opening.amount_minor, s.opening.date, s.written])).toEqual([
      ['C100318EUR380115,12', '38011512', '2010-03-18', false],
      ['C100318EUR380115,1', '38011510', '2010-03-18', false],
      ['C100318EUR380115,', '38011500', '2010-03-18', false],
      ['C100318EUR0,12', '12', '2010-03-18', false],
      ['C100318EUR00,12', '12', '2010-03-18', false],
      ['C100318EUR001,12', '112', '2010-03-18', false],
    ]);
    expect(entry.statements[0].not_written_because).toEqual(['no account identification (:25:)', 'no closing balance (:62F: or :62M:)', 'no statement number (:28C:)']);
    expect(csvOf(dir, 'bank_statements', file)).toEqual([]);
  });

  it('jejik ABN AMRO dialect: header lines skipped and noted; both statements written; the file does not tie and says so', () => {
    const dir = scratch();
    const file = corpus('mt940/jejik-abnamro.sta');
    const r = reckon(['import', 'mt940', file, '--out', dir, ...CAL]);
    expect(r.code).toBe(1);
    const entry = importReport(dir, 'bank_statements').imports[0];
    expect(entry.notes[0]).toMatch(/^lines outside any message, skipped: line 1: 'ABNANL2A', line 2: '940', line 3: 'ABNANL2A'/);
    expect(csvOf(dir, 'bank_statements', file).map((s) => [s.statement_id, s.statement_seq, s.opening_balance_minor, s.closing_balance_minor, s.complete])).toEqual([
      ['517852257/19321/2011-05-23', '19321', '323628', '87684', 'true'],
      // Page 1 that opens with :60M: (an intermediate balance): an earlier page is missing.
      ['517852257/19322/2011-05-24', '19322', '287684', '184975', 'false'],
    ]);
    expect(csvOf(dir, 'bank_statement_lines', file).map((l) => l.amount_minor)).toEqual(['-900', '-1159', '-1163', '-1180', '-1345', '-1549', '-10700', '-14148', '-949', '-1500']);
    expect(entry.mismatches.map((m: any) => [m.check, m.declared, m.recomputed])).toEqual([
      ['mt940.statement_rollforward', '87684', '291484'],
      ['mt940.statement_rollforward', '184975', '285235'],
      ['mt940.statement_chain', '287684', '87684'],
    ]);
  });
});
