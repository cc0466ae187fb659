/**
 * `reckon report --run RUN_ID|latest --out FILE [--store DIR]`: writes the run's static HTML report
 * (no script, no network). Exit 0 when written; 2 for usage errors, an unknown run or an existing
 * output file (a report is never overwritten).
 */
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { ConfigError } from '../core/errors.js';
import { writeRunReport } from '../report/report.js';
import { resolveRunId } from '../store/manifests.js';
import { openStore } from '../store/open-store.js';
import { parse } from './args.js';
import { localOrRemote } from './io.js';
import type { CommandContext } from './command.js';

const USAGE = 'usage: reckon report --run RUN_ID|latest --out FILE [--store DIR]   (latest: the last published run)';

/** The usage of `reckon report` (`--help`). */
export const usage = (): string => USAGE;

/** Runs `reckon report` with `argv` (after the subcommand); returns the exit code. */
export async function command(argv: string[], { io }: CommandContext): Promise<number> {
  const { values } = parse(argv, { run: { type: 'string' }, out: { type: 'string' }, store: { type: 'string' } });
  if (!values.run || !values.out) throw new ConfigError(`--run and --out are required\n${USAGE}`);
  const location = values.store ?? 'var/reckon';
  const where = localOrRemote(io, location);
  if (!where.startsWith('s3://') && !(await stat(where).then((s) => s.isDirectory(), () => false))) throw new ConfigError(`--store ${where} is not a folder`);
  const store = await openStore(where);
  const out = resolve(io.cwd, values.out);
  try {
    const { bytes, run } = await writeRunReport(store, await resolveRunId(store, values.run), out);
    io.stdout(`report for run ${run.stored.run_id} written to ${out} (${bytes} bytes)\n`);
    return 0;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') throw new ConfigError(`${out} already exists; a report is never overwritten`);
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new ConfigError(`cannot write ${out}: its folder does not exist`);
    throw e;
  }
}
