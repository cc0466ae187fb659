/** `reckon run` (CONTRACT §7): parses options, runs the window, prints the summary, returns the exit code. */
import { basename, join } from 'node:path';
import { resolveAlertRoutes } from '../config/alert-routes.js';
import { loadConfig, type Config, type LoadedConfig } from '../config/config.js';
import { ownerLine, ownershipOf } from '../config/ownership.js';
import { configuredRegistry } from '../breaks/actions.js';
import type { SignerRegistry } from '../signing/registry.js';
import { pipelineSigning } from '../publish/pipeline-key.js';
import { loadControls, type ControlDefinition } from '../controls/definitions.js';
import { selectControls } from '../controls/selection.js';
import { humanDuration, humanSeconds, secondsTextToMicros } from '../core/duration.js';
import { ConfigError } from '../core/errors.js';
import { faultPoints } from '../core/fault.js';
import { interruptedBy, withInterrupts } from '../core/interrupt.js';
import { STATUS_OUTCOMES } from '../core/outcome.js';
import { operatorOutput } from '../core/progress.js';
import { nextSteps, type DispositionCounts, type NextSteps } from '../breaks/next-steps.js';
import type { AlertMode } from '../alerts/record.js';
import type { AlertRequest } from '../run/phase-alerts.js';
import { isEmptyWindowNote } from '../run/window-census.js';
import { runWindow, TRIGGERS, type RunRequest, type RunResult, type Trigger } from '../run/run-window.js';
import { windowForDate, windowForRange } from '../contract/window.js';
import { parse } from './args.js';
import { localOrRemote, printJson } from './io.js';
import { oneLine } from './text.js';
import type { CommandContext } from './command.js';
import { wholeOf } from '../load/quarantine-entry.js';
import { isCacheWarning } from '../load/cache-folder.js';

export const RUN_USAGE = `reckon run (--date D | --window START/END) [--control RC01,RC03 | --all]
           [--sources DIR|s3://…|FILE.yaml] [--store DIR] [--config FILE]
           [--trigger manual|scheduled-nightly|scheduled-intraday|incident]
           [--reason TEXT] [--rerun-of RUN_ID] [--no-alerts | --alerts-dry-run] [--json] [--quiet]`;

const OPTIONS = {
  date: { type: 'string' }, window: { type: 'string' }, control: { type: 'string' }, all: { type: 'boolean' },
  sources: { type: 'string' }, store: { type: 'string' }, config: { type: 'string' }, trigger: { type: 'string' },
  reason: { type: 'string' }, 'rerun-of': { type: 'string' }, json: { type: 'boolean' }, quiet: { type: 'boolean' },
  'no-alerts': { type: 'boolean' }, 'alerts-dry-run': { type: 'boolean' },
} as const;

/**
 * Runs `reckon run` with `argv` (after the subcommand). Returns the exit code of CONTRACT §7; a
 * run stopped by SIGINT or SIGTERM throws InterruptedError (130, 143: core/interrupt.ts).
 */
export async function command(argv: string[], ctx: CommandContext): Promise<number> {
  const { values } = parse(argv, OPTIONS);
  // The handlers stay until the summary is printed: a signal after the run returned must not end
  // the process with 130 ("stopped, run again") for a run that completed and published.
  let completed: { code: number; line: (signal: string) => string } | undefined;
  return withInterrupts((text) => ctx.io.stderr(text), async (interrupt) => {
    const req = await runRequest(values, ctx, interrupt);
    const result = await runWindow(req);
    // A second signal from here on (the first one stops nothing now) exits with the run's own code.
    completed = { code: result.exit_code, line: (s) => `reckon: a second signal (${s}) after run ${result.run_id} had completed and published its manifest: exiting at once with the run's own exit code (${result.exit_code})\n` };
    await req.faults?.('completed');
    printRun(ctx, values, req, result);
    const late = interruptedBy(interrupt);
    if (late) ctx.io.stderr(`reckon: ${late} arrived after run ${result.run_id} had completed and published its manifest; the exit code is the run's own (${result.exit_code})\n`);
    return result.exit_code;
  }, () => completed);
}

/** Prints a finished run: its quarantine lines on stderr, then the summary (`--json` or human). */
function printRun(ctx: CommandContext, values: RunValues, req: RunRequest, result: RunResult): void {
  // Quarantine lines are the run's warnings, not progress: printed even with --quiet.
  for (const line of quarantineLines(result)) ctx.io.stderr(`${line}\n`);
  const steps = runNextSteps(result, req);
  if (values.json) printJson(ctx.io, jsonSummary(result, steps, req.config.config, req.controls.all));
  else ctx.io.stdout(humanSummary(result, steps));
}

/** The next steps of a finished run (breaks/next-steps.ts) with the store and sources as the command was given them. */
export function runNextSteps(r: RunResult, req: Pick<RunRequest, 'config' | 'controls' | 'store'>): NextSteps {
  return nextSteps({
    run_id: r.run_id, window: r.window, results: r.controls, breaks: r.breaks, config: req.config.config, controls: req.controls.all,
    store: req.store, sources: r.sources, configFile: req.config.path && req.config.dir ? join(req.config.dir, basename(req.config.path)) : null,
  });
}

/**
 * The alert request of the options and configuration: `--no-alerts` off, `--alerts-dry-run` a
 * dry run, else send; routes are resolved against the command's environment (their URLs and keys
 * may live there). Throws ConfigError (exit 2) when a route's environment variable is unset.
 */
export function alertRequest(values: { 'no-alerts'?: boolean; 'alerts-dry-run'?: boolean }, config: Config, env: CommandContext['io']['env']): AlertRequest {
  if (values['no-alerts'] && values['alerts-dry-run']) throw new ConfigError('--no-alerts and --alerts-dry-run exclude each other');
  const mode: AlertMode = values['no-alerts'] ? 'off' : values['alerts-dry-run'] ? 'dry-run' : 'send';
  return { mode, routes: mode === 'off' ? new Map() : resolveAlertRoutes(config.alerts, env) };
}

type RunValues = ReturnType<typeof parse<typeof OPTIONS>>['values'];

/**
 * The run request of the options: window, controls (the definitions loaded once, then the
 * selection), configuration checked against them, lineage, locations, settings, logger, fault
 * points and the interrupt. Throws ConfigError (exit 2) for any bad option.
 */
async function runRequest(values: RunValues, { io, settings, clock }: CommandContext, interrupt: AbortSignal): Promise<RunRequest> {
  if ((values.date === undefined) === (values.window === undefined)) throw new ConfigError(`exactly one of --date or --window is required\n${RUN_USAGE}`);
  if (values.control !== undefined && values.all) throw new ConfigError('--control and --all exclude each other');
  const window = values.date !== undefined ? windowForDate(values.date) : windowForRange(values.window!);
  const trigger = (values.trigger ?? 'manual') as Trigger;
  if (!TRIGGERS.includes(trigger)) throw new ConfigError(`--trigger must be one of ${TRIGGERS.join(', ')}`);
  const lineage = [trigger === 'incident', values['rerun-of'] !== undefined, values.reason !== undefined];
  const missing = ['--trigger incident', '--rerun-of RUN_ID', '--reason TEXT'].filter((_, i) => !lineage[i]);
  if (lineage.some(Boolean) && missing.length) throw new ConfigError(`an incident rerun needs --trigger incident, --rerun-of RUN_ID and --reason TEXT together; missing: ${missing.join(', ')} (run ids: reckon runs --store …)`);
  if (values['rerun-of'] !== undefined && !/^[a-z0-9_-]+$/.test(values['rerun-of'])) throw new ConfigError(`--rerun-of '${values['rerun-of']}' is not a run id`);
  const controls = values.control !== undefined ? values.control.split(',').map((s) => s.trim().toUpperCase()).filter(Boolean) : [];
  if (values.control !== undefined && controls.length === 0) throw new ConfigError('--control needs at least one control id, e.g. --control RC01,RC03');
  const definitions = await loadControls();
  const config = await loadConfig(values.config, definitions, { cwd: io.cwd });
  const signing = await runSigning(config, settings);
  const alerts = alertRequest(values, config.config, io.env);
  const { logger, progress } = operatorOutput(io, { quiet: Boolean(values.quiet) });
  return {
    window, controls: selectControls(definitions, controls), config, trigger, settings, ...signing,
    sources: localOrRemote(io, values.sources ?? 'sources'),
    store: localOrRemote(io, values.store ?? 'var/reckon'),
    reason: values.reason ?? null,
    rerunOf: values['rerun-of'] ?? null,
    logger, progress, alerts,
    faults: faultPoints(settings.faultPause, (text) => io.stderr(text), interrupt),
    interrupt,
    env: io.env,
    ...(clock ? { clock: { originMs: clock.originMs, before: { startup_ms: Math.round(clock.enteredMs - clock.originMs), command_ms: Math.round(performance.now() - clock.enteredMs) } } } : {}),
  };
}

/** The registry a run records and keeps: the configured one (invalid: exit 2), none when unsigned or none is configured. */
async function runRegistry(config: LoadedConfig): Promise<SignerRegistry | null> {
  if (config.config.signing.unsigned || !config.config.signing.registry) return null;
  return configuredRegistry(config);
}

/**
 * How a run of `config` signs: the signer registry of break transitions and the pipeline key of its
 * manifest (none unsigned or without a registry). `reckon run` and `reckon schedule` both take it
 * from here, so a scheduled run signs as a manual one does. ConfigError (exit 2) for a registry or
 * key that cannot be read.
 */
export async function runSigning(config: LoadedConfig, settings: CommandContext['settings']): Promise<Pick<RunRequest, 'signers' | 'pipeline'>> {
  const signers = await runRegistry(config);
  return { signers, pipeline: await pipelineSigning(config, settings, signers) };
}

/** Most quarantine entries printed on stderr, one line each; the rest are counted, never dropped from the manifest or the output. */
export const QUARANTINE_LINES_MAX = 50;


/**
 * Human-readable stderr lines for a run's quarantine (CONTRACT §2): one line per entry (dataset
 * file, row and line, column, rule, message) for the first QUARANTINE_LINES_MAX entries, then a
 * count of the others and where the full list is: the manifest's `quarantine` (first 1000
 * entries) and the `quarantine` Parquet output (every entry). Empty when nothing was quarantined.
 */
export function quarantineLines(r: RunResult): string[] {
  if (!r.quarantine_count) return [];
  type Entry = { file?: string; row?: number | null; line?: number | null; column?: string | null; rule?: string; message?: string };
  const entries = (r.manifestDoc.quarantine.entries as Entry[]).slice(0, QUARANTINE_LINES_MAX);
  const lines = entries.map((e) => {
    const where = e.row !== null && e.row !== undefined ? `row ${e.row}${e.line !== null && e.line !== undefined ? ` (line ${e.line})` : ''}` : wholeOf(e.file);
    const column = e.column ? ` column ${e.column}` : '';
    return oneLine(`reckon: quarantined ${e.file ?? '?'} ${where}${column}: ${e.rule ?? '?'}: ${e.message ?? ''}`);
  });
  const more = r.quarantine_count - entries.length;
  if (more > 0) lines.push(`reckon: ... and ${more} more quarantine entr${more === 1 ? 'y' : 'ies'} not shown`);
  const output = r.manifestDoc.outputs.find((o) => o.table === 'quarantine');
  const where = [`the manifest ${r.manifest.path} (its "quarantine" lists ${r.manifestDoc.quarantine.listed})`];
  if (output) where.push(`the quarantine output ${output.key} in the store (every entry)`);
  lines.push(oneLine(`reckon: ${r.quarantine_count} quarantine entr${r.quarantine_count === 1 ? 'y' : 'ies'} in all; full list: ${where.join(' and ')}`));
  return lines;
}

/** The `--json` document of CONTRACT §7, with owners, ages, next steps and alerts (exact seconds as text). */
export function jsonSummary(r: RunResult, steps: NextSteps, config: Config, definitions: readonly ControlDefinition[]) {
  const outcomes = new Map(r.breaks.map((b) => [b.break_id, b]));
  const defs = new Map(definitions.map((d) => [d.control_id, d]));
  return {
    run_id: r.run_id,
    status: r.status,
    exit_code: r.exit_code,
    conditions: r.conditions,
    window: r.window,
    manifest: r.manifest,
    results_digest: r.results_digest,
    quarantine_count: r.quarantine_count,
    break_signing: r.manifestDoc.break_log?.signing ?? null,
    manifest_signing: r.manifestDoc.manifest_signing ?? null,
    // What the text summary says beside the controls: an empty window, breaks verified, corrections that did not hold.
    // The notes a caller must see: an empty window, a cache folder refused or made private, a cache entry refused.
    warnings: r.manifestDoc.notes.filter((n) => isEmptyWindowNote(n) || isCacheWarning(n)),
    verified: (r.manifestDoc.break_log?.verified ?? []).filter((v) => r.verified.includes(v.break_id)).map((v) => ({ break_id: v.break_id, control_id: v.control_id, kind: v.kind, key: v.key })),
    corrected_still_observed: r.breaks.filter((b) => b.disposition === 'REOBSERVED' && b.state === 'CORRECTED').map((b) => ({ break_id: b.break_id, control_id: b.control_id, kind: b.kind, key: b.key })),
    controls: r.controls.map((c, i) => ({
      control_id: c.control_id, status: c.status, as_of: c.as_of, readiness: c.readiness, quarantined_datasets: c.quarantined_datasets,
      totals: c.totals,
      ...(c.large_totals ? { large_totals: c.large_totals } : {}),
      owner: steps.controls[i]?.owner ?? null, breaks: { ...steps.controls[i]?.counts, oldest_age_s: steps.controls[i]?.oldest_age_s ?? null }, next: steps.controls[i]?.next ?? null,
      differences: c.differences.map((d) => {
        const b = d.break_id ? outcomes.get(d.break_id) : undefined;
        const o = defs.has(c.control_id) ? ownershipOf(config, defs.get(c.control_id)!, d.kind) : null;
        return {
          kind: d.kind, key: d.key, detail: d.detail, break_id: d.break_id, disposition: d.disposition, record_time: d.record_time,
          ...(d.record_count !== undefined ? { record_count: d.record_count, records: d.records ?? [] } : {}),
          owner: o?.owner ?? null, runbook: o?.runbook.id ?? null, age_s: b?.age_s ?? null, sla_s: b?.sla_s ?? null, sla_breached: b?.sla_breached ?? null,
        };
      }),
    })),
    owners: steps.owners,
    next: steps.next,
    alerts: { mode: r.alerts.mode, record: r.alerts.record, counts: r.alerts.counts, error: r.alerts.error, deliveries: r.alerts.deliveries, ...(r.alerts.mode === 'dry-run' ? { would_send: r.alerts.previews } : {}) },
  };
}

const ageOf = (s: string | null | undefined) => {
  const us = secondsTextToMicros(s);
  return us === null ? null : humanDuration(us);
};

/** `7 new, 2 re-observed, 1 reopened, 3 timing; 5 past SLA` (zero counts left out, `no breaks` when none). */
function countsText(c: DispositionCounts): string {
  const parts = ([['new', c.new], ['re-observed', c.reobserved], ['reopened', c.reopened], ['timing', c.timing], ['provisional', c.provisional]] as const)
    .filter(([, n]) => n > 0).map(([w, n]) => `${n} ${w}`);
  return `${parts.join(', ') || 'no breaks'}${c.past_sla ? `; ${c.past_sla} past SLA` : ''}`;
}

/** A per-control summary for people (stdout without --json), then the owners, the alerts and the next commands. */
export function humanSummary(r: RunResult, steps: NextSteps): string {
  const lines = [`run ${r.run_id}  window [${r.window.start}, ${r.window.end})  status ${r.status}  exit ${r.exit_code}`];
  // Every condition present, highest first: the status line names only the one that wins.
  for (const c of r.conditions) lines.push(`  ${c.status.padEnd(10)} ${STATUS_OUTCOMES[c.status].meaning} (exit ${c.exit_code}): ${c.controls.join(', ')}`);
  // Stdout is what a scheduler mails: a mistyped --date must show there, not only on stderr.
  for (const n of r.manifestDoc.notes.filter(isEmptyWindowNote)) lines.push(`  WARNING  ${n}`);
  r.controls.forEach((c, i) => {
    const byKind = new Map<string, number>();
    for (const d of c.differences) byKind.set(d.kind, (byKind.get(d.kind) ?? 0) + 1);
    const kinds = [...byKind].map(([k, n]) => `${k}×${n}`).join(', ');
    lines.push(`  ${c.control_id}  ${c.status.padEnd(10)} ${String(c.differences.length).padStart(4)} difference(s)${kinds ? `  ${kinds}` : ''}`);
    if (c.status === 'NOT_READY') for (const why of c.readiness.reasons) lines.push(`        not ready: ${why}`);
    if (c.status === 'INCOMPLETE') lines.push(`        quarantined input in: ${c.quarantined_datasets.join(', ')}`);
    const step = steps.controls[i];
    if (step && c.differences.length) {
      const oldest = ageOf(step.oldest_age_s);
      lines.push(`        ${countsText(step.counts)}${oldest ? `; oldest ${oldest}` : ''}; owner ${step.owner.owner}`);
    }
    if (step?.next) lines.push(`        next: ${step.next}`);
  });
  lines.push(...breakStateLines(r));
  if (r.quarantine_count) lines.push(`  ${r.quarantine_count} record(s) or file(s) quarantined; see the manifest and outputs/quarantine`);
  if (r.manifestDoc.break_log?.signing.mode === 'unsigned') lines.push('  break transitions are NOT signed: the configuration says signing.unsigned: true');
  const ms = r.manifestDoc.manifest_signing;
  if (ms?.mode === 'unsigned') lines.push(`  manifest NOT signed: ${ms.reason === 'configured' ? 'the configuration says signing.unsigned: true' : 'no signer registry configured (signing.registry)'}`);
  else if (ms) lines.push(`  signed   by ${ms.signer} ${ms.key} (${ms.namespace})`);
  lines.push(...ownerLines(steps), ...alertLines(r));
  for (const n of steps.next) lines.push(`  next: ${n}`);
  lines.push(`  manifest ${r.manifest.path}`, `  sha256   ${r.manifest.sha256}`, `  results  ${r.results_digest}`);
  return `${lines.join('\n')}\n`;
}

/** The breaks this run verified, and the CORRECTED breaks it still observes (a correction that did not remove its difference): ten of each at most. */
function breakStateLines(r: RunResult): string[] {
  const landed = new Set(r.verified);
  const verified = (r.manifestDoc.break_log?.verified ?? []).filter((v) => landed.has(v.break_id));
  const stillSeen = r.breaks.filter((b) => b.disposition === 'REOBSERVED' && b.state === 'CORRECTED');
  const lines = [
    ...verified.slice(0, 10).map((v) => `  VERIFIED ${v.break_id} ${v.control_id} ${v.kind} ${v.key}: no longer observed; it closes with 'reckon breaks advance ${v.break_id} --to CLOSED …'`),
    ...(verified.length > 10 ? [`  … and ${verified.length - 10} more verified (reckon breaks list --state VERIFIED)`] : []),
    ...stillSeen.slice(0, 10).map((b) => `  CORRECTED but still observed: ${b.break_id} ${b.control_id} ${b.kind} ${b.key}: the correction did not remove the difference, so it is not verified`),
    ...(stillSeen.length > 10 ? [`  … and ${stillSeen.length - 10} more corrected breaks still observed (reckon breaks list --state CORRECTED)`] : []),
  ];
  return lines;
}

/** The owners' part of the summary: per team its breaks, runbooks and first steps, and its next command. */
function ownerLines(steps: NextSteps): string[] {
  if (steps.owners.length === 0) return [];
  const lines = ['  by owner:'];
  for (const o of steps.owners) {
    const oldest = ageOf(o.oldest_age_s);
    lines.push(`    ${ownerLine(o)}`, `      ${o.controls.join(', ')}: ${countsText(o.counts)}${oldest ? `; oldest ${oldest}` : ''}`);
    for (const rb of o.runbooks) lines.push(`      runbook ${rb.id} ${rb.title} (${rb.link}); first step: ${rb.first_step}`);
    lines.push(`      next: ${o.next}`);
  }
  return lines;
}

/** One line on the run's alerts, and one per delivery that failed or was not attempted. */
function alertLines(r: RunResult): string[] {
  const a = r.alerts;
  if (a.mode === 'off') return ['  alerts: off (--no-alerts)'];
  const c = a.counts;
  const total = a.deliveries.length;
  if (total === 0 && !a.error) return ['  alerts: none to send'];
  const parts = [c.sent && `${c.sent} sent`, c.failed && `${c.failed} failed`, c.not_attempted && `${c.not_attempted} not attempted`, c.unrouted && `${c.unrouted} unrouted`, c.dry_run && `${c.dry_run} would be sent (dry run)`].filter(Boolean);
  const unrouted = [...new Set(a.deliveries.filter((d) => d.status === 'unrouted').map((d) => d.owner))];
  const lines = [`  alerts: ${parts.join(', ') || 'none'}${unrouted.length ? ` (no route configured for ${unrouted.join(', ')}; see docs/alerts.md)` : ''}${a.record ? `; record ${a.record}` : ''}`];
  if (a.error) lines.push(`    ${a.error}`);
  for (const d of a.deliveries.filter((x) => x.status === 'failed' || x.status === 'not_attempted').slice(0, 10)) {
    const last = d.attempts[d.attempts.length - 1];
    lines.push(`    ${d.status} ${d.route} ${d.target ?? ''} ${d.event} ${d.break_id}: ${d.reason ?? ''}${last?.error ? ` (${last.error})` : ''}`);
  }
  for (const p of a.previews) lines.push(`    would send to ${p.route} (${p.format}, ${p.target}): ${JSON.stringify(p.body)}`);
  return lines;
}

/** The usage of `reckon run` (main.ts prints its longer form for `--help`). */
export const usage = (): string => `usage: ${RUN_USAGE}`;
