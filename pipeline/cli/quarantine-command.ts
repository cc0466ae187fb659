/**
 * `reckon quarantine list|show N [--run R|latest] [--store S] [--json]` (CONTRACT §2, issue 19):
 * the quarantine of a run, read from its `quarantine` output (verified against the manifest's
 * SHA-256; else the entries the manifest lists). `list` prints one line per entry; `show N` prints
 * entry N with the raw record the run kept and the record read back from the run's input (SHA-256
 * verified; a file gone or changed since the run is said, not shown). See docs/records.md.
 */
import { ConfigError } from '../core/errors.js';
import { quarantineOf, type QuarantineItem, type QuarantineRead } from '../inspect/quarantine.js';
import { openReader, selectRun } from '../inspect/run-outputs.js';
import { SourceFiles, sourcesOf, type RecordSource } from '../inspect/source-rows.js';
import { parse } from './args.js';
import { printJson } from './io.js';
import { openExistingStore } from './store-option.js';
import { oneLine } from './text.js';
import type { CommandContext } from './command.js';
import { wholeOf } from '../load/quarantine-entry.js';

export const QUARANTINE_USAGE = `usage: reckon quarantine list [--run RUN_ID|latest] [--store DIR|s3://…] [--json]
       reckon quarantine show N [--run RUN_ID|latest] [--store DIR|s3://…] [--json]

  list     one line per entry: number, dataset, file, record and line, column, rule, message
  show N   entry N with the raw record the run kept and the record read back from its input file
  --run    a run id, or latest (default: the head of the store's chain)
`;

/** The usage of `reckon quarantine …` (`--help`). */
export const usage = (): string => QUARANTINE_USAGE;

/** Runs `reckon quarantine …` with `argv` (after the subcommand); returns 0, or throws ConfigError (exit 2). */
export async function command(argv: string[], { io }: CommandContext): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help') {
    if (sub === undefined) throw new ConfigError(`reckon quarantine needs list or show\n${QUARANTINE_USAGE}`);
    io.stdout(QUARANTINE_USAGE);
    return 0;
  }
  if (sub !== 'list' && sub !== 'show') throw new ConfigError(`unknown quarantine subcommand '${sub}'\n${QUARANTINE_USAGE}`);
  const { values, positionals } = parse(rest, { run: { type: 'string' }, store: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean' } }, sub === 'show');
  if (values.help) { io.stdout(QUARANTINE_USAGE); return 0; }
  let number: number | undefined;
  if (sub === 'show') {
    if (positionals.length !== 1 || !/^[1-9][0-9]{0,9}$/.test(positionals[0])) throw new ConfigError(`quarantine show needs one entry number N (1, 2, …; see reckon quarantine list)\n${QUARANTINE_USAGE}`);
    number = Number(positionals[0]);
  }
  const store = await openExistingStore(io, values.store);
  const reader = await openReader();
  try {
    const stored = await selectRun(store, values.run ?? 'latest');
    const read = await quarantineOf(store, stored, reader, number);
    if (number === undefined) {
      if (values.json) printJson(io, { ...summary(read), entries: read.entries });
      else io.stdout(listText(read));
      return 0;
    }
    const entry = read.entries[0];
    if (!entry) throw new ConfigError(`run ${read.run_id} has no quarantine entry ${number}${read.complete ? ` (it has ${read.count})` : ` among the ${read.entries.length === 0 ? stored.manifest.quarantine.listed : read.entries.length} its manifest lists`}`);
    const source = await sourceOf(new SourceFiles(stored.manifest, reader), entry);
    if (values.json) printJson(io, { ...summary(read), entry, source });
    else io.stdout(showText(read, entry, source));
    return 0;
  } finally {
    await reader.close();
  }
}

function summary(read: QuarantineRead) {
  return {
    run_id: read.run_id, count: read.count, complete: read.complete,
    from: read.from.state === 'verified' ? { state: read.from.state, key: read.from.key, sha256: read.from.sha256 } : read.from,
  };
}

/** The entry's record read back from its source file, or null for an entry about a whole file. */
async function sourceOf(files: SourceFiles, e: QuarantineItem): Promise<RecordSource | null> {
  if (e.row === null) return null;
  const [r] = await sourcesOf(files, [{ dataset: e.dataset, file: e.file, record_number: e.row }]);
  return r.source;
}

const where = (e: QuarantineItem) => (e.row === null ? wholeOf(e.file) : `record ${e.row}${e.line !== null && e.line !== e.row ? ` (line ${e.line})` : ''}`);

function fromText(read: QuarantineRead): string {
  if (read.from.state === 'verified') return `from ${read.from.key} (SHA-256 verified)`;
  return `${read.from.message}; the ${read.entries.length} entries the manifest lists are shown${read.complete ? ' (every one)' : ''}`;
}

function listText(read: QuarantineRead): string {
  if (read.count === 0) return `run ${read.run_id}: nothing quarantined\n`;
  const lines = [`run ${read.run_id}: ${read.count} quarantine entr${read.count === 1 ? 'y' : 'ies'}, ${fromText(read)}`];
  const width = String(read.entries.length).length;
  for (const e of read.entries) {
    lines.push(oneLine(`${String(e.number).padStart(width)}  ${e.dataset}  ${e.file}  ${where(e)}${e.column ? `  column ${e.column}` : ''}  ${e.rule}: ${e.message}`));
  }
  return `${lines.join('\n')}\n`;
}

function showText(read: QuarantineRead, e: QuarantineItem, source: RecordSource | null): string {
  const lines = [
    `quarantine entry ${e.number} of ${read.count}, run ${read.run_id} (${fromText(read)})`,
    `  dataset  ${e.dataset}`, `  file     ${e.file}`, `  where    ${where(e)}`,
    ...(e.column ? [`  column   ${e.column}`] : []),
    `  rule     ${e.rule}`, oneLine(`  message  ${e.message}`),
    oneLine(`  raw      ${e.raw === '' ? '(none kept: the entry is about the file or a record with no text)' : e.raw}`),
  ];
  if (source === null) lines.push('  source   (an entry about the whole file: no record to read back)');
  else if (source.state !== 'verified') lines.push(oneLine(`  source   (${source.state}: ${source.message})`));
  else {
    lines.push(`  source   read back from the run's input, SHA-256 verified, line ${source.line}:`);
    if (source.header) lines.push(oneLine(`    header  ${source.header.join(',')}`));
    lines.push(oneLine(`    record  ${source.raw}`));
  }
  return `${lines.join('\n')}\n`;
}
