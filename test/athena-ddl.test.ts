/**
 * The Athena DDL generator and the output type rules: exact statements for a table, typed
 * projections, the refusal of types Athena would misread, and the break tables (pipeline/breaks/
 * break-outputs.ts) written through writeOutputs' `tables` parameter, with the open-breaks view
 * over them executed by DuckDB on the real files (Athena itself is verified only in AWS).
 */
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { athenaColumnType, athenaDdl } from '../pipeline/athena/ddl.js';
import { outputTypeOfParquet } from '../pipeline/athena/schema.js';
import { BREAK_OUTPUT_TABLES } from '../pipeline/outputs/break-tables.js';
import { OUTPUT_TABLES, timestampMsExpr, writeOutputs, type OutputColumn } from '../pipeline/outputs/outputs.js';
import { InternalError } from '../pipeline/core/errors.js';
import { scratchDir } from './helpers/cli.js';
import { withDuck } from './helpers/duckdb.js';

describe('athena ddl', () => {
  it('declares a table with exact column types, a typed date projection and a location template', () => {
    const cols: OutputColumn[] = [
      { name: 'run_id', parquet: 'VARCHAR' }, { name: 'row', parquet: 'BIGINT' }, { name: 'n', parquet: 'INTEGER' }, { name: 'ok', parquet: 'BOOLEAN' },
      { name: 'd', parquet: 'DATE' }, { name: 'at', parquet: 'TIMESTAMP_MS' }, { name: 'amount', parquet: 'DECIMAL(38,18)' }, { name: 'age_s', parquet: 'DECIMAL(38,6)' },
    ];
    const [db, table] = athenaDdl({ sample: cols }, { database: 'recon_prod', store: 's3://acme-recon/prod/', since: '2026-01-01' });
    expect(db.sql).toBe('CREATE DATABASE IF NOT EXISTS `recon_prod`');
    expect(table.sql).toBe([
      'CREATE EXTERNAL TABLE IF NOT EXISTS `recon_prod`.`sample` (',
      '  `run_id` string,', '  `row` bigint,', '  `n` int,', '  `ok` boolean,', '  `d` date,', '  `at` timestamp,', '  `amount` decimal(38,18),', '  `age_s` decimal(38,6)',
      ')',
      'PARTITIONED BY (`window_date` string)',
      'STORED AS PARQUET',
      "LOCATION 's3://acme-recon/prod/outputs/sample/'",
      'TBLPROPERTIES (',
      "  'projection.enabled' = 'true',",
      "  'projection.window_date.type' = 'date',",
      "  'projection.window_date.format' = 'yyyy-MM-dd',",
      "  'projection.window_date.range' = '2026-01-01,NOW',",
      "  'projection.window_date.interval' = '1',",
      "  'projection.window_date.interval.unit' = 'DAYS',",
      "  'storage.location.template' = 's3://acme-recon/prod/outputs/sample/window_date=${window_date}/',",
      "  'classification' = 'parquet'",
      ')',
    ].join('\n'));
  });

  it('covers every output table and the break tables, with both views', () => {
    const ddl = athenaDdl({ ...OUTPUT_TABLES, ...BREAK_OUTPUT_TABLES }, { database: 'reckon', store: 's3://acme-recon' });
    expect(ddl.map((s) => `${s.kind}:${s.name}`)).toEqual([
      'database:reckon', 'table:break_events', 'table:breaks', 'table:control_totals', 'table:difference_records', 'table:differences', 'table:quarantine', 'table:runs',
      'view:latest_accepted_runs', 'view:open_breaks_by_age',
    ]);
    expect(ddl.find((s) => s.name === 'quarantine')!.sql).toContain("LOCATION 's3://acme-recon/outputs/quarantine/'");
    expect(ddl.find((s) => s.name === 'open_breaks_by_age')!.sql).toContain('FROM "reckon"."breaks" b');
  });

  it('refuses types Athena would misread or that could carry money as a float', () => {
    for (const t of ['DOUBLE', 'FLOAT', 'HUGEINT', 'TIMESTAMP', 'TIMESTAMP_NS', 'TIMESTAMPTZ', 'DECIMAL(39,2)', 'UBIGINT']) {
      expect(() => athenaColumnType(t), t).toThrow(/no exact Athena type/);
    }
    expect(() => outputTypeOfParquet({ name: 'x', type: 'DOUBLE', converted_type: null, logical_type: null, precision: null, scale: null }, 'outputs/t/x column x')).toThrow(/Parquet DOUBLE/);
    expect(() => outputTypeOfParquet({ name: 'x', type: 'INT64', converted_type: 'TIMESTAMP_MICROS', logical_type: null, precision: null, scale: null }, 'c')).toThrow(/TIMESTAMP_MICROS/);
    expect(() => athenaDdl({}, { database: 'Bad-Name', store: 's3://acme-recon' })).toThrow(/--database/);
    expect(() => athenaDdl({}, { database: 'ok', store: 's3://acme-recon', since: '2026-13-01' })).toThrow(/--since/);
  });
});

describe('writeOutputs types', () => {
  /** Runs `fn` on a one-thread DuckDB with a scratch folder, both gone afterwards. */
  async function withDuckAndDir<T>(fn: (conn: DuckDBConnection, dir: string) => Promise<T>): Promise<T> {
    const { dir, cleanup } = scratchDir();
    try { return await withDuck((conn) => fn(conn, dir), { threads: 1 }); } finally { cleanup(); }
  }

  it('refuses a table declaring HUGEINT, DOUBLE or a microsecond timestamp', async () => {
    await withDuckAndDir(async (conn, dir) => {
      for (const t of ['HUGEINT', 'DOUBLE', 'TIMESTAMP']) {
        await expect(writeOutputs(conn, dir, '2026-11-02', 'run-x', {}, { t: [{ name: 'v', parquet: t }] })).rejects.toThrow(/outputs allow/);
      }
      await expect(writeOutputs(conn, dir, '2026-11-02', 'run-x', {}, { T: [{ name: 'v', parquet: 'VARCHAR' }] })).rejects.toThrow(/table name/);
    });
  });

  it('stops on an integer or bool text that is not exactly of its form, and nulls a decimal that does not fit', async () => {
    await withDuckAndDir(async (conn, dir) => {
      const t = { t: [{ name: 'i', parquet: 'BIGINT' }, { name: 'b', parquet: 'BOOLEAN' }, { name: 'd', parquet: 'DECIMAL(38,2)' }] };
      await expect(writeOutputs(conn, dir, '2026-11-02', 'run-a', { t: [{ i: '12.50', b: 'true', d: '1' }] }, t)).rejects.toThrow(/t\.i: value is not an integer: 12\.50/);
      await expect(writeOutputs(conn, dir, '2026-11-02', 'run-b', { t: [{ i: '1', b: 'TRUE', d: '1' }] }, t)).rejects.toThrow(/t\.b: value is not true or false/);
      const [o] = await writeOutputs(conn, dir, '2026-11-02', 'run-c', { t: [{ i: '-9007199254740993', b: 'false', d: '1.005' }, { i: '1', b: null, d: '000123.45' }, { i: null, b: 'true', d: '1e3' }] }, t);
      const r = await conn.runAndReadAll(`SELECT i::VARCHAR AS i, b, d::VARCHAR AS d FROM read_parquet('${o.localPath}', hive_partitioning = false)`);
      expect(r.getRowObjectsJson()).toEqual([{ i: '-9007199254740993', b: false, d: null }, { i: '1', b: null, d: '123.45' }, { i: null, b: true, d: null }]);
      expect(o.key).toBe('outputs/t/window_date=2026-11-02/run=run-c/part-00000.parquet');
    });
  });

  it('takes rows and queries keyed by column name: a missing or unknown name is an internal error naming it', async () => {
    await withDuckAndDir(async (conn, dir) => {
      const t = { t: [{ name: 'a', parquet: 'VARCHAR' }, { name: 'b', parquet: 'BIGINT' }] };
      const write = (runId: string, rows: Record<string, string | null>[], query?: string) => writeOutputs(conn, dir, '2026-11-02', runId, { t: rows }, t, query ? { t: query } : {});
      const refusal = async (p: Promise<unknown>) => p.then(() => 'written', (e: Error) => `${e instanceof InternalError ? 'InternalError' : e.name}: ${e.message}`);
      expect(await refusal(write('run-m', [{ a: 'x' }]))).toBe('InternalError: output t: a row has no value for column b');
      expect(await refusal(write('run-u', [{ a: 'x', b: '1', c: 'extra' }]))).toBe('InternalError: output t: a row names column(s) c that the table does not declare');
      expect(await refusal(write('run-q', [], `SELECT 'x' AS a, '1' AS c`))).toBe('InternalError: output t: a query selects columns (a, c), not (a, b)');
      // Order of the keys and of the query's columns does not matter: values go by name.
      const [o] = await write('run-k', [{ b: '7', a: 'first' }], `SELECT '8' AS b, 'second' AS a`);
      expect(o.rows).toBe(2);
      const r = await conn.runAndReadAll(`SELECT a, b::VARCHAR AS b FROM read_parquet('${o.localPath}', hive_partitioning = false) ORDER BY b`);
      expect(r.getRowObjectsJson()).toEqual([{ a: 'first', b: '7' }, { a: 'second', b: '8' }]);
    });
  });

  it('copies a typed query as it is, and refuses one whose column types are not the table\'s or that follows text rows', async () => {
    await withDuckAndDir(async (conn, dir) => {
      const t = { t: [{ name: 'a', parquet: 'VARCHAR' }, { name: 'b', parquet: 'BIGINT' }, { name: 'c', parquet: 'TIMESTAMP_MS' }] };
      const write = (runId: string, rows: Record<string, string | null>[], typed: string) => writeOutputs(conn, dir, '2026-11-02', runId, { t: rows }, t, { t: { typed } });
      const refusal = async (p: Promise<unknown>) => p.then(() => 'written', (e: Error) => `${e instanceof InternalError ? 'InternalError' : e.name}: ${e.message}`);
      const good = `SELECT b::VARCHAR AS a, b, ${timestampMsExpr("'2026-11-02T00:00:00.123Z'")} AS c FROM range(3) r(b)`;
      expect(await refusal(write('run-tq', [], `SELECT 'x' AS a, '1' AS b, TIMESTAMP_MS '2026-11-02 00:00:00' AS c`))).toBe('InternalError: output t: a typed query selects b as VARCHAR, not BIGINT');
      expect(await refusal(write('run-tr', [{ a: 'x', b: '1', c: null }], good))).toBe('InternalError: output t: a typed query cannot follow rows staged as text');
      const [o] = await write('run-tk', [], good);
      expect(o.rows).toBe(3);
      const r = await conn.runAndReadAll(`SELECT a, b::VARCHAR AS b, c::VARCHAR AS c FROM read_parquet('${o.localPath}', hive_partitioning = false) ORDER BY b`);
      expect(r.getRowObjectsJson()).toEqual(['0', '1', '2'].map((b) => ({ a: b, b, c: '2026-11-02 00:00:00.123' })));
    });
  });

  it('writes the break tables through the tables parameter; the open-breaks view reads the latest run’s snapshot', async () => {
    await withDuckAndDir(async (conn, dir) => {
      const tables = { ...OUTPUT_TABLES, ...BREAK_OUTPUT_TABLES };
      const blank = (cols: readonly OutputColumn[], set: Record<string, string>) => Object.fromEntries(cols.map((c) => [c.name, set[c.name] ?? null]));
      const breakRow = (run: string, id: string, state: string, age: string) => blank(BREAK_OUTPUT_TABLES.breaks, {
        run_id: run, break_id: id, control_id: 'RC02', kind: 'FILL_PRICE_MISMATCH', key: `XLON|${id}`, state, version: '1', owner_assigned: 'false',
        opened_at: '2026-11-03T02:00:00.123Z', opened_at_text: '2026-11-03T02:00:00.123456Z', age_s: age, age_s_text: age, sla_s: '60', sla_breached: 'true', observation_count: '1', reopen_count: '0',
      });
      const runRow = (run: string, started: string) => blank(OUTPUT_TABLES.runs, {
        run_id: run, trigger: 'manual', window_start: '2026-11-02T00:00:00Z', window_end: '2026-11-03T00:00:00Z', control_id: 'RC02', status: 'BREAKS', exit_code: '1',
        as_of: '2026-11-03T00:05:00Z', as_of_text: '2026-11-03T00:05:00Z', difference_count: '2', results_digest: 'x', started_at: started,
      });
      const out1 = await writeOutputs(conn, join(dir, 'a'), '2026-11-02', 'run-1', { runs: [runRow('run-1', '2026-11-03T02:00:00Z')], breaks: [breakRow('run-1', 'b1', 'OPEN', '100.5'), breakRow('run-1', 'b2', 'OPEN', '50')] }, tables);
      const out2 = await writeOutputs(conn, join(dir, 'a'), '2026-11-02', 'run-2', { runs: [runRow('run-2', '2026-11-03T03:00:00Z')], breaks: [breakRow('run-2', 'b1', 'CLOSED', '3700.5'), breakRow('run-2', 'b2', 'TRIAGED', '3650.000001')] }, tables);
      expect(out1.map((o) => o.table)).toEqual(['control_totals', 'differences', 'difference_records', 'quarantine', 'breaks', 'break_events', 'runs']);
      expect(out2.length).toBe(7);
      const ddl = athenaDdl(tables, { database: 'recon', store: 's3://acme-recon' });
      await conn.run('CREATE SCHEMA recon');
      for (const t of ddl.filter((s) => s.kind === 'table')) {
        await conn.run(`CREATE VIEW recon."${t.name}" AS SELECT * EXCLUDE (run) FROM read_parquet('${join(dir, 'a', 'outputs', t.name)}/*/*/*.parquet', hive_partitioning = true, hive_types = {'window_date': VARCHAR})`);
      }
      for (const v of ddl.filter((s) => s.kind === 'view')) await conn.run(v.sql);
      const open = await conn.runAndReadAll(`SELECT run_id, break_id, state, age_s::VARCHAR AS age_s, sla_breached, opened_at::VARCHAR AS opened_at, opened_at_text, window_date FROM recon.open_breaks_by_age`);
      expect(open.getRowObjectsJson()).toEqual([{ run_id: 'run-2', break_id: 'b2', state: 'TRIAGED', age_s: '3650.000001', sla_breached: true, opened_at: '2026-11-03 02:00:00.123', opened_at_text: '2026-11-03T02:00:00.123456Z', window_date: '2026-11-02' }]);
    });
  });
});
