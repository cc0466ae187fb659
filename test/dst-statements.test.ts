/**
 * Statement cutoffs on DST days, end to end through `reckon run --control RC04` (CONTRACT §2, §4).
 *
 * New York, business date 2026-03-08, cutoff 02:30: 02:30 does not exist that night (02:00 EST
 * jumps to 03:00 EDT), so the statement ends at the transition, 07:00Z — not 07:30Z, luxon's
 * default. London, business date 2026-10-25, cutoff 01:30: 01:30 happens twice (BST, then GMT),
 * so the statement ends at the earlier instant, 00:30Z — not 01:30Z.
 *
 * Postings and fills sit one microsecond before the mapped instant, exactly on it, and between it
 * and the wrong reading; the bank lines and custodian quantities are written so that every one
 * of them must land in the statement the contract's rule puts it in, or differences appear.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runControl, scratchSources, watermarksFor, writeSources, type ControlRun, type Row } from './fixtures/rc04-rc06.js';

const posting = (effective_at: string, posting_set_id: string, bank: string, currency: string, direction: 'DEBIT' | 'CREDIT', amount: string, seq: number): Row[] => {
  const other = direction === 'DEBIT' ? 'CREDIT' : 'DEBIT';
  return [
    { effective_at, posting_set_id, leg: '1', account_id: bank, currency, direction, amount_minor: amount, kind: 'CASH', ledger_seq: String(seq * 2), posted_at: effective_at },
    { effective_at, posting_set_id, leg: '2', account_id: `CLIENT-${currency}`, currency, direction: other, amount_minor: amount, kind: 'CASH', ledger_seq: String(seq * 2 + 1), posted_at: effective_at },
  ];
};
const statement = (business_date: string, timezone: string, cutoff_local: string, statement_id: string, bank_id: string, account_id: string, currency: string, seq: string, opening: string, closing: string): Row => ({
  business_date, timezone, cutoff_local, statement_id, bank_id, account_id, currency, statement_seq: seq, opening_balance_minor: opening, closing_balance_minor: closing, complete: 'true', file_id: `F-${statement_id}`,
});
const line = (statement_id: string, line_id: string, amount_minor: string, reference: string): Row => ({ statement_id, line_id, amount_minor, value_date: '2026-01-01', reference });
const exec = (executed_at: string, id: string, account_id: string, venue_id: string, instrument_id: string, side: string, qty: string, ccy: string): Row => ({
  executed_at, execution_id: id, order_id: `ORD-${id}`, account_id, venue_id, venue_fill_id: `VF-${id}`, instrument_id, side, fill_qty: qty, price: '10', price_currency: ccy, execution_seq: '1', ingested_at: executed_at,
});
const fill = (local: string, tz: string, id: string, venue_id: string, instrument_id: string, side: string, qty: string, ccy: string, seq: string): Row => ({
  venue_time_local: local, venue_timezone: tz, venue_id, venue_fill_id: `VF-${id}`, order_id: `ORD-${id}`, instrument_id, side, fill_qty: qty, price: '10', price_currency: ccy, venue_seq: seq, file_id: 'F1',
});
const custodian = (business_date: string, timezone: string, cutoff_local: string, custodian_id: string, account_id: string, instrument_id: string, quantity: string, seq: string): Row => ({
  business_date, timezone, cutoff_local, custodian_id, account_id, instrument_id, quantity, statement_seq: seq, complete: 'true',
});

const work = scratchSources('reckon-dst-');
let ny: ControlRun;
let london: ControlRun;

beforeAll(async () => {
  writeSources(work.sources, {
    bank_statements: [
      // New York: [2026-03-07T07:30Z, 2026-03-08T07:00Z) and [2026-03-08T07:00Z, 2026-03-09T06:30Z).
      statement('2026-03-08', 'America/New_York', '02:30', 'ST-NY-0308', 'JPMC', 'BANK-USD', 'USD', '7', '100000', '103000'),
      statement('2026-03-09', 'America/New_York', '02:30', 'ST-NY-0309', 'JPMC', 'BANK-USD', 'USD', '8', '103000', '106200'),
      // London: [2026-10-24T00:30Z, 2026-10-25T00:30Z) and [2026-10-25T00:30Z, 2026-10-26T01:30Z).
      statement('2026-10-25', 'Europe/London', '01:30', 'ST-LN-1025', 'BARC', 'BANK-GBP', 'GBP', '3', '5000', '5500'),
      statement('2026-10-26', 'Europe/London', '01:30:00', 'ST-LN-1026', 'BARC', 'BANK-GBP', 'GBP', '4', '5500', '6125'),
    ],
    bank_statement_lines: [
      line('ST-NY-0308', 'L1', '1000', 'PS-A'), line('ST-NY-0308', 'L2', '2000', 'PS-B'),
      line('ST-NY-0309', 'L1', '3000', 'PS-C'), line('ST-NY-0309', 'L2', '-500', 'PS-D'),
      line('ST-NY-0309', 'L3', '700', 'PS-F'), // PS-F is effective exactly at 0309's end: outside it
      line('ST-LN-1025', 'L1', '100', 'PG-0'), line('ST-LN-1025', 'L2', '400', 'PG-A'),
      line('ST-LN-1026', 'L1', '600', 'PG-B'), line('ST-LN-1026', 'L2', '50', 'PG-C'), line('ST-LN-1026', 'L3', '-25', 'PG-D'),
    ],
    ledger_postings: [
      ...posting('2026-03-07T07:29:59.999999Z', 'PS-E', 'BANK-USD', 'USD', 'DEBIT', '9', 1), // before 0308 starts
      ...posting('2026-03-07T07:30:00Z', 'PS-A', 'BANK-USD', 'USD', 'DEBIT', '1000', 2), //  0308's first instant
      ...posting('2026-03-08T06:59:59.999999Z', 'PS-B', 'BANK-USD', 'USD', 'DEBIT', '2000', 3), // 0308's last microsecond
      ...posting('2026-03-08T07:00:00Z', 'PS-C', 'BANK-USD', 'USD', 'DEBIT', '3000', 4), // the transition: 0309
      ...posting('2026-03-08T02:15:00-05:00', 'PS-D', 'BANK-USD', 'USD', 'CREDIT', '500', 5), // 07:15Z: 0309 (0308 under luxon's 07:30Z)
      ...posting('2026-03-09T06:30:00Z', 'PS-F', 'BANK-USD', 'USD', 'DEBIT', '700', 6), // 0309's end, exclusive
      ...posting('2026-10-24T00:30:00Z', 'PG-0', 'BANK-GBP', 'GBP', 'DEBIT', '100', 11), // 1025's first instant (before the window)
      ...posting('2026-10-25T00:29:59.999999Z', 'PG-A', 'BANK-GBP', 'GBP', 'DEBIT', '400', 12), // 1025's last microsecond
      ...posting('2026-10-25T01:30:00+01:00', 'PG-B', 'BANK-GBP', 'GBP', 'DEBIT', '600', 13), // 00:30Z: 1026
      ...posting('2026-10-25T01:00:00Z', 'PG-C', 'BANK-GBP', 'GBP', 'DEBIT', '50', 14), // 1026 (1025 if the later 01:30Z were taken)
      ...posting('2026-10-25T01:29:59Z', 'PG-D', 'BANK-GBP', 'GBP', 'CREDIT', '25', 15),
    ],
    positions: [
      { as_of: '2026-03-08T00:00:00Z', account_id: 'ACC-1', instrument_id: 'US-XYZ', quantity: '100', cost_minor: '100000', cost_currency: 'USD' },
      { as_of: '2026-10-25T00:00:00Z', account_id: 'ACC-2', instrument_id: 'GB-ABC', quantity: '50', cost_minor: '5000', cost_currency: 'GBP' },
    ],
    executions: [
      exec('2026-03-08T06:59:59.999999Z', 'E1', 'ACC-1', 'XNYS', 'US-XYZ', 'BUY', '10', 'USD'),
      exec('2026-03-08T07:00:00Z', 'E2', 'ACC-1', 'XNYS', 'US-XYZ', 'BUY', '20', 'USD'),
      exec('2026-03-08T07:15:00Z', 'E3', 'ACC-1', 'XNYS', 'US-XYZ', 'SELL', '5', 'USD'),
      exec('2026-03-09T06:30:00Z', 'E4', 'ACC-1', 'XNYS', 'US-XYZ', 'BUY', '1', 'USD'),
      exec('2026-10-25T00:29:59.999999Z', 'G1', 'ACC-2', 'XLON', 'GB-ABC', 'BUY', '7', 'GBP'),
      exec('2026-10-25T00:30:00Z', 'G2', 'ACC-2', 'XLON', 'GB-ABC', 'BUY', '3', 'GBP'),
      exec('2026-10-25T01:00:00Z', 'G3', 'ACC-2', 'XLON', 'GB-ABC', 'SELL', '2', 'GBP'),
    ],
    venue_fills: [
      fill('2026-03-08T01:59:59.999999', 'America/New_York', 'E1', 'XNYS', 'US-XYZ', 'BUY', '10', 'USD', '1'), // 06:59:59.999999Z
      fill('2026-03-08T03:00:00', 'America/New_York', 'E2', 'XNYS', 'US-XYZ', 'BUY', '20', 'USD', '2'), //        07:00Z
      fill('2026-03-08T03:15:00', 'America/New_York', 'E3', 'XNYS', 'US-XYZ', 'SELL', '5', 'USD', '3'), //        07:15Z
      fill('2026-03-09T02:30:00', 'America/New_York', 'E4', 'XNYS', 'US-XYZ', 'BUY', '1', 'USD', '4'), //         06:30Z
      fill('2026-10-25T01:29:59.999999', 'Europe/London', 'G1', 'XLON', 'GB-ABC', 'BUY', '7', 'GBP', '1'), // twice: earlier, 00:29:59.999999Z
      fill('2026-10-25T01:30:00', 'Europe/London', 'G2', 'XLON', 'GB-ABC', 'BUY', '3', 'GBP', '2'), //          twice: earlier, 00:30Z
      fill('2026-10-25T01:00:00', 'Europe/London', 'G3', 'XLON', 'GB-ABC', 'SELL', '2', 'GBP', '3'), //         twice: earlier, 00:00Z (window start)
    ],
    custodian_positions: [
      custodian('2026-03-08', 'America/New_York', '02:30', 'CUST-NY', 'ACC-1', 'US-XYZ', '110', '7'), // 100 + E1
      custodian('2026-03-09', 'America/New_York', '02:30', 'CUST-NY', 'ACC-1', 'US-XYZ', '126', '8'), // counts E4 at 0309's end: wrong
      custodian('2026-10-25', 'Europe/London', '01:30', 'CUST-LN', 'ACC-2', 'GB-ABC', '57', '3'), //     50 + G1
      custodian('2026-10-26', 'Europe/London', '01:30', 'CUST-LN', 'ACC-2', 'GB-ABC', '58', '4'), //     50 + G1 + G2 − G3
    ],
  }, watermarksFor('RC04', '2026-12-31T00:00:00Z'));
  ny = await runControl('RC04', '2026-03-08T00:00:00Z/2026-03-10T00:00:00Z', work.sources, work.dir);
  london = await runControl('RC04', '2026-10-25T00:00:00Z/2026-10-27T00:00:00Z', work.sources, work.dir);
});

afterAll(() => work.cleanup());

describe('cutoff mappings recorded in the manifest (CONTRACT §2, §6)', () => {
  it('pins every mapped instant and the rule that produced it', () => {
    const expected = [
      { timezone: 'America/New_York', local: '2026-03-07T02:30:00', utc: '2026-03-07T07:30:00Z', rule: 'unique' },
      { timezone: 'America/New_York', local: '2026-03-08T02:30:00', utc: '2026-03-08T07:00:00Z', rule: 'gap_moved_to_transition' },
      { timezone: 'America/New_York', local: '2026-03-09T02:30:00', utc: '2026-03-09T06:30:00Z', rule: 'unique' },
      { timezone: 'Europe/London', local: '2026-10-24T01:30:00', utc: '2026-10-24T00:30:00Z', rule: 'unique' },
      { timezone: 'Europe/London', local: '2026-10-25T01:30:00', utc: '2026-10-25T00:30:00Z', rule: 'overlap_earlier_instant' },
      { timezone: 'Europe/London', local: '2026-10-26T01:30:00', utc: '2026-10-26T01:30:00Z', rule: 'unique' },
    ];
    expect(ny.manifest.cutoff_mappings).toEqual(expected);
    expect(london.manifest.cutoff_mappings).toEqual(expected);
  });
});

describe('New York, 02:30 cutoff on 2026-03-08 (in the spring-forward gap)', () => {
  it('ends the statement at 07:00Z and puts every posting and fill in the right statement', () => {
    expect(ny.json.quarantine_count).toBe(0);
    expect(ny.control.status).toBe('BREAKS');
    expect(ny.code).toBe(1);
    // Only the two deliberate boundary faults: PS-F and E4 sit exactly on 0309's (exclusive) end.
    expect(ny.keys).toEqual([
      ['BANK_CASH_MISMATCH', 'ST-NY-0309'],
      ['CUSTODIAN_POSITION_MISMATCH', 'CUST-NY|ACC-1|US-XYZ|2026-03-09'],
    ]);
    expect(ny.details['BANK_CASH_MISMATCH ST-NY-0309']).toBe('lines 3200 ≠ ledger DEBIT − CREDIT 2500 on BANK-USD USD in [2026-03-08T07:00:00.000000Z, 2026-03-09T06:30:00.000000Z)');
    expect(ny.details['CUSTODIAN_POSITION_MISMATCH CUST-NY|ACC-1|US-XYZ|2026-03-09']).toBe('custodian 126 ≠ internal 125');
    expect(ny.control.totals).toEqual({
      statement_count: '2',
      bank_statement_cash_minor: { 'BANK-USD|USD': '6200' }, // 0308: 1000 + 2000; 0309: 3000 − 500 + 700
      ledger_cash_minor: { 'BANK-USD|USD': '5500' }, //         0308: PS-A + PS-B; 0309: PS-C − PS-D (PS-E before, PS-F after)
      custodian_qty: { 'ACC-1|US-XYZ': '236' }, //                110 + 126
      internal_position_qty: { 'ACC-1|US-XYZ': '235' }, //        (100 + E1) + (100 + E1 + E2 − E3)
      venue_fill_count_by_venue: { XNYS: '4' },
      venue_fill_qty_by_venue: { XNYS: '36' },
      internal_fill_count_by_venue: { XNYS: '4' },
      internal_fill_qty_by_venue: { XNYS: '36' },
    });
  });
});

describe('London, 01:30 cutoff on 2026-10-25 (in the fall-back overlap)', () => {
  it('ends the statement at 00:30Z (the earlier 01:30) and puts every posting and fill in the right statement', () => {
    expect(london.json.quarantine_count).toBe(0);
    expect(london.keys).toEqual([]);
    expect(london.control.status).toBe('CLEAN');
    expect(london.code).toBe(0);
    expect(london.control.totals).toEqual({
      statement_count: '2',
      bank_statement_cash_minor: { 'BANK-GBP|GBP': '1125' }, // 1025: 100 + 400; 1026: 600 + 50 − 25
      ledger_cash_minor: { 'BANK-GBP|GBP': '1125' },
      custodian_qty: { 'ACC-2|GB-ABC': '115' }, //               57 + 58
      internal_position_qty: { 'ACC-2|GB-ABC': '115' },
      venue_fill_count_by_venue: { XLON: '3' }, //               G3's 01:00 local maps to the earlier 00:00Z: the window start, inside
      venue_fill_qty_by_venue: { XLON: '12' },
      internal_fill_count_by_venue: { XLON: '3' },
      internal_fill_qty_by_venue: { XLON: '12' },
    });
  });
});
