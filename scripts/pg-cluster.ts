/**
 * A throwaway PostgreSQL server for tests and the benchmark (issue 21): Debian's `postgresql`
 * package, a fresh cluster in a temporary folder, listening on a free loopback port, stopped and
 * deleted after (test/helpers/postgres.ts re-exports it for the tests).
 * PostgreSQL refuses to run as root, so when the tests run as root the cluster belongs to the
 * `postgres` user and `initdb`/`pg_ctl` run through `runuser`. The superuser `postgres` has a
 * password (scram-sha-256 over TCP, like a managed server); other roles are made by the tests.
 *
 * The package is installed by the test set-up script on a fresh machine; without it the helper
 * stops with the command to run.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chmod, chown, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);

/** The superuser's password in every test cluster (a throwaway cluster on loopback). */
export const PG_SUPERUSER_PASSWORD = 'pg-test-superuser-4f1d';

/** A running server. */
export interface TestPostgres {
  readonly host: '127.0.0.1';
  readonly port: number;
  readonly dataDir: string;
  /** A superuser client on database `postgres` (or `database`). Close it when done. */
  admin(database?: string): Promise<pg.Client>;
  /** Runs SQL as the superuser on `database` (default `postgres`). */
  sql(text: string, database?: string): Promise<pg.QueryResult>;
  stop(): Promise<void>;
}

/** Options: TLS files to serve (`ssl = on`), extra `postgresql.conf` lines. */
export interface TestPostgresOptions {
  readonly tls?: { readonly certFile: string; readonly keyFile: string };
  readonly conf?: readonly string[];
}

/** The bin folder of the newest installed PostgreSQL (Debian: /usr/lib/postgresql/N/bin). */
export function postgresBin(): string {
  const base = '/usr/lib/postgresql';
  const versions = existsSync(base) ? readdirSync(base).filter((v) => /^[0-9]+$/.test(v) && existsSync(join(base, v, 'bin', 'initdb'))) : [];
  if (!versions.length) throw new Error('PostgreSQL server binaries not found under /usr/lib/postgresql; install them: apt-get install -y postgresql');
  return join(base, versions.sort((a, b) => Number(b) - Number(a))[0], 'bin');
}

/** A TCP port free on loopback right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

const asRoot = () => process.getuid?.() === 0;

async function asOwner(bin: string, args: string[]): Promise<void> {
  if (asRoot()) await run('runuser', ['-u', 'postgres', '--', bin, ...args], { timeout: 120_000 });
  else await run(bin, args, { timeout: 120_000 });
}

/** The uid and gid of the `postgres` user. */
async function postgresIds(): Promise<{ uid: number; gid: number }> {
  const [{ stdout: u }, { stdout: g }] = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-g', 'postgres'])]);
  return { uid: Number(u.trim()), gid: Number(g.trim()) };
}

/** Hands a file to the cluster's owner (root runs the tests, `postgres` runs the server). */
export async function giveToServer(path: string, mode = 0o600): Promise<void> {
  if (asRoot()) {
    const { uid, gid } = await postgresIds();
    await chown(path, uid, gid);
  }
  await chmod(path, mode);
}

/**
 * Initialises and starts a cluster on a free loopback port. Throws when the binaries are missing
 * or the server does not start (its log is in the message).
 */
export async function startPostgres(opts: TestPostgresOptions = {}): Promise<TestPostgres> {
  const bin = postgresBin();
  const root = await mkdtemp(join(tmpdir(), 'reckon-pg-'));
  const dataDir = join(root, 'data');
  const pwFile = join(root, 'pw');
  await writeFile(pwFile, `${PG_SUPERUSER_PASSWORD}\n`);
  if (asRoot()) {
    const { uid, gid } = await postgresIds();
    await chown(root, uid, gid);
    await chown(pwFile, uid, gid);
  }
  await asOwner(join(bin, 'initdb'), ['-D', dataDir, '-U', 'postgres', '--pwfile', pwFile, '-A', 'scram-sha-256', '-E', 'UTF8', '--locale', 'C.UTF-8', '--no-sync']);
  const port = await freePort();
  const conf = [
    `listen_addresses = '127.0.0.1'`, `port = ${port}`, `unix_socket_directories = '${root}'`, 'fsync = off',
    'synchronous_commit = off', 'full_page_writes = off', `max_connections = 40`, `shared_buffers = 64MB`,
    ...(opts.tls ? ['ssl = on', `ssl_cert_file = '${opts.tls.certFile}'`, `ssl_key_file = '${opts.tls.keyFile}'`] : []),
    ...(opts.conf ?? []),
  ];
  const confFile = join(dataDir, 'postgresql.auto.conf');
  await writeFile(confFile, `${conf.join('\n')}\n`);
  await giveToServer(confFile, 0o600);
  const log = join(root, 'server.log');
  try {
    await asOwner(join(bin, 'pg_ctl'), ['-D', dataDir, '-l', log, '-w', '-t', '60', 'start']);
  } catch (e) {
    const { readFile } = await import('node:fs/promises');
    const text = await readFile(log, 'utf8').catch(() => '');
    await rm(root, { recursive: true, force: true });
    throw new Error(`PostgreSQL did not start: ${(e as Error).message}\n${text}`);
  }
  const admin = async (database = 'postgres') => {
    const c = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', password: PG_SUPERUSER_PASSWORD, database });
    await c.connect();
    return c;
  };
  return {
    host: '127.0.0.1', port, dataDir, admin,
    async sql(text, database) {
      const c = await admin(database);
      try { return await c.query(text); } finally { await c.end(); }
    },
    async stop() {
      await asOwner(join(bin, 'pg_ctl'), ['-D', dataDir, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
      await rm(root, { recursive: true, force: true });
    },
  };
}

/** A running PgBouncer in front of a test server. */
export interface TestPooler {
  readonly port: number;
  stop(): Promise<void>;
}

/**
 * Starts PgBouncer (Debian's `pgbouncer`, run as `postgres` when the tests run as root: it refuses
 * root) on a free loopback port in front of `database` on the server at `serverPort`, with plain
 * passwords for `users` and the `[pgbouncer]` lines `settings` (pool_mode, ignore_startup_parameters).
 * Throws when it does not start (its log is in the message).
 */
export async function startPgbouncer(serverPort: number, database: string, users: Readonly<Record<string, string>>, settings: readonly string[]): Promise<TestPooler> {
  const root = await mkdtemp(join(tmpdir(), 'reckon-pgbouncer-'));
  const port = await freePort();
  const ini = join(root, 'pgbouncer.ini');
  const pidFile = join(root, 'pgbouncer.pid');
  await writeFile(join(root, 'users.txt'), Object.entries(users).map(([u, p]) => `"${u}" "${p}"\n`).join(''));
  await writeFile(ini, [
    '[databases]', `${database} = host=127.0.0.1 port=${serverPort} dbname=${database}`, '[pgbouncer]',
    'listen_addr = 127.0.0.1', `listen_port = ${port}`, 'auth_type = plain', `auth_file = ${join(root, 'users.txt')}`,
    `logfile = ${join(root, 'pgbouncer.log')}`, `pidfile = ${pidFile}`, `unix_socket_dir = ${root}`, ...settings, '',
  ].join('\n'));
  for (const f of ['users.txt', 'pgbouncer.ini']) await giveToServer(join(root, f));
  if (asRoot()) {
    const { uid, gid } = await postgresIds();
    await chown(root, uid, gid);
  }
  try {
    await asOwner(existsSync('/usr/sbin/pgbouncer') ? '/usr/sbin/pgbouncer' : 'pgbouncer', ['-d', ini]);
  } catch (e) {
    const { readFile } = await import('node:fs/promises');
    const text = await readFile(join(root, 'pgbouncer.log'), 'utf8').catch(() => '');
    await rm(root, { recursive: true, force: true });
    throw new Error(`PgBouncer did not start: ${(e as Error).message}\n${text}`);
  }
  return {
    port,
    async stop() {
      const { readFile } = await import('node:fs/promises');
      const pid = Number((await readFile(pidFile, 'utf8').catch(() => '')).trim());
      if (pid > 0) { try { process.kill(pid, 'SIGTERM'); } catch { /* gone already */ } }
      await rm(root, { recursive: true, force: true });
    },
  };
}
