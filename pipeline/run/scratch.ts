/**
 * A run's scratch folder `$TMPDIR/reckon-XXXXXX` (DuckDB files, links, downloads, staged outputs):
 * made with a record of its holder (host, pid, boot id and start time: core/process.ts) and removed
 * at release. A run killed before its release leaves the folder behind; the next run on the host
 * removes every such folder whose holder is gone, never one of a live process or of another host,
 * nor one without a readable holder record (made by an older reckon, or by a run not done making it).
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunLogger } from '../core/log.js';
import { holderAlive, thisProcess, type Holder } from '../core/process.js';

/** DuckDB reads and writes scratch files by path: the path must hold no quote, space or glob. */
const SAFE_PATH = /^[A-Za-z0-9_\-/.]+$/;

/** The holder record in a scratch folder. */
export const SCRATCH_HOLDER = 'reckon-holder.json';

/** What mkdtemp makes of the prefix `reckon-`: six more characters. */
const SCRATCH_NAME = /^reckon-[A-Za-z0-9]{6}$/;

/** The holder record of a scratch folder: its process and run. */
export interface ScratchHolder extends Holder { readonly run_id: string; readonly started_at: string }

/** The folder scratch folders are made in: the system's temporary folder when its path is safe for DuckDB, else /tmp. */
export function scratchBase(): string {
  return SAFE_PATH.test(tmpdir()) ? tmpdir() : '/tmp';
}

/** Makes the run's scratch folder in `base`, with its holder record; returns its path. */
export async function makeScratch(base: string, runId: string, startedAt: Date): Promise<string> {
  const dir = await mkdtemp(join(base, 'reckon-'));
  const holder: ScratchHolder = { ...thisProcess(), run_id: runId, started_at: startedAt.toISOString() };
  await writeFile(join(dir, SCRATCH_HOLDER), `${JSON.stringify(holder)}\n`);
  return dir;
}

/**
 * Removes the scratch folders in `base` left by runs whose process is gone (same host, dead or
 * reused pid, or an earlier boot); returns their paths. A folder that cannot be read or removed is
 * left, never fails the run.
 */
export async function sweepScratch(base: string, logger: RunLogger): Promise<string[]> {
  const names = await readdir(base).catch(() => [] as string[]);
  const removed: string[] = [];
  for (const name of names.filter((n) => SCRATCH_NAME.test(n)).sort()) {
    const dir = join(base, name);
    const holder = await readHolder(dir);
    if (!holder || holder.host !== hostname() || holderAlive(holder)) continue;
    try {
      await rm(dir, { recursive: true, force: true });
      removed.push(dir);
      logger.info(`removed the scratch folder ${dir} of run ${holder.run_id} (pid ${holder.pid}, no longer running)`, { phase: 'prepare' });
    } catch { /* left for a later run */ }
  }
  return removed;
}

async function readHolder(dir: string): Promise<ScratchHolder | undefined> {
  try {
    const h = JSON.parse(await readFile(join(dir, SCRATCH_HOLDER), 'utf8')) as ScratchHolder;
    return h && typeof h === 'object' && typeof h.pid === 'number' && typeof h.host === 'string' ? h : undefined;
  } catch { return undefined; }
}
