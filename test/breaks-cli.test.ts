/**
 * `reckon breaks` through the real CLI (CONTRACT §5, §7), signed by real keys: two processes
 * racing on one version (a step, and two countersignatures), refusals naming their rule,
 * list/show output, and the bundled sample day run twice into one store leaving exactly
 * one break per expected difference.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reckon, reckonAsync, reckonIn, scratchDir } from './helpers/cli.js';
import { SAMPLE_DAY, sampleDayDifferences, sampleDayExpectation } from './fixtures/days.js';
import { FAULT, WINDOW, rc06Sources, signers } from './fixtures/breaks.js';
import { breakId } from '../pipeline/breaks/break-id.js';
import { actionContext, approveProposal } from '../pipeline/breaks/actions.js';
import { BreakStore } from '../pipeline/breaks/break-store.js';
import { loadConfig } from '../pipeline/config/config.js';
import { loadControls } from '../pipeline/controls/definitions.js';
import { ConcurrencyError } from '../pipeline/core/errors.js';
import { exitCodeOf } from '../pipeline/core/outcome.js';
import { openStore } from '../pipeline/store/open-store.js';

function finished(child: ChildProcess): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (b) => { stdout += String(b); });
  child.stderr!.on('data', (b) => { stderr += String(b); });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

const eventFiles = (store: string, id: string) => readdirSync(join(store, 'breaks', id, 'events')).filter((f) => f.endsWith('.json')).sort();

describe('reckon breaks on a one-break store', () => {
  let tmp: ReturnType<typeof scratchDir>;
  let store: string;
  let people: ReturnType<typeof signers>;
  const id = breakId(FAULT.control_id, FAULT.kind, FAULT.key);
  const s = (...args: string[]) => [...args, '--store', store, '--config', people.config];
  const key = (name: string) => ['--key', people.keys[name].key];

  beforeAll(async () => {
    tmp = scratchDir('reckon-breaks-cli-');
    store = join(tmp.dir, 'store');
    people = signers(tmp.dir);
    const src = rc06Sources(tmp.dir);
    const run = await reckonIn(['run', '--control', 'RC06', '--window', WINDOW, '--sources', src.dir, '--store', store, '--json', '--config', people.config]);
    expect(run.code).toBe(1);
    expect(run.json.controls[0].differences).toEqual([expect.objectContaining({ kind: FAULT.kind, key: FAULT.key, break_id: id, disposition: 'OPENED' })]);
  });
  afterAll(() => tmp?.cleanup());

  it('lists the break with the fields of the contract', async () => {
    const r = await reckonIn(s('breaks', 'list', '--json'));
    expect(r.code).toBe(0);
    expect(r.json).toEqual([expect.objectContaining({
      break_id: id, control_id: 'RC06', kind: 'NOTICE_UNDELIVERED', key: 'INT-2', state: 'OPEN', version: 1,
      owner: 'notification-owner', owner_assigned: false, classification: null,
      first_record_time: '2026-11-02T10:00:00.000001Z', as_of: '2026-11-03T00:05:00Z',
      age_s: '50699.999999', sla_s: 3600, sla_breached: true, window: { start: '2026-11-02T00:00:00Z', end: '2026-11-03T00:00:00Z' },
    })]);
    expect(r.json[0].opened_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect((await reckonIn(s('breaks', 'list', '--json', '--state', 'TRIAGED'))).json).toEqual([]);
    expect((await reckonIn(s('breaks', 'list', '--json', '--control', 'RC01'))).json).toEqual([]);
    expect((await reckonIn(s('breaks', 'list', '--json', '--kind', 'NOTICE_UNDELIVERED', '--state', 'open', '--control', 'rc06'))).json).toHaveLength(1);
    const text = await reckonIn(s('breaks', 'list'));
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(id);
  });

  it('refuses bad usage with exit 2', async () => {
    const code = async (args: string[]) => (await reckonIn(args)).code;
    expect(await code(['breaks'])).toBe(2);
    expect(await code(['breaks', 'frobnicate'])).toBe(2);
    expect(await code(s('breaks', 'list', '--state', 'PENDING'))).toBe(2);
    expect(await code(s('breaks', 'show', 'brk-ffffffffffffffffffffffff'))).toBe(2);
    expect(await code(s('breaks', 'show', 'not-an-id'))).toBe(2);
    expect(await code(['breaks', 'list', '--store', join(tmp.dir, 'no-such-store')])).toBe(2);
    const unsignedAttempt = await reckonIn(s('breaks', 'advance', id, '--to', 'TRIAGED', '--expected-version', '1'));
    expect(unsignedAttempt.code).toBe(2);
    expect(unsignedAttempt.stderr).toContain('SIGNING_KEY_MISSING');
    expect(await code(s('breaks', 'advance', id, '--to', 'TRIAGED', '--actor', 'tom', '--expected-version', 'one', ...key('tom')))).toBe(2);
    expect(await code(s('breaks', 'advance', id, '--to', 'DONE', '--actor', 'tom', '--expected-version', '1', ...key('tom')))).toBe(2);
    const refused = await reckonIn(s('breaks', 'advance', id, '--to', 'TRIAGED', '--actor', 'tom', '--expected-version', '1', '--owner', 'olivia', ...key('tom')));
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('TRIAGE_NEEDS_CLASSIFICATION');
    const skip = await reckonIn(s('breaks', 'advance', id, '--to', 'CONTAINED', '--actor', 'tom', '--expected-version', '1', '--approver', 'amy', ...key('tom')));
    expect(skip.code).toBe(2);
    expect(skip.stderr).toContain('ALLOWED_TRANSITIONS');
    expect(eventFiles(store, id)).toEqual(['000001.json']);
  });

  it('racing on one version: one wins, the other exits 6 (two processes on a step, then two countersignatures of rival proposals)', async () => {
    const spawnIt = (args: string[]) => finished(reckonAsync(s(...args, '--json')));
    const [ta, tb] = await Promise.all([
      spawnIt(['breaks', 'advance', id, '--to', 'TRIAGED', '--expected-version', '1', '--actor', 'tom', '--owner', 'olivia', '--classification', 'MISSING', ...key('tom')]),
      spawnIt(['breaks', 'advance', id, '--to', 'TRIAGED', '--expected-version', '1', '--actor', 'tina', '--owner', 'oscar', '--classification', 'VALUE', ...key('tina')]),
    ]);
    expect([ta.code, tb.code].sort()).toEqual([0, 6]);
    expect((ta.code === 6 ? ta : tb).stderr).toContain('ConcurrencyError');
    expect(eventFiles(store, id)).toHaveLength(2);
    const owner = (await reckonIn(s('breaks', 'show', id, '--json'))).json.owner as string;
    // Two proposals of CONTAINED by the owner, naming different approvers: both wait.
    for (const [approver, note] of [['amy', 'A'], ['abe', 'B']]) {
      const p = await reckonIn(s('breaks', 'advance', id, '--to', 'CONTAINED', '--expected-version', '2', '--actor', owner, '--approver', approver, '--note', note, '--json', ...key(owner)));
      expect(p.code, p.stderr).toBe(0);
      expect(p.json.proposal).toMatchObject({ version: 3, to_state: 'CONTAINED', actor: owner, approver, status: 'pending' });
    }
    expect(eventFiles(store, id)).toHaveLength(2);
    const pending = (await reckonIn(s('breaks', 'list', '--pending', '--json'))).json;
    expect(pending.map((x: { proposal: { approver: string } }) => x.proposal.approver).sort()).toEqual(['abe', 'amy']);
    const digests = Object.fromEntries(pending.map((x: { proposal: { approver: string; sha256: string } }) => [x.proposal.approver, x.proposal.sha256.slice(0, 16)]));
    // Both approvers read the break before either writes (in process, so the race is certain on a
    // loaded machine; a process that starts after the winner landed exits 6 too, PROPOSAL_NOT_CURRENT named).
    const objects = await openStore(store);
    const loaded = await loadConfig(people.config, await loadControls());
    const seen = (await new BreakStore(objects).read(id))!;
    const contexts = await Promise.all(['amy', 'abe'].map((a) => actionContext(objects, loaded, { file: people.keys[a].key })));
    const [ra, rb] = await Promise.allSettled(contexts.map((ctx, i) => approveProposal(ctx, seen, 3, { proposal: digests[['amy', 'abe'][i]] })));
    const lost = [ra, rb].filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(lost).toHaveLength(1);
    expect(lost[0].reason).toBeInstanceOf(ConcurrencyError);
    expect(exitCodeOf(lost[0].reason)).toBe(6);
    const won = [ra, rb].find((r): r is PromiseFulfilledResult<Awaited<ReturnType<typeof approveProposal>>> => r.status === 'fulfilled')!;
    expect(eventFiles(store, id)).toHaveLength(3);
    const shown = (await reckonIn(s('breaks', 'show', id, '--json'))).json;
    expect(shown.state).toBe('CONTAINED');
    expect(shown.version).toBe(3);
    expect(JSON.parse(JSON.stringify(won.value.event))).toEqual(shown.events[shown.events.length - 1]);
    expect(shown.proposals.map((p: { status: string }) => p.status).sort()).toEqual(['approved', 'superseded']);
    expect((await reckonIn(s('breaks', 'list', '--pending', '--json'))).json).toEqual([]);
  });

  it('a stale expected version after the fact also exits 6 and appends nothing', async () => {
    const before = eventFiles(store, id);
    const r = await reckonIn(s('breaks', 'advance', id, '--to', 'CORRECTED', '--actor', 'olivia', '--approver', 'amy', '--expected-version', '2', ...key('olivia')));
    expect(r.code).toBe(6);
    expect(eventFiles(store, id)).toEqual(before);
  });

  it('show prints the whole history and every observation', async () => {
    const r = await reckonIn(s('breaks', 'show', id, '--json'));
    expect(r.code).toBe(0);
    expect(r.json.events.map((e: { to_state: string; version: number }) => [e.version, e.to_state])).toEqual([[1, 'OPEN'], [2, 'TRIAGED'], [3, 'CONTAINED']]);
    expect(r.json.events[0]).toMatchObject({ actor: 'reconciler', from_state: null, expected_version: 0, window: { start: '2026-11-02T00:00:00Z', end: '2026-11-03T00:00:00Z' }, record_time: '2026-11-02T10:00:00.000001Z' });
    expect(r.json.observations).toHaveLength(1);
    expect(r.json.observations[0]).toMatchObject({ disposition: 'OPENED', as_of: '2026-11-03T00:05:00Z', record_time: '2026-11-02T10:00:00.000001Z' });
    expect(r.json.proofs.map((p: { proof: string; signatures: { role: string }[] }) => [p.proof, p.signatures.map((x) => x.role)])).toEqual([['manifest', []], ['signed', ['actor']], ['signed', ['actor', 'approver']]]);
    const text = await reckonIn(s('breaks', 'show', id));
    expect(text.stdout).toContain('v3');
    expect(text.stdout).toContain('signed: actor');
  });
});

describe('the next command breaks show suggests on a store without a signer registry', () => {
  let tmp: ReturnType<typeof scratchDir>;
  let store: string;
  const id = breakId(FAULT.control_id, FAULT.kind, FAULT.key);
  const hint = (config: string) => `next: reckon breaks advance ${id} --to TRIAGED --expected-version 1 --key YOUR_KEY --owner SIGNER --classification TIMING|DUPLICATE|MISSING|VALUE|EXTERNAL --store ${store} --config ${config}`;
  const nextLines = (out: string) => out.slice(out.indexOf('next: '));
  const whom = '\n  (--owner names the signer of the registry who takes it for team notification-owner; a refusal lists who may own RC06)';

  beforeAll(async () => {
    tmp = scratchDir('reckon-breaks-hint-');
    store = join(tmp.dir, 'store');
    const run = await reckonIn(['run', '--control', 'RC06', '--window', WINDOW, '--sources', rc06Sources(tmp.dir).dir, '--store', store, '--json', '--quiet']);
    expect(run.code).toBe(1);
  });
  afterAll(() => tmp?.cleanup());

  it('asks for a configuration naming a registry, and with it filled in the command lands', async () => {
    const shown = await reckonIn(['breaks', 'show', id, '--store', store]);
    expect(shown.code).toBe(0);
    expect(nextLines(shown.stdout)).toBe(`${hint('YOUR_CONFIG')}\n  (break transitions are signed: YOUR_CONFIG is a configuration naming the signer registry, signing.registry; the demo's is fixtures/demo/reckon.yaml)${whom}\n`);
    const withConfig = await reckonIn(['breaks', 'show', id, '--store', store, '--config', 'fixtures/demo/reckon.yaml']);
    expect(nextLines(withConfig.stdout)).toBe(`${hint('fixtures/demo/reckon.yaml')}${whom}\n`);
    const pasted = hint('fixtures/demo/reckon.yaml').slice('next: reckon '.length).split(' ')
      .map((w) => (w === 'YOUR_KEY' ? 'fixtures/demo/keys/tom' : w === 'SIGNER' ? 'olivia' : w.startsWith('TIMING|') ? 'MISSING' : w));
    const advanced = await reckonIn(pasted);
    expect(advanced.code, advanced.stderr).toBe(0);
    expect(eventFiles(store, id)).toEqual(['000001.json', '000002.json']);
  });
});

describe('the sample day run twice into one store', () => {
  let tmp: ReturnType<typeof scratchDir>;
  beforeAll(() => { tmp = scratchDir('reckon-breaks-sample-day-'); });
  afterAll(() => tmp?.cleanup());

  it('leaves exactly one break per expected difference', () => {
    const expected = sampleDayExpectation();
    const window = `${expected.window.start}/${expected.window.end}`;
    expect(window).toBe('2026-11-02T00:00:00Z/2026-11-03T00:00:00Z');
    const store = join(tmp.dir, 'store');
    const args = ['run', '--all', '--window', window, '--sources', SAMPLE_DAY, '--store', store, '--json', '--quiet'];
    const first = reckon(args);
    const second = reckon(args);
    expect(first.code).toBe(1);
    expect(second.code).toBe(1);
    const want = sampleDayDifferences();
    expect(want.length).toBe(41);
    const dispositions = (r: typeof first) => r.json.controls.flatMap((c: { differences: { disposition: string }[] }) => c.differences.map((d) => d.disposition));
    expect(new Set(dispositions(first))).toEqual(new Set(['OPENED']));
    expect(new Set(dispositions(second))).toEqual(new Set(['REOBSERVED']));
    const list = reckon(['breaks', 'list', '--store', store, '--json']).json as { break_id: string; control_id: string; kind: string; key: string; version: number; observation_count: number; state: string }[];
    expect(list.map((b) => `${b.control_id} ${b.kind} ${b.key}`).sort()).toEqual(want);
    expect(readdirSync(join(store, 'breaks')).sort()).toEqual(list.map((b) => b.break_id).sort());
    for (const b of list) {
      expect(b).toMatchObject({ state: 'OPEN', version: 1, observation_count: 2 });
      expect(b.break_id).toBe(breakId(b.control_id, b.kind, b.key));
      expect(eventFiles(store, b.break_id)).toEqual(['000001.json']);
    }
  });
});
