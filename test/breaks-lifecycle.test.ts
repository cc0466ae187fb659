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
import { reckonAsync, reckonIn } from './helpers/cli.js';
import { ID, WINDOW, dispositionOf, setup } from './fixtures/breaks.js';

async function correct(t: ReturnType<typeof setup>, from: number): Promise<void> {
  expect((await t.advance('TRIAGED', from, '--actor', 'tom', '--owner', 'olivia', '--classification', 'MISSING', '--note', 'receipt FAILED, never retried')).code).toBe(0);
  expect((await t.advance('CONTAINED', from + 1, '--actor', 'olivia', '--approver', 'amy', '--note', 'no containment needed: notice only')).code).toBe(0);
  expect((await t.advance('CORRECTED', from + 2, '--actor', 'olivia', '--approver', 'amy', '--evidence-ref', 'RCP-2 resent')).code).toBe(0);
}

describe('correct, verify automatically, reopen', () => {
  let t: ReturnType<typeof setup>;
  beforeAll(() => { t = setup('reckon-breaks-life-'); });
  afterAll(() => t?.tmp.cleanup());

  it('walks the whole lifecycle twice', async () => {
    const r1 = await t.run();
    expect(r1.code).toBe(1);
    expect(dispositionOf(r1)).toBe('OPENED');
    await correct(t, 1);

    // Not fixed yet: the run still observes it, nothing is verified.
    const r2 = await t.run();
    expect(r2.code).toBe(1);
    expect(dispositionOf(r2)).toBe('REOBSERVED');
    expect((await t.show())).toMatchObject({ state: 'CORRECTED', version: 4, observation_count: 2 });

    // Fix the faulty row and rerun: VERIFIED by reconciler, proof is that run's manifest.
    t.src.fix();
    const r3 = await t.run();
    expect(r3.code).toBe(0);
    expect(r3.json.controls[0].status).toBe('CLEAN');
    const verified = (await t.show());
    expect(verified).toMatchObject({ state: 'VERIFIED', version: 5, observation_count: 2 });
    const v = verified.events[4];
    expect(v).toMatchObject({ from_state: 'CORRECTED', to_state: 'VERIFIED', actor: 'reconciler', expected_version: 4 });
    expect(v.evidence.run_id).toBe(r3.json.run_id);
    expect(v.evidence.manifest_sha256).toBe(r3.json.manifest.sha256);

    // A rerun of the clean input changes nothing.
    expect((await t.run()).code).toBe(0);
    expect((await t.show()).version).toBe(5);

    // The owner closes it with the proof fields.
    expect((await t.advance('CLOSED', 5, '--actor', 'olivia', '--reason', 'x')).code).toBe(2);
    expect((await t.advance('CLOSED', 5, '--actor', 'olivia', '--reason', 'provider outage', '--root-cause', 'FAILED receipts not retried', '--prevention', 'retry policy RP-7')).code).toBe(0);
    expect((await t.show())).toMatchObject({ state: 'CLOSED', version: 6 });

    // The fault comes back: the break reopens as OPEN, one new event, owner back to the control's.
    t.src.breakAgain();
    const r5 = await t.run();
    expect(r5.code).toBe(1);
    expect(dispositionOf(r5)).toBe('REOPENED');
    const reopened = (await t.show());
    expect(reopened).toMatchObject({ state: 'OPEN', version: 7, reopen_count: 1, owner: 'notification-owner', owner_assigned: false, classification: null });
    expect(reopened.events[6]).toMatchObject({ from_state: 'CLOSED', to_state: 'OPEN', actor: 'reconciler', run_id: r5.json.run_id });
    expect(reopened.age_s).toBe('50699.999999');

    // Second cycle: corrected, verified, and reopened straight from VERIFIED.
    await correct(t, 7);
    t.src.fix();
    expect((await t.run()).code).toBe(0);
    expect((await t.show())).toMatchObject({ state: 'VERIFIED', version: 11 });
    t.src.breakAgain();
    const r7 = await t.run();
    expect(dispositionOf(r7)).toBe('REOPENED');
    const again = (await t.show());
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
    const r1 = await t.run();
    expect(r1.code).toBe(1);
    await correct(t, 1);
    // A run that still observes it (no automatic verification either).
    const observing = await t.run();
    expect(dispositionOf(observing)).toBe('REOBSERVED');
    t.src.fix();
    // A clean run of a window that does not cover the break's window.
    const narrow = await t.run([], '2026-11-02T00:00:00Z/2026-11-02T12:00:00Z');
    expect(narrow.code).toBe(0);
    // A run that did not run RC06.
    const other = await reckonIn(['run', '--control', 'RC01', '--window', WINDOW, '--sources', t.src.dir, '--store', t.store, '--json', '--quiet', '--config', t.config]);
    expect(other.json.controls.map((c: { control_id: string }) => c.control_id)).toEqual(['RC01']);
    expect((await t.show()).state).toBe('CORRECTED');

    // A clean run stopped right after publishing its manifest, before automatic verification.
    // Its scratch folder is left behind by the kill: keep it inside this test's folder.
    const scratch = join(t.tmp.dir, 'tmp');
    mkdirSync(scratch);
    const child = reckonAsync(['run', '--control', 'RC06', '--window', WINDOW, '--sources', t.src.dir, '--store', t.store, '--json', '--config', t.config], { env: { RECKON_FAULT_PAUSE: 'published', TMPDIR: scratch } });
    const killed = await finished(child, 'reckon-fault: paused at published');
    expect(killed.code).toBeNull();
    const manifests = readdirSync(join(t.store, 'manifests')).filter((f) => f.endsWith('.json')).sort();
    const clean = manifests[manifests.length - 1].replace(/^[0-9]{8}-/, '').replace(/\.json$/, '');
    expect((await t.show()).state).toBe('CORRECTED');

    const refusal = async (actor: string, runId?: string) => { const r = await verify(actor, runId); expect(r.code).toBe(2); return r.stderr; };
    expect(await refusal('olivia', clean)).toContain('VERIFIER_NOT_CORRECTOR');
    expect(await refusal('vera')).toContain('VERIFY_NEEDS_RUN');
    expect(await refusal('vera', 'run-20990101t000000z-00000000')).toContain('VERIFY_RUN_UNKNOWN');
    expect(await refusal('vera', r1.json.run_id)).toContain('VERIFY_RUN_NOT_AFTER_CORRECTED');
    expect(await refusal('vera', observing.json.run_id)).toContain('VERIFY_RUN_STILL_OBSERVES');
    expect(await refusal('vera', narrow.json.run_id)).toContain('VERIFY_RUN_WINDOW');
    expect(await refusal('vera', other.json.run_id)).toContain('VERIFY_RUN_CONTROL');
    expect((await t.show()).version).toBe(4);

    const ok = await verify('vera', clean);
    expect(ok.code).toBe(0);
    const sha = readFileSync(join(t.store, 'manifests', manifests[manifests.length - 1].replace(/\.json$/, '.sha256')), 'utf8').split(/\s+/)[0];
    expect(ok.json.event).toMatchObject({ to_state: 'VERIFIED', actor: 'vera', version: 5, evidence: { evidence_ref: clean, run_id: clean, manifest_sha256: sha } });
    expect((await t.show())).toMatchObject({ state: 'VERIFIED', version: 5 });
  });
});
