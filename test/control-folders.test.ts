/**
 * "A new control is two folders", enforced (docs/controls.md, pipeline/controls/table-check.ts).
 * - RC90 (test/fixtures/controls-extra/) is a small real control that lives only in its two
 *   folders: loaded with the same loader as RC01–RC06, run through the pipeline (runWindow, in
 *   process) on the sample day, and evaluated alone with only its dataset loaded.
 * - RC91 (test/fixtures/controls-undeclared/) reads a dataset its definition does not declare and
 *   is refused when the definitions load, naming control, file, statement and dataset.
 * - The table check reads each statement's parse tree: one row per SQL shape it accepts or refuses.
 * - A dataset a run did not load has no table, and sql/common builds only the shared tables whose
 *   datasets were loaded: nothing reads a silent empty table.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { CONTRACT_KINDS } from '../fixtures/contract-kinds.js';
import { defaultConfig } from '../pipeline/config/config.js';
import { loadCommonSql, runCommonSql, type CommonSql } from '../pipeline/controls/common-sql.js';
import { loadControls, type ControlDefinition } from '../pipeline/controls/definitions.js';
import { evaluateControl } from '../pipeline/controls/evaluation.js';
import { SqlNames } from '../pipeline/controls/parse-tree.js';
import { controlTableProblems, readShared } from '../pipeline/controls/table-check.js';
import { selectControls } from '../pipeline/controls/selection.js';
import { windowForDate } from '../pipeline/contract/window.js';
import { DEFAULT_SETTINGS } from '../pipeline/core/settings.js';
import { loadSources } from '../pipeline/load/load.js';
import { runWindow } from '../pipeline/run/run-window.js';
import { ROOT, scratchDir } from './helpers/cli.js';

const DAY = join(ROOT, 'fixtures', 'sample-day', 'sources');
const EXTRA = join(ROOT, 'test', 'fixtures', 'controls-extra');
const UNDECLARED = join(ROOT, 'test', 'fixtures', 'controls-undeclared');
const WINDOW_START = 1_793_577_600_000_000n; // 2026-11-02T00:00:00Z in µs
const DAY_US = 86_400_000_000n;

const tmp = scratchDir('reckon-ctlfolders-');
let instance: DuckDBInstance;
let conn: DuckDBConnection;
let common: CommonSql;

/** A fresh connection with only `datasets` of the sample day loaded and sql/common run over them. */
async function loadOnly(datasets: readonly string[]): Promise<string[]> {
  conn?.closeSync();
  instance?.closeSync();
  instance = await DuckDBInstance.create(':memory:', { threads: '2', memory_limit: '1GB', temp_directory: join(tmp.dir, 'duckdb-tmp') });
  conn = await instance.connect();
  await conn.run(`SET TimeZone = 'UTC'`);
  await loadSources(conn, DAY, defaultConfig().config, join(tmp.dir, `links-${datasets.join('-')}`), { datasets });
  const skipped = await runCommonSql(conn, common, datasets);
  await conn.run(`SET VARIABLE window_start = make_timestamp(${WINDOW_START}::BIGINT)`);
  await conn.run(`SET VARIABLE window_end = make_timestamp(${WINDOW_START + DAY_US}::BIGINT)`);
  await conn.run(`SET VARIABLE as_of = make_timestamp(${WINDOW_START + DAY_US + 60_000_000n}::BIGINT)`);
  return skipped;
}

async function tables(): Promise<string[]> {
  const r = await conn.runAndReadAll(`SELECT table_name FROM duckdb_tables() WHERE NOT temporary AND NOT internal ORDER BY 1`);
  return r.getRows().map((row) => String(row[0]));
}

beforeAll(async () => {
  common = await loadCommonSql();
});

afterAll(() => {
  conn?.closeSync();
  instance?.closeSync();
  tmp.cleanup();
});

describe('a control that is only its two folders (RC90)', () => {
  let rc90: ControlDefinition;
  beforeAll(async () => {
    [rc90] = await loadControls({ controlsDir: join(EXTRA, 'controls'), sqlDir: join(EXTRA, 'sql') });
  });

  it('loads with the same loader as the real controls, its files named by their paths', () => {
    expect(rc90.control_id).toBe('RC90');
    expect(rc90.reads).toEqual(['notification_receipts']);
    expect(rc90.definitionFile.path).toBe('test/fixtures/controls-extra/controls/rc90/control.json');
    expect(rc90.sqlFiles.map((f) => f.path)).toEqual(['test/fixtures/controls-extra/sql/rc90/totals.sql', 'test/fixtures/controls-extra/sql/rc90/differences.sql']);
  });

  it('runs through the pipeline on the sample day: its totals, differences and breaks, its files in the manifest', async () => {
    const store = join(tmp.dir, 'store-rc90');
    const r = await runWindow({
      window: windowForDate('2026-11-02'), controls: selectControls([rc90], []), sources: DAY, store, config: defaultConfig(),
      trigger: 'manual', reason: null, rerunOf: null, settings: DEFAULT_SETTINGS,
    });
    expect([r.status, r.exit_code, r.quarantine_count]).toEqual(['BREAKS', 1, 0]);
    const [c] = r.controls;
    expect([c.control_id, c.as_of, c.readiness]).toEqual(['RC90', '2026-11-03T00:01:00Z', { ready: true, reasons: [] }]);
    expect(c.totals).toEqual({ receipt_count: '197', receipt_count_by_status: { DELIVERED: '194', FAILED: '3' } });
    expect(c.differences.map((d) => [d.kind, d.key, d.record_time, d.disposition])).toEqual([
      ['NOTICE_RECEIPT_NOT_DELIVERED', 'RCP-000088-1', '2026-11-02T06:26:06.862255Z', 'OPENED'],
      ['NOTICE_RECEIPT_NOT_DELIVERED', 'RCP-000105-1', '2026-11-02T05:24:17.155588Z', 'OPENED'],
      ['NOTICE_RECEIPT_NOT_DELIVERED', 'RCP-000288-1', '2026-11-02T08:37:09.470748Z', 'OPENED'],
    ]);
    const m = r.manifestDoc;
    expect(m.controls).toEqual(['RC90']);
    expect(Object.keys(m.sources.datasets)).toEqual(['notification_receipts']);
    expect(m.code.control_definitions).toEqual([rc90.definitionFile]);
    expect(m.code.sql.map((f) => f.path)).toEqual(['sql/common/macros.sql', 'sql/common/views.sql', 'sql/common/wide.sql', ...rc90.sqlFiles.map((f) => f.path)]);
    expect(m.breaks?.map((b) => [b.control_id, b.kind, b.key, b.state, b.sla_s])).toEqual([
      ['RC90', 'NOTICE_RECEIPT_NOT_DELIVERED', 'RCP-000088-1', 'OPEN', 3600],
      ['RC90', 'NOTICE_RECEIPT_NOT_DELIVERED', 'RCP-000105-1', 'OPEN', 3600],
      ['RC90', 'NOTICE_RECEIPT_NOT_DELIVERED', 'RCP-000288-1', 'OPEN', 3600],
    ]);
  });

  it('evaluates on the sample day with only its dataset loaded: exact totals and differences', async () => {
    // Expected values computed independently from the CSV (local times converted with the IANA zones).
    expect(await loadOnly(rc90.reads)).toEqual(['order_versions', 'order_version_conflicts', 'order_acceptance', 'order_current']);
    const ev = await evaluateControl(conn, rc90);
    expect(ev.totals).toEqual({ receipt_count: '197', receipt_count_by_status: { DELIVERED: '194', FAILED: '3' } });
    expect(ev.differences).toEqual([
      { kind: 'NOTICE_RECEIPT_NOT_DELIVERED', key: 'RCP-000088-1', detail: 'intent INT-000088: FAILED at 2026-11-02T06:26:06.862255Z', record_time_us: '1793600766862255' },
      { kind: 'NOTICE_RECEIPT_NOT_DELIVERED', key: 'RCP-000105-1', detail: 'intent INT-000105: FAILED at 2026-11-02T05:24:17.155588Z', record_time_us: '1793597057155588' },
      { kind: 'NOTICE_RECEIPT_NOT_DELIVERED', key: 'RCP-000288-1', detail: 'intent INT-000288: FAILED at 2026-11-02T08:37:09.470748Z', record_time_us: '1793608629470748' },
    ]);
    expect(ev.readiness).toEqual([]);
  });
});

describe('a control reading a dataset it does not declare (RC91)', () => {
  it('is refused when the definitions load, naming control, file, statement and dataset', async () => {
    await expect(loadControls({ controlsDir: join(UNDECLARED, 'controls'), sqlDir: join(UNDECLARED, 'sql') })).rejects.toThrow(
      'control SQL refused by the table check (a control reads only the datasets its definition declares):\n'
      + '  RC91: test/fixtures/controls-undeclared/sql/rc91/differences.sql statement 1 (line 3: SELECT \'NOTICE_RECEIPT_UNKNOWN_INTENT\' AS kind, r.receipt_id…) '
      + 'reads dataset notification_intents; test/fixtures/controls-undeclared/controls/rc91/control.json does not declare it (its "reads": notification_receipts)',
    );
  });
});

describe('the shared objects of sql/common', () => {
  it('each reads the datasets its own statement names, and those of the shared objects it names', () => {
    expect(Object.fromEntries([...common.objects.values()].map((o) => [o.name, [o.type, o.datasets]]))).toEqual({
      dec_text: ['MACRO', []], in_window: ['MACRO', []], age_us: ['MACRO', []], us_text: ['MACRO', []], ts_text: ['MACRO', []],
      short_list: ['MACRO', []], in_short_list: ['MACRO', []], in_key_parts: ['MACRO', []], signed_minor: ['MACRO', []], signed_side: ['MACRO', []], minor: ['MACRO', []],
      order_versions: ['TABLE', ['orders']], order_version_conflicts: ['TABLE', ['orders']],
      order_acceptance: ['TABLE', ['orders']], order_current: ['TABLE', ['orders']],
    });
  });

  it('the real controls pass the check, and list the kinds of CONTRACT §4 (the contract\'s copy is the oracle)', async () => {
    const real = await loadControls();
    expect(real.map((c) => c.control_id)).toEqual(['RC01', 'RC02', 'RC03', 'RC04', 'RC05', 'RC06']);
    const sorted = (kinds: readonly string[]) => [...kinds].sort();
    expect(Object.fromEntries(real.map((c) => [c.control_id, sorted(c.difference_kinds)])))
      .toEqual(Object.fromEntries(Object.entries(CONTRACT_KINDS).map(([id, kinds]) => [id, sorted(kinds)])));
  });
});

describe('the table check, statement by statement', () => {
  const parser = new SqlNames();
  afterAll(() => parser.close());
  /** Problems of a one-file control RC92 reading executions (and, where given, more). */
  const problems = async (sql: string, reads: readonly string[] = ['executions']) => (await controlTableProblems(parser, {
    control_id: 'RC92', reads, definitionPath: 'controls/rc92/control.json', files: [{ path: 'sql/rc92/differences.sql', text: sql }],
  }, common)).map((p) => p.replace(/^RC92: sql\/rc92\/differences\.sql statement (\d+) \(line \d+: .*?\) (?=reads|calls|creates|defines|cannot|sets)/, '$1: '));
  const refusedDataset = (n: number, d: string, reads = 'executions') => `${n}: reads dataset ${d}; controls/rc92/control.json does not declare it (its "reads": ${reads})`;

  const cases: [string, string, string[], string[]?][] = [
    ['a declared dataset, CTEs, macros and range', `WITH x AS (SELECT * FROM executions) SELECT dec_text(1), * FROM x, range(3), unnest([1, 2])`, []],
    ['a scalar subquery in WHERE', `SELECT 1 FROM executions WHERE fill_qty > (SELECT max(ordered_qty) FROM orders)`, [refusedDataset(1, 'orders')]],
    ['a subquery in a join condition and in ORDER BY', `SELECT 1 FROM executions e JOIN venue_fills v ON v.x = (SELECT 1 FROM positions) ORDER BY (SELECT 1 FROM reservations)`,
      [refusedDataset(1, 'venue_fills'), refusedDataset(1, 'positions'), refusedDataset(1, 'reservations')].sort()],
    ['a set operation', `SELECT execution_id FROM executions UNION ALL SELECT venue_fill_id FROM venue_fills`, [refusedDataset(1, 'venue_fills')]],
    ['a qualified name', `SELECT * FROM main.orders`, [refusedDataset(1, 'orders')]],
    ['a shared table whose dataset is not declared', `SELECT * FROM order_current`,
      ['1: reads shared table order_current (sql/common/views.sql), which reads dataset orders; controls/rc92/control.json does not declare it (its "reads": executions)']],
    ['a shared table whose dataset is declared', `SELECT * FROM order_current JOIN executions USING (order_id)`, [], ['orders', 'executions']],
    ['its own temp objects, created earlier', `CREATE OR REPLACE TEMP TABLE rc92_scope AS SELECT * FROM executions; CREATE TEMP VIEW rc92_v AS SELECT * FROM rc92_scope; SELECT * FROM rc92_v`, []],
    ['an own table used before it is created', `SELECT * FROM rc92_later; CREATE TEMP TABLE rc92_later AS SELECT 1`,
      ['1: reads rc92_later, which is neither a dataset, an object of sql/common nor a table this control created earlier']],
    ['a table that is not temporary, or not named rc92_', `CREATE TABLE rc92_kept AS SELECT 1; CREATE TEMP TABLE scratch AS SELECT 1`, [
      '1: creates non-temporary table rc92_kept: a control creates only TEMP tables and views named rc92_… (dropped after it)',
      '2: creates table scratch: a control creates only TEMP tables and views named rc92_… (dropped after it)']],
    ['session variables named rc92_, their expression checked like a query', `SET VARIABLE rc92_ids = (SELECT list(execution_id) FROM executions); SET VARIABLE rc92_n = (SELECT count(*) FROM orders)`,
      [refusedDataset(2, 'orders')]],
    ['a session variable not named rc92_, and one read as a table', `SET VARIABLE window_start = (SELECT max(executed_at) FROM executions); SET VARIABLE rc92_x = 1; SELECT * FROM rc92_x`, [
      '1: sets session variable window_start: a control sets only session variables named rc92_… (the pipeline sets the others)',
      '3: reads rc92_x, which is neither a dataset, an object of sql/common nor a table this control created earlier']],
    ['a raw load table and a file', `SELECT * FROM executions__raw UNION ALL SELECT * FROM 'executions/part-00001.csv'`, [
      '1: reads executions/part-00001.csv, which is neither a dataset, an object of sql/common nor a table this control created earlier',
      '1: reads executions__raw, which is neither a dataset, an object of sql/common nor a table this control created earlier']],
    ['table functions that read', `SELECT * FROM read_csv('x.csv'), query_table('orders')`, [
      '1: calls table function query_table: a control reads only its declared datasets (table functions allowed: range, generate_series, unnest)',
      '1: calls table function read_csv: a control reads only its declared datasets (table functions allowed: range, generate_series, unnest)']],
    ['a CTE that takes a dataset\'s name', `WITH orders AS (SELECT * FROM executions) SELECT * FROM orders`,
      ['1: defines a CTE named orders, the name of a dataset: rename it']],
    ['a statement it cannot read', `INSERT INTO executions SELECT * FROM executions`,
      ['1: cannot be checked: only queries and CREATE … AS <query> can be checked']],
    ['a syntax error', `SELECT FROM WHERE`, ['1: cannot be checked: DuckDB cannot parse it: syntax error at or near "WHERE"']],
    ['DESCRIBE', `DESCRIBE executions`, ['1: cannot be checked: its table reference of form SHOW_REF cannot be checked']],
  ];
  for (const [name, sql, expected, reads] of cases) {
    it(name, async () => {
      expect((await problems(sql, reads)).sort()).toEqual(expected);
    });
  }
});

describe('shared macros that read datasets (a synthetic sql/common)', () => {
  const parser = new SqlNames();
  afterAll(() => parser.close());
  const file = {
    path: 'sql/common/synthetic.sql',
    text: `CREATE OR REPLACE MACRO n_orders() AS (SELECT count(*) FROM orders);
CREATE OR REPLACE MACRO fills_of(o) AS TABLE SELECT * FROM executions WHERE order_id = o;
CREATE OR REPLACE TABLE order_stats AS SELECT n_orders() AS n;
CREATE OR REPLACE TABLE outside AS SELECT * FROM read_csv('x.csv');`,
  };

  it('a macro reads what its body names; a table calling it reads that too; a table function that reads is refused', async () => {
    const { shared, problems } = await readShared(parser, [file]);
    expect(Object.fromEntries([...shared.objects.values()].map((o) => [o.name, [o.type, o.tableMacro, o.datasets]]))).toEqual({
      n_orders: ['MACRO', false, ['orders']], fills_of: ['MACRO', true, ['executions']], order_stats: ['TABLE', false, ['orders']], outside: ['TABLE', false, []],
    });
    expect(problems).toEqual(["sql/common/synthetic.sql statement 4 (line 4: CREATE OR REPLACE TABLE outside AS SELECT * FROM read_csv('x…) calls table function read_csv, which can read what no definition declares"]);
  });

  it('a control calling them must declare their datasets', async () => {
    const { shared } = await readShared(parser, [file]);
    const got = await controlTableProblems(parser, {
      control_id: 'RC93', reads: ['positions'], definitionPath: 'controls/rc93/control.json',
      files: [{ path: 'sql/rc93/totals.sql', text: `SELECT n_orders() AS n FROM positions; SELECT * FROM fills_of('O-1'); SELECT * FROM order_stats` }],
    }, shared);
    expect(got.map((p) => p.replace(/ \(line 1: .*?\)(?= reads| calls)/, ''))).toEqual([
      'RC93: sql/rc93/totals.sql statement 1 calls shared macro n_orders (sql/common/synthetic.sql), which reads dataset orders; controls/rc93/control.json does not declare it (its "reads": positions)',
      'RC93: sql/rc93/totals.sql statement 2 calls shared table macro fills_of (sql/common/synthetic.sql), which reads dataset executions; controls/rc93/control.json does not declare it (its "reads": positions)',
      'RC93: sql/rc93/totals.sql statement 3 reads shared table order_stats (sql/common/synthetic.sql), which reads dataset orders; controls/rc93/control.json does not declare it (its "reads": positions)',
    ]);
  });
});

describe('a dataset the run did not load', () => {
  it('has no table, and sql/common builds only what the loaded datasets feed', async () => {
    expect(await loadOnly(['executions', 'ledger_postings'])).toEqual(['order_versions', 'order_version_conflicts', 'order_acceptance', 'order_current']);
    expect(await tables()).toEqual(['executions', 'ledger_postings']);
    await expect(conn.run('SELECT count(*) FROM orders')).rejects.toThrow('Table with name orders does not exist');
  });

  it('fails loudly when control SQL names it anyway (a definition built past the loader)', async () => {
    await loadOnly(['notification_receipts']);
    const [rc90] = await loadControls({ controlsDir: join(EXTRA, 'controls'), sqlDir: join(EXTRA, 'sql') });
    const sneaky: ControlDefinition = { ...rc90, sql: { ...rc90.sql, totals: `SELECT 'n' AS name, NULL AS dim, count(*)::VARCHAR AS value FROM notification_intents` } };
    await expect(evaluateControl(conn, sneaky)).rejects.toThrow('RC90: its SQL reads dataset notification_intents, which this run did not load (reads: notification_receipts)');
  });

  it('with every dataset loaded, sql/common builds every shared table', async () => {
    expect(await loadOnly(['orders'])).toEqual([]);
    expect(await tables()).toEqual(['order_acceptance', 'order_current', 'order_version_conflicts', 'order_versions', 'orders']);
  });
});
