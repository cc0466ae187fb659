/**
 * `reckon import` (CONTRACT §8): provider files → contract datasets plus `_import_report.json`.
 *
 * Flow, one-way: read every file (SHA-256) → parse it with its format's reader → join statement
 * pages across files → map accounts (account map, flags) and give each statement its calendar
 * (timezone, cutoff), bank id and sequence → check what spans statements (the chain of closing
 * to next opening) → validate every value the rows carry → write one CSV per provider file and
 * dataset, then the report. Nothing is written when any file holds a value that cannot become a
 * contract value exactly (ProviderValueError, exit 3) or a setting is missing (ConfigError,
 * exit 2). Control-total mismatches and statements that cannot be written are evidence: they are
 * kept in the report, printed, and make the exit code 1; nothing is corrected.
 */
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { datasetSpec } from '../contract/datasets.js';
import { ConfigError, InputError } from '../core/errors.js';
import { ExitCode } from '../core/outcome.js';
import { ianaZone } from '../contract/local-time.js';
import { parseCutoff, parseId, parseTimestamp } from '../contract/values.js';
import { lookupAccount, venueIdFor, type AccountMap } from './account-map.js';
import { currencyExponent, minorToMajorText } from './amounts.js';
import { parseBai2 } from './bai2.js';
import { parseCamt053 } from './camt053.js';
import { parseFix } from './fix.js';
import { tieCheck, type ControlCheck, type Finding, type ImportFormat, type ParsedStatement, type ParseResult, type ProviderFile } from './model.js';
import { parseMt940 } from './mt940.js';
import { joinPages } from './pages.js';
import { csvText, datasetDir, mergeReport, readReport, writeAtomic, type ImportEntry } from './write.js';

/** What `reckon import` was asked to do (validated by the command). */
export interface ImportRequest {
  readonly format: ImportFormat;
  readonly files: readonly string[];
  readonly out: string;
  readonly accountMap: AccountMap;
  readonly timezone: string | null;
  readonly cutoff: string | null;
  readonly bankId: string | null;
  /** When set, `_watermark.json` is written (or moved forward) in every dataset folder written. */
  readonly watermark: string | null;
}

/** One file's outcome for the command's summary. */
export interface FileSummary {
  readonly name: string;
  readonly sha256: string;
  readonly format: string;
  readonly format_version: string;
  readonly statements_written: number;
  readonly statements_unwritten: number;
  readonly lines_written: number;
  readonly fills_written: number;
  readonly control_totals: { ok: number; mismatch: number; not_checked: number };
  readonly mismatches: readonly Record<string, unknown>[];
}

/** What the command prints and returns. */
export interface ImportOutcome {
  readonly exit_code: typeof ExitCode.CLEAN | typeof ExitCode.MISMATCH;
  readonly out: string;
  readonly files: readonly FileSummary[];
  readonly outputs: readonly string[];
  readonly watermark: Record<string, string> | null;
}

const PARSERS: Record<ImportFormat, (f: ProviderFile, i: number) => ParseResult> = { camt053: parseCamt053, mt940: parseMt940, bai2: parseBai2, fix: parseFix };
const BANK_DATASETS = ['bank_statements', 'bank_statement_lines'] as const;

/** A statement after mapping: everything its `bank_statements` row and lines need, or why it is not written. */
interface FinalStatement {
  readonly parsed: ParsedStatement;
  readonly statementId: string | null;
  readonly accountId: string | null;
  readonly bankId: string | null;
  readonly timezone: string | null;
  readonly cutoff: string | null;
  readonly businessDate: string | null;
  seq: bigint | null;
  seqSource: string;
  readonly unwritten: string[];
  readonly lineRows: { lineId: string; amount: bigint; valueDate: string; reference: string | null }[];
}

async function readProviderFile(path: string): Promise<ProviderFile> {
  let bytes: Buffer;
  try {
    if (!(await stat(path)).isFile()) throw new Error('not a regular file');
    bytes = await readFile(path);
  } catch (e) {
    throw new ConfigError(`provider file ${path} cannot be read: ${(e as Error).message}`, path);
  }
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  return { path, name: basename(path), bytes, sha256, fileId: `sha256:${sha256}` };
}

/** The local calendar date of a camt date-time in `tz` (a zoned text) or as written (no zone). */
function localDateOf(dateTime: string, tz: string): string {
  const t = parseTimestamp(dateTime);
  if (!t.ok) return dateTime.slice(0, 10);
  const zone = ianaZone(tz)!;
  const offsetMin = zone.offset(Number(t.value / 1000n));
  const local = new Date(Number(t.value / 1000n) + offsetMin * 60_000);
  return local.toISOString().slice(0, 10);
}

/** One command's files and parse results, with what each file's entry collects (by file index) and what was written. */
interface ImportRun {
  readonly files: readonly ProviderFile[];
  readonly results: readonly ParseResult[];
  /** The parser's checks and findings of each file, then those found across files (pages, chain). */
  readonly checks: Map<number, ControlCheck[]>;
  readonly findings: Map<number, Finding[]>;
  readonly outputs: string[];
  readonly summaries: FileSummary[];
}

/** Runs one import. Throws ConfigError (2) or InputError/ProviderValueError (3) before writing anything. */
export async function runImport(req: ImportRequest): Promise<ImportOutcome> {
  const { files, results } = await readAndParse(req);
  const run: ImportRun = {
    files, results,
    checks: new Map(files.map((_, i) => [i, [...results[i].checks]])),
    findings: new Map(files.map((_, i) => [i, [...results[i].findings]])),
    outputs: [], summaries: [],
  };
  const entriesByDataset = req.format === 'fix' ? await writeFills(req, run) : await writeStatements(req, run);
  for (const [ds, entries] of entriesByDataset) {
    const path = join(req.out, ds, '_import_report.json');
    const doc = mergeReport(await readReport(path, ds), entries);
    await writeAtomic(path, `${JSON.stringify(doc, null, 2)}\n`);
    run.outputs.push(`${ds}/_import_report.json`);
  }
  const watermark = req.watermark ? await writeWatermarks(req.out, [...entriesByDataset.keys()], req.watermark) : null;
  const anyMismatch = run.summaries.some((s) => s.mismatches.length > 0);
  return { exit_code: anyMismatch ? ExitCode.MISMATCH : ExitCode.CLEAN, out: req.out, files: run.summaries, outputs: run.outputs, watermark };
}

/** Reads and parses every file; a file given twice is a ConfigError, values of any file that cannot be read exactly one InputError. */
async function readAndParse(req: ImportRequest): Promise<{ files: ProviderFile[]; results: ParseResult[] }> {
  if (req.files.length === 0) throw new ConfigError('no provider file given');
  const files: ProviderFile[] = [];
  for (const p of req.files) files.push(await readProviderFile(p));
  const dupFile = files.find((f, i) => files.findIndex((g) => g.sha256 === f.sha256) !== i);
  if (dupFile) throw new ConfigError(`${dupFile.path} is given twice (same SHA-256 as another file of this command)`);

  // Parse every file; collect value errors of all files before failing.
  const results: ParseResult[] = [];
  const errors: string[] = [];
  files.forEach((f, i) => {
    try { results.push(PARSERS[req.format](f, i)); } catch (e) {
      // With any error the import stops below, so `results` is used only when every file parsed.
      if (e instanceof InputError) errors.push(e.message); else throw e;
    }
  });
  if (errors.length) throw new InputError({ message: `nothing imported: ${errors.length} file(s) hold values that cannot be read exactly:\n  ${errors.join('\n  ')}` });
  return { files, results };
}

/** FIX: one `venue_fills` CSV per log, after every fill's venue id is valid; returns the report entries. */
async function writeFills(req: ImportRequest, run: ImportRun): Promise<Map<string, ImportEntry[]>> {
  const { files, results } = run;
  const errors: string[] = [];
  const rowsByFile = files.map(() => [] as (string | null)[][]);
  files.forEach((f, i) => {
    for (const fill of results[i].fills) {
      const venueId = venueIdFor(req.accountMap, fill.senderCompId);
      const ok = parseId(venueId);
      if (!ok.ok) errors.push(`${f.name}:${fill.line}: venue id (SenderCompID 49 '${fill.senderCompId}'): ${ok.message}`);
      rowsByFile[i].push([fill.venueTimeLocal, fill.venueTimezone, venueId, fill.venueFillId, fill.orderId, fill.instrumentId, fill.side, fill.fillQty, fill.price, fill.priceCurrency, String(fill.venueSeq), f.fileId]);
    }
  });
  if (errors.length) throw new InputError({ message: `nothing imported:\n  ${errors.join('\n  ')}` });
  const dir = await datasetDir(req.out, 'venue_fills');
  const columns = datasetSpec('venue_fills').columns.map((c) => c.name);
  const entries: ImportEntry[] = [];
  for (let i = 0; i < files.length; i++) {
    const f = files[i];
    const name = `import-fix-${f.sha256.slice(0, 16)}.csv`;
    await writeAtomic(join(dir, name), csvText(columns, rowsByFile[i]));
    run.outputs.push(`venue_fills/${name}`);
    const byVenue: Record<string, number> = {};
    for (const r of rowsByFile[i]) byVenue[r[2]!] = (byVenue[r[2]!] ?? 0) + 1;
    const entry = fileEntry(f, req, results[i], run.checks.get(i)!, run.findings.get(i)!, [`venue_fills/${name}`]);
    entries.push({ ...entry, fills: { written: rowsByFile[i].length, by_venue: byVenue, venue_seq: 'position among the fills of one venue in this log (1, 2, …), not MsgSeqNum' } });
    run.summaries.push(summaryOf(req.format, f, results[i], run.checks.get(i)!, run.findings.get(i)!, { statements_written: 0, statements_unwritten: 0, lines_written: 0, fills_written: rowsByFile[i].length }));
  }
  return new Map([['venue_fills', entries]]);
}

/** Bank formats: `bank_statements` and `bank_statement_lines` CSVs per file, after every statement is mapped; returns the report entries. */
async function writeStatements(req: ImportRequest, run: ImportRun): Promise<Map<string, ImportEntry[]>> {
  const { files, results } = run;
  const finals = await mapStatements(req, run);
  const stmtCols = datasetSpec('bank_statements').columns.map((c) => c.name);
  const lineCols = datasetSpec('bank_statement_lines').columns.map((c) => c.name);
  const stmtDir = await datasetDir(req.out, 'bank_statements');
  const lineDir = await datasetDir(req.out, 'bank_statement_lines');
  const stmtEntries: ImportEntry[] = [];
  for (let i = 0; i < files.length; i++) {
    const f = files[i];
    const mine = finals.filter((s) => s.parsed.fileIndex === i);
    const written = mine.filter((s) => s.unwritten.length === 0);
    const stmtRows = written.map((s) => [
      s.businessDate, s.timezone, s.cutoff, s.statementId, s.bankId, s.accountId, s.parsed.currency, s.seq!.toString(),
      s.parsed.opening!.amountMinor.toString(), s.parsed.closing!.amountMinor.toString(), String(s.parsed.complete), f.fileId,
    ]);
    const lineRows = written.flatMap((s) => s.lineRows.map((l) => [s.statementId, l.lineId, l.amount.toString(), l.valueDate, l.reference]));
    const base = `import-${req.format}-${f.sha256.slice(0, 16)}.csv`;
    await writeAtomic(join(stmtDir, base), csvText(stmtCols, stmtRows));
    await writeAtomic(join(lineDir, base), csvText(lineCols, lineRows));
    const outs = [`bank_statements/${base}`, `bank_statement_lines/${base}`];
    run.outputs.push(...outs);
    for (const s of mine) {
      if (s.unwritten.length) run.findings.get(i)!.push({ check: 'statement_not_written', scope: scopeOf(s), detail: s.unwritten.join('; ') });
    }
    const entry = fileEntry(f, req, results[i], run.checks.get(i)!, run.findings.get(i)!, outs);
    stmtEntries.push({ ...entry, statements: mine.map((s) => statementReport(s, files)) });
    run.summaries.push(summaryOf(req.format, f, results[i], run.checks.get(i)!, run.findings.get(i)!, {
      statements_written: written.length, statements_unwritten: mine.length - written.length, lines_written: lineRows.length, fills_written: 0,
    }));
  }
  return new Map(BANK_DATASETS.map((ds) => [ds, stmtEntries]));
}

/**
 * Joins pages across files, maps each statement (account, calendar, bank, sequence) and checks the
 * chain between statements. Throws ConfigError for missing settings, InputError for values that
 * cannot be written or a statement id read twice or already written by another provider file.
 */
async function mapStatements(req: ImportRequest, run: ImportRun): Promise<FinalStatement[]> {
  const { files } = run;
  const addCheck = (i: number, c: ControlCheck) => run.checks.get(i)!.push(c);
  const addFinding = (i: number, f: Finding) => run.findings.get(i)!.push(f);
  const joined = joinPages(run.results.flatMap((r) => r.statements));
  for (const [i, cs] of joined.checks) for (const c of cs) addCheck(i, c);
  for (const [i, fs] of joined.findings) for (const f of fs) addFinding(i, f);
  const errors: string[] = [];
  const settingErrors: SettingError[] = [];
  const finals = joined.statements.map((st) => finalize(st, req, files, settingErrors, errors, addFinding));
  if (settingErrors.length) throw new ConfigError(`nothing imported:\n  ${settingErrorLines(settingErrors).join('\n  ')}`);
  if (errors.length) throw new InputError({ message: `nothing imported:\n  ${[...new Set(errors)].join('\n  ')}` });
  assignSequences(finals);
  chainChecks(finals, addCheck);
  // Ids must be unique within the command and not already written by another provider file.
  const ids = new Map<string, FinalStatement>();
  for (const s of finals) {
    if (s.unwritten.length || s.statementId === null) continue;
    const prior = ids.get(s.statementId);
    if (prior) errors.push(`statement_id ${s.statementId} is read twice (${files[prior.parsed.fileIndex].name} and ${files[s.parsed.fileIndex].name})`);
    ids.set(s.statementId, s);
  }
  for (const ds of BANK_DATASETS) {
    const existing = await readReport(join(req.out, ds, '_import_report.json'), ds);
    for (const e of existing.imports) {
      if (files.some((f) => f.sha256 === e.file.sha256 && e.format === req.format)) continue;
      for (const st of (e.statements as { statement_id?: string; written?: boolean }[] | undefined) ?? []) {
        if (st.written && st.statement_id && ids.has(st.statement_id)) {
          errors.push(`statement_id ${st.statement_id} was already imported into ${ds} from ${e.file.name} (sha256 ${e.file.sha256}); remove that import's CSV files and report entry first`);
        }
      }
    }
  }
  if (errors.length) throw new InputError({ message: `nothing imported:\n  ${[...new Set(errors)].join('\n  ')}` });
  return finals;
}

/** A setting an import lacks for one statement: the file, the statement, and what to give. */
interface SettingError { readonly file: string; readonly statement: string; readonly problem: string }

/**
 * One line per file and missing setting, however many statements lack it (a file of 20 statements
 * without a bank is one line with a count, not 20): `f.sta: 20 statements (S-1 … S-20): …`.
 */
function settingErrorLines(errors: readonly SettingError[]): string[] {
  const groups = new Map<string, SettingError[]>();
  for (const e of errors) groups.set(`${e.file}\u0000${e.problem}`, [...(groups.get(`${e.file}\u0000${e.problem}`) ?? []), e]);
  return [...groups.values()].map((g) => {
    const ids = [...new Set(g.map((e) => e.statement))];
    const which = ids.length === 1 ? `statement ${ids[0]}` : `${ids.length} statements (${ids.length <= 3 ? ids.join(', ') : `${ids[0]} … ${ids[ids.length - 1]}`})`;
    return `${g[0].file}: ${which}: ${g[0].problem}`;
  });
}

/** Maps one joined statement to our account, bank, calendar and line rows; records missing settings and bad ids. */
function finalize(st: ParsedStatement, req: ImportRequest, files: readonly ProviderFile[], settingErrors: SettingError[], errors: string[], addFinding: (i: number, f: Finding) => void): FinalStatement {
  const file = files[st.fileIndex];
  const entry = lookupAccount(req.accountMap, st.providerAccount, st.currency);
  const unwritten = [...st.unwritable];
  const accountId = entry?.account_id ?? st.providerAccount;
  const bankId = entry?.bank_id ?? req.bankId ?? st.bankIdFromFile;
  const timezone = entry?.timezone ?? req.timezone;
  const cutoff = entry?.cutoff ?? req.cutoff;
  const writable = unwritten.length === 0;
  const label = `${file.name}: statement ${st.statementId ?? '(no id)'} (account ${st.providerAccount ?? '?'})`;
  // Asked for even when the statement cannot be written: the operator who fixes the value should
  // not then meet the missing setting (a missing setting is exit 2, which outranks exit 1).
  {
    const statement = `${st.statementId ?? '(no id)'} (account ${st.providerAccount ?? '?'})`;
    if (!timezone || !cutoff) settingErrors.push({ file: file.name, statement, problem: 'no statement timezone and cutoff; give --timezone and --cutoff or an account map entry' });
    if (!bankId) settingErrors.push({ file: file.name, statement, problem: 'the file names no bank for this account; give --bank-id or bank_id in the account map' });
  }
  let businessDate = st.businessDate;
  if (businessDate === null && st.closing?.dateTime && timezone) businessDate = localDateOf(st.closing.dateTime, timezone);
  if (writable && businessDate === null) unwritten.push('no business date (the closing balance has no date)');
  const checkId = (v: string | null, what: string) => {
    if (!writable || v === null) return;
    const ok = parseId(v);
    if (!ok.ok) errors.push(`${label}: ${what} '${v}' cannot be a contract id: ${ok.message}`);
  };
  checkId(st.statementId, 'statement_id');
  checkId(accountId, 'account_id');
  checkId(bankId, 'bank_id');
  const lineRows = st.lines.map((l, n) => {
    let reference = l.reference;
    if (reference !== null && !parseId(reference).ok) {
      addFinding(st.fileIndex, { check: 'reference_not_representable', scope: `statement ${st.statementId} line ${n + 1}`, detail: `reference '${reference}' is not a contract id (${parseId(reference).ok ? '' : (parseId(reference) as { message: string }).message}); written empty`, line: l.line });
      reference = null;
    }
    return { lineId: String(n + 1), amount: l.amountMinor, valueDate: l.valueDate, reference };
  });
  return {
    parsed: st, statementId: st.statementId, accountId, bankId, timezone, cutoff, businessDate,
    seq: st.seq, seqSource: st.seq !== null ? st.seqSource : 'none', unwritten, lineRows,
  };
}

/**
 * Gives a sequence number to statements whose file carries none (BAI2, camt without
 * ElctrncSeqNb/LglSeqNb): the previous statement of the same bank and account in this import,
 * in business-date order, plus one, else 1. Stated in the report as derived.
 */
function assignSequences(finals: FinalStatement[]): void {
  const byAccount = new Map<string, FinalStatement[]>();
  for (const s of finals) {
    if (s.unwritten.length) continue;
    const k = `${s.bankId}|${s.accountId}`;
    byAccount.set(k, [...(byAccount.get(k) ?? []), s]);
  }
  for (const list of byAccount.values()) {
    const ordered = [...list].sort((a, b) => ((a.businessDate ?? '') < (b.businessDate ?? '') ? -1 : (a.businessDate ?? '') > (b.businessDate ?? '') ? 1 : 0));
    let prev: bigint | null = null;
    for (const s of ordered) {
      if (s.seq === null) {
        s.seq = prev === null ? 1n : prev + 1n;
        s.seqSource = prev === null ? 'derived: the file carries no sequence number; first statement of the account in this import' : 'derived: previous statement of the account in this import + 1';
      }
      prev = s.seq;
    }
  }
}

/** The statement chain: each statement's opening equals the previous statement's closing (same account and currency). */
function chainChecks(finals: FinalStatement[], addCheck: (i: number, c: ControlCheck) => void): void {
  const byAccount = new Map<string, FinalStatement[]>();
  for (const s of finals) {
    const p = s.parsed;
    if (!p.opening || !p.closing || !p.currency || p.opening.currency !== p.currency || p.closing.currency !== p.currency) continue;
    const k = `${s.accountId}|${p.currency}`;
    byAccount.set(k, [...(byAccount.get(k) ?? []), s]);
  }
  for (const list of byAccount.values()) {
    const ordered = [...list].sort((a, b) => ((a.businessDate ?? '') < (b.businessDate ?? '') ? -1 : (a.businessDate ?? '') > (b.businessDate ?? '') ? 1 : 0));
    for (let i = 1; i < ordered.length; i++) {
      const a = ordered[i - 1], b = ordered[i];
      const ccy = b.parsed.currency!;
      const exp = currencyExponent(ccy, { file: '' });
      addCheck(b.parsed.fileIndex, tieCheck(`${b.parsed.format}.statement_chain`, `statement ${a.statementId} → ${b.statementId}`, `${ccy} minor units (exponent ${exp})`, b.parsed.opening!.amountMinor, a.parsed.closing!.amountMinor, {
        detail: `opening ${b.parsed.opening!.code} ${minorToMajorText(b.parsed.opening!.amountMinor, exp)} of ${b.statementId} against closing ${a.parsed.closing!.code} ${minorToMajorText(a.parsed.closing!.amountMinor, exp)} of ${a.statementId}`,
      }));
    }
  }
}

/** How the report names a statement: its id, else where it starts in the file. */
function scopeOf(s: FinalStatement): string {
  const p = s.parsed;
  if (s.statementId) return `statement ${s.statementId}${p.providerAccount ? ` (account ${p.providerAccount})` : ''}`;
  return `${p.page?.label ?? 'statement'} (no statement id${p.providerAccount ? `, account ${p.providerAccount}` : ''})`;
}

function balanceReport(b: ParsedStatement['opening']) {
  return b ? { code: b.code, amount_minor: b.amountMinor.toString(), currency: b.currency, text: b.text, date: b.date ?? b.dateTime ?? null } : null;
}

function statementReport(s: FinalStatement, files: readonly ProviderFile[]): Record<string, unknown> {
  const p = s.parsed;
  // Pages name their file, not its position in the command, so the report does not depend on argument order.
  const pages = p.extra.pages as { file_index: number }[] | undefined;
  const detail = pages ? { ...p.extra, pages: pages.map(({ file_index, ...rest }) => ({ file: files[file_index].name, ...rest })) } : p.extra;
  const sum = p.lines.reduce((a, l) => a + l.amountMinor, 0n);
  return {
    statement_id: s.statementId,
    written: s.unwritten.length === 0,
    ...(s.unwritten.length ? { not_written_because: s.unwritten } : {}),
    provider_account: p.providerAccount,
    account_id: s.accountId,
    bank_id: s.bankId,
    currency: p.currency,
    business_date: s.businessDate,
    timezone: s.timezone,
    cutoff_local: s.cutoff,
    statement_seq: s.seq?.toString() ?? null,
    statement_seq_source: s.seqSource,
    opening: balanceReport(p.opening),
    closing: balanceReport(p.closing),
    lines: p.lines.length,
    lines_sum_minor: sum.toString(),
    lines_credit_minor: p.lines.filter((l) => l.amountMinor > 0n).reduce((a, l) => a + l.amountMinor, 0n).toString(),
    lines_debit_minor: p.lines.filter((l) => l.amountMinor < 0n).reduce((a, l) => a - l.amountMinor, 0n).toString(),
    complete: p.complete,
    ...(p.incompleteReasons.length ? { incomplete_because: p.incompleteReasons } : {}),
    detail,
  };
}

function mismatchesOf(checks: readonly ControlCheck[], findings: readonly Finding[]): Record<string, unknown>[] {
  return [...checks.filter((c) => c.status === 'mismatch').map((c) => ({ ...c })), ...findings.map((f) => ({ ...f }))];
}

function fileEntry(f: ProviderFile, req: ImportRequest, r: ParseResult, checks: readonly ControlCheck[], findings: readonly Finding[], outputs: string[]): ImportEntry {
  return {
    format: req.format,
    format_version: r.formatVersion,
    file: { name: f.name, sha256: f.sha256, size_bytes: f.bytes.length },
    file_id: f.fileId,
    settings: {
      timezone: req.timezone, cutoff_local: req.cutoff, bank_id: req.bankId,
      account_map: req.accountMap.sha256 ? { name: basename(req.accountMap.path!), sha256: req.accountMap.sha256 } : null,
    },
    outputs,
    counts: r.counts,
    control_totals: checks,
    mismatches: mismatchesOf(checks, findings),
    notes: r.notes,
  };
}

function summaryOf(format: ImportFormat, f: ProviderFile, r: ParseResult, checks: readonly ControlCheck[], findings: readonly Finding[], n: Pick<FileSummary, 'statements_written' | 'statements_unwritten' | 'lines_written' | 'fills_written'>): FileSummary {
  return {
    name: f.name, sha256: f.sha256, format: format, format_version: r.formatVersion, ...n,
    control_totals: {
      ok: checks.filter((c) => c.status === 'ok').length,
      mismatch: checks.filter((c) => c.status === 'mismatch').length,
      not_checked: checks.filter((c) => c.status === 'not_checked').length,
    },
    mismatches: mismatchesOf(checks, findings),
  };
}

/** Writes `_watermark.json` in each dataset folder, never moving an existing later watermark back. */
async function writeWatermarks(out: string, datasets: string[], watermark: string): Promise<Record<string, string>> {
  const wanted = parseTimestamp(watermark);
  if (!wanted.ok) throw new ConfigError(`--watermark: ${wanted.message}`);
  const result: Record<string, string> = {};
  for (const ds of datasets) {
    const path = join(out, ds, '_watermark.json');
    let current: bigint | null = null;
    let currentText = '';
    try {
      const doc = JSON.parse(await readFile(path, 'utf8')) as { watermark?: unknown };
      if (typeof doc.watermark === 'string') { const t = parseTimestamp(doc.watermark); if (t.ok) { current = t.value; currentText = doc.watermark; } }
    } catch { /* absent or unreadable: replaced */ }
    if (current !== null && current > wanted.value) { result[ds] = `${currentText} (kept: later than --watermark)`; continue; }
    await writeAtomic(path, `${JSON.stringify({ watermark, complete: true })}\n`);
    result[ds] = watermark;
  }
  return result;
}

/** Validates `--timezone` and `--cutoff` texts (ConfigError when bad). */
export function checkCalendar(timezone: string | undefined, cutoff: string | undefined): void {
  if (timezone !== undefined && !ianaZone(timezone)) throw new ConfigError(`--timezone '${timezone}' is not an IANA time zone (Area/City or UTC)`);
  if (cutoff !== undefined && !parseCutoff(cutoff).ok) throw new ConfigError(`--cutoff '${cutoff}' is not HH:MM or HH:MM:SS (00:00:00–23:59:59)`);
}

