/**
 * The test set-up (scripts/test-setup.ts, run by `npm test` before the tests): which system
 * programs it looks for and where, and what it does when one is missing — install it from Debian
 * when the user may (root, or sudo without a password), otherwise stop with the exact command.
 * The decisions are checked with requirements made up here, so no package is ever installed by a
 * test; the real list is checked on this machine, where everything is present.
 */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { installCommand, main, onPath, plan, postgresBin, REQUIREMENTS, type Requirement } from '../scripts/test-setup.js';
import { ROOT, scratchDir } from './helpers/cli.js';

const tmp = scratchDir('reckon-test-setup-');
afterAll(() => tmp.cleanup());

const fake = (program: string, debianPackage: string, found = false): Requirement => ({ program, debianPackage, neededBy: 'a test', locate: () => (found ? `/x/${program}` : undefined) });

describe('what the tests need', () => {
  it('lists Chromium, OpenSSH and PostgreSQL with their Debian packages', () => {
    expect(REQUIREMENTS.map((r) => r.debianPackage)).toEqual(['chromium', 'openssh-client', 'postgresql', 'pgbouncer']);
  });

  it('finds every one on this machine, so the set-up does nothing and says nothing', () => {
    for (const r of REQUIREMENTS) expect(r.locate(), r.program).toBeDefined();
    const lines: string[] = [];
    expect(main({ say: (l) => lines.push(l) })).toBe(0);
    expect(lines).toEqual([]);
    const built = spawnSync(process.execPath, [join(ROOT, 'dist', 'scripts', 'test-setup.js')], { encoding: 'utf8' });
    expect([built.status, built.stdout, built.stderr]).toEqual([0, '', '']);
  });

  it('looks on PATH for executables only, and for the newest PostgreSQL holding every program', () => {
    const bin = join(tmp.dir, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'tool'), '#!/bin/sh\n');
    writeFileSync(join(bin, 'plain'), 'not executable');
    chmodSync(join(bin, 'tool'), 0o755);
    expect(onPath('tool', `/nonexistent:${bin}`)).toBe(join(bin, 'tool'));
    expect(onPath('plain', bin)).toBeUndefined();
    const pg = join(tmp.dir, 'postgresql');
    for (const [v, progs] of [['15', ['initdb', 'pg_ctl']], ['16', ['initdb']], ['9', ['initdb', 'pg_ctl']]] as const) {
      mkdirSync(join(pg, v, 'bin'), { recursive: true });
      for (const p of progs) writeFileSync(join(pg, v, 'bin', p), '');
    }
    expect(postgresBin(['initdb', 'pg_ctl'], pg)).toBe(join(pg, '15', 'bin'));
    expect(postgresBin(['initdb', 'pg_ctl', 'postgres'], pg)).toBeUndefined();
    expect(postgresBin(['initdb'], join(tmp.dir, 'none'))).toBeUndefined();
  });
});

describe('when a program is missing', () => {
  const missing = [fake('chromium', 'chromium'), fake('initdb', 'postgresql'), fake('pg_ctl', 'postgresql')];

  it('root installs the packages, each once, quietly and without questions', () => {
    expect(plan(missing, 'root', true, true)).toEqual({
      action: 'install', packages: ['chromium', 'postgresql'],
      argv: [['apt-get', '-q', 'update'], ['apt-get', '-q', 'install', '-y', 'chromium', 'postgresql']],
    });
  });

  it('a user with passwordless sudo installs through sudo -n', () => {
    const p = plan(missing, 'sudo', true, true);
    expect(p.action === 'install' && p.argv).toEqual([['sudo', '-n', 'apt-get', '-q', 'update'], ['sudo', '-n', 'apt-get', '-q', 'install', '-y', 'chromium', 'postgresql']]);
  });

  it('anyone else is stopped with the exact command; so is a machine without apt-get, and RECKON_TEST_SETUP=check', () => {
    const stop = { action: 'stop', packages: ['chromium', 'postgresql'], command: 'sudo apt-get update && sudo apt-get install -y chromium postgresql' };
    expect(plan(missing, 'none', true, true)).toEqual(stop);
    expect(plan(missing, 'sudo', false, true)).toEqual(stop);
    expect(plan(missing, 'sudo', true, false)).toEqual(stop);
    expect(plan(missing, 'root', true, false)).toEqual({ ...stop, command: 'apt-get update && apt-get install -y chromium postgresql' });
    expect(installCommand(['openssh-client'], false)).toBe('sudo apt-get update && sudo apt-get install -y openssh-client');
  });

  it('says what is missing, for which tests, and the command, and exits 1 without installing', () => {
    const lines: string[] = [];
    const code = main({ requirements: [fake('ssh-keygen', 'openssh-client'), fake('chromium', 'chromium', true)], privilege: () => 'none', hasAptGet: true, say: (l) => lines.push(l) });
    expect(code).toBe(1);
    expect(lines).toEqual([
      'missing ssh-keygen, Debian package openssh-client, for a test',
      'install it and run npm test again:\n\n    sudo apt-get update && sudo apt-get install -y openssh-client\n',
    ]);
  });
});
