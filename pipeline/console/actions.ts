/**
 * The console's actions (issue 22): the same library calls the CLI's `breaks advance`, `approve`
 * and `withdraw` make (breaks/actions.ts), signed with the console's key — one code path for a
 * transition. Before a call the console checks the version its page saw against the break's
 * current one, so a stale page gets the lost-race message and writes nothing; the library checks
 * it again (and a write-once put settles two writers of one version).
 *
 * What is available now is judged by the same pure rules (transitions.ts): a dry run of
 * planTransition / judgeApproval as this operator, with placeholder values for the fields the
 * form asks for, tells whether the step can be made and, if not, the rule that says why.
 */
import { advanceBreak, approveProposal, policyOf, withdrawProposal, type ActionResult } from '../breaks/actions.js';
import type { BreakRecord, StoredProposal } from '../breaks/break-store.js';
import { CLASSIFICATIONS, NEXT_STATE, type BreakState } from '../breaks/states.js';
import { findEvidenceRun, judgeApproval, needsApproval, planTransition, proposalStatus, TRANSITION_RULES, type TransitionRequest } from '../breaks/transitions.js';
import { signerMay } from '../config/config.js';
import { ConcurrencyError, ReckonError, TransitionRuleError } from '../core/errors.js';
import type { ConsoleState } from './state.js';

/** Rules that only say a form field is still empty: the step is available, the form asks for it. */
const FIELD_RULES = new Set(['VERIFY_NEEDS_RUN', 'VERIFY_RUN_UNKNOWN', 'CLOSE_NEEDS_REASON_ROOT_CAUSE_PREVENTION']);

/** Why this console cannot write at all now, or null. */
export function cannotWrite(state: ConsoleState): string | null {
  if (state.readOnly) return state.readOnly;
  if (state.verification.status === 'failed') return 'the store fails verification (see Store check)';
  if (state.verification.status === 'running') return 'the store is still being verified';
  return null;
}

/** Signers who may take `part` for `controlId` (the registry's names, filtered by the roles). */
export function peopleFor(state: ConsoleState, part: 'owns' | 'approves', controlId: string, except?: string): string[] {
  const names = state.registry?.signers() ?? [];
  return names.filter((n) => n.toLowerCase() !== 'reconciler' && signerMay(state.config.config, n, part, controlId) && n.toLowerCase() !== except?.toLowerCase());
}

/** The next step of a break as this operator sees it: the target state, and why it cannot be taken (null: available). */
export interface NextStep {
  readonly to: BreakState | null;
  readonly dual: boolean;
  readonly why: string | null;
  readonly owners: readonly string[];
  readonly approvers: readonly string[];
}

/** Judges the next step of `rec` for this console's operator by a dry run of the transition rules. */
export function nextStep(state: ConsoleState, rec: BreakRecord): NextStep {
  const to = NEXT_STATE[rec.state];
  const policy = policyOf(state.act);
  const dual = to !== null && needsApproval(to, policy);
  const owners = to === 'TRIAGED' ? peopleFor(state, 'owns', rec.control_id) : [];
  const approvers = dual ? peopleFor(state, 'approves', rec.control_id, state.actor?.name) : [];
  const base = { to, dual, owners, approvers };
  if (to === null) return { ...base, why: `${rec.state} is final: only a run that observes the difference again reopens it` };
  const blocked = cannotWrite(state);
  if (blocked) return { ...base, why: blocked };
  if (to === 'TRIAGED' && owners.length === 0) return { ...base, why: 'no signer may own breaks of this control (signing.roles)' };
  if (dual && approvers.length === 0) return { ...base, why: 'no other signer may approve breaks of this control (signing.roles)' };
  const req: TransitionRequest = {
    to, actor: state.actor!.name, expected_version: rec.version,
    owner: to === 'TRIAGED' ? owners[0] : undefined, classification: to === 'TRIAGED' ? CLASSIFICATIONS[0] : undefined,
    approver: dual ? approvers[0] : undefined,
  };
  try {
    planTransition(rec, req, null, new Date(), policy);
    return { ...base, why: null };
  } catch (e) {
    if (e instanceof TransitionRuleError && FIELD_RULES.has(e.rule)) return { ...base, why: null };
    return { ...base, why: (e as Error).message };
  }
}

/** Whether this operator may countersign or withdraw `p` now, and why not. */
export function proposalChoices(state: ConsoleState, rec: BreakRecord, p: StoredProposal): { status: string; approveWhy: string | null; withdrawWhy: string | null } {
  const status = proposalStatus(rec, p, state.config.config.signing.proposal_max_age_s);
  const blocked = cannotWrite(state);
  const me = state.actor;
  let approveWhy: string | null = blocked ?? (status !== 'pending' ? `the proposal is ${status}` : null);
  if (!approveWhy && me) {
    try { judgeApproval(rec, p, { name: me.name, key: state.act.signer ? me.key : null }, policyOf(state.act), state.config.config.signing.proposal_max_age_s); } catch (e) { approveWhy = (e as Error).message; }
  }
  let withdrawWhy: string | null = blocked ?? (status !== 'pending' && status !== 'expired' ? `the proposal is ${status}` : null);
  if (!withdrawWhy && me && me.name.toLowerCase() !== p.event.actor.toLowerCase()) withdrawWhy = `${TRANSITION_RULES.WITHDRAW_BY_PROPOSER} (${p.event.actor} proposed it)`;
  return { status, approveWhy, withdrawWhy };
}

/** What an action came to, for the page that follows it. */
export type Outcome =
  | { readonly kind: 'done'; readonly result: ActionResult }
  | { readonly kind: 'withdrawn'; readonly key: string }
  | { readonly kind: 'lost-race'; readonly message: string }
  | { readonly kind: 'refused'; readonly message: string };

/** A lost race: the page was made at `seen`, the break is now at `rec.version`. */
function stale(rec: BreakRecord, seen: number): Outcome {
  return { kind: 'lost-race', message: `This break moved on while you were looking: your page showed version ${seen}, it is now ${rec.state} at version ${rec.version}. Nothing was written; reload the break and decide again.` };
}

async function guarded(run: () => Promise<Outcome>): Promise<Outcome> {
  try { return await run(); } catch (e) {
    if (e instanceof ConcurrencyError) return { kind: 'lost-race', message: `Another change landed first: ${e.message}. Nothing was written; reload the break and decide again.` };
    if (e instanceof ReckonError) return { kind: 'refused', message: e.message };
    throw e;
  }
}

/** Form fields of an advance. */
export type AdvanceForm = Readonly<Partial<Record<'to' | 'owner' | 'classification' | 'approver' | 'note' | 'evidence_ref' | 'reason' | 'root_cause' | 'prevention', string>>>;

/** Advances `rec` (or proposes its dual-control step) as the console's operator, expecting version `seen`. */
export async function advance(state: ConsoleState, rec: BreakRecord, seen: number, form: AdvanceForm): Promise<Outcome> {
  const blocked = cannotWrite(state);
  if (blocked) return { kind: 'refused', message: blocked };
  if (rec.version !== seen) return stale(rec, seen);
  return guarded(async () => {
    const to = (form.to ?? '').toUpperCase() as BreakState;
    const req: TransitionRequest = {
      to, actor: state.actor!.name, expected_version: seen, owner: form.owner, classification: form.classification?.toUpperCase(),
      approver: form.approver, note: form.note, evidence_ref: form.evidence_ref, reason: form.reason, root_cause: form.root_cause, prevention: form.prevention,
    };
    const evidenceRun = to === 'VERIFIED' && form.evidence_ref?.trim() ? await findEvidenceRun(state.store, form.evidence_ref, rec) : undefined;
    return { kind: 'done', result: await advanceBreak(state.act, rec, req, evidenceRun) };
  });
}

/** Countersigns the proposal `digest` for `version`, expecting the break at version `seen`. */
export async function approve(state: ConsoleState, rec: BreakRecord, seen: number, version: number, digest: string): Promise<Outcome> {
  const blocked = cannotWrite(state);
  if (blocked) return { kind: 'refused', message: blocked };
  if (rec.version !== seen) return stale(rec, seen);
  return guarded(async () => ({ kind: 'done', result: await approveProposal(state.act, rec, version, { proposal: digest, actor: state.actor!.name }) }));
}

/** Withdraws the proposal `digest` for `version` (its proposer only). */
export async function withdraw(state: ConsoleState, rec: BreakRecord, version: number, digest: string, note: string | undefined): Promise<Outcome> {
  const blocked = cannotWrite(state);
  if (blocked) return { kind: 'refused', message: blocked };
  return guarded(async () => ({ kind: 'withdrawn', key: (await withdrawProposal(state.act, rec, version, { proposal: digest, actor: state.actor!.name, note })).key }));
}
