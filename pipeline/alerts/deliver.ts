/**
 * Sending planned alerts (docs/alerts.md): one HTTP POST of a JSON body per alert, to its route.
 * Bounded everywhere, because a receiver that fails or hangs must not hold up a run that has
 * already published: each request has a timeout, a failed one (network error, timeout, 408, 429
 * or 5xx) is tried again after a full-jitter delay up to `attempts` times, every route stops at the
 * run's deadline, and a route whose alerts failed twice in a row is not tried again in this run
 * (the rest are recorded as not attempted). Routes are sent in parallel, alerts of one route in
 * order. Nothing here throws for a delivery failure: each outcome is returned for the record.
 * Route URLs, routing keys and header values never appear in what is returned.
 */
import type { AlertsConfig } from '../config/alerts-config.js';
import type { ResolvedRoute } from '../config/alert-routes.js';
import { fullJitterDelay } from '../core/backoff.js';
import { scrub } from '../core/redact.js';
import { alertBody, type AlertRun } from './formats.js';
import type { PlannedAlert } from './plan.js';

/** How a run treats alerts: send them, print what it would send, or send none (`--no-alerts`). */
export type AlertMode = 'send' | 'dry-run' | 'off';

/** What a run asks of alerts: the mode and the routes resolved from the configuration (config/alert-routes.ts). */
export interface AlertRequest {
  readonly mode: AlertMode;
  readonly routes: ReadonlyMap<string, ResolvedRoute>;
  /** Tests only: the clock, sleep and randomness of delivery. */
  readonly deps?: Partial<DeliveryDeps>;
}

/** What became of one alert. */
export type DeliveryStatus = 'sent' | 'failed' | 'unrouted' | 'not_attempted' | 'dry_run';

/** One try: when, how long, the HTTP status (null when no answer came) and what went wrong. */
export interface DeliveryAttempt {
  readonly at: string;
  readonly ms: number;
  readonly http_status: number | null;
  readonly error: string | null;
}

/** One alert's delivery, as the run's delivery record keeps it. */
export interface Delivery {
  readonly event: PlannedAlert['event'];
  readonly break_id: string;
  readonly control_id: string;
  readonly kind: string;
  readonly key: string;
  readonly owner: string;
  readonly route: string | null;
  readonly format: string | null;
  /** The receiver as it may be shown (scheme and host). */
  readonly target: string | null;
  readonly status: DeliveryStatus;
  readonly attempts: readonly DeliveryAttempt[];
  /** Why it was not sent, for people. */
  readonly reason: string | null;
}

/** The clock, randomness, sleep and HTTP of delivery: the real ones unless a test passes its own. */
export interface DeliveryDeps {
  readonly now: () => Date;
  readonly random: () => number;
  readonly sleep: (ms: number) => Promise<void>;
  readonly fetch: typeof fetch;
}

const REAL: DeliveryDeps = { now: () => new Date(), random: Math.random, sleep: (ms) => new Promise((r) => setTimeout(r, ms)), fetch: (...a) => fetch(...a) };

/** Where a format posts: Alertmanager's API path is added to a bare `http://host:9093`. */
export function endpointOf(route: ResolvedRoute): string {
  if (route.format !== 'alertmanager') return route.url;
  const u = new URL(route.url);
  if (u.pathname === '/' || u.pathname === '') u.pathname = '/api/v2/alerts';
  return u.toString();
}

/** True for answers worth another try: no answer, 408, 429, 5xx. */
const retryable = (status: number | null) => status === null || status === 408 || status === 429 || status >= 500;

const describe = (e: unknown): string => {
  const err = e as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (err?.name === 'TimeoutError' || err?.name === 'AbortError') return 'no answer within the timeout';
  return [err?.message, err?.cause?.code ?? err?.cause?.message].filter(Boolean).join(': ') || String(e);
};

/**
 * Sends `planned` (or, with `dryRun`, records what would be sent) within `policy`'s bounds.
 * Returns one Delivery per planned alert, in plan order.
 */
export async function deliverAlerts(
  planned: readonly PlannedAlert[], routes: ReadonlyMap<string, ResolvedRoute>, policy: AlertsConfig, run: AlertRun,
  opts: { dryRun?: boolean; deps?: Partial<DeliveryDeps> } = {},
): Promise<Delivery[]> {
  const deps = { ...REAL, ...opts.deps };
  const deadline = deps.now().getTime() + policy.deadline_ms;
  const secrets = [...routes.values()].flatMap((r) => [r.url, endpointOf(r), ...(r.routingKey ? [r.routingKey] : []), ...Object.values(r.headers)]);
  const out = new Map<PlannedAlert, Delivery>();
  const byRoute = new Map<string, PlannedAlert[]>();
  for (const a of planned) {
    const route = a.route === null ? undefined : routes.get(a.route);
    if (!route) out.set(a, delivery(a, null, 'unrouted', [], `no route configured for ${a.owner.owner} (route ${a.owner.route}) and no alerts.default_route`));
    else if (opts.dryRun) out.set(a, delivery(a, route, 'dry_run', [], null));
    else byRoute.set(route.name, [...(byRoute.get(route.name) ?? []), a]);
  }
  await Promise.all([...byRoute].map(async ([name, alerts]) => {
    const route = routes.get(name)!;
    let failedInARow = 0;
    for (const a of alerts) {
      if (failedInARow >= 2) { out.set(a, delivery(a, route, 'not_attempted', [], 'the route failed twice in a row in this run')); continue; }
      if (deps.now().getTime() >= deadline) { out.set(a, delivery(a, route, 'not_attempted', [], `the run's alert deadline (${policy.deadline_ms} ms) passed`)); continue; }
      const attempts = await send(a, route, policy, run, deadline, deps, secrets);
      const ok = attempts[attempts.length - 1]?.http_status;
      const sent = ok !== undefined && ok !== null && ok >= 200 && ok < 300;
      failedInARow = sent ? 0 : failedInARow + 1;
      out.set(a, delivery(a, route, sent ? 'sent' : 'failed', attempts, sent ? null : `${attempts.length} attempt(s) failed`));
    }
  }));
  return planned.map((a) => out.get(a)!);
}

/** Tries one alert until it is accepted, the answer is final, the attempts are spent or the deadline is near. */
async function send(a: PlannedAlert, route: ResolvedRoute, policy: AlertsConfig, run: AlertRun, deadline: number, deps: DeliveryDeps, secrets: readonly string[]): Promise<DeliveryAttempt[]> {
  const attempts: DeliveryAttempt[] = [];
  for (let n = 1; n <= policy.attempts; n++) {
    const started = deps.now();
    const left = deadline - started.getTime();
    if (left <= 0) break;
    let status: number | null = null;
    let error: string | null = null;
    try {
      const body = JSON.stringify(alertBody(route.format, a, run, started, route.routingKey ?? ''));
      const res = await deps.fetch(endpointOf(route), {
        method: 'POST', headers: { 'content-type': 'application/json', 'user-agent': 'reckon-alerts', ...route.headers }, body,
        signal: AbortSignal.timeout(Math.min(policy.timeout_ms, left)), redirect: 'error',
      });
      status = res.status;
      await res.arrayBuffer().catch(() => undefined);
      if (status < 200 || status >= 300) error = `HTTP ${status}`;
    } catch (e) {
      error = describe(e);
    }
    attempts.push({ at: started.toISOString(), ms: deps.now().getTime() - started.getTime(), http_status: status, error: error === null ? null : scrub(error, secrets) });
    if (error === null || !retryable(status) || n === policy.attempts) break;
    const wait = fullJitterDelay({ baseMs: policy.backoff_base_ms, capMs: policy.backoff_cap_ms }, n, deps.random);
    if (deps.now().getTime() + wait >= deadline) break;
    await deps.sleep(wait);
  }
  return attempts;
}

function delivery(a: PlannedAlert, route: ResolvedRoute | null, status: DeliveryStatus, attempts: readonly DeliveryAttempt[], reason: string | null): Delivery {
  return {
    event: a.event, break_id: a.break_id, control_id: a.control_id, kind: a.kind, key: a.key, owner: a.owner.owner,
    route: route?.name ?? a.route, format: route?.format ?? null, target: route?.target ?? null, status, attempts, reason,
  };
}
