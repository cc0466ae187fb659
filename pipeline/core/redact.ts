/**
 * Secrets in places people read (logs, manifests, delivery records, errors, `--json`): alert
 * routes carry them in their URLs (a Slack webhook's path, a token in a query string) and headers,
 * and PagerDuty routing keys are secrets themselves. Only the scheme and host of a URL are shown.
 */

/** `https://hooks.slack.com/…` for `https://hooks.slack.com/services/T0/B0/XYZ?x=1`: scheme and host, never user, path or query. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    const more = (u.pathname !== '/' && u.pathname !== '') || u.search !== '' || u.username !== '' ? '…' : '';
    return `${u.protocol}//${u.host}/${more}`;
  } catch {
    return '(a URL that does not parse)';
  }
}

/** `text` with every occurrence of each secret (and of its URL-encoded form) replaced by `[redacted]`. */
export function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) {
    if (s.length < 4) continue;
    for (const form of new Set([s, encodeURIComponent(s)])) out = out.split(form).join('[redacted]');
  }
  return out;
}
