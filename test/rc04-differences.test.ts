/**
 * RC04 provider evidence (CONTRACT §3 readiness, §4 RC04), one fault per test on a tiny clean
 * day, through the real CLI. The clean day carries traps that must never fire: a posting set with
 * two legs on the bank account, a negative line, postings exactly at a statement's exclusive end
 * and one microsecond before its start, another currency on the bank account, positions at
 * another as_of, a fill at the mapped end, decimals written differently, a zero custodian row,
 * sequence gaps and wrong quantities in statements outside the scope, an incomplete report whose
 * mapped end is exactly the window start, and a statement whose mapped end is exactly the window end.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { runControl, scratchSources, watermarksFor, writeSources, type Row } from './fixtures/rc04-rc06.js';

const WINDOW = '2026-11-02T00:00:00Z/2026-11-03T00:00:00Z';
const work = scratchSources('reckon-rc04-');
afterAll(() => work.cleanup());

type Day = Record<'bank_statements' | 'bank_statement_lines' | 'ledger_postings' | 'custodian_positions' | 'positions' | 'executions' | 'venue_fills', Row[]>;

const stmt = (business_date: string, timezone: string, cutoff_local: string, statement_id: string, bank_id: string, account_id: string, currency: string, seq: string, opening: string, closing: string, complete = 'true'): Row => ({
  business_date, timezone, cutoff_local, statement_id, bank_id, account_id, currency, statement_seq: seq, opening_balance_minor: opening, closing_balance_minor: closing, complete, file_id: `F-${statement_id}`,
});
const line = (statement_id: string, line_id: string, amount_minor: string, reference: string): Row => ({ statement_id, line_id, amount_minor, value_date: '2026-11-02', reference });
let ledgerSeq = 0;
const leg = (effective_at: string, posting_set_id: string, account_id: string, currency: string, direction: string, amount_minor: string, leg_no: string): Row => ({
  effective_at, posting_set_id, leg: leg_no, account_id, currency, direction, amount_minor, kind: 'CASH', ledger_seq: String(++ledgerSeq), posted_at: effective_at,
});
const exec = (executed_at: string, id: string, side: string, qty: string): Row => ({
  executed_at, execution_id: id, order_id: `O-${id}`, account_id: 'ACC-1', venue_id: 'XEUR', venue_fill_id: `VF-${id}`, instrument_id: 'INS-1', side, fill_qty: qty, price: '2.5', price_currency: 'EUR', execution_seq: '1', ingested_at: executed_at,
});
const fill = (local: string, id: string, side: string, qty: string, seq: string): Row => ({
  venue_time_local: local, venue_timezone: 'Europe/Berlin', venue_id: 'XEUR', venue_fill_id: `VF-${id}`, order_id: `O-${id}`, instrument_id: 'INS-1', side, fill_qty: qty, price: '2.5', price_currency: 'EUR', venue_seq: seq, file_id: 'F',
});
const cust = (business_date: string, timezone: string, cutoff_local: string, custodian_id: string, account_id: string, instrument_id: string, quantity: string, seq: string, complete = 'true'): Row => ({
  business_date, timezone, cutoff_local, custodian_id, account_id, instrument_id, quantity, statement_seq: seq, complete,
});

/**
 * The clean day. Berlin 18:00 cutoffs map to 17:00Z in November, so S-EUR-1102 covers
 * [2026-11-01T17:00Z, 2026-11-02T17:00Z). New York 19:00 on 2026-11-02 is 2026-11-03T00:00Z,
 * the window end itself, so S-USD-1102 covers exactly the window and is in scope.
 */
function cleanDay(): Day {
  ledgerSeq = 0;
  return {
    bank_statements: [
      stmt('2026-10-30', 'Europe/Berlin', '18:00', 'S-EUR-1030', 'DEUT', 'BANK-EUR', 'EUR', '5', '900', '1000'), // out of scope; 6–8 missing: no difference
      stmt('2026-11-01', 'Europe/Berlin', '18:00', 'S-EUR-1101', 'DEUT', 'BANK-EUR', 'EUR', '9', '1000', '1000', 'false'), // out of scope, incomplete: no gate
      stmt('2026-11-02', 'Europe/Berlin', '18:00', 'S-EUR-1102', 'DEUT', 'BANK-EUR', 'EUR', '10', '1000', '1300'),
      stmt('2026-11-02', 'America/New_York', '19:00', 'S-USD-1102', 'JPMC', 'BANK-USD', 'USD', '1', '500', '450'), // first of its account: no gap
    ],
    bank_statement_lines: [
      line('S-EUR-1102', 'L1', '200', 'P1'),
      line('S-EUR-1102', 'L2', '100', 'P2'),
      line('S-USD-1102', 'L1', '-50', 'P3'), // money out: a CREDIT on the bank account
    ],
    ledger_postings: [
      leg('2026-11-02T09:00:00Z', 'P1', 'BANK-EUR', 'EUR', 'DEBIT', '200', '1'), leg('2026-11-02T09:00:00Z', 'P1', 'CLIENT-EUR', 'EUR', 'CREDIT', '200', '2'),
      // Two legs on the bank account netting to the line: DEBIT 150 − CREDIT 50 = 100.
      leg('2026-11-02T10:00:00Z', 'P2', 'BANK-EUR', 'EUR', 'DEBIT', '150', '1'), leg('2026-11-02T10:00:00Z', 'P2', 'BANK-EUR', 'EUR', 'CREDIT', '50', '2'),
      leg('2026-11-02T10:00:00Z', 'P2', 'CLIENT-EUR', 'EUR', 'CREDIT', '100', '3'),
      leg('2026-11-02T12:00:00Z', 'P3', 'BANK-USD', 'USD', 'CREDIT', '50', '1'), leg('2026-11-02T12:00:00Z', 'P3', 'CLIENT-USD', 'USD', 'DEBIT', '50', '2'),
      // Same account, another currency: on no statement.
      leg('2026-11-02T11:00:00Z', 'P-USD-ON-EUR', 'BANK-EUR', 'USD', 'DEBIT', '77', '1'), leg('2026-11-02T11:00:00Z', 'P-USD-ON-EUR', 'CLIENT-USD', 'USD', 'CREDIT', '77', '2'),
      // Exactly at S-EUR-1102's exclusive end, and one microsecond before its start: other statements.
      leg('2026-11-02T18:00:00+01:00', 'P-END', 'BANK-EUR', 'EUR', 'DEBIT', '70', '1'), leg('2026-11-02T17:00:00Z', 'P-END', 'CLIENT-EUR', 'EUR', 'CREDIT', '70', '2'),
      leg('2026-11-01T16:59:59.999999Z', 'P-BEFORE', 'BANK-EUR', 'EUR', 'DEBIT', '30', '1'), leg('2026-11-01T16:59:59.999999Z', 'P-BEFORE', 'CLIENT-EUR', 'EUR', 'CREDIT', '30', '2'),
      // An older set a line of a later test may reference.
      leg('2026-11-01T12:00:00Z', 'P-OLD', 'BANK-EUR', 'EUR', 'DEBIT', '40', '1'), leg('2026-11-01T12:00:00Z', 'P-OLD', 'CLIENT-EUR', 'EUR', 'CREDIT', '40', '2'),
    ],
    positions: [
      { as_of: '2026-11-02T00:00:00Z', account_id: 'ACC-1', instrument_id: 'INS-1', quantity: '10.5', cost_minor: '2625', cost_currency: 'EUR' },
      { as_of: '2026-11-01T00:00:00Z', account_id: 'ACC-1', instrument_id: 'INS-1', quantity: '999', cost_minor: '1', cost_currency: 'EUR' }, // not the window start
    ],
    executions: [
      exec('2026-11-01T23:59:59Z', 'X0', 'BUY', '1000'), //              before the window start: not counted
      exec('2026-11-02T16:59:59.999999Z', 'X1', 'BUY', '5'), //          counted
      exec('2026-11-02T17:00:00Z', 'X2', 'BUY', '100'), //               at the mapped end: not counted
    ],
    venue_fills: [
      fill('2026-11-02T00:59:59', 'X0', 'BUY', '1000', '1'), //          23:59:59Z the day before: outside the window
      fill('2026-11-02T17:59:59.999999', 'X1', 'BUY', '5.000', '2'),
      fill('2026-11-02T18:00:00', 'X2', 'BUY', '100', '3'),
    ],
    custodian_positions: [
      cust('2026-11-02', 'Europe/Berlin', '18:00', 'CUST-1', 'ACC-1', 'INS-1', '15.50', '41'), // 10.5 + 5, written differently
      cust('2026-11-02', 'Europe/Berlin', '18:00', 'CUST-1', 'ACC-1', 'INS-2', '0', '41'), //     nothing anywhere: 0 = 0
      cust('2026-11-01', 'Europe/Berlin', '18:00', 'CUST-1', 'ACC-1', 'INS-1', '12345', '40'), // out of scope
      cust('2026-11-02', 'UTC', '00:00', 'CUST-2', 'ACC-9', 'INS-9', '1', '7', 'false'), //        mapped end = window start: out of scope
    ],
  };
}

const CLEAN_TOTALS = {
  statement_count: '2',
  bank_statement_cash_minor: { 'BANK-EUR|EUR': '300', 'BANK-USD|USD': '-50' },
  ledger_cash_minor: { 'BANK-EUR|EUR': '300', 'BANK-USD|USD': '-50' },
  venue_fill_count_by_venue: { XEUR: '2' },
  venue_fill_qty_by_venue: { XEUR: '105' },
  internal_fill_count_by_venue: { XEUR: '2' },
  internal_fill_qty_by_venue: { XEUR: '105' },
  custodian_qty: { 'ACC-1|INS-1': '15.5', 'ACC-1|INS-2': '0' },
  internal_position_qty: { 'ACC-1|INS-1': '15.5', 'ACC-1|INS-2': '0' },
};

let n = 0;
function run(day: Day) {
  const dir = `${work.sources}-${++n}`;
  writeSources(dir, day, watermarksFor('RC04', '2026-11-03T00:05:00Z'));
  return runControl('RC04', WINDOW, dir, work.dir);
}
const replace = (rows: Row[], match: (r: Row) => boolean, patch: Row) => rows.map((r) => (match(r) ? { ...r, ...patch } : r));

describe('RC04 on a clean day with traps', () => {
  it('is CLEAN with exact totals', async () => {
    const r = await run(cleanDay());
    expect(r.keys).toEqual([]);
    expect(r.control.status).toBe('CLEAN');
    expect(r.code).toBe(0);
    expect(r.control.totals).toEqual(CLEAN_TOTALS);
  });
});

describe('RC04 one fault per difference kind', () => {
  it('STATEMENT_ROLLFORWARD_MISMATCH: opening + Σ lines ≠ closing', async () => {
    const day = cleanDay();
    day.bank_statements = replace(day.bank_statements, (s) => s.statement_id === 'S-EUR-1102', { closing_balance_minor: '1301' });
    const r = await run(day);
    expect(r.keys).toEqual([['STATEMENT_ROLLFORWARD_MISMATCH', 'S-EUR-1102']]);
    expect(r.details['STATEMENT_ROLLFORWARD_MISMATCH S-EUR-1102']).toBe('opening 1000 + lines 300 ≠ closing 1301');
    expect(r.control.status).toBe('BREAKS');
    expect(r.code).toBe(1);
    expect(r.control.totals).toEqual(CLEAN_TOTALS);
  });

  it('BANK_CASH_MISMATCH: a matched line whose posting set lies outside the mapped interval', async () => {
    const day = cleanDay();
    day.bank_statement_lines.push(line('S-EUR-1102', 'L3', '40', 'P-OLD')); // P-OLD nets 40 but is effective the day before
    day.bank_statements = replace(day.bank_statements, (s) => s.statement_id === 'S-EUR-1102', { closing_balance_minor: '1340' });
    const r = await run(day);
    expect(r.keys).toEqual([['BANK_CASH_MISMATCH', 'S-EUR-1102']]);
    expect(r.details['BANK_CASH_MISMATCH S-EUR-1102']).toBe('lines 340 ≠ ledger DEBIT − CREDIT 300 on BANK-EUR EUR in [2026-11-01T17:00:00.000000Z, 2026-11-02T17:00:00.000000Z)');
    expect(r.control.totals.bank_statement_cash_minor).toEqual({ 'BANK-EUR|EUR': '340', 'BANK-USD|USD': '-50' });
    expect(r.control.totals.ledger_cash_minor).toEqual({ 'BANK-EUR|EUR': '300', 'BANK-USD|USD': '-50' });
  });

  it('BANK_LINE_UNMATCHED: wrong reference, empty reference, reference to no posting set', async () => {
    const day = cleanDay();
    day.bank_statement_lines = replace(day.bank_statement_lines, (l) => l.statement_id === 'S-EUR-1102' && l.line_id === 'L2', { reference: 'P1' });
    day.bank_statement_lines.push(line('S-EUR-1102', 'L4', '0', ''), line('S-EUR-1102', 'L5', '0', 'P-NOPE'));
    const r = await run(day);
    // L2 now names P1 (nets 200 ≠ 100), so P2 is referenced by no line of the statement.
    expect(r.keys).toEqual([
      ['BANK_LINE_UNMATCHED', 'S-EUR-1102|L2'],
      ['BANK_LINE_UNMATCHED', 'S-EUR-1102|L4'],
      ['BANK_LINE_UNMATCHED', 'S-EUR-1102|L5'],
      ['LEDGER_CASH_UNMATCHED', 'P2'],
    ]);
    expect(r.details['BANK_LINE_UNMATCHED S-EUR-1102|L2']).toBe('posting set P1 nets 200 (DEBIT − CREDIT on BANK-EUR EUR) ≠ line 100');
    expect(r.details['BANK_LINE_UNMATCHED S-EUR-1102|L4']).toBe('line 0 has no reference');
    expect(r.details['BANK_LINE_UNMATCHED S-EUR-1102|L5']).toBe('line 0 references P-NOPE, which is no posting set in the ledger extract');
    expect(r.details['LEDGER_CASH_UNMATCHED P2']).toBe('posting set nets 100 on BANK-EUR EUR within statement S-EUR-1102, and no line of that statement references it');
    expect(r.control.totals).toEqual(CLEAN_TOTALS);
  });

  it('LEDGER_CASH_UNMATCHED: a set with legs on the statement account in the interval, netting to zero, that no line names', async () => {
    const day = cleanDay();
    day.ledger_postings.push(
      leg('2026-11-02T13:00:00.000001Z', 'P-SWEEP', 'BANK-EUR', 'EUR', 'DEBIT', '70', '1'),
      leg('2026-11-02T13:00:00.000001Z', 'P-SWEEP', 'BANK-EUR', 'EUR', 'CREDIT', '70', '2'),
    );
    const r = await run(day);
    expect(r.keys).toEqual([['LEDGER_CASH_UNMATCHED', 'P-SWEEP']]);
    expect(r.control.differences[0].record_time).toBe('2026-11-02T13:00:00.000001Z');
    expect(r.control.totals).toEqual(CLEAN_TOTALS);
  });

  it('STATEMENT_SEQUENCE_GAP: one difference per missing number, from the highest earlier statement in the extract', async () => {
    const day = cleanDay();
    day.bank_statements = replace(day.bank_statements, (s) => s.statement_id === 'S-EUR-1102', { statement_seq: '13' });
    const r = await run(day);
    expect(r.keys).toEqual([
      ['STATEMENT_SEQUENCE_GAP', 'DEUT|BANK-EUR|10'],
      ['STATEMENT_SEQUENCE_GAP', 'DEUT|BANK-EUR|11'],
      ['STATEMENT_SEQUENCE_GAP', 'DEUT|BANK-EUR|12'],
    ]);
    expect(r.details['STATEMENT_SEQUENCE_GAP DEUT|BANK-EUR|11']).toBe('statement_seq 13 follows 9; 11 is missing');
  });

  it('CUSTODIAN_POSITION_MISMATCH: custodian quantity ≠ positions at the window start + fills before the mapped end', async () => {
    const day = cleanDay();
    day.custodian_positions = replace(day.custodian_positions, (c) => c.instrument_id === 'INS-1' && c.business_date === '2026-11-02', { quantity: '115.5' });
    const r = await run(day);
    expect(r.keys).toEqual([['CUSTODIAN_POSITION_MISMATCH', 'CUST-1|ACC-1|INS-1|2026-11-02']]); // 115.5 would count X2 at the end
    expect(r.details['CUSTODIAN_POSITION_MISMATCH CUST-1|ACC-1|INS-1|2026-11-02']).toBe('custodian 115.5 ≠ internal 15.5');
    expect(r.control.totals.custodian_qty).toEqual({ 'ACC-1|INS-1': '115.5', 'ACC-1|INS-2': '0' });
    expect(r.control.totals.internal_position_qty).toEqual({ 'ACC-1|INS-1': '15.5', 'ACC-1|INS-2': '0' });
  });
});

describe('RC04 readiness: statement completeness (CONTRACT §3)', () => {
  const cases: [string, (d: Day) => void, string][] = [
    ['an in-scope bank statement', (d) => { d.bank_statements = replace(d.bank_statements, (s) => s.statement_id === 'S-EUR-1102', { complete: 'false' }); },
      'bank statement S-EUR-1102 (mapped end 2026-11-02T17:00:00.000000Z) is not complete'],
    ['a statement whose mapped end is exactly the window end', (d) => { d.bank_statements = replace(d.bank_statements, (s) => s.statement_id === 'S-USD-1102', { complete: 'false' }); },
      'bank statement S-USD-1102 (mapped end 2026-11-03T00:00:00.000000Z) is not complete'],
    ['an in-scope custodian report', (d) => { d.custodian_positions = replace(d.custodian_positions, (c) => c.instrument_id === 'INS-2', { complete: 'false' }); },
      'custodian report CUST-1|ACC-1|INS-2 of 2026-11-02 is not complete'],
  ];
  for (const [what, patch, reason] of cases) {
    it(`${what} with complete = false makes RC04 NOT_READY (exit 4), differences provisional`, async () => {
      const day = cleanDay();
      patch(day);
      day.bank_statements = replace(day.bank_statements, (s) => s.statement_id === 'S-EUR-1102', { closing_balance_minor: '1301' });
      const r = await run(day);
      expect(r.control.status).toBe('NOT_READY');
      expect(r.code).toBe(4);
      expect(r.control.readiness).toEqual({ ready: false, reasons: [reason] });
      expect(r.keys).toEqual([['STATEMENT_ROLLFORWARD_MISMATCH', 'S-EUR-1102']]);
      expect(r.control.differences[0].disposition).toBe('PROVISIONAL');
    });
  }
});

describe('RC04 records sharing a key (never an internal error)', () => {
  it('two differing rows of one statement: lines counted once, one difference listing both findings', async () => {
    const day = cleanDay();
    const s = day.bank_statements.find((x) => x.statement_id === 'S-EUR-1102')!;
    day.bank_statements.push({ ...s, closing_balance_minor: '1301', file_id: 'F-RESENT' });
    const r = await run(day);
    expect(r.code).toBe(1);
    expect(r.keys).toEqual([['STATEMENT_ROLLFORWARD_MISMATCH', 'S-EUR-1102']]);
    expect(r.control.totals).toEqual(CLEAN_TOTALS);
  });

  it('two differing rows of one statement line: one BANK_LINE_UNMATCHED for the key', async () => {
    const day = cleanDay();
    day.bank_statement_lines.push(line('S-EUR-1102', 'L1', '201', 'P1'));
    const r = await run(day);
    expect(r.keys).toEqual([
      ['BANK_CASH_MISMATCH', 'S-EUR-1102'],
      ['BANK_LINE_UNMATCHED', 'S-EUR-1102|L1'],
      ['STATEMENT_ROLLFORWARD_MISMATCH', 'S-EUR-1102'],
    ]);
    expect(r.details['BANK_LINE_UNMATCHED S-EUR-1102|L1']).toBe('posting set P1 nets 200 (DEBIT − CREDIT on BANK-EUR EUR) ≠ line 201');
  });

  it('two differing custodian rows for one key: one difference listing both', async () => {
    const day = cleanDay();
    day.custodian_positions.push(cust('2026-11-02', 'Europe/Berlin', '18:00', 'CUST-1', 'ACC-1', 'INS-1', '16', '42'));
    const r = await run(day);
    expect(r.keys).toEqual([['CUSTODIAN_POSITION_MISMATCH', 'CUST-1|ACC-1|INS-1|2026-11-02']]);
    expect(r.details['CUSTODIAN_POSITION_MISMATCH CUST-1|ACC-1|INS-1|2026-11-02']).toBe('custodian 16 ≠ internal 15.5');
  });
});
