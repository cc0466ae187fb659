/**
 * Test helpers: run the real `reckon` CLI as a child process (node bin/reckon.js, never npx, so a
 * kill reaches the product) or in this process (`reckonIn`: the same `main` over a captured
 * CliIo), and make scratch folders.
 */
import { spawnSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach } from 'vitest';
import { main } from '../../pipeline/cli/main.js';
import { captureIo } from '../../pipeline/cli/io.js';

/** The repository root. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');
export const BIN = join(ROOT, 'bin', 'reckon.js');

export interface CliResult { code: number; stdout: string; stderr: string; json?: any }

/** Runs `reckon ...args` synchronously and parses stdout as JSON when `--json` was passed. */
export function reckon(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string } = {}): CliResult {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: opts.cwd ?? ROOT, env: { ...process.env, ...opts.env }, encoding: 'utf8', input: opts.input, maxBuffer: 256 * 1024 * 1024 });
  const out: CliResult = { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
  if (args.includes('--json')) {
    try { out.json = JSON.parse(r.stdout); } catch { /* left undefined: the test asserts on it */ }
  }
  return out;
}

/**
 * Runs `reckon ...args` in this process (pipeline/cli/main.ts over a captured CliIo) and returns
 * what `reckon()` returns for a child process. `env` is the whole environment the command sees
 * (the test process's own is not merged in); relative paths resolve against `cwd` (default ROOT).
 */
export async function reckonIn(args: string[], opts: { cwd?: string; env?: Readonly<Record<string, string | undefined>> } = {}): Promise<CliResult> {
  const io = captureIo(opts.env ?? {}, { cwd: opts.cwd ?? ROOT });
  const code = await main(args, io);
  const out: CliResult = { code, stdout: io.out, stderr: io.err };
  if (args.includes('--json')) {
    try { out.json = JSON.parse(io.out); } catch { /* left undefined: the test asserts on it */ }
  }
  return out;
}

/** Starts `reckon ...args` in the background (for kill and concurrency tests). */
export function reckonAsync(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): ChildProcess {
  return spawn(process.execPath, [BIN, ...args], { cwd: opts.cwd ?? ROOT, env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Runs `reckon ...args` as a child process to its end (concurrency tests): its exit code and all it wrote to stdout and stderr. */
export function reckonSpawned(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = reckonAsync(args, opts);
    let out = '';
    let err = '';
    child.stdout!.on('data', (b) => { out += b; });
    child.stderr!.on('data', (b) => { err += b; });
    child.on('close', (code) => resolve({ code: code ?? -1, out, err }));
  });
}

/**
 * For a file's tests: returns a function that makes a fresh scratch folder (named with `prefix`)
 * each time it is called; every folder made during a test is removed after that test.
 */
export function scratchPerTest(prefix: string): () => string {
  const cleanups: (() => void)[] = [];
  afterEach(() => { while (cleanups.length) cleanups.pop()!(); });
  return () => {
    const s = scratchDir(prefix);
    cleanups.push(s.cleanup);
    return s.dir;
  };
}

/** A fresh temporary directory; removed by the returned cleanup. */
export function scratchDir(prefix = 'reckon-test-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * `reckon()` in this process: the same arguments, working folder and environment (the test
 * process's own merged with `env`) through pipeline/cli/main.ts, without a child process. For
 * tests of what a command does, not of the process around it (exit on a signal, stdin, kills).
 */
export function reckonHere(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<CliResult> {
  return reckonIn(args, { cwd: opts.cwd, env: { ...process.env, ...opts.env } });
}
