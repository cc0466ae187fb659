/**
 * What a run says to do next (issue 19, items 1, 4 and 5), in process on the RC06 fixture: the
 * owning team with its contact, route and runbook in `--json` (`owners[]`, `controls[].owner`),
 * `breaks list`/`show`; per control and per owner the counts new / re-observed / reopened /
 * timing / past SLA and the next command; ages as people read them on the terminal, exact
 * seconds in `--json`; progress on stderr (JSON lines when stderr is not a terminal), stdout the
 * result only.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reckonIn, scratchDir } from './helpers/cli.js';
import { ID, WINDOW, rc06Sources } from './fixtures/breaks.js';
import { humanDuration, secondsTextToMicros } from '../pipeline/core/duration.js';
import { SOURCES_FILE_FIX } from '../pipeline/controls/evaluation.js';
import { nextSteps } from '../pipeline/breaks/next-steps.js';
import { defaultConfig } from '../pipeline/config/config.js';
import { loadControls } from '../pipeline/controls/definitions.js';
import type { ControlResult } from '../manifests/v1/schema.js';

const tmp = scratchDir('reckon-next-steps-');
afterAll(() => tmp.cleanup());
const store = join(tmp.dir, 'store');
let first: Awaited<ReturnType<typeof reckonIn>>;
let src: ReturnType<typeof rc06Sources>;

beforeAll(async () => {
  src = rc06Sources(tmp.dir);
  first = await reckonIn(['run', '--control', 'RC06', '--window', WINDOW, '--sources', src.dir, '--store', store, '--json']);
  expect(first.code, first.stderr).toBe(1);
});

describe('the run', () => {
  it('--json names the owner, counts per control and owner (exact seconds) and the next commands', () => {
    const j = first.json;
    expect(j.controls[0].owner).toMatchObject({ owner: 'notification-owner', owner_name: 'Notification owner', contact: 'Notification owner on-call', route: 'notification-owner', runbook: { id: 'RBK07' } });
    expect(j.owners).toHaveLength(1);
    expect(j.owners[0]).toMatchObject({
      owner: 'notification-owner', controls: ['RC06'], counts: { new: 1, reobserved: 0, reopened: 0, timing: 0, provisional: 0, past_sla: 1 },
      next: `reckon breaks list --owner notification-owner --store ${store}`,
    });
    // Exact seconds in --json; the terminal shows the same age as 14h04m.
    expect(humanDuration(secondsTextToMicros(j.owners[0].oldest_age_s)!)).toBe('14h04m');
    expect(j.controls[0].breaks).toEqual({ new: 1, reobserved: 0, reopened: 0, timing: 0, provisional: 0, past_sla: 1, oldest_age_s: j.owners[0].oldest_age_s });
    expect(j.controls[0].next).toBe(`reckon breaks list --control RC06 --store ${store}`);
    expect(j.owners[0].runbooks.map((r: { id: string }) => r.id)).toEqual(['RBK06']);
    expect(j.next).toEqual([`reckon breaks show ${ID} --store ${store}`]);
  });

  it('progress goes to stderr as JSON lines per dataset and control; stdout is the result only', () => {
    expect(() => JSON.parse(first.stdout)).not.toThrow();
    const progress = first.stderr.split('\n').filter((l) => l.includes('"progress"')).map((l) => JSON.parse(l));
    const loads = progress.filter((p) => p.phase === 'load' && p.progress === 'done').map((p) => [p.dataset, p.records_read]);
    expect(loads).toEqual([['notification_intents', 2], ['notification_receipts', 2], ['notification_exceptions', 0]]);
    expect(progress.filter((p) => p.phase === 'evaluate').map((p) => [p.control, p.progress])).toEqual([['RC06', 'start'], ['RC06', 'done']]);
  });

  it('the terminal summary reads ages as people do and says what to run next', async () => {
    const again = await reckonIn(['run', '--control', 'RC06', '--window', WINDOW, '--sources', src.dir, '--store', store, '--quiet']);
    expect(again.code).toBe(1);
    const lines = again.stdout.split('\n');
    const at = lines.findIndex((l) => l.startsWith('  RC06  BREAKS'));
    expect(lines.slice(at, at + 11)).toEqual([
      '  RC06  BREAKS        1 difference(s)  NOTICE_UNDELIVERED×1',
      '        1 re-observed; 1 past SLA; oldest 14h04m; owner notification-owner',
      `        next: reckon breaks list --control RC06 --store ${store}`,
      '  manifest NOT signed: no signer registry configured (signing.registry)',
      '  by owner:',
      '    Notification owner (notification-owner); contact Notification owner on-call; route notification-owner',
      '      RC06: 1 re-observed; 1 past SLA; oldest 14h04m',
      '      runbook RBK06 External exchange or bank timeout (docs/runbooks.md#rbk06); first step: Do not repeat effect; open circuit for optional requests; preserve intent and block conflict',
      `      next: reckon breaks list --owner notification-owner --store ${store}`,
      '  alerts: none to send',
      `  next: reckon breaks show ${ID} --store ${store}`,
    ]);
  });
});

it('breaks list and show carry the routing: owner, contact, route, runbook and first step', async () => {
  const list = await reckonIn(['breaks', 'list', '--store', store, '--json']);
  expect(list.json[0].routing).toMatchObject({ owner: 'notification-owner', route: 'notification-owner', runbook: { id: 'RBK06', first_step: 'Do not repeat effect; open circuit for optional requests; preserve intent and block conflict' } });
  const show = await reckonIn(['breaks', 'show', ID, '--store', store]);
  expect(show.stdout).toContain('RBK06');
  expect(show.stdout).toContain('Do not repeat effect; open circuit for optional requests; preserve intent and block conflict');
});

describe('controls waiting or incomplete', () => {
  it('one rerun per state names every control in it, not one per control', async () => {
    const controls = await loadControls();
    const result = (control_id: string, status: string) => ({ control_id, status, differences: [], readiness: { ready: status !== 'NOT_READY', reasons: [] } }) as unknown as ControlResult;
    const steps = nextSteps({
      run_id: 'run-x', window: { start: '2026-11-02T00:00:00Z', end: '2026-11-03T00:00:00Z' }, breaks: [], config: defaultConfig().config, controls, store: 'S', sources: 'D',
      results: [result('RC01', 'NOT_READY'), result('RC02', 'NOT_READY'), result('RC03', 'INCOMPLETE'), result('RC04', 'INCOMPLETE'), result('RC05', 'CLEAN')],
    });
    expect(steps.next).toEqual([
      'once the watermarks reach 2026-11-03T00:00:00Z: reckon run --window 2026-11-02T00:00:00Z/2026-11-03T00:00:00Z --control RC01,RC02 --sources D --store S (a schedule runs it again by itself)',
      'correct the quarantined input, then: reckon run --window 2026-11-02T00:00:00Z/2026-11-03T00:00:00Z --control RC03,RC04 --sources D --store S --trigger incident --rerun-of run-x --reason \'corrected input\'',
    ]);
    expect(steps.controls.map((c) => c.next?.includes(`--control ${c.control_id} `) ?? null)).toEqual([true, true, true, true, null]);
  });

  it('does not say to wait when a reason is one no later run fixes (the sources file lacks a watermark query)', async () => {
    const controls = await loadControls();
    const result = (control_id: string, reasons: string[]) => ({ control_id, status: 'NOT_READY', differences: [], readiness: { ready: false, reasons } }) as unknown as ControlResult;
    const input = (reasons: string[]) => ({
      run_id: 'run-x', window: { start: '2026-11-02T00:00:00Z', end: '2026-11-03T00:00:00Z' }, breaks: [], config: defaultConfig().config, controls, store: 'S', sources: 'F.yaml',
      results: [result('RC01', ['orders watermark 2026-11-02T12:00:00Z (database) is before the window end 2026-11-03T00:00:00Z']), result('RC06', reasons)],
    });
    const standing = `notification_intents has no watermark: the sources file gives datasets.notification_intents no watermark query, and a database dataset's watermark is read by one (docs/postgres.md "Watermarks from the database"); ${SOURCES_FILE_FIX}`;
    expect(nextSteps(input([standing, 'notification_receipts watermark 2026-11-02T12:00:00Z (database) is before the window end 2026-11-03T00:00:00Z'])).next).toEqual([
      'correct the sources file (the reasons above say what it lacks), then: reckon run --window 2026-11-02T00:00:00Z/2026-11-03T00:00:00Z --control RC01,RC06 --sources F.yaml --store S',
    ]);
    // A sources-file run's quarantine may be the file's own query: the step says so.
    const incomplete = nextSteps({ ...input([]), results: [{ ...result('RC03', []), status: 'INCOMPLETE', readiness: { ready: true, reasons: [] } } as unknown as ControlResult] });
    expect(incomplete.next).toEqual(["correct the quarantined input (a file, rows in a database, or a query or watermark query of the sources file: the entries say which), then: reckon run --window 2026-11-02T00:00:00Z/2026-11-03T00:00:00Z --control RC03 --sources F.yaml --store S --trigger incident --rerun-of run-x --reason 'corrected input'"]);
    const steps = nextSteps(input(['notification_intents has no watermark']));
    expect(steps.next).toEqual(['once the watermarks reach 2026-11-03T00:00:00Z: reckon run --window 2026-11-02T00:00:00Z/2026-11-03T00:00:00Z --control RC01,RC06 --sources F.yaml --store S (a schedule runs it again by itself)']);
  });
});
