/**
 * `npm run bench:postgres` (issue 21): pulls a generated day from a local PostgreSQL server and
 * times it beside the Parquet run of the same day. For each size it generates the day (CSV and
 * Parquet, same seed, same records), starts a throwaway cluster on loopback (scripts/pg-cluster.ts),
 * loads the CSV day into typed tables with COPY (not timed as part of the run), writes a sources
 * file reading every dataset from the database with its watermark from `projection_checkpoint`,
 * and runs `reckon run --all` on the sources file and on the Parquet day, one after the other.
 * The two runs must give the same results digest. Each measurement is kept as
 * `BENCH_DIR/result-<orders>-postgres.json`; `npm run bench` lists them in BENCHMARKS.md.
 * Environment:
 *   BENCH_SIZES=100000          orders per generated day
 *   BENCH_DIR=/work/bench       where generated days and results are kept between runs
 *   BENCH_PG_READER=copy|cursor how reckon reads the rows (default copy)
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { DATASETS } from '../pipeline/contract/datasets.js';
import { repoPath } from '../pipeline/core/paths.js';
import { listDatasetFolder } from '../pipeline/sources/files.js';
import { BENCH_DATE, ensureDay, timed, type Timed } from './bench-day.js';
import { startPostgres } from './pg-cluster.js';
import { checkpointQuery, copyCsvFile, createCheckpointTable, createDatasetTable, recordCheckpoint } from './pg-datasets.js';

const sizes = (process.env.BENCH_SIZES ?? '100000').split(',').map(Number);
const benchDir = process.env.BENCH_DIR ?? '/work/bench';
const reader = process.env.BENCH_PG_READER === 'cursor' ? 'cursor' : 'copy';
const DATE = BENCH_DATE;

/** Result of one size: the database run, the Parquet run, the extract phase and the load into PostgreSQL. */
export interface PostgresResult {
  orders: number; reader: string; readers?: number; extract_s?: number; rows: number;
  /** CPU seconds (user + system) the PostgreSQL server spent during the database run (its exited backends, reaped by the postmaster). */
  server_cpu_s?: number; load_into_postgres_s: number; server_version: string;
  postgres: Omit<Timed, 'stdout' | 'stderr'> & { timings: Record<string, number> };
  parquet: Omit<Timed, 'stdout' | 'stderr'> & { timings: Record<string, number> };
  digest_equal: boolean; commit: string; measured_at: string;
}

function runOf(t: Timed, label: string): { digest: string; timings: Record<string, number>; rows: number; readers?: number; extract_s?: number } {
  const doc = JSON.parse(t.stdout);
  if (!doc.manifest) throw new Error(`${label} run failed (exit ${t.code}): ${JSON.stringify(doc.error ?? doc).slice(0, 2000)}\n${t.stderr.slice(-3000)}`);
  const manifest = JSON.parse(readFileSync(doc.manifest.path, 'utf8'));
  const rows = Object.values(manifest.sources.datasets as Record<string, { records_read: number }>).reduce((a, d) => a + d.records_read, 0);
  const db = manifest.sources.databases?.authority;
  const extract_s = db ? Math.round((Date.parse(db.finished_at) - Date.parse(db.started_at)) / 100) / 10 : undefined;
  return { digest: doc.results_digest, timings: manifest.timings_ms, rows, readers: db?.readers, extract_s };
}

/** CPU seconds of the server: the postmaster and the backends it has reaped (utime, stime, cutime, cstime). */
function serverCpuS(dataDir: string): number {
  const pid = readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0].trim();
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
  // After the comm field: state is field 3, utime 14 … cstime 17 (1-based in proc(5)); here index 11 … 14.
  return fields.slice(11, 15).reduce((a, v) => a + Number(v), 0) / 100;
}

async function measure(n: number): Promise<PostgresResult> {
  const csvDay = ensureDay(benchDir, n, 'csv');
  const parquetDay = ensureDay(benchDir, n, 'parquet');
  const pg = await startPostgres({ conf: ['shared_buffers = 512MB', 'work_mem = 64MB', 'max_wal_size = 4GB', 'checkpoint_timeout = 30min'] });
  const scratch = mkdtempSync(join(tmpdir(), 'reckon-bench-pg-'));
  try {
    await pg.sql(`CREATE ROLE reckon_bench LOGIN PASSWORD 'bench-only-password'`);
    await pg.sql('CREATE DATABASE authority');
    const client = await pg.admin('authority');
    const t0 = performance.now();
    await createCheckpointTable(client);
    for (const d of DATASETS) {
      await createDatasetTable(client, d.name);
      for (const f of (await listDatasetFolder(csvDay, d.name)).files) {
        const header = (await readFile(f.absPath, 'utf8').then((t) => t.slice(0, t.indexOf('\n')))).split(',');
        await copyCsvFile(client, d.name, header, f.absPath);
      }
      const wm = await readFile(join(csvDay, d.name, '_watermark.json'), 'utf8').then((t) => JSON.parse(t) as { watermark: string; complete?: boolean }, () => undefined);
      if (wm) await recordCheckpoint(client, d.name, wm.watermark, wm.complete ?? null);
    }
    await client.query('GRANT SELECT ON ALL TABLES IN SCHEMA public TO reckon_bench');
    await client.query('VACUUM ANALYZE');
    const version = (await client.query<{ v: string }>(`SELECT current_setting('server_version') AS v`)).rows[0].v;
    await client.end();
    const loadS = (performance.now() - t0) / 1000;
    const sourcesFile = join(scratch, 'sources.json');
    await mkdir(scratch, { recursive: true });
    writeFileSync(sourcesFile, JSON.stringify({
      databases: { authority: { host: pg.host, port: pg.port, database: 'authority', user: 'reckon_bench', sslmode: 'disable', reader } },
      datasets: Object.fromEntries(DATASETS.map((d) => [d.name, { database: 'authority', table: d.name, watermark: { query: checkpointQuery(d.name) } }])),
    }, null, 2));
    // Both runs check every record (no delivery cache), so the ratio compares reading, not the cache.
    const run = (sources: string, env: NodeJS.ProcessEnv = {}) => timed(['bin/reckon.js', 'run', '--date', DATE, '--all', '--sources', sources, '--store', join(scratch, `store-${Math.random().toString(36).slice(2)}`), '--quiet', '--json'], { RECKON_CACHE: 'off', ...env });
    const serverBefore = serverCpuS(pg.dataDir);
    const fromDb = run(sourcesFile, { PGPASSWORD: 'bench-only-password' });
    const serverS = Math.round((serverCpuS(pg.dataDir) - serverBefore) * 10) / 10;
    const fromParquet = run(parquetDay);
    const db = runOf(fromDb, 'database');
    const pq = runOf(fromParquet, 'Parquet');
    let commit = 'unknown';
    try { commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8', cwd: repoPath('.') }).trim(); } catch { /* not a clone */ }
    const slim = (t: Timed, timings: Record<string, number>) => ({ wall_s: t.wall_s, cpu_s: t.cpu_s, peak_rss_mib: t.peak_rss_mib, code: t.code, timings });
    return {
      orders: n, reader, readers: db.readers, extract_s: db.extract_s, rows: db.rows, load_into_postgres_s: Math.round(loadS * 10) / 10, server_version: version,
      server_cpu_s: serverS, postgres: slim(fromDb, db.timings), parquet: slim(fromParquet, pq.timings), digest_equal: db.digest === pq.digest,
      commit, measured_at: new Date().toISOString(),
    };
  } finally {
    await pg.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

for (const n of sizes) {
  const r = await measure(n);
  writeFileSync(join(benchDir, `result-${n}-postgres.json`), JSON.stringify(r, null, 2));
  process.stdout.write(`${n} orders, ${r.rows} rows (${r.reader} × ${r.readers}): from PostgreSQL ${r.postgres.wall_s} s (extract ${r.extract_s} s, overlapping load ${r.postgres.timings.load_ms / 1000} s), Parquet ${r.parquet.wall_s} s; CPU ${r.postgres.cpu_s} s + server ${r.server_cpu_s} s vs ${r.parquet.cpu_s} s: ${(r.postgres.wall_s / r.parquet.wall_s).toFixed(2)}×; same results digest: ${r.digest_equal}\n`);
}
