/**
 * Issue 18 through the real CLI (node bin/reckon.js as a child process), for what only a whole
 * process shows: a run must not block or spin while it holds the window's leases (a FIFO or a link
 * to /dev/zero as a side file), an impossible store must fail at once, and usage errors exit 2.
 * Each run is given a deadline; on main these runs hung.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, ROOT, scratchDir } from './helpers/cli.js';
import { WINDOW, validDay, writeDay } from './fixtures/hostile.js';

const tmp = scratchDir('reckon-attack-cli-');
afterAll(() => tmp.cleanup());
let n = 0;

/** `reckon …args` with a deadline (killed with SIGKILL past it: code -1). */
function reckonWithin(ms: number, args: string[]) {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, encoding: 'utf8', timeout: ms, killSignal: 'SIGKILL' });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

describe('side files that would block a run holding its leases (item 5)', () => {
  it('a FIFO as _watermark.json and a link to /dev/zero as _import_report.json: the run ends (exit 3) naming both; the next run of the window is not locked out', () => {
    const sources = join(tmp.dir, 'src-fifo');
    writeDay(sources, validDay(2));
    const wm = join(sources, 'orders', '_watermark.json');
    execFileSync('rm', [wm]);
    execFileSync('mkfifo', [wm]);
    symlinkSync('/dev/zero', join(sources, 'executions', '_import_report.json'));
    const store = join(tmp.dir, `store-${++n}`);
    const args = ['run', '--window', WINDOW, '--sources', sources, '--store', store, '--json'];
    const r = reckonWithin(60_000, args);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('reckon: quarantined orders/_watermark.json whole file: watermark_unreadable: orders/_watermark.json is a FIFO (named pipe), not a regular file; it is not read');
    expect(r.stderr).toContain('reckon: quarantined executions/_import_report.json whole file: link_outside_source_root: executions/_import_report.json is a link that leads outside the source root; it is not read');
    expect(reckonWithin(60_000, args).code).toBe(3);
  });
});

describe('stores and sources that cannot be (items 5, 13)', () => {
  it('--store /proc/self/x fails at once (exit 2) naming the store', () => {
    const r = reckonWithin(30_000, ['run', '--window', WINDOW, '--sources', join(tmp.dir, 'none'), '--store', '/proc/self/x']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^reckon: ConfigError: --store \/proc\/self\/x cannot be used as a store folder: ENOENT/m);
  });

  it('--sources "" and --store "" are usage errors (exit 2), not the current folder', () => {
    for (const opt of ['--sources', '--store']) {
      const r = reckonWithin(30_000, ['run', '--window', WINDOW, opt, '']);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`reckon: ConfigError: ${opt} is empty; give it a value (an unset shell variable?)`);
    }
  });
});
