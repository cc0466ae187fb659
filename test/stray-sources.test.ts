/**
 * Entries at the source root that are no dataset's folder (sources/files.ts strayRootEntries,
 * run/phase-load.ts): never read, named in a manifest note and a warning on stderr, with the
 * dataset they are nearest to; the results are those of the same sources without them.
 */
import { cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { strayRootEntries } from '../pipeline/sources/files.js';
import { DATASETS } from '../pipeline/contract/datasets.js';
import { SAMPLE_DAY } from './fixtures/days.js';
import { reckonIn, scratchDir, type CliResult } from './helpers/cli.js';

const tmp = scratchDir('reckon-stray-');
afterAll(() => tmp.cleanup());
const DATE = '2026-11-02';

describe('a source root holding entries that are not datasets', () => {
  it('names each (folder or file, the nearest dataset) in the manifest and on stderr; totals and digest unchanged', async () => {
    const src = join(tmp.dir, 'sources');
    cpSync(SAMPLE_DAY, src, { recursive: true });
    cpSync(join(src, 'notification_exceptions'), join(src, 'notification_exception'), { recursive: true });
    writeFileSync(join(src, 'README.csv'), 'a,b\n1,2\n');
    mkdirSync(join(src, '_exporter_state'));
    writeFileSync(join(src, '.DS_Store'), '');
    const odd = join(tmp.dir, 'odd');
    mkdirSync(odd);
    mkdirSync(join(odd, 'orders'));
    writeFileSync(join(odd, 'line\nbreak'), '');
    writeFileSync(Buffer.concat([Buffer.from(`${odd}/latin-`), Buffer.from([0xe9])]), '');
    symlinkSync(join(src, 'orders'), join(odd, 'order'));
    expect(await strayRootEntries(odd, DATASETS.map((d) => d.name))).toEqual([
      { name: 'latin-\\xe9', kind: 'file', nearest: null },
      { name: 'line\\x0abreak', kind: 'file', nearest: null },
      { name: 'order', kind: 'link', nearest: 'orders' },
    ]);
    expect(await strayRootEntries(src, DATASETS.map((d) => d.name))).toEqual([
      { name: 'README.csv', kind: 'file', nearest: null },
      { name: 'notification_exception', kind: 'folder', nearest: 'notification_exceptions' },
    ]);
    const plain = await reckonIn(['run', '--date', DATE, '--sources', SAMPLE_DAY, '--store', join(tmp.dir, 'store-plain'), '--json', '--quiet']);
    const stray = await reckonIn(['run', '--date', DATE, '--sources', src, '--store', join(tmp.dir, 'store-stray'), '--json', '--quiet']);
    expect([stray.code, stray.json.results_digest]).toEqual([plain.code, plain.json.results_digest]);
    const lines = [
      "sources: the file README.csv at the source root is no dataset's folder and was not read",
      "sources: the folder notification_exception at the source root is no dataset's folder and was not read (did you mean notification_exceptions?)",
    ];
    const notes = (m: CliResult) => JSON.parse(readFileSync(m.json.manifest.path, 'utf8')).notes as string[];
    expect(notes(stray).filter((n) => n.startsWith('sources: '))).toEqual(lines);
    expect(notes(plain).filter((n) => n.startsWith('sources: '))).toEqual([]);
    for (const l of lines) expect(stray.stderr).toContain(l);
  });
});
