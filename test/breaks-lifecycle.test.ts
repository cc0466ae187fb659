/**
 * The break lifecycle across real runs (CONTRACT §5): a faulty input opens a break; people triage,
 * contain and correct it under dual control; fixing the input and rerunning verifies it
 * automatically as `reconciler` with the run's manifest digest; the fault coming back reopens it.
 * Also: verification by a person with a run as evidence, timing rules, and SLA ageing.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { reckon, reckonAsync, scratchDir } from './helpers/cli.js';
import { FAULT, WINDOW, rc06Sources } from './breaks-fixture.js';
import { breakId } from '../pipeline/breaks/break-id.js';

const ID = breakId(FAULT.control_id, FAULT.kind, FAULT.key);

function setup(prefix: string) {
  const tmp = scratchDir(prefix);
  const src = rc06Sources(tmp.dir);
  const store = join(tmp.dir, 'store');
  const run = (extra: string[] = [], window = WINDOW) => reckon(['run', '--control', 'RC06', '--window', window, '--sources', src.dir, '--store', store, '--json', '--quiet', ...extra]);
  const advance = (to: string, version: number, ...args: string[]) => reckon(['breaks', 'advance', ID, '--to', to, '--expected-version', String(version), '--store', store, '--json', ...args]);
  const show = () => reckon(['breaks', 'show', ID, '--store', store, '--json']).json;
  const list = (...args: string[]) => reckon(['breaks', 'list', '--store', store, '--json', ...args]).json;
  return { tmp, src, store, run, advance, show, list };
}

function dispositionOf(r: { json: { controls: { differences: { kind: string; key: string; disposition: string }[] }[] } }): string | undefined {
  return r.json.controls[0].differences.find((d) => d.kind === FAULT.kind && d.key === FAULT.key)?.disposition;
}

function correct(t: ReturnType<typeof setup>, from: number): void {
  expect(t.advance('TRIAGED', from, '--actor', 'tom', '--owner', 'olivia', '--classification', 'MISSING', '--note', 'receipt FAILED, never retried').code).toBe(0);
  expect(t.advance('CONTAINED', from + 1, '--actor', 'olivia', '--approver', 'amy', '--note', 'no containment needed: notice only').code).toBe(0);
  expect(t.advance('CORRECTED', from + 2, '--actor', 'olivia', '--approver', 'amy', '--evidence-ref', 'RCP-2 resent').code).toBe(0);
}

describe('correct, verify automatically, reopen', () => {
  const t = setup('reckon-breaks-life-');
  afterAll(() => t.tmp.cleanup());

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
  const t = setup('reckon-breaks-verify-');
  afterAll(() => t.tmp.cleanup());
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
    const child = reckonAsync(['run', '--control', 'RC06', '--window', WINDOW, '--sources', t.src.dir, '--store', t.store, '--json'], { env: { RECKON_FAULT_PAUSE: 'published' } });
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

describe('timing rules', () => {
  const t = setup('reckon-breaks-timing-');
  afterAll(() => t.tmp.cleanup());
  const config = (maxAgeS: number) => {
    const path = join(t.tmp.dir, `timing-${maxAgeS}.json`);
    writeFileSync(path, JSON.stringify({ timing_rules: [{ control: 'RC06', kind: 'NOTICE_UNDELIVERED', max_age_s: maxAgeS }] }));
    return path;
  };

  it('records a young difference as TIMING and opens it when a later window still observes it', () => {
    // end − 50400 s = 2026-11-02T10:00:00Z: the record (10:00:00.000001) is at or after it → TIMING.
    const cfg = config(50400);
    const r1 = t.run(['--config', cfg]);
    expect(r1.code).toBe(0);
    expect(r1.json.controls[0].status).toBe('CLEAN');
    expect(dispositionOf(r1)).toBe('TIMING');
    expect(t.list()).toEqual([]);
    // A rerun of the same window is not a later window: still TIMING.
    expect(dispositionOf(t.run(['--config', cfg]))).toBe('TIMING');
    expect(t.list()).toEqual([]);
    // One microsecond less of tolerance: the record is before end − max_age → opens at once.
    const strict = t.run(['--config', config(50399)]);
    expect(dispositionOf(strict)).toBe('OPENED');
    expect(t.list()).toHaveLength(1);
  });

  it('opens in a later window that still observes it', () => {
    const u = setup('reckon-breaks-timing-later-');
    try {
      u.src.setWatermark('2026-11-03T06:05:00Z');
      const path = join(u.tmp.dir, 'timing.json');
      writeFileSync(path, JSON.stringify({ timing_rules: [{ control: 'RC06', kind: 'NOTICE_UNDELIVERED', max_age_s: 172800 }] }));
      expect(dispositionOf(u.run(['--config', path]))).toBe('TIMING');
      expect(u.list()).toEqual([]);
      // A window ending later that still holds the record: still young by the rule, but it was
      // TIMING in an earlier window, so the break opens now.
      const later = u.run(['--config', path], '2026-11-02T00:00:00Z/2026-11-03T06:00:00Z');
      expect(dispositionOf(later)).toBe('OPENED');
      const [b] = u.list();
      expect(b).toMatchObject({ break_id: ID, state: 'OPEN', version: 1, observation_count: 2, window: { start: '2026-11-02T00:00:00Z', end: '2026-11-03T06:00:00Z' } });
      expect(reckon(['breaks', 'show', ID, '--store', u.store, '--json']).json.observations.map((o: { disposition: string }) => o.disposition)).toEqual(['TIMING', 'OPENED']);
    } finally {
      u.tmp.cleanup();
    }
  });
});

describe('ageing and SLA', () => {
  const t = setup('reckon-breaks-sla-');
  afterAll(() => t.tmp.cleanup());
  const withSla = (slaS: number, byKind = false) => {
    const path = join(t.tmp.dir, `sla-${slaS}-${byKind}.yaml`);
    writeFileSync(path, byKind ? `controls:\n  RC06:\n    sla_s: 1\n    sla_s_by_kind:\n      NOTICE_UNDELIVERED: ${slaS}\n` : `controls:\n  RC06:\n    sla_s: ${slaS}\n    owner: notices-desk\n`);
    return path;
  };

  it('is exact to the microsecond and breached only when strictly greater', () => {
    expect(t.run().code).toBe(1);
    const [b] = t.list();
    expect(b).toMatchObject({ age_s: '50699.999999', sla_s: 3600, sla_breached: true });
    expect(t.list('--config', withSla(50700))[0]).toMatchObject({ age_s: '50699.999999', sla_s: 50700, sla_breached: false, owner: 'notices-desk' });
    expect(t.list('--config', withSla(50699))[0]).toMatchObject({ sla_s: 50699, sla_breached: true });
    expect(t.list('--config', withSla(50700, true))[0]).toMatchObject({ sla_s: 50700, sla_breached: false });
    // A later as-of (the watermark moved on) ages the break: age = largest observed as-of − record time.
    t.src.setWatermark('2026-11-03T00:05:00.000001Z');
    expect(t.run().code).toBe(1);
    expect(t.list('--config', withSla(50700))[0]).toMatchObject({ age_s: '50700', as_of: '2026-11-03T00:05:00.000001Z', sla_breached: false, observation_count: 2 });
    t.src.setWatermark('2026-11-03T00:05:00.000002Z');
    expect(t.run().code).toBe(1);
    expect(t.list('--config', withSla(50700))[0]).toMatchObject({ age_s: '50700.000001', sla_breached: true, observation_count: 3 });
    // A rerun at an older as-of does not make it younger.
    t.src.setWatermark('2026-11-03T00:05:00Z');
    expect(t.run().code).toBe(1);
    expect(t.list()[0]).toMatchObject({ age_s: '50700.000001', observation_count: 4 });
  });

  it('refuses a configuration naming an unknown kind, with its path', () => {
    const path = join(t.tmp.dir, 'bad.json');
    writeFileSync(path, JSON.stringify({ controls: { RC06: { sla_s_by_kind: { NOTICE_LATE: 5 } } }, timing_rules: [{ control: 'RC09', kind: 'X', max_age_s: 1 }] }));
    const r = reckon(['breaks', 'list', '--store', t.store, '--config', path]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('controls.RC06.sla_s_by_kind.NOTICE_LATE');
    expect(r.stderr).toContain('timing_rules.0.control');
  });
});
