/** Issue 7: incident reruns carry lineage; --trigger incident needs --rerun-of and --reason together. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reckon, scratchDir } from './helpers/cli.js';
import { writeCleanDay } from './fixtures/days.js';

const tmp = scratchDir('reckon-incident-');
const SOURCES = join(tmp.dir, 'sources');
beforeAll(() => writeCleanDay(SOURCES));
afterAll(() => tmp.cleanup());

describe('incident reruns', () => {
  it('records the parent run and reason; the superseded run stays visible', () => {
    const store = join(tmp.dir, 'store');
    const first = reckon(['run', '--date', '2026-11-02', '--sources', SOURCES, '--store', store, '--control', 'RC01', '--trigger', 'scheduled-nightly', '--json']);
    expect(first.code).toBe(0);
    expect(reckon(['run', '--date', '2026-11-02', '--sources', SOURCES, '--store', store, '--trigger', 'incident', '--json']).code).toBe(2);
    expect(reckon(['run', '--date', '2026-11-02', '--sources', SOURCES, '--store', store, '--trigger', 'incident', '--rerun-of', 'run-nope', '--reason', 'x', '--json']).code).toBe(2);
    const rerun = reckon(['run', '--date', '2026-11-02', '--sources', SOURCES, '--store', store, '--control', 'RC01', '--trigger', 'incident', '--rerun-of', first.json.run_id, '--reason', 'INC-42 late venue file', '--json']);
    expect(rerun.code).toBe(0);
    const m = JSON.parse(readFileSync(rerun.json.manifest.path, 'utf8'));
    expect([m.trigger, m.parent_run_id, m.reason]).toEqual(['incident', first.json.run_id, 'INC-42 late venue file']);
    expect(m.chain.sequence).toBe(2);
    expect(rerun.json.results_digest).toBe(first.json.results_digest);
    const verify = reckon(['manifest', 'verify', '--store', store, '--json']);
    expect(verify.json).toEqual({ ok: true, checked: 2, problems: [] });
  });
});
