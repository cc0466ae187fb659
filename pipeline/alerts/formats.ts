/**
 * The request bodies of the four ready formats (docs/alerts.md), each built from one planned
 * alert and the run it comes from:
 *   webhook       reckon's own JSON (`schema: reckon.alert/v1`): event, run, break, owner, runbook, next command
 *   slack         an incoming-webhook message: `text` (escaped for Slack's mrkdwn) and the same as blocks
 *   pagerduty     Events API v2: `trigger` with dedup_key = break id, `resolve` for a VERIFIED break
 *   alertmanager  `POST /api/v2/alerts`: one alert, labels identifying the break, `endsAt` now when resolved
 * Pure: time comes in as `now`. The PagerDuty routing key is passed in, so a dry run can show a
 * body with `[redacted]` in its place.
 */
import type { AlertFormat } from '../config/alerts-config.js';
import { humanDuration, humanSeconds, secondsTextToMicros } from '../core/duration.js';
import { reckonCommand } from '../core/shell.js';
import type { PlannedAlert } from './plan.js';

/** The run an alert comes from. */
export interface AlertRun {
  readonly run_id: string;
  readonly window: { readonly start: string; readonly end: string };
  readonly manifest: { readonly key: string; readonly sha256: string };
  /** The store as given to the run (for the command to paste). */
  readonly store: string;
}

/** How long a firing Alertmanager alert lasts without being sent again: until the next nightly run. */
export const ALERTMANAGER_HOLD_MS = 24 * 3_600_000;

const EVENT_WORDS: Readonly<Record<PlannedAlert['event'], string>> = {
  opened: 'new break', reopened: 'reopened break', past_sla: 'break past its SLA', resolved: 'break verified (resolved)', summary: 'more breaks',
};

/** `1d02h past SLA 2m00s`, `within SLA 1h00m`, or '' when the age is unknown. */
function ageWords(a: PlannedAlert): string {
  const us = secondsTextToMicros(a.age_s);
  if (us === null) return '';
  const sla = a.sla_s === null ? '' : a.sla_breached ? `, past SLA ${humanSeconds(a.sla_s)}` : `, within SLA ${humanSeconds(a.sla_s)}`;
  return `age ${humanDuration(us)}${sla}`;
}

/** One line: `RC03 POSTING_SET_UNBALANCED PS-1|EUR: new break (age 1d02h, past SLA 0s)`. */
export function alertSummary(a: PlannedAlert): string {
  const age = ageWords(a);
  return `${a.control_id} ${a.kind} ${a.key}: ${EVENT_WORDS[a.event]}${age ? ` (${age})` : ''}`;
}

/** The command the owner runs first. */
function nextCommand(a: PlannedAlert, run: AlertRun): string {
  return a.event === 'summary' ? reckonCommand(['breaks', 'list', '--owner', a.owner.owner, '--store', run.store]) : reckonCommand(['breaks', 'show', a.break_id, '--store', run.store]);
}

function webhookBody(a: PlannedAlert, run: AlertRun, now: Date) {
  return {
    schema: 'reckon.alert/v1', event: a.event, summary: alertSummary(a), sent_at: now.toISOString(),
    run: { run_id: run.run_id, window: run.window, manifest: run.manifest },
    break: { break_id: a.break_id, control_id: a.control_id, kind: a.kind, key: a.key, detail: a.detail, state: a.state, version: a.version, age_s: a.age_s, sla_s: a.sla_s, sla_breached: a.sla_breached },
    owner: { owner: a.owner.owner, owner_name: a.owner.owner_name, contact: a.owner.contact, route: a.owner.route },
    runbook: a.owner.runbook, next: nextCommand(a, run), ...(a.more ? { more: a.more } : {}),
  };
}

/** Slack mrkdwn: `&`, `<` and `>` are its control characters (a key like `<!channel>` must stay text). */
const slackText = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function slackBody(a: PlannedAlert, run: AlertRun) {
  const lines = [
    `*${slackText(alertSummary(a))}*`,
    `${slackText(a.detail)}`,
    `Owner: ${slackText(`${a.owner.owner_name} (${a.owner.owner}), ${a.owner.contact}`)}`,
    `Runbook: ${slackText(`${a.owner.runbook.id} ${a.owner.runbook.title} — ${a.owner.runbook.link}`)}`,
    `First step: ${slackText(a.owner.runbook.first_step)}`,
    `Next: \`${slackText(nextCommand(a, run))}\``,
    `Run ${slackText(run.run_id)} [${slackText(run.window.start)}, ${slackText(run.window.end)})`,
  ];
  return { text: slackText(alertSummary(a)), blocks: [{ type: 'section', text: { type: 'mrkdwn', text: lines.join('\n') } }] };
}

function pagerdutyBody(a: PlannedAlert, run: AlertRun, now: Date, routingKey: string) {
  if (a.event === 'resolved') return { routing_key: routingKey, event_action: 'resolve', dedup_key: a.break_id };
  return {
    routing_key: routingKey, event_action: 'trigger', dedup_key: a.break_id,
    payload: {
      summary: alertSummary(a).slice(0, 1024), source: 'reckon', severity: a.sla_breached ? 'critical' : 'error', timestamp: now.toISOString(),
      component: a.control_id, group: a.owner.owner, class: a.kind,
      custom_details: { ...webhookBody(a, run, now), schema: undefined },
    },
  };
}

function alertmanagerBody(a: PlannedAlert, run: AlertRun, now: Date) {
  const labels = {
    alertname: 'ReckonBreak', break_id: a.break_id, control: a.control_id, kind: a.kind, owner: a.owner.owner,
    severity: a.sla_breached ? 'critical' : 'error', source: 'reckon',
  };
  const annotations = {
    summary: alertSummary(a), description: a.detail, key: a.key, runbook: `${a.owner.runbook.id} ${a.owner.runbook.title}`, runbook_url: a.owner.runbook.link,
    first_step: a.owner.runbook.first_step, contact: a.owner.contact, next: nextCommand(a, run), run_id: run.run_id,
  };
  const endsAt = new Date(now.getTime() + (a.event === 'resolved' ? 0 : ALERTMANAGER_HOLD_MS)).toISOString();
  return [{ labels, annotations, ...(a.event === 'resolved' ? {} : { startsAt: now.toISOString() }), endsAt }];
}

/** The JSON body of `alert` in `format`. `routingKey` is PagerDuty's (a secret: pass `[redacted]` for display). */
export function alertBody(format: AlertFormat, alert: PlannedAlert, run: AlertRun, now: Date, routingKey = ''): unknown {
  switch (format) {
    case 'webhook': return webhookBody(alert, run, now);
    case 'slack': return slackBody(alert, run);
    case 'pagerduty': return pagerdutyBody(alert, run, now, routingKey);
    case 'alertmanager': return alertmanagerBody(alert, run, now);
  }
}
