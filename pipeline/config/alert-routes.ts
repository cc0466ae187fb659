/**
 * The alert routes of a configuration made ready to send (docs/alerts.md): each route's URL and,
 * for PagerDuty, routing key, taken from the file or from the environment variables it names.
 * Pure: the command line passes the environment it was given (cli/io.ts), so evaluation never
 * reads it. What people see of a route is its name, format and `target` (scheme and host only).
 */
import { ConfigError } from '../core/errors.js';
import { redactUrl } from '../core/redact.js';
import type { AlertFormat, AlertsConfig } from './alerts-config.js';

/** PagerDuty's Events API v2 endpoint, for a pagerduty route without its own url. */
export const PAGERDUTY_EVENTS_URL = 'https://events.pagerduty.com/v2/enqueue';

/** A route ready to send to. `url`, `routingKey` and `headers` are secrets: never print them. */
export interface ResolvedRoute {
  readonly name: string;
  readonly format: AlertFormat;
  readonly url: string;
  readonly routingKey: string | null;
  readonly headers: Readonly<Record<string, string>>;
  /** What may be shown: `https://hooks.slack.com/…`. */
  readonly target: string;
}

/**
 * Resolves every route of `alerts` against `env`. Throws one ConfigError (exit 2) naming every
 * environment variable a route names that is unset or empty, and every URL that does not parse.
 */
export function resolveAlertRoutes(alerts: AlertsConfig, env: Readonly<Record<string, string | undefined>>): ReadonlyMap<string, ResolvedRoute> {
  const problems: string[] = [];
  const fromEnv = (route: string, field: string, name: string | undefined): string | undefined => {
    if (name === undefined) return undefined;
    const v = env[name];
    if (v === undefined || v === '') problems.push(`alerts.routes.${route}.${field}: the environment variable ${name} is not set`);
    return v || undefined;
  };
  const out = new Map<string, ResolvedRoute>();
  for (const [name, r] of Object.entries(alerts.routes)) {
    const url = r.url ?? fromEnv(name, 'url_env', r.url_env) ?? (r.format === 'pagerduty' && r.url_env === undefined ? PAGERDUTY_EVENTS_URL : undefined);
    const routingKey = r.routing_key ?? fromEnv(name, 'routing_key_env', r.routing_key_env) ?? null;
    if (url === undefined) continue;
    if (!/^https?:\/\/[^\s]+$/.test(url) || !URL.canParse(url)) { problems.push(`alerts.routes.${name}: the URL is not an http(s) URL (${redactUrl(url)})`); continue; }
    out.set(name, { name, format: r.format, url, routingKey, headers: r.headers ?? {}, target: redactUrl(url) });
  }
  if (problems.length) throw new ConfigError(`alert routes cannot be used:\n  ${problems.join('\n  ')}`);
  return out;
}

/** Every secret of the routes (URLs, routing keys, header values), for scrubbing text before it is shown or recorded. */
export function routeSecrets(routes: ReadonlyMap<string, ResolvedRoute>): string[] {
  return [...routes.values()].flatMap((r) => [r.url, ...(r.routingKey ? [r.routingKey] : []), ...Object.values(r.headers)]);
}
