/**
 * `reckon records (--break B [--run R] | --run R|latest --kind K --key KEY) [--store S] [--limit N] [--json]`
 * (issue 19): the records behind one difference, side by side, each with its dataset, source file
 * and record number and the raw source row read back from the run's inputs (SHA-256 verified;
 * a file gone or changed since the run is said, not shown). The records come from the run's
 * `difference_records` output, verified against its manifest. See docs/records.md.
 */
import { ConfigError } from '../core/errors.js';
import { BreakStore } from '../breaks/break-store.js';
import { loadControls } from '../controls/definitions.js';
import { differenceRecords, type DifferenceRecordsRead } from '../inspect/difference-records.js';
import { openReader, selectRun } from '../inspect/run-outputs.js';
import { pendingRollForwards, pendingText } from '../publish/staging.js';
import { SourceFiles, sourcesOf, type RecordSource } from '../inspect/source-rows.js';
import type { StoredManifest } from '../report/run-view.js';
import type { RecordRef } from '../../manifests/v1/schema.js';
import { closest, parse } from './args.js';
import { printJson } from './io.js';
import { openExistingStore } from './store-option.js';
import { oneLine } from './text.js';
import type { CommandContext } from './command.js';

export const RECORDS_USAGE = `usage: reckon records (--break BREAK_ID [--run RUN_ID] | --run RUN_ID|latest --kind KIND --key KEY)
                      [--store DIR|s3://…] [--limit N] [--json]

  --break B      the break's difference, in the last run that observed it (or --run)
  --run R        a run id, or latest (the head of the store's chain)
  --kind, --key  the difference (CONTRACT §4 kind and key)
  --limit N      most records printed (default 100; 0 prints every one)
  --json         one JSON object: the difference, its records and each raw source row
`;

/** The usage of `reckon records` (`--help`). */
export const usage = (): string => RECORDS_USAGE;

/** Records printed by default (the `difference_records` output holds every one). */
export const RECORDS_SHOWN = 100;

/** Runs `reckon records` with `argv` (after the subcommand); returns 0, or throws ConfigError (exit 2). */
export async function command(argv: string[], { io }: CommandContext): Promise<number> {
  const { values } = parse(argv, {
    break: { type: 'string' }, run: { type: 'string' }, kind: { type: 'string' }, key: { type: 'string' },
    store: { type: 'string' }, limit: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean' },
  });
  if (values.help) { io.stdout(RECORDS_USAGE); return 0; }
  const limit = values.limit === undefined ? RECORDS_SHOWN : /^[0-9]{1,9}$/.test(values.limit) ? Number(values.limit) : NaN;
  if (Number.isNaN(limit)) throw new ConfigError(`--limit must be a whole number (0: every record), not '${values.limit}'`);
  const store = await openExistingStore(io, values.store);
  const target = await targetOf(store, values);
  const reader = await openReader();
  try {
    const stored = await selectRun(store, target.run);
    if (target.breakId === null) await checkKind(target.kind, stored);
    const read = await differenceRecords(store, stored, target.kind, target.key, reader);
    const shown = limit === 0 ? read.records : read.records.slice(0, limit);
    const files = new SourceFiles(stored.manifest, reader);
    const withRows = await sourcesOf(files, shown);
    if (values.json) printJson(io, recordsJson(read, target.breakId, files.location, withRows));
    else io.stdout(recordsText(read, target.breakId, files.location, withRows));
    return 0;
  } finally {
    await reader.close();
  }
}

/**
 * Refuses (ConfigError, exit 2) a --kind that no control the run ran has: unknown to every control,
 * with the nearest kind and each of the run's controls' kinds, or a kind of a control it did not run.
 */
async function checkKind(kind: string, stored: Pick<StoredManifest, 'run_id' | 'manifest'>): Promise<void> {
  const ran = stored.manifest.results.map((r) => r.control_id);
  const controls = await loadControls();
  const defs = controls.filter((c) => ran.includes(c.control_id));
  if (defs.some((c) => c.difference_kinds.includes(kind))) return;
  const owner = controls.find((c) => c.difference_kinds.includes(kind));
  if (owner) throw new ConfigError(`--kind ${kind} is a difference kind of ${owner.control_id}, which run ${stored.run_id} did not run (it ran ${ran.join(', ')})`);
  const near = closest(kind, defs.flatMap((c) => c.difference_kinds));
  const kinds = defs.map((c) => `${c.control_id}: ${c.difference_kinds.join(', ')}`).join('; ');
  throw new ConfigError(`--kind ${kind} is an unknown difference kind${near ? ` (did you mean ${near}?)` : ''}; the kinds of the controls run ${stored.run_id} ran: ${kinds}`);
}

interface Target { readonly run: string; readonly kind: string; readonly key: string; readonly breakId: string | null }

/** The run and difference asked for: by break (its last observing run unless --run), or by run, kind and key. */
async function targetOf(store: Parameters<typeof selectRun>[0], v: { break?: string; run?: string; kind?: string; key?: string }): Promise<Target> {
  if (v.break !== undefined) {
    if (v.kind !== undefined || v.key !== undefined) throw new ConfigError(`--break names the difference: give it without --kind and --key\n${RECORDS_USAGE}`);
    const id = v.break.trim();
    if (!/^brk-[0-9a-f]{24}$/.test(id)) throw new ConfigError(`'${id}' is not a break id (brk- and 24 hex digits)`);
    const rec = await new BreakStore(store).read(id);
    if (!rec) {
      // A run stopped after its manifest may have planned the break: its object is written by the next run.
      const pending = (await pendingRollForwards(store)).map((p) => `; ${pendingText(p, store.location)}`).join('');
      throw new ConfigError(`no break ${id} in ${store.location}${pending}`);
    }
    const last = rec.observations[rec.observations.length - 1];
    const run = v.run ?? last?.run_id;
    if (!run) throw new ConfigError(`break ${id} has no observation by a run; give --run`);
    return { run, kind: rec.kind, key: rec.key, breakId: id };
  }
  if (!v.run || v.kind === undefined || v.key === undefined) throw new ConfigError(`give --break BREAK_ID, or --run, --kind and --key together\n${RECORDS_USAGE}`);
  return { run: v.run, kind: v.kind, key: v.key, breakId: null };
}

type Shown = RecordRef & { source: RecordSource };

function recordsJson(read: DifferenceRecordsRead, breakId: string | null, location: string, shown: readonly Shown[]) {
  const d = read.difference;
  return {
    run_id: read.run_id, window: read.window, control_id: read.control_id, kind: d.kind, key: d.key, detail: d.detail,
    break_id: breakId ?? d.break_id, disposition: d.disposition, record_count: read.record_count, complete: read.complete,
    from: read.from.state === 'verified' ? { state: read.from.state, key: read.from.key, sha256: read.from.sha256 } : read.from,
    sources: location, shown: shown.length, records: shown,
  };
}

/** Where the list came from, for people. */
function fromText(read: DifferenceRecordsRead): string {
  const n = read.record_count === null ? 'records not kept (the run is older than the records of differences)' : `${read.record_count} record(s)`;
  if (read.from.state === 'verified') return `${n}, from ${read.from.key} (SHA-256 verified)`;
  return `${n}; ${read.from.message}; the ${read.records.length} the manifest lists are shown${read.complete ? ' (every one)' : ''}`;
}

function recordsText(read: DifferenceRecordsRead, breakId: string | null, location: string, shown: readonly Shown[]): string {
  const d = read.difference;
  const lines = [
    `${read.control_id} ${d.kind} ${d.key}${breakId ?? d.break_id ? `  break ${breakId ?? d.break_id}` : ''}`,
    `run ${read.run_id} [${read.window.start}, ${read.window.end}) ${d.disposition}: ${d.detail}`,
    `${fromText(read)}; sources ${location}`,
  ];
  let header: string | undefined;
  for (const r of shown) {
    lines.push('', ...recordLines(r, header));
    header = r.source.state === 'verified' ? r.source.header?.join(',') : undefined;
  }
  const more = read.records.length - shown.length;
  if (more > 0) lines.push('', `… ${more} more record(s) not printed (--limit 0 prints every one)`);
  if (shown.length === 0) lines.push('', 'no record stands behind this difference in the inputs the run read');
  return `${lines.join('\n')}\n`;
}

/**
 * One record: its side, dataset, file, number and key, then its raw row or why it is not shown.
 * A CSV record is preceded by its file's header unless `previousHeader` (the header just printed) is the same.
 */
function recordLines(r: Shown, previousHeader: string | undefined): string[] {
  const where = r.source.state === 'verified' && r.source.line !== r.record_number ? ` (line ${r.source.line})` : '';
  const head = oneLine(`${r.side}  ${r.dataset}  ${r.file}  record ${r.record_number}${where}  ${r.record_key}`);
  if (r.source.state !== 'verified') return [head, oneLine(`    (${r.source.state}: ${r.source.message})`)];
  const header = r.source.header?.join(',');
  return [head, ...(header !== undefined && header !== previousHeader ? [oneLine(`    header  ${header}`)] : []), `    record  ${oneLine(r.source.raw)}`];
}
