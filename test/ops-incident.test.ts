/** Issue 7: incident reruns carry lineage; --trigger incident needs --rerun-of and --reason together. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reckon, scratchDir, reckonHere } from './helpers/cli.js';
import { writeCleanDay } from './fixtures/days.js';

const tmp = scratchDir('reckon-incident-');
const SOURCES = join(tmp.dir, 'sources');
beforeAll(() => writeCleanDay(SOURCES));
afterAll(() => tmp.cleanup());

describe('incident reruns', () => {
  it('records the parent run and reason; the superseded run stays visible', async () => {
    const store = join(tmp.dir, 'store');
    const first = await reckonHere(['run', '--date', '2026-11-02', '--sources', SOURCES, '--store', store, '--control', 'RC01', '--trigger', 'scheduled-nightly', '--json']);
    expect(first.code).toBe(0);
    const alone = await reckonHere(['run', '--date', '2026-11-02', '--sources', SOURCES, '--store', store, '--trigger', 'incident', '--json']);
    expect([alone.code, alone.json.error.message]).toEqual([2, 'an incident rerun needs --trigger incident, --rerun-of RUN_ID and --reason TEXT together; missing: --rerun-of RUN_ID, --reason TEXT (run ids: reckon runs --store …)']);
    const nope = await reckonHere(['run', '--date', '2026-11-02', '--sources', SOURCES, '--store', store, '--trigger', 'incident', '--rerun-of', 'run-nope', '--reason', 'x', '--json']);
    expect([nope.code, nope.json.error.message]).toEqual([2, `--rerun-of run-nope: no published manifest of that run in ${store} (its runs: reckon runs --store ${store})`]);
    const rerun = await reckonHere(['run', '--date', '2026-11-02', '--sources', SOURCES, '--store', store, '--control', 'RC01', '--trigger', 'incident', '--rerun-of', first.json.run_id, '--reason', 'INC-42 late venue file', '--json']);
    expect(rerun.code).toBe(0);
    const m = JSON.parse(readFileSync(rerun.json.manifest.path, 'utf8'));
    expect([m.trigger, m.parent_run_id, m.reason]).toEqual(['incident', first.json.run_id, 'INC-42 late venue file']);
    expect(m.chain.sequence).toBe(2);
    expect(rerun.json.results_digest).toBe(first.json.results_digest);
    const verify = await reckonHere(['manifest', 'verify', '--store', store, '--json']);
    const noBreaks = { breaks: 0, by_run: 0, countersigned: 0, events: 0, legacy: 0, observations: 0, proposals: 0, signatures: 0, signed: 0, unsigned: 0 };
    expect(verify.json).toEqual({ ok: true, checked: 2, problems: [], inputs_changed: [], signed: 0, unsigned: 2, trusted_registry: null, pending_roll_forward: [], notices: [{ key: 'manifests', problem: '2 manifest(s) NOT signed (signing.unsigned or no signer registry): a consistent rewrite of those cannot be detected' }], breaks: { counts: noBreaks, notices: [], registries: [] } });
  });
});
