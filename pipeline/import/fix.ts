/**
 * FIX 4.2 / 4.4 session logs → venue fills (CONTRACT §2 `venue_fills`, §8).
 *
 * A log holds messages `8=FIX.4.x<d>9=…<d>…10=nnn<d>` where the delimiter `<d>` is SOH (0x01)
 * or `|` (a log written for people); anything before `8=` on a line (a logger's time stamp) is
 * ignored. Every message's BodyLength (9) and CheckSum (10) are recomputed (with `|` read as
 * SOH), and each direction's MsgSeqNum (34) is followed for gaps, honouring Logon resets (141=Y),
 * SequenceReset (35=4, NewSeqNo 36) and possible duplicates (43=Y).
 *
 * Fills are ExecutionReports (35=8) with ExecType (150) 1 or 2 (FIX 4.2 partial fill / fill,
 * ExecTransType 20 = 0 or absent) or F (trade, FIX 4.3+). `venue_seq` is the fill's position
 * among the fills of its venue in this log (1, 2, …), never MsgSeqNum, which counts heartbeats
 * and every other message too. Trade corrections and cancels (150=G/H, or 20=1/2 in FIX 4.2)
 * are not fills: they are reported as findings for a person to apply. A repeated ExecID with
 * identical fill fields (a resend) is counted once; with different fields it is a finding and
 * the first one stands. CumQty (14) and LeavesQty (151) are checked against the fills read.
 */
import { ProviderValueError, currencyExponent, type Where } from './amounts.js';
import { decodeText } from './mt940.js';
import { emptyResult, tieCheck, type ControlCheck, type ParsedFill, type ParseResult, type ProviderFile } from './model.js';
import { formatScaled, parseDecimal, parseId } from '../contract/values.js';

interface FixMessage {
  readonly fields: [string, string][];
  readonly get: (tag: string) => string | undefined;
  readonly line: number;
}

const SIDES: Record<string, 'BUY' | 'SELL'> = { '1': 'BUY', '2': 'SELL', '3': 'BUY', '4': 'SELL', '5': 'SELL', '6': 'SELL' };
const TIME_RE = /^([0-9]{4})([0-9]{2})([0-9]{2})-([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,9}))?$/;

/** Splits the text into messages and checks BodyLength and CheckSum of each. */
function readMessages(file: ProviderFile, text: string, encoding: 'utf-8' | 'iso-8859-1', result: ParseResult): FixMessage[] {
  const out: FixMessage[] = [];
  const startRe = /(^|[^0-9A-Za-z=])8=FIX/g;
  const starts: number[] = [];
  for (let m = startRe.exec(text); m; m = startRe.exec(text)) starts.push(m.index + m[1].length);
  const byteLen = (s: string) => Buffer.byteLength(s, encoding === 'utf-8' ? 'utf8' : 'latin1');
  let lineNo = 1;
  let lineAt = 0;
  for (let k = 0; k < starts.length; k++) {
    const start = starts[k];
    for (let i = lineAt; i < start; i++) if (text.charCodeAt(i) === 10) lineNo += 1;
    lineAt = start;
    const limit = k + 1 < starts.length ? starts[k + 1] : text.length;
    const firstEq = text.indexOf('=', start);
    let p = firstEq + 1;
    while (p < limit && text[p] !== '\x01' && text[p] !== '|' && text[p] !== '\n') p++;
    const delim = text[p];
    if (delim !== '\x01' && delim !== '|') throw new ProviderValueError(file.name, lineNo, 'fix_delimiter', 'a FIX message whose fields are not separated by SOH or |');
    const fields: [string, string][] = [];
    const offsets: number[] = [];
    let pos = start;
    let end = -1;
    while (pos < limit) {
      // A field ends at the delimiter; a message never spans a line end.
      const next = text.indexOf(delim, pos);
      const nl = text.indexOf('\n', pos);
      const stop = Math.min(next < 0 ? limit : next, nl < 0 ? limit : nl, limit);
      const raw = text.slice(pos, stop).replace(/\r$/, '');
      if (raw === '' && stop !== next) break;
      const eq = raw.indexOf('=');
      if (eq <= 0 || !/^[0-9]+$/.test(raw.slice(0, eq))) throw new ProviderValueError(file.name, lineNo, 'fix_field', `'${raw.slice(0, 40)}' is not a tag=value field`);
      fields.push([raw.slice(0, eq), raw.slice(eq + 1)]);
      offsets.push(pos);
      if (raw.startsWith('10=')) { end = stop; break; }
      if (stop !== next) break;
      pos = stop + 1;
    }
    const get = (tag: string) => fields.find((f) => f[0] === tag)?.[1];
    const msg: FixMessage = { fields, get, line: lineNo };
    const scope = `message at line ${lineNo} (MsgSeqNum ${get('34') ?? '?'})`;
    if (fields[0]?.[0] !== '8' || fields[1]?.[0] !== '9') {
      result.findings.push({ check: 'fix.header', scope, detail: 'the message does not start with BeginString (8) then BodyLength (9)', line: lineNo });
    } else if (end < 0 || fields[fields.length - 1][0] !== '10') {
      result.findings.push({ check: 'fix.trailer', scope, detail: 'the message has no CheckSum (10) field: truncated', line: lineNo });
    } else {
      const bodyStart = offsets[2] ?? offsets[offsets.length - 1];
      const checksumStart = offsets[offsets.length - 1];
      const bodyLen = byteLen(text.slice(bodyStart, checksumStart));
      const declaredLen = fields[1][1];
      if (/^[0-9]+$/.test(declaredLen)) result.checks.push(tieCheck('fix.BodyLength', scope, 'bytes', BigInt(declaredLen), BigInt(bodyLen), { line: lineNo }));
      else result.findings.push({ check: 'fix.BodyLength', scope, detail: `BodyLength '${declaredLen}' is not a number`, line: lineNo });
      const head = Buffer.from(text.slice(start, checksumStart), encoding === 'utf-8' ? 'utf8' : 'latin1');
      let sum = 0;
      for (const b of head) sum = (sum + (b === 0x7c && delim === '|' ? 1 : b)) % 256;
      const declaredSum = fields[fields.length - 1][1];
      if (/^[0-9]{3}$/.test(declaredSum)) result.checks.push(tieCheck('fix.CheckSum', scope, 'sum of bytes mod 256', BigInt(declaredSum), BigInt(sum), { line: lineNo }));
      else result.findings.push({ check: 'fix.CheckSum', scope, detail: `CheckSum '${declaredSum}' is not three digits`, line: lineNo });
    }
    out.push(msg);
  }
  return out;
}

function required(file: ProviderFile, msg: FixMessage, tag: string, name: string): string {
  const v = msg.get(tag);
  if (v === undefined || v === '') throw new ProviderValueError(file.name, msg.line, 'fix_missing', `ExecutionReport (MsgSeqNum ${msg.get('34') ?? '?'}) has no ${name} (${tag})`);
  return v;
}

/** A check on quantities, declared and recomputed as exact decimal texts. */
function quantityCheck(check: string, scope: string, declared: bigint, recomputed: bigint, line: number, what: string): ControlCheck {
  const ok = declared === recomputed;
  return {
    check, scope, unit: 'quantity', declared: formatScaled(declared), recomputed: formatScaled(recomputed), status: ok ? 'ok' : 'mismatch',
    detail: ok ? what : `${what}: recomputed − declared = ${formatScaled(recomputed - declared)}`, line,
  };
}

/** FIX UTCTimestamp `YYYYMMDD-HH:MM:SS[.sss…]` → contract local text `YYYY-MM-DDTHH:MM:SS[.ffffff]` (zone UTC). */
function utcTimestamp(text: string, where: Where): string {
  const m = TIME_RE.exec(text);
  if (!m) throw new ProviderValueError(where.file, where.line, 'fix_time', `TransactTime '${text}' is not YYYYMMDD-HH:MM:SS[.sss]`);
  const [, y, mo, d, h, mi, s, frac] = m;
  if (Number(mo) < 1 || Number(mo) > 12 || Number(d) < 1 || Number(d) > 31 || Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) {
    throw new ProviderValueError(where.file, where.line, 'fix_time', `TransactTime '${text}' is not a real UTC time`);
  }
  let f = frac ?? '';
  if (f.length > 6) {
    if (/[^0]/.test(f.slice(6))) throw new ProviderValueError(where.file, where.line, 'fix_time', `TransactTime '${text}' is finer than a microsecond; refused, not rounded`);
    f = f.slice(0, 6);
  }
  return `${y}-${mo}-${d}T${h}:${mi}:${s}${f ? `.${f}` : ''}`;
}

/** What the messages read so far have built: versions seen, the next MsgSeqNum per direction, fills per venue and order. */
interface FixParse {
  readonly file: ProviderFile;
  readonly result: ParseResult;
  readonly versions: Set<string>;
  readonly expected: Map<string, bigint>;
  readonly seqByVenue: Map<string, number>;
  readonly seenExec: Map<string, ParsedFill>;
  readonly cum: Map<string, bigint>;
  readonly counts: Record<string, number>;
}

/**
 * Parses one FIX session log into venue fills and its checks (BodyLength, CheckSum, MsgSeqNum
 * continuity, CumQty/LeavesQty). Throws ProviderValueError (exit 3) for a fill that cannot
 * become a `venue_fills` row: a missing ExecID, side, quantity, price, currency or TransactTime,
 * a value that is not an exact decimal, an unknown currency.
 */
export function parseFix(file: ProviderFile, fileIndex: number): ParseResult {
  void fileIndex;
  const { text, encoding } = decodeText(file.bytes);
  const result = emptyResult('FIX');
  if (encoding !== 'utf-8') result.notes.push('the file is not valid UTF-8; read as ISO-8859-1');
  const messages = readMessages(file, text, encoding, result);
  const p: FixParse = {
    file, result, versions: new Set(), expected: new Map(), seqByVenue: new Map(), seenExec: new Map(), cum: new Map(),
    counts: { messages: 0, execution_reports: 0, fills: 0, duplicate_fills: 0, heartbeats: 0 },
  };
  for (const msg of messages) readMessage(p, msg);
  (result as { formatVersion: string }).formatVersion = [...p.versions].sort().join(', ') || 'FIX';
  Object.assign(result.counts, p.counts);
  if (p.counts.messages === 0) result.findings.push({ check: 'fix.structure', scope: 'file', detail: 'no FIX message (8=FIX…) in the file' });
  return result;
}

/** One message: its version, its place in its direction's sequence, and a fill when it is one. */
function readMessage(p: FixParse, msg: FixMessage): void {
  const { file, result, counts } = p;
  counts.messages += 1;
  const begin = msg.get('8') ?? '';
  if (!/^FIX\.4\.[234]$/.test(begin)) throw new ProviderValueError(file.name, msg.line, 'fix_version', `BeginString '${begin}' is not FIX.4.2, FIX.4.3 or FIX.4.4`);
  p.versions.add(begin);
  const type = msg.get('35') ?? '';
  const sender = msg.get('49') ?? '';
  const target = msg.get('56') ?? '';
  const seqText = msg.get('34') ?? '';
  const dir = `${sender}->${target}`;
  const scope = `${dir} message at line ${msg.line}`;
  if (type === '0') counts.heartbeats += 1;
  followSequence(p, msg, type, dir, seqText, scope);
  if (type !== '8') return;
  counts.execution_reports += 1;
  const execType = msg.get('150') ?? '';
  const transType = msg.get('20');
  if ((execType === 'G' || execType === 'H') || ((execType === '1' || execType === '2') && transType !== undefined && transType !== '0')) {
    const what = execType === 'G' || transType === '2' ? 'trade correction' : transType === '3' ? 'status report' : 'trade cancel (bust)';
    result.findings.push({ check: 'fix.trade_correction', scope, detail: `ExecutionReport ExecID ${msg.get('17') ?? '?'} (refers to ${msg.get('19') ?? 'no ExecRefID'}) is a ${what}: not imported as a fill; apply it by hand`, line: msg.line });
    return;
  }
  if (!['1', '2', 'F'].includes(execType)) return;
  const { fill, qty, px } = readFill(file, msg, sender, seqText);
  if (!takeFill(p, msg, fill, qty, px, scope)) return;
  checkOrderQuantities(p, msg, fill, qty);
}

/** MsgSeqNum continuity per direction. */
function followSequence(p: FixParse, msg: FixMessage, type: string, dir: string, seqText: string, scope: string): void {
  const { expected, result } = p;
  if (!/^[0-9]+$/.test(seqText)) {
    result.findings.push({ check: 'fix.MsgSeqNum', scope, detail: `MsgSeqNum '${seqText}' is missing or not a number`, line: msg.line });
    return;
  }
  const seq = BigInt(seqText);
  if (type === 'A' && msg.get('141') === 'Y') expected.set(dir, 1n);
  const want = expected.get(dir);
  const possDup = msg.get('43') === 'Y';
  if (want !== undefined && seq > want) result.findings.push({ check: 'fix.MsgSeqNum_gap', scope, detail: `MsgSeqNum ${seq} where ${want} was expected: ${seq - want} message(s) missing`, line: msg.line });
  if (want !== undefined && seq < want && !possDup) result.findings.push({ check: 'fix.MsgSeqNum_low', scope, detail: `MsgSeqNum ${seq} is below the expected ${want} without PossDupFlag`, line: msg.line });
  if (want === undefined || seq >= want) expected.set(dir, seq + 1n);
  if (type === '4') {
    const nxt = msg.get('36');
    if (nxt && /^[0-9]+$/.test(nxt)) expected.set(dir, BigInt(nxt));
  }
}

/** An ExecutionReport's fill fields as a `venue_fills` row (venueSeq still 0), with its exact quantity and price. */
function readFill(file: ProviderFile, msg: FixMessage, sender: string, seqText: string): { fill: ParsedFill; qty: bigint; px: bigint } {
  const w: Where = { file: file.name, line: msg.line };
  const execId = required(file, msg, '17', 'ExecID');
  const idOk = parseId(execId);
  if (!idOk.ok) throw new ProviderValueError(file.name, msg.line, 'fix_id', `ExecID: ${idOk.message}`);
  const orderId = msg.get('11') || msg.get('37');
  if (!orderId) throw new ProviderValueError(file.name, msg.line, 'fix_missing', 'ExecutionReport has neither ClOrdID (11) nor OrderID (37)');
  const instrument = required(file, msg, '55', 'Symbol');
  const sideCode = required(file, msg, '54', 'Side');
  const side = SIDES[sideCode];
  if (!side) throw new ProviderValueError(file.name, msg.line, 'fix_side', `Side '${sideCode}' is not a buy (1, 3) or a sell (2, 4, 5, 6)`);
  const qtyText = required(file, msg, '32', 'LastQty');
  const pxText = required(file, msg, '31', 'LastPx');
  const qty = parseDecimal(qtyText);
  if (!qty.ok || qty.value <= 0n) throw new ProviderValueError(file.name, msg.line, 'fix_qty', `LastQty '${qtyText}' is not an exact decimal > 0`);
  const px = parseDecimal(pxText);
  if (!px.ok || px.value < 0n) throw new ProviderValueError(file.name, msg.line, 'fix_px', `LastPx '${pxText}' is not an exact decimal ≥ 0`);
  const currency = required(file, msg, '15', 'Currency');
  currencyExponent(currency, w);
  const local = utcTimestamp(required(file, msg, '60', 'TransactTime'), w);
  for (const [v, n] of [[orderId, 'order id'], [instrument, 'Symbol']] as const) {
    const ok = parseId(v);
    if (!ok.ok) throw new ProviderValueError(file.name, msg.line, 'fix_id', `${n}: ${ok.message}`);
  }
  const fill: ParsedFill = {
    venueTimeLocal: local, venueTimezone: 'UTC', senderCompId: sender, venueFillId: execId, orderId, instrumentId: instrument, side,
    fillQty: qtyText, price: pxText, priceCurrency: currency, venueSeq: 0, msgSeqNum: seqText, line: msg.line,
  };
  return { fill, qty: qty.value, px: px.value };
}

/**
 * Keeps the fill unless its venue already sent its ExecID: an identical one is a resend (noted,
 * counted once), a different one a finding (the first stands). Returns whether it was kept.
 */
function takeFill(p: FixParse, msg: FixMessage, fill: ParsedFill, qty: bigint, px: bigint, scope: string): boolean {
  const { result, counts } = p;
  const execId = fill.venueFillId;
  const key = `${fill.senderCompId}|${execId}`;
  const prior = p.seenExec.get(key);
  if (prior) {
    const same = prior.venueTimeLocal === fill.venueTimeLocal && prior.orderId === fill.orderId && prior.instrumentId === fill.instrumentId && prior.side === fill.side
      && parseDecimal(prior.fillQty).ok && (parseDecimal(prior.fillQty) as { value: bigint }).value === qty
      && (parseDecimal(prior.price) as { value: bigint }).value === px && prior.priceCurrency === fill.priceCurrency;
    if (same) { counts.duplicate_fills += 1; result.notes.push(`ExecID ${execId} at line ${msg.line} repeats the fill at line ${prior.line} (resend${msg.get('43') === 'Y' ? ', PossDupFlag Y' : ''}); counted once`); }
    else result.findings.push({ check: 'fix.ExecID_conflict', scope, detail: `ExecID ${execId} at line ${msg.line} differs from the fill at line ${prior.line}; the first stands`, line: msg.line });
    return false;
  }
  p.seenExec.set(key, fill);
  const n = (p.seqByVenue.get(fill.senderCompId) ?? 0) + 1;
  p.seqByVenue.set(fill.senderCompId, n);
  fill.venueSeq = n;
  result.fills.push(fill);
  counts.fills += 1;
  return true;
}

/** CumQty and LeavesQty against the fills read for this order. */
function checkOrderQuantities(p: FixParse, msg: FixMessage, fill: ParsedFill, qty: bigint): void {
  const { orderId, venueFillId: execId } = fill;
  const orderKey = `${fill.senderCompId}|${msg.get('37') ?? orderId}`;
  const total = (p.cum.get(orderKey) ?? 0n) + qty;
  p.cum.set(orderKey, total);
  const cumText = msg.get('14');
  const fscope = `order ${msg.get('37') ?? orderId} fill ExecID ${execId}`;
  if (cumText !== undefined) {
    const c = parseDecimal(cumText);
    if (c.ok) p.result.checks.push(quantityCheck('fix.CumQty', fscope, c.value, total, msg.line, 'CumQty (14) against the sum of LastQty (32) of the fills read for the order'));
  }
  const leaves = msg.get('151');
  const orderQty = msg.get('38');
  if (leaves !== undefined && orderQty !== undefined && cumText !== undefined) {
    const l = parseDecimal(leaves), o = parseDecimal(orderQty), c = parseDecimal(cumText);
    if (l.ok && o.ok && c.ok && ['1', '2'].includes(msg.get('39') ?? '')) {
      p.result.checks.push(quantityCheck('fix.LeavesQty', fscope, o.value, l.value + c.value, msg.line, 'OrderQty (38) against LeavesQty (151) + CumQty (14)'));
    }
  }
}
