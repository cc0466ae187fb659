/**
 * RC02 EXECUTION_UNKNOWN_ORDER (CONTRACT §4 RC02: key `execution_id`, an execution in scope with
 * no accepted order of that order_id), through the real CLI on a tiny day. One execution_id whose
 * rows name two different unknown orders is one difference naming both, in byte order (it is
 * also an EXECUTION_DUPLICATE); an execution of an accepted order is not reported.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { runControl, scratchSources, writeSources, type Row } from './fixtures/rc04-rc06.js';

const work = scratchSources('reckon-rc02-');
afterAll(() => work.cleanup());

const WM = '2026-11-03T00:05:00Z';
const exec = (id: string, order: string, fill: string, ingested: string): Row => ({
  executed_at: '2026-11-02T10:00:00Z', execution_id: id, order_id: order, account_id: 'A1', venue_id: 'XV', venue_fill_id: fill,
  instrument_id: 'AAA', side: 'BUY', fill_qty: '1', price: '10', price_currency: 'USD', execution_seq: '1', ingested_at: ingested,
});
const fill = (id: string, order: string, seq: string): Row => ({
  venue_time_local: '2026-11-02T10:00:00', venue_timezone: 'Etc/UTC', venue_id: 'XV', venue_fill_id: id, order_id: order,
  instrument_id: 'AAA', side: 'BUY', fill_qty: '1', price: '10', price_currency: 'USD', venue_seq: seq, file_id: 'F1',
});

describe('RC02 EXECUTION_UNKNOWN_ORDER', () => {
  it('names every unknown order of an execution, and none for an accepted order', async () => {
    const sources = writeSources(work.sources, {
      orders: [{ accepted_at: '2026-11-02T09:00:00Z', order_id: 'ORD-K', order_version: '1', client_order_id: 'C1', account_id: 'A1', instrument_id: 'AAA', side: 'BUY', ordered_qty: '10', status: 'ACCEPTED', event_at: '2026-11-02T09:00:00Z', ingested_at: '2026-11-02T09:00:01Z' }],
      executions: [
        exec('E1', 'ORD-U2', 'VF-1', '2026-11-02T10:00:01Z'),
        exec('E1', 'ORD-U1', 'VF-1', '2026-11-02T10:00:02Z'),
        exec('E2', 'ORD-K', 'VF-2', '2026-11-02T10:00:01Z'),
        exec('E3', 'ORD-U3', 'VF-3', '2026-11-02T10:00:01Z'),
      ],
      venue_fills: [fill('VF-1', 'ORD-U1', '1'), fill('VF-2', 'ORD-K', '2'), fill('VF-3', 'ORD-U3', '3')],
    }, { orders: WM, executions: WM, venue_fills: WM });
    const r = await runControl('RC02', '2026-11-02T00:00:00Z/2026-11-03T00:00:00Z', sources, work.dir);
    expect(r.control.status, r.stderr).toBe('BREAKS');
    expect(r.keys.filter(([k]) => k === 'EXECUTION_UNKNOWN_ORDER')).toEqual([['EXECUTION_UNKNOWN_ORDER', 'E1'], ['EXECUTION_UNKNOWN_ORDER', 'E3']]);
    expect(r.details['EXECUTION_UNKNOWN_ORDER E1']).toBe('orders ORD-U1, ORD-U2 have no accepted order in the extract');
    expect(r.details['EXECUTION_UNKNOWN_ORDER E3']).toBe('order ORD-U3 has no accepted order in the extract');
    expect(r.keys).toContainEqual(['EXECUTION_DUPLICATE', 'XV|VF-1']);
  });
});
