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
import { evaluateControl, SOURCES_FILE_FIX, type RawDifference } from '../controls/evaluation.js';
import { LARGE_TOTALS_TABLE } from '../controls/totals.js';
import { DIFFERENCE_RECORDS_TABLE, differenceKey, ensureRecordsTable, type RecordRef } from '../controls/records.js';
import { ConfigError } from '../core/errors.js';
import { checkInterrupt } from '../core/interrupt.js';
import { silentProgress } from '../core/progress.js';
import { datasetSpec } from '../contract/datasets.js';
import { formatMicros } from '../contract/values.js';
import type { Window } from '../contract/window.js';
import { checkViewFiles, type DatasetLoad } from '../load/load.js';
import type { PlannedSources } from '../sources/locate.js';
import { extractFileLabels } from '../sources/postgres/label.js';
import { onControlLanes } from './control-lanes.js';
import { timed, type EvaluatedControls, type EvaluationReuse, type LoadedInputs, type RunContext } from './context.js';
import { ResultsReuse } from './results-cache.js';

/** Evaluates every selected control; records per-control timings and what DuckDB is doing in `ctx.progress`. */
export async function evaluateControls(ctx: RunContext, inputs: LoadedInputs): Promise<EvaluatedControls> {
  const common = await loadCommonSql();
  const notes: string[] = [];
  let reuse: EvaluationReuse | undefined;
  const results = await timed(ctx.timings, 'controls_ms', async () => {
    // The results cache (results-cache.ts): opened by the load phase when keyed by the load's inputs, else here by its result.
    reuse = inputs.reuse ?? await ResultsReuse.open(ctx, inputs, { loaded: inputs.loaded }, common.files);
    ctx.progress.doing = 'computing the shared tables (sql/common)';
    // Only the shared tables whose datasets this run loaded: the others would name missing tables.
    if (!reuse.hit) await runCommonSql(inputs.conn, common, inputs.loaded.datasets.map((d) => d.dataset));
    await ensureRecordsTable(inputs.conn);
    // Two connections on a small day (control-lanes.ts); results, and their notes, in the selection's order.
    const evaluated = await onControlLanes(inputs.engine, inputs.conn, ctx.req.controls.selected, async (def, conn) => {
      checkInterrupt(ctx.interrupt);
      const own: string[] = [];
      return { result: await evaluateOne(ctx, inputs, conn, def, own, reuse!), notes: own };
    }, ctx.interrupt);
    const out = evaluated.map((e) => e.result);
    notes.push(...evaluated.flatMap((e) => e.notes));
    // The lanes' rows are in the run's connection now: kept from there.
    await reuse.finish(inputs.loaded);
    await labelExtractRecords(inputs);
    notes.push(...await wideTotalNotes(inputs.conn, out));
    await checkViewFiles(inputs.loaded);
    return out;
  });
  return { results, commonSql: common.files, notes: [...notes, ...reuse!.notes()], evaluation: reuse!.sources() };
}

/** A database extract's records name it as its quarantine entries and manifest object do (`db:<database>/<dataset>`), in DuckDB. */
async function labelExtractRecords(inputs: LoadedInputs): Promise<void> {
  for (const x of extractFileLabels(inputs.located.plan)) {
    await inputs.conn.run(`UPDATE ${DIFFERENCE_RECORDS_TABLE} SET file = $3 WHERE dataset = $1 AND file = $2`, [x.dataset, x.file, x.label]);
  }
}

/** `r` with a database extract's file named by its label (as labelExtractRecords does in DuckDB). */
function labelled(inputs: LoadedInputs, r: RecordRef): RecordRef {
  const x = extractFileLabels(inputs.located.plan).find((l) => l.dataset === r.dataset && l.file === r.file);
  return x ? { ...r, file: x.label } : r;
}

async function evaluateOne(ctx: RunContext, inputs: LoadedInputs, conn: DuckDBConnection, def: ControlDefinition, notes: string[], reuse: EvaluationReuse): Promise<ControlResult> {
  const { req } = ctx;
  const t0 = performance.now();
  const cfg = req.config.config.controls[def.control_id] ?? {};
  const asOfMicros = asOf(def, inputs.loads);
  ctx.progress.doing = `evaluating ${def.control_id}`;
  const task = (req.progress ?? silentProgress).begin('evaluate', def.control_id, ctx.logger);
  await setVariables(conn, { ...def.params, ...(cfg.params ?? {}), window_start: req.window.startMicros, window_end: req.window.endMicros, as_of: asOfMicros });
  const ev = await reuse.evaluate(def, () => evaluateControl(conn, def, { inlineTotalKeys: req.settings.inlineTotalKeys })).finally(() => task.done());
  if (ev.wide) notes.push(`${def.control_id}: a sum of minor units passed DECIMAL(38) on the fast path; its totals and differences were computed exactly with DuckDB BIGNUM (variable-width integers)`);
  const diffs = ev.differences.map((d) => ({ ...d, record_time: d.record_time_us === null ? null : formatMicros(BigInt(d.record_time_us)), timing: isTiming(ctx, def, d) }));
  const { status, quarantined, reasons } = statusOf(def, inputs.loads, req.window, ev.readiness, diffs.some((d) => !d.timing), inputs.located.plan);
  const provisional = status === 'NOT_READY' || status === 'INCOMPLETE';
  const result: ControlResult = {
    control_id: def.control_id, status, as_of: asOfMicros === null ? null : formatMicros(asOfMicros),
    readiness: { ready: reasons.length === 0, reasons }, quarantined_datasets: quarantined, totals: ev.totals,
    ...(ev.large_totals ? { large_totals: ev.large_totals } : {}),
    differences: diffs.map((d) => {
      const records = ev.records.get(differenceKey(d.kind, d.key));
      return {
        kind: d.kind, key: d.key, detail: d.detail, record_time: d.record_time, break_id: null,
        disposition: (provisional ? 'PROVISIONAL' : d.timing ? 'TIMING' : 'OPENED') satisfies Disposition,
        record_count: records?.count ?? 0, records: (records?.listed ?? []).map((r) => labelled(inputs, r)),
      };
    }),
  };
  ctx.timings[`control_${def.control_id.toLowerCase()}_ms`] = Math.round(performance.now() - t0);
  ctx.timings[`control_${def.control_id.toLowerCase()}_records_ms`] = ev.records_ms;
  ctx.logger.info(`${status}: ${diffs.length} difference(s)`, { control: def.control_id, status, differences: diffs.length });
  return result;
}

/** An exact decimal text that no typed column of `control_totals` can hold: more than 38 digits, or more than 20 before a fraction. */
function beyondDecimal38(v: string): boolean {
  // At most 21 characters: at most 21 digits without a fraction, at most 20 before one.
  if (v.length <= 21) return false;
  const [int, frac] = v.replace(/^-/, '').replace(/^0+(?=[0-9])/, '').split('.');
  return frac === undefined ? int.length > 38 : int.length > 20;
}

/**
 * Manifest notes for totals beyond DECIMAL(38) (CONTRACT §6: money in outputs is DECIMAL, never
 * HUGEINT): such a value is written to `control_totals` as exact text only (`value_text`;
 * `value_decimal` and `value_integer` NULL). Inline totals are named (at most 20 per control);
 * entries of large totals are counted in DuckDB.
 */
async function wideTotalNotes(conn: DuckDBConnection, results: readonly ControlResult[]): Promise<string[]> {
  const notes: string[] = [];
  const tail = 'written to control_totals as exact text only (value_text; value_decimal and value_integer are NULL)';
  for (const r of results) {
    // Checked before any name is made: a control's totals may have many dims, and nearly none is wide.
    const wide: [string, string][] = [];
    for (const [name, v] of Object.entries(r.totals)) {
      if (typeof v === 'string') {
        if (beyondDecimal38(v)) wide.push([name, v]);
      } else {
        for (const dim in v) if (beyondDecimal38(v[dim])) wide.push([`${name}[${dim}]`, v[dim]]);
      }
    }
    for (const [name, v] of wide.slice(0, 20)) notes.push(`${r.control_id}: total ${name} = ${v} has more digits than DECIMAL(38) holds: ${tail}`);
    if (wide.length > 20) notes.push(`${r.control_id}: ${wide.length - 20} more totals beyond DECIMAL(38), ${tail}`);
  }
  if (results.some((r) => r.large_totals)) {
    const rows = (await conn.runAndReadAll(`SELECT control_id, name, count(*)::VARCHAR AS n FROM ${LARGE_TOTALS_TABLE} WHERE length(ltrim(split_part(ltrim(value, '-'), '.', 1), '0')) > CASE WHEN contains(value, '.') THEN 20 ELSE 38 END GROUP BY ALL ORDER BY ALL`)).getRowObjectsJson();
    for (const o of rows) notes.push(`${String(o.control_id)}: ${String(o.n)} entries of the large total ${String(o.name)} have more digits than DECIMAL(38) holds: ${tail}`);
  }
  return notes;
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
export async function setVariables(conn: DuckDBConnection, vars: Record<string, string | number | bigint | null>): Promise<void> {
  const sets = Object.entries(vars).map(([k, v]) => {
    if (!/^[a-z_][a-z0-9_]*$/.test(k)) throw new ConfigError(`bad parameter name ${k}`);
    const expr = v === null ? 'NULL::TIMESTAMP' : typeof v === 'bigint' ? `make_timestamp(${v}::BIGINT)` : sqlValue(v);
    return `SET VARIABLE ${k} = ${expr}`;
  });
  // One call for all of them (each SET is still its own statement).
  if (sets.length) await conn.run(sets.join(';\n'));
}

/** A control's status before breaks (CONTRACT §3): INCOMPLETE over quarantine, NOT_READY with its reasons, else BREAKS or CLEAN. */
function statusOf(
  def: ControlDefinition, loads: ReadonlyMap<string, DatasetLoad>, w: Window, readinessReasons: string[], hasOpenDifferences: boolean,
  plan?: PlannedSources,
) {
  const quarantined = def.reads.filter((d) => (loads.get(d)?.quarantined ?? 0) > 0);
  const reasons = [...readinessReasons];
  for (const d of def.reads) {
    const load = loads.get(d)!;
    const wm = load.watermark;
    // A folder that is not there is a delivery that did not arrive: say so, not "no watermark";
    // a sources file that gives the dataset no location (and no default) has no folder to miss.
    if (!load.present) reasons.unshift(plan?.origins.get(d)?.kind === 'absent'
      ? `${d}: the sources file gives it no location and has no default (an empty dataset without a watermark, CONTRACT §2); ${SOURCES_FILE_FIX}`
      : `${d}: the dataset folder ${d}/ is missing from the sources (an empty dataset without a watermark, CONTRACT §2)`);
    else if (wm.micros === null) reasons.unshift(noWatermark(d, plan));
    else if (wm.micros < w.endMicros) reasons.unshift(`${d} watermark ${wm.value} (${wm.source}) is before the window end ${w.end}`);
  }
  const status: ControlStatus = quarantined.length ? 'INCOMPLETE' : reasons.length ? 'NOT_READY' : hasOpenDifferences ? 'BREAKS' : 'CLEAN';
  return { status, quarantined, reasons };
}

/**
 * Why dataset `d` has no watermark, for a NOT_READY reason. A database dataset's watermark comes
 * only from its watermark query (or, for the datasets that derive one, its records): a query the
 * sources file does not give, or one that returned no row, is not fixed by waiting.
 */
function noWatermark(d: string, plan: PlannedSources | undefined): string {
  if (plan?.origins.get(d)?.kind !== 'database') return `${d} has no watermark`;
  const extract = plan.databases.flatMap((db) => db.datasets).find((x) => x.dataset === d);
  const rows = extract?.watermark?.rows;
  if (rows === 0) return `${d} has no watermark: its watermark query (datasets.${d}.watermark.query) returned no row; ${SOURCES_FILE_FIX}`;
  if (rows !== undefined && rows > 1) return `${d} has no watermark: its watermark query (datasets.${d}.watermark.query) returned ${rows} rows, not one; ${SOURCES_FILE_FIX}`;
  if (rows !== undefined) return `${d} has no watermark: its watermark query returned NULL`;
  if (extract && !datasetSpec(d).derivedWatermarkColumn) {
    return `${d} has no watermark: the sources file gives datasets.${d} no watermark query, and a database dataset's watermark is read by one (docs/postgres.md "Watermarks from the database"); ${SOURCES_FILE_FIX}`;
  }
  return `${d} has no watermark (its extract holds no record to derive one from)`;
}

/** The control's as-of (CONTRACT §3): the smallest watermark of the datasets it reads, µs; null when none has one. */
export function asOf(def: ControlDefinition, loads: ReadonlyMap<string, DatasetLoad>): bigint | null {
  let min: bigint | null = null;
  for (const d of def.reads) {
    const m = loads.get(d)!.watermark.micros;
    if (m !== null && (min === null || m < min)) min = m;
  }
  return min;
}
