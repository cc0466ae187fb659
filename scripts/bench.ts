/**
 * `npm run bench -- [sample] [SIZE…] [--formats parquet,csv] [--dir DIR] [--out FILE] [--report-only]`
 * (issues 5 and 20). For each size (orders per generated day) and format, in one sitting on the
 * same generated day:
 *
 *   - `reckon run --all`, first run (an empty delivery cache) and rerun unchanged (every file's
 *     check read from the cache): wall time, peak RSS, the manifest's phases;
 *   - the hand-written SQL peer, `../shared/bench/peer-sql.mjs` (run, never copied; BENCH_PEER
 *     names another path), which validates nothing;
 *   - DuckDB's scans of the same files (scripts/raw-scan.ts): the floor (row counts and numeric
 *     sums) and the every-column scan (every value read once);
 *   - Parquet: an intraday window after one new delivery of 1/96 of the day: the day split into a
 *     file of 95/96 of each dataset's records (checked in an earlier window, so in the cache) and a
 *     new file of the rest, then the window run again;
 *   - `sample`: the bundled sample day, `node bin/reckon.js run`, with an empty and a warm cache.
 *
 * At the smallest CSV size, also the naive baseline (RC03 in plain Node streams with decimal.js)
 * against `reckon run --control RC03`. Ratios, not absolute times, are the claims. Each result is
 * kept as `DIR/result-<orders>-<format>.json` (with the commit measured), so sizes can be measured
 * in separate sittings (the 1M and 10M rows on a quiet machine); BENCHMARKS.md is written from
 * every result kept there (`--out FILE` or BENCH_OUT writes the report elsewhere, so a partial sitting
 * or a helper's trial does not replace the published one). Environment: BENCH_SIZES, BENCH_FORMATS, BENCH_DIR (defaults for the
 * arguments: 1000000,10000000; parquet,csv; /work/bench).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { repoPath } from '../pipeline/core/paths.js';
import { DUCKDB_MEMORY_LIMIT } from '../pipeline/load/engine.js';
import { BENCH_DATE, ensureDay as ensureDayIn, timed, type Timed } from './bench-day.js';
import type { PostgresResult } from './bench-postgres.js';

interface Args { sizes: (number | 'sample')[]; formats: string[]; dir: string; out: string; reportOnly: boolean }

function args(argv: string[]): Args {
  const flag = (name: string) => { const i = argv.indexOf(name); return i >= 0 ? argv.splice(i, 2)[1] : undefined; };
  const formats = (flag('--formats') ?? process.env.BENCH_FORMATS ?? 'parquet,csv').split(',');
  const dir = resolve(flag('--dir') ?? process.env.BENCH_DIR ?? '/work/bench');
  const out = resolve(flag('--out') ?? process.env.BENCH_OUT ?? repoPath('BENCHMARKS.md'));
  const reportOnly = argv.includes('--report-only') || process.env.BENCH_REPORT_ONLY === '1';
  const rest = argv.filter((a) => !a.startsWith('--'));
  const sizes = (rest.length ? rest : (process.env.BENCH_SIZES ?? '1000000,10000000').split(',')).map((s) => (s === 'sample' ? 'sample' as const : Number(s)));
  for (const s of sizes) if (s !== 'sample' && !(Number.isInteger(s) && s > 0)) throw new Error(`bench: a size is a number of orders or 'sample', not ${s}`);
  return { sizes, formats, dir, out, reportOnly };
}

const opts = args(process.argv.slice(2));
const DATE = BENCH_DATE;
const WINDOW = ['2026-11-02T00:00:00Z', '2026-11-03T00:00:00Z'] as const;
const node = process.execPath;
const PEER = resolve(process.env.BENCH_PEER ?? repoPath('../shared/bench/peer-sql.mjs'));
mkdirSync(opts.dir, { recursive: true });

const slim = (t: Timed): Timed => ({ ...t, stdout: '', stderr: '' });

/** How a run's objects were read, from the manifest's `checked` counts: reused with the results (no load), from the delivery cache, checked now. */
function objectsRead(checked: Record<string, number>): string {
  const n = (k: string) => checked[k] ?? 0;
  const all = n('reused') + n('cache') + n('now');
  if (n('reused') === all) return `all ${all} objects reused with the evaluation: the load skipped`;
  return `${n('cache')} of ${all} objects from the cache${n('reused') ? `, ${n('reused')} reused` : ''}`;
}

/** Each control's evaluation and records time (`control_rcNN_ms`, `control_rcNN_records_ms`). */
function perControl(t: Record<string, number>): string {
  return Object.keys(t).filter((k) => /^control_rc[0-9]+_ms$/.test(k))
    .map((k) => `${k.slice(8, 12).toUpperCase()} ${t[k]} (records ${t[k.replace(/_ms$/, '_records_ms')] ?? 0})`).join(', ');
}
const ensureDay = (n: number, fmt: string) => ensureDayIn(opts.dir, n, fmt);

/**
 * The day of `dir` as an intraday schedule sees it after one more delivery: per dataset, its
 * records split by record number into `part-a` (95 in 96: delivered before) and `part-b` (1 in
 * 96: the new delivery), Parquet written by DuckDB with the columns' types kept and the day's own
 * writer settings (generate/writers.ts: zstd, 122,880-row groups); side files copied. DuckDB's
 * default (snappy) made the 1M split 1.74× the day's bytes, so its estimate (engine.ts, 12× the
 * Parquet bytes) crossed 4 GiB and the window ran with its tables in a database file, unlike the
 * day's first run (docs/performance.md "The intraday window's load from the cache").
 */
function splitDay(dir: string): { before: string; after: string } {
  const root = `${dir}-split`;
  const before = join(root, 'before');
  const after = join(root, 'after');
  // `_done-zstd`: a split written with DuckDB's default compression (marked `_done`) is made again.
  if (existsSync(join(after, '_done-zstd'))) return { before, after };
  rmSync(root, { recursive: true, force: true });
  const script = `
    const { DuckDBInstance } = await import(${JSON.stringify(repoPath('node_modules/@duckdb/node-api/lib/index.js'))});
    const fs = await import('node:fs'); const path = await import('node:path');
    const [dir, before, after] = ${JSON.stringify([dir, before, after])};
    const db = await DuckDBInstance.create(':memory:', { threads: '2' }); const c = await db.connect();
    const WRITE = '(FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 122880)';
    for (const ds of fs.readdirSync(dir, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name)) {
      for (const out of [before, after]) fs.mkdirSync(path.join(out, ds), { recursive: true });
      const files = fs.readdirSync(path.join(dir, ds));
      for (const f of files.filter((f) => f.startsWith('_'))) for (const out of [before, after]) fs.copyFileSync(path.join(dir, ds, f), path.join(out, ds, f));
      const data = files.filter((f) => f.endsWith('.parquet')).map((f) => "'" + path.join(dir, ds, f).replaceAll("'", "''") + "'");
      if (!data.length) continue;
      const src = 'read_parquet([' + data.join(', ') + '], file_row_number = true)';
      const a = path.join(before, ds, 'part-a.parquet');
      await c.run("COPY (SELECT * EXCLUDE (file_row_number) FROM " + src + " WHERE file_row_number % 96 <> 95 ORDER BY file_row_number) TO '" + a + "' " + WRITE);
      fs.linkSync(a, path.join(after, ds, 'part-a.parquet'));
      await c.run("COPY (SELECT * EXCLUDE (file_row_number) FROM " + src + " WHERE file_row_number % 96 = 95 ORDER BY file_row_number) TO '" + path.join(after, ds, 'part-b.parquet') + "' " + WRITE);
    }
    fs.writeFileSync(path.join(after, '_done-zstd'), '');
  `;
  execFileSync(node, ['--input-type=module', '-e', script], { stdio: 'inherit', cwd: repoPath('.') });
  return { before, after };
}

function bytesOf(dir: string): number {
  let total = 0;
  for (const d of readdirSync(dir, { withFileTypes: true })) {
    if (d.isDirectory()) total += bytesOf(join(dir, d.name));
    else if (!d.name.startsWith('_')) total += readFileSync(join(dir, d.name)).length;
  }
  return total;
}

interface RunPart { run: Timed; digest: string; timings: Record<string, number>; statuses: string; rows: number; checked: Record<string, number> }

/** One `reckon run --all` of `dir` into a fresh store, with the delivery cache in `cache`. */
function reckonRun(dir: string, cache: string, extra: string[] = []): RunPart | { failed: Timed; error: string } {
  const store = mkdtempSync(join(tmpdir(), 'reckon-bench-store-'));
  try {
    const run = timed(['bin/reckon.js', 'run', '--date', DATE, '--all', '--sources', dir, '--store', store, '--quiet', '--json', ...extra], { RECKON_CACHE_DIR: cache });
    const doc = JSON.parse(run.stdout || '{}');
    if (!doc.manifest) return { failed: slim(run), error: String(doc.error?.message ?? run.stderr.slice(-500)).split('\n')[0] };
    const manifest = JSON.parse(readFileSync(doc.manifest.path, 'utf8'));
    const datasets = Object.values(manifest.sources.datasets) as { records_read: number; objects: { checked?: string }[] }[];
    const checked: Record<string, number> = {};
    for (const o of datasets.flatMap((d) => d.objects)) checked[o.checked ?? 'now'] = (checked[o.checked ?? 'now'] ?? 0) + 1;
    return {
      run: slim(run), digest: doc.results_digest, timings: manifest.timings_ms, checked,
      statuses: doc.controls.map((c: { control_id: string; status: string }) => `${c.control_id} ${c.status}`).join(', '),
      rows: datasets.reduce((a, d) => a + d.records_read, 0),
    };
  } finally {
    rmSync(store, { recursive: true, force: true });
  }
}

interface Row {
  orders: number; format: string; rows: number; bytes: number; commit: string; measured_at: string; load_avg: number[];
  first: RunPart; rerun?: RunPart; intraday?: RunPart & { before: RunPart }; peer?: Timed; floor: Timed; values: Timed;
}
interface Failed { orders: number; format: string; exit_code: number; error: string; wall_s: number; peak_rss_mib: number; commit: string; measured_at: string }
interface Naive { orders: number; naive: Timed; reckon: Timed; reckonParquet?: Timed; commit: string }
interface Sample { commit: string; measured_at: string; load_avg: number[]; cold: RunPart; warm: RunPart[] }

let commit = 'unknown';
try { commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8', cwd: repoPath('.') }).trim(); } catch { /* not a clone */ }
const loadAvg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).map(Number);
const isRun = (r: RunPart | { failed: Timed }): r is RunPart => 'digest' in r;

function measureSample(): void {
  const cache = mkdtempSync(join(tmpdir(), 'reckon-bench-cache-'));
  const sources = repoPath('fixtures/sample-day/sources');
  try {
    const cold = reckonRun(sources, cache);
    const warm = [1, 2, 3].map(() => reckonRun(sources, cache));
    if (!isRun(cold) || !warm.every(isRun)) throw new Error('bench: the sample day failed');
    const s: Sample = { commit, measured_at: new Date().toISOString(), load_avg: loadAvg(), cold, warm: warm as RunPart[] };
    writeFileSync(join(opts.dir, 'result-sample.json'), JSON.stringify(s, null, 2));
    process.stderr.write(`sample day: ${cold.run.wall_s} s cold, ${warm.map((w) => (w as RunPart).run.wall_s).join(' / ')} s warm\n`);
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
}

function measure(n: number, fmt: string): void {
  const dir = ensureDay(n, fmt);
  const cache = mkdtempSync(join(tmpdir(), 'reckon-bench-cache-'));
  try {
    const floor = timed(['dist/scripts/raw-scan.js', dir, fmt]);
    const values = timed(['dist/scripts/raw-scan.js', dir, fmt, 'values']);
    const peer = existsSync(PEER) ? timed([PEER, dir, ...WINDOW, join(opts.dir, `peer-${n}-${fmt}.json`)]) : undefined;
    const first = reckonRun(dir, cache);
    if (!isRun(first)) {
      process.stderr.write(`${n} ${fmt}: reckon run failed (exit ${first.failed.code}): ${first.error}\n`);
      const failed: Failed = { orders: n, format: fmt, exit_code: first.failed.code, error: first.error, wall_s: first.failed.wall_s, peak_rss_mib: first.failed.peak_rss_mib, commit, measured_at: new Date().toISOString() };
      writeFileSync(join(opts.dir, `failed-${n}-${fmt}.json`), JSON.stringify(failed, null, 2));
      return;
    }
    rmSync(join(opts.dir, `failed-${n}-${fmt}.json`), { force: true });
    const rerun = reckonRun(dir, cache);
    let intraday: Row['intraday'];
    if (fmt === 'parquet') {
      const split = splitDay(dir);
      const before = reckonRun(split.before, cache);
      const after = reckonRun(split.after, cache);
      if (isRun(before) && isRun(after)) intraday = { ...after, before };
    }
    const row: Row = {
      orders: n, format: fmt, rows: first.rows, bytes: bytesOf(dir), commit, measured_at: new Date().toISOString(), load_avg: loadAvg(),
      first, ...(isRun(rerun) ? { rerun } : {}), ...(intraday ? { intraday } : {}), ...(peer ? { peer: slim(peer) } : {}), floor: slim(floor), values: slim(values),
    };
    writeFileSync(join(opts.dir, `result-${n}-${fmt}.json`), JSON.stringify(row, null, 2));
    if (fmt === 'csv' && n === Math.min(...opts.sizes.filter((s): s is number => s !== 'sample'))) measureNaive(n, dir);
    process.stderr.write(`${n} ${fmt}: reckon ${first.run.wall_s} s first, ${isRun(rerun) ? rerun.run.wall_s : '—'} s rerun; peer ${peer?.wall_s ?? '—'} s; scan ${values.wall_s} s\n`);
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
}

function measureNaive(n: number, dir: string): void {
  const store = mkdtempSync(join(tmpdir(), 'reckon-bench-store-'));
  try {
    const naiveRun = timed(['dist/scripts/naive-rc03.js', dir, ...WINDOW]);
    const off = { RECKON_CACHE: 'off' };
    const rc03 = timed(['bin/reckon.js', 'run', '--date', DATE, '--control', 'RC03', '--sources', dir, '--store', join(store, 'rc03'), '--quiet', '--json'], off);
    const parquetDay = join(opts.dir, `day-${n}-parquet`);
    const rc03p = existsSync(join(parquetDay, '_expected.json'))
      ? timed(['bin/reckon.js', 'run', '--date', DATE, '--control', 'RC03', '--sources', parquetDay, '--store', join(store, 'rc03p'), '--quiet', '--json'], off)
      : undefined;
    const naive: Naive = { orders: n, naive: slim(naiveRun), reckon: slim(rc03), ...(rc03p ? { reckonParquet: slim(rc03p) } : {}), commit };
    writeFileSync(join(opts.dir, 'result-naive.json'), JSON.stringify(naive, null, 2));
  } finally {
    rmSync(store, { recursive: true, force: true });
  }
}

/** Phases of a manifest's `timings_ms` that add up to its `wall_ms` (the per-control ones are inside controls_ms). */
const PHASES = ['startup_ms', 'command_ms', 'prepare_ms', 'locate_ms', 'engine_ms', 'load_ms', 'controls_ms', 'breaks_ms', 'outputs_ms', 'code_ms', 'publish_ms'];

if (!opts.reportOnly) {
  for (const n of opts.sizes) {
    if (n === 'sample') measureSample();
    else for (const fmt of opts.formats) measure(n, fmt);
  }
}
writeReport();

function phases(t: Record<string, number>): string {
  const listed = PHASES.filter((p) => t[p] !== undefined).map((p) => `${p.replace(/_ms$/, '')} ${t[p]}`);
  const sum = PHASES.reduce((a, p) => a + (t[p] ?? 0), 0);
  return `${listed.join(', ')}${t.wall_ms !== undefined ? `; sum ${sum} of wall ${t.wall_ms}` : ''}`;
}

/** Every result kept in `dir`: the sizes measured (sorted by orders, Parquet first), failures, the naive baseline, the sample day, PostgreSQL runs. */
function readResults(dir: string): { results: Row[]; failures: Failed[]; naive?: Naive; sample?: Sample; pgResults: PostgresResult[] } {
  const json = <T>(f: string) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as T;
  const files = readdirSync(dir);
  const results = files.filter((f) => /^result-[0-9]+-(csv|parquet)\.json$/.test(f)).map((f) => json<Row>(f))
    .filter((r) => r.first !== undefined) // results of the bench before issue 20 have another shape
    .sort((a, b) => a.orders - b.orders || (a.format === 'parquet' ? -1 : 1));
  const naive = existsSync(join(dir, 'result-naive.json')) ? json<Naive>('result-naive.json') : undefined;
  const sample = existsSync(join(dir, 'result-sample.json')) ? json<Sample>('result-sample.json') : undefined;
  const failures = files.filter((f) => /^failed-[0-9]+-(csv|parquet)\.json$/.test(f)).map((f) => json<Failed>(f));
  // Database-source runs (npm run bench:postgres, scripts/bench-postgres.ts), when any were kept.
  const pgResults = files.filter((f) => /^result-[0-9]+-postgres\.json$/.test(f)).map((f) => json<PostgresResult>(f)).sort((a, b) => a.orders - b.orders);
  return { results, failures, naive, sample, pgResults };
}

// Declared as functions: the report is written from the top of this module, before any const below it is set.
function f1(x: number): string { return x.toFixed(1); }
function f2(x: number): string { return x.toFixed(2); }
function ratio(a: number | undefined, b: number | undefined): string { return a !== undefined && b ? `${f2(a / b)}×` : '—'; }
function secs(t: Timed | undefined): string { return t ? f1(t.wall_s) : '—'; }
function orders(n: number): string { return n.toLocaleString('en'); }

/** BENCHMARKS.md (or `--out`), written from every result kept in the bench folder (and printed). */
function writeReport(): void {
  const { results, failures, naive, sample, pgResults } = readResults(opts.dir);
  const lines = [...summaryLines(results, failures)];
  if (sample) lines.push(...sampleLines(sample));
  lines.push(...phaseLines(results), ...claimLines(results, naive));
  if (pgResults.length) lines.push(...postgresLines(pgResults));
  lines.push(...readingLines());
  writeFileSync(opts.out, lines.join('\n'));
  process.stdout.write(lines.join('\n'));
}

/** The title, the machine, one table row per size and format, the runs that failed, the targets. */
function summaryLines(results: readonly Row[], failures: readonly Failed[]): string[] {
  const cpu = cpus()[0]?.model ?? 'unknown';
  const duckdbVersion = JSON.parse(readFileSync(repoPath('node_modules/@duckdb/node-api/package.json'), 'utf8')).version;
  let kernel = '';
  try { kernel = execFileSync('uname', ['-sr'], { encoding: 'utf8' }).trim(); } catch { /* ignore */ }
  return [
    '# Benchmarks',
    '',
    `Measured by \`npm run bench\` on ${new Date().toISOString().slice(0, 10)}. Machine: ${cpus().length} cores (${cpu}), ${Math.round(totalmem() / 2 ** 30)} GiB RAM, ${kernel}, Node ${process.version}, DuckDB ${duckdbVersion} (threads 2, memory_limit ${DUCKDB_MEMORY_LIMIT}, spilling to a temp folder). Data: \`reckon generate --orders N --date ${DATE} --seed 1\` (every difference kind injected). Each row is one sitting: every figure of a row was measured on the same generated day, one after the other; ratios, not absolute times, are the claims. The load average at the end of each sitting is given: above 2 the machine was shared and wall times are inflated.`,
    '',
    '| orders | format | input rows | input MiB | first run (s) | rerun (s) | intraday (s) | peer (s) | every-column scan (s) | floor (s) | first ÷ peer | first ÷ scan | rerun ÷ scan | intraday ÷ first | peak RSS (MiB) | load avg | commit |',
    '| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |',
    ...results.map((r) => `| ${orders(r.orders)} | ${r.format} | ${r.rows.toLocaleString('en')} | ${f1(r.bytes / 2 ** 20)} | ${secs(r.first.run)} | ${secs(r.rerun?.run)} | ${secs(r.intraday?.run)} | ${secs(r.peer)} | ${secs(r.values)} | ${secs(r.floor)} | ${ratio(r.first.run.wall_s, r.peer?.wall_s)} | ${ratio(r.first.run.wall_s, r.values.wall_s)} | ${ratio(r.rerun?.run.wall_s, r.values.wall_s)} | ${ratio(r.intraday?.run.wall_s, r.first.run.wall_s)} | ${Math.max(r.first.run.peak_rss_mib, r.rerun?.run.peak_rss_mib ?? 0)} | ${f1(r.load_avg[0])} | ${r.commit} |`),
    ...(failures.length ? ['', '**Runs that failed** (no manifest; kept here, not hidden):', '', ...failures.map((x) => `- ${orders(x.orders)} ${x.format} at ${x.commit}: exit ${x.exit_code} after ${f1(x.wall_s)} s, peak RSS ${x.peak_rss_mib} MiB: ${x.error}.`)] : []),
    '',
    'Targets (issue 20): sample day ≤ 1.0 s; 100k Parquet first run ≤ 1.0× the peer; 1M Parquet first run ≤ 0.8× the peer and ≤ 8× the every-column scan; the rerun ≤ 3× the scan; the intraday window ≤ 0.25× the first run; peak RSS at 10M ≤ 3 GiB.',
  ];
}

function sampleLines(sample: Sample): string[] {
  const w = sample.warm.map((x) => x.run.wall_s);
  return ['', '## The bundled sample day (`node bin/reckon.js run`)', '',
    `At ${sample.commit}, load average ${f1(sample.load_avg[0])}: ${f2(sample.cold.run.wall_s)} s wall (${f2(sample.cold.run.cpu_s)} s CPU) with an empty delivery cache, ${w.map(f2).join(' / ')} s with a warm one (CPU ${sample.warm.map((x) => f2(x.run.cpu_s)).join(' / ')} s); target ≤ 1.0 s.`,
    '', `- empty cache: ${phases(sample.cold.timings)}`, `- warm cache: ${phases(sample.warm[sample.warm.length - 1].timings)}`];
}

function phaseLines(results: readonly Row[]): string[] {
  const lines = ['', '## Phases (ms, from each run\'s manifest `timings_ms`; they add up to its `wall_ms`, the process\'s time until the manifest is written)', ''];
  for (const r of results) {
    lines.push(`- ${orders(r.orders)} ${r.format}, first run: ${phases(r.first.timings)}; per control: ${perControl(r.first.timings)}; ${r.first.statuses}`);
    if (r.rerun) lines.push(`- ${orders(r.orders)} ${r.format}, rerun (${objectsRead(r.rerun.checked)}): ${phases(r.rerun.timings)}; results digest ${r.rerun.digest === r.first.digest ? 'equal to the first run\'s' : 'DIFFERENT from the first run\'s'}`);
    if (r.intraday) lines.push(`- ${orders(r.orders)} ${r.format}, intraday window after a new delivery of 1/96 (${r.intraday.checked.cache ?? 0} objects from the cache, ${r.intraday.checked.now ?? 0} checked now): ${phases(r.intraday.timings)}; results digest ${r.intraday.digest === r.first.digest ? 'equal to the whole day\'s' : 'differs from the whole day\'s (other file names and record numbers)'}`);
  }
  return lines;
}

function claimLines(results: readonly Row[], naive: Naive | undefined): string[] {
  const lines = ['', '## Claims', ''];
  for (const r of results) {
    const parts = [`first run ${f1(r.first.run.wall_s)} s`];
    if (r.peer) parts.push(`${ratio(r.first.run.wall_s, r.peer.wall_s)} the hand-written SQL peer (${f1(r.peer.wall_s)} s, which validates nothing)`);
    parts.push(`${ratio(r.first.run.wall_s, r.values.wall_s)} the every-column scan (${f1(r.values.wall_s)} s)`);
    if (r.rerun) parts.push(`rerun unchanged ${f1(r.rerun.run.wall_s)} s = ${ratio(r.rerun.run.wall_s, r.values.wall_s)} the scan`);
    if (r.intraday) parts.push(`intraday window after 1/96 more ${f1(r.intraday.run.wall_s)} s = ${ratio(r.intraday.run.wall_s, r.first.run.wall_s)} the first run`);
    lines.push(`- ${r.format} ${orders(r.orders)}: ${parts.join('; ')}; peak RSS ${r.first.run.peak_rss_mib} MiB.`);
  }
  if (naive) {
    lines.push(`- naive baseline at ${orders(naive.orders)} orders (CSV): plain Node streams + decimal.js RC03 ${f1(naive.naive.wall_s)} s, peak ${naive.naive.peak_rss_mib} MiB; \`reckon run --control RC03\` on the same CSV files (no cache) ${f1(naive.reckon.wall_s)} s: ${f1(naive.naive.wall_s / naive.reckon.wall_s)}× faster. The naive baseline validates nothing and quarantines nothing.`);
    if (naive.reckonParquet) lines.push(`- the same RC03 from the Parquet day (same records): ${f1(naive.reckonParquet.wall_s)} s: ${f1(naive.naive.wall_s / naive.reckonParquet.wall_s)}× faster than the naive baseline on CSV.`);
  }
  return lines;
}

function postgresLines(pgResults: readonly PostgresResult[]): string[] {
  return ['', '## From PostgreSQL (`npm run bench:postgres`)', '',
    'The same generated day (CSV day loaded into a throwaway local PostgreSQL with COPY, not timed) pulled by `reckon run --all --sources sources.json`, every dataset from the database with its watermark from `projection_checkpoint`, beside `reckon run --all` on the Parquet day, one after the other. The database server runs on the same 2 cores.', '',
    '| orders | input rows | reader | from PostgreSQL (s) | extract (s) | load, overlapping the extract (s) | peak RSS (MiB) | Parquet run (s) | ratio | same results digest | server | commit |',
    '| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | --- |',
    ...pgResults.map((r) => `| ${orders(r.orders)} | ${r.rows.toLocaleString('en')} | ${r.reader} × ${r.readers ?? 1} | ${f1(r.postgres.wall_s)} | ${r.extract_s !== undefined ? f1(r.extract_s) : f1(r.postgres.timings.locate_ms / 1000)} | ${f1(r.postgres.timings.load_ms / 1000)} | ${r.postgres.peak_rss_mib} | ${f1(r.parquet.wall_s)} | ${(r.postgres.wall_s / r.parquet.wall_s).toFixed(2)}× | ${r.digest_equal ? 'yes' : '**no**'} | ${r.server_version.split(' ')[0]} | ${r.commit} |`),
    '', '- Target: at most 2× the Parquet run at 1,000,000 orders.'];
}

function readingLines(): string[] {
  return [
    '',
    '## Reading these numbers',
    '',
    '- **First run**: an empty delivery cache, so every file is checked (every value of every record against CONTRACT §1, duplicate hashes, notionals, local times), and the checked result is written to the cache. **Rerun**: the same day again; every input hashed and found unchanged, so the run reuses the first run\'s load and evaluation (results cache, verified by SHA-256) and writes its own breaks, outputs and manifest. **Intraday**: the day as 95/96 already delivered (and checked in an earlier window) plus a new delivery of 1/96; only the new files are checked. Every run also runs the six controls over the whole extract and writes outputs and a manifest.',
    '- **The peer** (`../shared/bench/peer-sql.mjs`) is a careful hand-written DuckDB implementation of the same six controls from the contract, reading the same files through views; it checks no value and quarantines nothing.',
    '- **The every-column scan** reads every value of every file once (each text\'s length, the largest timestamp, date and flag, the exact sum of each number); **the floor** reads only the row counts and numeric sums.',
    '- Wall times include Node\'s start and module loading. docs/performance.md says where the time goes.',
    '',
    'Re-run: `npm run bench -- sample 100000` (sizes as arguments, `--formats parquet,csv`, `--dir DIR` for where generated days and results are kept; `--out FILE` to write this report elsewhere; `--report-only` rewrites it from the results kept).',
    '',
  ];
}
