/**
 * `npm run bench:records -- DAY [RC02 …]` (issue 19, docs/performance.md): the cost of the records
 * behind each difference on a generated day with many differences, where a full `reckon run`
 * would spend its time opening one break per difference. Loads the datasets the controls read
 * (as the load phase does), evaluates each control as the evaluate phase does (differences.sql,
 * then records.sql into DuckDB) and writes the `difference_records` table to Parquet as the
 * outputs phase does. Prints, per control, its differences, the records kept and the time of the
 * evaluation and of its records part; then the Parquet write (time, bytes, rows) and peak RSS.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../pipeline/config/config.js';
import { loadCommonSql, runCommonSql } from '../pipeline/controls/common-sql.js';
import { loadControls } from '../pipeline/controls/definitions.js';
import { evaluateControl } from '../pipeline/controls/evaluation.js';
import { DIFFERENCE_RECORDS_TABLE, ensureRecordsTable } from '../pipeline/controls/records.js';
import { datasetsRead, selectControls } from '../pipeline/controls/selection.js';
import { windowForDate } from '../pipeline/contract/window.js';
import { DEFAULT_SETTINGS } from '../pipeline/core/settings.js';
import { estimateLoadBytes, openEngine } from '../pipeline/load/engine.js';
import { loadSources } from '../pipeline/load/load.js';
import { OUTPUT_TABLES, writeOutputs } from '../pipeline/outputs/outputs.js';
import { asOf, setVariables } from '../pipeline/run/phase-evaluate.js';
import { differenceRecordsQuery } from '../pipeline/run/phase-outputs.js';

const [day, ...ids] = process.argv.slice(2);
if (!day) throw new Error('usage: bench-records DAY [CONTROL …] (a folder written by reckon generate; its date is read from _expected.json)');
const date = (JSON.parse(readFileSync(join(day, '_expected.json'), 'utf8')) as { generator: { date: string } }).generator.date;
const ms = (t0: number) => Math.round(performance.now() - t0);
const scratch = mkdtempSync(join(tmpdir(), 'reckon-bench-records-'));
try {
  const definitions = await loadControls();
  const selected = selectControls(definitions, ids).selected;
  const config = await loadConfig(undefined, definitions);
  const reads = datasetsRead(selected);
  const window = windowForDate(date);
  const engine = await openEngine(scratch, await estimateLoadBytes(day, reads), DEFAULT_SETTINGS.duckdb);
  const conn = await engine.instance.connect();
  await conn.run(`SET TimeZone = 'UTC'`);
  let t0 = performance.now();
  const loaded = await loadSources(conn, day, config.config, join(scratch, 'links'), { datasets: reads, views: true });
  console.log(`load ${ms(t0)} ms (${reads.length} datasets, ${engine.storage} storage)`);
  await runCommonSql(conn, await loadCommonSql(), loaded.datasets.map((d) => d.dataset));
  await ensureRecordsTable(conn);
  const loads = new Map(loaded.datasets.map((d) => [d.dataset, d]));
  for (const def of selected) {
    const before = Number((await conn.runAndReadAll(`SELECT count(*) FROM ${DIFFERENCE_RECORDS_TABLE}`)).getRows()[0][0]);
    t0 = performance.now();
    await setVariables(conn, { ...def.params, ...(config.config.controls[def.control_id]?.params ?? {}), window_start: window.startMicros, window_end: window.endMicros, as_of: asOf(def, loads) });
    const ev = await evaluateControl(conn, def);
    const total = ms(t0);
    const after = Number((await conn.runAndReadAll(`SELECT count(*) FROM ${DIFFERENCE_RECORDS_TABLE}`)).getRows()[0][0]);
    console.log(`${def.control_id}: ${ev.differences.length} differences, ${after - before} records; evaluation ${total} ms, of which records ${ev.records_ms} ms`);
  }
  t0 = performance.now();
  const [out] = await writeOutputs(conn, join(scratch, 'staging'), date, 'bench', {}, { difference_records: OUTPUT_TABLES.difference_records }, { difference_records: differenceRecordsQuery('bench', window) });
  console.log(`difference_records: ${out.rows} rows, ${out.size} bytes of Parquet (sha256 ${out.sha256}), written in ${ms(t0)} ms`);
  console.log(`peak RSS ${Math.round(process.resourceUsage().maxRSS / 1024)} MiB`);
  conn.closeSync();
  engine.instance.closeSync();
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
