/**
 * Phase 8, alerts (docs/alerts.md), after the manifest is published and the run's break objects
 * (its automatic verifications among them) are written: the breaks the run opened, reopened or
 * saw cross their SLA go to their owners' routes, VERIFIED ones are resolved, and the outcome is
 * written once as the run's delivery record. Nothing here changes the run's result, manifest or
 * exit code: a failed delivery, an unreachable receiver or a store that refuses the record is
 * logged and reported, never thrown.
 */
import { routeSecrets } from '../config/alert-routes.js';
import type { RunLogger } from '../core/log.js';
import { scrub } from '../core/redact.js';
import { BreakStore, type BreakObservation } from '../breaks/break-store.js';
import type { BreakOutcome, VerifiedOutcome } from '../breaks/run-breaks.js';
import { provenManifest } from '../publish/manifest-chain.js';
import type { ObjectStore } from '../store/object-store.js';
import { deliverAlerts, type AlertRequest, type Delivery } from '../alerts/deliver.js';
import { alertBody, type AlertRun } from '../alerts/formats.js';
import { pastSlaCandidates, planAlerts } from '../alerts/plan.js';
import { claimRolledForwardAlerts, countDeliveries, deliveryRecord, isInvalidRecord, markAlertsPending, pendingAlertRuns, pendingAlertsKey, readDeliveryRecord, rollForwardClaimKey, writeDeliveryRecord, type AlertMode, type PendingAlerts, type DeliveryCounts } from '../alerts/record.js';
import type { RunContext, RunRequest, SettledResults } from './context.js';

export type { AlertRequest } from '../alerts/deliver.js';
import type { Published } from './phase-publish.js';

/** A dry run's view of one request: where it would go and its body (secrets replaced by `[redacted]`). */
export interface AlertPreview {
  readonly route: string;
  readonly format: string;
  readonly target: string;
  readonly body: unknown;
}

/** What the run did about alerts, for the summary and `--json`. */
export interface AlertOutcome {
  readonly mode: AlertMode;
  readonly record: string | null;
  readonly counts: DeliveryCounts;
  readonly deliveries: readonly Delivery[];
  readonly previews: readonly AlertPreview[];
  /** Set when alerting itself went wrong (never a reason to fail the run). */
  readonly error: string | null;
}

/** Plans, sends (or previews) and records the run's alerts; never throws. */
export async function sendAlerts(ctx: RunContext, settled: SettledResults, published: Published, verified: readonly VerifiedOutcome[]): Promise<AlertOutcome> {
  const request: AlertRequest = ctx.req.alerts ?? { mode: 'off', routes: new Map() };
  const secrets = routeSecrets(request.routes);
  let deliveries: Delivery[] = [];
  let previews: AlertPreview[] = [];
  let error: string | null = null;
  try {
    if (request.mode !== 'off') ({ deliveries, previews } = await deliver(ctx, settled, published, verified, request));
  } catch (e) {
    error = scrub(`alerts not sent: ${(e as Error)?.message ?? String(e)}`, secrets);
    ctx.logger.warn(error, { phase: 'alerts' });
  }
  let record: string | null = null;
  try {
    record = await writeDeliveryRecord(ctx.store, deliveryRecord(ctx.runId, request.mode, deliveries, new Date()));
  } catch (e) {
    const msg = scrub(`the alert delivery record could not be written: ${(e as Error)?.message ?? String(e)}`, secrets);
    error ??= msg;
    ctx.logger.warn(msg, { phase: 'alerts' });
  }
  const counts = countDeliveries(deliveries);
  if (counts.failed || counts.not_attempted) ctx.logger.warn(`alerts: ${counts.failed} failed, ${counts.not_attempted} not attempted (see reckon runs)`, { phase: 'alerts', ...counts });
  else if (deliveries.length) ctx.logger.info(`alerts: ${counts.sent} sent, ${counts.unrouted} unrouted${counts.dry_run ? `, ${counts.dry_run} dry run` : ''}`, { phase: 'alerts', ...counts });
  return { mode: request.mode, record, counts, deliveries, previews, error };
}

async function deliver(ctx: RunContext, settled: SettledResults, published: Published, verified: readonly VerifiedOutcome[], request: AlertRequest) {
  const { req } = ctx;
  const bs = new BreakStore(ctx.store);
  const observations = new Map<string, readonly BreakObservation[]>();
  for (const b of pastSlaCandidates(settled.breaks)) observations.set(b.break_id, await bs.observations(b.break_id));
  const verifiedLogs = verified.map((v) => ({ break_id: v.break_id, control_id: v.control_id, kind: v.kind, key: v.key, version: v.event.version }));
  const planned = planAlerts({
    results: settled.results, breaks: settled.breaks, verified: verifiedLogs, observations, runId: ctx.runId,
    config: req.config.config, controls: req.controls.all, routes: request.routes,
  }, req.config.config.alerts);
  const run: AlertRun = { run_id: ctx.runId, window: { start: req.window.start, end: req.window.end }, manifest: { key: published.key, sha256: published.sha256 }, store: req.store };
  const dryRun = request.mode === 'dry-run';
  const deliveries = await deliverAlerts(planned, request.routes, req.config.config.alerts, run, { dryRun, deps: request.deps });
  const now = new Date();
  const previews = dryRun ? planned.flatMap((a) => {
    const route = a.route === null ? undefined : request.routes.get(a.route);
    return route ? [{ route: route.name, format: route.format, target: route.target, body: alertBody(route.format, a, run, now, '[redacted]') }] : [];
  }) : [];
  return { deliveries, previews };
}

/** How a run came to send another run's alerts: it rolled that run forward, or found them pending. */
export type CarriedAlerts = 'rolled' | 'pending';

/**
 * The alerts of run `runId`, which stopped after publishing its manifest, before its alerts: the
 * breaks it opened or reopened, from its manifest (proven by its `.sha256`), go to this run's
 * routes and are written as `runId`'s delivery record — when this run sends alerts and has a route
 * for at least one of them. Otherwise (`--no-alerts`, `--alerts-dry-run`, or no route for any) it
 * sends nothing and writes no record: it marks them pending (`alerts/pending/<runId>.json`) for the
 * next run that can send them (sendPendingAlerts). A stopped run with no alert to send is recorded
 * as such. `carried` says whether this run has just rolled `runId` forward or found its alerts
 * pending. Nothing when `runId` has a record already, or another run claimed its alerts first (two
 * rolling it forward at once: record.ts claimRolledForwardAlerts; `by` is this run's id). Its SLA
 * crossings and resolutions are not sent (docs/alerts.md). Never throws: a failure is logged.
 */
export async function sendRolledForwardAlerts(req: RunRequest, store: ObjectStore, logger: RunLogger, runId: string, by: string, carried: CarriedAlerts = 'rolled'): Promise<void> {
  const request: AlertRequest = req.alerts ?? { mode: 'off', routes: new Map() };
  const what = `alerts of run ${runId}, ${carried === 'rolled' ? 'rolled forward by this run (it stopped before its alerts)' : 'pending since an earlier run rolled it forward without sending them'}`;
  try {
    const found = await provenManifest(store, runId);
    if (!found) {
      if (carried === 'pending') logger.warn(`${pendingAlertsKey(runId)} is ignored: no published manifest of run ${runId}; nothing is sent on its word`, { phase: 'alerts' });
      return;
    }
    const record = await readDeliveryRecord(store, runId);
    if (record) {
      if (isInvalidRecord(record)) logger.warn(`${what}, not sent: ${record.key} is there but is not a delivery record (${record.invalid}); nothing is sent over it: restore or remove it by hand`, { phase: 'alerts' });
      return;
    }
    const carry = await carriedAlerts(req, store, request, found, runId);
    if (carry.planned.length > 0 && (request.mode !== 'send' || carry.planned.every((a) => a.route === null))) {
      const c = countDeliveries(request.mode === 'dry-run' ? await carry.deliver() : []);
      const key = await markAlertsPending(store, runId, by, request.mode, new Date());
      const counted = request.mode === 'off' ? 'none sent (alerts are off for this run)' : request.mode === 'dry-run' ? `${c.dry_run} dry run, none sent` : `none sent (this run has no route for any of the ${carry.planned.length})`;
      logger.warn(`${what}: ${counted}; they stay pending for the next run that sends alerts (${key})`, { phase: 'alerts', ...c });
      return;
    }
    if (!(await claimRolledForwardAlerts(store, runId, by, new Date()))) {
      logger.info(`alerts of run ${runId}: claimed by another run rolling it forward (${rollForwardClaimKey(runId)}); not sent by this one`, { phase: 'alerts' });
      return;
    }
    const deliveries = request.mode === 'send' ? await carry.deliver() : [];
    await writeDeliveryRecord(store, deliveryRecord(runId, request.mode, deliveries, new Date()));
    const c = countDeliveries(deliveries);
    logger.warn(`${what}: ${c.sent} sent, ${c.unrouted} unrouted, ${c.failed} failed`, { phase: 'alerts', ...c });
  } catch (e) {
    logger.warn(scrub(`${what}, not sent: ${(e as Error)?.message ?? String(e)}`, routeSecrets(request.routes)), { phase: 'alerts' });
  }
}

/** The opened and reopened alerts of the stopped run `runId` whose break is not VERIFIED or CLOSED by now, planned for `request`'s routes, and how to deliver them in its mode. */
async function carriedAlerts(req: RunRequest, store: ObjectStore, request: AlertRequest, found: NonNullable<Awaited<ReturnType<typeof provenManifest>>>, runId: string) {
  const m = found.manifest;
  const opened = (m.breaks as unknown as BreakOutcome[]).filter((b) => b.disposition === 'OPENED' || b.disposition === 'REOPENED');
  // A break verified or closed since (a later run no longer saw it) is not paged as new.
  const bs = new BreakStore(store);
  const states = await Promise.all(opened.map(async (b) => (await bs.readLog(b.break_id))?.state));
  const breaks = opened.filter((_, i) => states[i] !== 'VERIFIED' && states[i] !== 'CLOSED');
  const planned = planAlerts({ results: m.results, breaks, verified: [], observations: new Map(), runId, config: req.config.config, controls: req.controls.all, routes: request.routes }, req.config.config.alerts);
  const run: AlertRun = { run_id: runId, window: m.window, manifest: { key: found.key, sha256: found.sha256 }, store: req.store };
  return { planned, deliver: () => deliverAlerts(planned, request.routes, req.config.config.alerts, run, { dryRun: request.mode === 'dry-run', deps: request.deps }) };
}

/**
 * Sends the alerts a non-sending roll-forward left pending (sendRolledForwardAlerts), when this
 * run sends alerts: one listing of `alerts/pending/`, then each run without a record yet. Never throws.
 */
export async function sendPendingAlerts(req: RunRequest, store: ObjectStore, logger: RunLogger, by: string): Promise<void> {
  if (req.alerts?.mode !== 'send') return;
  let pending: PendingAlerts;
  try { pending = await pendingAlertRuns(store); } catch (e) {
    logger.warn(`pending alerts of earlier runs not read: ${(e as Error)?.message ?? String(e)}`, { phase: 'alerts' });
    return;
  }
  for (const m of pending.invalid) logger.warn(`${m.key} is ignored: ${m.why}; nothing is sent on its word`, { phase: 'alerts' });
  for (const c of pending.claimed) logger.info(`alerts of run ${c.run_id}: claimed by run ${c.by}, which recorded nothing (it stopped while sending); not sent again: page by hand`, { phase: 'alerts' });
  for (const runId of pending.runs) await sendRolledForwardAlerts(req, store, logger, runId, by, 'pending');
}
