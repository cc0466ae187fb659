/**
 * Tiny hand-built source sets for the RC04–RC06 tests: each test writes only the rows it needs
 * (real CSV files and `_watermark.json` in a temp folder, CONTRACT §2), runs the real CLI on one
 * control and reads back the `--json` summary and the manifest it published.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { reckon, scratchDir } from './helpers/cli.js';

/** Column headers of every dataset these controls read (CONTRACT §2, window column first). */
export const HEADERS = {
  orders: ['accepted_at', 'order_id', 'order_version', 'client_order_id', 'account_id', 'instrument_id', 'side', 'ordered_qty', 'status', 'event_at', 'ingested_at'],
  bank_statements: ['business_date', 'timezone', 'cutoff_local', 'statement_id', 'bank_id', 'account_id', 'currency', 'statement_seq', 'opening_balance_minor', 'closing_balance_minor', 'complete', 'file_id'],
  bank_statement_lines: ['statement_id', 'line_id', 'amount_minor', 'value_date', 'reference'],
  ledger_postings: ['effective_at', 'posting_set_id', 'leg', 'account_id', 'currency', 'direction', 'amount_minor', 'kind', 'execution_id', 'reverses_posting_set_id', 'ledger_seq', 'posted_at'],
  custodian_positions: ['business_date', 'timezone', 'cutoff_local', 'custodian_id', 'account_id', 'instrument_id', 'quantity', 'statement_seq', 'complete'],
  positions: ['as_of', 'account_id', 'instrument_id', 'quantity', 'cost_minor', 'cost_currency'],
  executions: ['executed_at', 'execution_id', 'order_id', 'account_id', 'venue_id', 'venue_fill_id', 'instrument_id', 'side', 'fill_qty', 'price', 'price_currency', 'execution_seq', 'ingested_at'],
  venue_fills: ['venue_time_local', 'venue_timezone', 'venue_id', 'venue_fill_id', 'order_id', 'instrument_id', 'side', 'fill_qty', 'price', 'price_currency', 'venue_seq', 'file_id'],
  portfolio_projection: ['as_of', 'build_id', 'account_id', 'instrument_id', 'position_qty', 'cost_minor', 'cost_currency', 'projection_version'],
  notification_intents: ['created_at', 'intent_id', 'authority_ref', 'template_version', 'channel', 'required', 'expires_at'],
  notification_receipts: ['provider_time_local', 'provider_timezone', 'receipt_id', 'intent_id', 'channel', 'status'],
  notification_exceptions: ['approved_at', 'intent_id', 'approved_by', 'reason'],
} as const;

export type DatasetName = keyof typeof HEADERS;
/** One record: column → text ('' or absent = empty). */
export type Row = Readonly<Record<string, string>>;

/** Datasets each control reads (CONTRACT §3). */
export const READS: Record<'RC04' | 'RC05' | 'RC06', readonly DatasetName[]> = {
  RC04: ['bank_statements', 'bank_statement_lines', 'ledger_postings', 'custodian_positions', 'positions', 'executions', 'venue_fills'],
  RC05: ['positions', 'executions', 'portfolio_projection'],
  RC06: ['notification_intents', 'notification_receipts', 'notification_exceptions'],
};

const csvCell = (v: string) => (/[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);

/**
 * Writes `rows` per dataset as `<dir>/<dataset>/part-0001.csv`, and a `_watermark.json` with
 * `watermark` for every dataset listed in `watermarks` (a dataset may be given with no rows:
 * it then gets a header-only file). Returns `dir`.
 */
export function writeSources(dir: string, rows: Partial<Record<DatasetName, readonly Row[]>>, watermarks: Partial<Record<DatasetName, string>>): string {
  const names = new Set<DatasetName>([...Object.keys(rows), ...Object.keys(watermarks)] as DatasetName[]);
  for (const name of names) {
    const folder = join(dir, name);
    mkdirSync(folder, { recursive: true });
    const header = HEADERS[name];
    const lines = [header.join(','), ...(rows[name] ?? []).map((r) => {
      for (const k of Object.keys(r)) if (!(header as readonly string[]).includes(k)) throw new Error(`${name}: no column ${k}`);
      return header.map((c) => csvCell(r[c] ?? '')).join(',');
    })];
    writeFileSync(join(folder, 'part-0001.csv'), `${lines.join('\n')}\n`);
    const wm = watermarks[name];
    if (wm !== undefined) writeFileSync(join(folder, '_watermark.json'), JSON.stringify({ watermark: wm, complete: true }));
  }
  return dir;
}

/** Watermark `wm` for every dataset `control` reads. */
export function watermarksFor(control: keyof typeof READS, wm: string): Partial<Record<DatasetName, string>> {
  return Object.fromEntries(READS[control].map((d) => [d, wm]));
}

/** What one `reckon run --control X --json` returned. */
export interface ControlRun {
  readonly code: number;
  readonly stderr: string;
  readonly json: any;
  readonly control: any;
  readonly manifest: any;
  /** `[kind, key]` pairs, sorted. */
  readonly keys: [string, string][];
  /** `kind key → detail`. */
  readonly details: Record<string, string>;
}

/** Runs one control over `window` (`START/END`) on `sourcesDir` with a fresh store in `workDir`. */
export function runControl(control: string, window: string, sourcesDir: string, workDir: string, extra: string[] = []): ControlRun {
  const store = join(workDir, `store-${control}-${Math.random().toString(36).slice(2, 8)}`);
  const r = reckon(['run', '--control', control, '--window', window, '--sources', sourcesDir, '--store', store, '--json', ...extra]);
  if (!r.json) throw new Error(`reckon run gave no JSON (exit ${r.code}): ${r.stderr}`);
  const c = r.json.controls.find((x: any) => x.control_id === control);
  const manifest = JSON.parse(readFileSync(r.json.manifest.path, 'utf8'));
  const keys = (c.differences as any[]).map((d) => [d.kind, d.key] as [string, string]).sort((a, b) => (a.join('\u0000') < b.join('\u0000') ? -1 : 1));
  const details = Object.fromEntries((c.differences as any[]).map((d) => [`${d.kind} ${d.key}`, d.detail]));
  return { code: r.code, stderr: r.stderr, json: r.json, control: c, manifest, keys, details };
}

/** A scratch folder with `sources/` inside; `cleanup` removes both. */
export function scratchSources(prefix: string): { dir: string; sources: string; cleanup: () => void } {
  const s = scratchDir(prefix);
  const sources = join(s.dir, 'sources');
  mkdirSync(sources);
  return { dir: s.dir, sources, cleanup: s.cleanup };
}
