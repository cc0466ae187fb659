/**
 * `reckon breaks list|show|advance` (CONTRACT §5, §7): read breaks from a store and move them
 * through their lifecycle. Every change is one appended, write-once event naming the version it
 * expects; a refusal names its rule (exit 2), a lost race exits 6. See docs/breaks.md.
 */
import { existsSync } from 'node:fs';
import { loadConfig, type Config } from '../config/config.js';
import { loadControls, type ControlDefinition } from '../controls/definitions.js';
import { ConfigError } from '../core/errors.js';
import { type ObjectStore } from '../store/object-store.js';
import { openStore } from '../store/open-store.js';
import { BreakStore, type BreakRecord } from '../breaks/break-store.js';
import { summarizeBreak, type BreakSummary } from '../breaks/break-summary.js';
import { BREAK_STATES, isBreakState, type BreakState } from '../breaks/states.js';
import { findEvidenceRun, planTransition, type TransitionRequest } from '../breaks/transitions.js';
import { parse } from './args.js';
import { localOrRemote, printJson, type CliIo } from './io.js';
import type { CommandContext } from './command.js';

export const BREAKS_USAGE = `usage:
  reckon breaks list [--state S[,S…]] [--control RC01[,…]] [--kind K[,…]] [--store DIR] [--config FILE] [--json]
  reckon breaks show BREAK_ID [--store DIR] [--config FILE] [--json]
  reckon breaks advance BREAK_ID --to STATE --actor A --expected-version N
        [--approver B] [--owner O] [--classification C] [--note T] [--evidence-ref R]
        [--reason T] [--root-cause T] [--prevention T] [--store DIR] [--config FILE] [--json]

States: ${BREAK_STATES.join(' → ')} (one step at a time; a run reopens VERIFIED/CLOSED as OPEN).
Exit codes: 0 done, 2 usage or a refused transition (the rule is named), 6 --expected-version is
stale (another transition landed first), 70 internal error.
`;

const COMMON = { store: { type: 'string' }, config: { type: 'string' }, json: { type: 'boolean' } } as const;

/** Runs `reckon breaks …` with `argv` (after `breaks`); returns the exit code (CONTRACT §7). */
export async function command(argv: string[], { io }: CommandContext): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === '--help' || sub === '-h' || sub === 'help') { io.stdout(BREAKS_USAGE); return 0; }
  switch (sub) {
    case 'list': return list(rest, io);
    case 'show': return show(rest, io);
    case 'advance': return advance(rest, io);
    default: throw new ConfigError(`${sub ? `unknown breaks subcommand '${sub}'` : 'reckon breaks needs a subcommand'}\n${BREAKS_USAGE}`);
  }
}

interface Context {
  readonly store: ObjectStore;
  readonly config: Config;
  readonly controls: readonly ControlDefinition[];
}

async function context(values: { store?: string; config?: string }, io: CliIo): Promise<Context> {
  const location = values.store ?? 'var/reckon';
  if (!location.startsWith('s3://') && !existsSync(localOrRemote(io, location))) throw new ConfigError(`--store ${location}: no store there`);
  const store = await openStore(localOrRemote(io, location));
  const controls = await loadControls();
  const { config } = await loadConfig(values.config, controls, { cwd: io.cwd });
  return { store, config, controls };
}

const csv = (v: string | undefined) => (v === undefined ? undefined : v.split(',').map((s) => s.trim()).filter(Boolean));

async function list(argv: string[], io: CliIo): Promise<number> {
  const { values } = parse(argv, { ...COMMON, state: { type: 'string' }, control: { type: 'string' }, kind: { type: 'string' } });
  const states = csv(values.state)?.map((s) => s.toUpperCase());
  for (const s of states ?? []) if (!isBreakState(s)) throw new ConfigError(`--state ${s} is not a break state; states: ${BREAK_STATES.join(', ')}`);
  const controls = csv(values.control)?.map((c) => c.toUpperCase());
  const kinds = csv(values.kind);
  const ctx = await context(values, io);
  const summaries = (await new BreakStore(ctx.store).readAll())
    .filter((r) => (!states || states.includes(r.state)) && (!controls || controls.includes(r.control_id)) && (!kinds || kinds.includes(r.kind)))
    .map((r) => summarizeBreak(r, ctx))
    .sort((a, b) => cmp(a.control_id, b.control_id) || cmp(a.kind, b.kind) || cmp(a.key, b.key));
  if (values.json) printJson(io, summaries);
  else io.stdout(listText(summaries));
  return 0;
}

async function show(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(argv, COMMON, true);
  const id = breakIdArg(positionals);
  const ctx = await context(values, io);
  const rec = await readBreak(ctx.store, id);
  const summary = summarizeBreak(rec, ctx);
  if (values.json) printJson(io, { ...summary, events: rec.events, observations: rec.observations });
  else io.stdout(showText(summary, rec));
  return 0;
}

async function advance(argv: string[], io: CliIo): Promise<number> {
  const text = { type: 'string' } as const;
  const { values, positionals } = parse(argv, {
    ...COMMON, to: text, actor: text, 'expected-version': text, approver: text, owner: text, classification: text,
    note: text, 'evidence-ref': text, reason: text, 'root-cause': text, prevention: text,
  }, true);
  const id = breakIdArg(positionals);
  const to = values.to?.trim().toUpperCase();
  if (!to || !isBreakState(to)) throw new ConfigError(`--to must be one of ${BREAK_STATES.join(', ')}${values.to ? `, not '${values.to}'` : ''}`);
  if (!values.actor?.trim()) throw new ConfigError('--actor NAME is required: who makes this transition');
  const ev = values['expected-version']?.trim();
  if (!ev || !/^[0-9]{1,9}$/.test(ev)) throw new ConfigError('--expected-version N is required: the break version this transition expects (see reckon breaks show)');
  const ctx = await context(values, io);
  const bs = new BreakStore(ctx.store);
  const rec = await readBreak(ctx.store, id);
  const req: TransitionRequest = {
    to: to as BreakState, actor: values.actor, expected_version: Number(ev), approver: values.approver, owner: values.owner,
    classification: values.classification?.trim().toUpperCase(), note: values.note, evidence_ref: values['evidence-ref'],
    reason: values.reason, root_cause: values['root-cause'], prevention: values.prevention,
  };
  const evidenceRun = to === 'VERIFIED' && req.evidence_ref?.trim() ? await findEvidenceRun(ctx.store, req.evidence_ref, rec) : undefined;
  const event = planTransition(rec, req, evidenceRun);
  await bs.append(event);
  const after = await readBreak(ctx.store, id);
  const summary = summarizeBreak(after, ctx);
  if (values.json) printJson(io, { ...summary, event });
  else io.stdout(`${id} ${event.from_state} → ${event.to_state} by ${event.actor}; version ${event.version}\n`);
  return 0;
}

function breakIdArg(positionals: string[]): string {
  if (positionals.length !== 1) throw new ConfigError(`expected exactly one BREAK_ID\n${BREAKS_USAGE}`);
  const id = positionals[0].trim();
  if (!/^brk-[0-9a-f]{24}$/.test(id)) throw new ConfigError(`'${id}' is not a break id (brk- and 24 hex digits)`);
  return id;
}

async function readBreak(store: ObjectStore, id: string): Promise<BreakRecord> {
  const rec = await new BreakStore(store).read(id);
  if (!rec) throw new ConfigError(`no break ${id} in ${store.location}`);
  return rec;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function listText(rows: readonly BreakSummary[]): string {
  if (rows.length === 0) return 'no breaks\n';
  const head = ['BREAK_ID', 'CONTROL', 'KIND', 'KEY', 'STATE', 'V', 'OWNER', 'AGE_S', 'SLA'];
  const body = rows.map((s) => [s.break_id, s.control_id, s.kind, s.key, s.state, String(s.version), `${s.owner ?? '-'}${s.owner_assigned ? '' : '*'}`, s.age_s ?? '-', s.sla_breached === null ? '-' : s.sla_breached ? `BREACHED>${s.sla_s}s` : `ok≤${s.sla_s}s`]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((r) => r[i].length)));
  const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd();
  const note = rows.some((s) => !s.owner_assigned) ? "(* owner not yet assigned by triage: the control's configured owner)\n" : '';
  return `${[line(head), ...body.map(line)].join('\n')}\n${note}`;
}

function showText(s: BreakSummary, rec: BreakRecord): string {
  const lines = [
    `${s.break_id}  ${s.control_id} ${s.kind} ${s.key}`,
    `  state ${s.state}  version ${s.version}  owner ${s.owner ?? '-'}${s.owner_assigned ? '' : ' (not yet triaged)'}  classification ${s.classification ?? '-'}`,
    `  window [${s.window?.start ?? '?'}, ${s.window?.end ?? '?'})  first record ${s.first_record_time ?? '-'}  as-of ${s.as_of ?? '-'}`,
    `  age ${s.age_s ?? '-'} s  SLA ${s.sla_s ?? '-'} s  ${s.sla_breached === null ? '' : s.sla_breached ? 'BREACHED' : 'within SLA'}`,
    'events:',
    ...rec.events.map((e) => `  v${e.version} ${e.at} ${e.from_state ?? '-'} → ${e.to_state} by ${e.actor}  ${Object.entries(e.evidence).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(' ')}`),
    'observations:',
    ...rec.observations.map((o) => `  ${o.observed_at} ${o.run_id} [${o.window.start}, ${o.window.end}) ${o.disposition} record ${o.record_time ?? '-'} as-of ${o.as_of ?? '-'}: ${o.detail}`),
  ];
  return `${lines.join('\n')}\n`;
}
