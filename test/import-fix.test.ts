/**
 * `reckon import fix` on hand-written FIX 4.4 and 4.2 session logs (the corpus has none): heartbeats
 * and other messages between the fills so that MsgSeqNum ≠ venue_seq, a resend, a trade cancel, a
 * sequence gap and a corrupted CheckSum. BodyLength and CheckSum are computed as a FIX engine does.
 */
import { describe, expect, it } from 'vitest';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { reckon, scratchPerTest, reckonHere } from './helpers/cli.js';
import { fixMessage, importedRows, importReport, sha256File } from './fixtures/import.js';

const scratch = scratchPerTest('reckon-import-fix-');
const sha = sha256File;
const fillsOf = (dir: string, p: string) => importedRows(dir, 'venue_fills', 'fix', p);

type F = [number, string][];
const fromVenue = (seq: number, type: string, body: F, extra: F = []): F => [[35, type], [49, 'XLON'], [56, 'OURFIRM'], [34, String(seq)], [52, '20261102-09:30:00.000'], ...extra, ...body];
const fromUs = (seq: number, type: string, body: F): F => [[35, type], [49, 'OURFIRM'], [56, 'XLON'], [34, String(seq)], [52, '20261102-09:29:00.000'], ...body];
const fill = (execId: string, order: string, side: string, qty: string, px: string, time: string, cum: string, leaves: string, status: string, orderQty = '500'): F => [
  [37, `V-${order}`], [11, order], [17, execId], [150, 'F'], [39, status], [55, 'VOD.L'], [54, side], [38, orderQty],
  [32, qty], [31, px], [15, 'GBP'], [14, cum], [151, leaves], [6, px], [60, time],
];

/** A FIX 4.4 drop-copy session: 13 messages, 3 fills (MsgSeqNum 5, 7, 10), a resend, a bust, a gap, a bad CheckSum. */
function session44(): string {
  const m = (fields: F, opts = {}) => `20261102-09:30:00.000 : ${fixMessage('FIX.4.4', fields, opts)}`;
  return [
    m(fromUs(1, 'A', [[98, '0'], [108, '30'], [141, 'Y']])),
    m(fromVenue(1, 'A', [[98, '0'], [108, '30'], [141, 'Y']])),
    m(fromVenue(2, '0', [])),
    m(fromUs(2, 'D', [[11, 'ORD-1'], [55, 'VOD.L'], [54, '1'], [38, '500'], [40, '2'], [44, '101.5'], [60, '20261102-09:29:00.000']])),
    m(fromVenue(3, '8', [[37, 'V-ORD-1'], [11, 'ORD-1'], [17, 'EX-0'], [150, '0'], [39, '0'], [55, 'VOD.L'], [54, '1'], [38, '500'], [14, '0'], [151, '500'], [6, '0']])),
    m(fromVenue(4, '0', [])),
    m(fromVenue(5, '8', fill('EX-1', 'ORD-1', '1', '100', '101.25', '20261102-09:30:00.123', '100', '400', '1'))),
    m(fromVenue(6, '0', [])),
    m(fromVenue(7, '8', fill('EX-2', 'ORD-1', '1', '400', '101.5', '20261102-09:30:01.456789', '500', '0', '2'))),
    m(fromVenue(7, '8', fill('EX-2', 'ORD-1', '1', '400', '101.5', '20261102-09:30:01.456789', '500', '0', '2'), [[43, 'Y'], [122, '20261102-09:30:00.000']])),
    m(fromVenue(8, '8', [[37, 'V-ORD-1'], [11, 'ORD-1'], [17, 'EX-1C'], [19, 'EX-1'], [150, 'H'], [39, '1'], [55, 'VOD.L'], [54, '1'], [14, '400'], [151, '100'], [6, '101.5']])),
    m(fromVenue(10, '8', fill('EX-3', 'ORD-2', '2', '50', '99.9', '20261102-09:31:00', '50', '0', '2', '50'))),
    m(fromVenue(11, '0', []), { checksum: '000' }),
    '',
  ].join('\n');
}

describe('FIX session logs', () => {
  it('FIX 4.4: fills into venue_fills with venue_seq 1, 2, 3 (MsgSeqNum 5, 7, 10); every control the log carries is checked', async () => {
    const dir = scratch();
    const log = join(dir, 'xlon-20261102.log');
    writeFileSync(log, session44());
    const out = join(dir, 'sources');
    const r = await reckonHere(['import', 'fix', log, '--out', out, '--json']);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    const fileId = `sha256:${sha(log)}`;
    expect(fillsOf(out, log)).toEqual([
      { venue_time_local: '2026-11-02T09:30:00.123', venue_timezone: 'UTC', venue_id: 'XLON', venue_fill_id: 'EX-1', order_id: 'ORD-1', instrument_id: 'VOD.L', side: 'BUY', fill_qty: '100', price: '101.25', price_currency: 'GBP', venue_seq: '1', file_id: fileId },
      { venue_time_local: '2026-11-02T09:30:01.456789', venue_timezone: 'UTC', venue_id: 'XLON', venue_fill_id: 'EX-2', order_id: 'ORD-1', instrument_id: 'VOD.L', side: 'BUY', fill_qty: '400', price: '101.5', price_currency: 'GBP', venue_seq: '2', file_id: fileId },
      { venue_time_local: '2026-11-02T09:31:00', venue_timezone: 'UTC', venue_id: 'XLON', venue_fill_id: 'EX-3', order_id: 'ORD-2', instrument_id: 'VOD.L', side: 'SELL', fill_qty: '50', price: '99.9', price_currency: 'GBP', venue_seq: '3', file_id: fileId },
    ]);
    const entry = importReport(out, 'venue_fills').imports[0];
    expect(entry.format_version).toBe('FIX.4.4');
    expect(entry.counts).toEqual({ messages: 13, execution_reports: 6, fills: 3, duplicate_fills: 1, heartbeats: 4 });
    expect(entry.fills).toMatchObject({ written: 3, by_venue: { XLON: 3 } });
    const count = (name: string, status: string) => entry.control_totals.filter((c: any) => c.check === name && c.status === status).length;
    expect([count('fix.BodyLength', 'ok'), count('fix.CheckSum', 'ok'), count('fix.CheckSum', 'mismatch')]).toEqual([13, 12, 1]);
    expect(entry.control_totals.filter((c: any) => c.check === 'fix.CumQty').map((c: any) => [c.scope, c.declared, c.recomputed, c.status])).toEqual([
      ['order V-ORD-1 fill ExecID EX-1', '100', '100', 'ok'], ['order V-ORD-1 fill ExecID EX-2', '500', '500', 'ok'], ['order V-ORD-2 fill ExecID EX-3', '50', '50', 'ok'],
    ]);
    expect(entry.control_totals.filter((c: any) => c.check === 'fix.LeavesQty').every((c: any) => c.status === 'ok')).toBe(true);
    expect(entry.mismatches.map((m: any) => [m.check, m.detail ?? ''])).toEqual([
      ['fix.CheckSum', expect.stringMatching(/^recomputed − declared = \d+$/)],
      ['fix.trade_correction', 'ExecutionReport ExecID EX-1C (refers to EX-1) is a trade cancel (bust): not imported as a fill; apply it by hand'],
      ['fix.MsgSeqNum_gap', 'MsgSeqNum 10 where 9 was expected: 1 message(s) missing'],
    ]);
    expect(entry.notes).toEqual(['ExecID EX-2 at line 10 repeats the fill at line 9 (resend, PossDupFlag Y); counted once']);
  });

  it('FIX 4.2 with | delimiters: ExecType 2 fills, a busted fill (ExecTransType 1) is not one; the account map names the venue', async () => {
    const dir = scratch();
    const m = (seq: number, body: F) => fixMessage('FIX.4.2', fromVenue(seq, '8', body), { delim: '|' });
    const f42 = (exec: string, trans: string, qty: string): F => [[37, 'V9'], [11, 'C-9'], [17, exec], [20, trans], [150, '2'], [39, '2'], [55, 'AAPL'], [54, '5'], [32, qty], [31, '187.0000'], [15, 'USD'], [60, '20261102-14:30:00']];
    const log = join(dir, 'xnas.log');
    writeFileSync(log, [fixMessage('FIX.4.2', fromVenue(1, '0', []), { delim: '|' }), m(2, f42('E1', '0', '10')), m(3, f42('E2', '1', '10')), ''].join('\n'));
    const map = join(dir, 'map.json');
    writeFileSync(map, JSON.stringify({ venues: [{ sender_comp_id: 'XLON', venue_id: 'VENUE-A' }] }));
    const out = join(dir, 'sources');
    const r = await reckonHere(['import', 'fix', log, '--out', out, '--account-map', map]);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(fillsOf(out, log).map((f) => [f.venue_id, f.venue_fill_id, f.side, f.fill_qty, f.price, f.venue_seq])).toEqual([['VENUE-A', 'E1', 'SELL', '10', '187.0000', '1']]);
    const entry = importReport(out, 'venue_fills').imports[0];
    expect(entry.format_version).toBe('FIX.4.2');
    expect(entry.control_totals.filter((c: any) => c.check === 'fix.CheckSum').every((c: any) => c.status === 'ok')).toBe(true);
    expect(entry.mismatches.map((x: any) => x.check)).toEqual(['fix.trade_correction']);
  });

  it('a fill without Currency, or with a TransactTime finer than a microsecond, is refused and nothing is written', async () => {
    for (const [tag, value, message] of [[15, '', 'has no Currency (15)'], [60, '20261102-09:30:00.1234567', 'finer than a microsecond']] as const) {
      const dir = scratch();
      const body = fill('EX-9', 'ORD-9', '1', '1', '1', '20261102-09:30:00', '1', '0', '2').map(([t, v]) => [t, t === tag ? value : v] as [number, string]).filter(([, v]) => v !== '');
      const log = join(dir, 'bad.log');
      writeFileSync(log, `${fixMessage('FIX.4.4', fromVenue(1, '8', body))}\n`);
      const r = await reckonHere(['import', 'fix', log, '--out', join(dir, 'sources')]);
      expect(r.code).toBe(3);
      expect(r.stderr).toContain(message);
      expect(existsSync(join(dir, 'sources'))).toBe(false);
    }
  });
});
