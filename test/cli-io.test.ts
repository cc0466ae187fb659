/**
 * The command line's I/O seam (pipeline/cli/io.ts): `main(argv, io)` writes only through its
 * CliIo, so a command run in this process prints exactly what the spawned CLI prints, and one
 * process may run many commands one after another with nothing carried over between them.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { captureIo } from '../pipeline/cli/io.js';
import { main } from '../pipeline/cli/main.js';
import { BIN, ROOT, reckon, reckonIn, scratchDir } from './helpers/cli.js';

const DAY = join(ROOT, 'fixtures', 'sample-day', 'sources');
const SAMPLE_DIGEST = 'fdf7739e05ddf63f23b01bced7e0dadb3c86e4647850616ddebae256689e84f3';

describe('main(argv, io)', () => {
  const tmp = scratchDir('reckon-cli-io-');
  afterAll(() => tmp.cleanup());

  it('prints the same usage, errors and exit codes in process as the spawned CLI', async () => {
    for (const args of [['--help'], [], ['nope'], ['run', '--date', '2026-11-02', '--window', 'x'], ['runs', '--store', join(tmp.dir, 'none'), '--json']]) {
      const spawned = reckon(args);
      const inProcess = await reckonIn(args);
      expect([args, inProcess.code, inProcess.stdout, inProcess.stderr]).toEqual([args, spawned.code, spawned.stdout, spawned.stderr]);
    }
  });

  it('runs the sample day twice in one process: same digest, the second run reobserves, logs on the captured stderr', async () => {
    const store = join(tmp.dir, 'store');
    const first = await reckonIn(['run', '--date', '2026-11-02', '--sources', DAY, '--store', store, '--json']);
    const second = await reckonIn(['run', '--date', '2026-11-02', '--sources', DAY, '--store', store, '--json']);
    expect([first.code, second.code]).toEqual([1, 1]);
    expect([first.json.results_digest, second.json.results_digest]).toEqual([SAMPLE_DIGEST, SAMPLE_DIGEST]);
    const dispositions = (r: typeof first) => new Set(r.json.controls.flatMap((c: { differences: { disposition: string }[] }) => c.differences.map((d) => d.disposition)));
    expect([...dispositions(first)]).toEqual(['OPENED']);
    expect([...dispositions(second)]).toEqual(['REOBSERVED']);
    // Not a terminal: JSON log lines (pino) on the captured stderr, one per line, with the run id.
    const logs = first.stderr.trim().split('\n').map((l) => JSON.parse(l) as { run_id?: string; msg: string });
    expect(logs.every((l) => l.run_id === first.json.run_id)).toBe(true);
    expect(logs.map((l) => l.msg)).toContain(`published ${first.json.manifest.path.slice(store.length + 1)} sha256 ${first.json.manifest.sha256}`);
  });

  it('resolves relative paths against io.cwd and shows terminal progress lines when stderr is a terminal', async () => {
    const io = captureIo({}, { cwd: tmp.dir, stderrIsTTY: true });
    const code = await main(['run', '--date', '2026-11-02', '--control', 'RC06', '--sources', DAY, '--store', 'relative-store'], io);
    expect(code).toBe(1);
    expect(io.out).toContain(`  manifest ${join(tmp.dir, 'relative-store', 'manifests')}/00000001-`);
    expect(io.err).toMatch(/^reckon: loading /);
    expect(io.err).toContain('reckon: RC06 BREAKS: 3 difference(s)\n');
  });
});

describe('a reader that stops reading (reckon … | head)', () => {
  /** The spawned CLI with its stdout (or stdout and stderr) closed at once, as `| head -c0` does; resolves to its exit code and stderr. */
  const closed = (args: string[], both: boolean) => new Promise<{ code: number | null; stderr: string }>((done) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy();
    if (both) child.stderr.destroy();
    let stderr = '';
    if (!both) child.stderr.on('data', (b: Buffer) => { stderr += b.toString('utf8'); });
    child.on('close', (code) => done({ code, stderr }));
  });

  it('keeps the exit code of the command and prints no EPIPE error (was an unhandled error event and exit 1)', async () => {
    expect(await closed(['--version'], false)).toEqual({ code: 0, stderr: '' });
    expect(await closed(['runs', '--store', join(ROOT, 'fixtures', 'no-such-store')], true)).toEqual({ code: 2, stderr: '' });
  });
});
