/**
 * `reckon generate --orders N --date D --out DIR [--seed S] [--format csv|parquet] [--clean]`:
 * writes a consistent synthetic day for every dataset of CONTRACT §2, with injected differences
 * of every kind of §4 (unless `--clean`), and `_expected.json` beside the datasets: the statuses,
 * the exact [kind, key] differences and the control totals a run of `--date D` must report, for
 * each defined control (controls/) the generator models.
 */
import { resolve } from 'node:path';
import { ConfigError } from '../core/errors.js';
import { loadControls } from '../controls/definitions.js';
import { MIN_ORDERS_WITH_FAULTS, generateDay } from '../generate/day.js';
import { parse } from './args.js';
import { printJson } from './io.js';
import type { CommandContext } from './command.js';

export const GENERATE_USAGE = `reckon generate --orders N --date YYYY-MM-DD --out DIR [--seed S] [--format csv|parquet] [--clean] [--rows-per-file N] [--json]`;

/** Runs `reckon generate`; returns 0, or throws ConfigError (exit 2) on bad options. */
export async function command(argv: string[], { io }: CommandContext): Promise<number> {
  const { values } = parse(argv, {
    orders: { type: 'string' }, date: { type: 'string' }, out: { type: 'string' }, seed: { type: 'string' },
    format: { type: 'string' }, clean: { type: 'boolean' }, 'rows-per-file': { type: 'string' }, json: { type: 'boolean' },
  });
  if (!values.orders || !/^[1-9][0-9]{0,8}$/.test(values.orders)) throw new ConfigError(`--orders must be a positive integer\n${GENERATE_USAGE}`);
  if (!values.date || !/^[0-9]{4}-[0-9]{2}-[0-9]{2}$/.test(values.date) || Number.isNaN(Date.parse(`${values.date}T00:00:00Z`))) throw new ConfigError(`--date must be a calendar date YYYY-MM-DD\n${GENERATE_USAGE}`);
  if (!values.out) throw new ConfigError(`--out DIR is required\n${GENERATE_USAGE}`);
  const format = values.format ?? 'csv';
  if (format !== 'csv' && format !== 'parquet') throw new ConfigError('--format must be csv or parquet');
  const orders = Number(values.orders);
  const faults = !values.clean;
  if (faults && orders < MIN_ORDERS_WITH_FAULTS) throw new ConfigError(`--orders must be at least ${MIN_ORDERS_WITH_FAULTS} to inject every kind of difference (or pass --clean)`);
  const rowsPerPart = values['rows-per-file'] ? Number(values['rows-per-file']) : undefined;
  if (rowsPerPart !== undefined && !(Number.isInteger(rowsPerPart) && rowsPerPart > 0)) throw new ConfigError('--rows-per-file must be a positive integer');
  const out = resolve(io.cwd, values.out);
  // The expectation covers the controls as defined (controls/), not a list of the generator's own.
  const controls = await loadControls();
  const started = Date.now();
  let expectation;
  try {
    expectation = await generateDay({ orders, date: values.date, out, seed: values.seed ?? '1', format, faults, rowsPerPart }, controls);
  } catch (e) {
    const msg = (e as Error).message;
    if (/already holds dataset folders|bad date|at least/.test(msg)) throw new ConfigError(msg);
    throw e;
  }
  const rows = expectation.files.reduce((n, f) => n + f.rows, 0);
  if (values.json) printJson(io, { out, orders, date: values.date, seed: values.seed ?? '1', format, faults, rows, files: expectation.files, expected: `${out}/_expected.json` });
  else {
    const kinds = Object.values(expectation.controls).reduce((n, c) => n + c.differences.length, 0);
    io.stdout(`generated ${orders} orders for ${values.date} in ${out}: ${expectation.files.length} file(s), ${rows} row(s), ${kinds} injected difference(s), ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
    io.stdout(`expectation: ${out}/_expected.json\n`);
  }
  return 0;
}

/** The usage of `reckon generate` (`--help`). */
export const usage = (): string => `usage: ${GENERATE_USAGE}`;
