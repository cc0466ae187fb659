/**
 * Break output tables (CONTRACT §5–§6): `breaks` (one row per break: its current state, owner, age
 * and SLA) and `break_events` (the whole append-only log), each a snapshot of the store taken by a
 * run and written beside its other outputs, partitioned by that run. Timestamps are millisecond
 * timestamps with the exact ISO text beside them; the age is DECIMAL(38,6) seconds with its exact
 * text beside it. Rows are keyed by column name and staged as text (or null), like every output
 * (outputs/outputs.ts).
 *
 * Wiring (run/phase-outputs.ts): after the breaks phase and before writeOutputs,
 *   const breakRows = await breakOutputRows(store, { runId, config, controls: allControls });
 *   writeOutputs(conn, dir, date, runId, { ...rows, ...breakRows }, { ...OUTPUT_TABLES, ...BREAK_OUTPUT_TABLES });
 * The snapshot therefore holds every event up to this run's openings and reopenings; a VERIFIED
 * event the run itself appends after publishing its manifest appears in the next run's snapshot.
 */
import type { Config } from '../config/config.js';
import type { ControlDefinition } from '../controls/definitions.js';
import type { OutputColumn, OutputRow } from './outputs.js';
import type { ObjectStore } from '../store/object-store.js';
import { canonicalJson } from '../core/canonical.js';
import { formatMicros, parseTimestamp } from '../contract/values.js';
import { BreakStore, type BreakEvent } from '../breaks/break-store.js';
import { summarizeBreak, type BreakSummary } from '../breaks/break-summary.js';

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

/** Staged rows of the break tables: column name → text or null (BREAK_OUTPUT_TABLES' columns). */
export type BreakOutputRows = {
  readonly breaks: OutputRow[];
  readonly break_events: OutputRow[];
};

/** A timestamp column and its `_text` column: text normalized for the millisecond column, and the exact ISO text as recorded. */
function tsPair(name: string, text: string | null | undefined): Record<string, string | null> {
  if (!text) return { [name]: null, [`${name}_text`]: null };
  const p = parseTimestamp(text);
  return { [name]: p.ok ? formatMicros(p.value) : null, [`${name}_text`]: text };
}

/**
 * Reads every break of the store and returns the rows of `breaks` and `break_events` for run
 * `runId` (sorted by break id, then version). Ages and SLAs use `config` and the control
 * definitions (pass all of them, not only the run's selection). Throws what the store throws.
 */
export async function breakOutputRows(
  store: Pick<ObjectStore, 'get' | 'list'>,
  args: { readonly runId: string; readonly config: Config; readonly controls: readonly ControlDefinition[] },
): Promise<BreakOutputRows> {
  const records = await new BreakStore(store).readAll();
  const breaks: OutputRow[] = [];
  const events: OutputRow[] = [];
  for (const rec of records) {
    breaks.push(breakRow(args.runId, summarizeBreak(rec, { config: args.config, controls: args.controls })));
    for (const e of rec.events) events.push(eventRow(args.runId, e));
  }
  return { breaks, break_events: events };
}

const str = (v: number | boolean | null) => (v === null ? null : String(v));

/** The `breaks` row of one break, as of run `runId`. */
function breakRow(runId: string, s: BreakSummary): OutputRow {
  return {
    run_id: runId, break_id: s.break_id, control_id: s.control_id, kind: s.kind, key: s.key, state: s.state, version: String(s.version),
    owner: s.owner, owner_assigned: String(s.owner_assigned), classification: s.classification,
    ...tsPair('opened_at', s.opened_at), ...tsPair('state_since', s.state_since), reopen_count: String(s.reopen_count),
    ...tsPair('window_start', s.window?.start), ...tsPair('window_end', s.window?.end), ...tsPair('first_record_time', s.first_record_time), ...tsPair('as_of', s.as_of),
    age_s: s.age_s, age_s_text: s.age_s, sla_s: str(s.sla_s), sla_breached: str(s.sla_breached),
    observation_count: String(s.observation_count), last_observed_run_id: s.last_observed_run_id, last_disposition: s.last_disposition,
  };
}

/** The `break_events` row of one event, in the snapshot of run `runId`. */
function eventRow(runId: string, e: BreakEvent): OutputRow {
  const ev = e.evidence;
  return {
    run_id: runId, break_id: e.break_id, version: String(e.version), expected_version: String(e.expected_version), control_id: e.control_id,
    kind: e.kind, key: e.key, from_state: e.from_state, to_state: e.to_state, actor: e.actor, ...tsPair('event_at', e.at),
    owner: ev.owner ?? null, classification: ev.classification ?? null, approver: ev.approver ?? null, note: ev.note ?? null,
    evidence_ref: ev.evidence_ref ?? null, reason: ev.reason ?? null, root_cause: ev.root_cause ?? null, prevention: ev.prevention ?? null,
    event_run_id: ev.run_id ?? e.run_id ?? null, manifest_sha256: ev.manifest_sha256 ?? null,
    ...tsPair('window_start', e.window?.start), ...tsPair('window_end', e.window?.end), ...tsPair('record_time', e.record_time), evidence_json: canonicalJson(ev),
  };
}
