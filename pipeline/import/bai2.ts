/**
 * BAI2 cash-management balance reports → one statement per account record (03 … 49).
 *
 * Records: 01 file header, 02 group header, 03 account identifier and summaries, 16 transaction
 * detail, 88 continuation, 49 account trailer, 98 group trailer, 99 file trailer. A physical
 * line is one record; an 88 continues the record before it (its fields follow on). Amounts carry
 * no decimal point: they are already minor units at the currency's exponent ("implied decimals
 * by currency"); the account's currency is its 03 currency, else the group's, else USD.
 *
 * Control totals, all recomputed from the records: 49 (sum of every amount of the account's 03
 * and 16 records, number of records 03…49), 98 (sum of the account totals, number of accounts,
 * records 02…98), 99 (sum of the group totals, number of groups, records 01…99), and per
 * account the 100/400 summaries (total credits and debits, amount and item count) against the
 * 16 details, and opening + credits − debits = closing.
 *
 * Detail signs come from the type code (Appendix A ranges): 100–399 and 920–959 credits (+),
 * 400–699 and 960–999 debits (−); any other code on a 16 record cannot be signed and is refused.
 */
import { currencyExponent, ProviderValueError, yymmddToDate, type Where } from './amounts.js';
import { decodeText } from './mt940.js';
import { emptyResult, tieCheck, type ParsedBalance, type ParsedLine, type ParsedStatement, type ParseResult, type ProviderFile } from './model.js';

interface LogicalRecord {
  readonly code: string;
  text: string;
  readonly line: number;
  physical: number;
}

interface Summary {
  readonly type: string;
  readonly amount: bigint | null;
  readonly amountText: string;
  readonly count: bigint | null;
}

interface Account {
  readonly line: number;
  readonly number: string;
  readonly currency: string;
  readonly currencyDefaulted: boolean;
  readonly summaries: Summary[];
  readonly details: ParsedLine[];
  readonly detailAmounts: bigint[];
  records: number;
  amountTotal: bigint;
  credits: { n: bigint; sum: bigint };
  debits: { n: bigint; sum: bigint };
  trailer?: { total: bigint; records: bigint; line: number };
}

interface Group {
  readonly line: number;
  readonly originator: string;
  readonly status: string;
  readonly asOfDate: string;
  readonly asOfTime: string;
  readonly currency: string;
  readonly modifier: string;
  readonly accounts: Account[];
  records: number;
  trailer?: { total: bigint; accounts: bigint; records: bigint; line: number };
}

const SIGNED_RE = /^[+-]?[0-9]+$/;
const UNSIGNED_RE = /^[0-9]+$/;

/** Sign of a detail type code: +1 credit, −1 debit, 0 when the code carries no direction. */
export function bai2TypeSign(code: string): 1n | -1n | 0n {
  if (!/^[0-9]{3}$/.test(code)) return 0n;
  const n = Number(code);
  if ((n >= 100 && n <= 399) || (n >= 920 && n <= 959)) return 1n;
  if ((n >= 400 && n <= 699) || n >= 960) return -1n;
  return 0n;
}

/** A cursor over the comma-separated fields of one record. */
class Fields {
  private i = 0;
  constructor(private readonly parts: string[], private readonly where: Where, private readonly what: string) {}
  get remaining(): number { return this.parts.length - this.i; }
  next(name: string): string {
    if (this.i >= this.parts.length) throw new ProviderValueError(this.where.file, this.where.line, 'bai2_field', `${this.what}: field ${name} is missing`);
    return this.parts[this.i++];
  }
  optional(): string { return this.i < this.parts.length ? this.parts[this.i++] : ''; }
  rest(): string { const r = this.parts.slice(this.i).join(','); this.i = this.parts.length; return r; }
}

function signedAmount(text: string, where: Where, what: string): bigint {
  if (!SIGNED_RE.test(text)) throw new ProviderValueError(where.file, where.line, 'bai2_amount', `${what} '${text}' is not an amount (optional sign, digits, no decimal point)`);
  return BigInt(text);
}

function countOf(text: string, where: Where, what: string): bigint | null {
  if (text === '') return null;
  if (!UNSIGNED_RE.test(text)) throw new ProviderValueError(where.file, where.line, 'bai2_count', `${what} '${text}' is not a count`);
  return BigInt(text);
}

/** Reads a funds type and its extra fields; returns the value date of a `V` funds type. */
function fundsType(f: Fields, where: Where): { code: string; valueDate: string | null } {
  const code = f.optional();
  switch (code) {
    case '': case 'Z': case '0': case '1': case '2': return { code, valueDate: null };
    case 'V': {
      const d = f.next('funds value date');
      f.next('funds value time');
      return { code, valueDate: d === '' ? null : yymmddToDate(d, where, 'funds type V value date') };
    }
    case 'S': {
      for (const n of ['immediate', 'one-day', 'two-or-more-day']) { const a = f.next(`${n} availability`); if (a !== '') signedAmount(a, where, `${n} availability`); }
      return { code, valueDate: null };
    }
    case 'D': {
      const n = countOf(f.next('distribution count'), where, 'distribution count') ?? 0n;
      for (let i = 0n; i < n; i++) { countOf(f.next('distribution days'), where, 'distribution days'); signedAmount(f.next('distribution amount'), where, 'distribution amount'); }
      return { code, valueDate: null };
    }
    default:
      throw new ProviderValueError(where.file, where.line, 'bai2_funds_type', `funds type '${code}' is not one of Z, 0, 1, 2, V, S, D`);
  }
}

interface FileHeader { readonly sender: string; readonly receiver: string; readonly date: string; readonly time: string; readonly fileId: string; readonly line: number }
interface FileTrailer { readonly total: bigint; readonly groups: bigint; readonly records: bigint; readonly line: number }

/** What the records read so far have built: the file header, the groups, the open group and account. */
interface Bai2Parse {
  readonly file: ProviderFile;
  readonly result: ParseResult;
  header: FileHeader | null;
  readonly groups: Group[];
  group: Group | null;
  account: Account | null;
  fileRecords: number;
  fileTrailer: FileTrailer | null;
}

/**
 * Parses one BAI2 file into one statement per account and every control total the format
 * carries. Throws ProviderValueError (exit 3) for a record that cannot be read: an unknown record
 * code, a bad amount, date or funds type, an unknown currency, or a 16 record whose type code
 * gives no direction. A malformed 88 record inside a detail's text is kept as a finding.
 */
export function parseBai2(file: ProviderFile, fileIndex: number): ParseResult {
  const { text, encoding } = decodeText(file.bytes);
  const result = emptyResult('BAI2');
  if (encoding !== 'utf-8') result.notes.push('the file is not valid UTF-8; read as ISO-8859-1');
  const p: Bai2Parse = { file, result, header: null, groups: [], group: null, account: null, fileRecords: 0, fileTrailer: null };
  for (const r of logicalRecords(file, text, result)) readRecord(p, r);
  if (!p.header) result.findings.push({ check: 'bai2.structure', scope: 'file', detail: 'no file header (01)' });
  if (!p.fileTrailer) result.findings.push({ check: 'bai2.structure', scope: 'file', detail: 'no file trailer (99): the file may be truncated' });
  result.counts.records = p.fileRecords;
  result.counts.groups = p.groups.length;
  result.counts.accounts = p.groups.reduce((n, g) => n + g.accounts.length, 0);
  result.counts.details = p.groups.reduce((n, g) => n + g.accounts.reduce((m, a) => m + a.details.length, 0), 0);
  checkTotals(p, fileIndex);
  return result;
}

/**
 * Physical lines → logical records: an 88 record is joined onto the record before it, trailing
 * spaces are cut and blank lines skipped (both noted). A malformed 88 after a 16 is a finding.
 */
function logicalRecords(file: ProviderFile, text: string, result: ParseResult): LogicalRecord[] {
  const physical = text.split(/\r\n|\n|\r/);
  const records: LogicalRecord[] = [];
  let trailingSpaces = 0;
  let blank = 0;
  for (let i = 0; i < physical.length; i++) {
    const raw = physical[i];
    const line = raw.replace(/[ \t]+$/, '');
    if (line !== raw) trailingSpaces += 1;
    if (line === '') { if (i < physical.length - 1 || raw !== '') blank += 1; continue; }
    const m = /^([0-9]{2})(.?)/.exec(line);
    if (!m || (m[2] !== ',' && m[2] !== '')) {
      const prev = records[records.length - 1];
      if (line.startsWith('88') && prev && prev.code === '16') {
        // Counted as a record (the bank counted it) but not read into any field: kept verbatim.
        prev.physical += 1;
        result.findings.push({ check: 'bai2.malformed_record', scope: `line ${i + 1}`, detail: `continuation record '${line}' does not start with '88,'; counted as a record of the detail at line ${prev.line}, its content not read`, line: i + 1 });
        continue;
      }
      throw new ProviderValueError(file.name, i + 1, 'bai2_record', `'${line.slice(0, 40)}' is not a BAI2 record (two-digit code and a comma)`);
    }
    const body = line.slice(3);
    if (m[1] === '88') {
      const prev = records[records.length - 1];
      if (!prev) throw new ProviderValueError(file.name, i + 1, 'bai2_record', 'continuation record 88 without a record before it');
      prev.text = `${prev.text.endsWith('/') ? prev.text.slice(0, -1) : prev.text},${body}`;
      prev.physical += 1;
      continue;
    }
    records.push({ code: m[1], text: body, line: i + 1, physical: 1 });
  }
  if (trailingSpaces) result.notes.push(`${trailingSpaces} record(s) end with trailing spaces after the record; ignored`);
  if (blank) result.notes.push(`${blank} blank line(s) skipped`);
  return records;
}

const where = (p: Bai2Parse, r: LogicalRecord): Where => ({ file: p.file.name, line: r.line });
const structural = (p: Bai2Parse, r: LogicalRecord, detail: string) => p.result.findings.push({ check: 'bai2.structure', scope: `line ${r.line}`, detail, line: r.line });
/** The record's fields up to its '/' terminator. */
const plainFields = (p: Bai2Parse, r: LogicalRecord) => new Fields((r.text.includes('/') ? r.text.slice(0, r.text.indexOf('/')) : r.text).split(','), where(p, r), `record ${r.code}`);

/** Counts the record into its file, group and account, then reads it by its code. */
function readRecord(p: Bai2Parse, r: LogicalRecord): void {
  p.fileRecords += r.physical;
  if (p.group) p.group.records += r.physical;
  if (p.account && !p.account.trailer && r.code !== '03') p.account.records += r.physical;
  const reader = RECORD_READERS[r.code];
  if (!reader) throw new ProviderValueError(p.file.name, r.line, 'bai2_record', `record code '${r.code}' is not a BAI2 record (01, 02, 03, 16, 88, 49, 98, 99)`);
  reader(p, r);
}

const RECORD_READERS: Readonly<Record<string, (p: Bai2Parse, r: LogicalRecord) => void>> = {
  '01': readFileHeader,
  '02': readGroupHeader,
  '03': readAccount,
  '16': readDetail,
  '49': readAccountTrailer,
  '98': readGroupTrailer,
  '99': readFileTrailer,
};

function readFileHeader(p: Bai2Parse, r: LogicalRecord): void {
  if (p.header) structural(p, r, 'a second file header (01)');
  const f = plainFields(p, r);
  p.header = { sender: f.next('sender'), receiver: f.next('receiver'), date: f.next('creation date'), time: f.next('creation time'), fileId: f.next('file id'), line: r.line };
  f.optional(); f.optional();
  const version = f.optional();
  if (version !== '2') p.result.notes.push(`file header version '${version}' (BAI2 is '2')`);
  yymmddToDate(p.header.date, where(p, r), 'file creation date');
  p.fileRecords = r.physical;
}

function readGroupHeader(p: Bai2Parse, r: LogicalRecord): void {
  if (p.group) structural(p, r, `group at line ${p.group.line} has no trailer (98)`);
  const f = plainFields(p, r);
  f.next('ultimate receiver');
  const originator = f.next('originator');
  const status = f.next('group status');
  const asOf = yymmddToDate(f.next('as-of date'), where(p, r), 'as-of date');
  const asOfTime = f.optional();
  const currency = f.optional();
  const modifier = f.optional();
  if (currency !== '') currencyExponent(currency, where(p, r));
  p.group = { line: r.line, originator, status, asOfDate: asOf, asOfTime, currency, modifier, accounts: [], records: r.physical };
  p.groups.push(p.group);
  p.account = null;
}

/** 03: the account, its currency and its summaries (type code, amount, item count, funds type). */
function readAccount(p: Bai2Parse, r: LogicalRecord): void {
  const group = p.group;
  if (!group) throw new ProviderValueError(p.file.name, r.line, 'bai2_structure', 'account record (03) outside a group');
  if (p.account && !p.account.trailer) structural(p, r, `account at line ${p.account.line} has no trailer (49)`);
  const f = plainFields(p, r);
  const number = f.next('account number');
  const ccy = f.optional();
  const currency = ccy || group.currency || 'USD';
  currencyExponent(currency, where(p, r));
  const account: Account = {
    line: r.line, number, currency, currencyDefaulted: !ccy && !group.currency, summaries: [], details: [], detailAmounts: [], records: r.physical,
    amountTotal: 0n, credits: { n: 0n, sum: 0n }, debits: { n: 0n, sum: 0n },
  };
  p.account = account;
  group.accounts.push(account);
  while (f.remaining > 0) {
    const type = f.optional();
    if (type === '' && f.remaining <= 3) break; // trailing empty fields
    const amountText = f.optional();
    const countText = f.optional();
    const amount = amountText === '' ? null : signedAmount(amountText, where(p, r), `summary ${type} amount`);
    const count = countOf(countText, where(p, r), `summary ${type} item count`);
    fundsType(f, where(p, r));
    if (type === '' && amount === null) continue; // a defaulted summary group
    if (!/^[0-9]{3}$/.test(type)) throw new ProviderValueError(p.file.name, r.line, 'bai2_type_code', `summary type code '${type}' is not three digits`);
    account.summaries.push({ type, amount, amountText, count });
    if (amount !== null) account.amountTotal += amount;
  }
}

/** 16: one statement line, signed by its type code; its text runs to the end of the record. */
function readDetail(p: Bai2Parse, r: LogicalRecord): void {
  const account = p.account;
  if (!account || account.trailer) throw new ProviderValueError(p.file.name, r.line, 'bai2_structure', 'transaction detail (16) outside an account');
  const t = r.text.endsWith('/') ? r.text.slice(0, -1) : r.text;
  const f = new Fields(t.split(','), where(p, r), 'record 16');
  const type = f.next('type code');
  const amountText = f.next('amount');
  if (!UNSIGNED_RE.test(amountText)) throw new ProviderValueError(p.file.name, r.line, 'bai2_amount', `detail amount '${amountText}' is not an unsigned amount (digits, no decimal point)`);
  const sign = bai2TypeSign(type);
  if (sign === 0n) throw new ProviderValueError(p.file.name, r.line, 'bai2_type_code', `detail type code '${type}' is neither a credit (100–399, 920–959) nor a debit (400–699, 960–999)`);
  const funds = fundsType(f, where(p, r));
  const bankRef = f.optional().replace(/ +$/, '');
  const custRef = f.optional().replace(/ +$/, '');
  const detailText = f.rest().replace(/ +$/, '');
  const amount = BigInt(amountText);
  account.amountTotal += amount;
  account.detailAmounts.push(amount);
  if (sign > 0n) { account.credits.n += 1n; account.credits.sum += amount; } else { account.debits.n += 1n; account.debits.sum += amount; }
  const meta: Record<string, string> = { type_code: type };
  if (bankRef) meta.bank_ref = bankRef;
  if (detailText) meta.text = detailText;
  if (funds.code) meta.funds_type = funds.code;
  account.details.push({ amountMinor: sign * amount, currency: account.currency, valueDate: funds.valueDate ?? p.group!.asOfDate, reference: custRef === '' ? null : custRef, line: r.line, meta });
}

function readAccountTrailer(p: Bai2Parse, r: LogicalRecord): void {
  const account = p.account;
  if (!account || account.trailer) throw new ProviderValueError(p.file.name, r.line, 'bai2_structure', 'account trailer (49) without an account');
  const f = plainFields(p, r);
  account.trailer = { total: signedAmount(f.next('account control total'), where(p, r), 'account control total'), records: countOf(f.next('number of records'), where(p, r), 'number of records') ?? -1n, line: r.line };
}

function readGroupTrailer(p: Bai2Parse, r: LogicalRecord): void {
  const group = p.group;
  if (!group) throw new ProviderValueError(p.file.name, r.line, 'bai2_structure', 'group trailer (98) without a group');
  if (p.account && !p.account.trailer) structural(p, r, `account at line ${p.account.line} has no trailer (49)`);
  const f = plainFields(p, r);
  group.trailer = {
    total: signedAmount(f.next('group control total'), where(p, r), 'group control total'),
    accounts: countOf(f.next('number of accounts'), where(p, r), 'number of accounts') ?? -1n,
    records: countOf(f.next('number of records'), where(p, r), 'number of records') ?? -1n,
    line: r.line,
  };
  p.group = null;
  p.account = null;
}

function readFileTrailer(p: Bai2Parse, r: LogicalRecord): void {
  if (p.group) structural(p, r, `group at line ${p.group.line} has no trailer (98)`);
  const f = plainFields(p, r);
  p.fileTrailer = {
    total: signedAmount(f.next('file control total'), where(p, r), 'file control total'),
    groups: countOf(f.next('number of groups'), where(p, r), 'number of groups') ?? -1n,
    records: countOf(f.next('number of records'), where(p, r), 'number of records') ?? -1n,
    line: r.line,
  };
  p.group = null;
  p.account = null;
}

/** Control totals, innermost first: per account (49, 100/400 summaries, roll-forward), per group (98), the file (99). */
function checkTotals(p: Bai2Parse, fileIndex: number): void {
  const { result } = p;
  let fileTotal = 0n;
  const seenAccounts = new Map<string, number>();
  for (const g of p.groups) {
    let groupTotal = 0n;
    for (const a of g.accounts) {
      groupTotal += a.amountTotal;
      checkAccount(a, result);
      const occurrence = (seenAccounts.get(a.number) ?? 0) + 1;
      seenAccounts.set(a.number, occurrence);
      result.statements.push(accountStatement(p.file, fileIndex, p.header, g, a, occurrence, result));
    }
    fileTotal += groupTotal;
    const gscope = `group ${g.originator} as of ${g.asOfDate} (line ${g.line})`;
    if (g.trailer) {
      result.checks.push(tieCheck('bai2.98.group_control_total', gscope, 'minor units', g.trailer.total, groupTotal, { line: g.trailer.line }));
      result.checks.push(tieCheck('bai2.98.number_of_accounts', gscope, 'accounts', g.trailer.accounts, BigInt(g.accounts.length), { line: g.trailer.line }));
      result.checks.push(tieCheck('bai2.98.number_of_records', gscope, 'records', g.trailer.records, BigInt(g.records), { line: g.trailer.line }));
    } else {
      result.findings.push({ check: 'bai2.structure', scope: gscope, detail: 'group has no trailer (98)' });
    }
  }
  const t = p.fileTrailer;
  if (t) {
    result.checks.push(tieCheck('bai2.99.file_control_total', 'file', 'minor units', t.total, fileTotal, { line: t.line }));
    result.checks.push(tieCheck('bai2.99.number_of_groups', 'file', 'groups', t.groups, BigInt(p.groups.length), { line: t.line }));
    result.checks.push(tieCheck('bai2.99.number_of_records', 'file', 'records', t.records, BigInt(p.fileRecords), { line: t.line }));
  }
}

/** The account's 49 trailer and its 100 (credits) and 400 (debits) summaries against its details. */
function checkAccount(a: Account, result: ParseResult): void {
  const scope = `account ${a.number} (line ${a.line})`;
  if (a.trailer) {
    result.checks.push(tieCheck('bai2.49.account_control_total', scope, `${a.currency} minor units`, a.trailer.total, a.amountTotal, { line: a.trailer.line }));
    result.checks.push(tieCheck('bai2.49.number_of_records', scope, 'records', a.trailer.records, BigInt(a.records), { line: a.trailer.line }));
  }
  for (const [code, side, what] of [['100', a.credits, 'credits'], ['400', a.debits, 'debits']] as const) {
    const s = a.summaries.find((x) => x.type === code);
    if (!s) continue;
    if (s.amount !== null) result.checks.push(tieCheck(`bai2.03.${code}.total_${what}`, scope, `${a.currency} minor units`, s.amount, side.sum, { line: a.line }));
    if (s.count !== null) result.checks.push(tieCheck(`bai2.03.${code}.${what}_item_count`, scope, 'count', s.count, side.n, { line: a.line }));
  }
}

const INTERIM_MODIFIERS: Record<string, string> = { '1': 'interim previous-day data', '3': 'interim same-day data' };

function accountStatement(
  file: ProviderFile, fileIndex: number, header: { sender: string; date: string; time: string; fileId: string } | null, g: Group, a: Account, occurrence: number, result: ParseResult,
): ParsedStatement {
  const notes: string[] = [];
  const unwritable: string[] = [];
  const incomplete: string[] = [];
  const bal = (codes: string[]): ParsedBalance | null => {
    for (const c of codes) {
      const s = a.summaries.find((x) => x.type === c && x.amount !== null);
      if (s) return { code: c, amountMinor: s.amount!, currency: a.currency, text: s.amountText, date: g.asOfDate, line: a.line };
    }
    return null;
  };
  const opening = bal(['010', '040']);
  const closing = bal(['015', '045']);
  if (opening?.code === '040') notes.push('opening balance from 040 (opening available): the account has no 010 (opening ledger)');
  if (closing?.code === '045') notes.push('closing balance from 045 (closing available): the account has no 015 (closing ledger)');
  if (!opening) unwritable.push('no opening balance (010 opening ledger or 040 opening available)');
  if (!closing) unwritable.push('no closing balance (015 closing ledger or 045 closing available)');
  if (!a.trailer) unwritable.push('no account trailer (49): the account may be truncated');
  if (a.currencyDefaulted) notes.push('no currency on the 03 or 02 record: USD (the BAI2 default)');
  if (g.status === '2') unwritable.push('group status 2 (deletion of a previously sent group)');
  if (g.status === '4') unwritable.push('group status 4 (test only)');
  if (g.status === '3') notes.push('group status 3 (correction of a previously sent group)');
  if (INTERIM_MODIFIERS[g.modifier]) incomplete.push(`as-of date modifier ${g.modifier} (${INTERIM_MODIFIERS[g.modifier]})`);
  if (opening && closing) {
    const sum = a.details.reduce((s, l) => s + l.amountMinor, 0n);
    result.checks.push(tieCheck('bai2.balance_rollforward', `account ${a.number} (line ${a.line})`, `${a.currency} minor units`, closing.amountMinor, opening.amountMinor + sum, {
      detail: `${opening.code} ${opening.amountMinor} + details ${sum} against ${closing.code} ${closing.amountMinor}`,
      line: a.line,
    }));
  }
  const fileKey = header ? `${header.sender}.${header.date}.${header.time}.${header.fileId}` : `file-${file.sha256.slice(0, 12)}`;
  return {
    format: 'bai2', fileIndex, statementId: `${a.number}/${g.asOfDate}/${fileKey}#${occurrence}`, providerAccount: a.number, bankIdFromFile: g.originator || null,
    currency: a.currency, opening, closing, businessDate: g.asOfDate, seq: null, seqSource: 'none', lines: a.details,
    complete: incomplete.length === 0, incompleteReasons: incomplete, unwritable,
    extra: {
      group: { originator: g.originator, status: g.status, as_of_date: g.asOfDate, as_of_time: g.asOfTime, as_of_modifier: g.modifier, line: g.line },
      summaries: a.summaries.map((s) => ({ type: s.type, amount_minor: s.amount?.toString() ?? null, item_count: s.count?.toString() ?? null })),
      notes,
    },
  };
}
