/**
 * The records behind each difference (issue 19; docs/records.md), on the bundled sample day: for
 * one difference of every kind, `reckon records --break B` prints the raw source row of every
 * record on every side, read back from the sample day's files with their SHA-256 checked; the
 * `difference_records` output reads back in DuckDB with the SHA-256 its manifest recorded and
 * holds every record the manifest counts; the manifest lists the first RECORDS_LISTED of each.
 * Then what happens when inputs or the output are gone or changed, and the quarantine of a run
 * (`reckon quarantine list|show`). The CLI runs in process (reckonIn).
 */
import { chmodSync, cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../pipeline/core/digest.js';
import { RECORDS_LISTED } from '../pipeline/controls/records.js';
import { reckonIn, scratchDir } from './helpers/cli.js';
import { withDuck } from './helpers/duckdb.js';
import { SAMPLE_DAY as DAY } from './fixtures/days.js';

const DIGEST = 'fdf7739e05ddf63f23b01bced7e0dadb3c86e4647850616ddebae256689e84f3';

/**
 * Per kind, its first difference in the sample day (by key) and the records behind it as
 * `side:dataset×count`, reviewed against the injected faults of docs/fixtures.md: a missing side
 * has no record (FILL_MISSING_INTERNAL has no execution), an aggregate side lists what it sums.
 */
const EXPECTED: Record<string, [key: string, records: string]> = {
  ACCEPTED_WITHOUT_ROUTE: ['ORD-000138', 'order:orders×1'],
  ORDER_FILL_STATE_MISMATCH: ['ORD-000163', 'execution:executions×2 order:orders×4'],
  ORDER_VERSION_CONFLICT: ['ORD-000130|2', 'order:orders×2'],
  ORDER_VERSION_GAP: ['ORD-000121', 'order:orders×3'],
  OUTBOX_UNPUBLISHED: ['ORD-000146', 'order:orders×2 outbox:outbox_events×1'],
  EXECUTION_DUPLICATE: ['XTKS|VF-000196-1', 'internal:executions×2 venue:venue_fills×1'],
  EXECUTION_UNKNOWN_ORDER: ['EXE-000221-1', 'internal:executions×1 order:orders×1'],
  FILL_MISSING_INTERNAL: ['XTKS|VF-000180-2', 'venue:venue_fills×1'],
  FILL_MISSING_VENUE: ['XNAS|VF-000188-2', 'internal:executions×1'],
  FILL_PRICE_MISMATCH: ['XETR|VF-000213-1', 'internal:executions×1 venue:venue_fills×1'],
  FILL_QTY_MISMATCH: ['XTKS|VF-000205-1', 'internal:executions×1 venue:venue_fills×1'],
  ORDER_OVERFILL: ['ORD-000230', 'internal:executions×2 order:orders×5'],
  VENUE_SEQUENCE_GAP: ['XLON|59', 'venue:venue_fills×2'],
  BALANCE_ROLLFORWARD_MISMATCH: ['ACC-000002|EUR', 'closing:account_balances×1 ledger:ledger_postings×22 opening:account_balances×1'],
  EXECUTION_MULTIPLE_POSTINGS: ['EXE-000271-1', 'execution:executions×1 ledger:ledger_postings×4'],
  EXECUTION_WITHOUT_POSTING: ['EXE-000255-2', 'execution:executions×1'],
  POSTING_AMOUNT_MISMATCH: ['EXE-000280-1', 'execution:executions×1 ledger:ledger_postings×2'],
  POSTING_SET_UNBALANCED: ['PS-F000246-1|JPY', 'credit:ledger_postings×1 debit:ledger_postings×1'],
  RESERVATION_MISMATCH: ['ACC-000004|GBP', 'reservation:reservations×2 snapshot:account_balances×1'],
  BANK_CASH_MISMATCH: ['ST-DEUT-2026-11-02', 'ledger:ledger_postings×5 line:bank_statement_lines×5 statement:bank_statements×1'],
  BANK_LINE_UNMATCHED: ['ST-DEUT-2026-11-02|L00001', 'ledger:ledger_postings×1 line:bank_statement_lines×1'],
  CUSTODIAN_POSITION_MISMATCH: ['CUST-EU|ACC-000003|DE-SAPG|2026-11-02', 'custodian:custodian_positions×1 execution:executions×6'],
  LEDGER_CASH_UNMATCHED: ['PS-C00000', 'ledger:ledger_postings×1 statement:bank_statements×1'],
  STATEMENT_ROLLFORWARD_MISMATCH: ['ST-BARC-2026-11-02', 'line:bank_statement_lines×3 statement:bank_statements×1'],
  STATEMENT_SEQUENCE_GAP: ['CITI|BANK-USD2|100', 'statement:bank_statements×2'],
  PROJECTION_COST_MISMATCH: ['ACC-000004|DE-SAPG', 'authority:executions×6 authority:positions×1 projection:portfolio_projection×1'],
  PROJECTION_KEY_EXTRA: ['ACC-CLOSED|GB-BARC', 'projection:portfolio_projection×1'],
  PROJECTION_KEY_MISSING: ['ACC-000005|JP-7203', 'authority:executions×10'],
  PROJECTION_POSITION_MISMATCH: ['ACC-000002|JP-7203', 'authority:executions×3 authority:positions×1 projection:portfolio_projection×1'],
  PROJECTION_STALE: ['BUILD-20261102-02', 'projection:portfolio_projection×1'],
  NOTICE_DUPLICATE_RECEIPT: ['INT-000296', 'intent:notification_intents×1 receipt:notification_receipts×2'],
  NOTICE_RECEIPT_UNKNOWN_INTENT: ['RCP-GHOST-1', 'receipt:notification_receipts×1'],
  NOTICE_UNDELIVERED: ['INT-000288', 'intent:notification_intents×1 receipt:notification_receipts×1'],
};

interface Shown { side: string; dataset: string; file: string; record_number: number; record_key: string; source: { state: string; line?: number; raw?: string; header?: string[] | null; message?: string } }
type Diff = { kind: string; key: string; break_id: string; record_count: number; records: Omit<Shown, 'source'>[] };

const tally = (records: readonly { side: string; dataset: string }[]) => {
  const n = new Map<string, number>();
  for (const r of records) n.set(`${r.side}:${r.dataset}`, (n.get(`${r.side}:${r.dataset}`) ?? 0) + 1);
  return [...n].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => `${k}×${v}`).join(' ');
};

describe('the records behind the sample day’s differences', () => {
  const tmp = scratchDir('reckon-records-');
  const store = join(tmp.dir, 'store');
  let run: { run_id: string; results_digest: string; manifest: { path: string }; controls: { control_id: string; differences: Diff[] }[] };
  let diffs: Diff[];

  beforeAll(async () => {
    const r = await reckonIn(['run', '--date', '2026-11-02', '--sources', DAY, '--store', store, '--json', '--quiet']);
    expect(r.code).toBe(1);
    run = r.json;
    diffs = run.controls.flatMap((c) => c.differences);
  });
  afterAll(() => tmp.cleanup());

  it('keeps the results digest: the records are not part of it', () => {
    expect(run.results_digest).toBe(DIGEST);
    expect(diffs).toHaveLength(41);
  });

  it('lists the first RECORDS_LISTED records of each difference in --json and the manifest, a record of each side first', () => {
    const manifest = JSON.parse(readFileSync(run.manifest.path, 'utf8'));
    const inManifest = manifest.results.flatMap((c: { differences: Diff[] }) => c.differences);
    for (const d of diffs) {
      expect(d.records.length, `${d.kind} ${d.key}`).toBe(Math.min(d.record_count, RECORDS_LISTED));
    }
    expect(inManifest.map((d: Diff) => [d.kind, d.key, d.record_count, d.records])).toEqual(diffs.map((d) => [d.kind, d.key, d.record_count, d.records]));
    const qty = diffs.find((d) => d.kind === 'FILL_QTY_MISMATCH')!;
    expect(qty.records).toEqual([
      { side: 'internal', dataset: 'executions', file: 'executions/part-00001.jsonl', record_number: 262, record_key: 'EXE-000205-1' },
      { side: 'venue', dataset: 'venue_fills', file: 'venue_fills/part-00001.csv', record_number: 261, record_key: 'XTKS|VF-000205-1' },
    ]);
    expect(diffs.find((d) => d.kind === 'POSTING_SET_UNBALANCED')!.records).toEqual([
      { side: 'credit', dataset: 'ledger_postings', file: 'ledger_postings/part-00001.csv', record_number: 828, record_key: 'PS-F000246-1|2' },
      { side: 'debit', dataset: 'ledger_postings', file: 'ledger_postings/part-00001.csv', record_number: 827, record_key: 'PS-F000246-1|1' },
    ]);
  });

  it('writes difference_records, which reads back in DuckDB with the manifest’s SHA-256 and holds every record counted', async () => {
    const manifest = JSON.parse(readFileSync(run.manifest.path, 'utf8'));
    const out = manifest.outputs.find((o: { table: string }) => o.table === 'difference_records');
    const path = join(store, out.key);
    expect(sha256Hex(readFileSync(path))).toBe(out.sha256);
    await withDuck(async (conn) => {
      const rows = (await conn.runAndReadAll(`SELECT kind, key, side, dataset, file, record_number, record_key, control_id, run_id FROM read_parquet('${path}', hive_partitioning = false)`)).getRowObjectsJson();
      expect(rows.length).toBe(out.rows);
      expect(rows.length).toBe(diffs.reduce((n, d) => n + d.record_count, 0));
      expect(rows.length).toBe(156);
      expect(new Set(rows.map((r) => r.run_id))).toEqual(new Set([manifest.run_id]));
      const types = (await conn.runAndReadAll(`SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet('${path}', hive_partitioning = false)) WHERE column_name IN ('record_number', 'window_start')`)).getRowObjectsJson();
      expect(types).toEqual([{ column_name: 'window_start', column_type: 'TIMESTAMP' }, { column_name: 'record_number', column_type: 'BIGINT' }]);
      for (const [kind, [key, expected]] of Object.entries(EXPECTED)) {
        expect(tally(rows.filter((r) => r.kind === kind && r.key === key).map((r) => ({ side: String(r.side), dataset: String(r.dataset) }))), kind).toBe(expected);
      }
      for (const d of diffs) {
        // Each record listed is in the output, and the first listed show every side (up to the bound).
        const all = rows.filter((r) => r.kind === d.kind && r.key === d.key);
        for (const x of d.records) expect(all.some((r) => r.file === x.file && Number(r.record_number) === x.record_number && r.side === x.side)).toBe(true);
        expect(new Set(d.records.map((x) => x.side)).size, `${d.kind} ${d.key}`).toBe(Math.min(new Set(all.map((r) => r.side)).size, RECORDS_LISTED));
      }
    });
  });

  it('covers every difference kind of CONTRACT §4 that the sample day injects (all 33)', () => {
    expect(new Set(diffs.map((d) => d.kind))).toEqual(new Set(Object.keys(EXPECTED)));
  });

  for (const [kind, [key, expected]] of Object.entries(EXPECTED)) {
    it(`reckon records --break prints the source row of every record of ${kind} ${key}`, async () => {
      const d = diffs.find((x) => x.kind === kind && x.key === key)!;
      const r = await reckonIn(['records', '--break', d.break_id, '--store', store, '--json']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.json).toMatchObject({ kind, key, break_id: d.break_id, complete: true, record_count: d.record_count, from: { state: 'verified' } });
      const shown: Shown[] = r.json.records;
      expect(tally(shown)).toBe(expected);
      for (const s of shown) {
        expect(s.source.state, `${s.file} ${s.record_number}`).toBe('verified');
        // The row read back is the record named: its key's first part is in its text.
        expect(s.source.raw).toContain(s.record_key.split('|')[s.dataset === 'venue_fills' ? 1 : 0]);
      }
      const text = await reckonIn(['records', '--break', d.break_id, '--store', store]);
      expect(text.code).toBe(0);
      for (const s of shown) expect(text.stdout).toContain(`    record  ${s.source.raw!.slice(0, 60)}`);
    });
  }

  it('prints the CSV header with a CSV row, the JSON line as written, and the records in breaks show', async () => {
    const d = diffs.find((x) => x.kind === 'FILL_QTY_MISMATCH')!;
    const r = await reckonIn(['records', '--run', 'latest', '--kind', 'FILL_QTY_MISMATCH', '--key', 'XTKS|VF-000205-1', '--store', store]);
    expect(r.stdout).toContain([
      'internal  executions  executions/part-00001.jsonl  record 262  EXE-000205-1',
      '    record  {"executed_at":"2026-11-02T12:39:18.262825Z","execution_id":"EXE-000205-1","order_id":"ORD-000205","account_id":"ACC-000006","venue_id":"XTKS","venue_fill_id":"VF-000205-1","instrument_id":"JP-7203","side":"SELL","fill_qty":1235,"price":2750.4,"price_currency":"JPY","execution_seq":1,"ingested_at":"2026-11-02T12:39:20.330892Z"}',
      '',
      'venue  venue_fills  venue_fills/part-00001.csv  record 261 (line 262)  XTKS|VF-000205-1',
      '    header  venue_time_local,venue_timezone,venue_id,venue_fill_id,order_id,instrument_id,side,fill_qty,price,price_currency,venue_seq,file_id',
      '    record  2026-11-02T21:39:18.262825,Asia/Tokyo,XTKS,VF-000205-1,ORD-000205,JP-7203,SELL,1236,2750.4,JPY,73,XTKS-20261102',
    ].join('\n'));
    const show = await reckonIn(['breaks', 'show', d.break_id, '--store', store]);
    expect(show.stdout).toMatch(/records \(run run-[a-z0-9-]+: 2; reckon records --break brk-[0-9a-f]{24} --store \S+ prints their source rows\):\n {2}internal {2}executions {3}executions\/part-00001.jsonl {2}record 262 {2}EXE-000205-1\n {2}venue {5}venue_fills {2}venue_fills\/part-00001.csv {3}record 261 {2}XTKS\|VF-000205-1\n/);
    const json = await reckonIn(['breaks', 'show', d.break_id, '--store', store, '--json']);
    expect(json.json.records).toMatchObject({ record_count: 2, listed: d.records });
    const limited = await reckonIn(['records', '--run', 'latest', '--kind', 'BALANCE_ROLLFORWARD_MISMATCH', '--key', 'ACC-000002|EUR', '--store', store, '--limit', '3']);
    expect(limited.stdout.match(/^(closing|opening|ledger) {2}/gm)).toEqual(['closing  ', 'ledger  ', 'opening  ']);
    expect(limited.stdout).toContain('… 21 more record(s) not printed (--limit 0 prints every one)');
  });

  it('refuses a difference the run does not have, and a bad --limit (exit 2)', async () => {
    const r = await reckonIn(['records', '--run', 'latest', '--kind', 'FILL_QTY_MISMATCH', '--key', 'NOPE', '--store', store]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/run run-[a-z0-9-]+ has no difference FILL_QTY_MISMATCH NOPE/);
    const unknown = await reckonIn(['records', '--run', 'latest', '--kind', 'FILL_QTY', '--key', 'XTKS|VF-000205-1', '--store', store]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe(`reckon: ConfigError: --kind FILL_QTY is an unknown difference kind (did you mean FILL_QTY_MISMATCH?); the kinds of the controls run ${run.run_id} ran: `
      + 'RC01: ORDER_VERSION_GAP, ORDER_VERSION_CONFLICT, ACCEPTED_WITHOUT_ROUTE, OUTBOX_UNPUBLISHED, ORDER_FILL_STATE_MISMATCH; '
      + 'RC02: FILL_MISSING_INTERNAL, FILL_MISSING_VENUE, EXECUTION_DUPLICATE, FILL_QTY_MISMATCH, FILL_PRICE_MISMATCH, EXECUTION_UNKNOWN_ORDER, ORDER_OVERFILL, VENUE_SEQUENCE_GAP; '
      + 'RC03: POSTING_SET_UNBALANCED, EXECUTION_WITHOUT_POSTING, EXECUTION_MULTIPLE_POSTINGS, POSTING_AMOUNT_MISMATCH, BALANCE_ROLLFORWARD_MISMATCH, RESERVATION_MISMATCH; '
      + 'RC04: STATEMENT_ROLLFORWARD_MISMATCH, BANK_CASH_MISMATCH, BANK_LINE_UNMATCHED, LEDGER_CASH_UNMATCHED, STATEMENT_SEQUENCE_GAP, CUSTODIAN_POSITION_MISMATCH; '
      + 'RC05: PROJECTION_KEY_MISSING, PROJECTION_KEY_EXTRA, PROJECTION_POSITION_MISMATCH, PROJECTION_COST_MISMATCH, PROJECTION_STALE; '
      + 'RC06: NOTICE_UNDELIVERED, NOTICE_RECEIPT_UNKNOWN_INTENT, NOTICE_DUPLICATE_RECEIPT\n');
    const rc06 = join(tmp.dir, 'store-rc06');
    const only = await reckonIn(['run', '--date', '2026-11-02', '--control', 'RC06', '--sources', DAY, '--store', rc06, '--json', '--quiet']);
    expect(only.code).toBe(1);
    const notRun = await reckonIn(['records', '--run', 'latest', '--kind', 'FILL_QTY_MISMATCH', '--key', 'XTKS|VF-000205-1', '--store', rc06]);
    expect(notRun.stderr).toBe(`reckon: ConfigError: --kind FILL_QTY_MISMATCH is a difference kind of RC02, which run ${only.json.run_id} did not run (it ran RC06)\n`);
    expect(notRun.code).toBe(2);
    expect((await reckonIn(['records', '--run', 'latest', '--kind', 'X', '--key', 'Y', '--limit', '-1', '--store', store])).code).toBe(2);
    expect((await reckonIn(['records', '--kind', 'X', '--store', store])).stderr).toContain('give --break BREAK_ID, or --run, --kind and --key together');
  });
});

describe('records and quarantine when inputs or outputs are gone or changed', () => {
  const tmp = scratchDir('reckon-records-gone-');
  const sources = join(tmp.dir, 'sources');
  const store = join(tmp.dir, 'store');
  let manifest: { run_id: string; outputs: { table: string; key: string; sha256: string }[] };

  beforeAll(async () => {
    cpSync(DAY, sources, { recursive: true });
    // One order row with a side that is not BUY or SELL: quarantined (RC01 and RC02 INCOMPLETE, their differences PROVISIONAL).
    const orders = join(sources, 'orders', 'part-00001.csv');
    const lines = readFileSync(orders, 'utf8').split('\n');
    lines[2] = lines[2].replace(',SELL,', ',SELX,');
    writeFileSync(orders, lines.join('\n'));
    const r = await reckonIn(['run', '--date', '2026-11-02', '--sources', sources, '--store', store, '--json', '--quiet']);
    expect(r.code).toBe(3);
    manifest = JSON.parse(readFileSync(r.json.manifest.path, 'utf8'));
  });
  afterAll(() => tmp.cleanup());

  it('lists the quarantine one line per entry and shows an entry with its raw record read back', async () => {
    const list = await reckonIn(['quarantine', 'list', '--store', store]);
    expect(list.code).toBe(0);
    expect(list.stdout).toBe([
      `run ${manifest.run_id}: 1 quarantine entry, from ${manifest.outputs.find((o) => o.table === 'quarantine')!.key} (SHA-256 verified)`,
      "1  orders  orders/part-00001.csv  record 2 (line 3)  column side  enum_value: side: 'SELX' is not one of BUY, SELL",
      '',
    ].join('\n'));
    const show = await reckonIn(['quarantine', 'show', '1', '--run', manifest.run_id, '--store', store, '--json']);
    expect(show.code).toBe(0);
    expect(show.json.entry).toMatchObject({ number: 1, dataset: 'orders', file: 'orders/part-00001.csv', row: 2, line: 3, column: 'side', rule: 'enum_value' });
    expect(show.json.entry.raw).toContain(',SELX,');
    expect(show.json.source).toEqual({ state: 'verified', line: 3, raw: show.json.entry.raw, header: readFileSync(join(sources, 'orders', 'part-00001.csv'), 'utf8').split('\n')[0].split(',') });
    expect((await reckonIn(['quarantine', 'show', '2', '--store', store])).stderr).toMatch(/has no quarantine entry 2 \(it has 1\)/);
  });

  it('records of a provisional difference are kept too; a changed input and a gone input are said, not shown', async () => {
    writeFileSync(join(sources, 'venue_fills', 'part-00001.csv'), `${readFileSync(join(sources, 'venue_fills', 'part-00001.csv'), 'utf8')}\n`);
    rmSync(join(sources, 'executions', 'part-00001.jsonl'));
    const r = await reckonIn(['records', '--run', manifest.run_id, '--kind', 'FILL_QTY_MISMATCH', '--key', 'XTKS|VF-000205-1', '--store', store, '--json']);
    expect(r.code).toBe(0);
    expect(r.json.disposition).toBe('PROVISIONAL');
    expect(r.json.records.map((x: Shown) => [x.side, x.source.state])).toEqual([['internal', 'gone'], ['venue', 'changed']]);
    expect(r.json.records[0].source.message).toMatch(/executions\/part-00001\.jsonl is gone \(the run read \d+ bytes with SHA-256 [0-9a-f]{64}\)/);
    expect(r.json.records[1].source.message).toMatch(/venue_fills\/part-00001\.csv has changed since the run: SHA-256 [0-9a-f]{64} \(\d+ bytes\), the run read [0-9a-f]{64}/);
    const text = await reckonIn(['records', '--run', manifest.run_id, '--kind', 'FILL_QTY_MISMATCH', '--key', 'XTKS|VF-000205-1', '--store', store]);
    expect(text.stdout).toContain('    (gone: ');
    expect(text.stdout).not.toContain('    record  ');
  });

  it('falls back to the records the manifest lists when the output’s bytes are not the published ones', async () => {
    const out = manifest.outputs.find((o) => o.table === 'difference_records')!;
    const path = join(store, out.key);
    chmodSync(path, 0o644);
    writeFileSync(path, Buffer.concat([readFileSync(path), Buffer.from('x')]));
    const r = await reckonIn(['records', '--run', manifest.run_id, '--kind', 'BALANCE_ROLLFORWARD_MISMATCH', '--key', 'ACC-000002|EUR', '--store', store, '--json']);
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({ complete: false, record_count: 24, shown: RECORDS_LISTED, from: { state: 'changed' } });
    expect(r.json.from.message).toContain(`not the ${out.sha256} its manifest recorded: it is not read`);
    const text = await reckonIn(['records', '--run', manifest.run_id, '--kind', 'BALANCE_ROLLFORWARD_MISMATCH', '--key', 'ACC-000002|EUR', '--store', store]);
    expect(text.stdout).toContain(`24 record(s); the difference_records output ${out.key} has SHA-256`);
    expect(text.stdout).toContain('the 4 the manifest lists are shown');
  });
});

describe('records of a sources file run read back from each dataset’s own location', () => {
  const tmp = scratchDir('reckon-records-file-');
  const store = join(tmp.dir, 'store');

  beforeAll(() => {
    // executions from a folder of their own, everything else from the default (docs/postgres.md).
    cpSync(join(DAY, 'executions'), join(tmp.dir, 'elsewhere', 'executions'), { recursive: true });
    writeFileSync(join(tmp.dir, 'sources.json'), JSON.stringify({ default: DAY, datasets: { executions: { location: './elsewhere' } } }));
  });
  afterAll(() => tmp.cleanup());

  it('verifies each file against the folder its dataset came from, not the sources file', async () => {
    const run = await reckonIn(['run', '--date', '2026-11-02', '--sources', join(tmp.dir, 'sources.json'), '--store', store, '--json', '--quiet']);
    expect(run.code).toBe(1);
    expect(run.json.results_digest).toBe(DIGEST);
    const r = await reckonIn(['records', '--run', 'latest', '--kind', 'FILL_QTY_MISMATCH', '--key', 'XTKS|VF-000205-1', '--store', store, '--json']);
    expect(r.code).toBe(0);
    expect(r.json.records.map((x: Shown) => [x.side, x.file, x.source.state])).toEqual([
      ['internal', 'executions/part-00001.jsonl', 'verified'], ['venue', 'venue_fills/part-00001.csv', 'verified'],
    ]);
    expect(r.json.records[0].source.raw).toContain('"venue_fill_id":"VF-000205-1"');
  });
});
