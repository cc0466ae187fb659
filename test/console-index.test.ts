/**
 * The console's read model (pipeline/console/read-model.ts) on the sample day, in process: the
 * index loads every break once; a refresh takes in a new run through its checkpoint of break heads
 * (heads/<run_id>.json) without listing the breaks, reading again only the breaks whose head
 * changed and those the run observed; a person's change between runs is not in any checkpoint and
 * is found by the sweep of every break key.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reckonIn, ROOT, scratchDir } from './helpers/cli.js';
import { BreakIndex } from '../pipeline/console/read-model.js';
import { loadConfig } from '../pipeline/config/config.js';
import { loadControls } from '../pipeline/controls/definitions.js';
import { listManifests } from '../pipeline/store/manifests.js';
import { openStore } from '../pipeline/store/open-store.js';
import { breakId } from '../pipeline/breaks/break-id.js';
import { ownedBy } from '../pipeline/breaks/break-summary.js';
import { matches, parseQuery } from '../pipeline/console/queue.js';
import type { ObjectStore } from '../pipeline/store/object-store.js';

const CONFIG = join(ROOT, 'fixtures', 'demo', 'reckon.yaml');
const TOM = join(ROOT, 'fixtures', 'demo', 'keys', 'tom');
const FLOW = breakId('RC03', 'POSTING_AMOUNT_MISMATCH', 'EXE-000280-1');

let tmp: { dir: string; cleanup: () => void };
let storeDir: string;
let store: ObjectStore;
let index: BreakIndex;
/** Break-key listings of `breaks/` the index made (a refresh through a checkpoint makes none). */
let sweeps = 0;

const run = () => reckonIn(['run', '--date', '2026-11-02', '--sources', 'fixtures/sample-day/sources', '--store', storeDir, '--config', CONFIG, '--json', '--quiet']);
const triage = (id: string) => reckonIn(['breaks', 'advance', id, '--to', 'TRIAGED', '--expected-version', '1', '--owner', 'olivia', '--classification', 'TIMING', '--store', storeDir, '--config', CONFIG, '--key', TOM]);

beforeAll(async () => {
  tmp = scratchDir('reckon-console-index-');
  storeDir = join(tmp.dir, 'store');
  expect((await run()).code).toBe(1);
  const real = await openStore(storeDir);
  store = Object.assign(Object.create(real) as ObjectStore, {
    list: (prefix: string) => { if (prefix === 'breaks/') sweeps += 1; return real.list(prefix); },
  });
  const controls = await loadControls();
  index = new BreakIndex(store, await loadConfig(CONFIG, controls), controls);
  await index.load(await listManifests(store));
});

afterAll(() => tmp?.cleanup());

describe('the console index', () => {
  it('loads every break of the sample day with one listing', () => {
    expect(index.all()).toHaveLength(41);
    expect(sweeps).toBe(1);
    expect(index.get(FLOW)?.state).toBe('OPEN');
  });

  it('finds a person\'s change between runs by the sweep, not by the checkpoint refresh', async () => {
    expect((await triage(FLOW)).code).toBe(0);
    const manifests = await listManifests(store);
    expect(await index.refreshFromRuns(manifests)).toEqual([]);
    expect(index.get(FLOW)?.state).toBe('OPEN');
    expect(await index.refreshChanged(manifests)).toEqual([FLOW]);
    expect(index.get(FLOW)).toMatchObject({ state: 'TRIAGED', owner: 'olivia', version: 2 });
    expect(sweeps).toBe(2);
  });

  it('takes in a new run through its checkpoint: the breaks whose head changed and those it observed, without listing the breaks', async () => {
    const other = breakId('RC06', 'NOTICE_UNDELIVERED', 'INT-000288');
    const before = index.get(other);
    expect(before?.state).toBe('OPEN');
    expect((await triage(other)).code).toBe(0);
    expect((await run()).code).toBe(1);
    const manifests = await listManifests(store);
    expect(manifests).toHaveLength(2);
    const reread = await index.refreshFromRuns(manifests);
    const observed = manifests[1].manifest.breaks.map((b) => b.break_id);
    expect(observed).toContain(other);
    expect(reread.sort()).toEqual([...new Set(observed)].sort());
    expect(sweeps).toBe(2);
    expect(index.get(other)).toMatchObject({ state: 'TRIAGED', owner: 'olivia' });
    expect(index.get(FLOW)?.observations.map((o) => o.run_id)).toEqual(manifests.map((m) => m.manifest.run_id));
    expect(await index.refreshFromRuns(manifests)).toEqual([]);
    expect(await index.refreshChanged(manifests)).toEqual([]);
  });

  it('filters by owner as `breaks list --owner` does: the owner triage assigned or the team routed to, any case', async () => {
    const list = async (owner: string) => ((await reckonIn(['breaks', 'list', '--owner', owner, '--store', storeDir, '--config', CONFIG, '--json'])).json as { break_id: string }[]).map((b) => b.break_id).sort();
    const queue = (owner: string) => index.all().filter((r) => matches(r, parseQuery(new URLSearchParams({ owner })))).map((r) => r.break_id).sort();
    const ledgerTeam = await list('ledger-operations');
    expect(ledgerTeam).toContain(FLOW); // triaged to olivia, still the team's
    expect(ledgerTeam).toHaveLength(8); // RC03's eight sample-day breaks
    expect(queue('ledger-operations')).toEqual(ledgerTeam);
    expect(await list('OLIVIA')).toEqual([FLOW, breakId('RC06', 'NOTICE_UNDELIVERED', 'INT-000288')].sort());
    expect(queue('olivia')).toEqual(await list('OLIVIA'));
    const team = { owner: 'ledger-operations', runbook: null } as unknown as NonNullable<Parameters<typeof ownedBy>[1]['routing']>;
    expect(ownedBy(['Ledger-Operations'], { owner: 'ledger-operations', routing: team })).toBe(true);
    expect(ownedBy(['ledger-operations'], { owner: 'olivia', routing: team })).toBe(true);
    expect(ownedBy(['olivia'], { owner: null, routing: team })).toBe(false);
    expect(ownedBy(['olivia'], { owner: null, routing: null })).toBe(false);
    expect(ownedBy(undefined, { owner: null, routing: null })).toBe(true);
  });
});
