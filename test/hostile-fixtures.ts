/**
 * A small, consistent day of source extracts made in code (never copied from ../shared), for the
 * hostile-input and fuzz tests: `n` orders, each accepted, routed and filled by one execution that
 * the venue confirms, posted to the ledger, reflected in balances, positions and the projection,
 * and notified. Every control reports CLEAN on it for the window 2026-11-02, so any other status
 * in a test comes from what the test did to the files.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DATASETS } from '../pipeline/contract/datasets.js';

/** One dataset's rows as text fields, in the header's column order. */
export interface Table { readonly header: readonly string[]; readonly rows: string[][] }
export type Day = Record<string, Table>;

export const WINDOW = '2026-11-02T00:00:00Z/2026-11-03T00:00:00Z';
export const WATERMARK = '2026-11-03T00:05:00Z';

const iso = (ms: number, local = false) => {
  const s = new Date(ms).toISOString().replace(/\.000Z$/, 'Z');
  return local ? s.replace(/Z$/, '') : s;
};

/** The consistent day with `n` orders (n ≥ 1). Quantities and prices are exact decimal texts. */
export function validDay(n = 3): Day {
  const day: Day = {};
  for (const d of DATASETS) day[d.name] = { header: d.columns.map((c) => c.name), rows: [] };
  const base = Date.UTC(2026, 10, 2, 9, 0, 0);
  let sumQty = 0n;
  let sumNotional = 0n;
  for (let i = 1; i <= n; i++) {
    const t = base + i * 60_000;
    const id = String(i).padStart(4, '0');
    const qty = BigInt(10 + i);
    const notional = qty * 10_050n; // qty × 100.50 USD, in cents
    sumQty += qty;
    sumNotional += notional;
    day.orders.rows.push(
      [iso(t), `ORD-${id}`, '1', `C-${id}`, 'ACC-1', 'US-ACME', 'BUY', String(qty), 'ACCEPTED', iso(t), iso(t + 1000)],
      [iso(t), `ORD-${id}`, '2', `C-${id}`, 'ACC-1', 'US-ACME', 'BUY', String(qty), 'ROUTED', iso(t + 1000), iso(t + 2000)],
      [iso(t), `ORD-${id}`, '3', `C-${id}`, 'ACC-1', 'US-ACME', 'BUY', String(qty), 'FILLED', iso(t + 3000), iso(t + 4000)],
    );
    day.outbox_events.rows.push([iso(t), `EV-${id}`, `ORD-${id}`, 'OrderAccepted', 'SENT', iso(t + 500)]);
    day.executions.rows.push([iso(t + 2000), `EXE-${id}`, `ORD-${id}`, 'ACC-1', 'XNYS', `VF-${id}`, 'US-ACME', 'BUY', String(qty), '100.50', 'USD', '1', iso(t + 2500)]);
    // New York is UTC−5 on 2026-11-02.
    day.venue_fills.rows.push([iso(t + 2000 - 5 * 3_600_000, true), 'America/New_York', 'XNYS', `VF-${id}`, `ORD-${id}`, 'US-ACME', 'BUY', String(qty), '100.5', 'USD', String(i), 'XNYS-20261102']);
    day.ledger_postings.rows.push(
      [iso(t + 2000), `PS-${id}`, '1', 'ACC-1', 'USD', 'DEBIT', String(notional), 'TRADE', `EXE-${id}`, '', String(2 * i - 1), iso(t + 3000)],
      [iso(t + 2000), `PS-${id}`, '2', 'CLEAR-1', 'USD', 'CREDIT', String(notional), 'TRADE', `EXE-${id}`, '', String(2 * i), iso(t + 3000)],
    );
    day.notification_intents.rows.push([iso(t + 4000), `INT-${id}`, `ORD-${id}`, 'fill-v1', 'EMAIL', 'true', iso(t + 86_400_000)]);
    // London is UTC+0 on 2026-11-02.
    day.notification_receipts.rows.push([iso(t + 5000, true), 'Europe/London', `RCP-${id}`, `INT-${id}`, 'EMAIL', 'DELIVERED']);
  }
  const start = '2026-11-02T00:00:00Z';
  const end = '2026-11-03T00:00:00Z';
  day.account_balances.rows.push(
    [start, 'ACC-1', 'USD', '0', '0', '0'], [start, 'CLEAR-1', 'USD', '0', '0', '0'],
    [end, 'ACC-1', 'USD', String(-sumNotional), '0', String(-sumNotional)], [end, 'CLEAR-1', 'USD', String(sumNotional), '0', String(sumNotional)],
  );
  day.positions.rows.push([start, 'ACC-1', 'US-ACME', '0', '0', 'USD']);
  day.portfolio_projection.rows.push(['2026-11-03T00:04:00Z', 'BUILD-1', 'ACC-1', 'US-ACME', String(sumQty), String(sumNotional), 'USD', '1']);
  return day;
}

/** One CSV field, quoted when RFC 4180 needs it (or always, with `force`). */
export function csvField(v: string, force = false): string {
  return force || /[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

/** One CSV record (no line end). */
export function csvLine(fields: readonly string[]): string {
  return fields.map((f) => csvField(f)).join(',');
}

/** A table as CSV text with LF line ends and a final line end. */
export function csvText(t: Table): string {
  return [t.header, ...t.rows].map(csvLine).join('\n') + '\n';
}

/** A table as JSON Lines: every value a JSON string, empty values omitted. */
const BOOL_COLUMNS = new Set(['required', 'complete']);

export function jsonlText(t: Table): string {
  // Bool columns hold JSON true/false in JSON Lines (CONTRACT §1); everything else stays a string.
  const value = (h: string, v: string) => (BOOL_COLUMNS.has(h) && (v === 'true' || v === 'false') ? v === 'true' : v);
  return t.rows.map((r) => JSON.stringify(Object.fromEntries(t.header.map((h, i) => [h, value(h, r[i])]).filter(([, v]) => v !== '')))).join('\n') + (t.rows.length ? '\n' : '');
}

/**
 * Writes the day under `root` (one folder per dataset, `part-0001.csv` and `_watermark.json`
 * each). `skip` leaves datasets' data files out (the folder and watermark stay).
 */
export function writeDay(root: string, day: Day, skip: readonly string[] = []): void {
  for (const [name, t] of Object.entries(day)) {
    const dir = join(root, name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, '_watermark.json'), JSON.stringify({ watermark: WATERMARK, complete: true }));
    if (!skip.includes(name)) writeFileSync(join(dir, 'part-0001.csv'), csvText(t));
  }
}

/** Controls that read each dataset (CONTRACT §3). */
export const READERS: Readonly<Record<string, readonly string[]>> = {
  orders: ['RC01', 'RC02'], outbox_events: ['RC01'], executions: ['RC01', 'RC02', 'RC03', 'RC04', 'RC05'],
  venue_fills: ['RC02', 'RC04'], ledger_postings: ['RC03', 'RC04'], account_balances: ['RC03'], reservations: ['RC03'],
  positions: ['RC04', 'RC05'], bank_statements: ['RC04'], bank_statement_lines: ['RC04'], custodian_positions: ['RC04'],
  portfolio_projection: ['RC05'], notification_intents: ['RC06'], notification_receipts: ['RC06'], notification_exceptions: ['RC06'],
};
