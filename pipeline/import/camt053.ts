/**
 * ISO 20022 camt.053 (BankToCustomerStatement, versions 001.02 to 001.08) → statement pages.
 *
 * Each `Stmt` element becomes one page (pagination from StmtPgntn, else the group header's
 * MsgPgntn); the orchestrator joins pages of one statement. Balances keep their codes (OPBD,
 * CLBD, PRCD, ITBD, OPAV, CLAV, FWAV…) and signs from CdtDbtInd (CRDT +, DBIT −). Each booked
 * entry (`Sts` BOOK) is one statement line signed by its own CdtDbtInd: a reversal (RvslInd
 * true) is booked in the direction its CdtDbtInd states, so no sign is flipped. Batch entries
 * stay one line (the amount that hit the account) and their details are checked against it.
 * TxsSummry totals (counts, sums, net) are recomputed over the entries of the same `Stmt`.
 */
import { child, children, parseXml, rawTextAt, textAt, type XmlElement } from './xml-tree.js';
import { currencyExponent, isoDate, majorPointToMinor, ProviderValueError, type Where } from './amounts.js';
import { emptyResult, tieCheck, type PageInfo, type ParsedBalance, type ParsedLine, type ParsedStatement, type ParseResult, type ProviderFile } from './model.js';

const NS_PREFIX = 'urn:iso:std:iso:20022:tech:xsd:camt.053.001.';
const SUPPORTED = ['02', '03', '04', '05', '06', '07', '08'];

/** Balance codes that open a statement (final) and close it (final); ITBD is the interim one between pages. */
const OPENING_FINAL = ['OPBD', 'PRCD'];
const CLOSING_FINAL = ['CLBD'];
const INTERIM = 'ITBD';

/**
 * Parses one camt.053 file into statement pages, TxsSummry and batch checks. Throws
 * ProviderValueError (exit 3) for XML that is not well-formed, an unsupported message version,
 * an unknown currency, an amount with more decimals than its currency allows, or a missing
 * mandatory element the rows need (amount, CdtDbtInd, statement id).
 */
export function parseCamt053(file: ProviderFile, fileIndex: number): ParseResult {
  let doc: XmlElement;
  try {
    doc = parseXml(new TextDecoder('utf-8', { fatal: true }).decode(file.bytes), file.name);
  } catch (e) {
    throw new ProviderValueError(file.name, undefined, 'xml_unreadable', `not a well-formed UTF-8 XML document: ${(e as Error).message}`);
  }
  if (doc.name !== 'Document' || !doc.uri.startsWith(NS_PREFIX)) {
    throw new ProviderValueError(file.name, doc.line, 'camt_namespace', `root element is {${doc.uri}}${doc.name}, not a camt.053 Document (${NS_PREFIX}NN)`);
  }
  const version = doc.uri.slice(NS_PREFIX.length);
  if (!SUPPORTED.includes(version)) throw new ProviderValueError(file.name, doc.line, 'camt_version', `camt.053.001.${version} is not supported (001.02 to 001.08)`);
  const result = emptyResult(`camt.053.001.${version}`);
  const msg = child(doc, 'BkToCstmrStmt');
  if (!msg) throw new ProviderValueError(file.name, doc.line, 'camt_structure', 'Document has no BkToCstmrStmt');
  const grp = child(msg, 'GrpHdr');
  const msgPage = child(grp, 'MsgPgntn');
  const msgId = textAt(grp, 'MsgId');
  result.counts.statements_in_file = 0;
  result.counts.entries = 0;
  result.counts.entries_not_booked = 0;
  for (const stmt of children(msg, 'Stmt')) {
    result.counts.statements_in_file += 1;
    result.statements.push(readStatement(file, fileIndex, stmt, msgPage, msgId, result));
  }
  if (result.counts.statements_in_file === 0) result.notes.push('the message holds no Stmt element');
  return result;
}

function where(file: ProviderFile, el: XmlElement | undefined): Where {
  return { file: file.name, line: el?.line };
}

function required(file: ProviderFile, el: XmlElement | undefined, what: string, ...path: string[]): string {
  const v = textAt(el, ...path);
  if (v === undefined || v === '') throw new ProviderValueError(file.name, el?.line, 'camt_missing', `${what} (${path.join('/')}) is missing`);
  return v;
}

function signOf(file: ProviderFile, el: XmlElement, what: string): 1n | -1n {
  const ind = required(file, el, `${what} credit/debit indicator`, 'CdtDbtInd');
  if (ind === 'CRDT') return 1n;
  if (ind === 'DBIT') return -1n;
  throw new ProviderValueError(file.name, el.line, 'camt_cdtdbtind', `${what} CdtDbtInd '${ind}' is neither CRDT nor DBIT`);
}

/** Reads an `Amt Ccy="…"` element into minor units of its currency. */
function amountOf(file: ProviderFile, el: XmlElement | undefined, what: string): { minor: bigint; currency: string; text: string } {
  const amt = child(el, 'Amt');
  if (!amt) throw new ProviderValueError(file.name, el?.line, 'camt_missing', `${what} has no Amt`);
  const currency = amt.attributes.Ccy;
  if (!currency) throw new ProviderValueError(file.name, amt.line, 'camt_missing', `${what} Amt has no Ccy attribute`);
  currencyExponent(currency, where(file, amt));
  const text = amt.text.replace(/[\t\n\r ]+/g, ' ').trim();
  return { minor: majorPointToMinor(text, currency, where(file, amt), `${what} amount`), currency, text };
}

function dateOf(file: ProviderFile, el: XmlElement | undefined, what: string): { date: string | null; dateTime?: string } {
  const d = textAt(el, 'Dt');
  if (d !== undefined) return { date: isoDate(d, where(file, el), what) };
  const dt = textAt(el, 'DtTm');
  if (dt !== undefined) {
    isoDate(dt.slice(0, 10), where(file, el), what);
    return { date: null, dateTime: dt };
  }
  return { date: null };
}

function readBalance(file: ProviderFile, bal: XmlElement): ParsedBalance {
  const code = textAt(bal, 'Tp', 'CdOrPrtry', 'Cd') ?? `Prtry:${textAt(bal, 'Tp', 'CdOrPrtry', 'Prtry') ?? '?'}`;
  const { minor, currency, text } = amountOf(file, bal, `balance ${code}`);
  const sign = signOf(file, bal, `balance ${code}`);
  const d = dateOf(file, child(bal, 'Dt'), `balance ${code} date`);
  return { code, amountMinor: sign * minor, currency, text, date: d.date, ...(d.dateTime ? { dateTime: d.dateTime } : {}), line: bal.line };
}

function entryStatus(ntry: XmlElement): string {
  const sts = child(ntry, 'Sts');
  if (!sts) return '';
  return textAt(sts, 'Cd') ?? textAt(sts, 'Prtry') ?? sts.text.trim();
}

/** Counts and absolute sums of a Stmt's entries (booked or not), the TxsSummry recomputed. */
interface EntryTotals { nAll: bigint; nCdt: bigint; nDbt: bigint; sumAll: bigint; sumCdt: bigint; sumDbt: bigint; net: bigint }

function readStatement(file: ProviderFile, fileIndex: number, stmt: XmlElement, msgPage: XmlElement | undefined, msgId: string | undefined, result: ParseResult): ParsedStatement {
  const stmtIdRaw = rawTextAt(stmt, 'Id');
  if (stmtIdRaw === undefined || stmtIdRaw.trim() === '') throw new ProviderValueError(file.name, stmt.line, 'camt_missing', 'Stmt has no Id');
  const acct = child(stmt, 'Acct');
  const account = textAt(acct, 'Id', 'IBAN') ?? textAt(acct, 'Id', 'Othr', 'Id') ?? null;
  const svcr = child(child(acct, 'Svcr'), 'FinInstnId');
  const bankId = textAt(svcr, 'BICFI') ?? textAt(svcr, 'BIC') ?? textAt(svcr, 'ClrSysMmbId', 'MmbId') ?? textAt(svcr, 'Othr', 'Id') ?? textAt(svcr, 'Nm') ?? null;
  const scope = `statement ${stmtIdRaw}`;
  const { seq, seqSource } = sequenceOf(file, stmt);

  // Pagination: the statement's own, else the message's.
  const pg = child(stmt, 'StmtPgntn') ?? msgPage;
  const pageNo = textAt(pg, 'PgNb');
  const lastPg = textAt(pg, 'LastPgInd');
  const pageNumber = pageNo !== undefined && /^[0-9]{1,5}$/.test(pageNo) ? Number(pageNo) : null;
  const last = lastPg === undefined ? null : lastPg === 'true' || lastPg === '1';

  const balances = children(stmt, 'Bal').map((b) => readBalance(file, b));
  // Opening: OPBD, else PRCD (the previous statement's closing), else the first ITBD of an interim page.
  const opening = OPENING_FINAL.map((c) => balances.find((b) => b.code === c)).find(Boolean) ?? balances.find((b) => b.code === INTERIM) ?? null;
  const closingFinal = balances.find((b) => CLOSING_FINAL.includes(b.code));
  const interims = balances.filter((b) => b.code === INTERIM);
  const closing = closingFinal ?? (interims.length ? interims[interims.length - 1] : null);
  const notes: string[] = [];
  if (opening?.code === 'PRCD') notes.push('opening balance taken from PRCD (no OPBD)');

  const statementCurrency = textAt(acct, 'Ccy') ?? opening?.currency ?? null;
  const unwritable: string[] = [];
  const entries = children(stmt, 'Ntry');
  const { lines, totals, entryCurrency } = readEntries(file, entries, statementCurrency, scope, result, notes, unwritable);

  const currency = statementCurrency ?? entryCurrency;
  for (const [what, b] of [['opening', opening], ['closing', closing]] as const) {
    if (b && currency && b.currency !== currency) unwritable.push(`${what} balance ${b.code} is in ${b.currency}, the statement in ${currency}`);
  }
  if (!account) unwritable.push('the account has no IBAN or Othr/Id');
  if (!opening) unwritable.push('no opening balance (OPBD, PRCD or ITBD)');
  if (!closing) unwritable.push('no closing balance (CLBD or ITBD)');

  const summary = child(stmt, 'TxsSummry');
  if (summary && currency) checkSummary(file, summary, currency, totals, scope, result);

  const extra: Record<string, unknown> = {
    stmt_id: stmtIdRaw,
    message_id: msgId ?? null,
    balances: balances.map((b) => ({ code: b.code, amount_minor: b.amountMinor.toString(), currency: b.currency, text: b.text, date: b.date ?? b.dateTime ?? null })),
    entries_in_stmt: entries.length,
    notes,
  };
  const period = child(stmt, 'FrToDt');
  if (period) extra.period = periodOf(period);

  const page: PageInfo = {
    key: `camt053|${stmtIdRaw}|${account ?? ''}`,
    number: pageNumber,
    last,
    openingFinal: opening !== null && opening.code !== INTERIM,
    closingFinal: closing !== null && closing.code !== INTERIM,
    label: `Stmt at line ${stmt.line}`,
  };
  return {
    format: 'camt053', fileIndex, statementId: stmtIdRaw, providerAccount: account, bankIdFromFile: bankId, currency,
    opening, closing, businessDate: closing?.date ?? null, seq, seqSource, lines, complete: true, incompleteReasons: [], unwritable,
    extra, page,
  };
}

/** Sequence number: the electronic one, else the legal one. */
function sequenceOf(file: ProviderFile, stmt: XmlElement): { seq: bigint | null; seqSource: string } {
  for (const tag of ['ElctrncSeqNb', 'LglSeqNb']) {
    const v = textAt(stmt, tag);
    if (v === undefined) continue;
    if (!/^[0-9]{1,18}$/.test(v)) throw new ProviderValueError(file.name, child(stmt, tag)?.line, 'camt_seq', `${tag} '${v}' is not an integer`);
    return { seq: BigInt(v), seqSource: tag };
  }
  return { seq: null, seqSource: 'none' };
}

/**
 * Every entry counts into the TxsSummry totals and has its batch checked; only BOOK entries become
 * statement lines. Notes and reasons the statement cannot be written are appended as found.
 */
function readEntries(
  file: ProviderFile, entries: XmlElement[], statementCurrency: string | null, scope: string, result: ParseResult, notes: string[], unwritable: string[],
): { lines: ParsedLine[]; totals: EntryTotals; entryCurrency: string | null } {
  const lines: ParsedLine[] = [];
  const totals: EntryTotals = { nAll: 0n, nCdt: 0n, nDbt: 0n, sumAll: 0n, sumCdt: 0n, sumDbt: 0n, net: 0n };
  const fromBooking = { n: 0 };
  let entryCurrency: string | null = null;
  for (const ntry of entries) {
    result.counts.entries += 1;
    const { minor, currency } = amountOf(file, ntry, 'entry');
    entryCurrency ??= currency;
    const sign = signOf(file, ntry, 'entry');
    totals.nAll += 1n;
    totals.sumAll += minor;
    totals.net += sign * minor;
    if (sign > 0n) { totals.nCdt += 1n; totals.sumCdt += minor; } else { totals.nDbt += 1n; totals.sumDbt += minor; }
    const status = entryStatus(ntry);
    const details = children(ntry, 'NtryDtls');
    checkBatch(file, ntry, details, minor, currency, scope, result);
    if (status !== 'BOOK') {
      result.counts.entries_not_booked += 1;
      notes.push(`entry at line ${ntry.line} has status '${status || '(none)'}', not BOOK: not a statement line and not in the balance roll-forward`);
      continue;
    }
    if (statementCurrency !== null && currency !== statementCurrency) unwritable.push(`entry at line ${ntry.line} is in ${currency}, the statement in ${statementCurrency}`);
    lines.push(entryLine(file, ntry, sign, minor, currency, details, fromBooking));
  }
  if (fromBooking.n) notes.push(`${fromBooking.n} entr${fromBooking.n === 1 ? 'y has' : 'ies have'} no ValDt; value_date taken from BookgDt`);
  if (lines.some((l) => l.meta?.reversal)) notes.push('reversal entries (RvslInd true) are signed by their own CdtDbtInd');
  return { lines, totals, entryCurrency };
}

/** A booked entry as a statement line; counts into `fromBooking` when its value date is its booking date. */
function entryLine(file: ProviderFile, ntry: XmlElement, sign: 1n | -1n, minor: bigint, currency: string, details: XmlElement[], fromBooking: { n: number }): ParsedLine {
  const reversal = ['true', '1'].includes(textAt(ntry, 'RvslInd') ?? '');
  let vd = dateOf(file, child(ntry, 'ValDt'), 'entry value date');
  if (vd.date === null && vd.dateTime === undefined) {
    vd = dateOf(file, child(ntry, 'BookgDt'), 'entry booking date');
    if (vd.date !== null || vd.dateTime !== undefined) fromBooking.n += 1;
  }
  const valueDate = vd.date ?? (vd.dateTime ? vd.dateTime.slice(0, 10) : null);
  if (valueDate === null) throw new ProviderValueError(file.name, ntry.line, 'camt_missing', 'entry has neither ValDt nor BookgDt');
  const meta: Record<string, string> = { cdt_dbt: sign > 0n ? 'CRDT' : 'DBIT' };
  if (reversal) meta.reversal = 'true';
  const ntryRef = textAt(ntry, 'NtryRef');
  if (ntryRef) meta.entry_ref = ntryRef;
  const svcrRef = textAt(ntry, 'AcctSvcrRef');
  if (svcrRef) meta.servicer_ref = svcrRef;
  return { amountMinor: sign * minor, currency, valueDate, reference: referenceOf(details), line: ntry.line, meta };
}

/** TxsSummry: every total it declares, recomputed over this Stmt's entries. */
function checkSummary(file: ProviderFile, summary: XmlElement, currency: string, totals: EntryTotals, scope: string, result: ParseResult): void {
  const exp = currencyExponent(currency, where(file, summary));
  const unit = `${currency} minor units (exponent ${exp})`;
  const sumOf = (el: XmlElement | undefined, tag: string) => {
    const t = textAt(el, tag);
    return t === undefined ? undefined : majorPointToMinor(t, currency, where(file, child(el, tag)), `TxsSummry ${tag}`);
  };
  const countOf = (el: XmlElement | undefined) => {
    const t = textAt(el, 'NbOfNtries');
    if (t === undefined) return undefined;
    if (!/^[0-9]{1,15}$/.test(t)) throw new ProviderValueError(file.name, el?.line, 'camt_count', `NbOfNtries '${t}' is not a count`);
    return BigInt(t);
  };
  const groups: [string, bigint, bigint][] = [['TtlNtries', totals.nAll, totals.sumAll], ['TtlCdtNtries', totals.nCdt, totals.sumCdt], ['TtlDbtNtries', totals.nDbt, totals.sumDbt]];
  for (const [tag, n, s] of groups) {
    const g = child(summary, tag);
    if (!g) continue;
    const c = countOf(g);
    if (c !== undefined) result.checks.push(tieCheck(`camt053.TxsSummry.${tag}.NbOfNtries`, scope, 'count', c, n, { line: g.line }));
    const sm = sumOf(g, 'Sum');
    if (sm !== undefined) result.checks.push(tieCheck(`camt053.TxsSummry.${tag}.Sum`, scope, unit, sm, s, { line: g.line }));
  }
  const tot = child(summary, 'TtlNtries');
  // Net: TtlNetNtry/Amt + CdtDbtInd (001.03+), TtlNetNtryAmt + CdtDbtInd (001.02).
  const netEl = child(tot, 'TtlNetNtry');
  const netText = netEl ? textAt(netEl, 'Amt') : textAt(tot, 'TtlNetNtryAmt');
  if (netText !== undefined) {
    const holder = netEl ?? tot!;
    const v = majorPointToMinor(netText, currency, where(file, holder), 'TxsSummry net amount');
    const sign = signOf(file, holder, 'TxsSummry net amount');
    result.checks.push(tieCheck('camt053.TxsSummry.TtlNtries.TtlNetNtry', scope, unit, sign * v, totals.net, { line: holder.line }));
  }
}

/** FrToDt as written, with whether each time carries a zone (one without is a local time, never UTC). */
function periodOf(period: XmlElement): Record<string, string | null> {
  const fr = textAt(period, 'FrDtTm');
  const to = textAt(period, 'ToDtTm');
  const zoned = (t: string | undefined) => (t === undefined ? null : /(Z|[+-][0-9]{2}:[0-9]{2})$/.test(t) ? 'as written' : 'no zone: a local time of the statement timezone');
  return { from: fr ?? null, to: to ?? null, from_zone: zoned(fr), to_zone: zoned(to) };
}

/**
 * The reference a camt entry carries for us: for a single transaction its EndToEndId (unless
 * NOTPROVIDED); for a batch the batch's PmtInfId, else the PmtInfId all its details share.
 */
function referenceOf(details: XmlElement[]): string | null {
  const txs = details.flatMap((d) => children(d, 'TxDtls'));
  const btch = details.map((d) => child(d, 'Btch')).find(Boolean);
  if (!btch && txs.length === 1) {
    const e2e = rawTextAt(txs[0], 'Refs', 'EndToEndId');
    return e2e !== undefined && e2e.trim() !== 'NOTPROVIDED' && e2e !== '' ? e2e : null;
  }
  const pmt = rawTextAt(btch, 'PmtInfId');
  if (pmt !== undefined && pmt !== '') return pmt;
  const ids = new Set(txs.map((t) => rawTextAt(t, 'Refs', 'PmtInfId')));
  if (txs.length > 0 && ids.size === 1) {
    const [only] = [...ids];
    if (only) return only;
  }
  return null;
}

/** Checks a batch entry's details: NbOfTxs and TtlAmt against its TxDtls, and their sum against the entry. */
function checkBatch(file: ProviderFile, ntry: XmlElement, details: XmlElement[], entryMinor: bigint, currency: string, scope: string, result: ParseResult): void {
  const btch = details.map((d) => child(d, 'Btch')).find(Boolean);
  const txs = details.flatMap((d) => children(d, 'TxDtls'));
  if (!btch && txs.length <= 1) return;
  const bscope = `${scope} entry at line ${ntry.line}`;
  const exp = currencyExponent(currency, where(file, ntry));
  const unit = `${currency} minor units (exponent ${exp})`;
  const declaredN = textAt(btch, 'NbOfTxs');
  if (declaredN !== undefined) {
    if (!/^[0-9]{1,15}$/.test(declaredN)) throw new ProviderValueError(file.name, btch?.line, 'camt_count', `Btch NbOfTxs '${declaredN}' is not a count`);
    if (txs.length === 0) {
      result.checks.push({ check: 'camt053.Btch.NbOfTxs', scope: bscope, unit: 'count', declared: declaredN, recomputed: '0', status: 'not_checked', detail: 'the bank supplied no transaction details (TxDtls) for this batch', line: btch?.line });
    } else {
      result.checks.push(tieCheck('camt053.Btch.NbOfTxs', bscope, 'count', BigInt(declaredN), BigInt(txs.length), { line: btch?.line }));
    }
  }
  if (txs.length === 0) return;
  // Detail amounts in the entry's currency: TxDtls/AmtDtls/TxAmt/Amt (001.02+) or TxDtls/Amt (001.03+).
  let sum = 0n;
  for (const tx of txs) {
    const holder = child(child(child(tx, 'AmtDtls'), 'TxAmt'), 'Amt') ? child(child(tx, 'AmtDtls'), 'TxAmt') : child(tx, 'Amt') ? tx : undefined;
    if (!holder) {
      result.checks.push({ check: 'camt053.Btch.details_sum', scope: bscope, unit, declared: entryMinor.toString(), recomputed: '', status: 'not_checked', detail: `transaction details at line ${tx.line} carry no amount`, line: tx.line });
      return;
    }
    const a = amountOf(file, holder, 'transaction detail');
    if (a.currency !== currency) {
      result.checks.push({ check: 'camt053.Btch.details_sum', scope: bscope, unit, declared: entryMinor.toString(), recomputed: '', status: 'not_checked', detail: `transaction details at line ${tx.line} are in ${a.currency}, the entry in ${currency}`, line: tx.line });
      return;
    }
    sum += a.minor;
  }
  result.checks.push(tieCheck('camt053.Btch.details_sum', bscope, unit, entryMinor, sum, { detail: 'entry amount against the sum of its transaction details', line: ntry.line }));
  const ttl = child(btch, 'TtlAmt');
  if (ttl) {
    const t = majorPointToMinor(ttl.text.trim(), ttl.attributes.Ccy ?? currency, where(file, ttl), 'Btch TtlAmt');
    result.checks.push(tieCheck('camt053.Btch.TtlAmt', bscope, unit, t, sum, { line: ttl.line }));
  }
}
