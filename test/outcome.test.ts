/**
 * One outcome ranking (core/outcome.ts): control statuses, their exit codes and ranks, the run's
 * overall status and conditions, and the exit code of every error class come from one table.
 * CONTRACT §7: where several apply, the highest exit code wins.
 */
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import * as errors from '../pipeline/core/errors.js';
import { ERROR_EXIT_CODES, ExitCode, STATUS_OUTCOMES, STATUSES_BY_RANK, exitCodeOf, highestExitCode, runOutcome, statusExitCode } from '../pipeline/core/outcome.js';
import { ControlStatus } from '../manifests/v1/schema.js';
import { ROOT, reckonIn, scratchDir } from './helpers/cli.js';

describe('control statuses', () => {
  it('have the exit codes of CONTRACT §7, and rank by them', () => {
    expect(Object.fromEntries(ControlStatus.options.map((s) => [s, statusExitCode(s)]))).toEqual({ CLEAN: 0, BREAKS: 1, NOT_READY: 4, INCOMPLETE: 3 });
    expect(STATUSES_BY_RANK).toEqual(['NOT_READY', 'INCOMPLETE', 'BREAKS', 'CLEAN']);
    const byExit = [...ControlStatus.options].sort((a, b) => statusExitCode(b) - statusExitCode(a));
    expect(byExit).toEqual(STATUSES_BY_RANK);
    expect(Object.entries(STATUS_OUTCOMES).filter(([, o]) => o.rerunBySchedule).map(([s]) => s)).toEqual(['NOT_READY']);
  });

  const R = (control_id: string, status: ControlStatus) => ({ control_id, status });
  const table: [string, ReturnType<typeof R>[], { status: string; exit_code: number; conditions: { status: string; exit_code: number; controls: string[] }[] }][] = [
    ['no controls', [], { status: 'CLEAN', exit_code: 0, conditions: [] }],
    ['all clean', [R('RC01', 'CLEAN'), R('RC02', 'CLEAN')], { status: 'CLEAN', exit_code: 0, conditions: [] }],
    ['breaks', [R('RC01', 'CLEAN'), R('RC02', 'BREAKS')], { status: 'BREAKS', exit_code: 1, conditions: [{ status: 'BREAKS', exit_code: 1, controls: ['RC02'] }] }],
    ['incomplete over breaks', [R('RC01', 'BREAKS'), R('RC03', 'INCOMPLETE')], {
      status: 'INCOMPLETE', exit_code: 3, conditions: [{ status: 'INCOMPLETE', exit_code: 3, controls: ['RC03'] }, { status: 'BREAKS', exit_code: 1, controls: ['RC01'] }],
    }],
    ['not ready over incomplete (the case issue 16 fixed)', [R('RC01', 'NOT_READY'), R('RC03', 'INCOMPLETE')], {
      status: 'NOT_READY', exit_code: 4, conditions: [{ status: 'NOT_READY', exit_code: 4, controls: ['RC01'] }, { status: 'INCOMPLETE', exit_code: 3, controls: ['RC03'] }],
    }],
    ['every status', [R('RC01', 'INCOMPLETE'), R('RC02', 'CLEAN'), R('RC03', 'NOT_READY'), R('RC04', 'BREAKS'), R('RC05', 'NOT_READY')], {
      status: 'NOT_READY', exit_code: 4, conditions: [
        { status: 'NOT_READY', exit_code: 4, controls: ['RC03', 'RC05'] }, { status: 'INCOMPLETE', exit_code: 3, controls: ['RC01'] }, { status: 'BREAKS', exit_code: 1, controls: ['RC04'] },
      ],
    }],
  ];
  for (const [name, results, expected] of table) {
    it(`run outcome: ${name}`, () => {
      const o = runOutcome(results);
      expect(o).toEqual(expected);
      expect(o.exit_code).toBe(highestExitCode(results.map((r) => statusExitCode(r.status))));
    });
  }
});

describe('error classes', () => {
  const cases: [Error, number][] = [
    [new errors.ConfigError('bad option'), ExitCode.USAGE],
    [new errors.TransitionRuleError('dual_control', 'approver must differ'), ExitCode.USAGE],
    [new errors.SignatureError('SIGNER_UNKNOWN_KEY', 'the key is not in the registry'), ExitCode.USAGE],
    [new errors.InputError({ message: 'unreadable', dataset: 'orders', file: 'orders/a.csv', row: 3, column: 'qty', rule: 'decimal' }), ExitCode.INCOMPLETE],
    [new errors.ConcurrencyError('locked', 'lock'), ExitCode.LOCKED],
    [new errors.ConcurrencyError('lost', 'version'), ExitCode.TRANSITION_LOST],
    [new errors.InternalError('broken'), ExitCode.INTERNAL],
    [new errors.ManifestVersionError(1, 2), ExitCode.INTERNAL],
    [new errors.EvidenceIntegrityError('store changed'), ExitCode.MISMATCH],
    [new errors.AthenaQueryError('failed', 'q', 'FAILED'), ExitCode.USAGE],
    [new errors.AthenaQueryError('slow', 'q', 'DEADLINE'), ExitCode.INTERNAL],
    [new errors.InterruptedError('SIGINT', 'interrupted by SIGINT'), 130],
    [new errors.InterruptedError('SIGTERM', 'interrupted by SIGTERM'), 143],
    [new Error('anything else'), ExitCode.INTERNAL],
  ];
  it('map to their exit codes in one table', () => {
    expect(cases.map(([e, code]) => [e.name, exitCodeOf(e)])).toEqual(cases.map(([e, code]) => [e.name, code]));
    expect(exitCodeOf('a thrown string')).toBe(70);
    expect(ExitCode.MISMATCH).toBe(1);
  });

  it('every error class of core/errors.ts has a row, and no row is left without a class', () => {
    const classes = Object.values(errors).flatMap((v) => (typeof v === 'function' && v.prototype instanceof errors.ReckonError ? [v.name] : []));
    expect(classes.sort()).toEqual(ERROR_EXIT_CODES.map((r) => r.error.name).sort());
  });

  it('InputError takes one options object and keeps where the problem is', () => {
    const e = new errors.InputError({ message: 'm', dataset: 'orders', file: 'orders/a.csv', row: 3, column: 'qty', rule: 'decimal' });
    expect([e.message, e.dataset, e.file, e.row, e.column, e.rule, e.name]).toEqual(['m', 'orders', 'orders/a.csv', 3, 'qty', 'decimal', 'InputError']);
    expect(new errors.InputError({ message: 'only a message' }).file).toBeUndefined();
  });
});

describe('a run with one NOT_READY and one INCOMPLETE control', () => {
  const tmp = scratchDir('reckon-outcome-');
  afterAll(() => tmp.cleanup());

  /** The sample day with the executions watermark an hour before the window end (RC01 NOT_READY) and one ledger amount that is not minor units (RC03 INCOMPLETE). */
  function mixedSources(): string {
    const dir = join(tmp.dir, 'sources');
    cpSync(join(ROOT, 'fixtures', 'sample-day', 'sources'), dir, { recursive: true });
    writeFileSync(join(dir, 'executions', '_watermark.json'), '{"watermark":"2026-11-02T23:00:00Z","complete":true}');
    const ledger = join(dir, 'ledger_postings', 'part-00001.csv');
    const lines = readFileSync(ledger, 'utf8').split('\n');
    expect(lines[2]).toContain(',1459094,');
    lines[2] = lines[2].replace(',1459094,', ',14590.94x,');
    writeFileSync(ledger, lines.join('\n'));
    return dir;
  }

  it('exits 4 with overall status NOT_READY and names both conditions (--json, human summary, manifest)', async () => {
    const sources = mixedSources();
    const args = (store: string) => ['run', '--date', '2026-11-02', '--control', 'RC01,RC03', '--sources', sources, '--store', join(tmp.dir, store)];
    const json = await reckonIn([...args('a'), '--json', '--quiet']);
    expect([json.code, json.json.status, json.json.exit_code]).toEqual([4, 'NOT_READY', 4]);
    expect(json.json.controls.map((c: { control_id: string; status: string }) => [c.control_id, c.status])).toEqual([['RC01', 'NOT_READY'], ['RC03', 'INCOMPLETE']]);
    expect(json.json.conditions).toEqual([{ status: 'NOT_READY', exit_code: 4, controls: ['RC01'] }, { status: 'INCOMPLETE', exit_code: 3, controls: ['RC03'] }]);
    const manifest = JSON.parse(readFileSync(json.json.manifest.path, 'utf8'));
    expect([manifest.runtime.overall_status, manifest.runtime.exit_code]).toEqual(['NOT_READY', 4]);
    expect(json.stderr).toContain("reckon: quarantined ledger_postings/part-00001.csv row 2 (line 3) column amount_minor: amount_form: amount_minor: '14590.94x' is not an integer amount in minor units");

    const human = await reckonIn([...args('b'), '--quiet']);
    expect(human.code).toBe(4);
    const lines = human.stdout.split('\n');
    expect(lines[0]).toMatch(/^run run-[0-9a-z]+-[0-9a-f]{8} {2}window \[2026-11-02T00:00:00Z, 2026-11-03T00:00:00Z\) {2}status NOT_READY {2}exit 4$/);
    expect(lines.slice(1, 3)).toEqual(['  NOT_READY  not ready (exit 4): RC01', '  INCOMPLETE input quarantined (exit 3): RC03']);
    expect(human.stdout).toContain('        not ready: executions watermark 2026-11-02T23:00:00Z (declared) is before the window end 2026-11-03T00:00:00Z\n');
    expect(human.stdout).toContain('        quarantined input in: ledger_postings\n');
  });
});
