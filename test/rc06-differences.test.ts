/**
 * RC06 notifications (CONTRACT §4 RC06, §1 local times), one fault per test on a tiny clean day,
 * through the real CLI. Receipts carry provider local times in Los Angeles and Tokyo that are
 * mapped to UTC before any scope decision. Traps on the clean day: an intent exactly at the SLA
 * (3600 s, not breached), a delivery on another channel outside the window, an approved
 * exception, an optional intent, an intent of the day before, a failed attempt followed by a
 * delivery, one receipt_id delivered twice (differing rows), and a receipt for an unknown intent
 * one microsecond before the window (local time on the US fall-back day).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { runControl, scratchSources, watermarksFor, writeSources, type Row } from './fixtures/rc04-rc06.js';

const WINDOW = '2026-11-02T00:00:00Z/2026-11-03T00:00:00Z';
const AS_OF = '2026-11-03T00:05:00Z';
const work = scratchSources('reckon-rc06-');
afterAll(() => work.cleanup());

type Day = Record<'notification_intents' | 'notification_receipts' | 'notification_exceptions', Row[]>;

const intent = (created_at: string, intent_id: string, required = 'true'): Row => ({
  created_at, intent_id, authority_ref: `ORD-${intent_id}`, template_version: 'fill-v3', channel: 'EMAIL', required, expires_at: '2026-11-04T00:00:00Z',
});
const receipt = (local: string, tz: string, receipt_id: string, intent_id: string, status: string, channel = 'EMAIL'): Row => ({
  provider_time_local: local, provider_timezone: tz, receipt_id, intent_id, channel, status,
});
const LA = 'America/Los_Angeles';

function cleanDay(): Day {
  return {
    notification_intents: [
      intent('2026-11-02T10:00:00Z', 'I-OK'),
      intent('2026-11-02T23:05:00Z', 'I-EDGE'), //          age exactly 3600 s at as-of: not breached
      intent('2026-11-02T05:00:00Z', 'I-LATE-RCPT'), //     delivered by SMS after the window
      intent('2026-11-02T06:00:00Z', 'I-EXC'), //           approved exception
      intent('2026-11-02T06:00:00Z', 'I-OPT', 'false'), //  not required
      intent('2026-11-01T10:00:00Z', 'I-YDAY'), //          created the day before: out of scope
      intent('2026-11-02T07:00:00Z', 'I-RETRY'), //         failed once, then delivered
    ],
    notification_receipts: [
      receipt('2026-11-02T03:00:00.123456', LA, 'R-OK', 'I-OK', 'DELIVERED'), //            11:00:00.123456Z
      receipt('2026-11-02T03:00:00.123456', LA, 'R-OK', 'I-OK', 'DELIVERED', 'PUSH'), //    same receipt_id, differing row
      receipt('2026-11-02T17:00:00', LA, 'R-LATE', 'I-LATE-RCPT', 'DELIVERED', 'SMS'), //   2026-11-03T01:00Z
      receipt('2026-11-02T00:00:00', 'Asia/Tokyo', 'R-F1', 'I-RETRY', 'FAILED'), //         2026-11-01T15:00Z
      receipt('2026-11-02T17:00:00', 'Asia/Tokyo', 'R-F2', 'I-RETRY', 'DELIVERED'), //      08:00Z
      receipt('2026-11-01T15:59:59.999999', LA, 'R-OUT', 'INT-404', 'DELIVERED'), //        PST: 23:59:59.999999Z the day before
    ],
    notification_exceptions: [
      { approved_at: '2026-11-02T08:00:00Z', intent_id: 'I-EXC', approved_by: 'ops.lead', reason: 'customer opted out, by phone' },
    ],
  };
}

const CLEAN_TOTALS = {
  intent_count: '5', //      I-OK, I-EDGE, I-LATE-RCPT, I-EXC, I-RETRY
  delivered_count: '3', //   I-OK, I-LATE-RCPT, I-RETRY
  failed_count: '0',
  exception_count: '1',
  oldest_undelivered_age_s: '3600', // I-EDGE
  receipt_count_by_status: { DELIVERED: '3' }, // in scope: R-OK (two rows), R-F2
};

let n = 0;
function run(day: Day, window = WINDOW) {
  const dir = `${work.sources}-${++n}`;
  writeSources(dir, day, watermarksFor('RC06', AS_OF));
  return runControl('RC06', window, dir, work.dir);
}

describe('RC06 on a clean day with traps', () => {
  it('is CLEAN with exact totals', async () => {
    const r = await run(cleanDay());
    expect(r.keys).toEqual([]);
    expect(r.control.status).toBe('CLEAN');
    expect(r.code).toBe(0);
    expect(r.control.totals).toEqual(CLEAN_TOTALS);
  });
});

describe('RC06 one fault per difference kind', () => {
  it('NOTICE_UNDELIVERED: one microsecond past the notice SLA', async () => {
    const day = cleanDay();
    day.notification_intents = day.notification_intents.map((i) => (i.intent_id === 'I-EDGE' ? { ...i, created_at: '2026-11-02T23:04:59.999999Z' } : i));
    const r = await run(day);
    expect(r.keys).toEqual([['NOTICE_UNDELIVERED', 'I-EDGE']]);
    expect(r.details['NOTICE_UNDELIVERED I-EDGE']).toBe('no DELIVERED receipt and no approved exception; created 2026-11-02T23:04:59.999999Z, age 3600.000001 s > notice SLA 3600 s');
    expect(r.control.totals.oldest_undelivered_age_s).toBe('3600.000001');
    expect(r.code).toBe(1);
  });

  it('NOTICE_UNDELIVERED: failed attempts only', async () => {
    const day = cleanDay();
    day.notification_receipts = day.notification_receipts.filter((x) => x.receipt_id !== 'R-F2');
    const r = await run(day);
    expect(r.keys).toEqual([['NOTICE_UNDELIVERED', 'I-RETRY']]);
    expect(r.control.totals).toEqual({
      ...CLEAN_TOTALS, delivered_count: '2', failed_count: '1', oldest_undelivered_age_s: '61500', receipt_count_by_status: { DELIVERED: '2' },
    });
  });

  it('NOTICE_RECEIPT_UNKNOWN_INTENT: a receipt mapped to exactly the window start names no intent', async () => {
    const day = cleanDay();
    // 16:00 PST on 2026-11-01 (after the 02:00 fall-back) is 2026-11-02T00:00:00Z: in scope.
    day.notification_receipts.push(receipt('2026-11-01T16:00:00', LA, 'R-IN', 'INT-404', 'DELIVERED'));
    // A receipt for an optional intent is not unknown.
    day.notification_receipts.push(receipt('2026-11-02T01:00:00', LA, 'R-OPT', 'I-OPT', 'DELIVERED'));
    const r = await run(day);
    expect(r.keys).toEqual([['NOTICE_RECEIPT_UNKNOWN_INTENT', 'R-IN']]);
    expect(r.control.differences[0].record_time).toBe('2026-11-02T00:00:00Z');
    expect(r.details['NOTICE_RECEIPT_UNKNOWN_INTENT R-IN']).toBe('receipt names intent INT-404, which is not in the intents extract');
  });

  it('NOTICE_DUPLICATE_RECEIPT: DELIVERED under two receipt_ids (the second outside the window still counts)', async () => {
    const day = cleanDay();
    day.notification_receipts.push(receipt('2026-11-03T09:00:00', 'Asia/Tokyo', 'R-OK2', 'I-OK', 'DELIVERED', 'SMS')); // 2026-11-03T00:00Z
    const r = await run(day);
    expect(r.keys).toEqual([['NOTICE_DUPLICATE_RECEIPT', 'I-OK']]);
    expect(r.details['NOTICE_DUPLICATE_RECEIPT I-OK']).toBe('2 DELIVERED receipts under distinct receipt_ids');
  });
});

describe('RC06 receipts in provider local time (CONTRACT §1)', () => {
  it('a local time that occurs twice takes the earlier instant (01:30 in Los Angeles on 2026-11-01 is 08:30Z, not 09:30Z)', async () => {
    const day = cleanDay();
    day.notification_receipts.push(receipt('2026-11-01T01:30:00.250000', LA, 'R-AMBIG', 'INT-405', 'BOUNCED'));
    const r = await run(day, '2026-11-01T00:00:00Z/2026-11-02T00:00:00Z');
    expect(r.keys).toEqual([
      ['NOTICE_RECEIPT_UNKNOWN_INTENT', 'R-AMBIG'],
      ['NOTICE_RECEIPT_UNKNOWN_INTENT', 'R-OUT'],
      ['NOTICE_UNDELIVERED', 'I-YDAY'],
    ]);
    const byKey = Object.fromEntries(r.control.differences.map((d: any) => [d.key, d.record_time]));
    expect(byKey['R-AMBIG']).toBe('2026-11-01T08:30:00.250000Z');
    expect(byKey['R-OUT']).toBe('2026-11-01T23:59:59.999999Z');
    expect(r.control.totals.receipt_count_by_status).toEqual({ BOUNCED: '1', DELIVERED: '1', FAILED: '1' });
  });

  it('a local time in a DST gap is quarantined, and RC06 reports INCOMPLETE (exit 3)', async () => {
    const day = cleanDay();
    day.notification_receipts.push(receipt('2026-03-08T02:30:00', LA, 'R-GAP', 'I-OK', 'DELIVERED'));
    const r = await run(day);
    expect(r.control.status).toBe('INCOMPLETE');
    expect(r.code).toBe(3);
    expect(r.json.quarantine_count).toBe(1);
    const [q] = r.manifest.quarantine.entries;
    expect([q.dataset, q.row, q.column, q.rule]).toEqual(['notification_receipts', 7, 'provider_time_local', 'local_time_gap']);
  });
});
