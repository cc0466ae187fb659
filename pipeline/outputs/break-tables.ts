/**
 * Break output tables (CONTRACT §5–§6): `breaks` (one row per break: its current state, owner, age
 * and SLA) and `break_events` (the whole append-only log), each a snapshot of the store taken by a
 * run and written beside its other outputs, partitioned by that run. Timestamps are millisecond
 * timestamps with the exact ISO text beside them; the age is DECIMAL(38,6) seconds with its exact
 * text beside it. Rows are staged as text (or null), like every output (pipeline/outputs.ts).
 *
 * Wiring (run.ts): after recordBreaks and before writeOutputs,
 *   const breakRows = await breakOutputRows(store, { runId, config, controls: allControls });
 *   writeOutputs(conn, dir, date, runId, { ...rows, ...breakRows }, { ...OUTPUT_TABLES, ...BREAK_OUTPUT_TABLES });
 * The snapshot therefore holds every event up to this run's openings and reopenings; a VERIFIED
 * event the run itself appends after publishing its manifest appears in the next run's snapshot.
 */
import type { Config } from '../config/config.js';
import type { ControlDefinition } from '../controls/controls.js';
import type { OutputColumn } from './outputs.js';
import type { ObjectStore } from '../store/object-store.js';
import { canonicalJson } from '../core/canonical.js';
import { formatMicros, parseTimestamp } from '../contract/values.js';
import { BreakStore } from '../breaks/break-store.js';
import { summarizeBreak } from '../breaks/break-summary.js';

const col = (name: string, parquet: string): OutputColumn => ({ name, parquet });
const ts = (name: string): OutputColumn[] => [col(name, 'TIMESTAMP_MS'), col(`${name}_text`, 'VARCHAR')];

/** The break output tables and their Parquet column types (shape of OUTPUT_TABLES in outputs.ts). */
export const BREAK_OUTPUT_TABLES: { readonly breaks: readonly OutputColumn[]; readonly break_events: readonly OutputColumn[] } = {
  breaks: [
    col('run_id', 'VARCHAR'), col('break_id', 'VARCHAR'), col('control_id', 'VARCHAR'), col('kind', 'VARCHAR'), col('key', 'VARCHAR'),
    col('state', 'VARCHAR'), col('version', 'INTEGER'), col('owner', 'VARCHAR'), col('owner_assigned', 'BOOLEAN'), col('classification', 'VARCHAR'),
    ...ts('opened_at'), ...ts('state_since'), col('reopen_count', 'INTEGER'),
    ...ts('window_start'), ...ts('window_end'), ...ts('first_record_time'), ...ts('as_of'),
    col('age_s', 'DECIMAL(38,6)'), col('age_s_text', 'VARCHAR'), col('sla_s', 'BIGINT'), col('sla_breached', 'BOOLEAN'),
    col('observation_count', 'BIGINT'), col('last_observed_run_id', 'VARCHAR'), col('last_disposition', 'VARCHAR'),
  ],
  break_events: [
    col('run_id', 'VARCHAR'), col('break_id', 'VARCHAR'), col('version', 'INTEGER'), col('expected_version', 'INTEGER'),
    col('control_id', 'VARCHAR'), col('kind', 'VARCHAR'), col('key', 'VARCHAR'), col('from_state', 'VARCHAR'), col('to_state', 'VARCHAR'),
    col('actor', 'VARCHAR'), ...ts('event_at'), col('owner', 'VARCHAR'), col('classification', 'VARCHAR'), col('approver', 'VARCHAR'),
    col('note', 'VARCHAR'), col('evidence_ref', 'VARCHAR'), col('reason', 'VARCHAR'), col('root_cause', 'VARCHAR'), col('prevention', 'VARCHAR'),
    col('event_run_id', 'VARCHAR'), col('manifest_sha256', 'VARCHAR'),
    ...ts('window_start'), ...ts('window_end'), ...ts('record_time'), col('evidence_json', 'VARCHAR'),
  ],
};

/** Staged rows of the break tables: every value as text or null, in BREAK_OUTPUT_TABLES' column order. */
export type BreakOutputRows = {
  readonly breaks: (string | null)[][];
  readonly break_events: (string | null)[][];
};

/** A timestamp as [text normalized for the millisecond column, exact ISO text as recorded]. */
function tsPair(text: string | null | undefined): [string | null, string | null] {
  if (!text) return [null, null];
  const p = parseTimestamp(text);
  return [p.ok ? formatMicros(p.value) : null, text];
}

/**
 * Reads every break of the store and returns the rows of `breaks` and `break_events` for run
 * `runId` (sorted by break id, then version). Ages and SLAs use `config` and the control
 * definitions (pass all of them, not only the run's selection). Throws what the store throws.
 */
export async function breakOutputRows(
  store: ObjectStore,
  args: { readonly runId: string; readonly config: Config; readonly controls: readonly ControlDefinition[] },
): Promise<BreakOutputRows> {
  const records = await new BreakStore(store).readAll();
  const breaks: (string | null)[][] = [];
  const events: (string | null)[][] = [];
  const str = (v: number | boolean | null) => (v === null ? null : String(v));
  for (const rec of records) {
    const s = summarizeBreak(rec, { config: args.config, controls: args.controls });
    breaks.push([
      args.runId, s.break_id, s.control_id, s.kind, s.key, s.state, String(s.version), s.owner, String(s.owner_assigned), s.classification,
      ...tsPair(s.opened_at), ...tsPair(s.state_since), String(s.reopen_count),
      ...tsPair(s.window?.start), ...tsPair(s.window?.end), ...tsPair(s.first_record_time), ...tsPair(s.as_of),
      s.age_s, s.age_s, str(s.sla_s), str(s.sla_breached),
      String(s.observation_count), s.last_observed_run_id, s.last_disposition,
    ]);
    for (const e of rec.events) {
      const ev = e.evidence;
      events.push([
        args.runId, e.break_id, String(e.version), String(e.expected_version), e.control_id, e.kind, e.key, e.from_state, e.to_state,
        e.actor, ...tsPair(e.at), ev.owner ?? null, ev.classification ?? null, ev.approver ?? null,
        ev.note ?? null, ev.evidence_ref ?? null, ev.reason ?? null, ev.root_cause ?? null, ev.prevention ?? null,
        ev.run_id ?? e.run_id ?? null, ev.manifest_sha256 ?? null,
        ...tsPair(e.window?.start), ...tsPair(e.window?.end), ...tsPair(e.record_time), canonicalJson(ev),
      ]);
    }
  }
  return { breaks, break_events: events };
}
