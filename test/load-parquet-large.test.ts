/**
 * Regression (found at 1M orders): every row of a large Parquet file is loaded. A Parquet file of
 * 300,000 order rows (more than one DuckDB row group and more than the appender's flush size)
 * must load 300,000 records, none silently dropped.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { mkdirSync, writeFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { reckon, scratchDir } from './helpers/cli.js';
import { withDuck } from './helpers/duckdb.js';

const tmp = scratchDir('reckon-parquet-large-');
afterAll(() => tmp.cleanup());

describe('a large Parquet file', () => {
  it('loads every one of its 300,000 rows', async () => {
    const sources = join(tmp.dir, 'sources');
    mkdirSync(join(sources, 'orders'), { recursive: true });
    const path = join(sources, 'orders', 'part-1.parquet');
    await withDuck((c) => c.run(`COPY (
      SELECT TIMESTAMPTZ '2026-11-02 00:00:00+00' + to_microseconds(i * 250000) AS accepted_at,
             'ORD-' || lpad(i::VARCHAR, 7, '0') AS order_id, 1::BIGINT AS order_version, 'C' || i AS client_order_id,
             'ACC-1' AS account_id, 'US-ACME' AS instrument_id, 'BUY' AS side, (i % 97 + 1)::DECIMAL(38,18) AS ordered_qty,
             'CANCELED' AS status, TIMESTAMPTZ '2026-11-02 00:00:00+00' + to_microseconds(i * 250000) AS event_at,
             TIMESTAMPTZ '2026-11-02 00:00:01+00' + to_microseconds(i * 250000) AS ingested_at
      FROM range(300000) t(i)) TO '${path}' (FORMAT parquet, ROW_GROUP_SIZE 50000)`));
    writeFileSync(join(sources, 'orders', '_watermark.json'), JSON.stringify({ watermark: '2026-11-04T00:00:00Z' }));
    const r = reckon(['run', '--date', '2026-11-02', '--control', 'RC01', '--sources', sources, '--store', join(tmp.dir, 'store'), '--json', '--quiet']);
    expect(r.json, r.stderr).toBeDefined();
    const m = JSON.parse(readFileSync(r.json.manifest.path, 'utf8'));
    expect(m.sources.datasets.orders.records_read).toBe(300000);
    expect(m.sources.datasets.orders.records_loaded).toBe(300000);
    // 2026-11-02 holds i < 345,600 quarter-seconds: every order is accepted in the window.
    expect(r.json.controls[0].totals.accepted_count).toBe('300000');
  });
});
