/**
 * `reckon import camt053` on camt.053 files written in code (test/fixtures/camt053.ts: statements
 * that chain, extra decimals, a TxsSummry that declares more than the file holds, batches, PRCD,
 * later versions with a lone page 2) and on small hand-written messages (pages across files, a
 * reversal, more decimals than the currency allows). Runs the real CLI as a child process. The
 * same checks on the public corpus files are in the shared suite (test/shared/).
 */
import { describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { reckon, scratchPerTest, reckonHere } from './helpers/cli.js';
import { bal, camtPage, entry, importedRows, importReport, lineOf, sha256File, twoPageStatement } from './fixtures/import.js';
import { CAMT_FILES, writeCamt } from './fixtures/camt053.js';

const scratch = scratchPerTest('reckon-import-camt-');

const CAL = ['--timezone', 'Europe/Amsterdam', '--cutoff', '18:00'];
const sha = sha256File;
const csvOf = (dir: string, ds: string, p: string) => importedRows(dir, ds, 'camt053', p);
const checks = (entry: any, name: string) => entry.control_totals.filter((c: any) => c.check === name);

describe('camt.053 files', () => {
  it('imports every camt.053 fixture (exit 0 or 1, datasets and report written)', async () => {
    for (const name of Object.keys(CAMT_FILES)) {
      const dir = scratch();
      const file = writeCamt(dir, name);
      const out = join(dir, 'sources');
      const r = await reckonHere(['import', 'camt053', file, '--out', out, ...CAL, '--bank-id', 'TESTBANK', '--json']);
      expect([0, 1], `${name}: ${r.stderr}`).toContain(r.code);
      expect(r.json.files[0].sha256).toBe(sha(file));
      for (const ds of ['bank_statements', 'bank_statement_lines']) {
        const report = importReport(out, ds);
        expect(report.imports[0].file).toEqual({ name, sha256: sha(file), size_bytes: readFileSync(file).length });
        expect(existsSync(join(out, ds, `import-camt053-${sha(file).slice(0, 16)}.csv`))).toBe(true);
      }
    }
  });

  it('two statements in one file chain 18.15 → 27.00 → 20.00, each ties', async () => {
    const dir = scratch();
    const file = writeCamt(dir, 'two-statements.xml');
    const r = await reckonHere(['import', 'camt053', file, '--out', dir, ...CAL, '--bank-id', 'RECKNL2A', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(csvOf(dir, 'bank_statements', file)).toEqual([
      { business_date: '2026-11-02', timezone: 'Europe/Amsterdam', cutoff_local: '18:00', statement_id: '311EUR0123456789', bank_id: 'RECKNL2A', account_id: 'NL02RECK0123456789', currency: 'EUR', statement_seq: '4711', opening_balance_minor: '1815', closing_balance_minor: '2700', complete: 'true', file_id: `sha256:${sha(file)}` },
      // The second Stmt carries no ElctrncSeqNb/LglSeqNb: its sequence is derived (previous + 1) and the report says so.
      { business_date: '2026-11-02', timezone: 'Europe/Amsterdam', cutoff_local: '18:00', statement_id: '312EUR0123456789', bank_id: 'RECKNL2A', account_id: 'NL02RECK0123456789', currency: 'EUR', statement_seq: '4712', opening_balance_minor: '2700', closing_balance_minor: '2000', complete: 'true', file_id: `sha256:${sha(file)}` },
    ]);
    expect(csvOf(dir, 'bank_statement_lines', file)).toEqual([
      { statement_id: '311EUR0123456789', line_id: '1', amount_minor: '885', value_date: '2026-11-03', reference: 'E2E-0001' },
      { statement_id: '312EUR0123456789', line_id: '1', amount_minor: '-700', value_date: '2026-11-03', reference: 'E2E-0002' },
    ]);
    const entry = importReport(dir, 'bank_statements').imports[0];
    expect(entry.format_version).toBe('camt.053.001.02');
    expect(checks(entry, 'camt053.statement_chain')).toEqual([expect.objectContaining({ declared: '2700', recomputed: '2700', status: 'ok', scope: 'statement 311EUR0123456789 → 312EUR0123456789' })]);
    expect(checks(entry, 'camt053.statement_rollforward').map((c: any) => [c.declared, c.recomputed, c.status])).toEqual([['2700', '2700', 'ok'], ['2000', '2000', 'ok']]);
    expect(entry.mismatches).toEqual([]);
    expect(entry.statements[1].statement_seq_source).toMatch(/^derived/);
    // Period times carry +01:00 and are kept as written (the business date is the CLBD date).
    expect(entry.statements[0].detail.period).toEqual({ from: '2026-11-02T00:00:00+01:00', to: '2026-11-02T18:00:00+01:00', from_zone: 'as written', to_zone: 'as written' });
  });

  it('three decimals written: 18.150 + 8.850 ≠ 27.050 is a 0.05 EUR break, kept as evidence and written unchanged', async () => {
    const dir = scratch();
    const file = writeCamt(dir, 'three-decimals.xml');
    const r = await reckonHere(['import', 'camt053', file, '--out', dir, ...CAL, '--bank-id', 'RECKNL2A', '--json']);
    expect(r.code, r.stderr).toBe(1);
    const [stmt] = csvOf(dir, 'bank_statements', file);
    expect([stmt.opening_balance_minor, stmt.closing_balance_minor]).toEqual(['1815', '2705']);
    expect(csvOf(dir, 'bank_statement_lines', file).map((l) => l.amount_minor)).toEqual(['885']);
    const entry = importReport(dir, 'bank_statements').imports[0];
    const clbdLine = lineOf(readFileSync(file, 'utf8'), '<Bal>', 2); // the CLBD balance: the second Bal element
    expect(clbdLine).toBe(31);
    expect(entry.mismatches).toEqual([{
      check: 'camt053.statement_rollforward', scope: 'statement 311EUR0123456789', unit: 'EUR minor units (exponent 2)',
      declared: '2705', recomputed: '2700', status: 'mismatch', detail: 'recomputed − declared = -5; OPBD 1815 + 1 line(s) 885 against CLBD 2705', line: clbdLine,
    }]);
    expect(entry.statements[0].opening.text).toBe('18.150');
    expect(r.json.files[0].control_totals).toEqual({ ok: 0, mismatch: 1, not_checked: 0 });
  });

  it('TxsSummry declares 35 entries totalling 41136.40; the file holds 3 — every total reported, nothing fixed', async () => {
    const dir = scratch();
    const file = writeCamt(dir, 'summary-declares-more.xml');
    const r = await reckonHere(['import', 'camt053', file, '--out', dir, ...CAL]);
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
      { statement_id: 'STMT-2026-11-02-EUR-7', line_id: '1', amount_minor: '-475374', value_date: '2026-10-29', reference: 'PAY-OUT-77' },
      { statement_id: 'STMT-2026-11-02-EUR-7', line_id: '2', amount_minor: '268800', value_date: '2026-10-31', reference: 'PAY-IN-12' },
      { statement_id: 'STMT-2026-11-02-EUR-7', line_id: '3', amount_minor: '500000', value_date: '2026-11-02', reference: '' },
    ]);
    // The bank is named by the account servicer's BIC; the timezone-less period is reported as such.
    const [stmt] = csvOf(dir, 'bank_statements', file);
    expect([stmt.bank_id, stmt.opening_balance_minor, stmt.closing_balance_minor, stmt.business_date]).toEqual(['RECKNL2A', '732980', '2303820', '2026-11-02']);
    expect(entry.statements[0].detail.period.to_zone).toBe('no zone: a local time of the statement timezone');
    expect(checks(entry, 'camt053.statement_rollforward')[0]).toMatchObject({ declared: '2303820', recomputed: '1026406', status: 'mismatch' });
  });

  it('debits: batch details 3.50 + 2.50 tie the 6.00 entry; PRCD opens when OPBD is absent', async () => {
    const dir = scratch();
    const file = writeCamt(dir, 'debits-from-prcd.xml');
    const r = await reckonHere(['import', 'camt053', file, '--out', dir, ...CAL]);
    expect(r.code, r.stderr).toBe(1);
    const entry = importReport(dir, 'bank_statements').imports[0];
    expect(checks(entry, 'camt053.Btch.NbOfTxs')).toEqual([expect.objectContaining({ declared: '2', recomputed: '2', status: 'ok' })]);
    expect(checks(entry, 'camt053.Btch.details_sum')).toEqual([expect.objectContaining({ declared: '600', recomputed: '600', status: 'ok' })]);
    // EndToEndId NOTPROVIDED and an entry without references give no reference; a batch gives its PmtInfId.
    expect(csvOf(dir, 'bank_statement_lines', file).map((l) => [l.amount_minor, l.reference])).toEqual([
      ['-200', 'PS-DEBIT-1'], ['-300', ''], ['100', ''], ['-600', 'PS-BATCH-2'],
    ]);
    const [stmt] = csvOf(dir, 'bank_statements', file);
    expect([stmt.opening_balance_minor, stmt.closing_balance_minor, stmt.statement_seq, stmt.bank_id]).toEqual(['-3306', '2306', '130000005', 'RECKDEFFXXX']);
    expect(entry.statements[0].detail.notes).toContain('opening balance taken from PRCD (no OPBD)');
    // PRCD is a debit balance (DBIT 33.06): −33.06 − 10.00 ≠ 23.06, reported, not corrected.
    expect(entry.mismatches).toEqual([expect.objectContaining({ check: 'camt053.statement_rollforward', declared: '2306', recomputed: '-4306' })]);
  });

  it.each(['04', '08'] as const)('camt.053.001.%s: a later version is read; page 2 of 2 alone is incomplete and a CLBD in SEK is not written as EUR', async (version) => {
    const dir = scratch();
    const file = writeCamt(dir, `version-${version}-page-2.xml`);
    const r = await reckonHere(['import', 'camt053', file, '--out', dir, ...CAL, '--json']);
    expect(r.code, r.stderr).toBe(1);
    const entry = importReport(dir, 'bank_statements').imports[0];
    expect(entry.format_version).toBe(`camt.053.001.${version}`);
    const [s] = entry.statements;
    expect(s).toMatchObject({
      statement_id: '311EUR0123456789', written: false, currency: 'EUR', complete: false, lines: 1, lines_sum_minor: '885',
      not_written_because: ['closing balance CLBD is in SEK, the statement in EUR'],
      incomplete_because: ['page(s) 1 not received'],
      opening: { code: 'OPBD', amount_minor: '1815', currency: 'EUR', text: '18.15', date: '2026-11-01' },
      closing: { code: 'CLBD', amount_minor: '-2700', currency: 'SEK', text: '27.00', date: '2026-11-01' },
    });
    expect(s.detail.balances.map((b: any) => [b.code, b.currency, b.amount_minor])).toEqual([['OPBD', 'EUR', '1815'], ['CLBD', 'SEK', '-2700'], ['OPAV', 'CHF', '3500'], ['CLAV', 'JPY', '-2700']]);
    expect(csvOf(dir, 'bank_statements', file)).toEqual([]);
    expect(entry.mismatches).toEqual([{ check: 'statement_not_written', scope: 'statement 311EUR0123456789 (account NL02RECK0123456789)', detail: 'closing balance CLBD is in SEK, the statement in EUR' }]);
  });
});

describe('camt.053 hand-written', () => {
  it('joins two pages given in two files into one complete statement; the page chain and TxsSummry tie', async () => {
    const dir = scratch();
    const [p1, p2] = twoPageStatement(dir);
    const out = join(dir, 'sources');
    const r = await reckonHere(['import', 'camt053', p1, p2, '--out', out, ...CAL, '--json']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(csvOf(out, 'bank_statements', p1)).toEqual([{
      business_date: '2026-11-02', timezone: 'Europe/Amsterdam', cutoff_local: '18:00', statement_id: 'STMT-20261102', bank_id: 'COBADEFFXXX',
      account_id: 'DE89370400440532013000', currency: 'EUR', statement_seq: '311', opening_balance_minor: '100000', closing_balance_minor: '117550', complete: 'true', file_id: `sha256:${sha(p1)}`,
    }]);
    expect(csvOf(out, 'bank_statements', p2)).toEqual([]);
    expect(csvOf(out, 'bank_statement_lines', p1).map((l) => [l.line_id, l.amount_minor, l.reference])).toEqual([['1', '25050', 'PS-1001'], ['2', '-10000', 'PS-1002'], ['3', '2500', 'PS-1003']]);
    const report = importReport(out, 'bank_statements');
    const byName = Object.fromEntries(report.imports.map((e: any) => [e.file.name, e]));
    expect(checks(byName['stmt-p2.xml'], 'camt053.page_chain')).toEqual([expect.objectContaining({ declared: '125050', recomputed: '125050', status: 'ok' })]);
    expect(checks(byName['stmt-p2.xml'], 'camt053.TxsSummry.TtlNtries.TtlNetNtry')).toEqual([expect.objectContaining({ declared: '-7500', recomputed: '-7500', status: 'ok' })]);
    expect(checks(byName['stmt-p2.xml'], 'camt053.statement_rollforward')).toEqual([expect.objectContaining({ declared: '117550', recomputed: '117550', status: 'ok' })]);
    expect(checks(byName['stmt-p2.xml'], 'camt053.Btch.details_sum')).toEqual([expect.objectContaining({ declared: '10000', recomputed: '10000', status: 'ok' })]);
    expect(r.json.files.flatMap((f: any) => f.mismatches)).toEqual([]);
  });

  it('page 1 alone: written with its intermediate closing balance and complete=false', async () => {
    const dir = scratch();
    const [p1] = twoPageStatement(dir);
    const out = join(dir, 'sources');
    const r = await reckonHere(['import', 'camt053', p1, '--out', out, ...CAL]);
    expect(r.code, r.stderr).toBe(0);
    const [s] = csvOf(out, 'bank_statements', p1);
    expect([s.closing_balance_minor, s.complete]).toEqual(['125050', 'false']);
    expect(importReport(out, 'bank_statements').imports[0].statements[0].incomplete_because).toEqual([
      'page 1 is not marked as the last page', 'the last page received closes with an intermediate balance (ITBD)',
    ]);
  });

  it('refuses an amount with more decimals than the currency allows (8.855 EUR, 100.5 JPY) and writes nothing', async () => {
    for (const [ccy, amt] of [['EUR', '8.855'], ['JPY', '100.5']]) {
      const dir = scratch();
      const file = join(dir, 'bad.xml');
      writeFileSync(file, camtPage({ page: 1, last: true, balances: bal('OPBD', '0', 'CRDT') + bal('CLBD', '0', 'CRDT'), entries: entry('1.00', 'CRDT', '') })
        .replace('<Amt Ccy="EUR">1.00</Amt>', `<Amt Ccy="${ccy}">${amt}</Amt>`));
      const out = join(dir, 'sources');
      const r = await reckonHere(['import', 'camt053', file, '--out', out, ...CAL]);
      expect(r.code).toBe(3);
      expect(r.stderr).toContain(`entry amount '${amt}' ${ccy} has more decimals than ${ccy} allows (${ccy === 'EUR' ? 2 : 0}); refused, not rounded`);
      expect(existsSync(out)).toBe(false);
    }
  });

  it('trailing zeros past the exponent are exact (1.500 JPY is refused, 1500.000 JPY is 1500)', async () => {
    const dir = scratch();
    const file = join(dir, 'jpy.xml');
    writeFileSync(file, camtPage({ page: 1, last: true, balances: bal('OPBD', '0', 'CRDT') + bal('CLBD', '1500.000', 'CRDT'), entries: entry('1500.000', 'CRDT', '') }).replace(/Ccy="EUR"/g, 'Ccy="JPY"').replace('<Ccy>EUR</Ccy>', '<Ccy>JPY</Ccy>'));
    const out = join(dir, 'sources');
    const r = await reckonHere(['import', 'camt053', file, '--out', out, ...CAL]);
    expect(r.code, r.stderr).toBe(0);
    expect(csvOf(out, 'bank_statement_lines', file)[0].amount_minor).toBe('1500');
  });

  it('a reference that cannot be a contract id (it holds |) is written empty and reported, the amount kept', async () => {
    const dir = scratch();
    const file = join(dir, 'pipe.xml');
    writeFileSync(file, camtPage({ page: 1, last: true, balances: bal('OPBD', '0', 'CRDT') + bal('CLBD', '1.00', 'CRDT'), entries: entry('1.00', 'CRDT', '<TxDtls><Refs><EndToEndId>A|B</EndToEndId></Refs></TxDtls>') }));
    const out = join(dir, 'sources');
    const r = await reckonHere(['import', 'camt053', file, '--out', out, ...CAL]);
    expect(r.code).toBe(1);
    expect(csvOf(out, 'bank_statement_lines', file)).toEqual([{ statement_id: 'STMT-20261102', line_id: '1', amount_minor: '100', value_date: '2026-11-02', reference: '' }]);
    expect(importReport(out, 'bank_statements').imports[0].mismatches).toEqual([expect.objectContaining({ check: 'reference_not_representable', scope: 'statement STMT-20261102 line 1' })]);
  });

  it('needs a statement calendar: without --timezone/--cutoff or an account map entry nothing is written (exit 2)', async () => {
    const dir = scratch();
    const r = await reckonHere(['import', 'camt053', writeCamt(dir, 'two-statements.xml'), '--out', join(dir, 'sources'), '--bank-id', 'X']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('no statement timezone and cutoff');
    expect(existsSync(join(dir, 'sources'))).toBe(false);
  });

  it('a statement that cannot be written still asks for its missing calendar first (exit 2, not exit 1), and nothing is written', async () => {
    const dir = scratch();
    const file = join(dir, 'sek-closing.xml');
    // The closing balance in SEK, the statement in EUR: not writable (exit 1 once the calendar is given).
    writeFileSync(file, camtPage({ page: 1, last: true, balances: bal('OPBD', '0', 'CRDT') + bal('CLBD', '1.00', 'CRDT').replace('Ccy="EUR"', 'Ccy="SEK"'), entries: entry('1.00', 'CRDT', '') }));
    const out = join(dir, 'sources');
    const r = await reckonHere(['import', 'camt053', file, '--out', out, '--bank-id', 'X']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('sek-closing.xml: statement STMT-20261102 (account DE89370400440532013000): no statement timezone and cutoff; give --timezone and --cutoff or an account map entry');
    expect(existsSync(out)).toBe(false);
    const given = await reckonHere(['import', 'camt053', file, '--out', out, '--bank-id', 'X', ...CAL]);
    expect(given.code).toBe(1);
  });

  it('the account map names our account, bank and calendar; a re-import replaces its own rows; another file may not re-use a statement id', async () => {
    const dir = scratch();
    const map = join(dir, 'map.json');
    writeFileSync(map, JSON.stringify({ accounts: [{ provider_account: 'NL02RECK0123456789', currency: 'EUR', account_id: 'BANK-EUR-1', bank_id: 'RECKNL2A', timezone: 'Europe/Amsterdam', cutoff: '17:30:00' }] }));
    const out = join(dir, 'sources');
    const multi = writeCamt(dir, 'two-statements.xml');
    for (let i = 0; i < 2; i++) {
      const r = await reckonHere(['import', 'camt053', multi, '--out', out, '--account-map', map]);
      expect(r.code, r.stderr).toBe(0);
    }
    expect(csvOf(out, 'bank_statements', multi).map((s) => [s.account_id, s.bank_id, s.timezone, s.cutoff_local])).toEqual([
      ['BANK-EUR-1', 'RECKNL2A', 'Europe/Amsterdam', '17:30:00'], ['BANK-EUR-1', 'RECKNL2A', 'Europe/Amsterdam', '17:30:00'],
    ]);
    const report = importReport(out, 'bank_statements');
    expect(report.imports).toHaveLength(1);
    expect(report.imports[0].settings.account_map).toEqual({ name: 'map.json', sha256: sha(map) });
    // three-decimals.xml holds statement 311EUR… too: refused rather than double-counted by RC04.
    const r = await reckonHere(['import', 'camt053', writeCamt(dir, 'three-decimals.xml'), '--out', out, '--account-map', map]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('statement_id 311EUR0123456789 was already imported into bank_statements from two-statements.xml');
    expect(readdirSync(join(out, 'bank_statements')).sort()).toEqual(['_import_report.json', `import-camt053-${sha(multi).slice(0, 16)}.csv`]);
  });

  it('an account map with errors is refused with every problem named (exit 2)', async () => {
    const dir = scratch();
    const map = join(dir, 'map.json');
    writeFileSync(map, JSON.stringify({ accounts: [{ provider_account: 'X', account_id: 'A|B', timezone: 'Mars/Olympus', cutoff: '25:00' }] }));
    const r = await reckonHere(['import', 'camt053', writeCamt(dir, 'version-04-page-2.xml'), '--out', join(dir, 'sources'), '--account-map', map]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('accounts.0.account_id');
    expect(r.stderr).toContain('accounts.0.timezone: not an IANA time zone');
    expect(r.stderr).toContain('accounts.0.cutoff');
  });
});
