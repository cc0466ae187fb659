/**
 * Windows pulled straight from PostgreSQL (issue 21), against a real server: Debian's PostgreSQL
 * in a throwaway cluster on loopback (test/helpers/postgres.ts), with TLS from a CA made here.
 * The bundled sample day is loaded into typed tables; a run from the database gives the same
 * results digest as from the files, alone and mixed with folders; rows changed during the
 * extract are not seen; binary floats, timestamps without zone, 2^53 and 38-digit amounts,
 * a dropped connection, wrong credentials, a refused connection and TLS verification are tested.
 *
 * Aurora DSQL cannot be reached from here: its IAM token is made by the real AWS SDK signer with
 * test credentials and sent to this server as the password (which refuses it); DSQL itself is not
 * tested (docs/postgres.md says what is and is not).
 */
import { execFileSync } from 'node:child_process';
import { connect as connectTcp, createServer, type AddressInfo, type Socket } from 'node:net';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../pipeline/config/config.js';
import { loadControls } from '../pipeline/controls/definitions.js';
import { selectControls } from '../pipeline/controls/selection.js';
import { DEFAULT_SETTINGS } from '../pipeline/core/settings.js';
import { DATASETS } from '../pipeline/contract/datasets.js';
import { windowForDate } from '../pipeline/contract/window.js';
import { ConfigError } from '../pipeline/core/errors.js';
import { runWindow, type RunResult } from '../pipeline/run/run-window.js';
import { prepareSources } from '../pipeline/sources/source-plan.js';
import { quarantineLines } from '../pipeline/cli/run-command.js';
import { reckon, reckonAsync, reckonIn, ROOT } from './helpers/cli.js';
import { freePort, giveToServer, startPgbouncer, startPostgres, type TestPostgres } from './helpers/postgres.js';
import { checkpointQuery, copyRows, createDatasetTable, loadSourcesIntoPostgres } from './helpers/postgres-sample.js';

const FILES_DIGEST = 'fdf7739e05ddf63f23b01bced7e0dadb3c86e4647850616ddebae256689e84f3';
const SAMPLE = join(ROOT, 'fixtures', 'sample-day', 'sources');
const DATE = '2026-11-02';
const PASSWORD = 'ro-pass-8c1e-not-a-real-secret';
const RC01_READS = ['orders', 'outbox_events', 'executions'];

let pg: TestPostgres;
let dir: string;
let counts: Record<string, number>;
const saved = { PGPASSWORD: process.env.PGPASSWORD };

/** A CA, a server certificate for `localhost` signed by it, and an unrelated second CA. */
function makeCertificates(at: string): { ca: string; otherCa: string; cert: string; key: string } {
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: at, stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  ssl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=reckon test CA');
  ssl('req', '-x509', ...ec, '-keyout', 'other.key', '-out', 'other.pem', '-days', '2', '-subj', '/CN=another CA');
  ssl('req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost');
  writeFileSync(join(at, 'ext.cnf'), 'subjectAltName=DNS:localhost\n');
  ssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.crt', '-days', '2', '-extfile', 'ext.cnf');
  return { ca: join(at, 'ca.pem'), otherCa: join(at, 'other.pem'), cert: join(at, 'server.crt'), key: join(at, 'server.key') };
}
let certs: ReturnType<typeof makeCertificates>;

/** Connection fields of a sources file for database `database` of the test server. */
const conn = (database: string, extra: Record<string, unknown> = {}) => ({ host: 'localhost', port: pg.port, database, user: 'reckon_ro', sslmode: 'disable', ...extra });
/** Every dataset from `database`, each with its watermark from projection_checkpoint. */
const allFrom = (database: string, only: readonly string[] = DATASETS.map((d) => d.name)) =>
  Object.fromEntries(only.map((d) => [d, { database, table: d, watermark: { query: checkpointQuery(d) } }]));

let fileNo = 0;
function sourcesFile(doc: unknown): string {
  const p = join(dir, `sources-${++fileNo}.json`);
  writeFileSync(p, JSON.stringify(doc, null, 2));
  return p;
}

async function runIn(sources: string, controls: string[] = [], store = join(dir, `store-${++fileNo}`)): Promise<RunResult> {
  const definitions = await loadControls();
  return runWindow({
    window: windowForDate(DATE), controls: selectControls(definitions, controls), sources, store, config: await loadConfig(undefined, definitions),
    // Without the delivery cache, so every extract is checked now (the objects say so).
    trigger: 'manual', reason: null, rerunOf: null, settings: { ...DEFAULT_SETTINGS, cache: { ...DEFAULT_SETTINGS.cache, enabled: false } },
  });
}

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'reckon-pg-test-'));
  // The server (user postgres when the tests run as root) reads its certificate from here.
  chmodSync(dir, 0o711);
  certs = makeCertificates(dir);
  await giveToServer(certs.key, 0o600);
  await giveToServer(certs.cert, 0o644);
  pg = await startPostgres({ tls: { certFile: certs.cert, keyFile: certs.key }, conf: [`listen_addresses = 'localhost'`] });
  await pg.sql(`CREATE ROLE reckon_ro LOGIN PASSWORD '${PASSWORD}'`);
  for (const db of ['authority', 'live', 'exact', 'hostile']) await pg.sql(`CREATE DATABASE ${db}`);
  const a = await pg.admin('authority');
  counts = await loadSourcesIntoPostgres(a, SAMPLE, join(dir, 'load'));
  await a.query('GRANT SELECT ON ALL TABLES IN SCHEMA public TO reckon_ro');
  await a.end();
  const l = await pg.admin('live');
  await loadSourcesIntoPostgres(l, SAMPLE, join(dir, 'load-live'), { datasets: RC01_READS });
  await l.query('GRANT SELECT ON ALL TABLES IN SCHEMA public TO reckon_ro');
  await l.end();
  process.env.PGPASSWORD = PASSWORD;
});

afterAll(async () => {
  if (saved.PGPASSWORD === undefined) delete process.env.PGPASSWORD;
  else process.env.PGPASSWORD = saved.PGPASSWORD;
  await pg?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('a run from PostgreSQL', () => {
  let first: RunResult;

  it('gives the sample day the same results digest as its files, over TLS verify-full, and records the extract', async () => {
    const file = sourcesFile({ databases: { authority: conn('authority', { sslmode: 'verify-full', sslrootcert: certs.ca }) }, datasets: allFrom('authority') });
    first = await runIn(file);
    expect(first.results_digest).toBe(FILES_DIGEST);
    expect(first.quarantine_count).toBe(0);
    const m = first.manifestDoc;
    expect(m.sources.location).toBe(file);
    expect(m.sources.file).toEqual({ path: file, sha256: sha256(readFileSync(file)) });
    const db = m.sources.databases!.authority;
    expect(db).toMatchObject({
      engine: 'postgres', host: 'localhost', port: pg.port, database: 'authority', user: 'reckon_ro', sslmode: 'verify-full', tls: true, auth: 'password', reader: 'copy', readers: 2,
      transaction: 'BEGIN READ ONLY ISOLATION LEVEL REPEATABLE READ',
    });
    expect(db.server_version).toMatch(/^1[5-9]\.[0-9]+/);
    expect(db.snapshot).toMatch(/^[0-9]+:[0-9]+:[0-9,]*$/);
    expect(Object.keys(db.datasets)).toEqual(DATASETS.map((d) => d.name));
    for (const d of DATASETS) {
      const x = db.datasets[d.name];
      expect(x.rows).toBe(counts[d.name]);
      expect(x.sql_sha256).toBe(sha256(x.sql));
      expect(x.source_sql).toBe(`SELECT * FROM "${d.name}"`);
      expect(x.watermark).toEqual({ query: checkpointQuery(d.name), query_sha256: sha256(checkpointQuery(d.name)), value: '2026-11-03T00:01:00Z', rows: 1 });
      const ds = m.sources.datasets[d.name];
      expect(ds.origin).toEqual({ kind: 'database', database: 'authority' });
      expect(ds.watermark).toEqual({ source: 'database', value: '2026-11-03T00:01:00Z', complete: true });
      expect(ds.objects).toEqual([{ path: `db:authority/${d.name}`, format: 'csv', size: x.bytes, sha256: x.content_sha256, rows: x.rows, loaded: x.rows, quarantined: 0, checked: 'now' }]);
      expect(ds.records_read).toBe(x.rows);
    }
    expect(db.datasets.orders.columns.map((c) => `${c.name}:${c.type}`).slice(0, 3)).toEqual(['accepted_at:timestamptz', 'order_id:text', 'order_version:int8']);
    expect(JSON.stringify(m)).not.toContain(PASSWORD);
  });

  it('reads the same bytes through a cursor (for servers without COPY), and again on a rerun', async () => {
    const file = sourcesFile({ databases: { authority: conn('authority', { reader: 'cursor', parallel: 1 }) }, datasets: allFrom('authority') });
    const r = await runIn(file);
    expect(r.results_digest).toBe(FILES_DIGEST);
    const a = first.manifestDoc.sources.databases!.authority.datasets;
    const b = r.manifestDoc.sources.databases!.authority.datasets;
    for (const d of DATASETS) expect([d.name, b[d.name].content_sha256, b[d.name].rows]).toEqual([d.name, a[d.name].content_sha256, a[d.name].rows]);
    expect(r.manifestDoc.sources.databases!.authority).toMatchObject({ reader: 'cursor', readers: 1 });
  });

  it('mixes database and file datasets (provider statements from a folder, the rest from the default location)', async () => {
    const fromDb = ['orders', 'outbox_events', 'executions', 'ledger_postings', 'reservations'];
    const file = sourcesFile({
      default: SAMPLE,
      databases: { authority: conn('authority') },
      datasets: { ...allFrom('authority', fromDb), venue_fills: { location: SAMPLE }, bank_statements: { location: SAMPLE } },
    });
    const store = join(dir, 'store-mixed');
    const r = await runIn(file, [], store);
    expect(r.results_digest).toBe(FILES_DIGEST);
    const origins = Object.fromEntries(Object.entries(r.manifestDoc.sources.datasets).map(([d, x]) => [d, x.origin]));
    expect(origins.orders).toEqual({ kind: 'database', database: 'authority' });
    expect(origins.venue_fills).toEqual({ kind: 'folder', location: SAMPLE });
    expect(origins.positions).toEqual({ kind: 'folder', location: SAMPLE });
    expect(Object.keys(r.manifestDoc.sources.databases!.authority.datasets)).toEqual(fromDb);
    expect(r.manifestDoc.sources.datasets.venue_fills.objects.map((o) => o.path)).toEqual(['venue_fills/part-00001.csv']);
    expect(r.manifestDoc.sources.datasets.venue_fills.watermark.source).toBe('declared');
    // The records behind a difference name the extract as its quarantine entries do (docs/records.md).
    const qty = r.manifestDoc.results.find((c) => c.control_id === 'RC02')!.differences.find((d) => d.kind === 'FILL_QTY_MISMATCH')!;
    expect(qty.records!.map((x) => [x.side, x.dataset, x.file, x.record_key])).toEqual([
      ['internal', 'executions', 'db:authority/executions', 'EXE-000205-1'], ['venue', 'venue_fills', 'venue_fills/part-00001.csv', 'XTKS|VF-000205-1'],
    ]);
    const shown = await reckonIn(['records', '--run', r.run_id, '--kind', qty.kind, '--key', qty.key, '--store', store, '--json']);
    expect(shown.json.records.map((x: { source: { state: string } }) => x.source.state)).toEqual(['remote', 'verified']);
    expect(shown.json.records[0].source.message).toContain('is the extract of database authority');
  });

  it('without a default location, a dataset the file does not list is absent: no rows, no watermark', async () => {
    const file = sourcesFile({ databases: { authority: conn('authority') }, datasets: allFrom('authority', ['orders', 'executions']) });
    const r = await runIn(file, ['RC01']);
    // sslmode disable: the manifest says the connection was not encrypted.
    expect(r.manifestDoc.sources.databases!.authority).toMatchObject({ sslmode: 'disable', tls: false });
    const outbox = r.manifestDoc.sources.datasets.outbox_events;
    expect(outbox).toMatchObject({ present: false, objects: [], records_read: 0, watermark: { source: 'none', value: null }, origin: { kind: 'absent' } });
    expect(r.controls[0]).toMatchObject({ status: 'NOT_READY', readiness: { ready: false, reasons: ['outbox_events: the sources file gives it no location and has no default (an empty dataset without a watermark, CONTRACT §2); correct the sources file: waiting does not change this'] } });
  });
});

describe('one snapshot per database', () => {
  let before: RunResult;
  const live = () => sourcesFile({ databases: { live: conn('live', { application_name: 'reckon-live' }) }, datasets: allFrom('live', RC01_READS) });

  it('a run does not see rows another session commits while it extracts', async () => {
    before = await runIn(live(), ['RC01']);
    const rowsBefore = before.manifestDoc.sources.databases!.live.datasets.executions.rows;
    const store = join(dir, 'store-paused');
    const child = reckonAsync(['run', '--date', DATE, '--control', 'RC01', '--sources', live(), '--store', store, '--json'], { env: { RECKON_FAULT_PAUSE: 'extracting:6000' } });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (b) => { stdout += String(b); });
    const paused = new Promise<void>((resolve) => child.stderr!.on('data', (b) => { stderr += String(b); if (stderr.includes('reckon-fault: paused at extracting')) resolve(); }));
    const exited = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? -1)));
    await paused;
    // Orders are extracted; outbox events and executions are not yet. Change all three, and the watermark.
    await pg.sql(`BEGIN;
      UPDATE orders SET ordered_qty = ordered_qty + 1 WHERE order_id = (SELECT min(order_id) FROM orders);
      INSERT INTO executions SELECT executed_at, 'EX-DURING-RUN', order_id, account_id, venue_id, 'VF-DURING-RUN', instrument_id, side, fill_qty, price, price_currency, execution_seq, ingested_at FROM executions ORDER BY execution_id LIMIT 1;
      DELETE FROM outbox_events WHERE event_id = (SELECT min(event_id) FROM outbox_events);
      UPDATE projection_checkpoint SET last_event_time = '2026-11-02T12:00:00Z' WHERE projection_name = 'executions';
      COMMIT;`, 'live');
    const code = await exited;
    const r = JSON.parse(stdout);
    expect(code).toBe(before.exit_code);
    expect(r.results_digest).toBe(before.results_digest);
    const m = JSON.parse(readFileSync(r.manifest.path, 'utf8'));
    expect(m.sources.databases.live.datasets.executions.rows).toBe(rowsBefore);
    expect(m.sources.databases.live.datasets.executions.content_sha256).toBe(before.manifestDoc.sources.databases!.live.datasets.executions.content_sha256);
    expect(m.sources.datasets.executions.watermark.value).toBe('2026-11-03T00:01:00Z');
    // A run started now sees the change (so the change was real).
    const after = await runIn(live(), ['RC01']);
    expect(after.manifestDoc.sources.databases!.live.datasets.executions.rows).toBe(rowsBefore + 1);
    expect(after.results_digest).not.toBe(before.results_digest);
    expect(after.controls[0].status).toBe('NOT_READY');
  });

  it("a reader idle in the snapshot's transaction is not ended by the role's idle_in_transaction_session_timeout", async () => {
    const expected = await runIn(live(), ['RC01']);
    await pg.sql(`ALTER ROLE reckon_ro IN DATABASE live SET idle_in_transaction_session_timeout = '1s'`);
    try {
      // orders takes 3 s on one reader; the other reads outbox_events and executions, then waits idle.
      const slow = sourcesFile({ databases: { live: conn('live', { application_name: 'reckon-live' }) }, datasets: { ...allFrom('live', RC01_READS), orders: { database: 'live', query: 'select o.* from (select pg_sleep(3)) s cross join orders o', watermark: { query: checkpointQuery('orders') } } } });
      const r = await runIn(slow, ['RC01']);
      expect([r.exit_code, r.results_digest]).toEqual([expected.exit_code, expected.results_digest]);
    } finally {
      await pg.sql('ALTER ROLE reckon_ro IN DATABASE live RESET idle_in_transaction_session_timeout');
    }
  });

  it('through PgBouncer ignoring startup parameters, the extract transaction still sets its statement timeout and no idle timeout', async () => {
    const expected = await runIn(live(), ['RC01']);
    const pooler = await startPgbouncer(pg.port, 'live', { reckon_ro: PASSWORD }, ['pool_mode = transaction', 'ignore_startup_parameters = statement_timeout, options']);
    await pg.sql(`ALTER ROLE reckon_ro IN DATABASE live SET idle_in_transaction_session_timeout = '1s'`);
    try {
      // As above, one reader waits idle in the snapshot for 3 s: PgBouncer dropped the startup
      // parameter that turns the role's 1 s timeout off, so only the transaction's SET LOCAL does.
      const query = 'select o.* from (select pg_sleep(3)) s cross join orders o';
      const at = { host: '127.0.0.1', port: pooler.port, application_name: 'reckon-pooled', statement_timeout_s: 2 };
      const slow = sourcesFile({ databases: { live: conn('live', at) }, datasets: { ...allFrom('live', RC01_READS), orders: { database: 'live', query, watermark: { query: checkpointQuery('orders') } } } });
      const timedOut = await runIn(slow, ['RC01']).then(() => 'published', (e: Error) => e.message);
      expect(timedOut).toMatch(/extracting orders failed: canceling statement due to statement timeout \(SQLSTATE 57014\)/);
      const patient = sourcesFile({ databases: { live: conn('live', { ...at, statement_timeout_s: 60 }) }, datasets: { ...allFrom('live', RC01_READS), orders: { database: 'live', query, watermark: { query: checkpointQuery('orders') } } } });
      const r = await runIn(patient, ['RC01']);
      expect([r.exit_code, r.results_digest]).toEqual([expected.exit_code, expected.results_digest]);
    } finally {
      await pg.sql('ALTER ROLE reckon_ro IN DATABASE live RESET idle_in_transaction_session_timeout');
      await pooler.stop();
    }
  });

  it('a signal while connecting to a server that never answers stops the run at once (exit 143, not a ConfigError after connect_timeout_s)', async () => {
    const sockets: Socket[] = [];
    const silent = createServer((c) => { sockets.push(c); });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const port = (silent.address() as AddressInfo).port;
      const file = sourcesFile({ databases: { live: conn('live', { host: '127.0.0.1', port, connect_timeout_s: 60 }) }, datasets: allFrom('live', RC01_READS) });
      const child = reckonAsync(['run', '--date', DATE, '--control', 'RC01', '--sources', file, '--store', join(dir, 'store-silent')]);
      let stderr = '';
      child.stderr!.on('data', (b) => { stderr += String(b); });
      const exited = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? -1)));
      for (let i = 0; i < 100 && sockets.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
      expect(sockets.length).toBeGreaterThan(0);
      const t0 = Date.now();
      child.kill('SIGTERM');
      expect(await exited).toBe(143);
      expect(Date.now() - t0).toBeLessThan(5000);
      expect(stderr).toContain('interrupted by SIGTERM');
    } finally {
      for (const c of sockets) c.destroy();
      silent.close();
    }
  });

  it('a signal while a query check waits on a lock stops the run at once, before any lease', async () => {
    const locker = await pg.admin('live');
    const app = 'reckon-check-signalled';
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE outbox_events IN ACCESS EXCLUSIVE MODE');
      const file = sourcesFile({ databases: { live: conn('live', { application_name: app, statement_timeout_s: 60 }) }, datasets: allFrom('live', RC01_READS) });
      const store = join(dir, 'store-check-signalled');
      const child = reckonAsync(['run', '--date', DATE, '--control', 'RC01', '--sources', file, '--store', store]);
      let stderr = '';
      child.stderr!.on('data', (b) => { stderr += String(b); });
      const exited = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? -1)));
      const waiting = async () => (await pg.sql(`SELECT pid FROM pg_stat_activity WHERE application_name = '${app}' AND wait_event_type = 'Lock'`)).rows.length;
      for (let i = 0; i < 100 && (await waiting()) === 0; i++) await new Promise((r) => setTimeout(r, 100));
      expect(await waiting()).toBe(1);
      const t0 = Date.now();
      child.kill('SIGTERM');
      expect(await exited).toBe(143);
      expect(Date.now() - t0).toBeLessThan(5000);
      expect(stderr).toContain('interrupted by SIGTERM');
      expect(existsSync(join(store, 'leases'))).toBe(false);
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
    expect((await pg.sql(`SELECT pid FROM pg_stat_activity WHERE application_name = '${app}'`)).rows).toEqual([]);
  });

  it('a helper reader that reaches another server (a reader endpoint, a proxy) reads nothing: the lead reads all, in its one snapshot', async () => {
    const expected = await runIn(live(), ['RC01']);
    const other = await startPostgres({ conf: [`listen_addresses = '127.0.0.1'`] });
    // Connections alternate between the two servers, as a round-robin reader endpoint's may.
    let turn = 0;
    const proxy = createServer((client) => {
      const upstream = connectTcp(turn++ % 2 === 0 ? pg.port : other.port, '127.0.0.1');
      client.pipe(upstream).pipe(client);
      const close = () => { client.destroy(); upstream.destroy(); };
      client.on('error', close);
      upstream.on('error', close);
    });
    try {
      await other.sql(`CREATE ROLE reckon_ro LOGIN PASSWORD '${PASSWORD}'`);
      await other.sql('CREATE DATABASE live');
      await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
      const port = (proxy.address() as AddressInfo).port;
      const r = await runIn(sourcesFile({ databases: { live: { ...conn('live', { host: '127.0.0.1', port }), parallel: 2 } }, datasets: allFrom('live', RC01_READS) }), ['RC01']);
      expect([r.exit_code, r.results_digest, r.manifestDoc.sources.databases!.live.readers]).toEqual([expected.exit_code, expected.results_digest, 1]);
    } finally {
      proxy.close();
      await other.stop();
    }
  });

  it("with two databases, the one whose extract fails is reported, not the other's sessions the stopping run closed", async () => {
    const file = sourcesFile({
      databases: { authority: conn('authority'), live: conn('live') },
      datasets: {
        orders: { database: 'authority', query: 'select o.* from (select pg_sleep(2)) s cross join orders o', watermark: { query: checkpointQuery('orders') } },
        outbox_events: { database: 'authority', table: 'outbox_events', watermark: { query: checkpointQuery('outbox_events') } },
        executions: { database: 'live', query: 'select e.* from executions e where 1 / (e.execution_seq - e.execution_seq) = 1', watermark: { query: checkpointQuery('executions') } },
      },
    });
    for (let i = 0; i < 3; i++) {
      await expect(runIn(file, ['RC01'])).rejects.toThrow(`database live (reckon_ro@localhost:${pg.port}/live): extracting executions failed: division by zero (SQLSTATE 22012)`);
    }
  });

  it('a query ending in a -- comment runs as written', async () => {
    const expected = await runIn(live(), ['RC01']);
    const commented = sourcesFile({ databases: { live: conn('live') }, datasets: { ...allFrom('live', RC01_READS), orders: { database: 'live', query: 'select * from orders -- every order', watermark: { query: `${checkpointQuery('orders')} -- the projection` } } } });
    expect((await runIn(commented, ['RC01'])).results_digest).toBe(expected.results_digest);
  });

  it('a statement the server refuses for its data while extracting says a repeat fails the same way (not "can be repeated")', async () => {
    const boom = sourcesFile({ databases: { live: conn('live') }, datasets: { ...allFrom('live', RC01_READS), orders: { database: 'live', query: 'select o.* from orders o where 1 / (o.order_version - o.order_version) = 1', watermark: { query: checkpointQuery('orders') } } } });
    await expect(runIn(boom, ['RC01'])).rejects.toThrow(`database live (reckon_ro@localhost:${pg.port}/live): extracting orders failed: division by zero (SQLSTATE 22012); nothing was published; a repeat fails the same way until the query (in the sources file) or the rows it reads are corrected`);
  });

  it('a connection lost mid-extract fails the run with no manifest, and the run can simply be repeated', async () => {
    const expected = await runIn(live(), ['RC01']);
    const store = join(dir, 'store-dropped');
    // One connection, so the dataset the loss interrupts is known (the next one, outbox_events).
    const oneReader = sourcesFile({ databases: { live: conn('live', { application_name: 'reckon-live', parallel: 1 }) }, datasets: allFrom('live', RC01_READS) });
    const child = reckonAsync(['run', '--date', DATE, '--control', 'RC01', '--sources', oneReader, '--store', store], { env: { RECKON_FAULT_PAUSE: 'extracting:4000' } });
    let stderr = '';
    const paused = new Promise<void>((resolve) => child.stderr!.on('data', (b) => { stderr += String(b); if (stderr.includes('reckon-fault: paused at extracting')) resolve(); }));
    const exited = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? -1)));
    await paused;
    const killed = await pg.sql(`SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity WHERE application_name = 'reckon-live' AND datname = 'live'`);
    expect(killed.rows).toEqual([{ done: true }]);
    expect(await exited).toBe(3);
    expect(stderr).toContain(`reckon: InputError: the connection to database live (reckon_ro@localhost:${pg.port}/live) was lost while extracting outbox_events: terminating connection due to administrator command (SQLSTATE 57P01); nothing was published and the run can be repeated`);
    expect(existsSync(join(store, 'manifests')) ? readdirSync(join(store, 'manifests')) : []).toEqual([]);
    const retry = await runIn(live(), ['RC01'], store);
    expect(retry.results_digest).toBe(expected.results_digest);
    expect(retry.manifestDoc.chain).toEqual({ sequence: 1, previous_manifest_sha256: null });
  });
});

describe('a signal during the extract', () => {
  it('on a signal the server is asked to cancel the statement: a backend busy on its own (not writing to the socket) ends too', async () => {
    const app = 'reckon-cancelled';
    const sleepy = sourcesFile({ databases: { live: conn('live', { application_name: app, parallel: 1 }) }, datasets: { ...allFrom('live', RC01_READS), orders: { database: 'live', query: 'select o.* from (select pg_sleep(60)) s cross join orders o', watermark: { query: checkpointQuery('orders') } } } });
    const child = reckonAsync(['run', '--date', DATE, '--control', 'RC01', '--sources', sleepy, '--store', join(dir, 'store-cancelled')]);
    const exited = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? -1)));
    const busy = async () => (await pg.sql(`SELECT pid FROM pg_stat_activity WHERE application_name = '${app}' AND state = 'active'`)).rows.length;
    for (let i = 0; i < 100 && (await busy()) === 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await busy()).toBe(1);
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    // Without the cancel request the backend would sleep on for up to a minute.
    let left = 1;
    for (let i = 0; i < 30 && left > 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      left = (await pg.sql(`SELECT pid FROM pg_stat_activity WHERE application_name = '${app}'`)).rows.length;
    }
    expect(left).toBe(0);
  });

  it('ends the extract at once (a COPY waiting on a lock included): exit 130, nothing published, no session left on the server', async () => {
    const store = join(dir, 'store-signalled');
    const app = 'reckon-signalled';
    const oneReader = sourcesFile({ databases: { live: conn('live', { application_name: app, parallel: 1 }) }, datasets: allFrom('live', RC01_READS) });
    const child = reckonAsync(['run', '--date', DATE, '--control', 'RC01', '--sources', oneReader, '--store', store], { env: { RECKON_FAULT_PAUSE: 'extracting:60000' } });
    let stderr = '';
    const paused = new Promise<void>((resolve) => child.stderr!.on('data', (b) => { stderr += String(b); if (stderr.includes('reckon-fault: paused at extracting')) resolve(); }));
    const exited = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? -1)));
    // Orders are extracted. Hold the next dataset's table, so the extract cannot end by itself.
    await paused;
    const holder = await pg.admin('live');
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE outbox_events IN ACCESS EXCLUSIVE MODE');
      // Let the loader take orders and wait for the next extract: only the extract can see the signal then.
      await new Promise((r) => setTimeout(r, 1500));
      child.kill('SIGINT');
      const code = await Promise.race([exited, new Promise<number>((resolve) => setTimeout(() => resolve(-2), 20_000))]);
      if (code === -2) child.kill('SIGKILL');
      expect(code).toBe(130);
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end();
    }
    expect(stderr.trimEnd().split('\n').pop()).toBe('reckon: interrupted by SIGINT: nothing published; the leases are released; run again');
    expect(existsSync(join(store, 'manifests')) ? readdirSync(join(store, 'manifests')) : []).toEqual([]);
    // The server has ended the run's backend (its socket closed): nothing holds the snapshot open.
    let left: unknown[] = [];
    for (let i = 0; i < 50; i++) {
      left = (await pg.sql(`SELECT pid FROM pg_stat_activity WHERE application_name = '${app}'`)).rows;
      if (!left.length) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(left).toEqual([]);
  }, 60_000);
});

describe('exact types', () => {
  it('refuses a binary float money column by name, quarantines timestamps without zone by row key, lists an unknown column and quarantines rows lacking one', async () => {
    const c = await pg.admin('hostile');
    await createDatasetTable(c, 'orders', 'orders', { ordered_qty: 'double precision' });
    await copyRows(c, 'orders', ['accepted_at', 'order_id', 'order_version', 'client_order_id', 'account_id', 'instrument_id', 'side', 'ordered_qty', 'status', 'event_at', 'ingested_at'], [
      ['2026-11-02T10:00:00Z', 'O-1', '1', 'C-1', 'ACC-1', 'INS-1', 'BUY', '0.1', 'ACCEPTED', '2026-11-02T10:00:00Z', '2026-11-02T10:00:01Z'],
    ]);
    await c.query(`CREATE TYPE publish_status AS ENUM ('PENDING', 'CLAIMED', 'SENT')`);
    await c.query('CREATE TABLE outbox_events (created_at timestamptz, event_id uuid, aggregate_id text, event_type text, publish_status publish_status, payload jsonb)');
    await c.query(`INSERT INTO outbox_events VALUES ('2026-11-02T10:00:00Z', '00000000-0000-4000-8000-000000000002', 'O-1', 'OrderAccepted', 'SENT', '{}'),
      ('2026-11-02T10:00:00Z', '00000000-0000-4000-8000-000000000001', 'O-1', 'OrderRouted', 'PENDING', '{"a": 1}')`);
    await createDatasetTable(c, 'executions', 'executions', { executed_at: 'timestamp' });
    await copyRows(c, 'executions', ['executed_at', 'execution_id', 'order_id', 'account_id', 'venue_id', 'venue_fill_id', 'instrument_id', 'side', 'fill_qty', 'price', 'price_currency', 'execution_seq', 'ingested_at'], [
      ['2026-11-02T10:00:00.5', 'EX-1', 'O-1', 'ACC-1', 'V', 'F-1', 'INS-1', 'BUY', '0.1', '10', 'USD', '1', '2026-11-02T10:00:01Z'],
    ]);
    await c.query('GRANT SELECT ON ALL TABLES IN SCHEMA public TO reckon_ro');
    await c.end();
    const r = await runIn(sourcesFile({ databases: { hostile: conn('hostile') }, datasets: Object.fromEntries(RC01_READS.map((d) => [d, { database: 'hostile', table: d }])) }), ['RC01']);
    expect(r.exit_code).toBe(3);
    expect(r.controls[0].status).toBe('INCOMPLETE');
    const entries = r.manifestDoc.quarantine.entries.map(({ raw: _raw, ...e }) => e);
    expect(entries).toEqual([
      { dataset: 'orders', file: 'db:hostile/orders', row: null, line: null, column: 'ordered_qty', rule: 'database_float_column', message: 'column ordered_qty is double precision (a binary float); a decimal, amount or int column must be numeric or an integer type; cast it in a query (ordered_qty::numeric AS ordered_qty) or change the table' },
      ...['00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002'].map((id, i) => ({
        dataset: 'outbox_events', file: 'db:hostile/outbox_events', row: i + 1, line: null, column: 'published_at', rule: 'file_missing_column', message: `the query returns no column(s) published_at (row key event_id=${id})`,
      })),
      { dataset: 'executions', file: 'db:hostile/executions', row: 1, line: null, column: 'executed_at', rule: 'timestamp_without_zone', message: "executed_at: '2026-11-02T10:00:00.5' has no zone (Z or ±HH:MM); a timestamp without zone is rejected (row key execution_id=EX-1)" },
    ]);
    // On stderr an entry without a record is about the whole dataset (there is no file).
    expect(quarantineLines(r)[0]).toBe('reckon: quarantined db:hostile/orders whole dataset column ordered_qty: database_float_column: column ordered_qty is double precision (a binary float); a decimal, amount or int column must be numeric or an integer type; cast it in a query (ordered_qty::numeric AS ordered_qty) or change the table');
    expect(r.manifestDoc.sources.datasets.outbox_events.extra_columns).toEqual(['payload']);
    expect(r.manifestDoc.sources.databases!.hostile.datasets.outbox_events.columns.find((x) => x.name === 'publish_status')).toEqual({ name: 'publish_status', type: 'publish_status', role: 'contract' });
    expect(r.manifestDoc.sources.databases!.hostile.datasets.orders).toMatchObject({ rows: 0, fault: { column: 'ordered_qty', rule: 'database_float_column' } });
  });

  it('shows instants no contract form can hold as PostgreSQL prints them, so the timestamp rule rejects them', async () => {
    const c = await pg.admin('hostile');
    await createDatasetTable(c, 'notification_intents');
    await c.query(`INSERT INTO notification_intents VALUES
      ('infinity', 'N-1', 'O-1', 'v1', 'email', true, '2026-11-03T00:00:00Z'),
      ('0044-03-15 00:00:00+00 BC', 'N-2', 'O-1', 'v1', 'email', true, '2026-11-03T00:00:00Z'),
      ('10000-01-01 00:00:00+00', 'N-3', 'O-1', 'v1', 'email', true, '2026-11-03T00:00:00Z'),
      ('2026-11-02 09:30:00.123456+09', 'N-4', 'O-1', 'v1', 'email', true, '2026-11-03T00:00:00Z')`);
    await c.query('GRANT SELECT ON notification_intents TO reckon_ro');
    await c.end();
    const r = await runIn(sourcesFile({ databases: { hostile: conn('hostile') }, datasets: { notification_intents: { database: 'hostile', table: 'notification_intents' } } }), ['RC06']);
    expect(r.manifestDoc.quarantine.entries.map((e) => [e.row, e.column, e.rule, e.message])).toEqual([
      [1, 'created_at', 'timestamp_form', "created_at: 'infinity' is not YYYY-MM-DDTHH:MM:SS[.ffffff](Z|±HH:MM) (row key intent_id=N-1)"],
      [2, 'created_at', 'timestamp_form', "created_at: '0044-03-15T00:00:00ZTBC' is not YYYY-MM-DDTHH:MM:SS[.ffffff](Z|±HH:MM) (row key intent_id=N-2)"],
      [3, 'created_at', 'timestamp_form', "created_at: '10000-01-01T00:00:00Z' is not YYYY-MM-DDTHH:MM:SS[.ffffff](Z|±HH:MM) (row key intent_id=N-3)"],
    ]);
    expect(r.manifestDoc.sources.datasets.notification_intents).toMatchObject({ records_read: 4, records_loaded: 1, quarantined: 3 });
  });

  it('keeps bigint beyond 2^53 and 38-digit numeric exact, applies the lower bound, and reads watermarks from queries', async () => {
    const c = await pg.admin('exact');
    await createDatasetTable(c, 'ledger_postings', 'ledger_postings', { amount_minor: 'bigint' });
    const leg = (set: string, n: string, dir: string, at: string) => [at, set, n, dir === 'DEBIT' ? 'ACC-1' : 'ACC-2', 'USD', dir, '9007199254740993', 'CASH', null, null, n, at];
    await copyRows(c, 'ledger_postings', DATASETS.find((d) => d.name === 'ledger_postings')!.columns.map((x) => x.name), [
      leg('PS-1', '1', 'DEBIT', '2026-11-02T01:00:00Z'), leg('PS-1', '2', 'CREDIT', '2026-11-02T01:00:00Z'),
      leg('PS-OLD', '1', 'DEBIT', '2026-10-28T01:00:00Z'), leg('PS-OLD', '2', 'CREDIT', '2026-10-28T01:00:00Z'),
    ]);
    await createDatasetTable(c, 'account_balances');
    const big = '12345678901234567890123456789012345678';
    await copyRows(c, 'account_balances', ['as_of', 'account_id', 'currency', 'balance_minor', 'reserved_minor', 'available_minor'], [['2026-11-02T00:00:00Z', 'ACC-9', 'EUR', big, '0', big]]);
    for (const d of ['executions', 'reservations']) await createDatasetTable(c, d);
    await c.query('CREATE TABLE projection_checkpoint (projection_name text PRIMARY KEY, last_event_time timestamptz)');
    await c.query(`INSERT INTO projection_checkpoint VALUES ('ledger', '2026-11-03T00:05:00+09:00'), ('other', '2026-11-03T00:00:00Z')`);
    await c.query('GRANT SELECT ON ALL TABLES IN SCHEMA public TO reckon_ro');
    await c.end();
    const file = sourcesFile({
      databases: { exact: conn('exact') },
      datasets: {
        ledger_postings: { database: 'exact', table: 'ledger_postings', since: { column: 'effective_at', days_before_window: 1 }, watermark: { query: "select last_event_time from projection_checkpoint where projection_name = 'ledger'" } },
        account_balances: { database: 'exact', table: 'account_balances', watermark: { query: "select last_event_time from projection_checkpoint where projection_name = 'nobody'" } },
        reservations: { database: 'exact', table: 'reservations', watermark: { query: 'select last_event_time from projection_checkpoint' } },
        executions: { database: 'exact', query: 'select * from executions' },
      },
    });
    const r = await runIn(file, ['RC03']);
    const totals = r.controls[0].totals as Record<string, Record<string, string>>;
    expect(totals.debit_minor_by_currency).toEqual({ USD: '9007199254740993' });
    expect(totals.credit_minor_by_currency).toEqual({ USD: '9007199254740993' });
    expect(totals.opening_balance_minor).toEqual({ 'ACC-9|EUR': big });
    const x = r.manifestDoc.sources.databases!.exact.datasets;
    expect(x.ledger_postings).toMatchObject({ rows: 2, lower_bound: { column: 'effective_at', from: '2026-11-01T00:00:00Z' } });
    expect(x.ledger_postings.sql).toContain(`WHERE q."effective_at" >= '2026-11-01T00:00:00Z'::timestamptz OR q."effective_at" IS NULL`);
    const wm = Object.fromEntries(Object.entries(r.manifestDoc.sources.datasets).filter(([d]) => d in x).map(([d, v]) => [d, v.watermark]));
    expect(wm).toEqual({
      executions: { source: 'derived', value: null },
      ledger_postings: { source: 'database', value: '2026-11-02T15:05:00Z' },
      account_balances: { source: 'database', value: null },
      reservations: { source: 'database', value: null },
    });
    expect(r.manifestDoc.quarantine.entries).toEqual([{ dataset: 'reservations', file: 'db:exact/reservations', row: null, line: null, column: null, rule: 'watermark_query_rows', message: 'the watermark query of reservations returned more than one row; it must return one (its first column is the watermark)', raw: '' }]);
    expect(r.controls[0].status).toBe('INCOMPLETE');
    // Each missing watermark says why, and whether a later run could have it without a change.
    expect(r.controls[0].readiness.reasons).toEqual([
      'reservations has no watermark: its watermark query (datasets.reservations.watermark.query) returned 2 rows, not one; correct the sources file: waiting does not change this',
      'account_balances has no watermark: its watermark query (datasets.account_balances.watermark.query) returned no row; correct the sources file: waiting does not change this',
      'executions has no watermark (its extract holds no record to derive one from)',
      'ledger_postings watermark 2026-11-02T15:05:00Z (database) is before the window end 2026-11-03T00:00:00Z',
    ]);
  });
});

describe("the extract's order", () => {
  it('depends on the rows alone: a table rewritten in another physical order gives the same bytes, record numbers and results digest', async () => {
    await pg.sql('CREATE DATABASE reorder');
    const c = await pg.admin('reorder');
    await loadSourcesIntoPostgres(c, SAMPLE, join(dir, 'load-reorder'), { datasets: RC01_READS });
    // A comma makes the executions extract quoted CSV (the server sorts it); byte 0x01 is a line
    // DuckDB does not read as one field (the server sorts the orders); the outbox is sorted by reckon.
    await c.query(`UPDATE executions SET execution_id = execution_id || ',b' WHERE execution_id = (SELECT min(execution_id) FROM executions)`);
    await c.query(`UPDATE orders SET client_order_id = client_order_id || chr(1) WHERE order_id = (SELECT max(order_id) FROM orders) AND order_version = 1`);
    await c.query('GRANT SELECT ON ALL TABLES IN SCHEMA public TO reckon_ro');
    const file = sourcesFile({ default: SAMPLE, databases: { reorder: conn('reorder') }, datasets: allFrom('reorder', RC01_READS) });
    const before = await runIn(file, ['RC01']);
    for (const t of RC01_READS) {
      await c.query(`CREATE TABLE shuffled AS SELECT * FROM ${t} ORDER BY md5(random()::text); DROP TABLE ${t}; ALTER TABLE shuffled RENAME TO ${t}`);
    }
    await c.query('GRANT SELECT ON ALL TABLES IN SCHEMA public TO reckon_ro');
    const moved = await c.query(`SELECT min(order_id) AS first FROM (SELECT order_id FROM orders LIMIT 5) t`);
    await c.end();
    const after = await runIn(file, ['RC01']);
    const a = before.manifestDoc.sources.databases!.reorder.datasets;
    const b = after.manifestDoc.sources.databases!.reorder.datasets;
    expect(moved.rows[0].first).not.toBe('ORD-000001');
    for (const t of RC01_READS) expect([t, b[t].content_sha256, b[t].rows, b[t].sql]).toEqual([t, a[t].content_sha256, a[t].rows, a[t].sql]);
    expect(RC01_READS.map((t) => [t, /ORDER BY/.test(b[t].sql)])).toEqual([['orders', true], ['outbox_events', false], ['executions', true]]);
    expect(after.manifestDoc.quarantine.entries).toEqual(before.manifestDoc.quarantine.entries);
    expect(after.manifestDoc.quarantine.entries.map((e) => [e.file, e.row, e.column, e.rule])).toEqual([['db:reorder/orders', 1017, 'client_order_id', 'id_character']]);
    expect(after.results_digest).toBe(before.results_digest);
  });
});

describe("the extract's order, odd text", () => {
  it('keeps spaces, tabs, backslashes and 0 rows exactly: COPY sorted by reckon and the cursor give the same bytes and entries', async () => {
    await pg.sql('CREATE DATABASE oddtext');
    const c = await pg.admin('oddtext');
    await createDatasetTable(c, 'notification_intents');
    await createDatasetTable(c, 'notification_receipts');
    await c.query(`INSERT INTO notification_intents VALUES
      ('2026-11-02T10:00:00Z', 'N-2 ', 'O-1', 'v1', 'email', true, '2026-11-03T00:00:00Z'),
      ('2026-11-02T10:00:00Z', E'N-1\\x', 'O-1', 'v1', 'email', true, '2026-11-03T00:00:00Z'),
      ('2026-11-02T10:00:00Z', E'N-\t3', 'O-1', 'v1', 'email', true, '2026-11-03T00:00:00Z'),
      ('2026-11-02T10:00:00Z', 'N-0', 'O-1', ' v1', 'email', true, '2026-11-03T00:00:00Z')`);
    await c.query('GRANT SELECT ON ALL TABLES IN SCHEMA public TO reckon_ro');
    await c.end();
    const datasets = { notification_intents: { database: 'oddtext', table: 'notification_intents' }, notification_receipts: { database: 'oddtext', table: 'notification_receipts' } };
    const copy = await runIn(sourcesFile({ databases: { oddtext: conn('oddtext') }, datasets }), ['RC06']);
    const cursor = await runIn(sourcesFile({ databases: { oddtext: conn('oddtext', { reader: 'cursor', parallel: 1 }) }, datasets }), ['RC06']);
    const [a, b] = [copy, cursor].map((r) => r.manifestDoc.sources.databases!.oddtext.datasets);
    expect([a.notification_intents.content_sha256, a.notification_receipts.content_sha256, a.notification_receipts.rows]).toEqual([b.notification_intents.content_sha256, b.notification_receipts.content_sha256, 0]);
    expect(/ORDER BY/.test(a.notification_intents.sql)).toBe(false);
    expect(copy.manifestDoc.quarantine.entries).toEqual(cursor.manifestDoc.quarantine.entries);
    // Lines in byte order, the key first (tab 0x09 < '0' < '1' < '2'); each value as stored.
    expect(copy.manifestDoc.quarantine.entries.map((e) => [e.row, e.column, String(e.raw).split(',')[0]])).toEqual([
      [1, 'intent_id', 'N-\t3'], [2, 'template_version', 'N-0'], [4, 'intent_id', 'N-2 '],
    ]);
    expect(copy.manifestDoc.sources.datasets.notification_intents).toMatchObject({ records_read: 4, records_loaded: 1, quarantined: 3 });
  });

  it('a line longer than DuckDB reads as one field (3 MB) has the server sort the extract, still the same bytes as the cursor', async () => {
    await pg.sql('CREATE DATABASE longline');
    const c = await pg.admin('longline');
    await createDatasetTable(c, 'notification_intents');
    await c.query(`INSERT INTO notification_intents VALUES
      ('2026-11-02T10:00:00Z', 'N-2', repeat('O', 3000000), 'v1', 'email', true, '2026-11-03T00:00:00Z'),
      ('2026-11-02T10:00:00Z', 'N-1', 'O-1', 'v1', 'email', true, '2026-11-03T00:00:00Z')`);
    await c.query('GRANT SELECT ON ALL TABLES IN SCHEMA public TO reckon_ro');
    await c.end();
    const datasets = { notification_intents: { database: 'longline', table: 'notification_intents' } };
    const copy = await runIn(sourcesFile({ databases: { longline: conn('longline') }, datasets }), ['RC06']);
    const cursor = await runIn(sourcesFile({ databases: { longline: conn('longline', { reader: 'cursor', parallel: 1 }) }, datasets }), ['RC06']);
    const [a, b] = [copy, cursor].map((r) => r.manifestDoc.sources.databases!.longline.datasets.notification_intents);
    expect([a.rows, /ORDER BY/.test(a.sql), a.content_sha256]).toEqual([2, true, b.content_sha256]);
    expect(a.bytes).toBeGreaterThan(3_000_000);
  });
});

describe('connections', () => {
  const window = windowForDate(DATE);
  const prepareError = async (database: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): Promise<string> => {
    const file = sourcesFile({ databases: { live: database }, datasets: allFrom('live', RC01_READS) });
    try {
      const p = await prepareSources(file, RC01_READS, { window, env });
      await p.close();
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      return (e as Error).message;
    }
    return 'connected';
  };

  it('wrong password: exit 2 naming the database, host and datasets, before any lease, and the password appears nowhere', () => {
    const store = join(dir, 'store-wrong-password');
    const wrong = 'wrong-pass-5e2b-do-not-print';
    const file = sourcesFile({ databases: { live: conn('live') }, datasets: allFrom('live', RC01_READS) });
    const r = reckon(['run', '--date', DATE, '--control', 'RC01', '--sources', file, '--store', store, '--json'], { env: { PGPASSWORD: wrong } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`reckon: ConfigError: database live (reckon_ro@localhost:${pg.port}/live) for orders, outbox_events, executions: cannot connect: password authentication failed for user "reckon_ro"`);
    expect(r.json.error.type).toBe('ConfigError');
    expect(`${r.stdout}${r.stderr}`).not.toContain(wrong);
    expect(existsSync(join(store, 'leases'))).toBe(false);
  });

  it('a query checked while another session holds a lock on its table: the run can be repeated (exit 3), not a configuration error', async () => {
    const locker = await pg.admin('live');
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE outbox_events IN ACCESS EXCLUSIVE MODE');
      const file = sourcesFile({ databases: { live: conn('live', { statement_timeout_s: 1 }) }, datasets: allFrom('live', RC01_READS) });
      const store = join(dir, 'store-locked');
      const r = await reckonIn(['run', '--date', DATE, '--control', 'RC01', '--sources', file, '--store', store], { env: { ...process.env, PGPASSWORD: PASSWORD } });
      expect(r.code).toBe(3);
      expect(r.stderr).toContain(`reckon: InputError: the sources file ${file}: the database did not answer while its queries were checked, before any lease:\n`
        + '  datasets.outbox_events.table: canceling statement due to statement timeout (SQLSTATE 57014) (the server could not answer now)\n'
        + '  a lock another session holds, a busy or restarting server: nothing was read or published; run again as it is (statement_timeout_s bounds each wait)');
      expect(existsSync(join(store, 'leases'))).toBe(false);
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
  });

  it('a password in the URL of url_env and an IAM token are never shown either', async () => {
    process.env.RECKON_TEST_LIVE_URL = `postgres://reckon_ro:url-secret-77aa@localhost:${pg.port}/live?sslmode=disable`;
    try {
      const m = await prepareError({ url_env: 'RECKON_TEST_LIVE_URL' });
      expect(m).toMatch(/cannot connect: password authentication failed for user "reckon_ro"/);
      expect(m).not.toContain('url-secret-77aa');
      // libpq's password= parameter is a password too (masked alike), and several hosts are named as such.
      process.env.RECKON_TEST_LIVE_URL = `postgres://reckon_ro@localhost:${pg.port}/live?sslmode=disable&password=url-param-secret-19cd`;
      const p = await prepareError({ url_env: 'RECKON_TEST_LIVE_URL' });
      expect(p).toMatch(/cannot connect: password authentication failed for user "reckon_ro"/);
      expect(p).not.toContain('url-param-secret-19cd');
      process.env.RECKON_TEST_LIVE_URL = `postgres://reckon_ro@localhost:${pg.port},localhost:1/live`;
      expect(await prepareError({ url_env: 'RECKON_TEST_LIVE_URL' })).toContain('the URL in RECKON_TEST_LIVE_URL names several hosts; give one (reckon reads from one server: a cluster\'s reader or writer endpoint)');
    } finally { delete process.env.RECKON_TEST_LIVE_URL; }
    // Aurora DSQL's IAM token (real SDK signer, test credentials) goes to this server as the password, over TLS.
    const aws = { AWS_ACCESS_KEY_ID: 'AKIAIOSFODNN7EXAMPLE', AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' };
    // The SDK's default credential chain reads the process environment.
    Object.assign(process.env, aws);
    let m: string;
    try {
      m = await prepareError({ ...conn('live', { sslmode: 'verify-full', sslrootcert: certs.ca }), auth: 'dsql-iam', region: 'eu-west-1' });
    } finally {
      for (const k of Object.keys(aws)) delete process.env[k];
    }
    expect(m).toContain(`database live (reckon_ro@localhost:${pg.port}/live) for orders, outbox_events, executions: cannot connect: password authentication failed for user "reckon_ro"`);
    for (const secret of ['X-Amz-Signature', 'X-Amz-Credential', aws.AWS_ACCESS_KEY_ID, aws.AWS_SECRET_ACCESS_KEY]) expect(m).not.toContain(secret);
  });

  it('reads the password from the password file, and says when it skipped one others may read', async () => {
    const file = join(dir, 'pgpass');
    writeFileSync(file, `localhost:${pg.port}:live:reckon_ro:${PASSWORD}\n`, { mode: 0o600 });
    chmodSync(file, 0o600);
    // The pgpass package reads the process's PGPASSFILE, and no file while PGPASSWORD is set.
    process.env.PGPASSFILE = file;
    delete process.env.PGPASSWORD;
    let skipped: string;
    try {
      expect(await prepareError(conn('live'), { PGPASSFILE: file })).toBe('connected');
      chmodSync(file, 0o644);
      skipped = await prepareError(conn('live'), { PGPASSFILE: file });
    } finally {
      delete process.env.PGPASSFILE;
      process.env.PGPASSWORD = PASSWORD;
    }
    expect(skipped).toBe(`database live (reckon_ro@localhost:${pg.port}/live) for orders, outbox_events, executions: no password for reckon_ro at localhost:${pg.port}: set PGPASSWORD, add a line to the password file (~/.pgpass or PGPASSFILE), or name a URL variable with url_env; the password file ${file} was not read: others may read it (make it private: chmod 600 ${file})`);
  });

  it('engine aurora-dsql given for a PostgreSQL server (read committed, not one snapshot) is refused before any lease', async () => {
    expect(await prepareError({ ...conn('live'), engine: 'aurora-dsql', auth: 'password' })).toContain(
      'databases.live.engine: is aurora-dsql, but the server runs a read-only transaction at read committed, so the datasets would not be read at one point in time: it is not Aurora DSQL; give engine: postgres (REPEATABLE READ, one exported snapshot)');
  });

  it('a refused connection is exit 2 before any lease, naming the host and datasets', async () => {
    const port = await freePort();
    const store = join(dir, 'store-refused');
    const file = sourcesFile({ databases: { live: conn('live', { port }) }, datasets: allFrom('live', RC01_READS) });
    await expect(runIn(file, ['RC01'], store)).rejects.toThrow(`database live (reckon_ro@localhost:${port}/live) for orders, outbox_events, executions: cannot connect: connection refused (is a server listening on that host and port?)`);
    expect(existsSync(join(store, 'leases'))).toBe(false);
  });

  it('every database that refuses is reported in one run, not one per attempt', async () => {
    const port = await freePort();
    const file = sourcesFile({
      databases: { live: conn('live', { port }), exact: conn('exact', { user: 'nobody_here' }) },
      datasets: { ...allFrom('live', ['orders', 'outbox_events']), executions: { database: 'exact', table: 'executions' } },
    });
    await expect(runIn(file, ['RC01'])).rejects.toThrow(`2 databases of the sources file ${file} refuse the run:\n`
      + `  database exact (nobody_here@localhost:${pg.port}/exact) for executions: cannot connect: password authentication failed for user "nobody_here" (the password comes from PGPASSWORD, the password file or url_env)\n`
      + `  database live (reckon_ro@localhost:${port}/live) for orders, outbox_events: cannot connect: connection refused (is a server listening on that host and port?)`);
  });

  it('TLS verify-full checks the chain against the CA file and the host name', async () => {
    expect(await prepareError(conn('live', { sslmode: 'verify-full', sslrootcert: certs.ca }))).toBe('connected');
    expect(await prepareError(conn('live', { sslmode: 'require' }))).toBe('connected');
    expect(await prepareError(conn('live', { sslmode: 'verify-full', sslrootcert: certs.otherCa }))).toMatch(/cannot connect: TLS: the server's certificate is not trusted with the CA file .*other\.pem/);
    expect(await prepareError(conn('live', { host: '127.0.0.1', sslmode: 'verify-full', sslrootcert: certs.ca }))).toMatch(/cannot connect: TLS: the server's certificate does not name 127\.0\.0\.1 .*verify-full checks the host name/);
    // verify-ca checks the chain only.
    expect(await prepareError(conn('live', { host: '127.0.0.1', sslmode: 'verify-ca', sslrootcert: certs.ca }))).toBe('connected');
  });

  it('a query that does not run is exit 2 before any lease, every one listed with its path', async () => {
    const file = sourcesFile({
      databases: { live: conn('live') },
      datasets: {
        orders: { database: 'live', table: 'no_such_orders' },
        outbox_events: { database: 'live', query: 'select event_id, event_id from outbox_events' },
        executions: { database: 'live', table: 'executions', since: { column: 'execution_id', days_before_window: 3 }, watermark: { query: 'select nope from projection_checkpoint' } },
      },
    });
    await expect(prepareSources(file, RC01_READS, { window })).rejects.toThrow([
      `the sources file ${file}: 4 queries do not run:`,
      '  datasets.orders.table: relation "no_such_orders" does not exist (SQLSTATE 42P01)',
      '  datasets.outbox_events.query: the query returns column(s) event_id more than once',
      '  datasets.executions.since: the bound column execution_id is text; a lower bound applies to a timestamptz, timestamp or date column',
      '  datasets.executions.watermark.query: column "nope" does not exist (SQLSTATE 42703)',
    ].join('\n'));
  });
});
