/**
 * What a run asks of people (issue 19): per control and per owning team, how many of its breaks
 * are new, re-observed, reopened, timing (not opened) or provisional, how many are past their SLA
 * and how old the oldest is, and the next command to run. Pure: it reads a run's results and the
 * break outcomes the run recorded (ages exact in microseconds), with the configuration and the
 * control definitions for owners; `--json`, the terminal summary and the report all use it.
 */
import type { ControlResult, Disposition } from '../../manifests/v1/schema.js';
import type { Config } from '../config/config.js';
import { ownershipOf, type Ownership } from '../config/ownership.js';
import type { ControlDefinition, Runbook } from '../controls/definitions.js';
import { SOURCES_FILE_FIX } from '../controls/evaluation.js';
import { secondsTextToMicros } from '../core/duration.js';
import { reckonCommand } from '../core/shell.js';

/** A break outcome as a run records it (run-breaks.ts BreakOutcome and the manifest's `breaks[]` fit). */
export interface BreakAge {
  readonly break_id: string;
  readonly age_s?: string | null;
  readonly sla_s?: number | null;
  readonly sla_breached?: boolean | null;
}

/** Counts of a run's differences by what the run did with them. */
export interface DispositionCounts {
  readonly new: number;
  readonly reobserved: number;
  readonly reopened: number;
  readonly timing: number;
  readonly provisional: number;
  /** Breaks (new, re-observed or reopened) whose age is strictly over their SLA. */
  readonly past_sla: number;
}

/** One control's part: counts, the oldest break's age (exact seconds text), its team and the next command. */
export interface ControlNextStep {
  readonly control_id: string;
  readonly status: ControlResult['status'];
  readonly counts: DispositionCounts;
  readonly oldest_age_s: string | null;
  readonly owner: Ownership;
  readonly next: string | null;
}

/** One team's part across controls: its breaks, the runbooks they call for, the next command. */
export interface OwnerNextStep {
  readonly owner: string;
  readonly owner_name: string;
  readonly contact: string;
  readonly route: string;
  readonly controls: readonly string[];
  readonly counts: DispositionCounts;
  readonly oldest_age_s: string | null;
  readonly runbooks: readonly Runbook[];
  readonly next: string;
}

/** A run's next steps: per control, per owner, and the few commands to run first. */
export interface NextSteps {
  readonly controls: readonly ControlNextStep[];
  readonly owners: readonly OwnerNextStep[];
  readonly next: readonly string[];
}

/** What next steps are computed from. */
export interface NextStepsInput {
  readonly run_id: string;
  readonly window: { readonly start: string; readonly end: string };
  readonly results: readonly ControlResult[];
  readonly breaks: readonly BreakAge[];
  readonly config: Config;
  readonly controls: readonly ControlDefinition[];
  /** The store and sources as given to the run (paths or s3:// URLs), for commands to paste. */
  readonly store: string;
  readonly sources: string;
  /** The configuration file the run read, if any: repeated in the commands (owners, SLAs, the signer registry a signed store needs). */
  readonly configFile?: string | null;
}

/** `--store S` and, when the run read one, `--config F`: where every suggested command looks. */
const whereArgs = (input: NextStepsInput): string[] => ['--store', input.store, ...(input.configFile ? ['--config', input.configFile] : [])];

const KEYS: Readonly<Record<Disposition, keyof Omit<DispositionCounts, 'past_sla'>>> = {
  OPENED: 'new', REOBSERVED: 'reobserved', REOPENED: 'reopened', TIMING: 'timing', PROVISIONAL: 'provisional',
};

interface Tally { counts: Record<keyof DispositionCounts, number>; oldest: bigint | null; oldestText: string | null }
const tally = (): Tally => ({ counts: { new: 0, reobserved: 0, reopened: 0, timing: 0, provisional: 0, past_sla: 0 }, oldest: null, oldestText: null });

function add(t: Tally, disposition: Disposition, age: BreakAge | undefined): void {
  t.counts[KEYS[disposition]] += 1;
  if (disposition === 'TIMING' || disposition === 'PROVISIONAL' || !age) return;
  if (age.sla_breached) t.counts.past_sla += 1;
  const us = secondsTextToMicros(age.age_s);
  if (us !== null && (t.oldest === null || us > t.oldest)) { t.oldest = us; t.oldestText = age.age_s ?? null; }
}

/** The next steps of a run (see the module comment). Controls in result order; owners by most past-SLA breaks, then name. */
export function nextSteps(input: NextStepsInput): NextSteps {
  const defs = new Map(input.controls.map((c) => [c.control_id, c]));
  const ages = new Map(input.breaks.map((b) => [b.break_id, b]));
  const owners = new Map<string, { tally: Tally; controls: Set<string>; runbooks: Map<string, Runbook>; first: Ownership }>();
  const controls: ControlNextStep[] = [];
  for (const r of input.results) {
    const def = defs.get(r.control_id);
    if (!def) continue;
    const t = tally();
    for (const d of r.differences) {
      const age = d.break_id ? ages.get(d.break_id) : undefined;
      add(t, d.disposition, age);
      const o = ownershipOf(input.config, def, d.kind);
      const entry = owners.get(o.owner) ?? { tally: tally(), controls: new Set<string>(), runbooks: new Map<string, Runbook>(), first: o };
      add(entry.tally, d.disposition, age);
      entry.controls.add(r.control_id);
      entry.runbooks.set(o.runbook.id, o.runbook);
      owners.set(o.owner, entry);
    }
    controls.push({ control_id: r.control_id, status: r.status, counts: t.counts, oldest_age_s: t.oldestText, owner: ownershipOf(input.config, def), next: controlNext(input, r) });
  }
  const ownerSteps: OwnerNextStep[] = [...owners.entries()].map(([owner, e]) => ({
    owner, owner_name: e.first.owner_name, contact: e.first.contact, route: e.first.route, controls: [...e.controls], counts: e.tally.counts,
    oldest_age_s: e.tally.oldestText, runbooks: [...e.runbooks.values()], next: reckonCommand(['breaks', 'list', '--owner', owner, ...whereArgs(input)]),
  })).sort((a, b) => b.counts.past_sla - a.counts.past_sla || (a.owner < b.owner ? -1 : 1));
  return { controls, owners: ownerSteps, next: firstCommands(input, ages) };
}

/** The command a control's status calls for (null when CLEAN). */
function controlNext(input: NextStepsInput, r: ControlResult): string | null {
  return r.status === 'CLEAN' ? null : statusNext(input, r.status, [r.control_id]);
}

/** The command a status calls for, for the controls `ids` in it (one command for them all). */
function statusNext(input: NextStepsInput, status: Exclude<ControlResult['status'], 'CLEAN'>, ids: readonly string[]): string {
  const rerun = ['run', '--window', `${input.window.start}/${input.window.end}`, '--control', ids.join(','), '--sources', input.sources, ...whereArgs(input)];
  switch (status) {
    case 'BREAKS': return reckonCommand(['breaks', 'list', '--control', ids.join(','), ...whereArgs(input)]);
    case 'NOT_READY': return standing(input, ids)
      ? `correct the sources file (the reasons above say what it lacks), then: ${reckonCommand(rerun)}`
      : `once the watermarks reach ${input.window.end}: ${reckonCommand(rerun)} (a schedule runs it again by itself)`;
    case 'INCOMPLETE': return `correct the quarantined input${/\.(ya?ml|json)$/i.test(input.sources) ? ' (a file, rows in a database, or a query or watermark query of the sources file: the entries say which)' : ''}, then: ${reckonCommand([...rerun, '--trigger', 'incident', '--rerun-of', input.run_id, '--reason', 'corrected input'])}`;
  }
}

/** Whether a reason the NOT_READY controls `ids` give is one no waiting fixes (evaluation.ts SOURCES_FILE_FIX): then waiting never makes them ready. */
function standing(input: NextStepsInput, ids: readonly string[]): boolean {
  return input.results.some((r) => ids.includes(r.control_id) && r.readiness.reasons.some((x) => x.endsWith(SOURCES_FILE_FIX)));
}

/**
 * The first commands of the run: the oldest break past its SLA that the run opened or reopened
 * (else the oldest past SLA, else the first new one), then what NOT_READY and INCOMPLETE controls ask
 * (one rerun per state, naming all its controls).
 */
function firstCommands(input: NextStepsInput, ages: ReadonlyMap<string, BreakAge>): string[] {
  const open = input.results.flatMap((r) => r.differences.filter((d) => d.break_id && d.disposition !== 'TIMING' && d.disposition !== 'PROVISIONAL')
    .map((d) => ({ d, age: secondsTextToMicros(ages.get(d.break_id!)?.age_s), past: ages.get(d.break_id!)?.sla_breached === true })));
  const fresh = (x: (typeof open)[number]) => x.d.disposition === 'OPENED' || x.d.disposition === 'REOPENED';
  const oldest = (xs: typeof open) => [...xs].sort((a, b) => ((b.age ?? -1n) > (a.age ?? -1n) ? 1 : (b.age ?? -1n) < (a.age ?? -1n) ? -1 : 0))[0];
  const pick = oldest(open.filter((x) => x.past && fresh(x))) ?? oldest(open.filter((x) => x.past)) ?? open.find(fresh);
  const out: string[] = [];
  if (pick) out.push(reckonCommand(['breaks', 'show', pick.d.break_id!, ...whereArgs(input)]));
  // One rerun for every control in the same state: one manifest and one alert batch, not one per control.
  for (const status of ['NOT_READY', 'INCOMPLETE'] as const) {
    const ids = input.results.filter((r) => r.status === status).map((r) => r.control_id);
    if (ids.length) out.push(statusNext(input, status, ids));
  }
  return [...new Set(out)];
}
