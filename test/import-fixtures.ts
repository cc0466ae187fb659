/**
 * Inputs and helpers for the `reckon import` tests: the real provider files of
 * `../shared/corpus/provider-formats/` (read in place, never copied), a FIX message writer that
 * computes BodyLength and CheckSum the way a FIX engine does, and readers for what an import
 * writes (CSV text as records, the import report).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SHARED } from './helpers/cli.js';

/** The provider-format corpus folder. */
export const CORPUS = join(SHARED, 'corpus', 'provider-formats');

/** Absolute path of a corpus file, e.g. `corpus('camt053/genkgo-v4.xml')`. */
export function corpus(rel: string): string {
  return join(CORPUS, rel);
}

const SOH = '\x01';

/**
 * One FIX message: BeginString, BodyLength (computed unless overridden), the given fields, CheckSum
 * (computed unless overridden). `delim` '|' writes a human-readable log line (CheckSum still over SOH).
 */
export function fixMessage(begin: string, fields: readonly (readonly [number | string, string])[], opts: { delim?: string; bodyLength?: number; checksum?: string } = {}): string {
  const body = fields.map(([t, v]) => `${t}=${v}${SOH}`).join('');
  const head = `8=${begin}${SOH}9=${opts.bodyLength ?? Buffer.byteLength(body)}${SOH}`;
  let sum = 0;
  for (const b of Buffer.from(head + body)) sum = (sum + b) % 256;
  const msg = `${head}${body}10=${opts.checksum ?? String(sum).padStart(3, '0')}${SOH}`;
  return opts.delim ? msg.split(SOH).join(opts.delim) : msg;
}

/** Parses CSV text written by the import (no quoted newlines) into header-keyed records. */
export function csvRecords(text: string): Record<string, string>[] {
  const rows = text.trimEnd().split('\n').map(splitCsvLine);
  const [header, ...data] = rows;
  return data.map((r) => Object.fromEntries(header.map((h, i) => [h, r[i]])));
}

function splitCsvLine(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') { cur += '"'; i++; } else if (c === '"') quoted = false; else cur += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') { out.push(cur); cur = ''; } else cur += c;
  }
  out.push(cur);
  return out;
}

/** Reads every import CSV of a dataset folder (one per provider file) as records. */
export function datasetRecords(sources: string, dataset: string, fileName: string): Record<string, string>[] {
  return csvRecords(readFileSync(join(sources, dataset, fileName), 'utf8'));
}

/** The `_import_report.json` of a dataset folder. */
export function importReport(sources: string, dataset: string): any {
  return JSON.parse(readFileSync(join(sources, dataset, '_import_report.json'), 'utf8'));
}

/** Writes a dataset CSV (header + rows) and, when given, its `_watermark.json`. */
export function writeDataset(sources: string, dataset: string, header: string[], rows: string[][], watermark?: string): void {
  const dir = join(sources, dataset);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${dataset}.csv`), `${[header, ...rows].map((r) => r.join(',')).join('\n')}\n`);
  if (watermark) writeFileSync(join(dir, '_watermark.json'), JSON.stringify({ watermark, complete: true }));
}

/** A hand-written camt.053.001.08 page of statement STMT-20261102 (IBAN DE89370400440532013000, EUR, servicer COBADEFFXXX). */
export function camtPage(o: { page: number; last: boolean; balances: string; entries: string; summary?: string }): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08">
 <BkToCstmrStmt>
  <GrpHdr><MsgId>MSG-${o.page}</MsgId><CreDtTm>2026-11-02T18:05:00+01:00</CreDtTm></GrpHdr>
  <Stmt>
   <Id>STMT-20261102</Id>
   <StmtPgntn><PgNb>${o.page}</PgNb><LastPgInd>${o.last}</LastPgInd></StmtPgntn>
   <ElctrncSeqNb>311</ElctrncSeqNb>
   <Acct><Id><IBAN>DE89370400440532013000</IBAN></Id><Ccy>EUR</Ccy><Svcr><FinInstnId><BICFI>COBADEFFXXX</BICFI></FinInstnId></Svcr></Acct>
   ${o.balances}${o.summary ?? ''}${o.entries}
  </Stmt>
 </BkToCstmrStmt>
</Document>
`;
}
/** A camt balance element. */
export const bal = (code: string, amt: string, ind: string) => `<Bal><Tp><CdOrPrtry><Cd>${code}</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">${amt}</Amt><CdtDbtInd>${ind}</CdtDbtInd><Dt><Dt>2026-11-02</Dt></Dt></Bal>`;
/** A camt booked entry element. */
export const entry = (amt: string, ind: string, inner: string, extra = '') => `<Ntry><Amt Ccy="EUR">${amt}</Amt><CdtDbtInd>${ind}</CdtDbtInd>${extra}<Sts><Cd>BOOK</Cd></Sts><BookgDt><Dt>2026-11-02</Dt></BookgDt><ValDt><Dt>2026-11-02</Dt></ValDt><NtryDtls>${inner}</NtryDtls></Ntry>`;

/** Page 1 and page 2 of one statement, written to two files: 1000.00 + 250.50 − 100.00 + 25.00 = 1175.50. */
export function twoPageStatement(dir: string): [string, string] {
  const p1 = join(dir, 'stmt-p1.xml');
  const p2 = join(dir, 'stmt-p2.xml');
  writeFileSync(p1, camtPage({ page: 1, last: false, balances: bal('OPBD', '1000.00', 'CRDT') + bal('ITBD', '1250.50', 'CRDT'), entries: entry('250.50', 'CRDT', '<TxDtls><Refs><EndToEndId>PS-1001</EndToEndId></Refs></TxDtls>') }));
  writeFileSync(p2, camtPage({
    page: 2, last: true, balances: bal('ITBD', '1250.50', 'CRDT') + bal('CLBD', '1175.50', 'CRDT'),
    summary: '<TxsSummry><TtlNtries><NbOfNtries>2</NbOfNtries><Sum>125.00</Sum><TtlNetNtry><Amt>75.00</Amt><CdtDbtInd>DBIT</CdtDbtInd></TtlNetNtry></TtlNtries><TtlCdtNtries><NbOfNtries>1</NbOfNtries><Sum>25.00</Sum></TtlCdtNtries><TtlDbtNtries><NbOfNtries>1</NbOfNtries><Sum>100.00</Sum></TtlDbtNtries></TxsSummry>',
    entries: entry('100.00', 'DBIT', '<Btch><PmtInfId>PS-1002</PmtInfId><NbOfTxs>2</NbOfTxs></Btch><TxDtls><Amt Ccy="EUR">60.00</Amt><CdtDbtInd>DBIT</CdtDbtInd></TxDtls><TxDtls><Amt Ccy="EUR">40.00</Amt><CdtDbtInd>DBIT</CdtDbtInd></TxDtls>')
      // A reversal of an earlier debit: booked as a credit (its own CdtDbtInd), sign not flipped.
      + entry('25.00', 'CRDT', '<TxDtls><Refs><EndToEndId>PS-1003</EndToEndId></Refs></TxDtls>', '<RvslInd>true</RvslInd>'),
  }));
  return [p1, p2];
}

