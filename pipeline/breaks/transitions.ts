/**
 * The rules of a break transition made by a person (CONTRACT §5), as pure functions: given the
 * break's derived record, the request and (for VERIFIED) the run offered as evidence,
 * `planTransition` returns the event to append — or, for a dual-control step, to propose — or
 * throws; `judgeApproval` decides whether a signer may countersign a proposal. A refusal is a
 * TransitionRuleError naming its rule (exit 2); an expected version that is not the current one
 * is a ConcurrencyError('version') (exit 6), checked first, so that the loser of a race always
 * gets 6 whatever the winner changed.
 *
 * Identities (actor, owner, approver) are compared after trimming and ignoring case, so that
 * `Alice` cannot approve `alice`'s correction. `reconciler` is the pipeline's identity: no person
 * acts under it. In signed mode the actor is the registry's name of the signing key, owners and
 * approvers must be signers of the registry, and the configured roles say who may own and approve
 * which control (TransitionPolicy).
 */
import { ConcurrencyError, TransitionRuleError } from '../core/errors.js';
import { findManifest } from '../store/manifests.js';
import type { ObjectStore } from '../store/object-store.js';
import { parseTimestamp } from '../contract/values.js';
import { FORMATS } from './break-objects.js';
import type { BreakEvent, BreakLog, EventProof, StoredProposal, WindowText } from './break-store.js';
import { CLASSIFICATIONS, NEXT_STATE, isClassification, type BreakState } from './states.js';

/** The pipeline's actor name in break events (CONTRACT §5). */
export const RECONCILER = 'reconciler';

/** Every rule a transition can be refused by, with the sentence shown to the person refused. */
export const TRANSITION_RULES = {
  ALLOWED_TRANSITIONS: 'a break moves one step forward at a time: OPEN → TRIAGED → CONTAINED → CORRECTED → VERIFIED → CLOSED; no state is skipped and none is moved back',
  REOPEN_BY_RUN_ONLY: 'only a run that observes the difference again moves a VERIFIED or CLOSED break back to OPEN',
  RECONCILER_RESERVED: `'${RECONCILER}' is the pipeline: no person acts, owns or approves under that name`,
  TRIAGE_NEEDS_CLASSIFICATION: `TRIAGED needs --classification, one of ${CLASSIFICATIONS.join(', ')}`,
  TRIAGE_NEEDS_OWNER: 'TRIAGED needs --owner',
  TRIAGE_FIELDS_AT_TRIAGE_ONLY: 'owner and classification are decided at TRIAGED and cannot change on another transition',
  OWNER_ADVANCES: 'after TRIAGED only the owner makes CONTAINED, CORRECTED and CLOSED',
  DUAL_CONTROL_NEEDS_APPROVER: 'CONTAINED and CORRECTED (and CLOSED when the configuration says closed_needs_approval) need --approver (dual control)',
  DUAL_CONTROL_APPROVER_IS_ACTOR: 'the approver of a dual-control step must be a different person from the actor',
  APPROVER_ONLY_FOR_DUAL_CONTROL: '--approver belongs to dual-control steps only (CONTAINED, CORRECTED, and CLOSED when configured): no one countersigns this step',
  OWNER_NOT_A_SIGNER: 'the owner decided at TRIAGED must be a signer of the registry: the owner signs the steps that follow',
  APPROVER_NOT_A_SIGNER: 'the approver must be a signer of the registry: the approver countersigns',
  ROLE_MAY_NOT_OWN: "the configuration's roles do not let that signer own breaks of this control",
  ROLE_MAY_NOT_APPROVE: "the configuration's roles do not let that signer approve breaks of this control",
  VERIFIER_NOT_CORRECTOR: 'VERIFIED is made by someone who did not make CORRECTED',
  VERIFY_NEEDS_RUN: 'VERIFIED needs --evidence-ref RUN_ID: a run that started after CORRECTED, covered the break window and no longer observes it',
  VERIFY_RUN_UNKNOWN: 'the run given as evidence has no published manifest in this store',
  VERIFY_RUN_NOT_AFTER_CORRECTED: 'the run given as evidence did not start after CORRECTED',
  VERIFY_RUN_WINDOW: "the run given as evidence did not cover the break's window",
  VERIFY_RUN_CONTROL: "the run given as evidence did not evaluate the break's control to CLEAN or BREAKS",
  VERIFY_RUN_STILL_OBSERVES: 'the run given as evidence still observes the difference',
  CLOSE_NEEDS_REASON_ROOT_CAUSE_PREVENTION: 'CLOSED needs --reason, --root-cause and --prevention',
  PROPOSAL_UNKNOWN: 'the break has no proposal for that version (see reckon breaks show)',
  PROPOSAL_AMBIGUOUS: 'the break has several pending proposals for that version: name one with --proposal',
  PROPOSAL_NOT_CURRENT: 'the proposal is no longer current: the break moved on since it was proposed',
  PROPOSAL_WITHDRAWN: 'the proposal was withdrawn',
  PROPOSAL_EXPIRED: 'the proposal waited longer than signing.proposal_max_age_s for its countersignature: propose again',
  APPROVER_IS_PROPOSER: 'a proposal is countersigned by someone other than its proposer (dual control)',
  APPROVER_NOT_DESIGNATED: 'the proposal names another approver',
  DUAL_CONTROL_SAME_KEY: "the approver's key is the proposer's key: two names backed by one key are one person",
  WITHDRAW_BY_PROPOSER: 'only the proposer withdraws a proposal',
} as const;
export type TransitionRule = keyof typeof TRANSITION_RULES;

/** A transition asked for by a person (`reckon breaks advance`). Empty strings count as absent. */
export interface TransitionRequest {
  readonly to: BreakState;
  readonly actor: string;
  readonly expected_version: number;
  readonly approver?: string;
  readonly owner?: string;
  readonly classification?: string;
  readonly note?: string;
  readonly evidence_ref?: string;
  readonly reason?: string;
  readonly root_cause?: string;
  readonly prevention?: string;
}

/** What a published manifest says about one break: the facts VERIFIED is judged on. */
export interface EvidenceRun {
  readonly run_id: string;
  readonly manifest_key: string;
  readonly manifest_sha256: string;
  /** The run's wall-clock start, ISO-8601 UTC. */
  readonly started_at: string;
  readonly window: WindowText;
  /** The status the run gave the break's control, or null when it did not run that control. */
  readonly control_status: string | null;
  /** True when the run listed the break's (kind, key) among that control's differences. */
  readonly observes: boolean;
}

/**
 * What the configuration and the signer registry say about people, for judging a transition:
 * whether the transition is signed, the registry's name of a signer (undefined: not a signer;
 * absent function: no registry, unsigned mode), the roles, whether CLOSED is countersigned.
 */
export interface TransitionPolicy {
  readonly proof: Exclude<EventProof, 'manifest'>;
  readonly signerName?: (name: string) => string | undefined;
  readonly may?: (signer: string, part: 'owns' | 'approves', controlId: string) => boolean;
  /** The signers who may own or approve for a control (named in a refusal, so the next try can succeed). */
  readonly candidates?: (part: 'owns' | 'approves', controlId: string) => readonly string[];
  readonly closedNeedsApproval: boolean;
  readonly configSha256: string | null;
}

/** Unsigned, no roles, CLOSED without countersignature: the rules of CONTRACT §5 alone. */
export const PLAIN_POLICY: TransitionPolicy = { proof: 'unsigned', closedNeedsApproval: false, configSha256: null };

/** True when a transition to `to` is made in two steps, proposed then countersigned. */
export function needsApproval(to: BreakState, policy: Pick<TransitionPolicy, 'closedNeedsApproval'>): boolean {
  return to === 'CONTAINED' || to === 'CORRECTED' || (to === 'CLOSED' && policy.closedNeedsApproval);
}

/** Trimmed, case-folded identity for comparisons. */
export function identity(name: string): string {
  return name.trim().toLowerCase();
}

const present = (s: string | undefined): s is string => s !== undefined && s.trim() !== '';
const refuse = (rule: TransitionRule, detail?: string): never => {
  throw new TransitionRuleError(rule, detail ? `${TRANSITION_RULES[rule]} (${detail})` : TRANSITION_RULES[rule]);
};

/** The events of the break's current cycle: from its latest OPEN (first opening or reopening) on. */
export function currentCycle(rec: Pick<BreakLog, 'events'>): readonly BreakEvent[] {
  let i = rec.events.length - 1;
  while (i > 0 && rec.events[i].to_state !== 'OPEN') i--;
  return rec.events.slice(i);
}

/** The owner decided at the current cycle's TRIAGED, or null before triage. */
export function currentOwner(rec: Pick<BreakLog, 'events'>): string | null {
  const t = [...currentCycle(rec)].reverse().find((e) => e.to_state === 'TRIAGED');
  return t?.evidence.owner ?? null;
}

/** The classification decided at the current cycle's TRIAGED, or null before triage. */
export function currentClassification(rec: Pick<BreakLog, 'events'>): string | null {
  const t = [...currentCycle(rec)].reverse().find((e) => e.to_state === 'TRIAGED');
  return t?.evidence.classification ?? null;
}

/** The window of the observation that opened (or last reopened) the break. */
export function breakWindow(rec: Pick<BreakLog, 'events'>): WindowText | null {
  return currentCycle(rec)[0].window ?? rec.events.find((e) => e.window)?.window ?? null;
}

function micros(ts: string): bigint {
  const p = parseTimestamp(ts);
  if (!p.ok) throw new Error(`bad timestamp ${ts}: ${p.message}`);
  return p.value;
}

/** True when window `outer` contains window `inner` (both half-open). */
export function covers(outer: WindowText, inner: WindowText): boolean {
  return micros(outer.start) <= micros(inner.start) && micros(outer.end) >= micros(inner.end);
}

/**
 * Judges a person's transition and returns the event to append (CONTRACT §5). `evidenceRun` is
 * the run named by `--evidence-ref` for VERIFIED: undefined when none was looked up, null when
 * the store has no manifest of it. Throws ConcurrencyError('version') when `expected_version` is
 * not the break's version, else TransitionRuleError naming the first rule broken, in the order of
 * TRANSITION_RULES' checks below.
 */
export function planTransition(rec: BreakLog, req: TransitionRequest, evidenceRun: EvidenceRun | null | undefined, now: Date = new Date(), policy: TransitionPolicy = PLAIN_POLICY): BreakEvent {
  if (req.expected_version !== rec.version) {
    throw new ConcurrencyError(`break ${rec.break_id} is at version ${rec.version} (${rec.state}); --expected-version ${req.expected_version} is ${req.expected_version < rec.version ? 'stale: another transition landed first' : 'not a version of this break'}`, 'version');
  }
  const to = req.to;
  if (to === 'OPEN') refuse('REOPEN_BY_RUN_ONLY', `the break is ${rec.state}`);
  const next = NEXT_STATE[rec.state];
  if (to !== next) refuse('ALLOWED_TRANSITIONS', next ? `from ${rec.state} the next state is ${next}, not ${to}` : `${rec.state} is final until a run reopens it`);

  const actor = req.actor.trim();
  if (identity(actor) === RECONCILER) refuse('RECONCILER_RESERVED', `--actor ${actor} cannot make ${to}`);
  if (present(req.approver) && identity(req.approver) === RECONCILER) refuse('RECONCILER_RESERVED', `--approver ${req.approver.trim()}`);

  const owner = currentOwner(rec);
  const classification = currentClassification(rec);
  if (to === 'TRIAGED') {
    if (!present(req.classification) || !isClassification(req.classification.trim())) refuse('TRIAGE_NEEDS_CLASSIFICATION', present(req.classification) ? `got ${req.classification.trim()}` : undefined);
    if (!present(req.owner)) refuse('TRIAGE_NEEDS_OWNER');
    if (identity(req.owner!) === RECONCILER) refuse('RECONCILER_RESERVED', `--owner ${req.owner!.trim()}`);
    checkPerson(policy, 'owns', req.owner!.trim(), rec.control_id);
  } else {
    if (present(req.owner) && (owner === null || identity(req.owner) !== identity(owner))) refuse('TRIAGE_FIELDS_AT_TRIAGE_ONLY', `the owner is ${owner}`);
    if (present(req.classification) && req.classification.trim() !== classification) refuse('TRIAGE_FIELDS_AT_TRIAGE_ONLY', `the classification is ${classification}`);
  }

  if (to === 'CONTAINED' || to === 'CORRECTED' || to === 'CLOSED') {
    if (owner === null || identity(actor) !== identity(owner)) refuse('OWNER_ADVANCES', `the owner is ${owner}, the actor is ${actor}`);
  }
  const dual = needsApproval(to, policy);
  if (dual) {
    if (!present(req.approver)) refuse('DUAL_CONTROL_NEEDS_APPROVER');
    if (identity(req.approver!) === identity(actor)) refuse('DUAL_CONTROL_APPROVER_IS_ACTOR', `actor and approver are both ${actor}`);
    checkPerson(policy, 'approves', req.approver!.trim(), rec.control_id);
  } else if (present(req.approver)) refuse('APPROVER_ONLY_FOR_DUAL_CONTROL', `${to} is made by one person`);

  const proof: Record<string, string> = {};
  if (to === 'VERIFIED') {
    const corrected = [...currentCycle(rec)].reverse().find((e) => e.to_state === 'CORRECTED')!;
    if (identity(corrected.actor) === identity(actor)) refuse('VERIFIER_NOT_CORRECTOR', `${actor} made CORRECTED at version ${corrected.version}`);
    if (!present(req.evidence_ref)) refuse('VERIFY_NEEDS_RUN');
    if (!evidenceRun) refuse('VERIFY_RUN_UNKNOWN', `run ${req.evidence_ref!.trim()}`);
    const run = evidenceRun!;
    if (!(Date.parse(run.started_at) > Date.parse(corrected.at))) refuse('VERIFY_RUN_NOT_AFTER_CORRECTED', `run ${run.run_id} started ${run.started_at}, CORRECTED at ${corrected.at}`);
    const w = breakWindow(rec);
    if (!w || !covers(run.window, w)) refuse('VERIFY_RUN_WINDOW', `run window [${run.window.start}, ${run.window.end}), break window ${w ? `[${w.start}, ${w.end})` : 'unknown'}`);
    if (run.control_status !== 'CLEAN' && run.control_status !== 'BREAKS') refuse('VERIFY_RUN_CONTROL', `${rec.control_id} ${run.control_status === null ? 'was not run' : `was ${run.control_status}`} in run ${run.run_id}`);
    if (run.observes) refuse('VERIFY_RUN_STILL_OBSERVES', `run ${run.run_id} lists ${rec.kind} ${rec.key}`);
    Object.assign(proof, { run_id: run.run_id, manifest_key: run.manifest_key, manifest_sha256: run.manifest_sha256 });
  }
  if (to === 'CLOSED') {
    const missing = (['reason', 'root_cause', 'prevention'] as const).filter((f) => !present(req[f])).map((f) => `--${f.replace('_', '-')}`);
    if (missing.length) refuse('CLOSE_NEEDS_REASON_ROOT_CAUSE_PREVENTION', `missing ${missing.join(', ')}`);
  }

  const evidence: Record<string, string> = {};
  for (const f of ['owner', 'classification', 'approver', 'note', 'evidence_ref', 'reason', 'root_cause', 'prevention'] as const) {
    if (present(req[f])) evidence[f] = req[f]!.trim();
  }
  // A registry spells a signer one way: owner and approver are recorded in its spelling.
  for (const f of ['owner', 'approver'] as const) if (evidence[f] && policy.signerName) evidence[f] = policy.signerName(evidence[f]) ?? evidence[f];
  Object.assign(evidence, proof);
  return {
    format: FORMATS.event,
    break_id: rec.break_id, version: rec.version + 1, expected_version: rec.version, previous_event_sha256: rec.head_sha256,
    control_id: rec.control_id, kind: rec.kind, key: rec.key,
    from_state: rec.state, to_state: to, actor, at: now.toISOString(), evidence,
    proof: policy.proof, dual_control: dual, config_sha256: policy.configSha256,
  };
}

/** Refuses an owner or approver who is not a signer of the registry, or whose roles do not allow it. */
function checkPerson(policy: TransitionPolicy, part: 'owns' | 'approves', name: string, controlId: string): void {
  const signer = policy.signerName ? policy.signerName(name) : name;
  const who = policy.candidates?.(part, controlId);
  const may = who ? `; who may ${part === 'owns' ? 'own' : 'approve for'} ${controlId}: ${who.join(', ') || 'no signer'}` : '';
  if (signer === undefined) refuse(part === 'owns' ? 'OWNER_NOT_A_SIGNER' : 'APPROVER_NOT_A_SIGNER', `${name} is not in the signer registry${may}`);
  if (policy.may && !policy.may(signer!, part, controlId)) refuse(part === 'owns' ? 'ROLE_MAY_NOT_OWN' : 'ROLE_MAY_NOT_APPROVE', `${signer} for ${controlId}${may}`);
}

/** Who is countersigning: the registry's name of the key, and the key's fingerprint (null unsigned). */
export interface Approver {
  readonly name: string;
  readonly key: string | null;
}

/**
 * Decides whether `approver` may countersign `proposal` of break `rec` now: the proposal must be
 * current (its version the next one and its previous digest the head's), not withdrawn, younger
 * than `maxAgeS`; the approver must not be the proposer, by name or by key, must be the approver
 * the proposal names, and must be allowed by the roles. Throws TransitionRuleError naming the rule,
 * or ConcurrencyError (exit 6) when this very proposal has landed already (another approval won)
 * or another event took its version (tookVersion).
 * (The proposer's signature is checked by the caller, signing/signatures.ts verifyRecord.)
 */
export function judgeApproval(rec: BreakLog, proposal: StoredProposal, approver: Approver, policy: TransitionPolicy, maxAgeS: number, now: Date = new Date()): void {
  const p = proposal.event;
  if (rec.stored[p.version - 1]?.object.digest === proposal.object.digest) throw landedFirst(rec, p.version, approver.name);
  if (p.version <= rec.version) throw tookVersion(rec, p.version);
  if (p.version !== rec.version + 1 || p.previous_event_sha256 !== rec.head_sha256) {
    refuse('PROPOSAL_NOT_CURRENT', `it is for version ${p.version}; the break is ${rec.state} at version ${rec.version}`);
  }
  if (proposal.withdrawal) refuse('PROPOSAL_WITHDRAWN', `by ${proposal.withdrawal.actor} at ${proposal.withdrawal.at}`);
  if (now.getTime() - Date.parse(p.at) > maxAgeS * 1000) refuse('PROPOSAL_EXPIRED', `proposed at ${p.at}, ${maxAgeS} s allowed`);
  if (identity(approver.name) === RECONCILER) refuse('RECONCILER_RESERVED', `${approver.name} cannot approve`);
  if (identity(approver.name) === identity(p.actor)) refuse('APPROVER_IS_PROPOSER', `${approver.name} proposed it`);
  const proposerKey = proposal.object.signatures.find((s) => s.role === 'actor')?.key;
  if (approver.key !== null && proposerKey !== undefined && approver.key === proposerKey) refuse('DUAL_CONTROL_SAME_KEY', `${p.actor} and ${approver.name} both sign with ${approver.key}`);
  const designated = p.evidence.approver;
  if (designated && identity(designated) !== identity(approver.name)) refuse('APPROVER_NOT_DESIGNATED', `it names ${designated}, not ${approver.name}`);
  if (policy.may && !policy.may(approver.name, 'approves', rec.control_id)) refuse('ROLE_MAY_NOT_APPROVE', `${approver.name} for ${rec.control_id}`);
}

/**
 * The approval that lost the race for its version: the same proposal was countersigned first
 * (ConcurrencyError 'version', exit 6, as for a stale --expected-version), by another approver or
 * by `approver` itself (a repeated approval: said so, nothing is left to do). A different event found
 * in that version makes the proposal superseded instead (PROPOSAL_NOT_CURRENT, exit 2).
 */
function landedFirst(rec: Pick<BreakLog, 'break_id' | 'stored'>, version: number, approver: string): ConcurrencyError {
  const landed = rec.stored[version - 1];
  const by = landed?.object.signatures.find((s) => s.role === 'approver')?.signer;
  if (by !== undefined && identity(by) === identity(approver)) return new ConcurrencyError(`break ${rec.break_id}: version ${version} already landed with ${by}'s countersignature of this proposal (yours): nothing is left to do`, 'version');
  return new ConcurrencyError(`break ${rec.break_id}: version ${version} already landed: this proposal was countersigned${by ? ` by ${by}` : ''} first (another approval won the race)`, 'version');
}

/**
 * The approval of a proposal whose version another event took first (a rival proposal
 * countersigned, a direct step, a run's reopening): the transition expected that version and
 * another landed first, so it lost the race (CONTRACT §5 and §7: exit 6), whether the approver read
 * the log before or after the other event landed; the two cannot be told apart afterwards.
 */
function tookVersion(rec: Pick<BreakLog, 'break_id' | 'stored' | 'state' | 'version'>, version: number): ConcurrencyError {
  const e = rec.stored[version - 1]?.event;
  const what = e ? `${e.to_state} by ${e.actor}` : 'another event';
  return new ConcurrencyError(`break ${rec.break_id}: version ${version} already landed (${what}): this proposal expected it and is no longer current (PROPOSAL_NOT_CURRENT); the break is ${rec.state} at version ${rec.version}`, 'version');
}

/** How a proposal stands now: pending, approved (its event landed), withdrawn, superseded (the break moved on) or expired. */
export type ProposalStatus = 'pending' | 'approved' | 'withdrawn' | 'superseded' | 'expired';

/** The status of `proposal` against the break's log, with proposals older than `maxAgeS` expired. */
export function proposalStatus(rec: Pick<BreakLog, 'version' | 'stored' | 'head_sha256'>, proposal: StoredProposal, maxAgeS: number, now: Date = new Date()): ProposalStatus {
  const v = proposal.event.version;
  const landed = rec.stored[v - 1];
  if (landed && landed.object.digest === proposal.object.digest) return 'approved';
  if (proposal.withdrawal) return 'withdrawn';
  if (rec.version + 1 !== v || rec.head_sha256 !== proposal.event.previous_event_sha256) return 'superseded';
  if (now.getTime() - Date.parse(proposal.event.at) > maxAgeS * 1000) return 'expired';
  return 'pending';
}

/**
 * Looks up the run named as VERIFIED evidence: its published manifest, and what it says about the
 * break's control and difference. Returns null when the id is not a run id or the store holds no
 * readable manifest of it.
 */
export async function findEvidenceRun(store: ObjectStore, runId: string, rec: Pick<BreakLog, 'control_id' | 'kind' | 'key'>): Promise<EvidenceRun | null> {
  const id = runId.trim();
  if (!/^[a-z0-9_-]+$/.test(id)) return null;
  let found;
  try { found = await findManifest(store, id); } catch { return null; }
  if (!found || found.manifest.run_id !== id) return null;
  const m = found.manifest;
  const result = m.results.find((r) => r.control_id === rec.control_id);
  return {
    run_id: id, manifest_key: found.key, manifest_sha256: found.sha256, started_at: m.started_at, window: m.window,
    control_status: result?.status ?? null,
    observes: result?.differences.some((d) => d.kind === rec.kind && d.key === rec.key) ?? false,
  };
}
