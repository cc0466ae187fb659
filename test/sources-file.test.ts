/**
 * The sources file (issue 21): YAML or JSON, every mistake reported at once with its path (exit 2);
 * the rendering rules that refuse binary floats by name. No database is needed here
 * (test/postgres-source.test.ts runs a real server).
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { datasetSpec } from '../pipeline/contract/datasets.js';
import { ConfigError } from '../pipeline/core/errors.js';
import { isSourcesFile, loadSourcesFile } from '../pipeline/sources/sources-file.js';
import { renderPlan } from '../pipeline/sources/postgres/render.js';
import { connectionReason, maskSecrets, resolveConnection } from '../pipeline/sources/postgres/connection.js';
import { csvField } from '../pipeline/sources/postgres/extract.js';
import { rowKeyText } from '../pipeline/sources/postgres/label.js';

const dir = mkdtempSync(join(tmpdir(), 'reckon-sources-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const write = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};

async function problems(path: string): Promise<{ message: string; lines: string[] }> {
  try {
    await loadSourcesFile(path);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    const message = (e as Error).message;
    return { message, lines: message.split('\n').slice(1).map((l) => l.trim()) };
  }
  throw new Error('the sources file was accepted');
}

describe('the sources file', () => {
  it('reads YAML: databases, tables, queries, bounds, watermark queries, folders and a default location', async () => {
    mkdirSync(join(dir, 'statements'), { recursive: true });
    const p = write('ok.yaml', `
version: 1
default: ./statements
databases:
  authority:
    host: db.internal
    database: orders
    user: reckon_ro
    sslmode: verify-full
    sslrootcert: ca.pem
  ledger:
    url_env: LEDGER_URL
    reader: cursor
    statement_timeout_s: 60
datasets:
  orders:
    database: authority
    table: trading.orders
    since: { days_before_window: 30 }
    watermark: { query: "select last_event_time from projection_checkpoint where projection_name = 'orders';" }
  ledger_postings:
    database: ledger
    query: |
      select * from postings where booked;
  venue_fills:
    location: ./statements
`);
    const plan = await loadSourcesFile(p);
    expect(isSourcesFile(p)).toBe(true);
    expect(isSourcesFile(dir)).toBe(false);
    expect(plan.defaultLocation).toBe(join(dir, 'statements'));
    expect(plan.databases.get('authority')).toMatchObject({ engine: 'postgres', auth: 'password', reader: 'copy', sslmode: 'verify-full', sslrootcert: join(dir, 'ca.pem'), statementTimeoutS: 900 });
    expect(plan.databases.get('ledger')).toMatchObject({ urlEnv: 'LEDGER_URL', reader: 'cursor', statementTimeoutS: 60 });
    expect(plan.datasets.get('orders')).toEqual({
      kind: 'database', dataset: 'orders', database: 'authority', table: 'trading.orders', sourceSql: 'SELECT * FROM "trading"."orders"',
      since: { column: 'accepted_at', daysBeforeWindow: 30 },
      watermarkQuery: "select last_event_time from projection_checkpoint where projection_name = 'orders'",
    });
    expect(plan.datasets.get('ledger_postings')).toMatchObject({ sourceSql: 'select * from postings where booked' });
    expect(plan.datasets.get('venue_fills')).toEqual({ kind: 'location', dataset: 'venue_fills', location: join(dir, 'statements') });
    expect(plan.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('reports every mistake at once, each with its path', async () => {
    const p = write('bad.json', JSON.stringify({
      version: 2,
      colour: 'blue',
      databases: {
        authority: { sslmode: 'allow', port: 70000 },
        secret: { url: 'postgres://reckon:hunter2@db.internal/orders', url_env: 'X' },
        Ledger: { host: 'ledger.internal' },
        dsql: { auth: 'dsql-iam', sslmode: 'disable' },
        unused: { host: 'nowhere' },
      },
      datasets: {
        orders: { database: 'authority', table: 'orders', query: 'select 1' },
        executions: { database: 'nosuch', table: 'executions; drop table x' },
        trades: { location: './x' },
        venue_fills: { location: './x', database: 'authority' },
        ledger_postings: { database: 'Ledger', query: 'select 1; select 2' },
        reservations: { database: 'secret', table: 'reservations' },
        bank_statement_lines: { database: 'dsql', table: 'lines', since: { days_before_window: 1 } },
        bank_statements: { database: 'dsql', table: 'bank_statements', since: { days_before_window: -1 } },
        positions: {},
      },
    }));
    const { message, lines } = await problems(p);
    expect(message).toMatch(/^the sources file .*bad\.json is invalid \(20 problems\):/);
    expect(lines).toEqual(expect.arrayContaining([
      'version: Invalid input: expected 1',
      expect.stringMatching(/^\(root\): Unrecognized key: "colour"/),
      expect.stringMatching(/^databases\.authority\.sslmode: /),
      expect.stringMatching(/^databases\.authority\.port: /),
      'databases.Ledger: a database name is lower-case letters, digits and _ (it names the database in quarantine entries and the manifest)',
      'databases.dsql.sslmode: an IAM token is sent only over TLS: use require, verify-ca or verify-full',
      "databases.dsql.region: dsql-iam needs the cluster's AWS Region (or a host name *.dsql.<region>.on.aws)",
      'databases.dsql.host: dsql-iam signs the token for a host name: give host',
      'databases.unused: no dataset reads from this database',
      'datasets.orders: give exactly one of table or query',
      'datasets.executions.database: no database nosuch under databases (known: authority, secret, Ledger, dsql, unused)',
      'datasets.executions.table: must be a table name such as orders or trading.orders (use query for anything else)',
      expect.stringMatching(/^datasets\.trades: unknown dataset; the datasets are orders, outbox_events, /),
      'datasets.venue_fills.database: a dataset read from a location takes only location (its _watermark.json says its watermark)',
      "datasets.ledger_postings.query: must be one SELECT statement: no ';' anywhere, not even in a string literal or a comment (write chr(59) for one in a literal)",
      "datasets.bank_statement_lines.since.column: bank_statement_lines's window column is not a timestamp column of the query: name the column the bound applies to",
      'databases.secret.url: give url or url_env, not both',
      expect.stringMatching(/^datasets\.bank_statements\.since\.days_before_window: /),
      'datasets.positions: give database (with table or query) or location',
    ]));
    // The URL with a password is refused, and the password is not repeated in the message.
    expect(lines).toContain('databases.secret.url: holds a password; a sources file holds no secret: use PGPASSWORD, ~/.pgpass, or url_env naming a variable that holds the URL');
    expect(message).not.toContain('hunter2');
  });

  it('refuses a password= URL parameter, user info in host, and a key given twice in JSON as in YAML', async () => {
    const db = (extra: Record<string, unknown>) => ({ databases: { a: extra }, datasets: { orders: { database: 'a', table: 'orders' } } });
    const one = async (name: string, doc: unknown) => (await problems(write(name, JSON.stringify(doc)))).lines;
    expect(await one('pw-param.json', db({ url: 'postgres://reckon@db.example/orders?password=hunter2&sslmode=require' }))).toEqual(['databases.a.url: holds a password; a sources file holds no secret: use PGPASSWORD, ~/.pgpass, or url_env naming a variable that holds the URL']);
    const host = 'is one host name, IP address or Unix socket folder (an absolute path); no user, password, URL, list or control character (give a URL as url or url_env)';
    for (const h of ['reckon:hunter2@db.example', 'db.example/orders', 'db example', 'db1,db2', 'db\u0000evil']) expect(await one('host.json', db({ host: h }))).toEqual([`databases.a.host: ${host}`]);
    // URL parameters: several hosts, one reckon does not read (a typo would pass silently), one given twice.
    expect(await one('hosts.json', db({ url: 'postgres://reckon@db1:5432,db2:5432/orders' }))).toEqual(["databases.a.url: names several hosts; give one (reckon reads from one server: a cluster's reader or writer endpoint)"]);
    expect(await one('typo.json', db({ url: 'postgres://reckon@db/orders?sslmod=require' }))).toEqual(['databases.a.url: has the parameter(s) sslmod, which reckon does not read (it reads host, port, user, password, sslmode, sslrootcert, application_name, connect_timeout)']);
    expect(await one('twice-param.json', db({ url: 'postgres://reckon@db/orders?sslmode=disable&sslmode=require' }))).toEqual(['databases.a.url: gives the parameter(s) sslmode more than once']);
    // A byte order mark (an editor's) is not part of the document.
    await expect(loadSourcesFile(write('bom.json', `\uFEFF${JSON.stringify(db({ host: 'db' }))}`))).resolves.toMatchObject({ path: expect.stringContaining('bom.json') });
    await expect(loadSourcesFile(write('socket.json', JSON.stringify(db({ host: '/var/run/postgresql' }))))).resolves.toMatchObject({ path: expect.stringContaining('socket.json') });
    const twice = '{"databases": {"a": {"host": "db"}}, "datasets": {"orders": {"database": "a", "table": "orders"}, "orders": {"database": "a", "table": "executions"}}}';
    expect((await problems(write('twice.json', twice))).message).toMatch(/^the sources file .*twice\.json is not valid JSON: Map keys must be unique/);
  });

  it('refuses a file that is not YAML, and one that does not exist, as configuration errors', async () => {
    expect((await problems(write('broken.yaml', 'datasets: [unclosed'))).message).toMatch(/is not valid YAML/);
    await expect(loadSourcesFile(join(dir, 'missing.yml'))).rejects.toThrow(/cannot read the sources file/);
  });
});

describe('connections', () => {
  const spec = { name: 'authority', engine: 'postgres', auth: 'password', reader: 'copy', statementTimeoutS: 900, connectTimeoutS: 15, applicationName: 'reckon', parallel: 2 } as const;

  it('take the file, then the URL, then the PG* variables, then libpq defaults', () => {
    const env = { PGHOST: 'pg.env', PGPORT: '6432', PGUSER: 'env_user', PGDATABASE: 'env_db', PGSSLMODE: 'require', URL: 'postgres://url_user:s3cret@url.host:7000/url_db?sslmode=verify-ca&sslrootcert=/ca.pem' };
    expect(resolveConnection(spec, env).target).toMatchObject({ host: 'pg.env', port: 6432, user: 'env_user', database: 'env_db', sslmode: 'require', ca: null });
    const fromUrl = resolveConnection({ ...spec, urlEnv: 'URL' }, env);
    expect(fromUrl.target).toMatchObject({ host: 'url.host', port: 7000, user: 'url_user', database: 'url_db', sslmode: 'verify-ca', ca: '/ca.pem' });
    expect(fromUrl.urlPassword).toBe('s3cret');
    expect(JSON.stringify(fromUrl.target)).not.toContain('s3cret');
    expect(resolveConnection({ ...spec, urlEnv: 'URL', host: 'file.host', sslmode: 'disable' }, env).target).toMatchObject({ host: 'file.host', port: 7000, sslmode: 'disable' });
    expect(() => resolveConnection(spec, { PGSSLMODE: 'allow' })).toThrow(/sslmode 'allow' is not one of/);
    expect(() => resolveConnection({ ...spec, urlEnv: 'NOPE' }, {})).toThrow(/the environment variable NOPE is not set/);
  });

  it("refuse a URL whose password holds a bare '%' as a configuration error that does not show it (was URIError, exit 70)", () => {
    let err: unknown;
    try { resolveConnection({ ...spec, urlEnv: 'URL' }, { URL: 'postgres://reckon:50%off!@db.internal:5432/orders' }); } catch (e) { err = e; }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toBe("the URL in URL: its password holds a '%' that is not percent-encoding (%XX): write '%' as %25 and other reserved characters as %XX");
    expect(resolveConnection({ ...spec, urlEnv: 'URL' }, { URL: 'postgres://reckon:50%25off!@db.internal:5432/orders' }).urlPassword).toBe('50%off!');
  });

  it('tells a connection timeout from a server message that names a timeout setting (a pooler)', () => {
    const target = resolveConnection({ ...spec, host: 'db', port: 6432, database: 'orders', user: 'reckon' }, {}).target;
    expect(connectionReason(new Error('Connection terminated due to connection timeout'), target)).toBe('no answer within 15 s');
    expect(connectionReason(Object.assign(new Error('unsupported startup parameter: statement_timeout'), { code: '08P01' }), target)).toBe(
      'unsupported startup parameter: statement_timeout (a connection pooler such as PgBouncer: give it ignore_startup_parameters = statement_timeout, options, or connect to the server; docs/postgres.md "Connection poolers")');
  });

  it('mask every secret and any URL password in a message', () => {
    expect(maskSecrets('failed for postgres://u:p%40ss@h/db and token abc.def', ['abc.def'])).toBe('failed for postgres://u:***@h/db and token ***');
    expect(maskSecrets('a long secret s3cret-long inside words: xs3cret-longx', ['s3cret-long'])).toBe('a long secret *** inside words: x***x');
    // A short one is masked where it stands alone only: stars inside words would tell it.
    expect(maskSecrets('for executions: password x refused (x)', ['x'])).toBe('for executions: password *** refused (***)');
    expect(maskSecrets('a.b+c in a.b+cd and a.b+c', ['a.b+c'])).toBe('*** in a.b+cd and ***');
  });
});

describe('rendering a query result in the contract text form', () => {
  const spec = datasetSpec('ledger_postings');
  const cols = (types: Record<string, string>) => spec.columns.map((c) => ({ name: c.name, type: types[c.name] ?? 'text' }));

  it('refuses a binary float or money column for a money, decimal or int column, by name', () => {
    const fix = 'a decimal, amount or int column must be numeric or an integer type; cast it in a query (amount_minor::numeric AS amount_minor) or change the table';
    for (const [type, rule, what] of [['float8', 'database_float_column', 'double precision (a binary float)'], ['float4', 'database_float_column', 'real (a binary float)'], ['money', 'database_money_column', "PostgreSQL's money type (text in the server's locale)"]]) {
      const plan = renderPlan(spec, 'select 1', cols({ amount_minor: type }));
      expect(plan).toMatchObject({ kind: 'refused', column: 'amount_minor', rule, message: `column amount_minor is ${what}; ${fix}` });
    }
    expect(renderPlan(spec, 'select 1', cols({ leg: 'float8' }))).toMatchObject({ kind: 'refused', column: 'leg' });
    // Every refused column is named in the one entry.
    expect(renderPlan(spec, 'select 1', cols({ leg: 'float4', amount_minor: 'float8', ledger_seq: 'money' }))).toMatchObject({ kind: 'refused', column: 'leg', rule: 'database_float_column',
      message: 'column leg is real (a binary float); a decimal, amount or int column must be numeric or an integer type; cast it in a query (leg::numeric AS leg) or change the table; also amount_minor is double precision (a binary float); ledger_seq is PostgreSQL\'s money type (text in the server\'s locale)' });
    // A float in a text column is only text (its form is judged by the column's rule).
    expect(renderPlan(spec, 'select 1', cols({ posting_set_id: 'float8' })).kind).toBe('select');
  });

  it('keeps unknown columns as empty extra columns and sorts by the row key first', () => {
    const plan = renderPlan(spec, 'select * from postings', [...cols({ amount_minor: 'int8', effective_at: 'timestamptz' }), { name: 'note', type: 'text' }]);
    if (plan.kind !== 'select') throw new Error('refused');
    expect(plan.columns.find((c) => c.name === 'note')).toEqual({ name: 'note', type: 'text', role: 'extra' });
    expect(plan.sql).toContain('NULL::text AS "note"');
    expect(plan.sql).toMatch(/ORDER BY q\."posting_set_id" COLLATE "C", q\."leg" COLLATE "C", q\."effective_at", q\."account_id" COLLATE "C"/);
    expect(plan.sql).not.toMatch(/q\."note"( COLLATE|::text COLLATE|,)/);
  });

  it('writes CSV fields as PostgreSQL COPY does, and reads a row key back from a quarantined row', () => {
    expect(['a', '', null, 'x,y', 'say "hi"', 'two\nlines'].map((v) => csvField(v, false))).toEqual(['a', '""', '', '"x,y"', '"say ""hi"""', '"two\nlines"']);
    expect(csvField('\\.', true)).toBe('"\\."');
    const header = spec.columns.map((c) => c.name);
    expect(rowKeyText('ledger_postings', header, '2026-11-02T00:00:00Z,"PS,1",2,ACC,USD,DEBIT,5,CASH,,,7,2026-11-02T00:00:01Z')).toBe('posting_set_id=PS,1, leg=2');
  });
});
