/**
 * `npm run bench` (issue 5): for each size and format, measures `reckon run --all` on a generated
 * day (wall time, rows per second, peak RSS) beside DuckDB's raw scan of the same files (the
 * floor), DuckDB's scan that reads every value once (what any run that checks every value must at
 * least read) and, at the smallest size in CSV, the naive baseline (RC03 in plain Node streams with
 * decimal.js) against `reckon run --control RC03` on the same CSV files and on the Parquet day.
 * Ratios, not absolute times, are the claims. Each measurement is kept as
 * `BENCH_DIR/result-<orders>-<format>.json` (with the commit measured), so sizes can be measured
 * in separate sittings; BENCHMARKS.md is written from every result kept there. Environment:
 *   BENCH_SIZES=1000000,10000000   orders per generated day
 *   BENCH_FORMATS=parquet,csv
 *   BENCH_DIR=/work/bench           where generated days and results are kept between runs
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { repoPath } from '../pipeline/core/paths.js';
import { DUCKDB_MEMORY_LIMIT } from '../pipeline/load/engine.js';
import { BENCH_DATE, ensureDay as ensureDayIn, timed, type Timed } from './bench-day.js';
import type { PostgresResult } from './bench-postgres.js';

const sizes = (process.env.BENCH_SIZES ?? '1000000,10000000').split(',').map(Number);
const formats = (process.env.BENCH_FORMATS ?? 'parquet,csv').split(',');
const benchDir = process.env.BENCH_DIR ?? '/work/bench';
const DATE = BENCH_DATE;

const ensureDay = (n: number, fmt: string) => ensureDayIn(benchDir, n, fmt);

function bytesOf(dir: string): number {
  let total = 0;
  for (const d of readdirSync(dir, { withFileTypes: true })) {
    if (d.isDirectory()) total += bytesOf(join(dir, d.name));
    else if (!d.name.startsWith('_')) total += readFileSync(join(dir, d.name)).length;
  }
  return total;
}

interface Row { orders: number; format: string; rows: number; bytes: number; run: Timed; floor: Timed; values?: Timed; statuses: string; timings: Record<string, number>; commit: string; measured_at: string }
interface Failed { orders: number; format: string; exit_code: number; error: string; wall_s: number; peak_rss_mib: number; floor?: Timed; commit: string; measured_at: string }
interface Naive { orders: number; naive: Timed; reckon: Timed; reckonParquet?: Timed; commit: string }
let commit = 'unknown';
try { commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8', cwd: repoPath('.') }).trim(); } catch { /* not a clone */ }
const slim = (t: Timed): Timed => ({ ...t, stdout: '', stderr: '' });

// BENCH_REPORT_ONLY=1 rewrites BENCHMARKS.md from the results kept, measuring nothing.
for (const n of process.env.BENCH_REPORT_ONLY === '1' ? [] : sizes) {
  for (const fmt of formats) {
    const dir = ensureDay(n, fmt);
    const floor = timed(['dist/scripts/raw-scan.js', dir, fmt]);
    const values = timed(['dist/scripts/raw-scan.js', dir, fmt, 'values']);
    const store = mkdtempSync(join(tmpdir(), 'reckon-bench-store-'));
    const run = timed(['bin/reckon.js', 'run', '--date', DATE, '--all', '--sources', dir, '--store', store, '--quiet', '--json']);
    const doc = JSON.parse(run.stdout);
    if (!doc.manifest) {
      // A run that fails is a result too: say so and keep going with the other sizes.
      process.stderr.write(`${n} ${fmt}: reckon run failed (exit ${run.code}): ${JSON.stringify(doc.error ?? doc).slice(0, 2000)}\n${run.stderr.slice(-4000)}\n`);
      const failed: Failed = { orders: n, format: fmt, exit_code: run.code, error: String(doc.error?.message ?? 'no manifest').split('\n')[0], wall_s: run.wall_s, peak_rss_mib: run.peak_rss_mib, floor: slim(floor), commit, measured_at: new Date().toISOString() };
      writeFileSync(join(benchDir, `failed-${n}-${fmt}.json`), JSON.stringify(failed, null, 2));
      rmSync(store, { recursive: true, force: true });
      continue;
    }
    const manifest = JSON.parse(readFileSync(doc.manifest.path, 'utf8'));
    const rows = Object.values(manifest.sources.datasets as Record<string, { records_read: number }>).reduce((a, d) => a + d.records_read, 0);
    rmSync(join(benchDir, `failed-${n}-${fmt}.json`), { force: true });
    const row: Row = { orders: n, format: fmt, rows, bytes: bytesOf(dir), run: slim(run), floor: slim(floor), values: slim(values), statuses: doc.controls.map((c: { control_id: string; status: string }) => `${c.control_id} ${c.status}`).join(', '), timings: manifest.timings_ms, commit, measured_at: new Date().toISOString() };
    writeFileSync(join(benchDir, `result-${n}-${fmt}.json`), JSON.stringify(row, null, 2));
    if (n === Math.min(...sizes) && fmt === 'csv') {
      const naiveRun = timed(['dist/scripts/naive-rc03.js', dir, `${DATE}T00:00:00Z`, '2026-11-03T00:00:00Z']);
      const rc03 = timed(['bin/reckon.js', 'run', '--date', DATE, '--control', 'RC03', '--sources', dir, '--store', join(store, 'rc03'), '--quiet', '--json']);
      const parquetDay = join(benchDir, `day-${n}-parquet`);
      const rc03p = existsSync(join(parquetDay, '_expected.json'))
        ? timed(['bin/reckon.js', 'run', '--date', DATE, '--control', 'RC03', '--sources', parquetDay, '--store', join(store, 'rc03p'), '--quiet', '--json'])
        : undefined;
      const naive: Naive = { orders: n, naive: slim(naiveRun), reckon: slim(rc03), ...(rc03p ? { reckonParquet: slim(rc03p) } : {}), commit };
      writeFileSync(join(benchDir, 'result-naive.json'), JSON.stringify(naive, null, 2));
    }
    rmSync(store, { recursive: true, force: true });
    process.stderr.write(`${n} ${fmt}: reckon ${run.wall_s} s, floor ${floor.wall_s} s\n`);
  }
}

// Every result kept in BENCH_DIR, smallest first, Parquet before CSV.
const results: Row[] = readdirSync(benchDir).filter((f) => /^result-[0-9]+-(csv|parquet)\.json$/.test(f))
  .map((f) => JSON.parse(readFileSync(join(benchDir, f), 'utf8')) as Row)
  .sort((a, b) => a.orders - b.orders || (a.format === 'parquet' ? -1 : 1));
const naive: Naive | undefined = existsSync(join(benchDir, 'result-naive.json')) ? JSON.parse(readFileSync(join(benchDir, 'result-naive.json'), 'utf8')) as Naive : undefined;
const failures: Failed[] = readdirSync(benchDir).filter((f) => /^failed-[0-9]+-(csv|parquet)\.json$/.test(f))
  .map((f) => JSON.parse(readFileSync(join(benchDir, f), 'utf8')) as Failed);
const allSizes = [...new Set(results.map((r) => r.orders))];
const allFormats = [...new Set(results.map((r) => r.format))];
const cpu = cpus()[0]?.model ?? 'unknown';
const duckdbVersion = JSON.parse(readFileSync(repoPath('node_modules/@duckdb/node-api/package.json'), 'utf8')).version;
let kernel = '';
try { kernel = execFileSync('uname', ['-sr'], { encoding: 'utf8' }).trim(); } catch { /* ignore */ }
const f1 = (x: number) => x.toFixed(1);
const lines = [
  '# Benchmarks',
  '',
  `Measured by \`npm run bench\` on ${new Date().toISOString().slice(0, 10)}. Machine: ${cpus().length} cores (${cpu}), ${Math.round(totalmem() / 2 ** 30)} GiB RAM, ${kernel}, Node ${process.version}, DuckDB ${duckdbVersion} (threads 2, memory_limit ${DUCKDB_MEMORY_LIMIT}, spilling to a temp folder). Data: \`reckon generate --orders N --date ${DATE} --seed 1\` (every difference kind injected). Ratios, not absolute times, are the claims; the machine may have been shared.`,
  '',
  '| orders | format | input rows | input MiB | reckon run --all (s) | rows/s | peak RSS (MiB) | raw scan floor (s) | floor peak RSS (MiB) | reckon ÷ floor | every-value scan (s) | reckon ÷ every-value scan | commit |',
  '| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |',
  ...results.map((r) => `| ${r.orders.toLocaleString('en')} | ${r.format} | ${r.rows.toLocaleString('en')} | ${f1(r.bytes / 2 ** 20)} | ${f1(r.run.wall_s)} | ${Math.round(r.rows / r.run.wall_s).toLocaleString('en')} | ${r.run.peak_rss_mib} | ${f1(r.floor.wall_s)} | ${r.floor.peak_rss_mib} | ${f1(r.run.wall_s / r.floor.wall_s)}× | ${r.values ? f1(r.values.wall_s) : '—'} | ${r.values ? `${f1(r.run.wall_s / r.values.wall_s)}×` : '—'} | ${r.commit} |`),
  ...(failures.length ? ['', '**Runs that failed** (no manifest; kept here, not hidden):', '', ...failures.map((f) => `- ${f.orders.toLocaleString('en')} ${f.format} at ${f.commit}: exit ${f.exit_code} after ${f1(f.wall_s)} s, peak RSS ${f.peak_rss_mib} MiB: ${f.error}${f.floor ? ` (floor ${f1(f.floor.wall_s)} s)` : ''}.`)] : []),
  '',
  '## Phases (ms, from each run\'s manifest `timings_ms`)',
  '',
  ...results.map((r) => `- ${r.orders.toLocaleString('en')} ${r.format}: ${Object.entries(r.timings).map(([k, v]) => `${k} ${v}`).join(', ')}; statuses: ${r.statuses}`),
  '',
  '## Claims',
  '',
];
for (const fmt of allFormats) {
  const small = results.find((r) => r.format === fmt && r.orders === Math.min(...allSizes));
  const big = results.find((r) => r.format === fmt && r.orders === Math.max(...allSizes));
  if (small && big && small !== big) lines.push(`- ${fmt}: time from ${small.orders.toLocaleString('en')} to ${big.orders.toLocaleString('en')} orders grows ${f1(big.run.wall_s / small.run.wall_s)}× for ${f1(big.orders / small.orders)}× the orders (target ≤ 11×); peak RSS ${big.run.peak_rss_mib} MiB at ${big.orders.toLocaleString('en')} (target ≤ 4096).`);
  for (const r of results.filter((x) => x.format === fmt)) {
    const values = r.values ? `; reading every value once takes ${f1(r.values.wall_s)} s, ${f1(r.values.wall_s / r.floor.wall_s)}× the floor, and the run is ${f1(r.run.wall_s / r.values.wall_s)}× that` : '';
    lines.push(`- ${fmt} ${r.orders.toLocaleString('en')}: full RC01–RC06 is ${f1(r.run.wall_s / r.floor.wall_s)}× the raw-scan floor (target ≤ 4× on Parquet at 10M)${values}.`);
  }
}
if (naive) {
  lines.push(`- naive baseline at ${naive.orders.toLocaleString('en')} orders (CSV): plain Node streams + decimal.js RC03 ${f1(naive.naive.wall_s)} s, peak ${naive.naive.peak_rss_mib} MiB; \`reckon run --control RC03\` on the same CSV files ${f1(naive.reckon.wall_s)} s, peak ${naive.reckon.peak_rss_mib} MiB: reckon is ${f1(naive.naive.wall_s / naive.reckon.wall_s)}× faster (target ≥ 20×). The naive baseline validates nothing and quarantines nothing.`);
  if (naive.reckonParquet) lines.push(`- the same RC03 from the Parquet day (same records): ${f1(naive.reckonParquet.wall_s)} s, peak ${naive.reckonParquet.peak_rss_mib} MiB: ${f1(naive.naive.wall_s / naive.reckonParquet.wall_s)}× faster than the naive baseline on CSV.`);
}
// Database-source runs (npm run bench:postgres, scripts/bench-postgres.ts), when any were kept.
const pgResults = readdirSync(benchDir).filter((f) => /^result-[0-9]+-postgres\.json$/.test(f))
  .map((f) => JSON.parse(readFileSync(join(benchDir, f), 'utf8')) as PostgresResult).sort((a, b) => a.orders - b.orders);
if (pgResults.length) {
  lines.push('', '## From PostgreSQL (`npm run bench:postgres`)', '',
    'The same generated day (CSV day loaded into a throwaway local PostgreSQL with COPY, not timed) pulled by `reckon run --all --sources sources.json`, every dataset from the database with its watermark from `projection_checkpoint`, beside `reckon run --all` on the Parquet day, one after the other. The database server runs on the same 2 cores.', '',
    '| orders | input rows | reader | from PostgreSQL (s) | extract (s) | load, overlapping the extract (s) | peak RSS (MiB) | Parquet run (s) | ratio | same results digest | server | commit |',
    '| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | --- |',
    ...pgResults.map((r) => `| ${r.orders.toLocaleString('en')} | ${r.rows.toLocaleString('en')} | ${r.reader} × ${r.readers ?? 1} | ${f1(r.postgres.wall_s)} | ${r.extract_s !== undefined ? f1(r.extract_s) : f1(r.postgres.timings.locate_ms / 1000)} | ${f1(r.postgres.timings.load_ms / 1000)} | ${r.postgres.peak_rss_mib} | ${f1(r.parquet.wall_s)} | ${(r.postgres.wall_s / r.parquet.wall_s).toFixed(2)}× | ${r.digest_equal ? 'yes' : '**no**'} | ${r.server_version.split(' ')[0]} | ${r.commit} |`),
    '', '- Target: at most 2× the Parquet run at 1,000,000 orders.');
}
lines.push(
  '',
  '## Reading these numbers',
  '',
  '- The floor is what the issue defines: DuckDB reading the same files and computing, per dataset, the row count and the exact sum of every numeric column (CSV through narrow casts first, so the floor is DuckDB at its fastest). A run also checks every value of every record against the contract (ids, enums, currencies, timestamps, local times with DST rules, decimal forms), hashes every record for exact duplicate deliveries, computes notionals at the currency exponent, runs six controls of joins and aggregations over the extract, and writes outputs and a manifest: the ratio is the price of those, not of reading.',
  '- The every-value scan is the same scan reading every other column too (each text\'s length, the largest timestamp, date and flag): the least a run that checks every value must read, before it checks, hashes or reconciles anything. On Parquet it costs several times the floor, because the floor reads only the numeric columns and a run must read the ids and texts as well.',
  '- Parquet datasets without derived columns (orders, outbox events, ledger postings, intents) are views over the checked files; executions, venue fills and receipts are loaded into DuckDB. A day estimated above 4 GiB in memory keeps its tables in a DuckDB file in the scratch folder (10M orders), below in memory (1M).',
  '- Phases and the per-statement profile are discussed in docs/performance.md.',
);
lines.push('', 'Re-run: `npm run bench` (BENCH_SIZES, BENCH_FORMATS, BENCH_DIR select sizes, formats and where generated days are kept).', '');
writeFileSync(repoPath('BENCHMARKS.md'), lines.join('\n'));
process.stdout.write(lines.join('\n'));
