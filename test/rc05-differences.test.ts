/**
 * RC05 portfolio projection (CONTRACT §4 RC05), one fault per test on a tiny clean day, through
 * the real CLI. Traps on the clean day: positions at another as_of, fills exactly at the window
 * end and one microsecond before its start, half-even notional in USD and JPY, a lower
 * projection_version with wrong values, an older build with wrong values, decimals written
 * differently, a zero authority key with no projection row, a zero projection row for a key the
 * authority lacks, and a build whose age is exactly the SLA (300 s, not breached).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { runControl, scratchSources, watermarksFor, writeSources, type Row } from './fixtures/rc04-rc06.js';

const WINDOW = '2026-11-02T00:00:00Z/2026-11-03T00:00:00Z';
const AS_OF = '2026-11-03T00:05:00Z'; // every watermark: the control's as-of
const work = scratchSources('reckon-rc05-');
afterAll(() => work.cleanup());

type Day = Record<'positions' | 'executions' | 'portfolio_projection', Row[]>;

const pos = (as_of: string, account_id: string, instrument_id: string, quantity: string, cost_minor: string, cost_currency: string): Row => ({ as_of, account_id, instrument_id, quantity, cost_minor, cost_currency });
const exec = (executed_at: string, id: string, account_id: string, instrument_id: string, side: string, qty: string, price: string, ccy: string): Row => ({
  executed_at, execution_id: id, order_id: `O-${id}`, account_id, venue_id: 'XV', venue_fill_id: `VF-${id}`, instrument_id, side, fill_qty: qty, price, price_currency: ccy, execution_seq: '1', ingested_at: executed_at,
});
const proj = (as_of: string, build_id: string, account_id: string, instrument_id: string, position_qty: string, cost_minor: string, cost_currency: string, projection_version: string): Row => ({
  as_of, build_id, account_id, instrument_id, position_qty, cost_minor, cost_currency, projection_version,
});

/**
 * Authority at the window end: A1|AAA 10 + 1 − 0.5 = 10.5, cost 10000 + 1000 − 500 = 10500 USD
 * (1 × 10.005 = 10.005 and 0.5 × 10.01 = 5.005 round half-even to 10.00 and 5.00); A1|ZERO 0/0;
 * A2|BBB −3/−3000 USD; A3|JPY1 (a fill only) 3 × 1234.5 = 3703.5 → 3704 JPY.
 */
function cleanDay(): Day {
  return {
    positions: [
      pos('2026-11-02T00:00:00Z', 'A1', 'AAA', '10', '10000', 'USD'),
      pos('2026-11-02T00:00:00Z', 'A1', 'ZERO', '0', '0', 'USD'),
      pos('2026-11-02T00:00:00Z', 'A2', 'BBB', '-3', '-3000', 'USD'),
      pos('2026-11-01T00:00:00Z', 'A1', 'AAA', '999', '1', 'USD'), // another as_of: ignored
      pos('2026-11-01T00:00:00Z', 'A7', 'OLD', '5', '500', 'USD'), //  not an authority key
    ],
    executions: [
      exec('2026-11-01T23:59:59.999999Z', 'E0', 'A1', 'AAA', 'BUY', '100', '10', 'USD'), // before the window
      exec('2026-11-02T10:00:00Z', 'E1', 'A1', 'AAA', 'BUY', '1', '10.005', 'USD'),
      exec('2026-11-02T11:00:00Z', 'E2', 'A1', 'AAA', 'SELL', '0.5', '10.01', 'USD'),
      exec('2026-11-02T12:00:00Z', 'E5', 'A3', 'JPY1', 'BUY', '3', '1234.5', 'JPY'),
      exec('2026-11-03T00:00:00Z', 'E3', 'A1', 'AAA', 'BUY', '100', '10', 'USD'), //        at the window end
    ],
    portfolio_projection: [
      proj('2026-11-02T12:00:00Z', 'B-OLD', 'A1', 'AAA', '1', '1', 'USD', '9'), // older build: never compared
      proj('2026-11-03T00:00:00Z', 'B-NEW', 'A1', 'AAA', '9', '1', 'USD', '1'), // lower version: ignored
      proj('2026-11-03T00:01:00Z', 'B-NEW', 'A1', 'AAA', '10.50', '10500', 'USD', '2'),
      proj('2026-11-03T00:01:00Z', 'B-NEW', 'A2', 'BBB', '-3.0', '-3000', 'USD', '1'),
      proj('2026-11-03T00:01:00Z', 'B-NEW', 'A3', 'JPY1', '3', '3704', 'JPY', '1'),
      proj('2026-11-03T00:01:00Z', 'B-NEW', 'A8', 'ZERO', '0', '0', 'USD', '1'),
    ],
  };
}

const CLEAN_TOTALS = {
  authority_position_qty: { 'A1|AAA': '10.5', 'A1|ZERO': '0', 'A2|BBB': '-3', 'A3|JPY1': '3' },
  authority_cost_minor: { 'A1|AAA': '10500', 'A1|ZERO': '0', 'A2|BBB': '-3000', 'A3|JPY1': '3704' },
  projection_position_qty: { 'A1|AAA': '10.5', 'A2|BBB': '-3', 'A3|JPY1': '3', 'A8|ZERO': '0' },
  projection_cost_minor: { 'A1|AAA': '10500', 'A2|BBB': '-3000', 'A3|JPY1': '3704', 'A8|ZERO': '0' },
  freshness_age_s: '300', // as-of 00:05:00 − the build's earliest as_of 00:00:00
  projection_build_id: 'B-NEW',
};

let n = 0;
function run(day: Day) {
  const dir = `${work.sources}-${++n}`;
  writeSources(dir, day, watermarksFor('RC05', AS_OF));
  return runControl('RC05', WINDOW, dir, work.dir);
}

describe('RC05 on a clean day with traps', () => {
  it('is CLEAN with exact totals; a build exactly 300 s old is not stale', async () => {
    const r = await run(cleanDay());
    expect(r.keys).toEqual([]);
    expect(r.control.status).toBe('CLEAN');
    expect(r.code).toBe(0);
    expect(r.control.as_of).toBe('2026-11-03T00:05:00Z');
    expect(r.control.totals).toEqual(CLEAN_TOTALS);
  });
});

describe('RC05 one fault per difference kind', () => {
  it('PROJECTION_KEY_MISSING: an authority key with a position and no projection row', async () => {
    const day = cleanDay();
    day.portfolio_projection = day.portfolio_projection.filter((p) => p.instrument_id !== 'JPY1');
    const r = await run(day);
    expect(r.keys).toEqual([['PROJECTION_KEY_MISSING', 'A3|JPY1']]);
    expect(r.details['PROJECTION_KEY_MISSING A3|JPY1']).toBe('authority position 3, cost 3704 JPY; no projection row');
    expect(r.code).toBe(1);
  });

  it('PROJECTION_KEY_EXTRA: non-zero projection rows for keys the authority lacks (positions at another as_of do not count)', async () => {
    const day = cleanDay();
    day.portfolio_projection.push(
      proj('2026-11-03T00:01:00Z', 'B-NEW', 'A7', 'OLD', '5', '500', 'USD', '1'),
      proj('2026-11-03T00:01:00Z', 'B-NEW', 'A9', 'COST', '0', '1', 'USD', '1'), // zero position, non-zero cost
    );
    const r = await run(day);
    expect(r.keys).toEqual([['PROJECTION_KEY_EXTRA', 'A7|OLD'], ['PROJECTION_KEY_EXTRA', 'A9|COST']]);
    expect(r.details['PROJECTION_KEY_EXTRA A9|COST']).toBe('projection position 0, cost 1 USD; the authority has no such key');
  });

  it('PROJECTION_POSITION_MISMATCH: the highest projection_version differs', async () => {
    const day = cleanDay();
    day.portfolio_projection.push(proj('2026-11-03T00:01:00Z', 'B-NEW', 'A1', 'AAA', '10.6', '10500', 'USD', '3'));
    const r = await run(day);
    expect(r.keys).toEqual([['PROJECTION_POSITION_MISMATCH', 'A1|AAA']]);
    expect(r.details['PROJECTION_POSITION_MISMATCH A1|AAA']).toBe('authority 10.5 ≠ projection 10.6');
    expect(r.control.totals.projection_position_qty['A1|AAA']).toBe('10.6');
  });

  it('PROJECTION_COST_MISMATCH: a cost off by one minor unit, and a cost in another currency', async () => {
    const day = cleanDay();
    day.portfolio_projection = day.portfolio_projection.map((p) =>
      p.instrument_id === 'JPY1' ? { ...p, cost_minor: '3703' } : p.instrument_id === 'BBB' ? { ...p, cost_currency: 'EUR' } : p);
    const r = await run(day);
    expect(r.keys).toEqual([['PROJECTION_COST_MISMATCH', 'A2|BBB'], ['PROJECTION_COST_MISMATCH', 'A3|JPY1']]);
    expect(r.details['PROJECTION_COST_MISMATCH A3|JPY1']).toBe('authority 3704 JPY ≠ projection 3703 JPY');
    expect(r.details['PROJECTION_COST_MISMATCH A2|BBB']).toBe('authority -3000 USD ≠ projection -3000 EUR');
  });

  it('PROJECTION_COST_MISMATCH: a key whose fills and start position name two currencies has no cost to compare, and no cost total', async () => {
    const day = cleanDay();
    day.executions.push(exec('2026-11-02T13:00:00Z', 'E6', 'A1', 'AAA', 'BUY', '1', '1000', 'JPY'));
    const r = await run(day);
    expect(r.keys).toEqual([['PROJECTION_COST_MISMATCH', 'A1|AAA'], ['PROJECTION_POSITION_MISMATCH', 'A1|AAA']]);
    expect(r.details['PROJECTION_COST_MISMATCH A1|AAA']).toBe('authority cost mixes currencies JPY, USD (an instrument trades in one currency) ≠ projection 10500 USD');
    expect(r.control.totals.authority_cost_minor).toEqual({ 'A1|ZERO': '0', 'A2|BBB': '-3000', 'A3|JPY1': '3704' });
    expect(r.control.totals.authority_position_qty['A1|AAA']).toBe('11.5');
  });

  it('PROJECTION_STALE: as-of − the build\'s earliest as_of is 300.000001 s, one microsecond over the SLA', async () => {
    const day = cleanDay();
    day.portfolio_projection = day.portfolio_projection.map((p) => (p.build_id === 'B-NEW' && p.projection_version === '1' && p.instrument_id === 'AAA' ? { ...p, as_of: '2026-11-02T23:59:59.999999Z' } : p));
    const r = await run(day);
    expect(r.keys).toEqual([['PROJECTION_STALE', 'B-NEW']]);
    expect(r.details['PROJECTION_STALE B-NEW']).toBe('as-of 2026-11-03T00:05:00.000000Z − build as_of 2026-11-02T23:59:59.999999Z = 300.000001 s > SLA 300 s');
    expect(r.control.totals.freshness_age_s).toBe('300.000001');
    expect(r.control.differences[0].record_time).toBe('2026-11-02T23:59:59.999999Z');
  });
});

describe('RC05 build selection', () => {
  it('compares only the build holding the latest as_of: a key it lacks is missing, whatever older builds hold', async () => {
    const day = cleanDay();
    // B-LATE's rows reflect 00:02; it is compared, and it is wrong on A2|BBB.
    day.portfolio_projection.push(
      proj('2026-11-03T00:02:00Z', 'B-LATE', 'A1', 'AAA', '10.5', '10500', 'USD', '1'),
      proj('2026-11-03T00:02:00Z', 'B-LATE', 'A3', 'JPY1', '3', '3704', 'JPY', '1'),
    );
    const r = await run(day);
    expect(r.control.totals.projection_build_id).toBe('B-LATE');
    expect(r.keys).toEqual([['PROJECTION_KEY_MISSING', 'A2|BBB']]);
    expect(r.control.totals.freshness_age_s).toBe('180');
  });
});
