/**
 * `reckon import` (CONTRACT §8): provider files into contract datasets plus `_import_report.json`.
 * Exit codes: 0 imported and every control total the files carry ties; 1 imported, with
 * mismatches or statements that could not be written (all in the report); 2 usage or settings;
 * 3 a value that cannot be read exactly (nothing written). See docs/import.md.
 */
import { resolve } from 'node:path';
import { ConfigError } from '../core/errors.js';
import { EMPTY_ACCOUNT_MAP, loadAccountMap } from '../import/account-map.js';
import { checkCalendar, runImport, type ImportOutcome } from '../import/import.js';
import { IMPORT_FORMATS, type ImportFormat } from '../import/model.js';
import { parse } from './args.js';
import { printJson } from './io.js';
import type { CommandContext } from './command.js';

export const IMPORT_USAGE = `reckon import camt053|mt940|bai2|fix FILE… --out SOURCES_DIR
              [--account-map FILE] [--timezone TZ --cutoff HH:MM] [--bank-id ID]
              [--watermark TIMESTAMP] [--json]`;

/** Runs `reckon import` with `argv` (after the subcommand); returns the exit code. */
export async function command(argv: string[], { io }: CommandContext): Promise<number> {
  const { values, positionals } = parse(argv, {
    out: { type: 'string' }, 'account-map': { type: 'string' }, timezone: { type: 'string' }, cutoff: { type: 'string' },
    'bank-id': { type: 'string' }, watermark: { type: 'string' }, json: { type: 'boolean' },
  }, true);
  const [fmt, ...files] = positionals;
  const format = (fmt === 'mt950' ? 'mt940' : fmt) as ImportFormat;
  if (!IMPORT_FORMATS.includes(format)) throw new ConfigError(`the format must be one of ${IMPORT_FORMATS.join(', ')} (mt950 is read as mt940)\n${IMPORT_USAGE}`);
  if (files.length === 0) throw new ConfigError(`no provider file given\n${IMPORT_USAGE}`);
  if (!values.out) throw new ConfigError(`--out SOURCES_DIR is required\n${IMPORT_USAGE}`);
  if (values.out.startsWith('s3://')) throw new ConfigError('--out must be a local folder (import into a local sources folder, then copy it)');
  if ((values.timezone === undefined) !== (values.cutoff === undefined)) throw new ConfigError('--timezone and --cutoff go together');
  checkCalendar(values.timezone, values.cutoff);
  if (format === 'fix' && (values.timezone || values['bank-id'])) throw new ConfigError('--timezone, --cutoff and --bank-id are for bank statements; FIX TransactTime is UTC');
  const accountMap = values['account-map'] ? await loadAccountMap(resolve(io.cwd, values['account-map'])) : EMPTY_ACCOUNT_MAP;
  const outcome = await runImport({
    format, files: files.map((f) => resolve(io.cwd, f)), out: resolve(io.cwd, values.out), accountMap,
    timezone: values.timezone ?? null, cutoff: values.cutoff ?? null, bankId: values['bank-id'] ?? null, watermark: values.watermark ?? null,
  });
  if (values.json) printJson(io, outcome);
  else io.stdout(humanSummary(outcome));
  return outcome.exit_code;
}

function humanSummary(o: ImportOutcome): string {
  const out: string[] = [];
  for (const f of o.files) {
    const what = f.format === 'fix'
      ? `${f.fills_written} fill(s) written`
      : `${f.statements_written} statement(s) written with ${f.lines_written} line(s), ${f.statements_unwritten} not written`;
    out.push(`${f.format_version} ${f.name} (sha256 ${f.sha256.slice(0, 12)}…): ${what}; control totals ${f.control_totals.ok} ok, ${f.control_totals.mismatch} mismatch, ${f.control_totals.not_checked} not checked`);
    for (const m of f.mismatches) {
      const vals = m.declared !== undefined ? ` declared ${m.declared}, recomputed ${m.recomputed}${m.unit ? ` (${m.unit})` : ''}` : '';
      out.push(`  MISMATCH ${m.check} — ${m.scope}${vals ? `:${vals}` : ''}${m.detail ? ` — ${m.detail}` : ''}`);
    }
  }
  out.push(`written under ${o.out}: ${o.outputs.join(', ')}`);
  if (o.watermark) out.push(`watermarks: ${Object.entries(o.watermark).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  return `${out.join('\n')}\n`;
}

/** The usage of `reckon import` (`--help`). */
export const usage = (): string => `usage: ${IMPORT_USAGE}`;
