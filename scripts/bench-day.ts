/** What the benchmark scripts share: a timed child process and a generated day kept between runs. */
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { repoPath } from '../pipeline/core/paths.js';

/** The benchmarks' day (every generated day is this date). */
export const BENCH_DATE = '2026-11-02';

/** A finished child process: wall time, CPU time (user + system), peak RSS, exit code and output. */
export interface Timed { wall_s: number; cpu_s: number; peak_rss_mib: number; code: number; stdout: string; stderr: string }

/** Runs `node …args` from the repository root under /usr/bin/time; throws when no timing was printed. */
export function timed(args: string[], env: NodeJS.ProcessEnv = {}): Timed {
  const r = spawnSync('/usr/bin/time', ['-f', '__TIME__ %e %U %S %M', process.execPath, ...args], { encoding: 'utf8', maxBuffer: 1 << 30, cwd: repoPath('.'), env: { ...process.env, ...env } });
  const m = /__TIME__ ([0-9.]+) ([0-9.]+) ([0-9.]+) ([0-9]+)/.exec(r.stderr);
  if (!m) throw new Error(`no timing for ${args.join(' ')}: ${r.stderr.slice(-2000)}`);
  return { wall_s: Number(m[1]), cpu_s: Number(m[2]) + Number(m[3]), peak_rss_mib: Math.round(Number(m[4]) / 1024), code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** The generated day of `n` orders in format `fmt` under `benchDir` (seed 1), generated once. */
export function ensureDay(benchDir: string, n: number, fmt: string): string {
  const dir = join(benchDir, `day-${n}-${fmt}`);
  if (existsSync(join(dir, '_expected.json'))) return dir;
  rmSync(dir, { recursive: true, force: true });
  process.stderr.write(`generating ${n} orders (${fmt}) into ${dir}\n`);
  const g = timed(['bin/reckon.js', 'generate', '--orders', String(n), '--date', BENCH_DATE, '--out', dir, '--format', fmt, '--seed', '1']);
  if (g.code !== 0) throw new Error(`generate failed: ${g.stderr}`);
  return dir;
}
