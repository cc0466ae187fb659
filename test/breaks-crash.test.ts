/**
 * Break writes after the commit (issue 17): a run killed with SIGKILL at each point between its
 * plan, its manifest and its break writes — `planned`, `staged` (no manifest yet), `published`,
 * `promoted`, `writing-breaks` (after the first of its three break objects), `breaks-written`
 * (all written, staging not cleared) — leaves a store that holds no break object of an unpublished
 * run and verifies at every point; the next run finishes or discards what was left, and its
 * results digest and the breaks equal those of a run that was never interrupted.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { breakId } from '../pipeline/breaks/break-id.js';
import { reckonAsync, reckonIn, scratchDir } from './helpers/cli.js';
import { ID, WINDOW, rc06Sources, signers } from './fixtures/breaks.js';

const INT3 = breakId('RC06', 'NOTICE_UNDELIVERED', 'INT-3');
let tmp: ReturnType<typeof scratchDir>;
let base: string;
let sources: string;
let config: string;
let reference: { digest: string; breaks: Record<string, { state: string; version: number }> };
afterAll(() => tmp?.cleanup());

/** Every file under `dir`, relative, sorted. */
function files(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return (readdirSync(dir, { recursive: true, withFileTypes: true }) as unknown as { isFile(): boolean; name: string; parentPath?: string; path?: string }[])
    .filter((e) => e.isFile()).map((e) => join(e.parentPath ?? e.path!, e.name).slice(dir.length + 1)).sort();
}

/** The break objects of `store` that run `runId` made (its events by run id, its observations by name). */
function objectsOf(store: string, runId: string): string[] {
  return files(join(store, 'breaks')).filter((f) => {
    if (f.includes(`/observations/${runId}.json`)) return true;
    if (!f.includes('/events/')) return false;
    const body = JSON.parse(JSON.parse(readFileSync(join(store, 'breaks', f), 'utf8')).payload ?? '{}');
    return body.run_id === runId || body.evidence?.run_id === runId;
  });
}

const states = async (store: string) => Object.fromEntries(((await reckonIn(['breaks', 'list', '--store', store, '--json', '--config', config])).json as { break_id: string; state: string; version: number }[]).map((b) => [b.break_id, { state: b.state, version: b.version }]));
const run = (store: string, from = sources) => reckonIn(['run', '--control', 'RC06', '--window', WINDOW, '--sources', from, '--store', store, '--json', '--quiet', '--config', config]);

beforeAll(async () => {
  tmp = scratchDir('reckon-breaks-crash-');
  const people = signers(tmp.dir);
  config = people.config;
  const src = rc06Sources(tmp.dir);
  sources = src.dir;
  base = join(tmp.dir, 'base');
  // The first delivery is kept as it was (manifest verify re-reads the inputs each manifest names).
  const first = join(tmp.dir, 'first-delivery');
  cpSync(sources, first, { recursive: true });
  expect((await run(base, first)).code).toBe(1);
  const ok = async (who: string, ...args: string[]) => { const r = await reckonIn(['breaks', ...args, '--store', base, '--config', config, '--key', people.keys[who].key]); expect(r.code, r.stderr).toBe(0); };
  await ok('tom', 'advance', ID, '--to', 'TRIAGED', '--expected-version', '1', '--owner', 'olivia', '--classification', 'MISSING');
  await ok('olivia', 'advance', ID, '--to', 'CONTAINED', '--expected-version', '2', '--approver', 'amy');
  await ok('amy', 'approve', ID, '--version', '3');
  await ok('olivia', 'advance', ID, '--to', 'CORRECTED', '--expected-version', '3', '--approver', 'amy');
  await ok('amy', 'approve', ID, '--version', '4');
  // The next delivery: INT-2's receipt resent (the correction), and a new intent INT-3 whose receipt FAILED.
  src.fix();
  const intents = join(sources, 'notification_intents', 'part-0001.csv');
  writeFileSync(intents, `${readFileSync(intents, 'utf8')}2026-11-02T11:00:00Z,INT-3,ORD-3,fill-v3,EMAIL,true,2026-11-03T11:00:00Z\n`);
  const receipts = join(sources, 'notification_receipts', 'part-0001.csv');
  writeFileSync(receipts, `${readFileSync(receipts, 'utf8')}2026-11-02T11:01:00,Europe/London,RCP-3,INT-3,EMAIL,FAILED\n`);
  // The uninterrupted run: VERIFIED for INT-2, OPEN for INT-3 and its observation.
  const ref = join(tmp.dir, 'reference');
  cpSync(base, ref, { recursive: true });
  const r = await run(ref);
  expect(r.code).toBe(1);
  const m = JSON.parse(readFileSync(r.json.manifest.path, 'utf8'));
  expect(m.break_log.plan).toMatchObject({ events: 2, observations: 1 });
  reference = { digest: r.json.results_digest, breaks: await states(ref) };
  expect(reference.breaks).toEqual({ [ID]: { state: 'VERIFIED', version: 5 }, [INT3]: { state: 'OPEN', version: 1 } });
});

/** Starts the run in a child process paused at `phase`, kills it there, and returns its run id (from its staging). */
async function killedAt(store: string, phase: string): Promise<string> {
  const scratch = join(tmp.dir, `tmp-${phase}`);
  mkdirSync(scratch, { recursive: true });
  const child = reckonAsync(['run', '--control', 'RC06', '--window', WINDOW, '--sources', sources, '--store', store, '--json', '--config', config], { env: { RECKON_FAULT_PAUSE: phase, TMPDIR: scratch } });
  await new Promise<void>((resolve, reject) => {
    let err = '';
    child.stderr!.on('data', (b: Buffer) => { err += b.toString(); if (err.includes(`paused at ${phase}`)) { child.kill('SIGKILL'); resolve(); } });
    child.on('exit', (code) => { if (!err.includes(`paused at ${phase}`)) reject(new Error(`exited ${code} before pausing at ${phase}: ${err}`)); });
  });
  await new Promise((r) => child.on('close', r));
  const staged = readdirSync(join(store, '_staging'));
  expect(staged).toHaveLength(1);
  return staged[0];
}

const POINTS: { phase: string; published: boolean; written: number }[] = [
  { phase: 'planned', published: false, written: 0 },
  { phase: 'staged', published: false, written: 0 },
  { phase: 'published', published: true, written: 0 },
  { phase: 'promoted', published: true, written: 0 },
  { phase: 'writing-breaks', published: true, written: 1 },
  { phase: 'breaks-written', published: true, written: 3 },
];

describe('a run killed between plan, manifest and break writes', () => {
  for (const p of POINTS) {
    it(`killed at ${p.phase}: ${p.published ? `published, ${p.written} of 3 break objects written` : 'nothing of the run outside staging'}; the next run completes the rest`, async () => {
      const store = join(tmp.dir, `store-${p.phase}`);
      cpSync(base, store, { recursive: true });
      const killed = await killedAt(store, p.phase);
      const manifest = files(join(store, 'manifests')).find((f) => f.endsWith(`-${killed}.json`));
      expect(Boolean(manifest)).toBe(p.published);
      expect(objectsOf(store, killed)).toHaveLength(p.written);
      if (!p.published) expect(existsSync(join(store, 'heads', `${killed}.json`))).toBe(false);
      const check = await reckonIn(['manifest', 'verify', '--store', store, '--json']);
      expect(check.code, JSON.stringify(check.json.problems)).toBe(0);
      if (p.published && p.written < 3) expect(check.json.breaks.notices.some((n: { problem: string }) => /not written yet/.test(n.problem))).toBe(true);

      const next = await run(store);
      expect(next.code).toBe(1);
      expect(next.json.results_digest).toBe(reference.digest);
      expect(await states(store)).toEqual(reference.breaks);
      expect(files(join(store, '_staging'))).toEqual([]);
      if (p.published) {
        // Rolled forward: every planned object of the killed run is there, bound to its manifest.
        const mine = objectsOf(store, killed);
        expect(mine).toHaveLength(3);
        for (const f of mine) expect(JSON.parse(readFileSync(join(store, 'breaks', f), 'utf8')).binding.manifest_key).toBe(`manifests/${manifest}`);
      } else {
        expect(objectsOf(store, killed)).toEqual([]);
      }
      const after = await reckonIn(['manifest', 'verify', '--store', store, '--json']);
      expect(after.code, JSON.stringify(after.json.problems)).toBe(0);
      expect(after.json.breaks.notices).toEqual([]);
    });
  }

  it('a staged break plan edited after its manifest was published: manifest verify names it, the next run stops with exit 2 naming it, nothing is written', async () => {
    const store = join(tmp.dir, 'store-forged-plan');
    cpSync(base, store, { recursive: true });
    const killed = await killedAt(store, 'published');
    const plan = join(store, '_staging', killed, '_break-plan.jsonl');
    writeFileSync(plan, `${readFileSync(plan, 'utf8')}{"kind":"event","key":"breaks/x/events/000099.json","payload":"{}","digest":"0"}\n`);
    const check = await reckonIn(['manifest', 'verify', '--store', store, '--json']);
    expect(check.code).toBe(1);
    const named = (check.json.problems as { key: string; problem: string }[]).filter((p) => p.key === `_staging/${killed}/_break-plan.jsonl`);
    expect(named).toHaveLength(1);
    expect(named[0].problem).toMatch(/does not have the SHA-256 [0-9a-f]{64} its manifest recorded: the staged break plan was changed/);
    const next = await run(store);
    expect(next.code, next.stderr).toBe(2);
    expect(next.stderr).toContain(`StoreError: _staging/${killed}/_break-plan.jsonl does not have the SHA-256`);
    expect(next.stderr).not.toMatch(/InternalError|internal error/i);
    expect(objectsOf(store, killed)).toEqual([]);
  });
});
