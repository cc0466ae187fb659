/**
 * Regression (found at 1M orders): every row of a large Parquet file is loaded. The loader once
 * lost every row past its DuckDB appender's first flush (204,800 rows) without a word. A Parquet
 * file of 210,000 order rows is the smallest round size past that flush; it is also past one DuckDB
 * row group (122,880 rows) and past the Parquet reader's page (PARQUET_PAGE_ROWS, 50,000), and it
 * is written as five Parquet row groups (checked here). It must load 210,000 records, none
 * silently dropped.
 *
 * The day is otherwise consistent (a SENT outbox event per order, also Parquet, and an empty
 * executions extract), so RC01 is CLEAN: a run over 210,000 differences would spend its time
 * writing them, not loading. Run in process: what was loaded is under test, not the process.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PARQUET_PAGE_ROWS } from '../pipeline/sources/readers.js';
import { reckonHere, scratchDir } from './helpers/cli.js';
import { withDuck } from './helpers/duckdb.js';
import { writeDataset, writeWatermark } from './fixtures/datasets.js';

const tmp = scratchDir('reckon-parquet-large-');
afterAll(() => tmp.cleanup());

const ROWS = 210_000;
const APPENDER_FLUSH_ROWS = 204_800;
const DUCKDB_ROW_GROUP_ROWS = 122_880;
const WATERMARK = '2026-11-04T00:00:00Z';

describe('a large Parquet file', () => {
  it(`loads every one of its ${ROWS.toLocaleString('en-US')} rows`, async () => {
    expect(ROWS).toBeGreaterThan(Math.max(APPENDER_FLUSH_ROWS, DUCKDB_ROW_GROUP_ROWS, PARQUET_PAGE_ROWS));
    const sources = join(tmp.dir, 'sources');
    for (const d of ['orders', 'outbox_events']) writeWatermark(sources, d, WATERMARK);
    writeDataset(sources, 'executions', [], WATERMARK);
    const path = join(sources, 'orders', 'part-1.parquet');
    const groups = await withDuck(async (c) => {
      await c.run(`COPY (
        SELECT TIMESTAMPTZ '2026-11-02 00:00:00+00' + to_microseconds(i * 250000) AS accepted_at,
               'ORD-' || lpad(i::VARCHAR, 7, '0') AS order_id, 1::BIGINT AS order_version, 'C' || i AS client_order_id,
               'ACC-1' AS account_id, 'US-ACME' AS instrument_id, 'BUY' AS side, (i % 97 + 1)::DECIMAL(38,18) AS ordered_qty,
               'CANCELED' AS status, TIMESTAMPTZ '2026-11-02 00:00:00+00' + to_microseconds(i * 250000) AS event_at,
               TIMESTAMPTZ '2026-11-02 00:00:01+00' + to_microseconds(i * 250000) AS ingested_at
        FROM range(${ROWS}) t(i)) TO '${path}' (FORMAT parquet, ROW_GROUP_SIZE 50000)`);
      await c.run(`COPY (
        SELECT TIMESTAMPTZ '2026-11-02 00:00:00+00' + to_microseconds(i * 250000) AS created_at, 'EV-' || i AS event_id,
               'ORD-' || lpad(i::VARCHAR, 7, '0') AS aggregate_id, 'OrderAccepted' AS event_type, 'SENT' AS publish_status,
               TIMESTAMPTZ '2026-11-02 00:00:01+00' + to_microseconds(i * 250000) AS published_at
        FROM range(${ROWS}) t(i)) TO '${join(sources, 'outbox_events', 'part-1.parquet')}' (FORMAT parquet, ROW_GROUP_SIZE 50000)`);
      return (await c.runAndReadAll(`SELECT count(DISTINCT row_group_id)::INTEGER FROM parquet_metadata('${path}')`)).getRows()[0][0];
    });
    expect(groups).toBe(5);
    const r = await reckonHere(['run', '--date', '2026-11-02', '--control', 'RC01', '--sources', sources, '--store', join(tmp.dir, 'store'), '--json', '--quiet']);
    expect(r.json, r.stderr).toBeDefined();
    const m = JSON.parse(readFileSync(r.json.manifest.path, 'utf8'));
    expect(m.sources.datasets.orders.records_read).toBe(ROWS);
    expect(m.sources.datasets.orders.records_loaded).toBe(ROWS);
    expect(m.sources.datasets.outbox_events.records_loaded).toBe(ROWS);
    // 2026-11-02 holds i < 345,600 quarter-seconds: every order is accepted in the window.
    expect(r.json.controls[0].totals.accepted_count).toBe(String(ROWS));
    expect(r.json.controls[0].status).toBe('CLEAN');
  });
});
