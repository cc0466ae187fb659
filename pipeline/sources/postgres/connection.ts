/**
 * Connections to the authority's PostgreSQL-compatible databases (RDS, Aurora PostgreSQL, Aurora
 * DSQL), resolved the way operators expect of libpq tools: the sources file's fields, then the
 * connection URL (`url`, or the environment variable `url_env` names), then the standard `PG*`
 * variables (PGHOST, PGPORT, PGDATABASE, PGUSER, PGSSLMODE, PGSSLROOTCERT, PGCONNECT_TIMEOUT,
 * PGAPPNAME), then libpq's defaults. The password comes from the URL in `url_env`, PGPASSWORD or
 * the password file (PGPASSFILE or ~/.pgpass, read with the `pgpass` package, which ignores a file
 * others can read); for Aurora DSQL it is an IAM authentication token made per connection by the
 * AWS SDK's DSQL signer with the default credential chain.
 *
 * TLS follows libpq's sslmode: disable, prefer (TLS when the server offers it, unverified),
 * require (encrypted; with a CA file the chain is verified, as libpq does), verify-ca (chain),
 * verify-full (chain and host name). The CA is `sslrootcert`, else ~/.postgresql/root.crt when it
 * exists, else Node's CA store (`sslrootcert: system` asks for the store explicitly).
 *
 * A password or token never appears in a log, a manifest or an error: every message that leaves
 * here passes through `mask`, which removes each secret this module has handled.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { homedir, userInfo } from 'node:os';
import { join } from 'node:path';
import type { ConnectionOptions } from 'node:tls';
import pg from 'pg';
import { ConfigError } from '../../core/errors.js';
import { SEVERAL_HOSTS, urlParamProblem, type DatabaseSpec, type SslMode } from '../sources-file.js';

/** Where and how a database is reached: everything but the secret (safe for logs and the manifest). */
export interface ConnectionTarget {
  readonly name: string;
  readonly engine: 'postgres' | 'aurora-dsql';
  readonly host: string;
  readonly port: number;
  readonly database: string;
  readonly user: string;
  readonly sslmode: SslMode;
  /** The CA file used to verify the server, `system` (Node's store), or null (not verified). */
  readonly ca: string | null;
  readonly auth: 'password' | 'dsql-iam';
  readonly region: string | null;
  readonly reader: 'copy' | 'cursor';
  /** Connections reading datasets at once (one exported snapshot); 1 on Aurora DSQL. */
  readonly parallel: number;
  readonly statementTimeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly applicationName: string;
}

/** One open connection with what the extract needs to report on it. */
export interface Session {
  readonly target: ConnectionTarget;
  readonly client: pg.Client;
  /** The first error the connection itself reported (a terminated backend, a dropped socket). */
  readonly lastError: () => Error | undefined;
  /** `text` with every secret handled here replaced by `***`. */
  readonly mask: (text: string) => string;
}

/** A database's connections: the lead session, and helpers that read in parallel in its exported snapshot. */
export interface OpenDatabase extends Session {
  /** The datasets this run reads from it (for messages). */
  readonly datasets: readonly string[];
  readonly helpers: readonly Session[];
  close(): Promise<void>;
}

/** `user@host:port/database` for messages (never a password). */
export const describeTarget = (t: ConnectionTarget) => `${t.user}@${t.host.includes(':') ? `[${t.host}]` : t.host}:${t.port}/${t.database}`;

interface UrlParts { host?: string; port?: number; database?: string; user?: string; password?: string; sslmode?: string; sslrootcert?: string; applicationName?: string; connectTimeoutS?: number }

/** The parts of a postgres:// URL (query parameters host, port, sslmode, sslrootcert, application_name, connect_timeout too). */
function urlParts(text: string, where: string): UrlParts {
  let u: URL;
  if (SEVERAL_HOSTS.test(text)) throw new ConfigError(`${where} names several hosts; give one (reckon reads from one server: a cluster's reader or writer endpoint)`);
  try { u = new URL(text); } catch { throw new ConfigError(`${where} is not a postgres:// URL`); }
  const params = urlParamProblem(u);
  if (params) throw new ConfigError(`${where} ${params}`);
  if (!/^postgres(ql)?:$/.test(u.protocol)) throw new ConfigError(`${where} must start with postgres:// or postgresql://`);
  const p = u.searchParams;
  // A '%' not followed by two hex digits (a password written as typed) is a ConfigError naming the part, never its text (was URIError, exit 70).
  const dec = (s: string, part: string) => {
    if (s === '') return undefined;
    try { return decodeURIComponent(s); } catch { throw new ConfigError(`${where}: its ${part} holds a '%' that is not percent-encoding (%XX): write '%' as %25 and other reserved characters as %XX`); }
  };
  const port = p.get('port') ?? (u.port || undefined);
  return {
    host: p.get('host') ?? dec(u.hostname.replace(/^\[|\]$/g, ''), 'host'),
    port: port === undefined ? undefined : Number(port),
    database: dec(u.pathname.replace(/^\//, ''), 'database'),
    user: p.get('user') ?? dec(u.username, 'user name'),
    password: dec(u.password, 'password') ?? p.get('password') ?? undefined,
    sslmode: p.get('sslmode') ?? undefined,
    sslrootcert: p.get('sslrootcert') ?? undefined,
    applicationName: p.get('application_name') ?? undefined,
    connectTimeoutS: p.get('connect_timeout') ? Number(p.get('connect_timeout')) : undefined,
  };
}

const SSLMODES: readonly SslMode[] = ['disable', 'prefer', 'require', 'verify-ca', 'verify-full'];

/**
 * Resolves a database's connection target and the source of its secret. Throws ConfigError when
 * the URL variable is unset or a setting is not valid (e.g. PGSSLMODE=allow).
 */
export function resolveConnection(spec: DatabaseSpec, env: NodeJS.ProcessEnv): { target: ConnectionTarget; urlPassword?: string } {
  const where = `databases.${spec.name}`;
  let url: UrlParts = {};
  if (spec.url) url = urlParts(spec.url, `${where}.url`);
  if (spec.urlEnv) {
    const text = env[spec.urlEnv];
    if (!text) throw new ConfigError(`${where}.url_env: the environment variable ${spec.urlEnv} is not set; it must hold the connection URL`);
    url = urlParts(text, `the URL in ${spec.urlEnv}`);
  }
  const user = spec.user ?? url.user ?? env.PGUSER ?? userInfo().username;
  const sslmode = (spec.sslmode ?? url.sslmode ?? env.PGSSLMODE ?? 'prefer') as SslMode;
  if (!SSLMODES.includes(sslmode)) throw new ConfigError(`${where}: sslmode '${sslmode}' is not one of ${SSLMODES.join(', ')} (allow is not offered: it sends credentials in the clear)`);
  if (spec.auth === 'dsql-iam' && (sslmode === 'disable' || sslmode === 'prefer')) throw new ConfigError(`${where}: an IAM token is sent only over TLS; sslmode ${sslmode} is refused`);
  const port = spec.port ?? url.port ?? (env.PGPORT ? Number(env.PGPORT) : 5432);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new ConfigError(`${where}: port ${port} is not a TCP port`);
  const rootcert = spec.sslrootcert ?? url.sslrootcert ?? env.PGSSLROOTCERT;
  const defaultCa = join(homedir(), '.postgresql', 'root.crt');
  const verifies = sslmode === 'verify-ca' || sslmode === 'verify-full' || (sslmode === 'require' && rootcert !== undefined);
  const ca = !verifies ? null : rootcert ?? (existsSync(defaultCa) ? defaultCa : 'system');
  const connectS = spec.connectTimeoutS ?? url.connectTimeoutS ?? (env.PGCONNECT_TIMEOUT ? Number(env.PGCONNECT_TIMEOUT) : 15);
  return {
    target: {
      name: spec.name, engine: spec.engine,
      host: spec.host ?? url.host ?? env.PGHOST ?? 'localhost', port,
      database: spec.database ?? url.database ?? env.PGDATABASE ?? user, user, sslmode, ca,
      auth: spec.auth, region: spec.region ?? null, reader: spec.reader, parallel: spec.parallel,
      statementTimeoutMs: spec.statementTimeoutS * 1000,
      connectTimeoutMs: Math.max(1, connectS) * 1000,
      applicationName: spec.applicationName ?? url.applicationName ?? env.PGAPPNAME ?? 'reckon',
    },
    urlPassword: url.password,
  };
}

/** node:tls options for a target's sslmode; false for no TLS. Throws ConfigError when the CA file cannot be read. */
export function tlsOptions(t: ConnectionTarget): false | ConnectionOptions {
  if (t.sslmode === 'disable') return false;
  let ca: string | undefined;
  if (t.ca && t.ca !== 'system') {
    try { ca = readFileSync(t.ca, 'utf8'); } catch (e) { throw new ConfigError(`databases.${t.name}: the CA file ${t.ca} cannot be read: ${(e as Error).message}`); }
  }
  if (t.ca === null) return { rejectUnauthorized: false };
  // verify-ca (and require with a CA file) checks the chain but not the host name, as libpq does.
  const identity = t.sslmode === 'verify-full' ? {} : { checkServerIdentity: () => undefined };
  return { rejectUnauthorized: true, ...(ca ? { ca } : {}), ...identity };
}

/** The password for a target: the URL's, PGPASSWORD, or the password file's line for it. */
async function passwordFor(t: ConnectionTarget, urlPassword: string | undefined, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  if (urlPassword !== undefined) return urlPassword;
  if (env.PGPASSWORD !== undefined) return env.PGPASSWORD;
  const { default: pgpass } = await import('pgpass');
  // Its own "WARNING: password file … has group or world access" would be a stray stderr line: the
  // "no password" error says it instead (ignoredPassFile).
  (pgpass as unknown as { warnTo?: (s: NodeJS.WritableStream) => unknown }).warnTo?.(new Writable({ write: (_c, _e, done) => done() }));
  return new Promise((resolve) => pgpass({ host: t.host, port: t.port, database: t.database, user: t.user }, (pass) => resolve(pass ?? undefined)));
}

/** A note that the password file exists but was not read because others may read it (as libpq, the pgpass package skips such a file); empty otherwise. */
function ignoredPassFile(env: NodeJS.ProcessEnv): string {
  const file = env.PGPASSFILE ?? join(homedir(), '.pgpass');
  try {
    const mode = statSync(file).mode;
    return (mode & 0o077) !== 0 ? `; the password file ${file} was not read: others may read it (make it private: chmod 600 ${file})` : '';
  } catch {
    return '';
  }
}

/** An Aurora DSQL IAM authentication token for the target (admin's for the user `admin`). */
async function dsqlToken(t: ConnectionTarget): Promise<string> {
  const { DsqlSigner } = await import('@aws-sdk/dsql-signer');
  const signer = new DsqlSigner({ hostname: t.host, region: t.region ?? undefined, expiresIn: 900 });
  return t.user === 'admin' ? signer.getDbConnectAdminAuthToken() : signer.getDbConnectAuthToken();
}

/** A short reason for a connection failure, for people (never the secret: the caller masks it). */
export function connectionReason(e: unknown, t: ConnectionTarget): string {
  const err = e as { code?: string; message?: string };
  const code = err.code ?? '';
  const msg = (err.message ?? String(e)).split('\n')[0];
  if (code === 'ECONNREFUSED') return 'connection refused (is a server listening on that host and port?)';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `the host name ${t.host} cannot be resolved`;
  // pg's own wording for connectionTimeoutMillis; a server's message naming a timeout setting (a
  // pooler refusing the startup parameter statement_timeout) is not one.
  if (code === 'ETIMEDOUT' || /connection timeout|timed out/i.test(msg)) return `no answer within ${t.connectTimeoutMs / 1000} s`;
  if (/unsupported startup parameter/i.test(msg)) return `${msg} (a connection pooler such as PgBouncer: give it ignore_startup_parameters = statement_timeout, options, or connect to the server; docs/postgres.md "Connection poolers")`;
  if (code === '28P01') return `${msg} (the password comes from PGPASSWORD, the password file or url_env${t.auth === 'dsql-iam' ? '; for DSQL, the IAM token' : ''})`;
  if (/^(DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT|CERT_)/.test(code)) {
    return `TLS: the server's certificate is not trusted with ${t.ca === 'system' ? "Node's CA store" : `the CA file ${t.ca}`} (${msg})`;
  }
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return `TLS: the server's certificate does not name ${t.host} (${msg}); verify-full checks the host name`;
  if (/does not support SSL/i.test(msg)) return `the server does not offer TLS, and sslmode ${t.sslmode} requires it`;
  return /^[0-9A-Z]{5}$/.test(code) ? `${msg} (SQLSTATE ${code})` : msg;
}

/**
 * Replaces every secret in `text` by `***`; URL passwords (`//user:secret@`) are masked too. A
 * short secret (under 6 characters) is masked only where it stands alone, between characters that
 * are not letters or digits: masked inside words (`e***ecutions` for the password `x`), the stars
 * themselves would tell it.
 */
export function maskSecrets(text: string, secrets: readonly string[]): string {
  let out = text.replace(/(\/\/[^:/@\s]*:)[^@\s]*@/g, '$1***@');
  for (const s of secrets) {
    if (s.length >= 6) out = out.split(s).join('***');
    else if (s.length >= 1) out = out.replace(new RegExp(`(?<![\\p{L}\\p{N}])${s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\p{L}\\p{N}])`, 'gu'), '***');
  }
  return out;
}

/**
 * Connects to a database for `datasets`: the lead session and, for parallel readers, up to
 * `parallel − 1` helpers (never more than the datasets). Throws ConfigError (exit 2) naming the
 * database, its host and the datasets when the server refuses a connection, the credentials or TLS.
 */
export async function openDatabase(spec: DatabaseSpec, datasets: readonly string[], env: NodeJS.ProcessEnv): Promise<OpenDatabase> {
  const { target, urlPassword } = resolveConnection(spec, env);
  const secrets: string[] = [];
  if (urlPassword) secrets.push(urlPassword);
  if (env.PGPASSWORD) secrets.push(env.PGPASSWORD);
  const mask = (text: string) => maskSecrets(text, secrets);
  const password = async () => {
    const p = target.auth === 'dsql-iam' ? await dsqlToken(target) : await passwordFor(target, urlPassword, env);
    if (p === undefined) throw new ConfigError(`no password for ${target.user} at ${target.host}:${target.port}: set PGPASSWORD, add a line to the password file (~/.pgpass or PGPASSFILE), or name a URL variable with url_env${ignoredPassFile(env)}`);
    secrets.push(p);
    return p;
  };
  const fail = (e: unknown): never => {
    if (e instanceof ConfigError) throw new ConfigError(mask(`database ${target.name} (${describeTarget(target)}) for ${datasets.join(', ')}: ${e.message}`));
    throw new ConfigError(mask(`database ${target.name} (${describeTarget(target)}) for ${datasets.join(', ')}: cannot connect: ${connectionReason(e, target)}`));
  };
  let ssl: false | ConnectionOptions;
  try { ssl = tlsOptions(target); } catch (e) { return fail(e); }
  let client: pg.Client;
  try {
    client = await connectOnce(target, ssl, password);
  } catch (e) {
    // prefer: TLS when offered, otherwise in the clear (libpq's default).
    if (target.sslmode !== 'prefer' || !/does not support SSL/i.test((e as Error).message ?? '')) return fail(e);
    ssl = false;
    try { client = await connectOnce(target, ssl, password); } catch (e2) { return fail(e2); }
  }
  const sessions = [session(target, client, mask)];
  try {
    // Helpers connect as the lead did (prefer: with TLS only when the lead got it).
    for (let i = 1; i < Math.min(target.parallel, datasets.length); i++) sessions.push(session(target, await connectOnce(target, ssl, password), mask));
  } catch (e) {
    for (const s of sessions) await s.client.end().catch(() => undefined);
    return fail(e);
  }
  return {
    ...sessions[0], datasets, helpers: sessions.slice(1),
    close: async () => { for (const s of sessions) await s.client.end().catch(() => undefined); },
  };
}

/**
 * Asks the server to cancel the statement `session` runs (the protocol's CancelRequest on a new
 * socket, as libpq's PQcancel; no credentials, and handled before pg_hba, so it needs no TLS).
 * Closing the client's socket alone leaves a backend sorting or sleeping until it next writes to
 * it, holding the snapshot (and the server's vacuum horizon) meanwhile. PostgreSQL only (not
 * DSQL); best effort, settled within 2 s whatever happens.
 */
export function cancelStatement(session: Session): Promise<void> {
  const { target: t, client } = session;
  const { processID, secretKey } = client as unknown as { processID?: number; secretKey?: number };
  if (t.engine !== 'postgres' || processID === undefined || secretKey === undefined) return Promise.resolve();
  // To the address this session's socket is connected to, as libpq does: the host name may resolve
  // to another server now (a reader endpoint), where the request would be lost.
  const stream = (client as unknown as { connection?: { stream?: { remoteAddress?: string; remotePort?: number } } }).connection?.stream;
  const address = stream?.remoteAddress && stream.remotePort ? { host: stream.remoteAddress, port: stream.remotePort } : { host: t.host, port: t.port };
  return new Promise((resolve) => {
    const socket = t.host.startsWith('/') ? connect(join(t.host, `.s.PGSQL.${t.port}`)) : connect(address.port, address.host);
    const done = () => { socket.destroy(); resolve(); };
    socket.setTimeout(2000, done);
    socket.on('error', done);
    socket.on('close', done);
    socket.on('connect', () => {
      const packet = Buffer.alloc(16);
      packet.writeInt32BE(16, 0);
      packet.writeInt32BE(80877102, 4);
      packet.writeInt32BE(processID, 8);
      packet.writeInt32BE(secretKey, 12);
      socket.end(packet);
    });
  });
}

function session(target: ConnectionTarget, client: pg.Client, mask: (t: string) => string): Session {
  let lastError: Error | undefined;
  // The first error says why (e.g. 57P01, the backend was terminated); the socket's end follows it.
  client.on('error', (e) => { lastError ??= e; });
  return { target, client, mask, lastError: () => lastError };
}

async function connectOnce(t: ConnectionTarget, ssl: false | ConnectionOptions, password: () => Promise<string>): Promise<pg.Client> {
  const client = new pg.Client({
    host: t.host, port: t.port, database: t.database, user: t.user, password, ssl,
    application_name: t.applicationName,
    statement_timeout: t.statementTimeoutMs,
    connectionTimeoutMillis: t.connectTimeoutMs,
    keepAlive: true,
    // PostgreSQL sends text in the client encoding; the loader reads UTF-8 (DSQL is UTF-8 only and takes no options).
    // A reader done with its datasets waits in the snapshot's transaction for the others: a role's or
    // database's idle_in_transaction_session_timeout (common hardening on RDS) must not end it.
    ...(t.engine === 'postgres' ? { options: '-c client_encoding=UTF8 -c idle_in_transaction_session_timeout=0' } : {}),
  });
  // An error before connect() settles is reported by connect(); one after it by the run.
  client.on('error', () => undefined);
  await client.connect();
  return client;
}
