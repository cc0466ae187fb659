/**
 * SWIFT MT940 / MT950 customer statements → statement pages.
 *
 * A message is the tags between a SWIFT text block `{4:` (or the first tag) and its end `-`
 * (or `-}`). Each message is one page; `:28C:` (or the older `:28:`) gives the statement number
 * and page, `:60F:`/`:60M:` the first/intermediate opening balance, `:62F:`/`:62M:` the
 * final/intermediate closing balance. The orchestrator joins pages of one statement.
 *
 * `:61:` lines: value date YYMMDD, optional entry date MMDD, mark C, D, RC or RD, optional funds
 * code (the currency's third letter), amount with a comma (`380115,`, `380115,1`, `00,12`),
 * transaction type, customer reference [`//` bank reference], an optional second line of
 * supplementary details. Signs (bank's view, + into our account): C +, D −, RC − (reversal of a
 * credit is a debit), RD + (reversal of a debit is a credit). Lines not starting with a tag
 * continue the previous tag (:86: narratives, :61: supplementary details); lines outside a
 * message (bank dialect headers such as `ABNANL2A` / `940`) are noted and skipped.
 */
import { swiftAmountToMinor, ProviderValueError, yymmddToDate, currencyExponent, type Where } from './amounts.js';
import { emptyResult, type PageInfo, type ParsedBalance, type ParsedLine, type ParsedStatement, type ParseResult, type ProviderFile } from './model.js';

interface TagEntry {
  readonly tag: string;
  readonly lines: string[];
  readonly line: number;
}

interface Message {
  readonly tags: TagEntry[];
  readonly line: number;
  senderBic: string | null;
  messageType: string | null;
}

const TAG_RE = /^:([0-9]{2}[A-Z]?):(.*)$/;
const BALANCE_RE = /^([CD])([0-9]{6})([A-Z]{3})([0-9]+,[0-9]*)$/;
const LINE_RE = /^([0-9]{6})([0-9]{4})?(RC|RD|C|D)([A-Z])?([0-9]+,[0-9]*)([NFS])([A-Z0-9]{3})(.*)$/;
const STATEMENT_NO_RE = /^([0-9]{1,5})(?:\/([0-9]{1,5}))?$/;

/** Decodes text: UTF-8 when valid, else ISO-8859-1 (SWIFT narratives from some banks); says which. */
export function decodeText(bytes: Buffer): { text: string; encoding: 'utf-8' | 'iso-8859-1' } {
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return { text: text.charCodeAt(0) === 0xfeff ? text.slice(1) : text, encoding: 'utf-8' };
  } catch {
    return { text: new TextDecoder('latin1').decode(bytes), encoding: 'iso-8859-1' };
  }
}

/** Splits the file into messages of tags. */
function readMessages(text: string, result: ParseResult): Message[] {
  const messages: Message[] = [];
  const physical = text.split(/\r\n|\n|\r/);
  let cur: Message | null = null;
  let pendingBlocks: { senderBic: string | null; messageType: string | null } = { senderBic: null, messageType: null };
  const preamble: string[] = [];
  const close = () => { if (cur) messages.push(cur); cur = null; };
  for (let i = 0; i < physical.length; i++) {
    let line = physical[i];
    const lineNo = i + 1;
    if (line.startsWith('{')) {
      // SWIFT envelope: {1:F01BANKBEBBAXXX…}{2:O940…}{3:…}{4: then the text block.
      close();
      const b2 = /\{2:([IO])([0-9]{3})([^}]*)\}/.exec(line);
      let senderBic: string | null = null;
      if (b2 && b2[1] === 'O' && b2[3].length >= 22) {
        // Output: HHMM + MIR (YYMMDD + 12-character LT address + …): the sender's BIC.
        const lt = b2[3].slice(10, 22);
        senderBic = lt.slice(0, 8) + (lt.slice(9, 12) === 'XXX' ? '' : lt.slice(9, 12));
      }
      pendingBlocks = { senderBic, messageType: b2 ? `MT${b2[2]}` : null };
      const four = line.indexOf('{4:');
      if (four < 0) continue;
      cur = { tags: [], line: lineNo, ...pendingBlocks };
      line = line.slice(four + 3);
      if (line === '') continue;
    }
    if (line === '-' || line.startsWith('-}')) { close(); continue; }
    const m = TAG_RE.exec(line);
    if (m) {
      const started: Message = cur ?? { tags: [], line: lineNo, ...pendingBlocks };
      if (!cur) cur = started;
      // A new :20: after a complete page starts a new message even without a '-' line.
      if (m[1] === '20' && started.tags.some((t) => t.tag.startsWith('62'))) { close(); cur = { tags: [], line: lineNo, senderBic: null, messageType: null }; }
      cur!.tags.push({ tag: m[1], lines: [m[2]], line: lineNo });
      continue;
    }
    const c = cur as Message | null;
    if (c && c.tags.length) { c.tags[c.tags.length - 1].lines.push(line); continue; }
    if (line.trim() !== '') preamble.push(`line ${lineNo}: '${line.trim()}'`);
  }
  close();
  if (preamble.length) result.notes.push(`lines outside any message, skipped: ${preamble.join(', ')}`);
  return messages;
}

function balanceOf(file: ProviderFile, t: TagEntry): ParsedBalance {
  const w: Where = { file: file.name, line: t.line };
  const v = t.lines[0];
  const m = BALANCE_RE.exec(v);
  if (!m) throw new ProviderValueError(file.name, t.line, 'mt940_balance', `:${t.tag}: '${v}' is not a balance (C|D, YYMMDD, currency, amount with comma)`);
  currencyExponent(m[3], w);
  const minor = swiftAmountToMinor(m[4], m[3], w, `:${t.tag}: amount`);
  return { code: t.tag, amountMinor: m[1] === 'C' ? minor : -minor, currency: m[3], text: v, date: yymmddToDate(m[2], w, `:${t.tag}: date`), line: t.line };
}

/**
 * Parses one MT940/MT950 file into statement pages with their roll-forward checks. Throws
 * ProviderValueError (exit 3) for a balance or :61: line that cannot be read, an unknown
 * currency, an impossible date or an amount with more decimals than its currency allows.
 */
export function parseMt940(file: ProviderFile, fileIndex: number): ParseResult {
  const { text, encoding } = decodeText(file.bytes);
  const result = emptyResult('MT940');
  if (encoding !== 'utf-8') result.notes.push('the file is not valid UTF-8; read as ISO-8859-1');
  const messages = readMessages(text, result);
  // A file with no statement message at all (empty, truncated, or not MT940) is not a statement
  // file: refuse it rather than report "0 statements" as a success.
  if (!messages.some((m) => m.tags.some((t) => t.tag.startsWith('60') || t.tag === '20'))) {
    throw new ProviderValueError(file.name, 1, 'mt940_no_statement', text.trim() === '' ? 'the file is empty' : 'no MT940/MT950 statement (no :20: or :60F:/:60M: tag) in the file');
  }
  const types = new Set(messages.map((m) => m.messageType).filter(Boolean));
  if (types.size) (result as { formatVersion: string }).formatVersion = [...types].join(', ');
  result.counts.messages = messages.length;
  result.counts.pages = 0;
  result.counts.lines = 0;
  for (const msg of messages) {
    if (msg.messageType && !['MT940', 'MT950'].includes(msg.messageType)) throw new ProviderValueError(file.name, msg.line, 'mt940_type', `message type ${msg.messageType} is not MT940 or MT950`);
    // Header tags before the first opening balance apply to every page of the message.
    const firstOpening = msg.tags.findIndex((t) => t.tag.startsWith('60'));
    const header = firstOpening < 0 ? msg.tags : msg.tags.slice(0, firstOpening);
    const bodies: TagEntry[][] = [];
    for (let i = firstOpening < 0 ? msg.tags.length : firstOpening; i < msg.tags.length; i++) {
      if (msg.tags[i].tag.startsWith('60') || bodies.length === 0) bodies.push([]);
      bodies[bodies.length - 1].push(msg.tags[i]);
    }
    if (bodies.length === 0) bodies.push([]);
    if (bodies.length > 1) result.notes.push(`message at line ${msg.line} holds ${bodies.length} opening balances (:60a:); each is read as its own page`);
    for (const body of bodies) {
      result.counts.pages += 1;
      result.statements.push(readPage(file, fileIndex, msg, header, body, result));
    }
  }
  return result;
}

function readPage(file: ProviderFile, fileIndex: number, msg: Message, header: TagEntry[], body: TagEntry[], result: ParseResult): ParsedStatement {
  const all = [...header, ...body];
  const first = (pred: (t: string) => boolean) => all.find((t) => pred(t.tag));
  const ref = first((t) => t === '20')?.lines[0] ?? null;
  const acctTag = first((t) => t === '25' || t === '25P');
  const account = acctTag ? acctTag.lines[0] : null;
  const bankFromAcct = acctTag?.tag === '25P' ? (acctTag.lines[1] ?? null) : null;
  const noTag = first((t) => t === '28C' || t === '28');
  const { stmtNo, pageNo } = statementNumber(file, noTag);
  const openTag = body.find((t) => t.tag === '60F' || t.tag === '60M');
  const closeTag = body.find((t) => t.tag === '62F' || t.tag === '62M');
  const opening = openTag ? balanceOf(file, openTag) : null;
  const closing = closeTag ? balanceOf(file, closeTag) : null;
  const others = body.filter((t) => t.tag === '64' || t.tag === '65').map((t) => balanceOf(file, t));
  const currency = opening?.currency ?? closing?.currency ?? null;
  const startLine = all[0]?.line ?? msg.line;
  const scope = `page at line ${startLine}${ref ? ` (:20: ${ref})` : ''}`;
  const unwritable: string[] = [];
  const notes: string[] = [];
  const lines: ParsedLine[] = [];
  for (const t of body) {
    if (t.tag !== '61') continue;
    if (!currency) throw new ProviderValueError(file.name, t.line, 'mt940_currency', ':61: line in a page without an opening or closing balance to give its currency');
    lines.push(statementLine(file, t, currency));
    result.counts.lines += 1;
  }
  if (lines.some((l) => l.meta?.mark === 'RC' || l.meta?.mark === 'RD')) notes.push('reversal marks: RC counted as a debit, RD as a credit');
  const unknown = [...new Set(all.map((t) => t.tag).filter((t) => !['20', '21', '25', '25P', '28', '28C', '60F', '60M', '61', '86', '62F', '62M', '64', '65'].includes(t)))];
  if (unknown.length) notes.push(`tags not used by the import: ${unknown.map((t) => `:${t}:`).join(', ')}`);
  for (const b of [closing, ...others]) if (b && currency && b.currency !== currency) unwritable.push(`balance :${b.code}: is in ${b.currency}, the statement in ${currency}`);
  if (!account) unwritable.push('no account identification (:25:)');
  if (!opening) unwritable.push('no opening balance (:60F: or :60M:)');
  if (!closing) unwritable.push('no closing balance (:62F: or :62M:)');
  if (!noTag) unwritable.push('no statement number (:28C:)');
  const page: PageInfo = {
    key: account && stmtNo ? `mt940|${account}|${stmtNo}` : `mt940|${fileIndex}|${startLine}`,
    number: pageNo,
    last: null,
    openingFinal: opening?.code === '60F',
    closingFinal: closing?.code === '62F',
    label: `page at line ${startLine}`,
  };
  const fmt = (b: ParsedBalance) => ({ tag: b.code, amount_minor: b.amountMinor.toString(), currency: b.currency, text: b.text, date: b.date });
  return {
    format: 'mt940', fileIndex, statementId: null, providerAccount: account, bankIdFromFile: bankFromAcct ?? msg.senderBic, currency,
    opening, closing, businessDate: closing?.date ?? null, seq: stmtNo !== null ? BigInt(stmtNo) : null, seqSource: ':28C: statement number',
    lines, complete: true, incompleteReasons: [], unwritable,
    extra: {
      transaction_ref: ref, statement_no: stmtNo, page_no: pageNo, notes,
      balances: [opening, closing, ...others].filter((b): b is ParsedBalance => b !== null).map(fmt),
    },
    page,
  };
}

/** :28C: (or :28:) statement number and page; both null without the tag. */
function statementNumber(file: ProviderFile, noTag: TagEntry | undefined): { stmtNo: string | null; pageNo: number | null } {
  if (!noTag) return { stmtNo: null, pageNo: null };
  const m = STATEMENT_NO_RE.exec(noTag.lines[0]);
  if (!m) throw new ProviderValueError(file.name, noTag.line, 'mt940_statement_no', `:${noTag.tag}: '${noTag.lines[0]}' is not statement number[/page]`);
  return { stmtNo: m[1], pageNo: m[2] !== undefined ? Number(m[2]) : null };
}

/** One :61: statement line: C and RD are money in, D and RC money out; the reference is the account owner's (before //). */
function statementLine(file: ProviderFile, t: TagEntry, currency: string): ParsedLine {
  const w: Where = { file: file.name, line: t.line };
  const m = LINE_RE.exec(t.lines[0]);
  if (!m) throw new ProviderValueError(file.name, t.line, 'mt940_line', `:61: '${t.lines[0]}' is not a statement line (YYMMDD[MMDD](C|D|RC|RD)[funds code]amount,type reference)`);
  const [, vd, entry, mark, funds, amountText, typeId, typeCode, rest] = m;
  const minor = swiftAmountToMinor(amountText, currency, w, ':61: amount');
  const sign = mark === 'C' || mark === 'RD' ? 1n : -1n;
  const [custRef, ...bankRefParts] = rest.split('//');
  const meta: Record<string, string> = { mark, type: `${typeId}${typeCode}` };
  if (entry) meta.entry_date = entry;
  if (funds) meta.funds_code = funds;
  if (bankRefParts.length) meta.bank_ref = bankRefParts.join('//');
  if (t.lines.length > 1) meta.supplementary = t.lines.slice(1).join(' ');
  const reference = custRef === '' || custRef === 'NONREF' ? null : custRef;
  return { amountMinor: sign * minor, currency, valueDate: yymmddToDate(vd, w, ':61: value date'), reference, line: t.line, meta };
}
