/**
 * The output Parquet files, the Athena DDL and a read-back agree for every column (CONTRACT §6): a
 * real `reckon run` (twice, into one local store, in process) writes the outputs; the DDL is
 * generated from the store's tables; every output file is then read with DuckDB using exactly the
 * column types the DDL declares, its physical types (parquet_schema()) are checked against those
 * types, and its values are compared with the run's own `--json` report. The DDL's views are
 * executed by DuckDB over the same files (Athena itself is verified only in AWS; DuckDB stands in
 * for its SQL here).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { athenaDdl, type AthenaStatement } from '../pipeline/athena/ddl.js';
import { discoverOutputTables } from '../pipeline/athena/schema.js';
import { LocalObjectStore } from '../pipeline/store/local-store.js';
import { reckonHere, scratchDir } from './helpers/cli.js';
import { fileDuck } from './helpers/duckdb.js';
import { writeSmallSources } from './fixtures/s3-small-sources.js';

let sources: { dir: string; cleanup: () => void };
let store: { dir: string; cleanup: () => void };
let runs: any[];
let manifests: any[];
let ddl: AthenaStatement[];
const duck = fileDuck({ threads: 1 });

/** The DuckDB type that reads a DDL type exactly (Athena timestamps are milliseconds). */
function duckType(athena: string): string {
  const d = /^decimal\(([0-9]+),([0-9]+)\)$/.exec(athena);
  if (d) return `DECIMAL(${d[1]},${d[2]})`;
  return ({ string: 'VARCHAR', int: 'INTEGER', bigint: 'BIGINT', boolean: 'BOOLEAN', date: 'DATE', timestamp: 'TIMESTAMP_MS' } as Record<string, string>)[athena];
}

/** What parquet_schema() must say for a DDL type: physical type, converted type, and for decimals precision and scale. */
function expectedPhysical(athena: string): { type: string[]; converted: string | null; precision?: string; scale?: string } {
  const d = /^decimal\(([0-9]+),([0-9]+)\)$/.exec(athena);
  if (d) return { type: ['INT32', 'INT64', 'FIXED_LEN_BYTE_ARRAY'], converted: 'DECIMAL', precision: d[1], scale: d[2] };
  return ({
    string: { type: ['BYTE_ARRAY'], converted: 'UTF8' }, int: { type: ['INT32'], converted: 'INT_32' }, bigint: { type: ['INT64'], converted: 'INT_64' },
    boolean: { type: ['BOOLEAN'], converted: null }, date: { type: ['INT32'], converted: 'DATE' }, timestamp: { type: ['INT64'], converted: 'TIMESTAMP_MILLIS' },
  } as Record<string, { type: string[]; converted: string | null }>)[athena];
}

/** Columns of a CREATE EXTERNAL TABLE statement, in order. */
function ddlColumns(sql: string): { name: string; type: string }[] {
  const body = sql.slice(sql.indexOf('(\n') + 2, sql.indexOf('\n)\nPARTITIONED BY'));
  return body.split(',\n').map((line) => {
    const m = /^ {2}`([a-z0-9_]+)` (.+)$/.exec(line);
    if (!m) throw new Error(`unparsable DDL column line: ${line}`);
    return { name: m[1], type: m[2] };
  });
}

async function rows(sql: string): Promise<Record<string, any>[]> {
  return (await duck.conn.runAndReadAll(sql)).getRowObjectsJson() as Record<string, any>[];
}

/** An ISO UTC text truncated to milliseconds, as DuckDB prints a TIMESTAMP (trailing zeros of the fraction dropped). */
const ms = (iso: string | null) => (iso === null ? null : `${iso.slice(0, 10)} ${iso.slice(11, 19)}${iso.length > 20 ? `.${(iso.slice(20, -1) + '000').slice(0, 3)}`.replace(/\.?0+$/, '') : ''}`);

beforeAll(async () => {
  sources = scratchDir();
  store = scratchDir();
  writeSmallSources(sources.dir);
  runs = [];
  for (let i = 0; i < 2; i++) {
    const r = await reckonHere(['run', '--date', '2026-11-02', '--sources', sources.dir, '--store', store.dir, '--json', '--quiet']);
    if (!r.json) throw new Error(r.stderr);
    runs.push(r.json);
  }
  manifests = readdirSync(join(store.dir, 'manifests')).filter((n) => n.endsWith('.json')).sort().map((n) => JSON.parse(readFileSync(join(store.dir, 'manifests', n), 'utf8')));
  const tables = await discoverOutputTables(new LocalObjectStore(store.dir));
  ddl = athenaDdl(tables, { database: 'recon', store: 's3://example-bucket/reckon' });
});
afterAll(() => {
  sources?.cleanup();
  store?.cleanup();
});

describe('Parquet outputs, Athena DDL and read-back', () => {
  it('declares a table for every table the runs wrote, and nothing the runs did not write', () => {
    const written = [...new Set(manifests.flatMap((m) => m.outputs.map((o: any) => o.table)))].sort();
    expect(ddl.filter((s) => s.kind === 'table').map((s) => s.name)).toEqual(written);
    expect(written).toEqual(expect.arrayContaining(['control_totals', 'differences', 'quarantine', 'runs']));
  });

  it('agrees with the physical Parquet types of every column of every output file, and reads back every value unchanged', async () => {
    let checked = 0;
    for (const m of manifests) {
      for (const o of m.outputs) {
        const file = join(store.dir, ...o.key.split('/'));
        const cols = ddlColumns(ddl.find((s) => s.name === o.table)!.sql);
        const schema = await rows(`SELECT name, type, converted_type, precision::VARCHAR AS precision, scale::VARCHAR AS scale FROM parquet_schema('${file}') WHERE type IS NOT NULL`);
        expect(schema.map((s) => s.name), o.key).toEqual(cols.map((c) => c.name));
        for (const [i, c] of cols.entries()) {
          const want = expectedPhysical(c.type);
          expect(want, `${o.table}.${c.name} ${c.type}`).toBeDefined();
          expect(want.type, `${o.table}.${c.name}`).toContain(schema[i].type);
          expect(schema[i].converted_type, `${o.table}.${c.name}`).toBe(want.converted);
          if (want.precision) expect([schema[i].precision, schema[i].scale], `${o.table}.${c.name}`).toEqual([want.precision, want.scale]);
        }
        // Read with exactly the declared types: the types DuckDB sees are those, and no value changes.
        const typed = cols.map((c) => `CAST("${c.name}" AS ${duckType(c.type)}) AS "${c.name}"`).join(', ');
        const described = await rows(`DESCRIBE SELECT ${typed} FROM read_parquet('${file}', hive_partitioning = false)`);
        const raw = await rows(`DESCRIBE SELECT * FROM read_parquet('${file}', hive_partitioning = false)`);
        // DuckDB reads Parquet TIMESTAMP_MILLIS into its TIMESTAMP; parquet_schema() above proved the millisecond unit.
        expect(raw.map((d) => d.column_type), o.key).toEqual(described.map((d) => (d.column_type === 'TIMESTAMP_MS' ? 'TIMESTAMP' : d.column_type)));
        const diff = await rows(`SELECT count(*)::INTEGER AS n FROM ((SELECT ${typed} FROM read_parquet('${file}', hive_partitioning = false) EXCEPT ALL SELECT * FROM read_parquet('${file}', hive_partitioning = false)) UNION ALL (SELECT * FROM read_parquet('${file}', hive_partitioning = false) EXCEPT ALL SELECT ${typed} FROM read_parquet('${file}', hive_partitioning = false)))`);
        expect(diff[0].n, o.key).toBe(0);
        const count = await rows(`SELECT count(*)::INTEGER AS n FROM read_parquet('${file}', hive_partitioning = false)`);
        expect(count[0].n, o.key).toBe(o.rows);
        checked += 1;
      }
    }
    expect(checked).toBe(manifests.reduce((n, m) => n + m.outputs.length, 0));
  });

  it('holds exactly what the run reported: runs, totals, differences and quarantine', async () => {
    const json = runs[1];
    const key = (t: string) => manifests[1].outputs.find((o: any) => o.table === t).key;
    const file = (t: string) => join(store.dir, ...key(t).split('/'));

    const runRows = await rows(`SELECT run_id, control_id, status, exit_code, as_of::VARCHAR AS as_of, as_of_text, window_start::VARCHAR AS ws, results_digest FROM read_parquet('${file('runs')}', hive_partitioning = false) ORDER BY control_id`);
    expect(runRows).toEqual(json.controls.map((c: any) => ({
      run_id: json.run_id, control_id: c.control_id, status: c.status, exit_code: { CLEAN: 0, BREAKS: 1, INCOMPLETE: 3, NOT_READY: 4 }[c.status as string],
      as_of: ms(c.as_of), as_of_text: c.as_of, ws: '2026-11-02 00:00:00', results_digest: json.results_digest,
    })));

    const totals = await rows(`SELECT control_id, total_name, dim, value_text, value_decimal::VARCHAR AS value_decimal FROM read_parquet('${file('control_totals')}', hive_partitioning = false)`);
    const expectedTotals = json.controls.flatMap((c: any) => Object.entries(c.totals).flatMap(([name, v]: [string, any]) =>
      typeof v === 'string' ? [[c.control_id, name, null, v]] : Object.entries(v).map(([dim, x]) => [c.control_id, name, dim, x])));
    expect(totals.map((t) => [t.control_id, t.total_name, t.dim, t.value_text]).sort()).toEqual(expectedTotals.sort());
    expect(totals.length).toBeGreaterThan(10);
    for (const t of totals) {
      if (/^-?[0-9]{1,20}(\.[0-9]{1,18})?$/.test(t.value_text)) {
        const exact = await rows(`SELECT ('${t.value_text}'::DECIMAL(38,18))::VARCHAR AS v`);
        expect(t.value_decimal, `${t.control_id} ${t.total_name}`).toBe(exact[0].v);
      } else expect(t.value_decimal).toBeNull();
    }

    const diffs = await rows(`SELECT control_id, kind, key, detail, record_time::VARCHAR AS record_time, record_time_text, break_id, disposition FROM read_parquet('${file('differences')}', hive_partitioning = false) ORDER BY control_id, kind, key`);
    expect(diffs).toEqual(json.controls.flatMap((c: any) => c.differences.map((d: any) => ({
      control_id: c.control_id, kind: d.kind, key: d.key, detail: d.detail, record_time: ms(d.record_time), record_time_text: d.record_time, break_id: d.break_id, disposition: d.disposition,
    }))));
    expect(diffs.filter((d) => d.disposition !== 'PROVISIONAL').map((d) => `${d.kind} ${d.key} ${d.disposition}`)).toEqual(['ORDER_VERSION_GAP ORD-2 REOBSERVED', 'FILL_PRICE_MISMATCH XLON|VF-2 REOBSERVED']);

    const q = await rows(`SELECT dataset, file, "row", "column", rule FROM read_parquet('${file('quarantine')}', hive_partitioning = false)`);
    expect(q).toEqual([{ dataset: 'notification_receipts', file: 'notification_receipts/part-0001.csv', row: '1', column: 'status', rule: expect.any(String) }]);
  });

  it('keeps the first input’s microseconds in the text beside its millisecond timestamp', async () => {
    const gap = runs[1].controls[0].differences[0];
    expect(gap.kind).toBe('ORDER_VERSION_GAP');
    const file = join(store.dir, ...manifests[1].outputs.find((o: any) => o.table === 'differences').key.split('/'));
    const r = await rows(`SELECT record_time::VARCHAR AS t, record_time_text FROM read_parquet('${file}', hive_partitioning = false) WHERE kind = 'ORDER_VERSION_GAP'`);
    expect(r).toEqual([{ t: ms(gap.record_time), record_time_text: gap.record_time }]);
  });

  it('runs the DDL’s views over the files: the latest accepted run per window, and the open breaks', async () => {
    await duck.conn.run('CREATE SCHEMA IF NOT EXISTS recon');
    for (const t of ddl.filter((s) => s.kind === 'table')) {
      await duck.conn.run(`CREATE OR REPLACE VIEW recon."${t.name}" AS SELECT * EXCLUDE (run) FROM read_parquet('${store.dir}/outputs/${t.name}/*/*/*.parquet', hive_partitioning = true, hive_types = {'window_date': VARCHAR})`);
    }
    for (const v of ddl.filter((s) => s.kind === 'view')) await duck.conn.run(v.sql);
    const latest = await rows(`SELECT control_id, run_id, status, window_date FROM recon.latest_accepted_runs ORDER BY control_id`);
    expect(latest).toEqual([
      { control_id: 'RC01', run_id: runs[1].run_id, status: 'BREAKS', window_date: '2026-11-02' },
      { control_id: 'RC02', run_id: runs[1].run_id, status: 'BREAKS', window_date: '2026-11-02' },
    ]);
    const open = await rows(`SELECT * FROM recon.open_breaks_by_age ORDER BY break_id`);
    const ids = runs[1].controls.flatMap((c: any) => c.differences.map((d: any) => d.break_id)).filter((id: string | null) => id !== null).sort();
    expect(ids.length).toBe(2);
    expect(open.map((b) => b.break_id)).toEqual(ids);
    if ('age_ms' in open[0]) {
      // as-of 2026-11-03T00:05:00Z minus the first record time of each break.
      const byKind = Object.fromEntries(open.map((b) => [b.kind, b.age_ms]));
      expect(byKind).toEqual({ ORDER_VERSION_GAP: String(Date.parse('2026-11-03T00:05:00Z') - Date.parse('2026-11-02T10:00:00Z')), FILL_PRICE_MISMATCH: String(Date.parse('2026-11-03T00:05:00Z') - Date.parse('2026-11-02T10:01:00Z')) });
    }
  });
});
