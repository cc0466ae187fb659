/**
 * The break lifecycle across real runs (CONTRACT §5): a faulty input opens a break; people triage,
 * contain and correct it under dual control; fixing the input and rerunning verifies it
 * automatically as `reconciler` with the run's manifest digest; the fault coming back reopens it.
 * Also: verification by a person with a run as evidence (timing rules and ageing: breaks-timing).
 */
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reckon, reckonAsync } from './helpers/cli.js';
import { ID, WINDOW, dispositionOf, setup } from './fixtures/breaks.js';

function correct(t: ReturnType<typeof setup>, from: number): void {
  expect(t.advance('TRIAGED', from, '--actor', 'tom', '--owner', 'olivia', '--classification', 'MISSING', '--note', 'receipt FAILED, never retried').code).toBe(0);
  expect(t.advance('CONTAINED', from + 1, '--actor', 'olivia', '--approver', 'amy', '--note', 'no containment needed: notice only').code).toBe(0);
  expect(t.advance('CORRECTED', from + 2, '--actor', 'olivia', '--approver', 'amy', '--evidence-ref', 'RCP-2 resent').code).toBe(0);
}

describe('correct, verify automatically, reopen', () => {
  let t: ReturnType<typeof setup>;
  beforeAll(() => { t = setup('reckon-breaks-life-'); });
  afterAll(() => t?.tmp.cleanup());

  it('walks the whole lifecycle twice', () => {
    const r1 = t.run();
    expect(r1.code).toBe(1);
    expect(dispositionOf(r1)).toBe('OPENED');
    correct(t, 1);

    // Not fixed yet: the run still observes it, nothing is verified.
    const r2 = t.run();
    expect(r2.code).toBe(1);
    expect(dispositionOf(r2)).toBe('REOBSERVED');
    expect(t.show()).toMatchObject({ state: 'CORRECTED', version: 4, observation_count: 2 });

    // Fix the faulty row and rerun: VERIFIED by reconciler, proof is that run's manifest.
    t.src.fix();
    const r3 = t.run();
    expect(r3.code).toBe(0);
    expect(r3.json.controls[0].status).toBe('CLEAN');
    const verified = t.show();
    expect(verified).toMatchObject({ state: 'VERIFIED', version: 5, observation_count: 2 });
    const v = verified.events[4];
    expect(v).toMatchObject({ from_state: 'CORRECTED', to_state: 'VERIFIED', actor: 'reconciler', expected_version: 4 });
    expect(v.evidence.run_id).toBe(r3.json.run_id);
    expect(v.evidence.manifest_sha256).toBe(r3.json.manifest.sha256);

    // A rerun of the clean input changes nothing.
    expect(t.run().code).toBe(0);
    expect(t.show().version).toBe(5);

    // The owner closes it with the proof fields.
    expect(t.advance('CLOSED', 5, '--actor', 'olivia', '--reason', 'x').code).toBe(2);
    expect(t.advance('CLOSED', 5, '--actor', 'olivia', '--reason', 'provider outage', '--root-cause', 'FAILED receipts not retried', '--prevention', 'retry policy RP-7').code).toBe(0);
    expect(t.show()).toMatchObject({ state: 'CLOSED', version: 6 });

    // The fault comes back: the break reopens as OPEN, one new event, owner back to the control's.
    t.src.breakAgain();
    const r5 = t.run();
    expect(r5.code).toBe(1);
    expect(dispositionOf(r5)).toBe('REOPENED');
    const reopened = t.show();
    expect(reopened).toMatchObject({ state: 'OPEN', version: 7, reopen_count: 1, owner: 'notification-owner', owner_assigned: false, classification: null });
    expect(reopened.events[6]).toMatchObject({ from_state: 'CLOSED', to_state: 'OPEN', actor: 'reconciler', run_id: r5.json.run_id });
    expect(reopened.age_s).toBe('50699.999999');

    // Second cycle: corrected, verified, and reopened straight from VERIFIED.
    correct(t, 7);
    t.src.fix();
    expect(t.run().code).toBe(0);
    expect(t.show()).toMatchObject({ state: 'VERIFIED', version: 11 });
    t.src.breakAgain();
    const r7 = t.run();
    expect(dispositionOf(r7)).toBe('REOPENED');
    const again = t.show();
    expect(again).toMatchObject({ state: 'OPEN', version: 12, reopen_count: 2 });
    expect(again.events[11].from_state).toBe('VERIFIED');
    expect(readdirSync(join(t.store, 'breaks', ID, 'events'))).toHaveLength(12);
  });
});

function finished(child: ChildProcess, until?: string): Promise<{ code: number | null; stderr: string }> {
  let stderr = '';
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.stderr!.on('data', (b) => {
      stderr += String(b);
      if (until && stderr.includes(until)) { child.kill('SIGKILL'); }
    });
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

describe('verification by a person', () => {
  let t: ReturnType<typeof setup>;
  beforeAll(() => { t = setup('reckon-breaks-verify-'); });
  afterAll(() => t?.tmp.cleanup());
  const verify = (actor: string, runId?: string) => t.advance('VERIFIED', 4, '--actor', actor, ...(runId ? ['--evidence-ref', runId] : []));

  it('needs a run after CORRECTED that covered the window, ran the control and no longer observes the break', async () => {
    const r1 = t.run();
    expect(r1.code).toBe(1);
    correct(t, 1);
    // A run that still observes it (no automatic verification either).
    const observing = t.run();
    expect(dispositionOf(observing)).toBe('REOBSERVED');
    t.src.fix();
    // A clean run of a window that does not cover the break's window.
    const narrow = t.run([], '2026-11-02T00:00:00Z/2026-11-02T12:00:00Z');
    expect(narrow.code).toBe(0);
    // A run that did not run RC06.
    const other = reckon(['run', '--control', 'RC01', '--window', WINDOW, '--sources', t.src.dir, '--store', t.store, '--json', '--quiet']);
    expect(other.json.controls.map((c: { control_id: string }) => c.control_id)).toEqual(['RC01']);
    expect(t.show().state).toBe('CORRECTED');

    // A clean run stopped right after publishing its manifest, before automatic verification.
    // Its scratch folder is left behind by the kill: keep it inside this test's folder.
    const scratch = join(t.tmp.dir, 'tmp');
    mkdirSync(scratch);
    const child = reckonAsync(['run', '--control', 'RC06', '--window', WINDOW, '--sources', t.src.dir, '--store', t.store, '--json'], { env: { RECKON_FAULT_PAUSE: 'published', TMPDIR: scratch } });
    const killed = await finished(child, 'reckon-fault: paused at published');
    expect(killed.code).toBeNull();
    const manifests = readdirSync(join(t.store, 'manifests')).filter((f) => f.endsWith('.json')).sort();
    const clean = manifests[manifests.length - 1].replace(/^[0-9]{8}-/, '').replace(/\.json$/, '');
    expect(t.show().state).toBe('CORRECTED');

    const refusal = (actor: string, runId?: string) => { const r = verify(actor, runId); expect(r.code).toBe(2); return r.stderr; };
    expect(refusal('olivia', clean)).toContain('VERIFIER_NOT_CORRECTOR');
    expect(refusal('vera')).toContain('VERIFY_NEEDS_RUN');
    expect(refusal('vera', 'run-20990101t000000z-00000000')).toContain('VERIFY_RUN_UNKNOWN');
    expect(refusal('vera', r1.json.run_id)).toContain('VERIFY_RUN_NOT_AFTER_CORRECTED');
    expect(refusal('vera', observing.json.run_id)).toContain('VERIFY_RUN_STILL_OBSERVES');
    expect(refusal('vera', narrow.json.run_id)).toContain('VERIFY_RUN_WINDOW');
    expect(refusal('vera', other.json.run_id)).toContain('VERIFY_RUN_CONTROL');
    expect(t.show().version).toBe(4);

    const ok = verify('vera', clean);
    expect(ok.code).toBe(0);
    const sha = readFileSync(join(t.store, 'manifests', manifests[manifests.length - 1].replace(/\.json$/, '.sha256')), 'utf8').split(/\s+/)[0];
    expect(ok.json.event).toMatchObject({ to_state: 'VERIFIED', actor: 'vera', version: 5, evidence: { evidence_ref: clean, run_id: clean, manifest_sha256: sha } });
    expect(t.show()).toMatchObject({ state: 'VERIFIED', version: 5 });
  });
});
