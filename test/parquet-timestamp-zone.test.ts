/**
 * CONTRACT §1: a timestamp column in Parquet is TIMESTAMP *UTC-adjusted*, and a value without zone
 * is rejected. DuckDB reads a UTC-adjusted column as TIMESTAMP WITH TIME ZONE and one written
 * without zone (isAdjustedToUTC = false: pandas' naive datetimes, DuckDB's own TIMESTAMP) as plain
 * TIMESTAMP, which the loader used to take for UTC. Each such value is now quarantined as
 * `timestamp_without_zone` with its wall-clock text, on every path (JS reader, SQL fast path, view
 * mode), exactly as the same value written in a CSV file without `Z` would be.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { loadConfig, type Config } from '../pipeline/config.js';
import { loadSources, type FilePath } from '../pipeline/load.js';
import { naiveTimestampColumns } from '../pipeline/sources/readers.js';
import { scratchDir } from './helpers/cli.js';

const tmp = scratchDir('reckon-parquet-zone-');
let writer: DuckDBInstance;
let w: DuckDBConnection;
let config: Config;
let counter = 0;

beforeAll(async () => {
  writer = await DuckDBInstance.create(':memory:');
  w = await writer.connect();
  await w.run(`SET TimeZone = 'UTC'`);
  config = (await loadConfig()).config;
});
afterAll(() => {
  w.closeSync();
  writer.closeSync();
  tmp.cleanup();
});

/** Writes an outbox_events Parquet file whose created_at / published_at have the given DuckDB types. */
async function writeOutbox(root: string, file: string, createdType: string, publishedType: string): Promise<string> {
  const dir = join(root, 'outbox_events');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, file);
  await w.run(`COPY (
    SELECT '2026-11-02 10:00:00.25'::${createdType} AS created_at, 'EV-' || '${file}-1' AS event_id, 'ORD-1' AS aggregate_id,
           'OrderAccepted' AS event_type, 'SENT' AS publish_status, '2026-11-02 10:00:01'::${publishedType} AS published_at
    UNION ALL
    SELECT '2026-11-02 11:00:00'::${createdType}, 'EV-' || '${file}-2', 'ORD-2', 'OrderAccepted', 'PENDING', NULL
  ) TO '${path}' (FORMAT parquet)`);
  return path;
}

async function load(root: string, opts: { fast: boolean; views: boolean }) {
  const db = await DuckDBInstance.create(':memory:', { threads: '2', preserve_insertion_order: 'false' });
  const c = await db.connect();
  try {
    await c.run(`SET TimeZone = 'UTC'`);
    const paths = new Map<string, string>();
    const r = await loadSources(c, root, config, join(tmp.dir, `links-${++counter}`), { ...opts, datasets: ['outbox_events'], onFile: (f: FilePath) => paths.set(f.path, f.loadedBy) });
    const rows = (await c.runAndReadAll(`SELECT event_id, strftime(created_at, '%Y-%m-%dT%H:%M:%S.%fZ') FROM outbox_events ORDER BY event_id`)).getRows().map((x) => x.map(String));
    return { r, rows, paths };
  } finally {
    c.closeSync();
    db.closeSync();
  }
}

describe('Parquet timestamps must be UTC-adjusted (CONTRACT §1)', () => {
  it('names the columns written without zone: TIMESTAMP, TIMESTAMP_MS, TIMESTAMP_NS, not TIMESTAMPTZ', async () => {
    const path = join(tmp.dir, 'kinds.parquet');
    await w.run(`COPY (SELECT TIMESTAMP '2026-11-02 10:00:00' AS a, TIMESTAMPTZ '2026-11-02 10:00:00+00' AS b, TIMESTAMP_MS '2026-11-02 10:00:00' AS m, TIMESTAMP_NS '2026-11-02 10:00:00' AS n, DATE '2026-11-02' AS d) TO '${path}' (FORMAT parquet)`);
    expect([...await naiveTimestampColumns(w, path)].sort()).toEqual(['a', 'm', 'n']);
  });

  for (const opts of [{ fast: false, views: false }, { fast: true, views: false }, { fast: true, views: true }]) {
    it(`quarantines every value without zone and loads the UTC-adjusted file (fast ${opts.fast}, views ${opts.views})`, async () => {
      const root = join(tmp.dir, `case-${++counter}`);
      await writeOutbox(root, 'a-naive.parquet', 'TIMESTAMP', 'TIMESTAMP');
      await writeOutbox(root, 'b-naive-ns.parquet', 'TIMESTAMP_NS', 'TIMESTAMPTZ');
      await writeOutbox(root, 'c-utc.parquet', 'TIMESTAMPTZ', 'TIMESTAMPTZ');
      // Only published_at lacks a zone here; its second row is empty, which is no value at all.
      await writeOutbox(root, 'd-naive-published.parquet', 'TIMESTAMPTZ', 'TIMESTAMP_MS');
      const { r, rows, paths } = await load(root, opts);

      // The raw text of a Parquet record is its values as JSON; the rejected value is shown without zone.
      const entries = r.quarantine.map((e) => [e.file, e.row, e.column, e.rule, (JSON.parse(e.raw) as Record<string, string>)[e.column!]]);
      expect(r.quarantine.at(-1)!.raw).toBe('{"created_at":"2026-11-02T10:00:00.250000Z","event_id":"EV-d-naive-published.parquet-1","aggregate_id":"ORD-1","event_type":"OrderAccepted","publish_status":"SENT","published_at":"2026-11-02T10:00:01.000000"}');
      expect(entries).toEqual([
        ['outbox_events/a-naive.parquet', 1, 'created_at', 'timestamp_without_zone', '2026-11-02T10:00:00.250000'],
        ['outbox_events/a-naive.parquet', 2, 'created_at', 'timestamp_without_zone', '2026-11-02T11:00:00.000000'],
        ['outbox_events/b-naive-ns.parquet', 1, 'created_at', 'timestamp_without_zone', '2026-11-02T10:00:00.250000'],
        ['outbox_events/b-naive-ns.parquet', 2, 'created_at', 'timestamp_without_zone', '2026-11-02T11:00:00.000000'],
        ['outbox_events/d-naive-published.parquet', 1, 'published_at', 'timestamp_without_zone', '2026-11-02T10:00:01.000000'],
      ]);
      for (const e of r.quarantine) expect(e.message).toMatch(/has no zone \(Z or ±HH:MM\); a timestamp without zone is rejected/);
      expect(rows).toEqual([
        ['EV-c-utc.parquet-1', '2026-11-02T10:00:00.250000Z'],
        ['EV-c-utc.parquet-2', '2026-11-02T11:00:00.000000Z'],
        ['EV-d-naive-published.parquet-2', '2026-11-02T11:00:00.000000Z'],
      ]);
      const ds = r.datasets.find((d) => d.dataset === 'outbox_events')!;
      expect([ds.records_read, ds.records_loaded, ds.quarantined]).toEqual([8, 3, 5]);
      // The UTC-adjusted file keeps the fast path; the others are read whole by the JS reader.
      if (opts.fast) expect([paths.get('outbox_events/a-naive.parquet'), paths.get('outbox_events/c-utc.parquet')]).toEqual(['js', 'fast']);
    });
  }
});
