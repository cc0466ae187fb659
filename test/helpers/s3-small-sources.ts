/**
 * A small source set for the S3 and output tests (CONTRACT §2), written from the contract: one
 * day (2026-11-02) of orders, outbox events, executions and venue fills with declared
 * watermarks, holding one ORDER_VERSION_GAP (ORD-2) and one FILL_PRICE_MISMATCH (XLON|VF-2), and
 * one notification receipt with a lower-case status, which is quarantined (RC06 INCOMPLETE).
 * Files named `_notes.csv` and `.hidden.csv` must never be read.
 */
import { mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const WM = '{"watermark": "2026-11-03T00:05:00Z", "complete": true}\n';

const FILES: Record<string, string> = {
  'orders/part-0001.csv': [
    'accepted_at,order_id,order_version,client_order_id,account_id,instrument_id,side,ordered_qty,status,event_at,ingested_at',
    '2026-11-02T09:30:00.123456Z,ORD-1,1,C-1,ACC-1,GB-VOD,BUY,100,ACCEPTED,2026-11-02T09:30:00.123456Z,2026-11-02T09:30:01Z',
    '2026-11-02T09:30:00.123456Z,ORD-1,2,C-1,ACC-1,GB-VOD,BUY,100,ROUTED,2026-11-02T09:30:00.5Z,2026-11-02T09:30:02Z',
    '2026-11-02T09:30:00.123456Z,ORD-1,3,C-1,ACC-1,GB-VOD,BUY,100,FILLED,2026-11-02T09:31:00Z,2026-11-02T09:31:01Z',
    '2026-11-02T10:00:00Z,ORD-2,1,C-2,ACC-1,GB-BP,SELL,50.0,ACCEPTED,2026-11-02T10:00:00Z,2026-11-02T10:00:01Z',
    '2026-11-02T10:00:00Z,ORD-2,3,C-2,ACC-1,GB-BP,SELL,50.0,FILLED,2026-11-02T10:01:00Z,2026-11-02T10:01:01Z',
  ].join('\n') + '\n',
  'orders/_watermark.json': WM,
  'orders/_notes.csv': 'not,data\n1,2\n',
  'orders/.hidden.csv': 'not,data\n',
  'outbox_events/part-0001.csv': [
    'created_at,event_id,aggregate_id,event_type,publish_status,published_at',
    '2026-11-02T09:30:00.2Z,EV-1,ORD-1,OrderAccepted,SENT,2026-11-02T09:30:00.3Z',
    '2026-11-02T10:00:00.2Z,EV-2,ORD-2,OrderAccepted,SENT,2026-11-02T10:00:00.3Z',
  ].join('\n') + '\n',
  'outbox_events/_watermark.json': WM,
  'executions/part-0001.csv': [
    'executed_at,execution_id,order_id,account_id,venue_id,venue_fill_id,instrument_id,side,fill_qty,price,price_currency,execution_seq,ingested_at',
    '2026-11-02T09:31:00Z,EX-1,ORD-1,ACC-1,XLON,VF-1,GB-VOD,BUY,100,10.25,GBP,1,2026-11-02T09:31:01Z',
    '2026-11-02T10:01:00Z,EX-2,ORD-2,ACC-1,XLON,VF-2,GB-BP,SELL,50,3.5,GBP,2,2026-11-02T10:01:01Z',
  ].join('\n') + '\n',
  'executions/_watermark.json': WM,
  'venue_fills/part-0001.csv': [
    'venue_time_local,venue_timezone,venue_id,venue_fill_id,order_id,instrument_id,side,fill_qty,price,price_currency,venue_seq,file_id',
    '2026-11-02T09:31:00,Europe/London,XLON,VF-1,ORD-1,GB-VOD,BUY,100,10.250,GBP,1,F-1',
    '2026-11-02T10:01:00,Europe/London,XLON,VF-2,ORD-2,GB-BP,SELL,50,3.6,GBP,2,F-1',
  ].join('\n') + '\n',
  'venue_fills/_watermark.json': WM,
  'notification_receipts/part-0001.csv': [
    'provider_time_local,provider_timezone,receipt_id,intent_id,channel,status',
    '2026-11-02T11:00:00,Europe/London,RC-1,IN-1,email,delivered',
  ].join('\n') + '\n',
};

/** Writes the source set under `dir` and returns the relative paths written, sorted. */
export function writeSmallSources(dir: string): string[] {
  for (const [rel, text] of Object.entries(FILES)) {
    mkdirSync(join(dir, rel, '..'), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
  return Object.keys(FILES).sort();
}

/** Every file under `dir`, as `/`-separated relative paths. */
export function filesUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p); else out.push(relative(dir, p).split('\\').join('/'));
    }
  };
  walk(dir);
  return out.sort();
}
