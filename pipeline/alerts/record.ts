/**
 * The delivery record of a run's alerts (docs/alerts.md): one write-once object per run,
 * `alerts/<run_id>.json` in the store, written after the alerts were sent (or found unroutable,
 * or not sent because alerts were off or only a dry run). It holds no secret: routes appear by
 * name, format and scheme-and-host target only. `reckon runs` shows it beside each run.
 */
import { z } from '../core/zod.js';
import { canonicalJson } from '../core/canonical.js';
import { AlreadyExistsError, type ObjectStore } from '../store/object-store.js';
import type { AlertMode, Delivery, DeliveryStatus } from './deliver.js';

export type { AlertMode } from './deliver.js';


/** Counts of a record's deliveries by status. */
export type DeliveryCounts = Readonly<Record<DeliveryStatus, number>>;

/** The record of one run's alerts. */
export interface DeliveryRecord {
  readonly schema: 'reckon.alert-delivery/v1';
  readonly run_id: string;
  readonly mode: AlertMode;
  readonly recorded_at: string;
  readonly counts: DeliveryCounts;
  readonly deliveries: readonly Delivery[];
}

/** The store key of a run's delivery record. */
export const deliveryRecordKey = (runId: string) => `alerts/${runId}.json`;

/**
 * The store key a run rolling `runId` forward writes once before sending `runId`'s alerts: two runs
 * rolling the same run forward at once would otherwise both find no record and both page.
 */
export const rollForwardClaimKey = (runId: string) => `alerts/${runId}.roll-forward.json`;

/**
 * Claims the sending of `runId`'s alerts for the run `by`: true when this call wrote the claim,
 * false when another run had (AlreadyExistsError); other store errors are thrown.
 */
export async function claimRolledForwardAlerts(store: ObjectStore, runId: string, by: string, now: Date): Promise<boolean> {
  try {
    await store.putOnce(rollForwardClaimKey(runId), canonicalJson({ schema: 'reckon.alert-roll-forward/v1', run_id: runId, sent_by: by, claimed_at: now.toISOString() }));
    return true;
  } catch (e) {
    if (e instanceof AlreadyExistsError) return false;
    throw e;
  }
}

/**
 * The store key a run writes when it rolls `runId` forward without sending (`--no-alerts`,
 * `--alerts-dry-run`): `runId`'s alerts stay pending, and the next run that sends alerts sends
 * them (a folder of its own, so a run lists only these, not every delivery record).
 */
export const pendingAlertsKey = (runId: string) => `alerts/pending/${runId}.json`;

/** Marks `runId`'s alerts pending (write-once; a marker already there is fine: it says the same). */
export async function markAlertsPending(store: ObjectStore, runId: string, by: string, mode: AlertMode, now: Date): Promise<string> {
  const key = pendingAlertsKey(runId);
  try {
    await store.putOnce(key, canonicalJson({ schema: 'reckon.alert-pending/v1', run_id: runId, rolled_forward_by: by, mode, marked_at: now.toISOString() }));
  } catch (e) {
    if (!(e instanceof AlreadyExistsError)) throw e;
  }
  return key;
}

/** The pending alerts of a store: the runs to send for, those a run claimed and never recorded, and the markers that are not what they claim. */
export interface PendingAlerts {
  readonly runs: readonly string[];
  /** Claimed (`<run>.roll-forward.json`) by a run that wrote no record: it stopped while sending; no run sends them now. */
  readonly claimed: readonly { readonly run_id: string; readonly by: string }[];
  readonly invalid: readonly { readonly key: string; readonly why: string }[];
}

/**
 * The runs whose alerts are pending (a marker, no delivery record and no claim yet), in run id
 * order; a marker whose alerts a run claimed but never recorded is listed as claimed (that run
 * stopped while sending: some pages may have gone); one that is not JSON of
 * `reckon.alert-pending/v1` naming its own run is listed as invalid, never acted on. One listing of
 * `alerts/pending/`, then a few reads per marker.
 */
export async function pendingAlertRuns(store: ObjectStore): Promise<PendingAlerts> {
  const runs: string[] = [];
  const claimed: { run_id: string; by: string }[] = [];
  const invalid: { key: string; why: string }[] = [];
  for (const key of await store.list('alerts/pending')) {
    const id = /^alerts\/pending\/([^/]+)\.json$/.exec(key)?.[1];
    const doc = await readJson(store, key) as { schema?: unknown; run_id?: unknown } | undefined;
    if (!id || doc?.schema !== 'reckon.alert-pending/v1' || doc.run_id !== id) { invalid.push({ key, why: 'it is not a reckon.alert-pending/v1 marker naming its own run' }); continue; }
    const record = await readDeliveryRecord(store, id);
    if (record && isInvalidRecord(record)) invalid.push({ key, why: `${record.key} is there but is not a delivery record (${record.invalid}), so its alerts are not sent over it: restore or remove it by hand` });
    if (record) continue;
    const claim = await readJson(store, rollForwardClaimKey(id)) as { sent_by?: unknown } | undefined;
    if (claim) claimed.push({ run_id: id, by: String(claim.sent_by) });
    else runs.push(id);
  }
  return { runs: runs.sort(), claimed, invalid };
}

/** The JSON document at `key`; undefined when absent or not JSON. */
async function readJson(store: ObjectStore, key: string): Promise<unknown> {
  try { return JSON.parse((await store.get(key))?.toString('utf8') ?? 'null') ?? undefined; } catch { return undefined; }
}

/** Counts of `deliveries` by status. */
export function countDeliveries(deliveries: readonly Delivery[]): DeliveryCounts {
  const c: Record<DeliveryStatus, number> = { sent: 0, failed: 0, unrouted: 0, not_attempted: 0, dry_run: 0 };
  for (const d of deliveries) c[d.status] += 1;
  return c;
}

/** Builds the record of a run's deliveries. */
export function deliveryRecord(runId: string, mode: AlertMode, deliveries: readonly Delivery[], now: Date): DeliveryRecord {
  return { schema: 'reckon.alert-delivery/v1', run_id: runId, mode, recorded_at: now.toISOString(), counts: countDeliveries(deliveries), deliveries };
}

/** Writes the record once (a second write of the same run fails with AlreadyExistsError). */
export async function writeDeliveryRecord(store: ObjectStore, record: DeliveryRecord): Promise<string> {
  const key = deliveryRecordKey(record.run_id);
  await store.putOnce(key, canonicalJson(record));
  return key;
}

const STATUS = z.enum(['sent', 'failed', 'unrouted', 'not_attempted', 'dry_run']);
const text = z.string().nullable();
const RECORD = z.strictObject({
  schema: z.literal('reckon.alert-delivery/v1'),
  run_id: z.string(),
  mode: z.enum(['send', 'dry-run', 'off']),
  recorded_at: z.string(),
  counts: z.strictObject({ sent: z.number().int().min(0), failed: z.number().int().min(0), unrouted: z.number().int().min(0), not_attempted: z.number().int().min(0), dry_run: z.number().int().min(0) }),
  deliveries: z.array(z.strictObject({
    event: z.string(), break_id: z.string(), control_id: z.string(), kind: z.string(), key: z.string(), owner: z.string(),
    route: text, format: text, target: text, status: STATUS, reason: text,
    attempts: z.array(z.strictObject({ at: z.string(), ms: z.number(), http_status: z.number().int().nullable(), error: text })),
  })),
});

/** A delivery record that is there but is not one: what is wrong with it, for people. */
export interface InvalidDeliveryRecord {
  readonly key: string;
  readonly invalid: string;
}

/**
 * The record of `runId`; undefined when the run wrote none (a run before alerts existed, or one
 * that stopped before); InvalidDeliveryRecord when the object does not parse as a record of that
 * run with counts that match its deliveries. The record is written after the manifest, so no
 * manifest vouches for it: it is checked here rather than trusted.
 */
export async function readDeliveryRecord(store: ObjectStore, runId: string): Promise<DeliveryRecord | InvalidDeliveryRecord | undefined> {
  const key = deliveryRecordKey(runId);
  const body = await store.get(key);
  if (!body) return undefined;
  let doc: unknown;
  try { doc = JSON.parse(body.toString('utf8')); } catch { return { key, invalid: 'it is not JSON' }; }
  const parsed = RECORD.safeParse(doc);
  if (!parsed.success) return { key, invalid: parsed.error.issues.slice(0, 3).map((i) => `${i.path.join('.') || '(top)'}: ${i.message}`).join('; ') };
  const r = parsed.data as DeliveryRecord;
  if (r.run_id !== runId) return { key, invalid: `it names run ${r.run_id}` };
  if (canonicalJson(r.counts) !== canonicalJson(countDeliveries(r.deliveries))) return { key, invalid: 'its counts do not match its deliveries' };
  return r;
}

/** True when `r` is a record that failed its checks. */
export const isInvalidRecord = (r: DeliveryRecord | InvalidDeliveryRecord): r is InvalidDeliveryRecord => 'invalid' in r;

/** `3 sent, 1 failed, 2 unrouted` (only the statuses present), or `none` for an empty record; `off` when alerts were off. */
export function deliveryLine(r: DeliveryRecord): string {
  if (r.mode === 'off') return 'off';
  const parts = (Object.entries(r.counts) as [DeliveryStatus, number][]).filter(([, n]) => n > 0).map(([s, n]) => `${n} ${s.replace('_', ' ')}`);
  return `${r.mode === 'dry-run' ? 'dry run: ' : ''}${parts.join(', ') || 'none to send'}`;
}
