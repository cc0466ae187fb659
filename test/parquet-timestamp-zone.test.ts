/**
 * CONTRACT §1: a timestamp column in Parquet is TIMESTAMP *UTC-adjusted*, and a value without zone
 * is rejected. DuckDB reads a UTC-adjusted column as TIMESTAMP WITH TIME ZONE and one written
 * without zone (isAdjustedToUTC = false: pandas' naive datetimes, DuckDB's own TIMESTAMP) as plain
 * TIMESTAMP, which the loader used to take for UTC. Each such value is now quarantined as
 * `timestamp_without_zone` with its wall-clock text, on every path (JS reader, SQL fast path, view
 * mode), exactly as the same value written in a CSV file without `Z` would be.
 *
 * DuckDB also reads a UTC-adjusted NANOS column (pandas' zone-aware datetimes written by pyarrow)
 * as TIMESTAMP WITH TIME ZONE truncated to the microsecond. A value below the microsecond has more
 * than the 6 fraction digits §1 allows: it is quarantined with its 9 digits (`timestamp_form`),
 * never truncated. Those files are written here with hyparquet-writer, which DuckDB cannot do.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig, type Config } from '../pipeline/config/config.js';
import { loadSources, type FilePath } from '../pipeline/load/load.js';
import { parquetWriteFile } from 'hyparquet-writer';
import { parquetTimeColumns } from '../pipeline/sources/parquet-time.js';
import { scratchDir } from './helpers/cli.js';
import { AS_IN_A_RUN, fileDuck, withDuck } from './helpers/duckdb.js';

const tmp = scratchDir('reckon-parquet-zone-');
// The DuckDB that writes the test files; each load gets its own, as a run does.
const writer = fileDuck();
let config: Config;
let counter = 0;

beforeAll(async () => {
  config = defaultConfig().config;
});
afterAll(() => tmp.cleanup());

/** Writes an outbox_events Parquet file whose created_at / published_at have the given DuckDB types. */
async function writeOutbox(root: string, file: string, createdType: string, publishedType: string): Promise<string> {
  const dir = join(root, 'outbox_events');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, file);
  await writer.conn.run(`COPY (
    SELECT '2026-11-02 10:00:00.25'::${createdType} AS created_at, 'EV-' || '${file}-1' AS event_id, 'ORD-1' AS aggregate_id,
           'OrderAccepted' AS event_type, 'SENT' AS publish_status, '2026-11-02 10:00:01'::${publishedType} AS published_at
    UNION ALL
    SELECT '2026-11-02 11:00:00'::${createdType}, 'EV-' || '${file}-2', 'ORD-2', 'OrderAccepted', 'PENDING', NULL
  ) TO '${path}' (FORMAT parquet)`);
  return path;
}

/** The column names DuckDB reads from a Parquet file, in order (what the loader's DESCRIBE gives). */
const describedNames = async (path: string) => (await writer.conn.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${path}')`)).getRows().map((r) => String(r[0]));

async function load(root: string, opts: { fast: boolean; views: boolean }) {
  return withDuck(async (c) => {
    const paths = new Map<string, string>();
    const r = await loadSources(c, root, config, join(tmp.dir, `links-${++counter}`), { ...opts, datasets: ['outbox_events'], onFile: (f: FilePath) => paths.set(f.path, f.loadedBy) });
    const rows = (await c.runAndReadAll(`SELECT event_id, strftime(created_at, '%Y-%m-%dT%H:%M:%S.%fZ') FROM outbox_events ORDER BY event_id`)).getRows().map((x) => x.map(String));
    return { r, rows, paths };
  }, AS_IN_A_RUN);
}

describe('Parquet timestamps must be UTC-adjusted (CONTRACT §1)', () => {
  it('names the columns written without zone: TIMESTAMP, TIMESTAMP_MS, TIMESTAMP_NS, not TIMESTAMPTZ', async () => {
    const path = join(tmp.dir, 'kinds.parquet');
    await writer.conn.run(`COPY (SELECT TIMESTAMP '2026-11-02 10:00:00' AS a, TIMESTAMPTZ '2026-11-02 10:00:00+00' AS b, TIMESTAMP_MS '2026-11-02 10:00:00' AS m, TIMESTAMP_NS '2026-11-02 10:00:00' AS n, DATE '2026-11-02' AS d) TO '${path}' (FORMAT parquet)`);
    const time = await parquetTimeColumns(writer.conn, path, await describedNames(path));
    expect([...time].filter(([, t]) => t.naive).map(([n]) => n)).toEqual(['a', 'm', 'n']);
    expect([...time].filter(([, t]) => t.utcNanos)).toEqual([]);
  });

  it('pairs columns by position: a field of the same name inside a struct, or a repeated name, is not the column', async () => {
    const path = join(tmp.dir, 'nested.parquet');
    await writer.conn.run(`COPY (SELECT TIMESTAMPTZ '2026-11-02 10:00:00+00' AS created_at, {'created_at': TIMESTAMP '2026-11-02 10:00:00', 'note': 'x'} AS meta, TIMESTAMP '2026-11-02 10:00:00' AS b) TO '${path}' (FORMAT parquet)`);
    const time = await parquetTimeColumns(writer.conn, path, await describedNames(path));
    expect([...time].map(([n, t]) => [n, t.parquetName, t.naive])).toEqual([['created_at', 'created_at', false], ['meta', 'meta', false], ['b', 'b', true]]);
  });

  it('quarantines a UTC-adjusted nanosecond value below the microsecond with its 9 digits, and loads whole microseconds on the fast path', async () => {
    const root = join(tmp.dir, `case-${++counter}`);
    mkdirSync(join(root, 'outbox_events'), { recursive: true });
    const ts = (name: string) => ({ name, type: 'INT64' as const, logical_type: { type: 'TIMESTAMP' as const, isAdjustedToUTC: true, unit: 'NANOS' as const }, repetition_type: 'OPTIONAL' as const });
    const str = (name: string) => ({ name, type: 'BYTE_ARRAY' as const, converted_type: 'UTF8' as const, repetition_type: 'OPTIONAL' as const });
    const write = (file: string, created: (bigint | null)[], published: (bigint | null)[]) => parquetWriteFile({
      filename: join(root, 'outbox_events', file),
      schema: [{ name: 'root', num_children: 6 }, ts('created_at'), str('event_id'), str('aggregate_id'), str('event_type'), str('publish_status'), ts('published_at')],
      columnData: [
        { name: 'created_at', data: created }, { name: 'event_id', data: created.map((_, i) => `EV-${file}-${i + 1}`) },
        { name: 'aggregate_id', data: created.map(() => 'ORD-1') }, { name: 'event_type', data: created.map(() => 'OrderAccepted') },
        { name: 'publish_status', data: created.map(() => 'SENT') }, { name: 'published_at', data: published },
      ],
    });
    const at = 1_793_613_754_907_796_000n; // 2026-11-02T10:02:34.907796Z in nanoseconds
    write('a-ns.parquet', [at + 789n, at, at], [at, at + 1n, null]);
    write('b-whole-us.parquet', [at, at + 1000n], [null, at]);
    const aNs = join(root, 'outbox_events', 'a-ns.parquet');
    const utc = (await parquetTimeColumns(writer.conn, aNs, await describedNames(aNs))).get('created_at');
    expect(utc).toEqual({ parquetName: 'created_at', naive: false, utcNanos: true });
    for (const opts of [{ fast: false, views: false }, { fast: true, views: true }]) {
      const { r, rows, paths } = await load(root, opts);
      expect(r.quarantine.map((e) => [e.file, e.row, e.column, e.rule, (JSON.parse(e.raw) as Record<string, string>)[e.column!]])).toEqual([
        ['outbox_events/a-ns.parquet', 1, 'created_at', 'timestamp_form', '2026-11-02T10:02:34.907796789Z'],
        ['outbox_events/a-ns.parquet', 2, 'published_at', 'timestamp_form', '2026-11-02T10:02:34.907796001Z'],
      ]);
      expect(rows).toEqual([
        ['EV-a-ns.parquet-3', '2026-11-02T10:02:34.907796Z'],
        ['EV-b-whole-us.parquet-1', '2026-11-02T10:02:34.907796Z'],
        ['EV-b-whole-us.parquet-2', '2026-11-02T10:02:34.907797Z'],
      ]);
      if (opts.fast) expect([paths.get('outbox_events/a-ns.parquet'), paths.get('outbox_events/b-whole-us.parquet')]).toEqual(['js', 'fast']);
    }
  });

  it('a nanosecond value without zone is timestamp_without_zone also when it is finer than the microsecond (both rules broken; the zone named)', async () => {
    const root = join(tmp.dir, `case-${++counter}`);
    mkdirSync(join(root, 'outbox_events'), { recursive: true });
    const ts = (name: string) => ({ name, type: 'INT64' as const, logical_type: { type: 'TIMESTAMP' as const, isAdjustedToUTC: false, unit: 'NANOS' as const }, repetition_type: 'OPTIONAL' as const });
    const str = (name: string) => ({ name, type: 'BYTE_ARRAY' as const, converted_type: 'UTF8' as const, repetition_type: 'OPTIONAL' as const });
    const at = 1_793_613_754_907_796_000n; // 2026-11-02T10:02:34.907796 in nanoseconds, wall time
    parquetWriteFile({
      filename: join(root, 'outbox_events', 'naive-ns.parquet'),
      schema: [{ name: 'root', num_children: 6 }, ts('created_at'), str('event_id'), str('aggregate_id'), str('event_type'), str('publish_status'), ts('published_at')],
      columnData: [
        { name: 'created_at', data: [at + 789n, at] }, { name: 'event_id', data: ['EV-1', 'EV-2'] },
        { name: 'aggregate_id', data: ['ORD-1', 'ORD-1'] }, { name: 'event_type', data: ['OrderAccepted', 'OrderAccepted'] },
        { name: 'publish_status', data: ['SENT', 'PENDING'] }, { name: 'published_at', data: [null, null] },
      ],
    });
    for (const opts of [{ fast: false, views: false }, { fast: true, views: true }]) {
      const { r } = await load(root, opts);
      expect(r.quarantine.map((e) => [e.row, e.column, e.rule, (JSON.parse(e.raw) as Record<string, string>)[e.column!], e.message])).toEqual([
        [1, 'created_at', 'timestamp_without_zone', '2026-11-02T10:02:34.907796789', "created_at: '2026-11-02T10:02:34.907796789' has no zone (Z or ±HH:MM); a timestamp without zone is rejected (and its fraction is finer than the microsecond)"],
        [2, 'created_at', 'timestamp_without_zone', '2026-11-02T10:02:34.907796', "created_at: '2026-11-02T10:02:34.907796' has no zone (Z or ±HH:MM); a timestamp without zone is rejected"],
      ]);
    }
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

  it('finds nanoseconds below the microsecond on every page of a large file (row groups and pages of 50,000 rows do not line up)', async () => {
    const root = join(tmp.dir, `case-${++counter}`);
    mkdirSync(join(root, 'outbox_events'), { recursive: true });
    const n = 120_000;
    const at = 1_793_613_754_000_000_000n; // 2026-11-02T10:02:34Z
    const odd = new Set([1, 50_000, 50_001, 100_001, n]); // 1-based records with a sub-µs value
    const created = Array.from({ length: n }, (_, i) => at + BigInt(i) * 1000n + (odd.has(i + 1) ? 1n : 0n));
    const ts = { type: 'INT64' as const, logical_type: { type: 'TIMESTAMP' as const, isAdjustedToUTC: true, unit: 'NANOS' as const }, repetition_type: 'OPTIONAL' as const };
    const str = (name: string) => ({ name, type: 'BYTE_ARRAY' as const, converted_type: 'UTF8' as const, repetition_type: 'OPTIONAL' as const });
    parquetWriteFile({
      filename: join(root, 'outbox_events', 'big.parquet'),
      rowGroupSize: 70_000,
      schema: [{ name: 'root', num_children: 6 }, { name: 'created_at', ...ts }, str('event_id'), str('aggregate_id'), str('event_type'), str('publish_status'), { name: 'published_at', ...ts }],
      columnData: [
        { name: 'created_at', data: created }, { name: 'event_id', data: created.map((_, i) => `EV-${i + 1}`) },
        { name: 'aggregate_id', data: created.map(() => 'ORD-1') }, { name: 'event_type', data: created.map(() => 'OrderAccepted') },
        { name: 'publish_status', data: created.map(() => 'PENDING') }, { name: 'published_at', data: created.map(() => null) },
      ],
    });
    const { r } = await load(root, { fast: true, views: true });
    expect(r.quarantine.map((e) => [e.row, e.rule, (JSON.parse(e.raw) as Record<string, string>).created_at])).toEqual([...odd].map((row) => {
      const us = BigInt(row - 1);
      return [row, 'timestamp_form', `2026-11-02T10:02:34.${String(us).padStart(6, '0')}001Z`];
    }));
    expect(r.datasets.find((d) => d.dataset === 'outbox_events')).toMatchObject({ records_read: n, records_loaded: n - odd.size });
  });

  it('a *_local column stored as a timestamp without zone is the local time it holds; one adjusted to UTC is not a local time', async () => {
    const root = join(tmp.dir, `case-${++counter}`);
    mkdirSync(join(root, 'venue_fills'), { recursive: true });
    const fill = (file: string, type: string) => writer.conn.run(`COPY (
      SELECT '2026-11-02 10:00:00.5'::${type} AS venue_time_local, 'America/New_York' AS venue_timezone, 'XNYS' AS venue_id, 'F-${file}' AS venue_fill_id,
             'ORD-1' AS order_id, 'US-ACME' AS instrument_id, 'BUY' AS side, 10::DECIMAL(38,18) AS fill_qty, 12.5::DECIMAL(38,18) AS price,
             'USD' AS price_currency, 1::BIGINT AS venue_seq, 'FILE-1' AS file_id
    ) TO '${join(root, 'venue_fills', file)}' (FORMAT parquet)`);
    await fill('a-naive.parquet', 'TIMESTAMP');
    await fill('b-utc.parquet', 'TIMESTAMPTZ');
    for (const fast of [false, true]) {
      await withDuck(async (c) => {
        const r = await loadSources(c, root, config, join(tmp.dir, `links-${++counter}`), { fast, views: fast, datasets: ['venue_fills'] });
        // 10:00:00.5 in New York on 2 November 2026 (EST, UTC−5) is 15:00:00.5Z.
        expect((await c.runAndReadAll(`SELECT venue_fill_id, strftime(venue_time_local, '%Y-%m-%dT%H:%M:%S.%f'), strftime(venue_time_utc, '%Y-%m-%dT%H:%M:%S.%fZ') FROM venue_fills`)).getRows())
          .toEqual([['F-a-naive.parquet', '2026-11-02T10:00:00.500000', '2026-11-02T15:00:00.500000Z']]);
        expect(r.quarantine.map((e) => [e.file, e.row, e.column, e.rule, (JSON.parse(e.raw) as Record<string, string>)[e.column!]]))
          .toEqual([['venue_fills/b-utc.parquet', 1, 'venue_time_local', 'local_timestamp_with_zone', '2026-11-02T10:00:00.500000Z']]);
      }, AS_IN_A_RUN);
    }
  });
});
