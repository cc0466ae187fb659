/**
 * `reckon breaks list|show|advance|approve|withdraw` (CONTRACT §5, §7, issue 17): read breaks from
 * a store and move them through their lifecycle. Every change is one write-once object naming the
 * version it expects, signed by its author with their own key (unless the configuration says
 * `signing.unsigned: true`); a dual-control step is proposed by the owner and lands when the
 * approver countersigns it. A refusal names its rule (exit 2), a lost race exits 6. See
 * docs/breaks.md.
 */
import { existsSync } from 'node:fs';
import { loadConfig, registryPath, type Config, type LoadedConfig } from '../config/config.js';
import { loadControls, type ControlDefinition } from '../controls/definitions.js';
import { ConfigError } from '../core/errors.js';
import type { Settings } from '../core/settings.js';
import { type ObjectStore } from '../store/object-store.js';
import { openStore } from '../store/open-store.js';
import { actionContext, advanceBreak, approveProposal, withdrawProposal, type ActionContext, type ActionResult } from '../breaks/actions.js';
import { BreakStore, type BreakRecord, type StoredProposal } from '../breaks/break-store.js';
import { checkSignatures, trustedSigners, withLogRefusals, type SignatureCheck } from '../breaks/check-signatures.js';
import { verifyOneBreakLog, type LogFinding } from '../breaks/verify-log.js';
import { loadRegistry } from '../signing/registry.js';
import { listManifests } from '../store/manifests.js';
import { pendingRollForwards, pendingText as rollForwardText } from '../publish/staging.js';
import { ownedBy, summarizeBreak, type BreakSummary } from '../breaks/break-summary.js';
import { BREAK_STATES, isBreakState, type BreakState } from '../breaks/states.js';
import { findEvidenceRun, proposalStatus, type TransitionRequest } from '../breaks/transitions.js';
import type { KeySource } from '../signing/signing-key.js';
import { humanDuration, humanSeconds, secondsTextToMicros } from '../core/duration.js';
import { ownerLine, ownershipOf } from '../config/ownership.js';
import { reckonCommand } from '../core/shell.js';
import { shellWord } from '../core/shell.js';
import { listedRecords, type ListedRecords } from '../inspect/difference-records.js';
import { parse } from './args.js';
import { localOrRemote, printJson, type CliIo } from './io.js';
import type { CommandContext } from './command.js';

const LIST_USAGE = 'reckon breaks list [--state S[,S…]] [--control RC01[,…]] [--kind K[,…]] [--owner TEAM[,…]] [--pending] [--store DIR] [--config FILE] [--json]';
const SHOW_USAGE = 'reckon breaks show BREAK_ID [--store DIR] [--config FILE] [--json]   (exit 1 when its log does not verify)';
const ADVANCE_USAGE = `reckon breaks advance BREAK_ID --to STATE --expected-version N [--key FILE] [--actor A]
        [--approver B] [--owner O] [--classification C] [--note T] [--evidence-ref R]
        [--reason T] [--root-cause T] [--prevention T] [--store DIR] [--config FILE] [--json]`;
const APPROVE_USAGE = 'reckon breaks approve BREAK_ID --version N [--proposal DIGEST] [--key FILE] [--actor A] [--store DIR] [--config FILE] [--json]';
const WITHDRAW_USAGE = 'reckon breaks withdraw BREAK_ID --version N [--proposal DIGEST] [--note T] [--key FILE] [--actor A] [--store DIR] [--config FILE] [--json]';

export const BREAKS_USAGE = `usage:
  ${LIST_USAGE}
  ${SHOW_USAGE}
  ${ADVANCE_USAGE}
  ${APPROVE_USAGE}
  ${WITHDRAW_USAGE}

States: ${BREAK_STATES.join(' → ')} (one step at a time; a run reopens VERIFIED/CLOSED as OPEN).
CONTAINED and CORRECTED (and CLOSED when the configuration says closed_needs_approval) are
proposed by the owner, naming --approver, and land when that approver runs 'approve'.
Signing: --key FILE (an OpenSSH private key, or a .pub whose key ssh-agent holds) or
RECKON_SIGNING_KEY_FILE / RECKON_SIGNING_KEY (+ RECKON_SIGNING_KEY_PASSPHRASE); the actor is the
registry's name of the key (--actor, if given, must match it). --config names the registry.
Exit codes: 0 done, 1 (show) the break's log does not verify (each object and problem named), 2 usage or a refused transition, key or signature (the rule is named; a
proposal withdrawn, expired, landed or superseded by another event is PROPOSAL_NOT_CURRENT or
PROPOSAL_WITHDRAWN/EXPIRED), 6 lost the race for the version (--expected-version stale, the same
proposal countersigned by another approval first, or another event took the version while
approving), 70 internal error.
`;

/** The usage of `reckon breaks …` (`--help` anywhere): the subcommand's, or all of them. */
export function usage(argv: string[]): string {
  const sub = { list: LIST_USAGE, show: SHOW_USAGE, advance: ADVANCE_USAGE, approve: APPROVE_USAGE, withdraw: WITHDRAW_USAGE }[argv[0] ?? ''];
  return sub ? `usage: ${sub}\n\n${BREAKS_USAGE.slice(BREAKS_USAGE.indexOf('States:'))}` : BREAKS_USAGE;
}

const COMMON = { store: { type: 'string' }, config: { type: 'string' }, json: { type: 'boolean' } } as const;
const SIGNING = { key: { type: 'string' }, actor: { type: 'string' } } as const;

/** Runs `reckon breaks …` with `argv` (after `breaks`); returns the exit code (CONTRACT §7). */
export async function command(argv: string[], { io, settings }: CommandContext): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === 'help') { io.stdout(BREAKS_USAGE); return 0; }
  switch (sub) {
    case 'list': return list(rest, io);
    case 'show': return show(rest, io);
    case 'advance': return advance(rest, io, settings);
    case 'approve': return approve(rest, io, settings);
    case 'withdraw': return withdraw(rest, io, settings);
    default: throw new ConfigError(`${sub ? `unknown breaks subcommand '${sub}'` : 'reckon breaks needs a subcommand'}\n${BREAKS_USAGE}`);
  }
}

interface Context {
  readonly store: ObjectStore;
  readonly loaded: LoadedConfig;
  readonly config: Config;
  readonly controls: readonly ControlDefinition[];
}

async function context(values: { store?: string; config?: string }, io: CliIo): Promise<Context> {
  const location = values.store ?? 'var/reckon';
  if (!location.startsWith('s3://') && !existsSync(localOrRemote(io, location))) throw new ConfigError(`--store ${location}: no store there`);
  const store = await openStore(localOrRemote(io, location));
  const controls = await loadControls();
  const loaded = await loadConfig(values.config, controls, { cwd: io.cwd });
  return { store, loaded, config: loaded.config, controls };
}

/** Where the signing key comes from: --key, else the settings (RECKON_SIGNING_KEY_FILE / RECKON_SIGNING_KEY). */
export function keySource(values: { key?: string }, io: CliIo, settings: Settings): KeySource {
  const s = settings.signing;
  const file = values.key !== undefined ? localOrRemote(io, values.key) : s.keyFile ? localOrRemote(io, s.keyFile) : null;
  return { file, text: values.key !== undefined ? null : s.keyText, passphrase: s.passphrase, agentSocket: s.agentSocket };
}

async function acting(values: { store?: string; config?: string; key?: string }, io: CliIo, settings: Settings): Promise<{ ctx: Context; act: ActionContext }> {
  const ctx = await context(values, io);
  return { ctx, act: await actionContext(ctx.store, ctx.loaded, keySource(values, io, settings)) };
}

const csv = (v: string | undefined) => (v === undefined ? undefined : v.split(',').map((s) => s.trim()).filter(Boolean));

/** The filters of `breaks list`, each value checked against what exists (a typo is refused, not an empty list). */
function listFilters(values: { state?: string; control?: string; kind?: string; owner?: string }, ctx: Context) {
  const states = csv(values.state)?.map((s) => s.toUpperCase());
  for (const s of states ?? []) if (!isBreakState(s)) throw new ConfigError(`--state ${s} is not a break state; states: ${BREAK_STATES.join(', ')}`);
  const controls = csv(values.control)?.map((c) => c.toUpperCase());
  const known = ctx.controls.map((c) => c.control_id);
  for (const c of controls ?? []) if (!known.includes(c)) throw new ConfigError(`--control ${c} is not a control; controls: ${known.join(', ')}`);
  const kinds = csv(values.kind)?.map((k) => k.toUpperCase());
  const kindsOf = ctx.controls.filter((c) => !controls || controls.includes(c.control_id)).flatMap((c) => c.difference_kinds);
  for (const k of kinds ?? []) if (!kindsOf.includes(k)) throw new ConfigError(`--kind ${k} is not a difference kind${controls ? ` of ${controls.join(', ')}` : ''}; kinds: ${kindsOf.join(', ')}`);
  const owners = csv(values.owner);
  return { states, controls, kinds, owners };
}

async function list(argv: string[], io: CliIo): Promise<number> {
  const { values } = parse(argv, { ...COMMON, state: { type: 'string' }, control: { type: 'string' }, kind: { type: 'string' }, owner: { type: 'string' }, pending: { type: 'boolean' } });
  const ctx = await context(values, io);
  const { states, controls, kinds, owners } = listFilters(values, ctx);
  // A break whose log cannot be read is named on stderr and left out; the others are listed.
  const onUnreadable = (id: string, e: Error) => io.stderr(`reckon: break ${id} is left out of the list: ${e.message}; run 'reckon manifest verify' and restore the object\n`);
  const records = (await new BreakStore(ctx.store).readAll({ onUnreadable }))
    .filter((r) => (!states || states.includes(r.state)) && (!controls || controls.includes(r.control_id)) && (!kinds || kinds.includes(r.kind)));
  if (values.pending) {
    const now = new Date();
    const rows = records.flatMap((r) => r.proposals.filter((p) => proposalStatus(r, p, ctx.config.signing.proposal_max_age_s, now) === 'pending').map((p) => ({ summary: summarizeBreak(r, ctx), proposal: proposalView(r, p, ctx.config, now) })))
      .filter((x) => ownedBy(owners, x.summary))
      .sort((a, b) => cmp(a.summary.control_id, b.summary.control_id) || cmp(a.summary.kind, b.summary.kind) || cmp(a.summary.key, b.summary.key));
    if (values.json) printJson(io, rows.map((x) => ({ ...x.summary, proposal: x.proposal })));
    else io.stdout(pendingText(rows));
    return 0;
  }
  const all = records.map((r) => summarizeBreak(r, ctx));
  const summaries = all.filter((s) => ownedBy(owners, s))
    .sort((a, b) => cmp(a.control_id, b.control_id) || cmp(a.kind, b.kind) || cmp(a.key, b.key));
  for (const o of unknownOwners(owners, all, ctx)) io.stderr(`reckon: --owner ${o} names no team of the configuration and no owner of a break here (teams: ${knownTeams(ctx).join(', ')})\n`);
  // A run stopped after its manifest has breaks not written yet: said first, never "no breaks".
  const pending = (await pendingRollForwards(ctx.store)).map((p) => `${rollForwardText(p, values.store ?? 'var/reckon', values.config && localOrRemote(io, values.config))}\n`);
  if (values.json) {
    printJson(io, summaries);
    for (const line of pending) io.stderr(`reckon: ${line}`);
  } else io.stdout(`${pending.join('')}${pending.length && !summaries.length ? '' : listText(summaries)}`);
  return 0;
}

/** The teams the configuration routes breaks to (every control and difference kind). */
function knownTeams(ctx: Context): string[] {
  return [...new Set(ctx.controls.flatMap((d) => [ownershipOf(ctx.config, d).owner, ...d.difference_kinds.map((k) => ownershipOf(ctx.config, d, k).owner)]))].sort();
}

/** The `--owner` names that match no team and no owner of any break: most likely a typo, said on stderr (the list itself stays empty, as filters do). */
function unknownOwners(owners: readonly string[] | undefined, all: readonly BreakSummary[], ctx: Context): string[] {
  if (!owners?.length) return [];
  const known = new Set([...knownTeams(ctx), ...all.map((s) => s.owner ?? '')].map((n) => n.toLowerCase()));
  return owners.filter((o) => !known.has(o.toLowerCase()));
}

/** A proposal as `show` and `list --pending` print it. */
function proposalView(r: BreakRecord, p: StoredProposal, config: Config, now: Date) {
  return {
    key: p.object.key, sha256: p.object.digest, status: proposalStatus(r, p, config.signing.proposal_max_age_s, now),
    version: p.event.version, from_state: p.event.from_state, to_state: p.event.to_state, actor: p.event.actor, approver: p.event.evidence.approver ?? null,
    at: p.event.at, evidence: p.event.evidence, signatures: p.object.signatures.map(signatureView),
    withdrawal: p.withdrawal ? { actor: p.withdrawal.actor, at: p.withdrawal.at, key: p.withdrawal.object.key, signatures: p.withdrawal.object.signatures.map(signatureView) } : null,
  };
}

function signatureView(s: { role: string; signer: string; key: string; registry_sha256: string; signed_at: string }) {
  return { role: s.role, signer: s.signer, key: s.key, registry_sha256: s.registry_sha256, signed_at: s.signed_at };
}

/** How each event is proven: its signatures, the manifest it is bound to, or nothing (unsigned, legacy). */
function proofViews(r: BreakRecord) {
  return r.stored.map((s) => ({
    version: s.event.version, key: s.object.key, sha256: s.object.digest, format: s.object.format, proof: s.event.proof ?? 'legacy',
    signatures: s.object.signatures.map(signatureView), binding: s.object.binding,
  }));
}

async function show(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(argv, COMMON, true);
  const id = breakIdArg(positionals);
  const ctx = await context(values, io);
  const rec = await readBreak(ctx.store, id);
  const summary = summarizeBreak(rec, ctx);
  const now = new Date();
  const proposals = rec.proposals.map((p) => proposalView(rec, p, ctx.config, now));
  const records = summary.last_observed_run_id ? await listedRecords(ctx.store, summary.last_observed_run_id, rec.kind, rec.key) : undefined;
  const check = await checkShown(ctx, rec);
  const proofs = proofViews(rec).map((p, i) => ({ ...p, checks: check.checks[i] }));
  if (values.json) printJson(io, { ...summary, head_sha256: rec.head_sha256, events: rec.events, proofs, proposals, observations: rec.observations, records: records ?? null, verification: check.verification });
  else io.stdout(showText(summary, rec, proposals, hintOptions(ctx, values.config), recordsText(id, records, ctx.store.location), check));
  return check.verification.ok ? 0 : 1;
}

/** What `show` found checking the break: each event's signatures, and the log against the published manifests. */
interface ShownCheck {
  /** Per event (version order), each signature's check. */
  readonly checks: readonly SignatureCheck[][];
  readonly verification: { ok: boolean; trusted_registry: string | null; problems: LogFinding[]; notices: LogFinding[] };
}

/**
 * Checks `rec` for `show`: every signature against the registry it names and the configuration's
 * registry (check-signatures.ts), and the break's log (chain, bindings, heads) against the
 * published manifests, as `manifest verify` does for the whole store.
 */
async function checkShown(ctx: Context, rec: BreakRecord): Promise<ShownCheck> {
  const manifests = await listManifests(ctx.store);
  const path = registryPath(ctx.loaded);
  const registry = path && !ctx.config.signing.unsigned ? await loadRegistry(path) : null;
  const trusted = trustedSigners(registry, manifests);
  const own = await Promise.all(rec.stored.map((s) => checkSignatures(ctx.store, s.object.payload, s.object.signatures, trusted)));
  const log = await verifyOneBreakLog(ctx.store, manifests, rec.break_id);
  const problems = [...log.problems];
  own.forEach((c, i) => c.filter((x) => !x.ok).forEach((x) => problems.push({ key: rec.stored[i].object.key, problem: `${x.role} signature by ${x.signer} (${x.key}) does not verify: ${x.problem}` })));
  // A signature the log refuses (a signer revoked before it signed, registry-timeline.ts) is marked so on its own line too.
  const checks = own.map((c, i) => withLogRefusals(rec.stored[i].object.key, c, log.refused));
  return { checks, verification: { ok: problems.length === 0, trusted_registry: registry ? registry.source : null, problems, notices: log.notices } };
}

async function advance(argv: string[], io: CliIo, settings: Settings): Promise<number> {
  const text = { type: 'string' } as const;
  const { values, positionals } = parse(argv, {
    ...COMMON, ...SIGNING, to: text, 'expected-version': text, approver: text, owner: text, classification: text,
    note: text, 'evidence-ref': text, reason: text, 'root-cause': text, prevention: text,
  }, true);
  const id = breakIdArg(positionals);
  const to = values.to?.trim().toUpperCase();
  if (!to || !isBreakState(to)) throw new ConfigError(`--to must be one of ${BREAK_STATES.join(', ')}${values.to ? `, not '${values.to}'` : ''}`);
  const ev = values['expected-version']?.trim();
  if (!ev || !/^[0-9]{1,9}$/.test(ev)) throw new ConfigError('--expected-version N is required: the break version this transition expects (see reckon breaks show)');
  const { ctx, act } = await acting(values, io, settings);
  const rec = await readBreak(ctx.store, id);
  const req: TransitionRequest = {
    to: to as BreakState, actor: values.actor ?? '', expected_version: Number(ev), approver: values.approver, owner: values.owner,
    classification: values.classification?.trim().toUpperCase(), note: values.note, evidence_ref: values['evidence-ref'],
    reason: values.reason, root_cause: values['root-cause'], prevention: values.prevention,
  };
  const evidenceRun = to === 'VERIFIED' && req.evidence_ref?.trim() ? await findEvidenceRun(ctx.store, req.evidence_ref, rec) : undefined;
  const done = await advanceBreak(act, rec, req, evidenceRun);
  return report(io, ctx, id, done, Boolean(values.json), storeArgs(values));
}

/** The --store and --config a command was given, to repeat in the command it suggests next. */
function storeArgs(values: { store?: string; config?: string }): string {
  return [values.store !== undefined ? ` --store ${values.store}` : '', values.config !== undefined ? ` --config ${values.config}` : ''].join('');
}

/**
 * Prints what an action wrote: the break after it, and the event that landed or the proposal that
 * waits (with the approver's command, ready to run but for the approver's own key).
 */
async function report(io: CliIo, ctx: Context, id: string, done: ActionResult, json: boolean, where = ''): Promise<number> {
  const after = await readBreak(ctx.store, id);
  const summary = summarizeBreak(after, ctx);
  const e = done.event;
  if (done.kind === 'proposal') {
    const p = after.proposals.find((x) => x.object.digest === done.digest)!;
    if (json) printJson(io, { ...summary, proposal: proposalView(after, p, ctx.config, new Date()) });
    else io.stdout(`${id} ${e.from_state} → ${e.to_state} proposed by ${e.actor} for version ${e.version} (${done.key}); it lands when ${e.evidence.approver} countersigns:\n  reckon breaks approve ${id} --version ${e.version} --proposal ${done.digest.slice(0, 16)} --key <${e.evidence.approver}'s key>${where}\n`);
    return 0;
  }
  const event = after.events[e.version - 1];
  if (json) printJson(io, { ...summary, event, proof: proofViews(after)[e.version - 1] });
  else io.stdout(`${id} ${e.from_state} → ${e.to_state} by ${e.actor}${e.dual_control ? `, countersigned by ${e.evidence.approver}` : ''}; version ${e.version} (sha256 ${done.digest})\n`);
  return 0;
}

function versionArg(v: string | undefined): number {
  const t = v?.trim();
  if (!t || !/^[1-9][0-9]{0,8}$/.test(t)) throw new ConfigError('--version N is required: the version the proposal would land as (see reckon breaks show or list --pending)');
  return Number(t);
}

async function approve(argv: string[], io: CliIo, settings: Settings): Promise<number> {
  const { values, positionals } = parse(argv, { ...COMMON, ...SIGNING, version: { type: 'string' }, proposal: { type: 'string' } }, true);
  const id = breakIdArg(positionals);
  const version = versionArg(values.version);
  const { ctx, act } = await acting(values, io, settings);
  const rec = await readBreak(ctx.store, id);
  const done = await approveProposal(act, rec, version, { proposal: values.proposal, actor: values.actor });
  return report(io, ctx, id, done, Boolean(values.json));
}

async function withdraw(argv: string[], io: CliIo, settings: Settings): Promise<number> {
  const { values, positionals } = parse(argv, { ...COMMON, ...SIGNING, version: { type: 'string' }, proposal: { type: 'string' }, note: { type: 'string' } }, true);
  const id = breakIdArg(positionals);
  const version = versionArg(values.version);
  const { ctx, act } = await acting(values, io, settings);
  const rec = await readBreak(ctx.store, id);
  const { key, proposal } = await withdrawProposal(act, rec, version, { proposal: values.proposal, actor: values.actor, note: values.note });
  const after = await readBreak(ctx.store, id);
  const p = after.proposals.find((x) => x.object.digest === proposal.object.digest)!;
  if (values.json) printJson(io, { ...summarizeBreak(after, ctx), proposal: proposalView(after, p, ctx.config, new Date()) });
  else io.stdout(`${id} proposal for version ${version} (${proposal.event.to_state} by ${proposal.event.actor}) withdrawn (${key})\n`);
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

/** The log check as `show` prints it: verified, or every problem (the command then exits 1). */
function verificationText(c: ShownCheck): string {
  const v = c.verification;
  const against = v.trusted_registry ? `signatures checked against the registry they name and ${v.trusted_registry}` : 'signatures checked against the registries kept in the store only (no --config registry)';
  if (v.ok) return `log: verified (chain, bindings, heads against the published manifests; ${against})\n`;
  return [`LOG DOES NOT VERIFY (${against}); run 'reckon manifest verify' and restore the objects named:`, ...v.problems.map((p) => `  ${p.key}: ${p.problem}`)].join('\n') + '\n';
}

function proofText(proof: string | undefined, o: { signatures: readonly { role: string; signer: string; key: string }[]; binding: { manifest_key: string } | null; format: string }, checks: readonly SignatureCheck[] = []): string {
  if (o.format === 'legacy') return 'legacy event (written before signing; unsigned)';
  if (proof === 'manifest') return o.binding ? `proven by manifest ${o.binding.manifest_key}` : 'planned by a run, not yet bound to its manifest';
  if (proof === 'unsigned') return 'UNSIGNED (signing.unsigned: true)';
  return `signed: ${o.signatures.map((x, i) => `${x.role} ${x.signer} ${x.key} ${checks[i]?.ok ? 'verified' : `NOT VERIFIED (${checks[i]?.problem ?? 'not checked'})`}`).join(', ')}`;
}

const ageText = (s: BreakSummary) => {
  const us = secondsTextToMicros(s.age_s);
  return us === null ? '-' : humanDuration(us);
};

function slaText(s: BreakSummary): string {
  if (s.sla_breached === null || s.sla_s === null) return '-';
  return s.sla_breached ? `PAST>${humanSeconds(s.sla_s)}` : `ok≤${humanSeconds(s.sla_s)}`;
}

function listText(rows: readonly BreakSummary[]): string {
  if (rows.length === 0) return 'no breaks\n';
  const head = ['BREAK_ID', 'CONTROL', 'KIND', 'KEY', 'STATE', 'V', 'OWNER', 'AGE', 'SLA', 'RUNBOOK'];
  const body = rows.map((s) => [s.break_id, s.control_id, s.kind, s.key, s.state, String(s.version), `${s.owner ?? '-'}${s.owner_assigned ? '' : '*'}`, ageText(s), slaText(s), s.routing?.runbook.id ?? '-']);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((r) => r[i].length)));
  const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd();
  const note = rows.some((s) => !s.owner_assigned) ? "(* owner not yet assigned by triage: the configured owner of the control and kind)\n" : '';
  const runbooks = [...new Map(rows.flatMap((s) => (s.routing ? [[s.routing.runbook.id, s.routing.runbook] as const] : []))).values()]
    .map((r) => `${r.id} ${r.title}: first step: ${r.first_step} (${r.link})`);
  return `${[line(head), ...body.map(line)].join('\n')}\n${note}${runbooks.map((r) => `${r}\n`).join('')}`;
}

function pendingText(rows: readonly { summary: BreakSummary; proposal: ReturnType<typeof proposalView> }[]): string {
  if (rows.length === 0) return 'no pending proposals\n';
  const head = ['BREAK_ID', 'CONTROL', 'KIND', 'KEY', 'STATE', 'PROPOSED', 'V', 'BY', 'APPROVER', 'AT'];
  const body = rows.map(({ summary: s, proposal: p }) => [s.break_id, s.control_id, s.kind, s.key, s.state, p.to_state, String(p.version), p.actor, p.approver ?? '-', p.at]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((r) => r[i].length)));
  const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd();
  return `${[line(head), ...body.map(line)].join('\n')}\n`;
}

/** What the next-command hint of `show` needs: the store, the --config given (as typed), and whether it signs with a registry. */
interface HintOptions { readonly store: string; readonly config: string | undefined; readonly unsigned: boolean; readonly registry: boolean }

function hintOptions(ctx: Context, config: string | undefined): HintOptions {
  return { store: ctx.store.location, config, unsigned: ctx.config.signing.unsigned, registry: registryPath(ctx.loaded) !== null };
}

/**
 * The command that triages an OPEN break: signed with the person's own key (--key, or
 * RECKON_SIGNING_KEY_FILE), or naming them with --actor when the configuration is unsigned; with
 * the --config `show` was given (it says signed or unsigned, and names the registry). Signed with
 * no registry configured, `advance` would be refused: the hint asks for a configuration naming
 * one and a second line says so.
 */
function triageCommand(s: BreakSummary, opts: HintOptions): string {
  const who = opts.unsigned ? '--actor YOU' : '--key YOUR_KEY';
  const needsRegistry = !opts.unsigned && !opts.registry;
  const config = needsRegistry ? ' --config YOUR_CONFIG' : opts.config !== undefined ? ` --config ${shellWord(opts.config)}` : '';
  const why = needsRegistry ? '\n  (break transitions are signed: YOUR_CONFIG is a configuration naming the signer registry, signing.registry; the demo\'s is fixtures/demo/reckon.yaml)' : '';
  // Signed, the owner signs the steps that follow: a person of the registry, not the team.
  const owner = opts.unsigned ? s.routing?.owner ?? 'TEAM' : 'SIGNER';
  const whom = opts.unsigned ? '' : `\n  (--owner names the signer of the registry who takes it${s.routing ? ` for team ${s.routing.owner}` : ''}; a refusal lists who may own ${s.control_id})`;
  return `reckon breaks advance ${s.break_id} --to TRIAGED --expected-version ${s.version} ${who} --owner ${owner} --classification TIMING|DUPLICATE|MISSING|VALUE|EXTERNAL --store ${shellWord(opts.store)}${config}${why}${whom}`;
}

/** A proposal's withdrawal as `show` prints it: void when the proposal landed anyway (the two raced). */
function withdrawalText(p: ReturnType<typeof proposalView>): string {
  if (!p.withdrawal) return '';
  return p.status === 'approved' ? ` (withdrawal by ${p.withdrawal.actor} ${p.withdrawal.at} too late: the proposal landed, the event stands)` : ` (withdrawn by ${p.withdrawal.actor} ${p.withdrawal.at})`;
}

/** `breaks show` as text; `records` (recordsText) goes after the observations, before the next command. */
function showText(s: BreakSummary, rec: BreakRecord, proposals: readonly ReturnType<typeof proposalView>[], opts: HintOptions, records: string, check: ShownCheck): string {
  const r = s.routing;
  const lines = [
    `${s.break_id}  ${s.control_id} ${s.kind} ${s.key}`,
    `  state ${s.state}  version ${s.version}  owner ${s.owner ?? '-'}${s.owner_assigned ? '' : ' (not yet triaged)'}  classification ${s.classification ?? '-'}`,
    ...(r ? [`  team ${ownerLine(r)}`, `  runbook ${r.runbook.id} ${r.runbook.title} (${r.runbook.link})`, `  first step: ${r.runbook.first_step}`] : []),
    `  window [${s.window?.start ?? '?'}, ${s.window?.end ?? '?'})  first record ${s.first_record_time ?? '-'}  as-of ${s.as_of ?? '-'}`,
    `  age ${ageText(s)} (${s.age_s ?? '-'} s)  SLA ${s.sla_s === null ? '-' : `${humanSeconds(s.sla_s)} (${s.sla_s} s)`}  ${s.sla_breached === null ? '' : s.sla_breached ? 'PAST SLA' : 'within SLA'}`.trimEnd(),
    'events:',
    ...rec.stored.flatMap(({ event: e, object: o }, i) => [
      `  v${e.version} ${e.at} ${e.from_state ?? '-'} → ${e.to_state} by ${e.actor}  ${Object.entries(e.evidence).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(' ')}`,
      `      ${proofText(e.proof, o, check.checks[i])}  event sha256 ${o.digest}`,
    ]),
    ...(proposals.length ? ['proposals:', ...proposals.map((p) => `  v${p.version} ${p.from_state} → ${p.to_state} by ${p.actor}, approver ${p.approver ?? '-'}, ${p.at}: ${p.status.toUpperCase()}${withdrawalText(p)}  ${p.sha256.slice(0, 16)}`)] : []),
    'observations:',
    ...rec.observations.map((o) => `  ${o.observed_at} ${o.run_id} [${o.window.start}, ${o.window.end}) ${o.disposition} record ${o.record_time ?? '-'} as-of ${o.as_of ?? '-'}: ${o.detail}`),
  ];
  const next = s.state === 'OPEN' && check.verification.ok ? `next: ${triageCommand(s, opts)}\n` : '';
  return `${lines.join('\n')}\n${records}${verificationText(check)}${next}`;
}

/** The records behind the break's difference in the last run that observed it (its manifest lists the first few). */
function recordsText(id: string, r: ListedRecords | undefined, store: string): string {
  if (!r) return '';
  if (r.record_count === null) return `records: run ${r.run_id} kept none (it ran before records were kept)\n`;
  if (r.record_count === 0) return `records: none in the inputs of run ${r.run_id}\n`;
  const rows = r.listed.map((x) => [x.side, x.dataset, x.file, `record ${x.record_number}`, x.record_key]);
  const widths = [0, 1, 2, 3].map((i) => Math.max(...rows.map((row) => row[i].length)));
  const more = r.record_count > r.listed.length ? `, the first ${r.listed.length} listed` : '';
  return [
    `records (run ${r.run_id}: ${r.record_count}${more}; ${reckonCommand(['records', '--break', id, '--store', store])} prints their source rows):`,
    ...rows.map((row) => `  ${row.map((c, i) => (i < 4 ? c.padEnd(widths[i]) : c)).join('  ')}`),
  ].join('\n') + '\n';
}
