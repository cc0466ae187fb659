/**
 * Table-driven test of the break state machine (CONTRACT §5): every (from, to) pair of states, and
 * every rule of a person's transition and of countersigning a proposal (issue 17), with the rule a
 * refusal names. One row per case; the last test checks that every rule in TRANSITION_RULES is
 * exercised by some row (WITHDRAW_BY_PROPOSER, a rule of writing a withdrawal, in
 * test/breaks-signed.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { selectProposal } from '../pipeline/breaks/actions.js';
import { FORMATS, payloadDigest, payloadOf, type DecodedObject } from '../pipeline/breaks/break-objects.js';
import type { BreakEvent, BreakRecord, StoredProposal } from '../pipeline/breaks/break-store.js';
import { BREAK_STATES, CLASSIFICATIONS, NEXT_STATE, type BreakState } from '../pipeline/breaks/states.js';
import {
  judgeApproval, planTransition, proposalStatus, PLAIN_POLICY, TRANSITION_RULES,
  type Approver, type EvidenceRun, type TransitionPolicy, type TransitionRequest, type TransitionRule,
} from '../pipeline/breaks/transitions.js';
import { ConcurrencyError, TransitionRuleError } from '../pipeline/core/errors.js';
import { ExitCode, exitCodeOf } from '../pipeline/core/outcome.js';

const ID = 'brk-000000000000000000000001';
const WINDOW = { start: '2026-11-02T00:00:00Z', end: '2026-11-03T00:00:00Z' };
const CORRECTED_AT = '2026-11-04T10:00:00.000Z';
const NOW = new Date('2026-11-05T12:00:00.000Z');

/** People of the scenario: tom triages, olivia owns, amy approves, vera verifies. */
const PATH: Record<Exclude<BreakState, 'OPEN'>, { actor: string; evidence: Record<string, string>; at: string }> = {
  TRIAGED: { actor: 'tom', evidence: { owner: 'olivia', classification: 'VALUE' }, at: '2026-11-04T08:00:00.000Z' },
  CONTAINED: { actor: 'olivia', evidence: { approver: 'amy', note: 'no containment needed: no outbound effect' }, at: '2026-11-04T09:00:00.000Z' },
  CORRECTED: { actor: 'olivia', evidence: { approver: 'amy', evidence_ref: 'PS-1 reversal' }, at: CORRECTED_AT },
  VERIFIED: { actor: 'reconciler', evidence: { run_id: 'run-x', manifest_sha256: 'a'.repeat(64) }, at: '2026-11-04T11:00:00.000Z' },
  CLOSED: { actor: 'olivia', evidence: { reason: 'r', root_cause: 'c', prevention: 'p' }, at: '2026-11-04T12:00:00.000Z' },
};

/** A break that went the normal path up to `state` (optionally reopened before, with earlier owner 'oscar'). */
function record(state: BreakState, opts: { reopened?: boolean } = {}): BreakRecord {
  const events: BreakEvent[] = [];
  const base = { break_id: ID, control_id: 'RC06', kind: 'NOTICE_UNDELIVERED', key: 'INT-2' };
  const push = (to: BreakState, actor: string, at: string, evidence: Record<string, string>, extra: Partial<BreakEvent> = {}) =>
    events.push({ ...base, version: events.length + 1, expected_version: events.length, from_state: events.length ? events[events.length - 1].to_state : null, to_state: to, actor, at, evidence, ...extra });
  const open = (at: string) => push('OPEN', 'reconciler', at, { detail: 'd' }, { window: WINDOW, record_time: '2026-11-02T10:00:00.000001Z' });
  if (opts.reopened) {
    open('2026-11-03T00:10:00.000Z');
    push('TRIAGED', 'tom', '2026-11-03T01:00:00.000Z', { owner: 'oscar', classification: 'MISSING' });
    push('CONTAINED', 'oscar', '2026-11-03T02:00:00.000Z', { approver: 'amy' });
    push('CORRECTED', 'oscar', '2026-11-03T03:00:00.000Z', { approver: 'amy' });
    push('VERIFIED', 'reconciler', '2026-11-03T04:00:00.000Z', {});
  }
  open('2026-11-04T00:10:00.000Z');
  for (const s of BREAK_STATES.slice(1, BREAK_STATES.indexOf(state) + 1) as Exclude<BreakState, 'OPEN'>[]) push(s, PATH[s].actor, PATH[s].at, PATH[s].evidence);
  const last = events[events.length - 1];
  const stored = events.map((e, i) => ({ event: e, object: objectOf(`breaks/${ID}/events/${String(i + 1).padStart(6, '0')}.json`, e) }));
  return { ...base, state: last.to_state, version: last.version, events, stored, head_sha256: stored[stored.length - 1].object.digest, observations: [], proposals: [] };
}

/** A stored object of `body`, signed (in name) by `signers`: role and key fingerprint. */
function objectOf(key: string, body: object, signers: [string, string][] = []): DecodedObject {
  const payload = payloadOf(body);
  return {
    key, format: 'v2', payload, digest: payloadDigest(payload), body: body as Record<string, unknown>, binding: null,
    signatures: signers.map(([role, k]) => ({ role: role as 'actor', signer: '', key: k, namespace: 'reckon-break', registry_sha256: 'c'.repeat(64), signed_at: '', sshsig: '' })),
  };
}

/** A valid request for the one allowed move out of `from`. */
function validRequest(from: BreakState, version: number): TransitionRequest {
  const to = NEXT_STATE[from] ?? 'OPEN';
  const base = { to, expected_version: version };
  switch (to) {
    case 'TRIAGED': return { ...base, actor: 'tom', owner: 'olivia', classification: 'VALUE' };
    case 'CONTAINED': return { ...base, actor: 'olivia', approver: 'amy', note: 'frozen outbound notices' };
    case 'CORRECTED': return { ...base, actor: 'olivia', approver: 'amy', evidence_ref: 'RCP-2 resent' };
    case 'VERIFIED': return { ...base, actor: 'vera', evidence_ref: 'run-good' };
    case 'CLOSED': return { ...base, actor: 'olivia', reason: 'provider outage', root_cause: 'FAILED receipt not retried', prevention: 'retry policy RP-7' };
    default: return { ...base, actor: 'olivia' };
  }
}

/** Signed mode: tom, olivia, amy and vera are signers; olivia owns RC06, amy and vera approve it. */
const SIGNED: Partial<TransitionPolicy> = {
  proof: 'signed',
  signerName: (n) => ['tom', 'olivia', 'amy', 'vera'].find((s) => s === n.trim().toLowerCase()),
  may: (signer, part) => (part === 'owns' ? signer === 'olivia' : signer === 'amy' || signer === 'vera'),
};

const GOOD_RUN: EvidenceRun = {
  run_id: 'run-good', manifest_key: 'manifests/00000002-run-good.json', manifest_sha256: 'b'.repeat(64),
  started_at: '2026-11-04T10:00:00.001Z', window: WINDOW, control_status: 'CLEAN', observes: false,
};

type Outcome = 'ok' | TransitionRule | 'STALE';
interface Row {
  readonly name: string;
  readonly from: BreakState;
  readonly req: Partial<TransitionRequest> & { to: BreakState };
  readonly run?: EvidenceRun | null;
  readonly reopened?: boolean;
  readonly policy?: Partial<TransitionPolicy>;
  readonly expect: Outcome;
}

const rulesHit = new Set<string>();

function judge(row: Row): { outcome: Outcome; event?: BreakEvent } {
  const rec = record(row.from, { reopened: row.reopened });
  const req = { ...validRequest(row.from, rec.version), ...row.req } as TransitionRequest;
  const run = row.run === undefined ? (req.to === 'VERIFIED' && req.evidence_ref ? GOOD_RUN : undefined) : row.run;
  try {
    return { outcome: 'ok', event: planTransition(rec, req, run, NOW, { ...PLAIN_POLICY, ...row.policy }) };
  } catch (e) {
    if (e instanceof TransitionRuleError) { rulesHit.add(e.rule); expect(exitCodeOf(e)).toBe(ExitCode.USAGE); expect(e.message.startsWith(`${e.rule}: `)).toBe(true); return { outcome: e.rule as TransitionRule }; }
    if (e instanceof ConcurrencyError) { expect(e.kind).toBe('version'); expect(exitCodeOf(e)).toBe(ExitCode.TRANSITION_LOST); return { outcome: 'STALE' }; }
    throw e;
  }
}

// Every (from, to) pair: the next state in order is allowed; OPEN only by a run; anything else refused.
const PAIRS: Row[] = BREAK_STATES.flatMap((from) => BREAK_STATES.map((to): Row => ({
  name: `${from} → ${to}`, from, req: { to },
  expect: to === NEXT_STATE[from] ? 'ok' : to === 'OPEN' ? 'REOPEN_BY_RUN_ONLY' : 'ALLOWED_TRANSITIONS',
})));

const RULES: Row[] = [
  // version: checked before any rule, so the loser of a race always gets exit 6
  { name: 'stale expected version', from: 'TRIAGED', req: { to: 'CONTAINED', expected_version: 1 }, expect: 'STALE' },
  { name: 'expected version ahead of the log', from: 'OPEN', req: { to: 'TRIAGED', expected_version: 7 }, expect: 'STALE' },
  { name: 'stale version wins over a broken rule', from: 'OPEN', req: { to: 'CLOSED', expected_version: 0 }, expect: 'STALE' },
  // TRIAGED
  ...CLASSIFICATIONS.map((c): Row => ({ name: `TRIAGED with classification ${c}`, from: 'OPEN', req: { to: 'TRIAGED', classification: c }, expect: 'ok' })),
  { name: 'TRIAGED without classification', from: 'OPEN', req: { to: 'TRIAGED', classification: undefined }, expect: 'TRIAGE_NEEDS_CLASSIFICATION' },
  { name: 'TRIAGED with an unknown classification', from: 'OPEN', req: { to: 'TRIAGED', classification: 'FRAUD' }, expect: 'TRIAGE_NEEDS_CLASSIFICATION' },
  { name: 'TRIAGED with a blank classification', from: 'OPEN', req: { to: 'TRIAGED', classification: '  ' }, expect: 'TRIAGE_NEEDS_CLASSIFICATION' },
  { name: 'TRIAGED without owner', from: 'OPEN', req: { to: 'TRIAGED', owner: undefined }, expect: 'TRIAGE_NEEDS_OWNER' },
  { name: 'TRIAGED by the future owner', from: 'OPEN', req: { to: 'TRIAGED', actor: 'olivia' }, expect: 'ok' },
  { name: 'TRIAGED with reconciler as owner', from: 'OPEN', req: { to: 'TRIAGED', owner: 'Reconciler' }, expect: 'RECONCILER_RESERVED' },
  { name: 'TRIAGED by reconciler', from: 'OPEN', req: { to: 'TRIAGED', actor: 'reconciler' }, expect: 'RECONCILER_RESERVED' },
  { name: 'TRIAGED again after a reopening needs an owner again', from: 'OPEN', reopened: true, req: { to: 'TRIAGED', owner: undefined }, expect: 'TRIAGE_NEEDS_OWNER' },
  // owner advances after TRIAGED
  { name: 'CONTAINED by someone who is not the owner', from: 'TRIAGED', req: { to: 'CONTAINED', actor: 'tom' }, expect: 'OWNER_ADVANCES' },
  { name: 'CONTAINED by the owner written in another case', from: 'TRIAGED', req: { to: 'CONTAINED', actor: ' Olivia ' }, expect: 'ok' },
  { name: 'CORRECTED by someone who is not the owner', from: 'CONTAINED', req: { to: 'CORRECTED', actor: 'amy', approver: 'olivia' }, expect: 'OWNER_ADVANCES' },
  { name: 'CLOSED by someone who is not the owner', from: 'VERIFIED', req: { to: 'CLOSED', actor: 'vera' }, expect: 'OWNER_ADVANCES' },
  { name: 'CLOSED by reconciler', from: 'VERIFIED', req: { to: 'CLOSED', actor: 'reconciler' }, expect: 'RECONCILER_RESERVED' },
  { name: 'owner of an earlier cycle cannot advance after re-triage', from: 'TRIAGED', reopened: true, req: { to: 'CONTAINED', actor: 'oscar' }, expect: 'OWNER_ADVANCES' },
  { name: 'owner cannot change after TRIAGED', from: 'TRIAGED', req: { to: 'CONTAINED', owner: 'tom' }, expect: 'TRIAGE_FIELDS_AT_TRIAGE_ONLY' },
  { name: 'repeating the same owner is accepted', from: 'TRIAGED', req: { to: 'CONTAINED', owner: 'olivia' }, expect: 'ok' },
  { name: 'classification cannot change after TRIAGED', from: 'CONTAINED', req: { to: 'CORRECTED', classification: 'TIMING' }, expect: 'TRIAGE_FIELDS_AT_TRIAGE_ONLY' },
  // dual control
  { name: 'CONTAINED without approver', from: 'TRIAGED', req: { to: 'CONTAINED', approver: undefined }, expect: 'DUAL_CONTROL_NEEDS_APPROVER' },
  { name: 'CONTAINED approved by the actor', from: 'TRIAGED', req: { to: 'CONTAINED', approver: 'OLIVIA' }, expect: 'DUAL_CONTROL_APPROVER_IS_ACTOR' },
  { name: 'CONTAINED approved by reconciler', from: 'TRIAGED', req: { to: 'CONTAINED', approver: 'reconciler' }, expect: 'RECONCILER_RESERVED' },
  { name: 'CORRECTED without approver', from: 'CONTAINED', req: { to: 'CORRECTED', approver: '' }, expect: 'DUAL_CONTROL_NEEDS_APPROVER' },
  { name: 'CORRECTED approved by the actor', from: 'CONTAINED', req: { to: 'CORRECTED', approver: 'olivia' }, expect: 'DUAL_CONTROL_APPROVER_IS_ACTOR' },
  { name: 'CORRECTED by reconciler', from: 'CONTAINED', req: { to: 'CORRECTED', actor: 'reconciler' }, expect: 'RECONCILER_RESERVED' },
  // VERIFIED
  { name: 'VERIFIED by the corrector', from: 'CORRECTED', req: { to: 'VERIFIED', actor: 'olivia' }, expect: 'VERIFIER_NOT_CORRECTOR' },
  { name: 'VERIFIED by the approver of the correction', from: 'CORRECTED', req: { to: 'VERIFIED', actor: 'amy' }, expect: 'ok' },
  // No person acts as reconciler (issue 17): the pipeline verifies inside its run, proven by its manifest.
  { name: 'VERIFIED by reconciler with a run', from: 'CORRECTED', req: { to: 'VERIFIED', actor: 'reconciler' }, expect: 'RECONCILER_RESERVED' },
  { name: 'VERIFIED without a run', from: 'CORRECTED', req: { to: 'VERIFIED', evidence_ref: undefined }, expect: 'VERIFY_NEEDS_RUN' },
  { name: 'VERIFIED by reconciler without a run', from: 'CORRECTED', req: { to: 'VERIFIED', actor: 'reconciler', evidence_ref: undefined }, expect: 'RECONCILER_RESERVED' },
  { name: 'VERIFIED with a run the store does not hold', from: 'CORRECTED', req: { to: 'VERIFIED', evidence_ref: 'run-nope' }, run: null, expect: 'VERIFY_RUN_UNKNOWN' },
  { name: 'VERIFIED with a run that started before CORRECTED', from: 'CORRECTED', req: { to: 'VERIFIED' }, run: { ...GOOD_RUN, started_at: '2026-11-04T09:59:59.999Z' }, expect: 'VERIFY_RUN_NOT_AFTER_CORRECTED' },
  { name: 'VERIFIED with a run that started at the CORRECTED instant', from: 'CORRECTED', req: { to: 'VERIFIED' }, run: { ...GOOD_RUN, started_at: CORRECTED_AT }, expect: 'VERIFY_RUN_NOT_AFTER_CORRECTED' },
  { name: 'VERIFIED with a run of a window that misses the break window end', from: 'CORRECTED', req: { to: 'VERIFIED' }, run: { ...GOOD_RUN, window: { start: WINDOW.start, end: '2026-11-02T23:59:59.999999Z' } }, expect: 'VERIFY_RUN_WINDOW' },
  { name: 'VERIFIED with a run of the next window', from: 'CORRECTED', req: { to: 'VERIFIED' }, run: { ...GOOD_RUN, window: { start: WINDOW.end, end: '2026-11-04T00:00:00Z' } }, expect: 'VERIFY_RUN_WINDOW' },
  { name: 'VERIFIED with a run of a wider window', from: 'CORRECTED', req: { to: 'VERIFIED' }, run: { ...GOOD_RUN, window: { start: '2026-11-01T00:00:00Z', end: '2026-11-04T00:00:00Z' } }, expect: 'ok' },
  { name: 'VERIFIED with a run that did not run the control', from: 'CORRECTED', req: { to: 'VERIFIED' }, run: { ...GOOD_RUN, control_status: null }, expect: 'VERIFY_RUN_CONTROL' },
  { name: 'VERIFIED with a run where the control was NOT_READY', from: 'CORRECTED', req: { to: 'VERIFIED' }, run: { ...GOOD_RUN, control_status: 'NOT_READY' }, expect: 'VERIFY_RUN_CONTROL' },
  { name: 'VERIFIED with a run where the control was INCOMPLETE', from: 'CORRECTED', req: { to: 'VERIFIED' }, run: { ...GOOD_RUN, control_status: 'INCOMPLETE' }, expect: 'VERIFY_RUN_CONTROL' },
  { name: 'VERIFIED with a run (BREAKS elsewhere) that no longer observes it', from: 'CORRECTED', req: { to: 'VERIFIED' }, run: { ...GOOD_RUN, control_status: 'BREAKS' }, expect: 'ok' },
  { name: 'VERIFIED with a run that still observes it', from: 'CORRECTED', req: { to: 'VERIFIED' }, run: { ...GOOD_RUN, control_status: 'BREAKS', observes: true }, expect: 'VERIFY_RUN_STILL_OBSERVES' },
  // CLOSED
  { name: 'CLOSED without reason', from: 'VERIFIED', req: { to: 'CLOSED', reason: undefined }, expect: 'CLOSE_NEEDS_REASON_ROOT_CAUSE_PREVENTION' },
  { name: 'CLOSED without root cause', from: 'VERIFIED', req: { to: 'CLOSED', root_cause: ' ' }, expect: 'CLOSE_NEEDS_REASON_ROOT_CAUSE_PREVENTION' },
  { name: 'CLOSED without prevention', from: 'VERIFIED', req: { to: 'CLOSED', prevention: undefined }, expect: 'CLOSE_NEEDS_REASON_ROOT_CAUSE_PREVENTION' },
  // issue 17: who may be named, and which steps are countersigned
  { name: 'an approver on a step made by one person', from: 'OPEN', req: { to: 'TRIAGED', approver: 'amy' }, expect: 'APPROVER_ONLY_FOR_DUAL_CONTROL' },
  { name: 'CLOSED with an approver when the configuration does not countersign CLOSED', from: 'VERIFIED', req: { to: 'CLOSED', approver: 'amy' }, expect: 'APPROVER_ONLY_FOR_DUAL_CONTROL' },
  { name: 'CLOSED without approver when the configuration countersigns CLOSED', from: 'VERIFIED', req: { to: 'CLOSED' }, policy: { closedNeedsApproval: true }, expect: 'DUAL_CONTROL_NEEDS_APPROVER' },
  { name: 'CLOSED approved by the owner when CLOSED is countersigned', from: 'VERIFIED', req: { to: 'CLOSED', approver: 'olivia' }, policy: { closedNeedsApproval: true }, expect: 'DUAL_CONTROL_APPROVER_IS_ACTOR' },
  { name: 'CLOSED with an approver when CLOSED is countersigned', from: 'VERIFIED', req: { to: 'CLOSED', approver: 'amy' }, policy: { closedNeedsApproval: true }, expect: 'ok' },
  { name: 'TRIAGED naming an owner who is not a signer', from: 'OPEN', req: { to: 'TRIAGED', owner: 'mallory' }, policy: SIGNED, expect: 'OWNER_NOT_A_SIGNER' },
  { name: 'CONTAINED naming an approver who is not a signer', from: 'TRIAGED', req: { to: 'CONTAINED', approver: 'mallory' }, policy: SIGNED, expect: 'APPROVER_NOT_A_SIGNER' },
  { name: 'TRIAGED naming an owner whose roles do not own the control', from: 'OPEN', req: { to: 'TRIAGED', owner: 'amy' }, policy: SIGNED, expect: 'ROLE_MAY_NOT_OWN' },
  { name: 'CORRECTED naming an approver whose roles do not approve the control', from: 'CONTAINED', req: { to: 'CORRECTED', approver: 'tom' }, policy: SIGNED, expect: 'ROLE_MAY_NOT_APPROVE' },
  { name: 'signed: owner and approver recorded in the registry\'s spelling', from: 'OPEN', req: { to: 'TRIAGED', owner: 'OLIVIA' }, policy: SIGNED, expect: 'ok' },
];

describe('a refused owner or approver: the refusal names who may', () => {
  const withCandidates = { ...PLAIN_POLICY, ...SIGNED, candidates: (part: 'owns' | 'approves') => (part === 'owns' ? ['olivia'] : ['amy', 'vera']) };
  const refusal = (from: BreakState, req: Partial<TransitionRequest> & { to: BreakState }) => {
    const rec = record(from);
    try { planTransition(rec, { ...validRequest(from, rec.version), ...req } as TransitionRequest, undefined, NOW, withCandidates); } catch (e) { return (e as Error).message; }
    return 'accepted';
  };
  it('a team name where a signer is needed, and a signer whose roles do not own the control', () => {
    expect(refusal('OPEN', { to: 'TRIAGED', owner: 'notification-owner' })).toBe(`OWNER_NOT_A_SIGNER: ${TRANSITION_RULES.OWNER_NOT_A_SIGNER} (notification-owner is not in the signer registry; who may own RC06: olivia)`);
    expect(refusal('OPEN', { to: 'TRIAGED', owner: 'amy' })).toBe(`ROLE_MAY_NOT_OWN: ${TRANSITION_RULES.ROLE_MAY_NOT_OWN} (amy for RC06; who may own RC06: olivia)`);
    expect(refusal('TRIAGED', { to: 'CONTAINED', approver: 'tom' })).toBe(`ROLE_MAY_NOT_APPROVE: ${TRANSITION_RULES.ROLE_MAY_NOT_APPROVE} (tom for RC06; who may approve for RC06: amy, vera)`);
  });
});

describe('break transitions: every (from, to) pair', () => {
  it.each(PAIRS.map((r) => [r.name, r] as const))('%s', (_name, row) => {
    const { outcome, event } = judge(row);
    expect(outcome).toBe(row.expect);
    if (event) {
      const rec = record(row.from);
      expect(event).toMatchObject({ break_id: ID, version: rec.version + 1, expected_version: rec.version, from_state: row.from, to_state: row.req.to, at: NOW.toISOString() });
    }
  });
});

describe('break transitions: rules', () => {
  it.each(RULES.map((r) => [r.name, r] as const))('%s', (_name, row) => {
    expect(judge(row).outcome).toBe(row.expect);
  });

  it('records the fields of each transition as evidence, and the proving run for VERIFIED', () => {
    const triaged = judge({ name: '', from: 'OPEN', req: { to: 'TRIAGED', classification: 'DUPLICATE', note: 'two receipts' }, expect: 'ok' }).event!;
    expect(triaged.evidence).toEqual({ owner: 'olivia', classification: 'DUPLICATE', note: 'two receipts' });
    expect(triaged.actor).toBe('tom');
    const verified = judge({ name: '', from: 'CORRECTED', req: { to: 'VERIFIED' }, expect: 'ok' }).event!;
    expect(verified.evidence).toEqual({ evidence_ref: 'run-good', run_id: 'run-good', manifest_key: 'manifests/00000002-run-good.json', manifest_sha256: 'b'.repeat(64) });
    const closed = judge({ name: '', from: 'VERIFIED', req: { to: 'CLOSED' }, expect: 'ok' }).event!;
    expect(closed.evidence).toEqual({ reason: 'provider outage', root_cause: 'FAILED receipt not retried', prevention: 'retry policy RP-7' });
    expect(closed.version).toBe(6);
  });

  it('chains each event to the one before and says whether it is countersigned', () => {
    const rec = record('TRIAGED');
    const contained = planTransition(rec, validRequest('TRIAGED', rec.version), undefined, NOW, { ...PLAIN_POLICY, ...SIGNED });
    expect(contained).toMatchObject({ format: FORMATS.event, previous_event_sha256: rec.head_sha256, dual_control: true, proof: 'signed', version: 3, evidence: { approver: 'amy' } });
    const triaged = judge({ name: '', from: 'OPEN', req: { to: 'TRIAGED', owner: 'OLIVIA' }, policy: SIGNED, expect: 'ok' }).event!;
    expect(triaged).toMatchObject({ dual_control: false, evidence: { owner: 'olivia' } });
  });
});

/** A proposal of CONTAINED by olivia naming amy, on a TRIAGED break (version 2), signed with olivia's key. */
function proposal(rec: BreakRecord, over: { approver?: string; at?: Date; withdrawn?: boolean; roles?: boolean } = {}): StoredProposal {
  const policy = { ...PLAIN_POLICY, ...SIGNED, ...(over.roles === false ? { may: undefined } : {}) };
  const event = planTransition(rec, { ...validRequest('TRIAGED', rec.version), approver: over.approver ?? 'amy' }, undefined, over.at ?? NOW, policy);
  const object = objectOf(`breaks/${ID}/proposals/000003-${payloadDigest(payloadOf(event)).slice(0, 16)}.json`, event, [['actor', 'SHA256:olivia']]);
  return { event, object, withdrawal: over.withdrawn ? { actor: 'olivia', at: NOW.toISOString(), object: objectOf('w', {}) } : null };
}

interface ApprovalRow {
  readonly name: string;
  readonly approver: Approver;
  readonly rec?: () => BreakRecord;
  readonly proposal?: (rec: BreakRecord) => StoredProposal;
  readonly now?: Date;
  readonly expect: Outcome;
}

const AMY: Approver = { name: 'amy', key: 'SHA256:amy' };
const MAX_AGE_S = 7 * 24 * 3600;

const APPROVALS: ApprovalRow[] = [
  { name: 'the named approver countersigns', approver: AMY, expect: 'ok' },
  { name: 'the proposer countersigns', approver: { name: 'olivia', key: 'SHA256:olivia' }, expect: 'APPROVER_IS_PROPOSER' },
  { name: 'another name with the proposer\'s key (two names backed by one key)', approver: { name: 'amy', key: 'SHA256:olivia' }, expect: 'DUAL_CONTROL_SAME_KEY' },
  { name: 'someone the proposal does not name', approver: { name: 'vera', key: 'SHA256:vera' }, expect: 'APPROVER_NOT_DESIGNATED' },
  { name: 'reconciler countersigns', approver: { name: 'reconciler', key: null }, expect: 'RECONCILER_RESERVED' },
  { name: 'an approver whose roles (since changed) do not approve the control', approver: { name: 'tom', key: 'SHA256:tom' }, proposal: (r) => proposal(r, { approver: 'tom', roles: false }), expect: 'ROLE_MAY_NOT_APPROVE' },
  { name: 'another event took the proposal\'s version (lost the race: exit 6)', approver: AMY, rec: () => { const r = record('TRIAGED'); return { ...r, ...record('CONTAINED') }; }, proposal: () => proposal(record('TRIAGED')), expect: 'STALE' },
  { name: 'the break moved two versions on since the proposal (exit 6)', approver: AMY, rec: () => record('CORRECTED'), proposal: () => proposal(record('TRIAGED')), expect: 'STALE' },
  { name: 'a proposal for a head that is not the break\'s head', approver: AMY, rec: () => ({ ...record('TRIAGED'), head_sha256: 'd'.repeat(64) }), expect: 'PROPOSAL_NOT_CURRENT' },
  { name: 'a withdrawn proposal', approver: AMY, proposal: (r) => proposal(r, { withdrawn: true }), expect: 'PROPOSAL_WITHDRAWN' },
  { name: 'a proposal older than its maximum age', approver: AMY, now: new Date(NOW.getTime() + MAX_AGE_S * 1000 + 1), expect: 'PROPOSAL_EXPIRED' },
  { name: 'a proposal exactly at its maximum age', approver: AMY, now: new Date(NOW.getTime() + MAX_AGE_S * 1000), expect: 'ok' },
];

function judgeApprovalRow(row: ApprovalRow): Outcome {
  const rec = (row.rec ?? (() => record('TRIAGED')))();
  const p = (row.proposal ?? ((r: BreakRecord) => proposal(r)))(record('TRIAGED'));
  try {
    judgeApproval(rec, p, row.approver, { ...PLAIN_POLICY, ...SIGNED }, MAX_AGE_S, row.now ?? NOW);
    return 'ok';
  } catch (e) {
    if (e instanceof TransitionRuleError) { rulesHit.add(e.rule); expect(exitCodeOf(e)).toBe(ExitCode.USAGE); return e.rule as TransitionRule; }
    if (e instanceof ConcurrencyError) { expect(e.kind).toBe('version'); expect(exitCodeOf(e)).toBe(ExitCode.TRANSITION_LOST); expect(e.message).toContain('PROPOSAL_NOT_CURRENT'); return 'STALE'; }
    throw e;
  }
}

describe('countersigning a proposal', () => {
  it.each(APPROVALS.map((r) => [r.name, r] as const))('%s', (_name, row) => {
    expect(judgeApprovalRow(row)).toBe(row.expect);
  });

  it('selects the proposal of a version and tells how each stands', () => {
    const rec = record('TRIAGED');
    const a = proposal(rec);
    const b = proposal(rec, { approver: 'vera' });
    const withProposals = (ps: StoredProposal[]): BreakRecord => ({ ...rec, proposals: ps });
    const pick = (r: BreakRecord, v: number, prefix?: string) => { try { return selectProposal(r, v, prefix, MAX_AGE_S, NOW).object.digest; } catch (e) { if (e instanceof TransitionRuleError) { rulesHit.add(e.rule); return e.rule; } throw e; } };
    expect(pick(withProposals([a]), 3)).toBe(a.object.digest);
    expect(pick(withProposals([a]), 4)).toBe('PROPOSAL_UNKNOWN');
    expect(pick(withProposals([a, b]), 3)).toBe('PROPOSAL_AMBIGUOUS');
    expect(pick(withProposals([a, b]), 3, b.object.digest.slice(0, 16))).toBe(b.object.digest);
    expect(pick(withProposals([a, proposal(rec, { approver: 'vera', withdrawn: true })]), 3)).toBe(a.object.digest);
    expect(proposalStatus(rec, a, MAX_AGE_S, NOW)).toBe('pending');
    expect(proposalStatus(rec, proposal(rec, { withdrawn: true }), MAX_AGE_S, NOW)).toBe('withdrawn');
    expect(proposalStatus(record('CONTAINED'), a, MAX_AGE_S, NOW)).toBe('superseded');
    expect(proposalStatus(rec, a, MAX_AGE_S, new Date(NOW.getTime() + MAX_AGE_S * 1000 + 1))).toBe('expired');
    const landed = record('CONTAINED');
    const approvedLog = { ...landed, stored: [...landed.stored.slice(0, 2), { event: a.event, object: { ...a.object, key: `breaks/${ID}/events/000003.json` } }] };
    expect(proposalStatus(approvedLog, a, MAX_AGE_S, NOW)).toBe('approved');
  });

  it('names every rule in some row', () => {
    for (const r of [...PAIRS, ...RULES]) judge(r);
    for (const r of APPROVALS) judgeApprovalRow(r);
    expect([...rulesHit, 'WITHDRAW_BY_PROPOSER'].sort()).toEqual(Object.keys(TRANSITION_RULES).sort());
  });
});
