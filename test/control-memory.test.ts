/**
 * What a control leaves behind in DuckDB once it is evaluated (pipeline/controls/evaluation.ts). On a large
 * day each control builds hash tables and temp tables of millions of rows; a later control must
 * find the buffer pool free:
 * - no operator state (hash tables, aggregates, sorts) stays pinned after a control. DuckDB keeps
 *   it in a prepared statement until that statement is destroyed; left to the garbage collector it
 *   stayed, and the 10M-order CSV day ran out of memory in the next control;
 * - the control's own temp tables and views (`rcNN_…`) are dropped, and nothing else is.
 * And a differences.sql of several queries must hold at least one, each with exactly the columns
 * (kind, key, detail, record_time_us): no query is not "no differences".
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadCommonSql, runCommonSql } from '../pipeline/controls/common-sql.js';
import { loadControls, type ControlDefinition } from '../pipeline/controls/definitions.js';
import { evaluateControl } from '../pipeline/controls/evaluation.js';
import { DATASETS } from '../pipeline/contract/datasets.js';
import { scratchDir } from './helpers/cli.js';
import { SAMPLE_DAY } from './fixtures/days.js';
import { fileDuck, loadDefault } from './helpers/duckdb.js';

const DAY = SAMPLE_DAY;
const WINDOW_START = 1_793_577_600_000_000n; // 2026-11-02T00:00:00Z in µs
const DAY_US = 86_400_000_000n;

const tmp = scratchDir('reckon-ctlmem-');
// The sample day loaded once, with the common SQL and probes that are not a control's own temp
// objects (they must survive every control).
const duck = fileDuck({ threads: 2, memoryLimit: '1GB', tempDirectory: join(tmp.dir, 'duckdb-tmp') }, async (conn) => {
  await loadDefault(conn, DAY, join(tmp.dir, 'links'));
  await runCommonSql(conn, await loadCommonSql(), DATASETS.map((d) => d.name));
  await conn.run('CREATE TEMP TABLE rc06xprobe (x INTEGER)');
  await conn.run('CREATE TEMP TABLE keep_probe (x INTEGER)');
  await conn.run('CREATE TEMP VIEW rc0_probe AS SELECT 1 AS x');
});

/** Bytes DuckDB holds per memory tag (operator state tags only). */
async function operatorMemory(): Promise<Record<string, string>> {
  const r = await duck.conn.runAndReadAll(`SELECT tag, memory_usage_bytes::VARCHAR AS bytes FROM duckdb_memory()
    WHERE tag IN ('HASH_TABLE', 'ORDER_BY', 'ART_INDEX', 'COLUMN_DATA', 'TUPLE_DATA', 'WINDOW') AND memory_usage_bytes > 0 ORDER BY tag`);
  return Object.fromEntries(r.getRowObjectsJson().map((o) => [String(o.tag), String(o.bytes)]));
}

async function tempObjects(): Promise<string[]> {
  const r = await duck.conn.runAndReadAll(`SELECT view_name FROM duckdb_views() WHERE temporary AND NOT internal
    UNION ALL SELECT table_name FROM duckdb_tables() WHERE temporary ORDER BY 1`);
  return r.getRows().map((row) => String(row[0]));
}

afterAll(() => tmp.cleanup());

const controls = await loadControls();

describe('after a control is evaluated', () => {
  for (const def of controls) {
    it(`${def.control_id} leaves no operator state pinned and drops its own temp objects`, async () => {
      const vars: Record<string, string> = { window_start: `make_timestamp(${WINDOW_START}::BIGINT)`, window_end: `make_timestamp(${WINDOW_START + DAY_US}::BIGINT)`, as_of: `make_timestamp(${WINDOW_START + DAY_US + 300_000_000n}::BIGINT)` };
      for (const [k, v] of Object.entries(def.params)) vars[k] = typeof v === 'number' ? String(v) : `'${v}'`;
      for (const [k, v] of Object.entries(vars)) await duck.conn.run(`SET VARIABLE ${k} = ${v}`);
      const pinned = await operatorMemory();
      const before = await tempObjects();
      await duck.conn.run(`CREATE TEMP TABLE "${def.control_id}_UPPER" (x INTEGER)`); // its own, whatever the case
      const ev = await evaluateControl(duck.conn, def);
      expect(ev.differences.length).toBeGreaterThan(0); // the sample day has differences of every control
      // What the load left (a few small blocks) may stay; nothing of this control's statements.
      expect(await operatorMemory()).toEqual(pinned);
      const prefix = `${def.control_id.toLowerCase()}_`;
      const after = await tempObjects();
      expect(after.filter((n) => n.toLowerCase().startsWith(prefix))).toEqual([]);
      // Objects of the pipeline (large totals) may be added, none removed.
      expect(before).toEqual(expect.arrayContaining(['keep_probe', 'rc06xprobe', 'rc0_probe']));
      expect(before.filter((n) => !after.includes(n))).toEqual([]);
    });
  }
});

describe('a differences.sql of several queries', () => {
  const rc06 = () => controls.find((d) => d.control_id === 'RC06')!;
  const withDifferences = (sql: string): ControlDefinition => ({ ...rc06(), sql: { ...rc06().sql, differences: sql } });

  it('adds the rows of every query, in any number', async () => {
    const ev = await evaluateControl(duck.conn, withDifferences(`
      CREATE OR REPLACE TEMP TABLE rc06_probe AS SELECT 'INT-X' AS intent_id;
      SELECT 'NOTICE_UNDELIVERED' AS kind, intent_id AS key, 'd1' AS detail, '1' AS record_time_us FROM rc06_probe;
      SELECT 'NOTICE_DUPLICATE_RECEIPT' AS kind, 'INT-Y' AS key, 'd2' AS detail, NULL AS record_time_us;`));
    expect(ev.differences.map((d) => [d.kind, d.key, d.detail, d.record_time_us])).toEqual([
      ['NOTICE_DUPLICATE_RECEIPT', 'INT-Y', 'd2', null],
      ['NOTICE_UNDELIVERED', 'INT-X', 'd1', '1'],
    ]);
    expect(await tempObjects()).not.toContain('rc06_probe');
  });

  it('refuses a script without a query, and a query with other columns (exit 70, naming the file)', async () => {
    await expect(evaluateControl(duck.conn, withDifferences('CREATE OR REPLACE TEMP TABLE rc06_probe AS SELECT 1 AS x;')))
      .rejects.toThrow('sql/rc06/differences.sql: invariant broken: the script holds no query');
    await expect(evaluateControl(duck.conn, withDifferences(`SELECT 'NOTICE_UNDELIVERED' AS kind, 'K' AS key, '' AS detail, NULL AS record_time;`)))
      .rejects.toThrow('query 1 returns columns (kind, key, detail, record_time), not (kind, key, detail, record_time_us)');
  });
});
