/**
 * `reckon runs [--store DIR|s3://…] [--window START/END] [--json]`: the published runs of a store,
 * in chain order, with window, trigger, lineage, status per control and manifest digest, so that
 * run ids for `report`, `evidence pack`, `--rerun-of` and `--evidence-ref` are easy to find, and
 * what became of each run's alerts (its delivery record, docs/alerts.md): sent, failed, unrouted,
 * or pending (a run stopped before its alerts, rolled forward by a run that did not send them).
 */
import { existsSync } from 'node:fs';
import { ConfigError } from '../core/errors.js';
import { deliveryLine, isInvalidRecord, pendingAlertRuns, pendingAlertsKey, readDeliveryRecord, type DeliveryRecord, type InvalidDeliveryRecord } from '../alerts/record.js';
import { listManifests } from '../store/manifests.js';
import { pendingRollForwards } from '../publish/staging.js';
import { ownerAlive } from '../run/recovery.js';
import { openStore } from '../store/open-store.js';
import { windowForRange } from '../contract/window.js';
import { parse } from './args.js';
import { localOrRemote, printJson } from './io.js';
import type { CommandContext } from './command.js';

/** Runs `reckon runs` with `argv` (after the subcommand); returns 0. */
export async function command(argv: string[], { io }: CommandContext): Promise<number> {
  const { values } = parse(argv, { store: { type: 'string' }, window: { type: 'string' }, json: { type: 'boolean' } });
  const location = values.store ?? 'var/reckon';
  if (!location.startsWith('s3://') && !existsSync(localOrRemote(io, location))) throw new ConfigError(`--store ${location}: no store there`);
  const store = await openStore(localOrRemote(io, location));
  const w = values.window ? windowForRange(values.window) : undefined;
  const manifests = (await listManifests(store)).filter((m) => !w || (m.manifest.window.start === w.start && m.manifest.window.end === w.end));
  const records = await Promise.all(manifests.map((m) => readDeliveryRecord(store, m.manifest.run_id)));
  const carried = await pendingAlertRuns(store);
  const pending = new Set(carried.runs);
  const claimed = new Map(carried.claimed.map((c) => [c.run_id, c.by]));
  const unfinished = new Set((await pendingRollForwards(store)).map((p) => p.run_id));
  const alive = new Set((await Promise.all([...unfinished].map(async (id) => ((await ownerAlive(store, id)) ? id : null)))).filter((id): id is string => id !== null));
  const rows = manifests
    .map((m, i) => ({
      sequence: m.manifest.chain.sequence, run_id: m.manifest.run_id, window: m.manifest.window, trigger: m.manifest.trigger,
      parent_run_id: m.manifest.parent_run_id, reason: m.manifest.reason, started_at: m.manifest.started_at,
      statuses: Object.fromEntries(m.manifest.results.map((r) => [r.control_id, r.status])),
      results_digest: m.manifest.results_digest, manifest: { key: m.key, sha256: m.sha256 }, publication_unfinished: unfinished.has(m.manifest.run_id),
      alerts: pending.has(m.manifest.run_id) ? { pending: pendingAlertsKey(m.manifest.run_id) } : claimed.has(m.manifest.run_id) ? { claimed_by: claimed.get(m.manifest.run_id)!, record: null } : alertsOf(records[i]),
    }));
  if (values.json) printJson(io, rows);
  else if (rows.length === 0) io.stdout('no published runs\n');
  else for (const r of rows) {
    const st = Object.entries(r.statuses).map(([c, s]) => `${c}:${s}`).join(' ');
    const rec = records[rows.indexOf(r)];
    const alerts = pending.has(r.run_id) ? '  alerts: pending (rolled forward by a run that did not send them; the next run that sends alerts does)'
      : claimed.has(r.run_id) ? `  alerts: claimed by run ${claimed.get(r.run_id)}, which stopped before recording them: some may have been sent, none will be now; page by hand (reckon breaks list --store …)` : !rec ? '' : isInvalidRecord(rec) ? `  alerts: record ${rec.key} is not a delivery record (${rec.invalid}): ignored` : `  alerts: ${deliveryLine(rec)}`;
    io.stdout(`${String(r.sequence).padStart(4)}  ${r.run_id}  [${r.window.start}, ${r.window.end})  ${r.trigger}${r.parent_run_id ? ` rerun-of ${r.parent_run_id}` : ''}  ${st}${alerts}\n`);
    if (alive.has(r.run_id)) io.stdout('        publication in progress: the run is still going (it writes its outputs and break objects itself)\n');
    else if (unfinished.has(r.run_id)) io.stdout('        publication unfinished: its outputs and break objects are not all written yet; the next run on this store writes them (reckon run again)\n');
    const failed = rec && !isInvalidRecord(rec) ? undeliveredOf(rec) : [];
    for (const d of failed) {
      const last = d.attempts.at(-1);
      io.stdout(`        alert ${d.status.replace('_', ' ')}: ${d.event} ${d.break_id} to ${d.route} (${d.target ?? '?'}): ${d.reason ?? ''}${last ? `; last: ${last.error ?? `HTTP ${last.http_status}`}` : ''}\n`);
    }
  }
  return 0;
}

/** A run's alerts as `--json` shows them: its record's counts and the deliveries that did not go, or what is wrong with the record. */
function alertsOf(rec: DeliveryRecord | InvalidDeliveryRecord | undefined) {
  if (!rec) return null;
  if (isInvalidRecord(rec)) return { record: rec.key, invalid: rec.invalid };
  return { mode: rec.mode, counts: rec.counts, record: `alerts/${rec.run_id}.json`, failed: undeliveredOf(rec) };
}

const undeliveredOf = (rec: DeliveryRecord) => rec.deliveries.filter((d) => d.status === 'failed' || d.status === 'not_attempted');

/** The usage of `reckon runs` (`--help`). */
export const usage = (): string => 'usage: reckon runs [--store DIR|s3://…] [--window START/END] [--json]';
