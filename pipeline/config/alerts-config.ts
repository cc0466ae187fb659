/**
 * Where alerts go (docs/alerts.md): the `alerts` part of the configuration. A route is one
 * receiver in one of four ready formats — a generic webhook (reckon's own JSON body), a Slack
 * incoming webhook, the PagerDuty Events API v2 or Alertmanager's `/api/v2/alerts` — and the
 * owners of the control definitions name routes (`route`). Route URLs and routing keys are secrets
 * (a Slack webhook's path, a PagerDuty routing key): give them in the file or name an environment
 * variable that holds them (`url_env`, `routing_key_env`), which the command line resolves
 * (alert-routes.ts). Delivery is bounded: `attempts` per alert with full-jitter backoff between
 * `backoff_base_ms` and `backoff_cap_ms`, `timeout_ms` per request, `deadline_ms` for all of a
 * run's alerts, at most `max_per_route` alerts per route and run (the rest in one summary alert).
 */
import { z } from '../core/zod.js';
import { ROUTE_NAME } from '../controls/definitions.js';

/** The ready formats of a route. */
export const ALERT_FORMATS = ['webhook', 'slack', 'pagerduty', 'alertmanager'] as const;
export type AlertFormat = (typeof ALERT_FORMATS)[number];

const ENV_NAME = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name');
const HTTP_URL = z.string().regex(/^https?:\/\/[^\s/]+/, 'must be an http:// or https:// URL');

const RouteConfig = z.object({
  format: z.enum(ALERT_FORMATS),
  url: HTTP_URL.optional(),
  url_env: ENV_NAME.optional(),
  /** PagerDuty only: the integration's routing key (a secret). */
  routing_key: z.string().min(1).optional(),
  routing_key_env: ENV_NAME.optional(),
  /** Extra request headers (an Authorization token, say): sent, never printed. */
  headers: z.record(z.string().regex(/^[A-Za-z0-9-]+$/), z.string()).optional(),
}).strict().superRefine((r, ctx) => {
  const urls = Number(r.url !== undefined) + Number(r.url_env !== undefined);
  // PagerDuty has one public endpoint; the others need theirs.
  if (urls > 1 || (urls === 0 && r.format !== 'pagerduty')) ctx.addIssue({ code: 'custom', path: ['url'], message: `give exactly one of url or url_env${r.format === 'pagerduty' ? ' (or neither: the PagerDuty Events API v2)' : ''}` });
  const keys = Number(r.routing_key !== undefined) + Number(r.routing_key_env !== undefined);
  if (r.format === 'pagerduty' && keys !== 1) ctx.addIssue({ code: 'custom', path: ['routing_key'], message: 'a pagerduty route needs exactly one of routing_key or routing_key_env' });
  if (r.format !== 'pagerduty' && keys > 0) ctx.addIssue({ code: 'custom', path: ['routing_key'], message: 'only a pagerduty route takes a routing key' });
});
export type RouteConfig = z.infer<typeof RouteConfig>;

const ms = (min: number, max: number, dflt: number) => z.number().int().min(min).max(max).default(dflt);

/** The `alerts` section: routes by name and the delivery bounds (defaults in brackets in docs/alerts.md). */
export const AlertsConfig = z.object({
  routes: z.record(z.string().regex(ROUTE_NAME), RouteConfig).default({}),
  /** The route for owners whose own route is not configured; none: their alerts are recorded as unrouted. */
  default_route: z.string().regex(ROUTE_NAME).optional(),
  attempts: ms(1, 10, 4),
  backoff_base_ms: ms(1, 60_000, 200),
  backoff_cap_ms: ms(1, 300_000, 5_000),
  timeout_ms: ms(100, 120_000, 5_000),
  deadline_ms: ms(100, 3_600_000, 30_000),
  max_per_route: ms(1, 10_000, 50),
}).strict();
export type AlertsConfig = z.infer<typeof AlertsConfig>;
