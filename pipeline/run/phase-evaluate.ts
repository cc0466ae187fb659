/**
 * Phase 3, evaluate: the shared SQL (sql/common: the statements whose datasets were loaded), then
 * each selected control against the loaded tables (CONTRACT §3–§4), giving its provisional result: status from quarantine and readiness
 * (INCOMPLETE before NOT_READY), as-of, totals and differences, each difference marked TIMING by
 * a configured timing rule, PROVISIONAL when the control is NOT_READY or INCOMPLETE, else OPENED
 * (the breaks phase settles it). Ends by checking that no file a view read has changed.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import type { ControlResult, ControlStatus, Disposition } from '../../manifests/v1/schema.js';
import { loadCommonSql, runCommonSql } from '../controls/common-sql.js';
import type { ControlDefinition } from '../controls/definitions.js';
import { evaluateControl, type RawDifference } from '../controls/evaluation.js';
import { ConfigError } from '../core/errors.js';
import { formatMicros } from '../contract/values.js';
import type { Window } from '../contract/window.js';
import { checkViewFiles, type DatasetLoad } from '../load/load.js';
import { timed, type EvaluatedControls, type LoadedInputs, type RunContext } from './context.js';

/** Evaluates every selected control; records per-control timings and what DuckDB is doing in `ctx.progress`. */
export async function evaluateControls(ctx: RunContext, inputs: LoadedInputs): Promise<EvaluatedControls> {
  const common = await loadCommonSql();
  const results = await timed(ctx.timings, 'controls_ms', async () => {
    ctx.progress.doing = 'computing the shared tables (sql/common)';
    // Only the shared tables whose datasets this run loaded: the others would name missing tables.
    await runCommonSql(inputs.conn, common, inputs.loaded.datasets.map((d) => d.dataset));
    const out: ControlResult[] = [];
    for (const def of ctx.req.controls.selected) out.push(await evaluateOne(ctx, inputs, def));
    return out;
  });
  await checkViewFiles(inputs.loaded);
  return { results, commonSql: common.files };
}

async function evaluateOne(ctx: RunContext, inputs: LoadedInputs, def: ControlDefinition): Promise<ControlResult> {
  const { req } = ctx;
  const t0 = performance.now();
  const cfg = req.config.config.controls[def.control_id] ?? {};
  const asOfMicros = asOf(def, inputs.loads);
  ctx.progress.doing = `evaluating ${def.control_id}`;
  await setVariables(inputs.conn, { ...def.params, ...(cfg.params ?? {}), window_start: req.window.startMicros, window_end: req.window.endMicros, as_of: asOfMicros });
  const ev = await evaluateControl(inputs.conn, def, { inlineTotalKeys: req.settings.inlineTotalKeys });
  const diffs = ev.differences.map((d) => ({ ...d, record_time: d.record_time_us === null ? null : formatMicros(BigInt(d.record_time_us)), timing: isTiming(ctx, def, d) }));
  const { status, quarantined, reasons } = statusOf(def, inputs.loads, req.window, ev.readiness, diffs.some((d) => !d.timing));
  const provisional = status === 'NOT_READY' || status === 'INCOMPLETE';
  const result: ControlResult = {
    control_id: def.control_id, status, as_of: asOfMicros === null ? null : formatMicros(asOfMicros),
    readiness: { ready: reasons.length === 0, reasons }, quarantined_datasets: quarantined, totals: ev.totals,
    ...(ev.large_totals ? { large_totals: ev.large_totals } : {}),
    differences: diffs.map((d) => ({
      kind: d.kind, key: d.key, detail: d.detail, record_time: d.record_time, break_id: null,
      disposition: (provisional ? 'PROVISIONAL' : d.timing ? 'TIMING' : 'OPENED') satisfies Disposition,
    })),
  };
  ctx.timings[`control_${def.control_id.toLowerCase()}_ms`] = Math.round(performance.now() - t0);
  ctx.logger.info(`${status}: ${diffs.length} difference(s)`, { control: def.control_id, status, differences: diffs.length });
  return result;
}

/** True when a configured timing rule of the control's kind covers the difference's record time (CONTRACT §5). */
function isTiming(ctx: RunContext, def: ControlDefinition, d: RawDifference): boolean {
  const rule = ctx.req.config.config.timing_rules.find((r) => r.control === def.control_id && r.kind === d.kind);
  return rule !== undefined && d.record_time_us !== null && BigInt(d.record_time_us) >= ctx.req.window.endMicros - BigInt(rule.max_age_s) * 1_000_000n;
}

function sqlValue(v: string | number): string {
  return typeof v === 'number' ? String(v) : `'${v.replace(/'/g, "''")}'`;
}

/** Sets DuckDB session variables: numbers and text as literals, bigint µs as timestamps, null as a NULL timestamp. */
async function setVariables(conn: DuckDBConnection, vars: Record<string, string | number | bigint | null>): Promise<void> {
  for (const [k, v] of Object.entries(vars)) {
    if (!/^[a-z_][a-z0-9_]*$/.test(k)) throw new ConfigError(`bad parameter name ${k}`);
    const expr = v === null ? 'NULL::TIMESTAMP' : typeof v === 'bigint' ? `make_timestamp(${v}::BIGINT)` : sqlValue(v);
    await conn.run(`SET VARIABLE ${k} = ${expr}`);
  }
}

/** A control's status before breaks (CONTRACT §3): INCOMPLETE over quarantine, NOT_READY with its reasons, else BREAKS or CLEAN. */
function statusOf(def: ControlDefinition, loads: ReadonlyMap<string, DatasetLoad>, w: Window, readinessReasons: string[], hasOpenDifferences: boolean) {
  const quarantined = def.reads.filter((d) => (loads.get(d)?.quarantined ?? 0) > 0);
  const reasons = [...readinessReasons];
  for (const d of def.reads) {
    const wm = loads.get(d)!.watermark;
    if (wm.micros === null) reasons.unshift(`${d} has no watermark`);
    else if (wm.micros < w.endMicros) reasons.unshift(`${d} watermark ${wm.value} (${wm.source}) is before the window end ${w.end}`);
  }
  const status: ControlStatus = quarantined.length ? 'INCOMPLETE' : reasons.length ? 'NOT_READY' : hasOpenDifferences ? 'BREAKS' : 'CLEAN';
  return { status, quarantined, reasons };
}

/** The control's as-of (CONTRACT §3): the smallest watermark of the datasets it reads, µs; null when none has one. */
function asOf(def: ControlDefinition, loads: ReadonlyMap<string, DatasetLoad>): bigint | null {
  let min: bigint | null = null;
  for (const d of def.reads) {
    const m = loads.get(d)!.watermark.micros;
    if (m !== null && (min === null || m < min)) min = m;
  }
  return min;
}
