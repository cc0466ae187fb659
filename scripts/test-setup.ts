/**
 * The set-up `npm test` runs before the tests: checks that the system programs the tests start
 * are installed (the tests use real parts, never doubles: Debian's Chromium for the report,
 * OpenSSH for signer keys, a PostgreSQL server), and installs the missing ones from Debian when
 * this user may install packages (root, or sudo without a password), saying what it does.
 * Otherwise it stops (exit 1) with the exact command to run, and nothing else happens.
 *
 * To need another program, add a line to REQUIREMENTS. `RECKON_TEST_SETUP=check` only checks
 * (never installs); the tests' own needs do not change either way.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** A program the tests run, the Debian package that provides it, and where the tests look for it. */
export interface Requirement {
  /** What a reader calls it in messages. */
  readonly program: string;
  /** The Debian package to install. */
  readonly debianPackage: string;
  /** Which tests need it. */
  readonly neededBy: string;
  /** Where it is found (a path), or undefined when it is missing. */
  readonly locate: () => string | undefined;
}

/** The first directory of PATH holding an executable `name`. */
export function onPath(name: string, path = process.env.PATH ?? ''): string | undefined {
  for (const dir of path.split(':').filter(Boolean)) {
    const p = join(dir, name);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch { /* not here */ }
  }
  return undefined;
}

/** `dir/<version>/bin` of the newest PostgreSQL under `root` holding every one of `programs`. */
export function postgresBin(programs: readonly string[], root = '/usr/lib/postgresql'): string | undefined {
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root).filter((v) => /^[0-9]+$/.test(v)).sort((a, b) => Number(b) - Number(a));
  for (const v of versions) {
    const bin = join(root, v, 'bin');
    if (programs.every((p) => existsSync(join(bin, p)))) return bin;
  }
  return undefined;
}

/** What the tests need from the system, in the order it is checked. */
export const REQUIREMENTS: readonly Requirement[] = [
  {
    program: 'chromium (/usr/bin/chromium)', debianPackage: 'chromium', neededBy: 'the run report rendered in a real headless browser (test/report-chromium.test.ts)',
    locate: () => (existsSync('/usr/bin/chromium') ? '/usr/bin/chromium' : undefined),
  },
  {
    program: 'ssh-keygen', debianPackage: 'openssh-client', neededBy: 'tests that make and check real OpenSSH signer keys',
    locate: () => onPath('ssh-keygen'),
  },
  {
    program: 'initdb and pg_ctl (/usr/lib/postgresql/*/bin)', debianPackage: 'postgresql', neededBy: 'tests that start a real PostgreSQL server on loopback',
    locate: () => postgresBin(['initdb', 'pg_ctl', 'postgres']),
  },
  {
    program: 'pgbouncer', debianPackage: 'pgbouncer', neededBy: 'the test that extracts through a connection pooler (test/postgres-source.test.ts)',
    locate: () => onPath('pgbouncer') ?? (existsSync('/usr/sbin/pgbouncer') ? '/usr/sbin/pgbouncer' : undefined),
  },
];

/** How this user may install packages. */
export type Privilege = 'root' | 'sudo' | 'none';

/** What the set-up does. */
export type Plan =
  | { readonly action: 'nothing' }
  | { readonly action: 'install'; readonly packages: readonly string[]; readonly argv: readonly (readonly string[])[] }
  | { readonly action: 'stop'; readonly packages: readonly string[]; readonly command: string };

/** The exact shell command that installs `packages` from Debian, with `sudo` unless root. */
export function installCommand(packages: readonly string[], asRoot: boolean): string {
  const s = asRoot ? '' : 'sudo ';
  return `${s}apt-get update && ${s}apt-get install -y ${packages.join(' ')}`;
}

/**
 * Decides from the missing requirements, the user's privilege, whether apt-get exists and
 * whether installing is allowed: nothing to do, install (the argv lists to run), or stop with
 * the command for the user.
 */
export function plan(missing: readonly Requirement[], privilege: Privilege, hasAptGet: boolean, mayInstall: boolean): Plan {
  if (missing.length === 0) return { action: 'nothing' };
  const packages = [...new Set(missing.map((r) => r.debianPackage))];
  if (!hasAptGet || privilege === 'none' || !mayInstall) return { action: 'stop', packages, command: installCommand(packages, privilege === 'root') };
  const pre = privilege === 'sudo' ? ['sudo', '-n'] : [];
  return {
    action: 'install', packages,
    argv: [[...pre, 'apt-get', '-q', 'update'], [...pre, 'apt-get', '-q', 'install', '-y', ...packages]],
  };
}

function privilege(): Privilege {
  if (process.getuid?.() === 0) return 'root';
  if (!onPath('sudo')) return 'none';
  return spawnSync('sudo', ['-n', 'true'], { stdio: 'ignore' }).status === 0 ? 'sudo' : 'none';
}

const sayOnStderr = (line: string) => { process.stderr.write(`reckon test set-up: ${line}\n`); };

/** What the set-up looks at; the defaults are this machine's (tests pass their own). */
export interface SetupContext {
  readonly requirements: readonly Requirement[];
  readonly privilege: () => Privilege;
  readonly hasAptGet: boolean;
  readonly mayInstall: boolean;
  readonly say: (line: string) => void;
}

/** Runs the set-up; returns the exit code (0 ready, 1 not). */
export function main(ctx: Partial<SetupContext> = {}): number {
  const requirements = ctx.requirements ?? REQUIREMENTS;
  const say = ctx.say ?? sayOnStderr;
  const missing = requirements.filter((r) => r.locate() === undefined);
  if (missing.length === 0) return 0;
  const p = plan(missing, (ctx.privilege ?? privilege)(), ctx.hasAptGet ?? onPath('apt-get') !== undefined, ctx.mayInstall ?? process.env.RECKON_TEST_SETUP !== 'check');
  if (p.action === 'nothing') return 0;
  for (const r of missing) say(`missing ${r.program}, Debian package ${r.debianPackage}, for ${r.neededBy}`);
  if (p.action === 'stop') {
    say(`install it and run npm test again:\n\n    ${p.command}\n`);
    return 1;
  }
  say(`installing ${p.packages.join(', ')}: ${installCommand(p.packages, p.argv[0][0] !== 'sudo')}`);
  for (const argv of p.argv) {
    const r = spawnSync(argv[0], argv.slice(1), { encoding: 'utf8', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }, maxBuffer: 64 * 1024 * 1024 });
    if (r.status !== 0) {
      say(`${argv.join(' ')} failed (exit ${r.status ?? r.signal}):\n${`${r.stdout ?? ''}${r.stderr ?? ''}`.trim().split('\n').slice(-20).join('\n')}`);
      return 1;
    }
  }
  const still = requirements.filter((r) => r.locate() === undefined);
  for (const r of still) say(`${r.program} is still missing after installing ${r.debianPackage}`);
  if (still.length === 0) say('done');
  return still.length === 0 ? 0 : 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) process.exitCode = main();
