/**
 * Entries at the source root that are no dataset's folder (sources/files.ts strayRootEntries,
 * run/phase-load.ts): never read, named in a manifest note and a warning on stderr, with the
 * dataset they are nearest to; the results are those of the same sources without them.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { controlsEscaped, strayRootEntries } from '../pipeline/sources/files.js';
import { DATASETS } from '../pipeline/contract/datasets.js';
import { SAMPLE_DAY } from './fixtures/days.js';
import { BIN, reckonIn, scratchDir, type CliResult } from './helpers/cli.js';

const tmp = scratchDir('reckon-stray-');
afterAll(() => tmp.cleanup());
const DATE = '2026-11-02';

/** Root lists any folder: as root the CLI runs as nobody (a 0711 folder it does not own), else as this user (a 0311 folder). */
const ROOT_USER = process.getuid?.() === 0;

/** `reckon args` as a user who may enter the test's folders but not list a 0711 (0311) one; the result cache off, scratch in the test's folder. */
function runAsNobody(args: string[]): CliResult {
  return runAs(args, tmp.dir);
}

const CAN_RUN_AS_NOBODY = !ROOT_USER || runAs(['--version'], '/tmp').code === 0;

function runAs(args: string[], scratch: string): CliResult {
  const cmd = ROOT_USER ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, BIN, ...args] : [process.execPath, BIN, ...args];
  const r = spawnSync(cmd[0], cmd.slice(1), { encoding: 'utf8', env: { ...process.env, RECKON_CACHE: 'off', TMPDIR: scratch } });
  let json: unknown;
  try { json = JSON.parse(r.stdout); } catch { json = undefined; }
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr, json };
}

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

  it('with several local roots, each note names its root', async () => {
    const a = join(tmp.dir, 'root-a');
    const b = join(tmp.dir, 'root-b');
    cpSync(SAMPLE_DAY, a, { recursive: true });
    mkdirSync(join(a, 'ordrs'));
    mkdirSync(b);
    cpSync(join(SAMPLE_DAY, 'executions'), join(b, 'executions'), { recursive: true });
    writeFileSync(join(b, 'notes.txt'), '');
    const file = join(tmp.dir, 'two-roots.yaml');
    writeFileSync(file, `default: ${a}\ndatasets:\n  executions: { location: ${b} }\n`);
    const r = await reckonIn(['run', '--date', DATE, '--sources', file, '--store', join(tmp.dir, 'store-two-roots'), '--json', '--quiet']);
    const notes = (JSON.parse(readFileSync(r.json.manifest.path, 'utf8')).notes as string[]).filter((n) => n.startsWith('sources: '));
    expect(notes).toEqual([
      `sources: the folder 'ordrs' at the source root ${a} is no dataset's folder and was not read (did you mean orders?)`,
      `sources: the file 'notes.txt' at the source root ${b} is no dataset's folder and was not read`,
    ]);
  });

  // As root, nobody must reach the checkout (a clone under a 0700 folder cannot be run as nobody).
  it.skipIf(!CAN_RUN_AS_NOBODY)('a root that cannot be listed (mode 0711, a user who is not its owner): one note says so, the datasets in it are read', async () => {
    const src = join(tmp.dir, 'unlisted');
    cpSync(SAMPLE_DAY, src, { recursive: true });
    mkdirSync(join(src, 'ordrs'));
    const store = join(tmp.dir, 'store-unlisted');
    mkdirSync(store);
    execFileSync('chmod', ['-R', 'a+rwX', tmp.dir]);
    execFileSync('chmod', [ROOT_USER ? '0711' : '0311', src]);
    const r = runAsNobody(['run', '--date', DATE, '--sources', src, '--store', store, '--json', '--quiet']);
    expect(r.code, r.stderr).toBe(1);
    const notes = (JSON.parse(readFileSync(r.json.manifest.path, 'utf8')).notes as string[]).filter((n) => n.startsWith('sources: '));
    expect(notes).toEqual([`sources: the source root ${src} cannot be listed (EACCES): entries in it that are no dataset's folder cannot be named`]);
    expect(r.stderr).toContain(notes[0]);
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
