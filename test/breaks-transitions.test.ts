/**
 * Table-driven test of the break state machine (CONTRACT §5): every (from, to) pair of states, and
 * every rule of a person's transition, with the rule a refusal names. One row per case; the last
 * test checks that every rule in TRANSITION_RULES is exercised by some row.
 */
import { describe, expect, it } from 'vitest';
import type { BreakEvent, BreakRecord } from '../pipeline/breaks/break-store.js';
import { BREAK_STATES, CLASSIFICATIONS, NEXT_STATE, type BreakState } from '../pipeline/breaks/states.js';
import { planTransition, TRANSITION_RULES, type EvidenceRun, type TransitionRequest, type TransitionRule } from '../pipeline/breaks/transitions.js';
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
  return { ...base, state: last.to_state, version: last.version, events, observations: [] };
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
  readonly expect: Outcome;
}

const rulesHit = new Set<string>();

function judge(row: Row): { outcome: Outcome; event?: BreakEvent } {
  const rec = record(row.from, { reopened: row.reopened });
  const req = { ...validRequest(row.from, rec.version), ...row.req } as TransitionRequest;
  const run = row.run === undefined ? (req.to === 'VERIFIED' && req.evidence_ref ? GOOD_RUN : undefined) : row.run;
  try {
    return { outcome: 'ok', event: planTransition(rec, req, run, NOW) };
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
  { name: 'VERIFIED by reconciler with a run', from: 'CORRECTED', req: { to: 'VERIFIED', actor: 'reconciler' }, expect: 'ok' },
  { name: 'VERIFIED without a run', from: 'CORRECTED', req: { to: 'VERIFIED', evidence_ref: undefined }, expect: 'VERIFY_NEEDS_RUN' },
  { name: 'VERIFIED by reconciler without a run', from: 'CORRECTED', req: { to: 'VERIFIED', actor: 'reconciler', evidence_ref: undefined }, expect: 'VERIFY_NEEDS_RUN' },
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
];

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

  it('names every rule in some row', () => {
    for (const r of [...PAIRS, ...RULES]) judge(r);
    expect([...rulesHit].sort()).toEqual(Object.keys(TRANSITION_RULES).sort());
  });
});
