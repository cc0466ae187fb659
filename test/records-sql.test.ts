/**
 * How a records.sql is run (pipeline/controls/records.ts), on a real DuckDB with two tiny tables:
 * every query's rows are kept in DuckDB, the first RECORDS_LISTED of each difference come back
 * (a record of each side first) with its count, and a row the control may not give (a (kind, key)
 * that is not one of its differences, a dataset it does not read, no lineage) stops the run as an
 * InternalError naming the file. And the table check: records.sql reads only declared datasets,
 * its control's own objects and `control_differences`, which no other file may read.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InternalError } from '../pipeline/core/errors.js';
import { REPO_ROOT } from '../pipeline/core/paths.js';
import { CONTROL_DIFFERENCES_TABLE, DIFFERENCE_RECORDS_TABLE, differenceKey, evaluateRecords } from '../pipeline/controls/records.js';
import { loadCommonSql } from '../pipeline/controls/common-sql.js';
import { loadControls } from '../pipeline/controls/definitions.js';
import { SqlNames } from '../pipeline/controls/parse-tree.js';
import { controlTableProblems } from '../pipeline/controls/table-check.js';
import { fileDuck } from './helpers/duckdb.js';

const duck = fileDuck({ threads: 1 }, async (conn) => {
  // sql/common's macros, which a run creates before any control (records.ts uses short_list).
  await conn.run(readFileSync(join(REPO_ROOT, 'sql', 'common', 'macros.sql'), 'utf8'));
  await conn.run(`CREATE TABLE executions AS SELECT * FROM (VALUES
    ('E1', 'V|1', 'executions/a.csv:000000000001'), ('E2', 'V|1', 'executions/a.csv:000000000010'), ('E3', 'V|1', 'executions/b.csv:000000000002')) t(execution_id, vkey, _source)`);
  await conn.run(`CREATE TABLE venue_fills AS SELECT * FROM (VALUES ('V|1', 'venue_fills/x.csv:000000000007')) t(vkey, _source)`);
});

const script = (sql: string, reads = ['executions', 'venue_fills']) => ({ control_id: 'RC02', reads, sql, path: 'sql/rc02/records.sql' });
const DIFFS = [{ kind: 'FILL_QTY_MISMATCH', key: 'V|1' }, { kind: 'FILL_MISSING_VENUE', key: 'V|2' }];
const BOTH_SIDES = `
  CREATE OR REPLACE TEMP TABLE rc02_probe AS SELECT 1 AS x;
  SELECT d.kind, d.key, 'internal' AS side, 'executions' AS dataset, e._source AS source, e.execution_id AS record_key
  FROM control_differences d JOIN executions e ON e.vkey = d.key;
  SELECT d.kind, d.key, 'venue' AS side, 'venue_fills' AS dataset, v._source AS source, v.vkey AS record_key
  FROM control_differences d JOIN venue_fills v ON v.vkey = d.key;`;

describe('evaluateRecords', () => {
  it('keeps every record in DuckDB and returns the first of each difference, a record of each side first', async () => {
    const got = await evaluateRecords(duck.conn, script(BOTH_SIDES), DIFFS, 2);
    expect([...got.keys()]).toEqual([differenceKey('FILL_QTY_MISMATCH', 'V|1')]);
    expect(got.get(differenceKey('FILL_QTY_MISMATCH', 'V|1'))).toEqual({
      count: 4,
      listed: [
        { side: 'internal', dataset: 'executions', file: 'executions/a.csv', record_number: 1, record_key: 'E1' },
        { side: 'venue', dataset: 'venue_fills', file: 'venue_fills/x.csv', record_number: 7, record_key: 'V|1' },
      ],
    });
    const kept = (await duck.conn.runAndReadAll(`SELECT control_id, side, file, record_number::VARCHAR AS n FROM ${DIFFERENCE_RECORDS_TABLE} ORDER BY side, file, record_number`)).getRowObjectsJson();
    expect(kept).toEqual([
      { control_id: 'RC02', side: 'internal', file: 'executions/a.csv', n: '1' },
      { control_id: 'RC02', side: 'internal', file: 'executions/a.csv', n: '10' },
      { control_id: 'RC02', side: 'internal', file: 'executions/b.csv', n: '2' },
      { control_id: 'RC02', side: 'venue', file: 'venue_fills/x.csv', n: '7' },
    ]);
    // The differences table and the working tables are gone; the control's own objects are the control's to drop.
    const temp = (await duck.conn.runAndReadAll('SELECT table_name FROM duckdb_tables() WHERE temporary ORDER BY 1')).getRows().map((r) => String(r[0]));
    expect(temp).toEqual([DIFFERENCE_RECORDS_TABLE, 'rc02_probe']);
    await duck.conn.run(`DELETE FROM ${DIFFERENCE_RECORDS_TABLE}`);
  });

  it('refuses a row for a (kind, key) that is not a difference of the control', async () => {
    const sql = `SELECT 'FILL_QTY_MISMATCH' AS kind, 'V|9' AS key, 'internal' AS side, 'executions' AS dataset, _source AS source, execution_id AS record_key FROM executions LIMIT 1;`;
    const e = await evaluateRecords(duck.conn, script(sql), DIFFS).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(InternalError);
    expect((e as Error).message).toBe('sql/rc02/records.sql: a row names FILL_QTY_MISMATCH V|9, which is not a difference of the control');
  });

  it('refuses a dataset the control does not read, a bad side, a row without lineage or key', async () => {
    const rows = (side: string, dataset: string, source: string, key: string) =>
      `SELECT 'FILL_QTY_MISMATCH' AS kind, 'V|1' AS key, ${side} AS side, ${dataset} AS dataset, ${source} AS source, ${key} AS record_key;`;
    const cases: [string, string][] = [
      [rows("'venue'", "'venue_fills'", "'venue_fills/x.csv:000000000007'", "'V|1'"), 'a row names dataset venue_fills, which the control does not read (its definition reads executions)'],
      [rows("'Internal'", "'executions'", "'executions/a.csv:000000000001'", "'E1'"), 'a row of FILL_QTY_MISMATCH V|1 has side Internal (sides are [a-z][a-z_]*)'],
      [rows("'internal'", "'executions'", "'executions/a.csv:1'", "'E1'"), "a row of FILL_QTY_MISMATCH V|1 has source executions/a.csv:1 (the record's _source, <file>:<12 digits>)"],
      [rows("'internal'", "'executions'", "'executions/a.csv:000000000001'", 'NULL'), 'a row of FILL_QTY_MISMATCH V|1 has no record_key'],
    ];
    for (const [sql, message] of cases) {
      await expect(evaluateRecords(duck.conn, script(sql, ['executions']), DIFFS)).rejects.toThrow(`sql/rc02/records.sql: ${message}`);
    }
    const none = (await duck.conn.runAndReadAll(`SELECT count(*)::INT AS n FROM ${DIFFERENCE_RECORDS_TABLE}`)).getRowObjectsJson();
    expect(none).toEqual([{ n: 0 }]);
  });

  it('filters the scan by the key parts while there are at most 32, and beyond passes every row to the join (same records)', async () => {
    const byParts = `SELECT d.kind, d.key, 'internal' AS side, 'executions' AS dataset, e._source AS source, e.execution_id AS record_key
      FROM control_differences d JOIN executions e ON e.execution_id = d.key AND in_key_parts(e.execution_id)`;
    const listed = async (n: number) => {
      const diffs = Array.from({ length: n }, (_, i) => ({ kind: 'EXECUTION_UNKNOWN_ORDER', key: `E${i + 1}` }));
      const got = await evaluateRecords(duck.conn, script(byParts, ['executions']), diffs, 4);
      const parts = (await duck.conn.runAndReadAll(`SELECT getvariable('difference_key_parts') IS NULL AS unlisted`)).getRowObjectsJson();
      return { unlisted: parts[0].unlisted, records: Object.fromEntries([...got].map(([k, r]) => [k, r.listed.map((x) => `${x.file}:${x.record_number}`)])) };
    };
    const records = { [differenceKey('EXECUTION_UNKNOWN_ORDER', 'E1')]: ['executions/a.csv:1'], [differenceKey('EXECUTION_UNKNOWN_ORDER', 'E2')]: ['executions/a.csv:10'], [differenceKey('EXECUTION_UNKNOWN_ORDER', 'E3')]: ['executions/b.csv:2'] };
    expect(await listed(32)).toEqual({ unlisted: false, records });
    expect(await listed(33)).toEqual({ unlisted: true, records });
    const lists = (await duck.conn.runAndReadAll(`SELECT in_short_list(short_list(['a', 'b']), 'c') AS short_miss, in_short_list(short_list(['a', 'b']), 'a') AS short_hit,
      in_short_list(short_list(range(33)::VARCHAR[]), 'c') AS long_any, in_short_list(short_list([]::VARCHAR[]), 'a') AS empty_none`)).getRowObjectsJson();
    expect(lists).toEqual([{ short_miss: false, short_hit: true, long_any: true, empty_none: false }]);
  });

  it('refuses a script without a query and a query with other columns', async () => {
    await expect(evaluateRecords(duck.conn, script('CREATE OR REPLACE TEMP TABLE rc02_x AS SELECT 1 AS x;'), DIFFS)).rejects.toThrow('sql/rc02/records.sql: the script holds no query');
    await expect(evaluateRecords(duck.conn, script(`SELECT 'K' AS kind, 'k' AS key, 's' AS side, 'executions' AS dataset, 'f:000000000001' AS source;`), DIFFS))
      .rejects.toThrow('sql/rc02/records.sql: query 1 returns columns (kind, key, side, dataset, source), not (kind, key, side, dataset, source, record_key)');
  });
});

describe('the table check of records.sql', () => {
  const parser = new SqlNames();
  afterAll(() => parser.close());
  const check = async (files: { path: string; text: string; provided?: string[] }[]) => (await controlTableProblems(parser, {
    control_id: 'RC92', reads: ['executions'], definitionPath: 'controls/rc92/control.json', files,
  }, await loadCommonSql(parser))).map((p) => p.replace(/ \(line \d+: .*?\)(?= reads)/, ''));
  const records = `SELECT d.kind, d.key, 'internal' AS side, 'executions' AS dataset, e._source AS source, e.execution_id AS record_key
    FROM ${CONTROL_DIFFERENCES_TABLE} d JOIN executions e ON e.execution_id = d.key`;

  it('lets records.sql read control_differences, and only records.sql', async () => {
    expect(await check([{ path: 'sql/rc92/records.sql', text: records, provided: [CONTROL_DIFFERENCES_TABLE] }])).toEqual([]);
    expect(await check([{ path: 'sql/rc92/differences.sql', text: records }])).toEqual([
      'RC92: sql/rc92/differences.sql statement 1 reads control_differences, which is neither a dataset, an object of sql/common nor a table this control created earlier',
    ]);
    expect(await check([{ path: 'sql/rc92/records.sql', text: `${records} JOIN orders o ON o.order_id = e.order_id`, provided: [CONTROL_DIFFERENCES_TABLE] }])).toEqual([
      'RC92: sql/rc92/records.sql statement 1 reads dataset orders; controls/rc92/control.json does not declare it (its "reads": executions)',
    ]);
  });

  it('passes every control’s records.sql of the repository (loading them runs the check)', async () => {
    const defs = await loadControls();
    expect(defs.filter((d) => d.sql.records !== undefined).map((d) => d.sqlPaths.records)).toEqual(
      ['RC01', 'RC02', 'RC03', 'RC04', 'RC05', 'RC06'].map((c) => `sql/${c.toLowerCase()}/records.sql`));
  });
});
