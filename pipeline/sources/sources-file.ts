/**
 * The sources file (issue 21, docs/postgres.md): `--sources FILE.yaml|.yml|.json` says where each
 * dataset of CONTRACT §2 comes from — a PostgreSQL-compatible database (a named connection and a
 * table or a query returning the contract's columns) or a source location (a local folder or
 * `s3://bucket/prefix` holding the dataset's folder, as a `--sources` location does). Datasets not
 * listed come from `default` when it is given, and are absent otherwise (an empty dataset with no
 * watermark, as for a missing folder).
 *
 * Parsed once with zod and frozen; every problem is reported at once, each with its path in the
 * document (ConfigError, exit 2). A sources file holds no secret: a connection URL with a password
 * is refused (the password comes from PGPASSWORD, ~/.pgpass, a URL in an environment variable
 * named by `url_env`, or an IAM token for Aurora DSQL).
 */
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { z } from '../core/zod.js';
import { DATASETS } from '../contract/datasets.js';
import { ConfigError } from '../core/errors.js';

/** True when `location` names a sources file (by its extension) rather than a source folder. */
export function isSourcesFile(location: string): boolean {
  if (location.startsWith('s3://') || !/\.(ya?ml|json)$/i.test(location)) return false;
  try { return !statSync(location).isDirectory(); } catch { return true; }
}

const NAME = /^[a-z][a-z0-9_]{0,62}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const SSLMODES = ['disable', 'prefer', 'require', 'verify-ca', 'verify-full'] as const;
export type SslMode = (typeof SSLMODES)[number];

const DatabaseEntry = z.strictObject({
  engine: z.enum(['postgres', 'aurora-dsql']).optional(),
  url: z.string().min(1).optional(),
  url_env: z.string().regex(ENV_NAME, 'must be the name of an environment variable').optional(),
  host: z.string().min(1).optional(),
  port: z.number().int().min(1).max(65535).optional(),
  database: z.string().min(1).optional(),
  user: z.string().min(1).optional(),
  sslmode: z.enum(SSLMODES).optional(),
  sslrootcert: z.string().min(1).optional(),
  auth: z.enum(['password', 'dsql-iam']).optional(),
  region: z.string().regex(/^[a-z]{2}(-[a-z]+)+-[0-9]+$/, 'must be an AWS Region such as ap-northeast-1').optional(),
  reader: z.enum(['copy', 'cursor']).optional(),
  parallel: z.number().int().min(1).max(8).optional(),
  statement_timeout_s: z.number().int().min(1).max(86_400).optional(),
  connect_timeout_s: z.number().int().min(1).max(600).optional(),
  application_name: z.string().min(1).max(63).optional(),
});

/** A postgres:// URL whose authority lists several hosts (libpq's failover form). */
export const SEVERAL_HOSTS = /^postgres(ql)?:\/\/[^/?#]*,/i;

/** The URL parameters reckon reads (libpq's names); `password` is read from url_env only (refused in a sources file). */
export const URL_PARAMETERS = ['host', 'port', 'user', 'password', 'sslmode', 'sslrootcert', 'application_name', 'connect_timeout'];

/** Why the query parameters of `u` are refused: one reckon does not read (a typo such as sslmod would pass silently) or one given twice (libpq takes the last; which one applies must not be a guess). */
export function urlParamProblem(u: URL): string | undefined {
  const keys = [...u.searchParams.keys()];
  const unknown = [...new Set(keys.filter((k) => !URL_PARAMETERS.includes(k)))];
  if (unknown.length) return `has the parameter(s) ${unknown.join(', ')}, which reckon does not read (it reads ${URL_PARAMETERS.join(', ')})`;
  const twice = [...new Set(keys.filter((k, i) => keys.indexOf(k) !== i))];
  return twice.length ? `gives the parameter(s) ${twice.join(', ')} more than once` : undefined;
}

/** Why a query with a `;` is refused: one statement, told apart without parsing SQL (a `;` in a literal too; chr(59) writes one). */
const NO_SEMICOLON = "must be one SELECT statement: no ';' anywhere, not even in a string literal or a comment (write chr(59) for one in a literal)";

const DatasetEntry = z.strictObject({
  database: z.string().min(1).optional(),
  table: z.string().min(1).optional(),
  query: z.string().min(1).optional(),
  since: z.strictObject({
    column: z.string().min(1).optional(),
    days_before_window: z.number().int().min(0).max(36_600),
  }).optional(),
  watermark: z.union([z.literal('derived'), z.strictObject({ query: z.string().min(1) })]).optional(),
  location: z.string().min(1).optional(),
});

const Document = z.strictObject({
  version: z.literal(1).optional(),
  default: z.string().min(1).optional(),
  databases: z.record(z.string(), z.unknown()).optional(),
  datasets: z.record(z.string(), z.unknown()),
});

/** A named database connection as the file gives it (unset fields come from the URL, PG* variables and defaults). */
export interface DatabaseSpec {
  readonly name: string;
  readonly engine: 'postgres' | 'aurora-dsql';
  readonly url?: string;
  readonly urlEnv?: string;
  readonly host?: string;
  readonly port?: number;
  readonly database?: string;
  readonly user?: string;
  readonly sslmode?: SslMode;
  /** Absolute path of the CA file, or `system` for Node's CA store. */
  readonly sslrootcert?: string;
  readonly auth: 'password' | 'dsql-iam';
  readonly region?: string;
  readonly reader: 'copy' | 'cursor';
  /** Connections reading at once in one exported snapshot (PostgreSQL; Aurora DSQL reads with one). */
  readonly parallel: number;
  readonly statementTimeoutS: number;
  readonly connectTimeoutS: number;
  readonly applicationName: string;
}

/** Lower bound of a database extract: rows whose `column` is at or after window start − days (or empty). */
export interface ExtractBound {
  readonly column: string;
  readonly daysBeforeWindow: number;
}

/** Where one dataset comes from. */
export type DatasetSource =
  | {
    readonly kind: 'database';
    readonly dataset: string;
    readonly database: string;
    /** The SQL reading the dataset: the `query`, or `SELECT * FROM <table>` with the name quoted. */
    readonly sourceSql: string;
    readonly table?: string;
    readonly since?: ExtractBound;
    readonly watermarkQuery?: string;
  }
  | { readonly kind: 'location'; readonly dataset: string; readonly location: string };

/** A parsed, checked sources file. */
export interface SourcesPlan {
  readonly path: string;
  readonly sha256: string;
  /** Where datasets not listed come from (absolute folder or s3://); undefined: they are absent. */
  readonly defaultLocation?: string;
  readonly databases: ReadonlyMap<string, DatabaseSpec>;
  readonly datasets: ReadonlyMap<string, DatasetSource>;
}

interface Issue { readonly path: string; readonly message: string }

/** `v` when it is a plain object (a mapping in the document), else an empty one. */
const plainObject = (v: unknown): Record<string, unknown> => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

const zodIssues = (prefix: string, e: z.ZodError): Issue[] => e.issues.map((i) => ({ path: [prefix, ...i.path.map(String)].filter(Boolean).join('.'), message: i.message }));

/** A folder path relative to the sources file's folder, or s3:// as given. */
const resolveLocation = (base: string, loc: string) => (loc.startsWith('s3://') ? loc : isAbsolute(loc) ? loc : resolve(base, loc));

/** `schema.table` or `table` as SQL, each part quoted; undefined when it is not such a name. */
export function quoteTableName(name: string): string | undefined {
  const parts = name.split('.');
  if (parts.length > 3 || parts.some((p) => !/^[A-Za-z_][A-Za-z0-9_$]*$/.test(p))) return undefined;
  return parts.map((p) => `"${p}"`).join('.');
}

/** A query as it may stand inside `(…)`: trailing white space and semicolons removed. */
export const bareQuery = (q: string) => q.replace(/[\s;]+$/u, '');

function databaseSpec(name: string, raw: unknown, issues: Issue[]): DatabaseSpec | undefined {
  const at = `databases.${name}`;
  if (!NAME.test(name)) issues.push({ path: at, message: 'a database name is lower-case letters, digits and _ (it names the database in quarantine entries and the manifest)' });
  const p = DatabaseEntry.safeParse(raw);
  if (!p.success) { issues.push(...zodIssues(at, p.error)); return undefined; }
  const d = p.data;
  const before = issues.length;
  if (d.url !== undefined && d.url_env !== undefined) issues.push({ path: `${at}.url`, message: 'give url or url_env, not both' });
  if (d.url !== undefined) {
    let u: URL | undefined;
    if (SEVERAL_HOSTS.test(d.url)) issues.push({ path: `${at}.url`, message: 'names several hosts; give one (reckon reads from one server: a cluster\'s reader or writer endpoint)' });
    else try { u = new URL(d.url); } catch { issues.push({ path: `${at}.url`, message: 'is not a URL such as postgres://reckon@db.example:5432/orders' }); }
    const params = u ? urlParamProblem(u) : undefined;
    if (params) issues.push({ path: `${at}.url`, message: params });
    if (u && !/^postgres(ql)?:$/.test(u.protocol)) issues.push({ path: `${at}.url`, message: 'must start with postgres:// or postgresql://' });
    // libpq takes a password from the user info and from a password= parameter alike.
    if (u && (u.password || u.searchParams.has('password'))) issues.push({ path: `${at}.url`, message: 'holds a password; a sources file holds no secret: use PGPASSWORD, ~/.pgpass, or url_env naming a variable that holds the URL' });
  }
  // A host name, an address, or a Unix socket folder (absolute): never user info or a URL, which would be shown back in messages.
  if (d.host !== undefined && (/[@\s,\u0000-\u001f\u007f]/.test(d.host) || (!d.host.startsWith('/') && d.host.includes('/')))) {
    issues.push({ path: `${at}.host`, message: 'is one host name, IP address or Unix socket folder (an absolute path); no user, password, URL, list or control character (give a URL as url or url_env)' });
  }
  const host = d.host ?? '';
  const engine = d.engine ?? (/\.dsql(-[a-z0-9]+)?\.[a-z0-9-]+\.on\.aws$/i.test(host) ? 'aurora-dsql' : 'postgres');
  const auth = d.auth ?? (engine === 'aurora-dsql' ? 'dsql-iam' : 'password');
  if (auth === 'dsql-iam') {
    if (d.sslmode === 'disable' || d.sslmode === 'prefer') issues.push({ path: `${at}.sslmode`, message: 'an IAM token is sent only over TLS: use require, verify-ca or verify-full' });
    if (!d.region && !/\.dsql(-[a-z0-9]+)?\.([a-z0-9-]+)\.on\.aws$/i.test(host)) issues.push({ path: `${at}.region`, message: 'dsql-iam needs the cluster\'s AWS Region (or a host name *.dsql.<region>.on.aws)' });
    if (!d.host) issues.push({ path: `${at}.host`, message: 'dsql-iam signs the token for a host name: give host' });
  }
  if (engine === 'aurora-dsql' && (d.parallel ?? 1) > 1) issues.push({ path: `${at}.parallel`, message: 'Aurora DSQL cannot share a snapshot between connections (no pg_export_snapshot): one connection reads every dataset' });
  if (issues.length > before) return undefined;
  return {
    name, engine, url: d.url, urlEnv: d.url_env, host: d.host, port: d.port, database: d.database, user: d.user,
    sslmode: d.sslmode ?? (auth === 'dsql-iam' ? 'verify-full' : undefined),
    sslrootcert: d.sslrootcert,
    auth, region: d.region ?? /\.dsql(?:-[a-z0-9]+)?\.([a-z0-9-]+)\.on\.aws$/i.exec(host)?.[1],
    reader: d.reader ?? (engine === 'aurora-dsql' ? 'cursor' : 'copy'),
    parallel: d.parallel ?? (engine === 'aurora-dsql' ? 1 : 2),
    statementTimeoutS: d.statement_timeout_s ?? 900,
    connectTimeoutS: d.connect_timeout_s ?? 15,
    applicationName: d.application_name ?? 'reckon',
  };
}

function datasetSource(name: string, raw: unknown, base: string, databases: ReadonlyMap<string, unknown>, issues: Issue[]): DatasetSource | undefined {
  const at = `datasets.${name}`;
  const spec = DATASETS.find((d) => d.name === name);
  if (!spec) issues.push({ path: at, message: `unknown dataset; the datasets are ${DATASETS.map((d) => d.name).join(', ')}` });
  const p = DatasetEntry.safeParse(raw);
  if (!p.success) { issues.push(...zodIssues(at, p.error)); return undefined; }
  const d = p.data;
  const before = issues.length;
  if (d.location !== undefined) {
    for (const k of ['database', 'table', 'query', 'since', 'watermark'] as const) {
      if (d[k] !== undefined) issues.push({ path: `${at}.${k}`, message: 'a dataset read from a location takes only location (its _watermark.json says its watermark)' });
    }
    return issues.length > before || !spec ? undefined : { kind: 'location', dataset: name, location: resolveLocation(base, d.location) };
  }
  if (d.database === undefined) { issues.push({ path: at, message: 'give database (with table or query) or location' }); return undefined; }
  if (!databases.has(d.database)) issues.push({ path: `${at}.database`, message: `no database ${d.database} under databases${databases.size ? ` (known: ${[...databases.keys()].join(', ')})` : ''}` });
  if ((d.table === undefined) === (d.query === undefined)) issues.push({ path: at, message: 'give exactly one of table or query' });
  const table = d.table === undefined ? undefined : quoteTableName(d.table);
  if (d.table !== undefined && !table) issues.push({ path: `${at}.table`, message: 'must be a table name such as orders or trading.orders (use query for anything else)' });
  if (d.query !== undefined && bareQuery(d.query).includes(';')) issues.push({ path: `${at}.query`, message: NO_SEMICOLON });
  if (typeof d.watermark === 'object' && bareQuery(d.watermark.query).includes(';')) issues.push({ path: `${at}.watermark.query`, message: NO_SEMICOLON });
  let since: ExtractBound | undefined;
  if (d.since && spec) {
    const column = d.since.column ?? (spec.columns.find((c) => c.name === spec.windowColumn && c.kind === 'timestamp')?.name);
    if (!column) issues.push({ path: `${at}.since.column`, message: `${name}'s window column is not a timestamp column of the query: name the column the bound applies to` });
    else since = { column, daysBeforeWindow: d.since.days_before_window };
  }
  if (issues.length > before || !spec) return undefined;
  return {
    kind: 'database', dataset: name, database: d.database, table: d.table,
    sourceSql: table ? `SELECT * FROM ${table}` : bareQuery(d.query!),
    since, watermarkQuery: typeof d.watermark === 'object' ? bareQuery(d.watermark.query) : undefined,
  };
}

/**
 * Reads and checks a sources file. Relative locations and `sslrootcert` are taken from the file's
 * folder. Throws ConfigError (exit 2) listing every problem with its path.
 */
export async function loadSourcesFile(path: string): Promise<SourcesPlan> {
  let bytes: Buffer;
  try { bytes = readFileSync(path); } catch (e) { throw new ConfigError(`cannot read the sources file ${path}: ${(e as Error).message}`, path); }
  let doc: unknown;
  const yamlFile = /\.ya?ml$/i.test(path);
  try {
    // An editor's byte order mark is not part of the document.
    const text = bytes.toString('utf8').replace(/^\uFEFF/, '');
    const { parse } = await import('yaml');
    // JSON.parse keeps the last of two equal keys without a word; read as YAML (JSON's superset)
    // a repeated key is refused, as in a .yaml file.
    if (!yamlFile) JSON.parse(text);
    doc = parse(text, yamlFile ? {} : { schema: 'json' });
  } catch (e) {
    throw new ConfigError(`the sources file ${path} is not valid ${yamlFile ? 'YAML' : 'JSON'}: ${(e as Error).message.split('\n')[0]}`, path);
  }
  return parseSourcesDocument(doc, path, bytes);
}

/** Checks a parsed sources document (see loadSourcesFile); `bytes` are hashed for the manifest. */
export function parseSourcesDocument(doc: unknown, path: string, bytes: Buffer): SourcesPlan {
  const issues: Issue[] = [];
  const base = dirname(path);
  const top = Document.safeParse(doc);
  if (!top.success) issues.push(...zodIssues('', top.error));
  // Entries are checked one by one even when the document as a whole is not right, so that every
  // problem is reported in one go.
  const rawDatabases = new Map(Object.entries(plainObject((doc as { databases?: unknown } | null)?.databases)));
  const rawDatasets = Object.entries(plainObject((doc as { datasets?: unknown } | null)?.datasets));
  const databases = new Map<string, DatabaseSpec>();
  for (const [name, raw] of rawDatabases) {
    const spec = databaseSpec(name, raw, issues);
    if (spec) databases.set(name, { ...spec, sslrootcert: spec.sslrootcert && spec.sslrootcert !== 'system' ? resolveLocation(base, spec.sslrootcert) : spec.sslrootcert });
  }
  const datasets = new Map<string, DatasetSource>();
  for (const [name, raw] of rawDatasets) {
    const src = datasetSource(name, raw, base, rawDatabases, issues);
    if (src) datasets.set(name, src);
  }
  for (const name of rawDatabases.keys()) {
    if (![...rawDatasets].some(([, raw]) => (raw as { database?: unknown } | null)?.database === name)) issues.push({ path: `databases.${name}`, message: 'no dataset reads from this database' });
  }
  if (issues.length) {
    const lines = issues.map((i) => `  ${i.path || '(root)'}: ${i.message}`);
    throw new ConfigError(`the sources file ${path} is invalid (${issues.length} problem${issues.length === 1 ? '' : 's'}):\n${lines.join('\n')}`, path, issues[0].path);
  }
  const defaultLocation = top.success && top.data.default ? resolveLocation(base, top.data.default) : undefined;
  return Object.freeze({ path, sha256: createHash('sha256').update(bytes).digest('hex'), defaultLocation, databases, datasets });
}
