/**
 * Entries at the source root that are no dataset's folder (sources/files.ts strayRootEntries,
 * run/phase-load.ts): never read, named in a manifest note and a warning on stderr, with the
 * dataset they are nearest to; the results are those of the same sources without them.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { controlsEscaped, strayRootEntries } from '../pipeline/sources/files.js';
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
      "sources: the file 'README.csv' at the source root is no dataset's folder and was not read",
      "sources: the folder 'notification_exception' at the source root is no dataset's folder and was not read (did you mean notification_exceptions?)",
    ];
    const notes = (m: CliResult) => JSON.parse(readFileSync(m.json.manifest.path, 'utf8')).notes as string[];
    expect(notes(stray).filter((n) => n.startsWith('sources: '))).toEqual(lines);
    expect(notes(plain).filter((n) => n.startsWith('sources: '))).toEqual([]);
    for (const l of lines) expect(stray.stderr).toContain(l);
  });

  it('names a FIFO a special file, quotes a name with a trailing space, suggests a dataset whatever its case, and warns of 20 on stderr with the rest counted', () => {
    const odd = join(tmp.dir, 'odd-kinds');
    mkdirSync(odd);
    mkdirSync(join(odd, 'orders '));
    mkdirSync(join(odd, 'ORDERS'));
    execFileSync('mkfifo', [join(odd, 'fifo')]);
    return strayRootEntries(odd, DATASETS.map((d) => d.name)).then((entries) => expect(entries).toEqual([
      { name: 'ORDERS', kind: 'folder', nearest: 'orders' },
      { name: 'fifo', kind: 'special file', nearest: null },
      { name: 'orders ', kind: 'folder', nearest: 'orders' },
    ]));
  });

  it('shows a name on one line as it is: backslash, C1 controls, line separators, reordering and invisible marks escaped', () => {
    expect(['a\nb', 'back\\x0aslash', 'c1\u009bcsi', 'nel\u0085', 'ls\u2028', 'rlo\u202eevil', 'lrm\u200e', 'bom\ufeff', 'ok-é-名', 'del\u007f'].map(controlsEscaped)).toEqual([
      'a\\x0ab', 'back\\x5cx0aslash', 'c1\\u009bcsi', 'nel\\u0085', 'ls\\u2028', 'rlo\\u202eevil', 'lrm\\u200e', 'bom\\ufeff', 'ok-é-名', 'del\\x7f',
    ]);
  });

  it('lists a folder named twice through a link once', async () => {
    const src = join(tmp.dir, 'linked');
    cpSync(SAMPLE_DAY, src, { recursive: true });
    mkdirSync(join(src, 'ordrs'));
    symlinkSync(src, join(tmp.dir, 'linked-too'));
    const file = join(tmp.dir, 'linked.yaml');
    writeFileSync(file, `default: ${src}\ndatasets:\n  executions: { location: ${join(tmp.dir, 'linked-too')} }\n`);
    const r = await reckonIn(['run', '--date', DATE, '--sources', file, '--store', join(tmp.dir, 'store-linked'), '--json', '--quiet']);
    expect(r.code, r.stderr).toBe(1);
    const notes = (JSON.parse(readFileSync(r.json.manifest.path, 'utf8')).notes as string[]).filter((n) => n.startsWith('sources: '));
    expect(notes).toEqual(["sources: the folder 'ordrs' at the source root is no dataset's folder and was not read (did you mean orders?)"]);
  });

  it('a root with 25 stray folders: 20 warnings and one line for the other 5 on stderr, all 25 in the manifest', async () => {
    const src = join(tmp.dir, 'many');
    cpSync(SAMPLE_DAY, src, { recursive: true });
    for (let i = 10; i < 35; i++) mkdirSync(join(src, `extra${i}`));
    const r = await reckonIn(['run', '--date', DATE, '--sources', src, '--store', join(tmp.dir, 'store-many'), '--json', '--quiet']);
    const notes = (JSON.parse(readFileSync(r.json.manifest.path, 'utf8')).notes as string[]).filter((n) => n.startsWith('sources: '));
    expect(notes).toEqual(Array.from({ length: 25 }, (_, i) => `sources: the folder 'extra${i + 10}' at the source root is no dataset's folder and was not read`));
    const warned = r.stderr.split('\n').filter((l) => l.includes('sources: '));
    expect(warned).toHaveLength(21);
    for (const n of notes.slice(0, 20)) expect(r.stderr).toContain(n);
    expect(r.stderr).not.toContain(notes[20]);
    expect(warned[20]).toContain("sources: 5 more entries at the source root are no dataset's folder and were not read (the manifest's notes list every one)");
  });
});
