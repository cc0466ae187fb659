/**
 * Phase 5, outputs (CONTRACT §6): the rows of every output table, keyed by column name (runs,
 * control_totals, differences, difference_records, quarantine, and the break tables' snapshot of
 * the store as it will be once the run's planned break objects are written), written to Parquet in
 * the scratch folder and staged under `_staging/<run>/` beside the plan. Nothing is visible to
 * readers yet. Fault point `staged` (staged, no manifest).
 */
import { join } from 'node:path';
import type { ControlResult } from '../../manifests/v1/schema.js';
import { ensureTotalsTables, INLINE_TOTALS_TABLE, LARGE_TOTALS_TABLE } from '../controls/totals.js';
import { DIFFERENCE_RECORDS_TABLE } from '../controls/records.js';
import { statusExitCode } from '../core/outcome.js';
import { literal } from '../core/sql-text.js';
import { windowDate } from '../contract/window.js';
import type { LoadResult } from '../load/load.js';
import { BREAK_OUTPUT_TABLES, breakOutputRows } from '../outputs/break-tables.js';
import { OUTPUT_TABLES, timestampMsExpr, writeOutputs, type OutputObject, type OutputQueries, type OutputRow } from '../outputs/outputs.js';
import { overlay } from '../breaks/break-plan.js';
import { stageOutputs } from '../publish/staging.js';
import { timed, type LoadedInputs, type RunContext, type SettledResults } from './context.js';

/** Writes and stages the run's outputs; returns them (`runs` last). */
export async function writeRunOutputs(ctx: RunContext, inputs: LoadedInputs, settled: SettledResults): Promise<OutputObject[]> {
  const { req, runId } = ctx;
  ctx.progress.doing = 'writing outputs';
  const outputs = await timed(ctx.timings, 'outputs_ms', async () => {
    const breakRows = await breakOutputRows(overlay(ctx.store, settled.plan.objects), { runId, config: req.config.config, controls: req.controls.all });
    const rows = { ...outputRows(ctx, settled, inputs.loaded), ...breakRows };
    await ensureTotalsTables(inputs.conn);
    const files = await writeOutputs(inputs.conn, join(ctx.scratch, 'staging'), windowDate(req.window), runId, rows, { ...OUTPUT_TABLES, ...BREAK_OUTPUT_TABLES }, { ...totalRowsQuery(ctx, settled.results), difference_records: differenceRecordsQuery(runId, req.window) });
    await stageOutputs(ctx.store, runId, files);
    return files;
  });
  await ctx.fault('staged');
  return outputs;
}

/** The rows of runs, differences and quarantine (OUTPUT_TABLES), keyed by column name; control_totals come from DuckDB (totalRowsQuery). */
function outputRows(ctx: RunContext, settled: SettledResults, loaded: LoadResult): Record<string, OutputRow[]> {
  const { req, runId } = ctx;
  const span = { run_id: runId, window_start: req.window.start, window_end: req.window.end };
  return {
    runs: settled.results.map((r) => ({
      ...span, trigger: req.trigger, reason: req.reason, parent_run_id: req.rerunOf, control_id: r.control_id, status: r.status,
      exit_code: String(statusExitCode(r.status)), as_of: r.as_of, as_of_text: r.as_of, difference_count: String(r.differences.length),
      results_digest: settled.resultsDigest, started_at: ctx.startedAt.toISOString(),
    })),
    differences: settled.results.flatMap((r) => r.differences.map((d) => ({
      ...span, control_id: r.control_id, status: r.status, kind: d.kind, key: d.key, detail: d.detail,
      record_time: d.record_time, record_time_text: d.record_time, break_id: d.break_id, disposition: d.disposition,
    }))),
    quarantine: loaded.quarantine.map((q) => ({
      run_id: runId, window_start: req.window.start, dataset: q.dataset, file: q.file, row: q.row === null ? null : String(q.row),
      line: q.line === null ? null : String(q.line), column: q.column, rule: q.rule, message: q.message, raw: q.raw,
    })),
  };
}

/**
 * The query selecting the control_totals rows (INLINE_TOTALS_TABLE, then the large totals of
 * LARGE_TOTALS_TABLE, whose entries never enter JavaScript), as text columns named as the table's,
 * in the order of the results, then by total name and dim; none when no control ran.
 */
function totalRowsQuery(ctx: RunContext, results: readonly ControlResult[]): OutputQueries {
  if (!results.length) return {};
  const { runId, req } = ctx;
  const byControl = (f: (r: ControlResult, i: number) => string) => `CASE control_id ${results.map((r, i) => `WHEN ${literal(r.control_id)} THEN ${f(r, i)}`).join(' ')} END`;
  return {
    control_totals: `SELECT ${literal(runId)} AS run_id, ${literal(req.window.start)} AS window_start, ${literal(req.window.end)} AS window_end, control_id, `
      + `${byControl((r) => literal(r.status))} AS status, name AS total_name, dim, value AS value_text, value AS value_decimal, value AS value_integer `
      + `FROM (SELECT *, 0 AS part FROM ${INLINE_TOTALS_TABLE} UNION ALL SELECT *, 1 FROM ${LARGE_TOTALS_TABLE}) WHERE control_id IN (${results.map((r) => literal(r.control_id)).join(', ')}) `
      + `ORDER BY ${byControl((_, i) => String(i))}, part, name, dim`,
  };
}

/**
 * The typed query selecting the difference_records rows of run `runId` (DIFFERENCE_RECORDS_TABLE,
 * filled by each control's records.sql and never read into JavaScript whole), in the order of
 * control, kind, key, side, dataset, file and record number, with the table's column types: the
 * window's timestamps typed once, not per row, and record_number kept BIGINT (no text round trip).
 */
export function differenceRecordsQuery(runId: string, window: { readonly start: string; readonly end: string }): { typed: string } {
  return {
    typed: `SELECT ${literal(runId)} AS run_id, ${timestampMsExpr(literal(window.start))} AS window_start, ${timestampMsExpr(literal(window.end))} AS window_end, `
      + `r.control_id, r.kind, r.key, r.side, r.dataset, r.file, r.record_number, r.record_key FROM ${DIFFERENCE_RECORDS_TABLE} r `
      + 'ORDER BY r.control_id, r.kind, r.key, r.side, r.dataset, r.file, r.record_number',
  };
}
