/**
 * A window that holds none of the loaded records (run/window-census.ts): the run says so in its
 * notes and on stderr, with the span the records cover, and no status changes.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, reckonIn, scratchDir } from './helpers/cli.js';

const SOURCES = join(ROOT, 'fixtures', 'sample-day', 'sources');
const NOTE_2025 = 'window: [2025-11-02T00:00:00Z, 2025-11-03T00:00:00Z) holds none of the 4029 record(s) loaded from 14 dataset(s) (their window times run from 2026-10-31T22:00:30Z to 2026-11-03T23:00:30Z): its control totals count no record; check --date or --window';

function manifestNotes(store: string): string[] {
  const [key] = readdirSync(join(store, 'manifests')).filter((f) => f.endsWith('.json'));
  return JSON.parse(readFileSync(join(store, 'manifests', key), 'utf8')).notes;
}

describe('a window holding none of the loaded records', () => {
  const tmp = scratchDir('reckon-census-');
  afterAll(() => tmp.cleanup());
  const run = (window: string, store: string, ...extra: string[]) =>
    reckonIn(['run', ...(window.includes('/') ? ['--window', window] : ['--date', window]), '--sources', SOURCES, '--store', join(tmp.dir, store), '--json', '--quiet', ...extra], { env: { RECKON_CACHE: 'off' } });

  it('last year\'s day: the note names the span of the records, on stderr and in the manifest; statuses as they were', async () => {
    const r = await run('2025-11-02', 'typo');
    expect(r.stderr).toContain(NOTE_2025);
    expect(manifestNotes(join(tmp.dir, 'typo'))).toContain(NOTE_2025);
    expect(r.json.warnings).toEqual([NOTE_2025]);
    expect(r.json.controls.map((c: { control_id: string; status: string }) => `${c.control_id} ${c.status}`))
      .toEqual(['RC01 CLEAN', 'RC02 CLEAN', 'RC03 CLEAN', 'RC04 CLEAN', 'RC05 BREAKS', 'RC06 CLEAN']);
    expect(r.json.controls[0].totals.accepted_count).toBe('0');
  });

  it('one control over its own datasets: the count and span are those it read', async () => {
    const r = await run('2025-11-02', 'rc06', '--control', 'RC06');
    expect(r.stderr).toContain('window: [2025-11-02T00:00:00Z, 2025-11-03T00:00:00Z) holds none of the 402 record(s) loaded from 3 dataset(s) (their window times run from 2026-11-01T23:59:01Z to 2026-11-03T00:03:58Z)');
    // The summary on stdout (what a scheduler mails) repeats it, under the status line.
    const text = await reckonIn(['run', '--date', '2025-11-02', '--control', 'RC06', '--sources', SOURCES, '--store', join(tmp.dir, 'rc06-text'), '--quiet'], { env: { RECKON_CACHE: 'off' } });
    expect(text.stdout.split('\n').slice(0, 2)).toEqual([
      expect.stringMatching(/^run run-\S+ {2}window \[2025-11-02T00:00:00Z, 2025-11-03T00:00:00Z\) {2}status CLEAN {2}exit 0$/),
      '  WARNING  window: [2025-11-02T00:00:00Z, 2025-11-03T00:00:00Z) holds none of the 402 record(s) loaded from 3 dataset(s) (their window times run from 2026-11-01T23:59:01Z to 2026-11-03T00:03:58Z): its control totals count no record; check --date or --window',
    ]);
  });

  it('a rerun whose load is skipped for the results cache repeats the note its first run gave', async () => {
    const env = { RECKON_CACHE_DIR: join(tmp.dir, 'cache') };
    const args = ['run', '--date', '2025-11-02', '--control', 'RC06', '--sources', SOURCES, '--store', join(tmp.dir, 'cached'), '--json', '--quiet'];
    const first = await reckonIn(args, { env });
    const again = await reckonIn(args, { env });
    const keys = readdirSync(join(tmp.dir, 'cached', 'manifests')).filter((f) => f.endsWith('.json')).sort();
    const notes: string[] = JSON.parse(readFileSync(join(tmp.dir, 'cached', 'manifests', keys[1]), 'utf8')).notes;
    expect(notes.some((n) => n.startsWith('results cache: the load was skipped'))).toBe(true);
    expect([first.json.warnings, again.json.warnings]).toEqual([[expect.stringContaining('holds none of the 402 record(s)')], first.json.warnings]);
    expect(again.stderr).toContain(first.json.warnings[0]);
    expect(notes.filter((n) => n.startsWith('window:'))).toEqual(first.json.warnings);
  });

  it('the sample day itself, and a window with one record in it: no note', async () => {
    const day = await run('2026-11-02', 'day');
    expect(day.stderr).not.toContain('holds none of the');
    expect(manifestNotes(join(tmp.dir, 'day')).filter((n) => n.startsWith('window:'))).toEqual([]);
    // The last second of the span: only the bank statement ending 2026-11-03T23:00:30Z is in it.
    const edge = await run('2026-11-03T23:00:30Z/2026-11-03T23:00:31Z', 'edge');
    expect(edge.stderr).not.toContain('holds none of the');
  });
});
