/**
 * Issue 4, hostile and malformed input, at the loader: every case of the list is fed to
 * `loadSources` (real files in a temp dir, real DuckDB) and must be quarantined with the exact
 * dataset, file, row, line, column and rule — or, for valid but unusual input, loaded exactly.
 * The whole-run consequences (INCOMPLETE, exit 3, stderr lines) are in hostile-cli.test.ts.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { LoadResult } from '../pipeline/load/load.js';
import { MAX_RECORD_BYTES } from '../pipeline/sources/readers.js';
import { loadDefault } from './helpers/duckdb.js';
import { csvLine, csvText, datasetOf, entries, hostileBench, validDay, withValue, type Table } from './fixtures/hostile.js';

const { duck, root, fresh, parquet } = hostileBench('reckon-hostile-');
const day = validDay(3);

async function load(dir: string): Promise<LoadResult> {
  return loadDefault(duck.conn, dir, fresh('links'));
}

async function query(sql: string): Promise<string[][]> {
  const r = await duck.conn.runAndReadAll(sql);
  return r.getRows().map((row) => row.map((v) => (v === null ? null : String(v))) as string[]);
}


describe('value rules (CONTRACT §1): one bad value quarantines its record, the others load', () => {
  const cases: [dataset: string, column: string, value: string, rule: string][] = [
    ['executions', 'fill_qty', '1e3', 'decimal_form'],
    ['executions', 'fill_qty', '1E3', 'decimal_form'],
    ['executions', 'fill_qty', '1,000', 'decimal_form'],
    ['executions', 'fill_qty', '1 000', 'decimal_form'],
    ['executions', 'fill_qty', '1_000', 'decimal_form'],
    ['executions', 'fill_qty', '(5)', 'decimal_form'],
    ['executions', 'fill_qty', '+5', 'decimal_form'],
    ['executions', 'fill_qty', ' 5', 'decimal_form'],
    ['executions', 'fill_qty', '5.', 'decimal_form'],
    ['executions', 'fill_qty', '.5', 'decimal_form'],
    ['executions', 'price', '$100.50', 'decimal_form'],
    ['executions', 'price', '100.50 USD', 'decimal_form'],
    ['executions', 'price', '€100,50', 'decimal_form'],
    ['executions', 'price', 'NaN', 'decimal_form'],
    ['executions', 'price', 'Infinity', 'decimal_form'],
    ['executions', 'price', '-Infinity', 'decimal_form'],
    ['executions', 'price', '１００', 'decimal_form'],
    ['executions', 'price', '0.1234567890123456789', 'decimal_scale'],
    ['executions', 'price', '0.1000000000000000000', 'decimal_scale'],
    ['executions', 'fill_qty', '123456789012345678901', 'decimal_precision'],
    ['executions', 'fill_qty', '0', 'range_positive'],
    ['executions', 'fill_qty', '-1', 'range_positive'],
    ['executions', 'execution_seq', '9223372036854775808', 'int_range'],
    ['executions', 'execution_seq', '-9223372036854775809', 'int_range'],
    ['executions', 'execution_seq', '1.0', 'int_fractional'],
    ['executions', 'executed_at', '2026-11-02T10:00:00', 'timestamp_without_zone'],
    ['executions', 'executed_at', '2026-02-30T10:00:00Z', 'timestamp_date'],
    ['executions', 'executed_at', '2026-13-01T10:00:00Z', 'timestamp_date'],
    ['executions', 'executed_at', '2025-02-29T10:00:00Z', 'timestamp_date'],
    ['executions', 'executed_at', '2026-11-02T24:00:00Z', 'timestamp_time'],
    ['executions', 'executed_at', '2026-11-02T23:59:60Z', 'timestamp_time'],
    ['executions', 'executed_at', '2026-11-02 10:00:00Z', 'timestamp_form'],
    ['executions', 'executed_at', '2026-11-02t10:00:00z', 'timestamp_form'],
    ['executions', 'executed_at', '2026-11-02T10:00:00.1234567Z', 'timestamp_form'],
    ['executions', 'executed_at', '2026-11-02T10:00:00+0100', 'timestamp_form'],
    ['executions', 'executed_at', '1793394000', 'timestamp_form'],
    ['executions', 'executed_at', '2026-11-02T10:00:00+19:00', 'timestamp_offset'],
    ['executions', 'executed_at', '0000-01-01T00:00:00Z', 'timestamp_range'],
    ['executions', 'executed_at', '9999-12-31T23:00:00-05:00', 'timestamp_range'],
    ['executions', 'price_currency', 'usd', 'currency_unknown'],
    ['executions', 'price_currency', 'XAU', 'currency_unknown'],
    ['executions', 'price_currency', 'ZZZ', 'currency_unknown'],
    ['executions', 'price_currency', 'US', 'currency_unknown'],
    ['executions', 'side', 'buy', 'enum_value'],
    ['executions', 'side', 'Buy', 'enum_value'],
    ['executions', 'side', 'BUY ', 'enum_value'],
    ['executions', 'execution_id', ' EXE-0001', 'id_whitespace'],
    ['executions', 'execution_id', 'EXE-0001 ', 'id_whitespace'],
    ['executions', 'execution_id', 'EXE-0001\u00a0', 'id_whitespace'],
    ['executions', 'execution_id', 'EXE|0001', 'id_character'],
    ['executions', 'execution_id', 'EXE\u00000001', 'id_character'],
    ['executions', 'execution_id', 'EXE\t0001', 'id_character'],
    ['executions', 'execution_id', '', 'required_empty'],
    ['ledger_postings', 'amount_minor', '12.5', 'amount_fractional'],
    ['ledger_postings', 'amount_minor', '12.00', 'amount_fractional'],
    ['ledger_postings', 'amount_minor', '1e3', 'amount_form'],
    ['ledger_postings', 'amount_minor', '123456789012345678901234567890123456789', 'amount_precision'],
    ['ledger_postings', 'amount_minor', '-5', 'range_positive'],
    ['ledger_postings', 'direction', 'debit', 'enum_value'],
    ['venue_fills', 'venue_timezone', 'Mars/Olympus_Mons', 'timezone_unknown'],
    ['venue_fills', 'venue_timezone', 'EDT', 'timezone_unknown'],
    ['venue_fills', 'venue_timezone', '+05:00', 'timezone_unknown'],
    ['venue_fills', 'venue_time_local', '2026-11-02T05:01:02Z', 'local_timestamp_with_zone'],
    ['venue_fills', 'venue_time_local', '2026-11-31T05:01:02', 'timestamp_date'],
    ['notification_receipts', 'provider_time_local', '2026-03-29T01:30:00', 'local_time_gap'],
    ['notification_intents', 'required', 'TRUE', 'bool_form'],
    ['notification_intents', 'required', '1', 'bool_form'],
    ['orders', 'order_version', '0', 'range_at_least_one'],
    ['orders', 'status', 'filled', 'enum_value'],
  ];
  it.each(cases)('%s.%s = %j → %s', async (dataset, column, value, rule) => {
    const t = withValue(day[dataset], 2, column, value);
    const r = await load(root({ [`${dataset}/part-0001.csv`]: csvText(t) }));
    expect(entries(r)).toEqual([{ file: `${dataset}/part-0001.csv`, row: 2, line: 3, column, rule }]);
    expect(r.quarantine[0].raw).toBe(csvLine(t.rows[1]));
    expect(datasetOf(r, dataset).records_loaded).toBe(t.rows.length - 1);
    expect(datasetOf(r, dataset).quarantined).toBe(1);
  });

  it('a notional beyond DECIMAL(38,0) is quarantined, never stored', async () => {
    const t = withValue(withValue(day.executions, 1, 'fill_qty', '99999999999999999999.5'), 1, 'price', '99999999999999999999');
    const r = await load(root({ 'executions/part-0001.csv': csvText(t) }));
    expect(entries(r)).toEqual([{ file: 'executions/part-0001.csv', row: 1, line: 2, column: 'price', rule: 'notional_range' }]);
  });

  it('values at the limits load exactly: 38-digit amounts, 20+18-digit decimals, ±2^63−1, 2^53+1', async () => {
    const big = '99999999999999999999999999999999999999';
    const t1 = withValue(day.ledger_postings, 1, 'amount_minor', big);
    const t2 = withValue(withValue(withValue(day.executions, 1, 'fill_qty', '0.000000000000000001'), 1, 'price', '12345678901234567890.123456789012345678'), 1, 'execution_seq', '9223372036854775807');
    const t3 = withValue(withValue(t2, 2, 'execution_seq', '-9223372036854775808'), 2, 'price', '9007199254740993');
    const r = await load(root({ 'ledger_postings/part-0001.csv': csvText(t1), 'executions/part-0001.csv': csvText(t3) }));
    expect(entries(r)).toEqual([]);
    expect(await query(`SELECT amount_minor::VARCHAR FROM ledger_postings WHERE posting_set_id = 'PS-0001' AND leg = 1`)).toEqual([[big]]);
    expect(await query(`SELECT fill_qty::VARCHAR, price::VARCHAR, execution_seq::VARCHAR, notional_minor::VARCHAR FROM executions ORDER BY execution_id`)).toEqual([
      ['0.000000000000000001', '12345678901234567890.123456789012345678', '9223372036854775807', '1235'],
      ['12.000000000000000000', '9007199254740993.000000000000000000', '-9223372036854775808', '10808639105689191600'],
      ['13.000000000000000000', '100.500000000000000000', '1', '130650'],
    ]);
  });

  it('equal decimals written differently are one value: 100.5 = 100.50 = 0100.500', async () => {
    const t = withValue(withValue(day.executions, 1, 'price', '100.500'), 2, 'price', '0100.5');
    await load(root({ 'executions/part-0001.csv': csvText(t) }));
    expect(await query(`SELECT DISTINCT price::VARCHAR FROM executions`)).toEqual([['100.500000000000000000']]);
  });
});

describe('file faults (CONTRACT §2)', () => {
  const header = csvLine(day.executions.header);
  const rows = day.executions.rows.map(csvLine);

  it('too few and too many fields: the record is quarantined with its row and line', async () => {
    const text = [header, rows[0], rows[1].split(',').slice(0, 5).join(','), `${rows[2]},extra`].join('\n') + '\n';
    const r = await load(root({ 'executions/x.csv': text }));
    expect(entries(r)).toEqual([
      { file: 'executions/x.csv', row: 2, line: 3, column: null, rule: 'field_count' },
      { file: 'executions/x.csv', row: 3, line: 4, column: null, rule: 'field_count' },
    ]);
    expect(datasetOf(r, 'executions').records_loaded).toBe(1);
  });

  it('an unterminated quote: the record where it opens is quarantined; records before it load', async () => {
    const text = [header, rows[0], rows[1].replace('ACC-1', '"ACC-1'), rows[2]].join('\n') + '\n';
    const r = await load(root({ 'executions/x.csv': text }));
    expect(entries(r)).toEqual([{ file: 'executions/x.csv', row: 2, line: 3, column: 'account_id', rule: 'csv_unterminated_quote' }]);
    expect(datasetOf(r, 'executions').records_loaded).toBe(1);
    expect(r.quarantine[0].raw).toBe(`${rows[1].replace('ACC-1', '"ACC-1')}\n${rows[2]}`);
  });

  it('a quote inside an unquoted field, text after a closing quote and a bare CR are syntax errors of that record only', async () => {
    const text = [header, rows[0].replace('ACC-1', 'AC"C-1'), rows[1].replace('ACC-1', '"ACC-1"x'), rows[2].replace('ACC-1', 'ACC\r-1')].join('\n') + '\n';
    const r = await load(root({ 'executions/x.csv': text }));
    expect(entries(r)).toEqual([
      { file: 'executions/x.csv', row: 1, line: 2, column: 'account_id', rule: 'csv_quote' },
      { file: 'executions/x.csv', row: 2, line: 3, column: 'account_id', rule: 'csv_quote' },
      { file: 'executions/x.csv', row: 3, line: 4, column: 'account_id', rule: 'csv_bare_cr' },
    ]);
  });

  it('a truncated file: the cut record is quarantined, whole records before it load', async () => {
    const full = csvText(day.executions);
    const cut = full.slice(0, full.lastIndexOf('100.50') + 3);
    const r = await load(root({ 'executions/x.csv': cut }));
    expect(entries(r)).toEqual([{ file: 'executions/x.csv', row: 3, line: 4, column: null, rule: 'field_count' }]);
    expect(datasetOf(r, 'executions').records_loaded).toBe(2);
  });

  // Issue 19: a 0-byte JSON Lines file is zero records (an exporter with nothing to send), no
  // longer a fault; every other format's empty file still is (this test listed b.jsonl before).
  it('an empty (0-byte) file is one quarantine entry naming the file, in every format but JSON Lines', async () => {
    const r = await load(root({ 'executions/a.csv': '', 'executions/b.jsonl': '', 'executions/c.parquet': '', 'executions/d.csv.gz': '', 'executions/e.csv.gz': gzipSync(Buffer.alloc(0)) }));
    expect(entries(r)).toEqual(['a.csv', 'c.parquet', 'd.csv.gz'].map((f) => ({ file: `executions/${f}`, row: null, line: null, column: null, rule: 'empty_file' }))
      .concat([{ file: 'executions/e.csv.gz', row: null, line: null, column: null, rule: 'empty_file' }]));
    expect(datasetOf(r, 'executions').files.find((f) => f.path === 'executions/b.jsonl')).toMatchObject({ size: 0, rows: 0, quarantined: 0 });
  });

  it('a header-only file is zero rows, not a fault; so is one with trailing blank lines', async () => {
    const r = await load(root({ 'executions/a.csv': `${header}\n`, 'executions/b.csv': `${header}\r\n\r\n\n`, 'executions/c.csv': header }));
    expect(entries(r)).toEqual([]);
    expect(datasetOf(r, 'executions').records_read).toBe(0);
  });

  it('a blank line between records is quarantined (it is a record with no fields)', async () => {
    const r = await load(root({ 'executions/x.csv': [header, rows[0], '', rows[1]].join('\n') + '\n' }));
    expect(entries(r)).toEqual([{ file: 'executions/x.csv', row: 2, line: 3, column: null, rule: 'blank_line' }]);
    expect(datasetOf(r, 'executions').records_loaded).toBe(2);
  });

  it('invalid UTF-8 quarantines only its record, naming the column', async () => {
    const bad = Buffer.concat([Buffer.from(`${header}\n${rows[0]}\n`), Buffer.from(rows[1].replace('ACC-1', 'ACC-\u0001')).map((b) => (b === 1 ? 0xff : b)), Buffer.from(`\n${rows[2]}\n`)]);
    const r = await load(root({ 'executions/x.csv': bad }));
    expect(entries(r)).toEqual([{ file: 'executions/x.csv', row: 2, line: 3, column: 'account_id', rule: 'invalid_utf8' }]);
    expect(r.quarantine[0].raw).toBe(rows[1].replace('ACC-1', 'ACC-\ufffd'));
    expect(datasetOf(r, 'executions').records_loaded).toBe(2);
  });

  it('a UTF-8 sequence cut by the end of the file is invalid UTF-8', async () => {
    const r = await load(root({ 'executions/x.csv': Buffer.concat([Buffer.from(`${header}\n${rows[0]}`), Buffer.from([0xe2, 0x82])]) }));
    expect(entries(r)).toEqual([{ file: 'executions/x.csv', row: 1, line: 2, column: 'ingested_at', rule: 'invalid_utf8' }]);
  });

  it('NUL bytes: in a value, in free text and in the header', async () => {
    const reason = ['2026-11-02T10:00:00Z', 'INT-0001', 'ops', 'a\u0000b'];
    const r = await load(root({
      'executions/x.csv': [header, rows[0].replace('XNYS', 'XN\u0000YS')].join('\n') + '\n',
      'notification_exceptions/x.csv': ['approved_at,intent_id,approved_by,reason', csvLine(reason)].join('\n') + '\n',
      'orders/x.csv': `accepted_at,order\u0000_id\n`,
    }));
    expect(entries(r)).toEqual([
      { file: 'orders/x.csv', row: null, line: 1, column: null, rule: 'csv_header' },
      { file: 'executions/x.csv', row: 1, line: 2, column: 'venue_id', rule: 'id_character' },
      { file: 'notification_exceptions/x.csv', row: 1, line: 2, column: 'reason', rule: 'text_nul' },
    ]);
  });

  it('a 10 MB line loads when valid and is quarantined when not; past 64 MiB it is refused without being held', async () => {
    const long = 'x'.repeat(10 * 1024 * 1024);
    const exc = ['approved_at,intent_id,approved_by,reason', csvLine(['2026-11-02T10:00:00Z', 'INT-0001', 'ops', long])].join('\n') + '\n';
    const badQty = [header, rows[0].replace(/,BUY,11,/, `,BUY,${'1'.repeat(10 * 1024 * 1024)},`), rows[1]].join('\n') + '\n';
    const r = await load(root({ 'notification_exceptions/x.csv': exc, 'executions/x.csv': badQty }));
    expect(entries(r)).toEqual([{ file: 'executions/x.csv', row: 1, line: 2, column: 'fill_qty', rule: 'decimal_precision' }]);
    expect(await query(`SELECT length(reason)::VARCHAR FROM notification_exceptions`)).toEqual([[String(long.length)]]);
    const huge = [header, `${rows[0]},${'y'.repeat(MAX_RECORD_BYTES)}`, rows[1]].join('\n') + '\n';
    const r2 = await load(root({ 'executions/x.csv': huge }));
    expect(entries(r2)).toEqual([{ file: 'executions/x.csv', row: 1, line: 2, column: null, rule: 'record_too_large' }]);
    expect(r2.quarantine[0].raw.length).toBeLessThanOrEqual(64 * 1024 + 1);
    expect(datasetOf(r2, 'executions').records_loaded).toBe(1);
  });

  it('a file whose 150,000 records are all bad: every one quarantined and counted, no crash', async () => {
    const bad = day.executions.rows[0].map((v) => (v === 'BUY' ? 'buy' : v));
    const text = `${header}\n${Array.from({ length: 150_000 }, (_, k) => csvLine(bad.map((v, i) => (i === 1 ? `EXE-${k}` : v)))).join('\n')}\n`;
    const r = await load(root({ 'executions/x.csv': text }));
    expect(r.quarantine).toHaveLength(150_000);
    expect(r.quarantine[149_999]).toMatchObject({ row: 150_000, line: 150_001, column: 'side', rule: 'enum_value' });
    expect(datasetOf(r, 'executions')).toMatchObject({ records_read: 150_000, records_loaded: 0, quarantined: 150_000 });
  });

  it('a missing required column quarantines every row; a duplicated column too; extra columns are listed', async () => {
    const t = day.executions;
    const noPrice: Table = { header: t.header.filter((h) => h !== 'price'), rows: t.rows.map((r) => r.filter((_, i) => t.header[i] !== 'price')) };
    const dup: Table = { header: [...t.header, 'side'], rows: t.rows.map((r) => [...r, 'BUY']) };
    const extra: Table = { header: ['note', ...t.header.slice().reverse()], rows: t.rows.map((r) => ['hello', ...r.slice().reverse()]) };
    const r = await load(root({ 'executions/a.csv': csvText(noPrice), 'executions/b.csv': csvText(dup), 'executions/c.csv': csvText(extra) }));
    expect(entries(r)).toEqual([
      ...[1, 2, 3].map((n) => ({ file: 'executions/a.csv', row: n, line: n + 1, column: 'price', rule: 'file_missing_column' })),
      ...[1, 2, 3].map((n) => ({ file: 'executions/b.csv', row: n, line: n + 1, column: 'side', rule: 'header_duplicate_column' })),
    ]);
    expect(datasetOf(r, 'executions').extra_columns).toEqual(['note']);
    expect(datasetOf(r, 'executions').records_loaded).toBe(3);
  });

  it('a file with CR-only line ends cannot be split: one entry for the file, not an empty dataset', async () => {
    const r = await load(root({ 'executions/x.csv': csvText(day.executions).replace(/\n/g, '\r') }));
    expect(entries(r)).toEqual([{ file: 'executions/x.csv', row: null, line: 1, column: null, rule: 'csv_header' }]);
  });

  it('a blank header row is one entry for the file', async () => {
    const r = await load(root({ 'executions/x.csv': `\n${rows[0]}\n` }));
    expect(entries(r)).toEqual([{ file: 'executions/x.csv', row: null, line: 1, column: null, rule: 'csv_header' }]);
  });
});

describe('valid but unusual input stays valid', () => {
  it('quoted fields hold newlines, commas and quotes; CRLF and a BOM; rows and lines stay exact', async () => {
    const reason = 'line one\r\nline "two", with comma\nthree';
    const text = '\ufeffapproved_at,intent_id,approved_by,reason\r\n'
      + `2026-11-02T10:00:00Z,INT-0001,ops,${csvLine([reason])}\r\n`
      + `2026-11-02T10:00:01Z,INT-0002,ops,"short"\r\n`
      + `2026-11-02T10:00:02Z,INT-0003,ops,a,b\r\n`
      + `"2026-11-02T10:00:03Z","INT-0004","ops",""\r\n`;
    const r = await load(root({ 'notification_exceptions/x.csv': text }));
    expect(entries(r)).toEqual([
      { file: 'notification_exceptions/x.csv', row: 3, line: 6, column: null, rule: 'field_count' },
      // "" is empty, and reason is required.
      { file: 'notification_exceptions/x.csv', row: 4, line: 7, column: 'reason', rule: 'required_empty' },
    ]);
    expect(await query(`SELECT intent_id, reason FROM notification_exceptions ORDER BY intent_id`)).toEqual([
      ['INT-0001', reason], ['INT-0002', 'short'],
    ]);
  });

  it('an exact duplicate delivery counts once (the earliest ingested_at kept); a differing record does not collapse', async () => {
    const t = day.executions;
    const later = withValue(t, 1, 'ingested_at', '2026-11-02T12:00:00Z');
    const r = await load(root({ 'executions/a.csv': csvText(t), 'executions/b.csv': csvText(later) }));
    expect(entries(r)).toEqual([]);
    expect(datasetOf(r, 'executions')).toMatchObject({ records_read: 6, records_loaded: 3, duplicates: 3 });
    expect(await query(`SELECT ingested_at::VARCHAR FROM executions WHERE execution_id = 'EXE-0001'`)).toEqual([['2026-11-02 09:01:02.5']]);
    // The derived watermark (no _watermark.json) is read after the collapse: the redelivery at
    // 12:00 does not move it past the latest record as loaded (README, "Derived watermarks").
    expect(datasetOf(r, 'executions').watermark).toMatchObject({ source: 'derived', value: '2026-11-02T09:03:02.500000Z' });
  });

  it('equal instants in different offsets are one delivery; 17 = 17.0', async () => {
    const a = withValue(withValue(day.executions, 1, 'executed_at', '2026-11-02T10:01:02+01:00'), 1, 'fill_qty', '11.0');
    const r = await load(root({ 'executions/a.csv': csvText(day.executions), 'executions/b.csv': csvText(a) }));
    expect(datasetOf(r, 'executions')).toMatchObject({ records_read: 6, records_loaded: 3, duplicates: 3 });
  });

  it('gzip-compressed CSV and JSON Lines read like plain files', async () => {
    const r = await load(root({ 'executions/a.csv.gz': gzipSync(csvText(day.executions)), 'orders/b.jsonl.gz': gzipSync(day.orders.rows.map((row) => JSON.stringify(Object.fromEntries(day.orders.header.map((h, i) => [h, row[i]])))).join('\n')) }));
    expect(entries(r)).toEqual([]);
    expect(datasetOf(r, 'executions').records_loaded).toBe(3);
    expect(datasetOf(r, 'orders').records_loaded).toBe(9);
    expect(datasetOf(r, 'executions').files[0].format).toBe('csv.gz');
  });
});

describe('gzip faults', () => {
  it('a truncated gzip: records before the cut load, one entry says where reading stopped', async () => {
    const big: Table = { header: day.executions.header, rows: Array.from({ length: 3000 }, (_, k) => withValue(day.executions, 1, 'execution_id', `EXE-${k}`).rows[0]) };
    const gz = gzipSync(csvText(big));
    const r = await load(root({ 'executions/x.csv.gz': gz.subarray(0, Math.floor(gz.length * 0.6)) }));
    const e = entries(r);
    expect(e).toHaveLength(1);
    expect(e[0]).toMatchObject({ file: 'executions/x.csv.gz', column: null, rule: 'gzip_truncated' });
    const loaded = datasetOf(r, 'executions').records_loaded;
    expect(loaded).toBeGreaterThan(0);
    expect(loaded).toBeLessThan(3000);
    expect(e[0].row).toBe(loaded + 1);
  });

  it('a file named .csv.gz that is not gzip is one entry naming the file', async () => {
    const r = await load(root({ 'executions/x.csv.gz': csvText(day.executions) }));
    expect(entries(r)).toEqual([{ file: 'executions/x.csv.gz', row: 1, line: 1, column: null, rule: 'gzip_unreadable' }]);
  });
});

describe('JSON Lines', () => {
  const line = (o: Record<string, unknown>) => JSON.stringify(o);
  const exec = Object.fromEntries(day.executions.header.map((h, i) => [h, day.executions.rows[0][i]]));
  it('lines that are not JSON or not objects, fractional ints, exponents, wrong types, lone surrogates, blank lines', async () => {
    const lines = [
      line(exec),
      '{"executed_at": "2026-11-02T09:01:02Z", oops}',
      '[1,2]',
      line(exec).replace('"execution_seq":"1"', '"execution_seq":1.5'),
      line(exec).replace('"fill_qty":"11"', '"fill_qty":1e1'),
      line(exec).replace('"account_id":"ACC-1"', '"account_id":17'),
      line(exec).replace('"account_id":"ACC-1"', '"account_id":"ACC-\\ud800"'),
      '',
      line(exec).replace('"fill_qty":"11"', '"fill_qty":NaN'),
      line({ ...exec, execution_id: 'EXE-9', execution_seq: 1 }).replace('"execution_seq":1', '"execution_seq":12345678901234567890123'),
      line({ ...exec, execution_id: 'EXE-8', note: 'extra key' }).replace('"fill_qty":"11"', '"fill_qty":11.000'),
      '',
    ];
    const r = await load(root({ 'executions/x.jsonl': lines.join('\r\n') }));
    expect(entries(r)).toEqual([
      { file: 'executions/x.jsonl', row: 2, line: 2, column: null, rule: 'jsonl_not_json' },
      { file: 'executions/x.jsonl', row: 3, line: 3, column: null, rule: 'jsonl_not_object' },
      { file: 'executions/x.jsonl', row: 4, line: 4, column: 'execution_seq', rule: 'int_fractional' },
      { file: 'executions/x.jsonl', row: 5, line: 5, column: 'fill_qty', rule: 'decimal_form' },
      { file: 'executions/x.jsonl', row: 6, line: 6, column: 'account_id', rule: 'jsonl_type' },
      { file: 'executions/x.jsonl', row: 7, line: 7, column: 'account_id', rule: 'jsonl_invalid_unicode' },
      { file: 'executions/x.jsonl', row: 8, line: 8, column: null, rule: 'jsonl_blank_line' },
      { file: 'executions/x.jsonl', row: 9, line: 9, column: null, rule: 'jsonl_not_json' },
      { file: 'executions/x.jsonl', row: 10, line: 10, column: 'execution_seq', rule: 'int_range' },
    ]);
    expect(await query(`SELECT execution_id, fill_qty::VARCHAR FROM executions ORDER BY 1`)).toEqual([['EXE-0001', '11.000000000000000000'], ['EXE-8', '11.000000000000000000']]);
    expect(datasetOf(r, 'executions').extra_columns).toEqual(['note']);
  });

  it('big JSON numbers are read from their text, never through a float; a BOM is accepted', async () => {
    const post = Object.fromEntries(day.ledger_postings.header.map((h, i) => [h, day.ledger_postings.rows[0][i]]));
    const text = `\ufeff${line(post).replace('"amount_minor":"110550"', '"amount_minor":12345678901234567890123456789012345678')}\n`;
    const r = await load(root({ 'ledger_postings/x.jsonl': text }));
    expect(entries(r)).toEqual([]);
    expect(await query(`SELECT amount_minor::VARCHAR FROM ledger_postings`)).toEqual([['12345678901234567890123456789012345678']]);
  });
});

describe('Parquet', () => {
  const execSelect = (price: string) => `SELECT TIMESTAMPTZ '2026-11-02 09:01:02+00' AS executed_at, 'EXE-0001' AS execution_id, 'ORD-0001' AS order_id,
    'ACC-1' AS account_id, 'XNYS' AS venue_id, 'VF-0001' AS venue_fill_id, 'US-ACME' AS instrument_id, 'BUY' AS side, 11::DECIMAL(10,2) AS fill_qty,
    ${price} AS price, 'USD' AS price_currency, 1::BIGINT AS execution_seq, TIMESTAMPTZ '2026-11-02 09:01:02.5+00' AS ingested_at`;

  it('DECIMAL and TIMESTAMPTZ columns load exactly', async () => {
    const dir = root({});
    await parquet(join(dir, 'executions/x.parquet'), execSelect('100.50::DECIMAL(12,4)'));
    const r = await load(dir);
    expect(entries(r)).toEqual([]);
    expect(await query(`SELECT price::VARCHAR, notional_minor::VARCHAR, ingested_at::VARCHAR FROM executions`)).toEqual([['100.500000000000000000', '110550', '2026-11-02 09:01:02.5']]);
  });

  it('a FLOAT or DOUBLE money column refuses the file; a missing column quarantines every row', async () => {
    const dir = root({});
    await parquet(join(dir, 'executions/a.parquet'), execSelect('100.5::DOUBLE'));
    await parquet(join(dir, 'executions/b.parquet'), execSelect('100.5::FLOAT'));
    await parquet(join(dir, 'executions/c.parquet'), `SELECT * EXCLUDE (price) FROM (${execSelect('1')}) UNION ALL SELECT * EXCLUDE (price) FROM (${execSelect('1')})`);
    const posts = `SELECT TIMESTAMPTZ '2026-11-02 09:01:02+00' AS effective_at, 'PS-1' AS posting_set_id, 1 AS leg, 'ACC-1' AS account_id, 'USD' AS currency,
      'DEBIT' AS direction, 5.0::DOUBLE AS amount_minor, 'FEE' AS kind, 1 AS ledger_seq, TIMESTAMPTZ '2026-11-02 09:01:03+00' AS posted_at`;
    await parquet(join(dir, 'ledger_postings/a.parquet'), posts);
    const r = await load(dir);
    expect(entries(r)).toEqual([
      { file: 'executions/a.parquet', row: null, line: null, column: null, rule: 'parquet_float_column' },
      { file: 'executions/b.parquet', row: null, line: null, column: null, rule: 'parquet_float_column' },
      { file: 'executions/c.parquet', row: 1, line: 1, column: 'price', rule: 'file_missing_column' },
      { file: 'executions/c.parquet', row: 2, line: 2, column: 'price', rule: 'file_missing_column' },
      { file: 'ledger_postings/a.parquet', row: null, line: null, column: null, rule: 'parquet_float_column' },
    ]);
  });

  it('a truncated or fake Parquet file is one entry naming it', async () => {
    const dir = root({ 'executions/fake.parquet': 'PAR1 this is not parquet' });
    await parquet(join(dir, 'executions/t.parquet'), execSelect('100.50::DECIMAL(12,4)'));
    const full = (await import('node:fs')).readFileSync(join(dir, 'executions/t.parquet'));
    writeFileSync(join(dir, 'executions/t.parquet'), full.subarray(0, full.length - 30));
    const r = await load(dir);
    expect(entries(r)).toEqual([
      { file: 'executions/fake.parquet', row: null, line: null, column: null, rule: 'parquet_unreadable' },
      { file: 'executions/t.parquet', row: null, line: null, column: null, rule: 'parquet_unreadable' },
    ]);
  });
});

describe('file names and links: never SQL, never outside the source root', () => {
  const names = [`a'; DROP TABLE x; --.csv`, 'quote"d.csv', 'semi;colon.csv', 'new\nline.csv', 'glob[1]*.csv', 'back\\slash.csv', "it's $(rm -rf).csv"];
  it.each(names)('%j is read as data (CSV and Parquet)', async (name) => {
    const dir = root({ [`executions/${name}`]: csvText(day.executions) });
    const pq = name.replace(/\.csv$/, '.parquet');
    await parquet(join(dir, 'positions', pq), `SELECT TIMESTAMPTZ '2026-11-02 00:00:00+00' AS as_of, 'ACC-1' AS account_id, 'US-ACME' AS instrument_id, 0::DECIMAL(10,0) AS quantity, 0::BIGINT AS cost_minor, 'USD' AS cost_currency`);
    const r = await load(dir);
    expect(entries(r)).toEqual([]);
    expect(datasetOf(r, 'executions').files.map((f) => [f.path, f.rows, f.loaded])).toEqual([[`executions/${name}`, 3, 3]]);
    expect(datasetOf(r, 'positions').files.map((f) => [f.path, f.rows])).toEqual([[`positions/${pq}`, 1]]);
    expect(await query(`SELECT count(*)::VARCHAR FROM executions`)).toEqual([['3']]);
    expect(await query(`SELECT DISTINCT _source FROM positions`)).toEqual([[`positions/${pq}:000000000001`]]);
  });

  it('a link that leads outside the source root is refused (data file, watermark, dataset folder); a link inside is read', async () => {
    const outside = root({ 'secret.csv': csvText(day.executions), '_watermark.json': '{"watermark": "SECRET-CONTENT"}', 'orders/part.csv': csvText(day.orders) });
    const dir = root({ 'executions/real.csv': csvText(day.executions) });
    symlinkSync(join(outside, 'secret.csv'), join(dir, 'executions/out.csv'));
    symlinkSync('../executions/real.csv', join(dir, 'executions/in.csv'));
    mkdirSync(join(dir, 'ledger_postings'));
    symlinkSync(join(outside, '_watermark.json'), join(dir, 'ledger_postings/_watermark.json'));
    symlinkSync(join(outside, 'orders'), join(dir, 'orders'));
    symlinkSync(join(dir, 'nowhere'), join(dir, 'executions/dangling.csv'));
    const r = await load(dir);
    expect(entries(r)).toEqual([
      { file: 'orders', row: null, line: null, column: null, rule: 'link_outside_source_root' },
      { file: 'executions/dangling.csv', row: null, line: null, column: null, rule: 'file_unreadable' },
      { file: 'executions/out.csv', row: null, line: null, column: null, rule: 'link_outside_source_root' },
      { file: 'ledger_postings/_watermark.json', row: null, line: null, column: null, rule: 'link_outside_source_root' },
    ]);
    expect(JSON.stringify(r.quarantine)).not.toContain('SECRET');
    expect(datasetOf(r, 'executions')).toMatchObject({ records_read: 6, records_loaded: 3, duplicates: 3 });
  });

  it('a dataset path that is a file is quarantined, not an empty dataset; a FIFO named .csv is ignored, never read', async () => {
    const dir = root({ orders: 'not a folder' });
    mkdirSync(join(dir, 'executions'));
    execFileSync('mkfifo', [join(dir, 'executions/pipe.csv')]);
    const r = await load(dir);
    expect(entries(r)).toEqual([{ file: 'orders', row: null, line: null, column: null, rule: 'dataset_unreadable' }]);
    expect(datasetOf(r, 'executions').ignored_files).toEqual(['executions/pipe.csv']);
  });

  it('an unreadable or malformed _watermark.json is quarantined as a file', async () => {
    const r = await load(root({
      'orders/_watermark.json': '{"watermark": "2026-11-03T00:05:00"}',
      'executions/_watermark.json': Buffer.from([0x7b, 0xff, 0x7d]),
      'ledger_postings/_watermark.json': 'not json',
      'positions/_watermark.json': '{"watermark": "2026-11-03T00:05:00Z", "sequence": 1.5}',
    }));
    expect(entries(r).map((e) => [e.file, e.rule])).toEqual([
      ['orders/_watermark.json', 'watermark_timestamp_without_zone'],
      ['executions/_watermark.json', 'watermark_unreadable'],
      ['ledger_postings/_watermark.json', 'watermark_not_json'],
      ['positions/_watermark.json', 'watermark_sequence'],
    ]);
    expect(datasetOf(r, 'orders').quarantined).toBe(1);
  });
});

describe('row and line numbering', () => {
  it('row = data record number, line = physical line where the record starts (quoted newlines, CRLF)', async () => {
    const recs = [
      ['2026-11-02T10:00:00Z', 'INT-1', 'ops', 'one\ntwo\nthree'],
      ['2026-11-02T10:00:00Z', 'INT-2', 'ops', 'x\r\ny'],
      ['2026-11-02T10:00:00', 'INT-3', 'ops', 'bad ts'],
      ['2026-11-02T10:00:00Z', 'INT-4', 'ops', 'p\nq'],
      ['2026-11-02T10:00:00Z', ' INT-5', 'ops', 'bad id'],
    ];
    for (const eol of ['\n', '\r\n']) {
      const text = ['approved_at,intent_id,approved_by,reason', ...recs.map(csvLine)].join(eol) + eol;
      const r = await load(root({ 'notification_exceptions/x.csv': text }));
      expect(entries(r)).toEqual([
        // Lines: header 1, row 1 on 2–4, row 2 on 5–6, row 3 on 7, row 4 on 8–9, row 5 on 10.
        { file: 'notification_exceptions/x.csv', row: 3, line: 7, column: 'approved_at', rule: 'timestamp_without_zone' },
        { file: 'notification_exceptions/x.csv', row: 5, line: 10, column: 'intent_id', rule: 'id_whitespace' },
      ]);
    }
  });
});
