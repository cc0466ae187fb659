/**
 * `reckon schedule --plan nightly|intraday [--now T] [--interval 15m] [--lag 5m] [--lookback 3d]
 *  [--sources DIR] [--store DIR] [--config FILE] [--control …] [--dry-run] [--no-alerts | --alerts-dry-run] [--json] [--quiet]`:
 * runs the due windows that are not yet complete (see pipeline/schedule/schedule.ts). Exit code: the
 * highest of the runs' exit codes (CONTRACT §7); 5 when a window was locked by another run.
 * `--dry-run` runs nothing: it lists each due window as `would-run` or `complete` (exit 0).
 * SIGINT or SIGTERM stops the window running (run/run-window.ts) and runs no later one (130, 143).
 */
import { loadConfig } from '../config/config.js';
import { ConcurrencyError, ConfigError, InterruptedError } from '../core/errors.js';
import { faultPoints } from '../core/fault.js';
import { interruptedBy, withInterrupts } from '../core/interrupt.js';
import { operatorOutput } from '../core/progress.js';
import { exitCodeOf, highestExitCode, type ExitCode } from '../core/outcome.js';
import { loadControls } from '../controls/definitions.js';
import { selectControls } from '../controls/selection.js';
import { runWindow } from '../run/run-window.js';
import { completedRun, dueWindows, firstScheduledStart, parseDuration, type Plan, type Published } from '../schedule/schedule.js';
import type { Window } from '../contract/window.js';
import { listManifests } from '../store/manifests.js';
import { openStore } from '../store/open-store.js';
import { parseTimestamp } from '../contract/values.js';
import { parse } from './args.js';
import { reckonCommand } from '../core/shell.js';
import { pendingRollForwards } from '../publish/staging.js';
import { localOrRemote, printJson } from './io.js';
import type { CommandContext } from './command.js';
import { alertRequest, runNextSteps, runSigning } from './run-command.js';
import { assertSigningKept } from '../publish/manifest-chain.js';

export const SCHEDULE_USAGE = `reckon schedule --plan nightly|intraday [--now T] [--interval 15m] [--lag 5m] [--lookback 3d|1d]
                [--sources DIR] [--store DIR] [--config FILE] [--control RC01,…] [--dry-run]
                [--no-alerts | --alerts-dry-run] [--json] [--quiet]
  --dry-run   show the due windows and whether each would run, run nothing`;

/** Runs `reckon schedule` with `argv` (after the subcommand); returns the highest exit code of the runs. Interrupted: throws InterruptedError. */
export async function command(argv: string[], ctx: CommandContext): Promise<number> {
  return withInterrupts((text) => ctx.io.stderr(text), (interrupt) => schedule(argv, ctx, interrupt));
}

async function schedule(argv: string[], { io, settings }: CommandContext, interrupt: AbortSignal): Promise<number> {
  const { values } = parse(argv, {
    plan: { type: 'string' }, now: { type: 'string' }, interval: { type: 'string' }, lag: { type: 'string' }, lookback: { type: 'string' },
    sources: { type: 'string' }, store: { type: 'string' }, config: { type: 'string' }, control: { type: 'string' }, json: { type: 'boolean' }, quiet: { type: 'boolean' },
    'dry-run': { type: 'boolean' }, 'no-alerts': { type: 'boolean' }, 'alerts-dry-run': { type: 'boolean' },
  });
  const plan = values.plan as Plan;
  if (plan !== 'nightly' && plan !== 'intraday') throw new ConfigError(`--plan must be nightly or intraday\n${SCHEDULE_USAGE}`);
  let nowUs: bigint;
  if (values.now !== undefined) {
    const p = parseTimestamp(values.now);
    if (!p.ok) throw new ConfigError(`--now: ${p.message}`);
    nowUs = p.value;
  } else nowUs = BigInt(Date.now()) * 1000n;
  const intervalUs = parseDuration(values.interval ?? '15m', '--interval');
  const lagUs = parseDuration(values.lag ?? (plan === 'nightly' ? '5m' : '5m'), '--lag');
  const lookbackUs = parseDuration(values.lookback ?? (plan === 'nightly' ? '3d' : '1d'), '--lookback');
  const definitions = await loadControls();
  const config = await loadConfig(values.config, definitions, { cwd: io.cwd });
  const selection = selectControls(definitions, values.control ? values.control.split(',').map((s) => s.trim().toUpperCase()) : []);
  const controls = selection.selected.map((c) => c.control_id);
  const sources = localOrRemote(io, values.sources ?? 'sources');
  const storeLocation = localOrRemote(io, values.store ?? 'var/reckon');
  const store = await openStore(storeLocation, settings.s3);
  const { logger, progress } = operatorOutput(io, { quiet: Boolean(values.quiet) });
  const alerts = alertRequest(values, config.config, io.env);
  const signing = await runSigning(config, settings);
  // Refused up front, a dry run included: every window's run would be (exit 2).
  await assertSigningKept(store, signing.pipeline?.signer);
  const faults = faultPoints(settings.faultPause, (text) => io.stderr(text), interrupt);
  const trigger = plan === 'nightly' ? 'scheduled-nightly' : 'scheduled-intraday';
  const report: ReportedWindow[] = [];
  // Listed once for every window: the windows' own runs add none that another window looks for.
  const published = await listManifests(store);
  const due = scheduleWindows(published, sources, trigger, dueWindows(plan, nowUs, { intervalUs, lagUs, lookbackUs }), values.lookback !== undefined, (text) => logger.warn(text));
  const unfinished = new Set((await pendingRollForwards(store)).map((p) => p.run_id));
  for (const w of due) {
    // A run whose publication is unfinished (it failed or was killed after its manifest) does not complete its window: running it again rolls that run forward first.
    const done = await completedRun(store, w, controls, { config: config.sha256, sources }, published);
    if (done && !unfinished.has(done)) { report.push({ start: w.start, end: w.end, action: 'complete', run_id: done, status: null, exit_code: 0 }); continue; }
    if (values['dry-run']) { report.push({ start: w.start, end: w.end, action: 'would-run', run_id: null, status: null, exit_code: 0 }); continue; }
    const signal = interruptedBy(interrupt);
    if (signal) throw new InterruptedError(signal, `interrupted by ${signal}: ${report.filter((r) => r.action === 'ran').length} window(s) ran; nothing of [${w.start}, ${w.end}) or a later window was run; run the schedule again`);
    try {
      const r = await runWindow({
        window: w, controls: selection, sources, store: storeLocation, config, trigger, ...signing,
        reason: null, rerunOf: null, settings, logger, progress, alerts, faults, interrupt, env: io.env,
      });
      const notReady = r.controls.flatMap((c) => (c.status === 'NOT_READY' ? c.readiness.reasons.map((why) => `${c.control_id}: ${why}`) : []));
      report.push({ start: w.start, end: w.end, action: 'ran', run_id: r.run_id, status: r.status, exit_code: r.exit_code, ...(notReady.length ? { not_ready: notReady } : {}), next: runNextSteps(r, { config, controls: selection, store: storeLocation }).next });
    } catch (e) {
      if (!(e instanceof ConcurrencyError)) {
        // The windows already run are published: say so before the error (stderr) ends the schedule.
        if (!values.json) for (const r of report) io.stdout(windowLine(r));
        if (e instanceof InterruptedError) throw new InterruptedError(e.signal, `${e.message} (the schedule stopped in [${w.start}, ${w.end}) after ${report.filter((r) => r.action === 'ran').length} earlier window(s) ran; no later window was run)`);
        throw e;
      }
      logger.warn(e.message);
      report.push({ start: w.start, end: w.end, action: 'locked', run_id: null, status: null, exit_code: exitCodeOf(e) });
    }
  }
  const exit = highestExitCode(report.map((r) => r.exit_code));
  if (values.json) printJson(io, { plan, now: new Date(Number(nowUs / 1000n)).toISOString(), dry_run: Boolean(values['dry-run']), sources, windows: report, exit_code: exit });
  else io.stdout(reportText(report, { store: storeLocation, config: values.config && localOrRemote(io, values.config), dryRun: Boolean(values['dry-run']), trigger, sources }));
  return exit;
}

/** The schedule's text output: a line per window (with a non-clean run's first commands), then where to read more. */
function reportText(report: readonly ReportedWindow[], o: { store: string; config: string | undefined; dryRun: boolean; trigger: string; sources: string }): string {
  const lines = report.map(windowLine);
  if (report.length === 0) lines.push('no window is due\n');
  const at = ['--store', o.store, ...(o.config ? ['--config', o.config] : [])];
  if (report.some((r) => r.action === 'ran' && r.exit_code !== 0)) lines.push(`details: ${reckonCommand(['runs', '--store', o.store])}; ${reckonCommand(['breaks', 'list', ...at])}; ${reckonCommand(['report', '--run', 'RUN_ID', '--store', o.store, '--out', 'FILE'])}\n`);
  if (o.dryRun && report.length) lines.push(`dry run: nothing was run; a window is complete only for a ${o.trigger} run of ${o.sources} with this code and configuration\n`);
  return lines.join('');
}

/** One due window and what the schedule did with it (`--json` windows[]); `not_ready`: each NOT_READY control's reasons, as `RCnn: reason`. */
interface ReportedWindow { start: string; end: string; action: string; run_id: string | null; status: string | null; exit_code: ExitCode; not_ready?: readonly string[]; next?: readonly string[] }

/** One window of the schedule's report as its text output: a line, the reasons of its controls not ready, then the run's first commands (what a non-clean run asks for). */
const windowLine = (r: ReportedWindow) =>
  `${`[${r.start}, ${r.end})  ${r.action.padEnd(9)} ${r.run_id ?? ''} ${r.status ?? ''}`.trimEnd()}\n${(r.not_ready ?? []).map((n) => `    not ready: ${n}\n`).join('')}${(r.next ?? []).map((n) => `    next: ${n}\n`).join('')}`;

/**
 * The due windows the schedule runs: all of them with an explicit lookback; otherwise none before
 * the first window a scheduled run of these sources was published for (schedule.ts
 * firstScheduledStart), and on the first call only the latest, each cut said through `warn`.
 */
function scheduleWindows(published: Published, sources: string, trigger: string, due: Window[], lookbackGiven: boolean, warn: (text: string) => void): Window[] {
  if (lookbackGiven || due.length === 0) return due;
  const first = firstScheduledStart(published, sources, trigger);
  const kept = first === null ? due.slice(-1) : due.filter((w) => w.start >= first);
  if (kept.length === due.length) return due;
  const cut = due.length - kept.length;
  warn(first === null
    ? `first scheduled run of ${sources} on this store: only the latest due window [${kept[0].start}, ${kept[0].end}) runs, not the ${cut} earlier one(s) of the default lookback; give --lookback to catch those up`
    : `${cut} due window(s) before ${first}, where the schedule of ${sources} began on this store, are not run; give --lookback to catch those up`);
  return kept;
}

/** The usage of `reckon schedule` (`--help`). */
export const usage = (): string => `usage: ${SCHEDULE_USAGE}`;
