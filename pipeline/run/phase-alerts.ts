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
import { findManifest } from '../store/manifests.js';
import type { ObjectStore } from '../store/object-store.js';
import { deliverAlerts, type AlertRequest, type Delivery } from '../alerts/deliver.js';
import { alertBody, type AlertRun } from '../alerts/formats.js';
import { pastSlaCandidates, planAlerts } from '../alerts/plan.js';
import { claimRolledForwardAlerts, countDeliveries, deliveryRecord, deliveryRecordKey, writeDeliveryRecord, type AlertMode, type DeliveryCounts } from '../alerts/record.js';
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

/**
 * The alerts of run `runId`, which this run has just rolled forward (it stopped after publishing
 * its manifest, before its alerts): the breaks it opened or reopened, from its manifest, go to
 * this run's routes in this run's mode (`--no-alerts` records that none was sent), written as
 * `runId`'s delivery record. Nothing when `runId` has a record already, or another run (two
 * rolling it forward at once) claimed its alerts first (record.ts claimRolledForwardAlerts; `by` is
 * this run's id). Its SLA crossings and resolutions are not sent (docs/alerts.md). Never throws:
 * a failure is logged.
 */
export async function sendRolledForwardAlerts(req: RunRequest, store: ObjectStore, logger: RunLogger, runId: string, by: string): Promise<void> {
  const request: AlertRequest = req.alerts ?? { mode: 'off', routes: new Map() };
  const secrets = routeSecrets(request.routes);
  try {
    const found = await findManifest(store, runId);
    if (!found || await store.get(deliveryRecordKey(runId))) return;
    if (!(await claimRolledForwardAlerts(store, runId, by, new Date()))) {
      logger.info(`alerts of run ${runId}: another run rolling it forward sends them`, { phase: 'alerts' });
      return;
    }
    const m = found.manifest;
    let deliveries: Delivery[] = [];
    if (request.mode !== 'off') {
      const breaks = (m.breaks as unknown as BreakOutcome[]).filter((b) => b.disposition === 'OPENED' || b.disposition === 'REOPENED');
      const planned = planAlerts({ results: m.results, breaks, verified: [], observations: new Map(), runId, config: req.config.config, controls: req.controls.all, routes: request.routes }, req.config.config.alerts);
      const run: AlertRun = { run_id: runId, window: m.window, manifest: { key: found.key, sha256: found.sha256 }, store: req.store };
      deliveries = await deliverAlerts(planned, request.routes, req.config.config.alerts, run, { dryRun: request.mode === 'dry-run', deps: request.deps });
    }
    await writeDeliveryRecord(store, deliveryRecord(runId, request.mode, deliveries, new Date()));
    const c = countDeliveries(deliveries);
    const counted = request.mode === 'off' ? 'none sent (alerts are off for this run)' : `${c.sent} sent, ${c.unrouted} unrouted, ${c.failed} failed${c.dry_run ? `, ${c.dry_run} dry run` : ''}`;
    logger.warn(`alerts of run ${runId}, rolled forward by this run (it stopped before its alerts): ${counted}`, { phase: 'alerts', ...c });
  } catch (e) {
    logger.warn(scrub(`alerts of run ${runId}, rolled forward by this run, not sent: ${(e as Error)?.message ?? String(e)}`, secrets), { phase: 'alerts' });
  }
}
